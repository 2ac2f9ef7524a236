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
