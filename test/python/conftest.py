"""Shared pytest helpers: finding nvcc and detecting an NVIDIA GPU.

Tests marked `@pytest.mark.gpu` are skipped when no GPU is present.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
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


def irgl_opt(*args: str) -> subprocess.CompletedProcess[str]:
    """Run irgl-opt (the one beside this Python, else the one on PATH)."""
    beside = Path(sys.executable).with_name("irgl-opt")
    exe = str(beside) if beside.is_file() else "irgl-opt"
    return subprocess.run([exe, *args], capture_output=True, text=True)


def emitted_code(app: str, pipeline: str) -> str:
    """The CUDA that `pipeline` makes of benchmark `app`, without the runtime."""
    from irgl_runner.apps import load_app

    proc = irgl_opt("-p", pipeline, "-t", "cuda", str(load_app(app).mlir))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("// ---- end irgl_runtime.cuh ----")[1]


@functools.cache
def app_program(app: str, pipeline: str):  # -> irgl_runner.api.Program
    """Benchmark `app` built with `pipeline` (once per test session)."""
    from irgl_runner.api import Program, build
    from irgl_runner.apps import load_app

    return Program(build(load_app(app).mlir, pipeline))


def assert_app_passes_its_check(app_name: str, graph, pipeline: str) -> None:
    """Run benchmark `app_name` built with `pipeline` on the GPU on `graph`
    (a CSRGraph; its weights dropped for unweighted apps, the source the
    default for RMAT) and assert that its CPU check passes."""
    from irgl_runner import generators
    from irgl_runner.apps import execute, load_app
    from irgl_runner.graph_args import default_source

    assert has_gpu()
    app = load_app(app_name)
    if not app.weighted:
        graph.weights = None
    source = default_source(graph, generators.parse_spec("rmat:10"))
    program = app_program(app_name, pipeline)
    ctx = execute(app, program, graph, source=source, reps=1, warmup=0)
    assert app.check is not None
    problem = app.check(ctx)
    assert problem is None, problem
