"""GPU unit tests of cuda_emitter/runtime/irgl_runtime.cuh.

Compiles every test/cuda/*.cu program with nvcc (sm_90, both index widths)
into a temporary directory, runs it and expects exit code 0 and "PASS".
Skipped when nvcc or a GPU is missing. The several-GPU runtime's programs
(test_dist_*) also build against NCCL, and skip where it is missing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import has_gpu, nvcc_path

from irgl_runner import distributed

ROOT = Path(__file__).resolve().parents[2]
CUDA_TESTS = sorted((ROOT / "test" / "cuda").glob("*.cu"))


@pytest.mark.gpu
@pytest.mark.parametrize("index_bits", [32, 64])
@pytest.mark.parametrize("source", CUDA_TESTS, ids=[p.stem for p in CUDA_TESTS])
def test_cuda_program(tmp_path: Path, source: Path, index_bits: int) -> None:
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    if not has_gpu():
        pytest.skip("no NVIDIA GPU")
    exe = tmp_path / source.stem
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", "-O2", str(source), "-o", str(exe)]
    if index_bits == 64:
        cmd.insert(1, "-DIRGL_INDEX_BITS=64")
    if source.stem.startswith("test_dist"):
        try:
            cmd += distributed.nccl_flags()
        except distributed.NcclNotFound as e:
            pytest.skip(str(e))
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, f"{' '.join(cmd)}\n{build.stdout}\n{build.stderr}"
    # A deadlocked lock or barrier shows up as a timeout, not a hung suite.
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "PASS" in run.stdout, out
