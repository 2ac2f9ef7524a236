"""A grid barrier in a loop with a uniform trip count inside the outermost
ForAll (issue 11): it verifies, lowers so that every thread runs the loop
(only the work inside is guarded), compiles, and computes the same as numpy
on the interpreter and on the GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import nvcc_object_errors

from irgl_interpreter import load_program, run_host

#: Each of `rounds` rounds, every element adds its right neighbour's value
#: (both read before the first barrier, written after it).
PROGRAM = """
irgl.kernel @smooth(%x: memref<?xi32>, %n: index, %rounds: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in range(%c0, %n) {
    %last = arith.subi %n, %c1 : index
    %next = arith.addi %i, %c1 : index
    %j = arith.minui %next, %last : index
    scf.for %r = %c0 to %rounds step %c1 {
      %a = memref.load %x[%i] : memref<?xi32>
      %b = memref.load %x[%j] : memref<?xi32>
      irgl.sync_running_threads
      %s = arith.addi %a, %b : i32
      memref.store %s, %x[%i] : memref<?xi32>
      irgl.sync_running_threads
    }
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index, %rounds: index) {
  irgl.invoke @smooth(%x, %n, %rounds) : (memref<?xi32>, index, index)
}
"""


def expected(n: int, rounds: int) -> np.ndarray:
    x = np.arange(n, dtype=np.int64)
    for _ in range(rounds):
        x = x + np.concatenate([x[1:], x[-1:]])
    return x.astype(np.int32)


@pytest.fixture
def program_file(tmp_path: Path) -> Path:
    path = tmp_path / "smooth.mlir"
    path.write_text(PROGRAM)
    return path


@pytest.mark.parametrize("schedule", ["sequential", "reversed", "random:5"])
def test_interpreter(program_file: Path, schedule: str) -> None:
    x = np.arange(37, dtype=np.int32)
    run_host(load_program(program_file), "main", [x, 37, 4], schedule)
    np.testing.assert_array_equal(x, expected(37, 4))


def test_lowered_cuda_compiles(program_file: Path, tmp_path: Path) -> None:
    from irgl_runner.build import emit_cuda

    cuda = emit_cuda(program_file)
    assert "grid.sync()" in cuda or "irgl_grid_sync" in cuda
    assert nvcc_object_errors(cuda) is None


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1000, 30_000])
def test_on_gpu(program_file: Path, n: int) -> None:
    """Fewer elements than the co-resident grid has threads (at least one
    block of 256 per SM): every iteration meets every barrier, as on the
    interpreter; the threads without an iteration still run the loop."""
    from irgl_runner.api import Program
    from irgl_runner.build import build

    program = Program(build(program_file))
    x = program.alloc(n, np.int32).from_numpy(np.arange(n, dtype=np.int32))
    program.call("main", x, n, 3)
    np.testing.assert_array_equal(x.to_numpy(), expected(n, 3))
