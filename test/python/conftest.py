"""Shared pytest helpers: finding nvcc and detecting an NVIDIA GPU.

Tests marked `@pytest.mark.gpu` are skipped when no GPU is present.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest


@functools.cache
def nvcc_path() -> str | None:
    """nvcc from $PATH, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; None if absent."""
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (
        os.environ.get("CUDA_HOME"),
        os.environ.get("CUDA_PATH"),
        "/usr/local/cuda",
    ):
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return str(Path(root) / "bin" / "nvcc")
    return None


@functools.cache
def has_gpu() -> bool:
    """True when `nvidia-smi -L` succeeds and lists at least one GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and "GPU" in proc.stdout


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Skip tests marked `gpu` when no GPU is present."""
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU (nvidia-smi -L lists none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def nvcc_object_errors(cuda: str, tmp_path: Path) -> str | None:
    """Compile CUDA text with `nvcc -arch=sm_90 -c` (skipping the test when
    nvcc is missing); None on success, else nvcc's diagnostics."""
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    source = tmp_path / "program.cu"
    source.write_text(cuda)
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", "-c", str(source)]
    proc = subprocess.run(
        [*cmd, "-o", str(tmp_path / "program.o")], capture_output=True, text=True
    )
    return None if proc.returncode == 0 else proc.stderr
