"""Emitted CUDA compiles without warnings (`nvcc -Xcompiler -Wall`): cc's
scf.while has a loop-carried value used neither as a result nor in the
body, which used to leave a C variable that is set but never used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import nvcc_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("program", ["benchmarks/cc/cc.mlir", "examples/bfs.mlir"])
def test_no_nvcc_warnings(tmp_path: Path, program: str) -> None:
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    cuda = tmp_path / "program.cu"
    lowered = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "irgl-opt"),
            str(ROOT / program),
            "--lower-irgl",
            "-t",
            "cuda",
            "-o",
            str(cuda),
        ],
        capture_output=True,
        text=True,
    )
    assert lowered.returncode == 0, lowered.stderr
    proc = subprocess.run(
        [nvcc, "-arch=sm_90", "-std=c++17", "-c", "-Xcompiler", "-Wall", str(cuda)]
        + ["-o", str(tmp_path / "program.o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stdout + proc.stderr, proc.stderr
