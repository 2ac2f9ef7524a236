"""Host reads of device memory in runs (irgl-prefetch-host-reads): the
copies of a run's later reads are issued before its first read, and each
read still sees what the kernels and host stores before it wrote. The
interpreter and Python give the expected value; the emitted CUDA prefetches
(CPU); on the GPU (marker ``gpu``) both builds, with and without prefetches,
give it, call after call (a prefetch never outlives its call)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irgl_interpreter import parse_program, run_host
from irgl_runner.build import emit_program

PROGRAM = """
// a[i] = i * k, b[i] = 2 * i * k.
irgl.kernel @fill(%a: memref<?xi32>, %b: memref<?xi64>, %n: index, %k: i32) {
  %z = arith.constant 0 : index
  irgl.forall %i in range(%z, %n) {
    %i32 = arith.index_cast %i : index to i32
    %v = arith.muli %i32, %k : i32
    memref.store %v, %a[%i] : memref<?xi32>
    %v64 = arith.extsi %v : i32 to i64
    %w = arith.addi %v64, %v64 : i64
    memref.store %w, %b[%i] : memref<?xi64>
  }
}

irgl.kernel host @main(%a: memref<?xi32>, %b: memref<?xi64>, %n: index,
                       %k: i32) -> i64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %hundred = arith.constant 100 : i32
  %one = arith.constant 1 : i32
  irgl.invoke @fill(%a, %b, %n, %k) : (memref<?xi32>, memref<?xi64>, index, i32)
  // a run of three reads
  %x = memref.load %a[%c1] : memref<?xi32>
  %y = memref.load %b[%c2] : memref<?xi64>
  %z = memref.load %a[%c3] : memref<?xi32>
  // a host store, then a run that reads the stored element
  %x2 = arith.addi %x, %hundred : i32
  memref.store %x2, %a[%c1] : memref<?xi32>
  %u = memref.load %a[%c1] : memref<?xi32>
  %v = memref.load %b[%c3] : memref<?xi64>
  // a launch, then a run that reads what it wrote
  %k1 = arith.addi %k, %one : i32
  irgl.invoke @fill(%a, %b, %n, %k1) : (memref<?xi32>, memref<?xi64>, index, i32)
  %s = memref.load %a[%c2] : memref<?xi32>
  %t = memref.load %b[%c1] : memref<?xi64>
  %x64 = arith.extsi %x : i32 to i64
  %z64 = arith.extsi %z : i32 to i64
  %u64 = arith.extsi %u : i32 to i64
  %s64 = arith.extsi %s : i32 to i64
  %f1 = arith.constant 1000 : i64
  %r0 = arith.muli %x64, %f1 : i64
  %r1 = arith.addi %r0, %y : i64
  %r2 = arith.muli %r1, %f1 : i64
  %r3 = arith.addi %r2, %z64 : i64
  %r4 = arith.muli %r3, %f1 : i64
  %r5 = arith.addi %r4, %u64 : i64
  %r6 = arith.muli %r5, %f1 : i64
  %r7 = arith.addi %r6, %v : i64
  %r8 = arith.muli %r7, %f1 : i64
  %r9 = arith.addi %r8, %s64 : i64
  %r10 = arith.muli %r9, %f1 : i64
  %r11 = arith.addi %r10, %t : i64
  irgl.return %r11 : i64
}
"""

N = 64

#: Where the emitted file's copy of the runtime header ends.
END_OF_RUNTIME = "// ---- end irgl_runtime.cuh ----"


def expected(k: int) -> int:
    """@main's result for `k`, computed in Python."""
    x, y, z = 1 * k, 2 * 2 * k, 3 * k
    u, v = x + 100, 2 * 3 * k
    s, t = 2 * (k + 1), 2 * 1 * (k + 1)
    result = 0
    for part in (x, y, z, u, v, s, t):
        result = result * 1000 + part
    return result


def test_interpreter_matches_python() -> None:
    a, b = np.zeros(N, np.int32), np.zeros(N, np.int64)
    result = run_host(parse_program(PROGRAM), "main", [a, b, N, 3])
    assert result.values == (expected(3),)


def test_runs_are_prefetched(tmp_path: Path) -> None:
    source = tmp_path / "runs.mlir"
    source.write_text(PROGRAM)
    cuda = emit_program(source).cuda.split(END_OF_RUNTIME)[-1]
    # the first run's two later reads, the second run's one, the third's one
    assert cuda.count("irgl_device_prefetch_") == 4
    first_read = cuda.index("int32_t x = irgl_device_load_i32(")
    assert cuda.index("irgl_device_prefetch_i64(b, (irgl_index)2)") < first_read
    off = emit_program(source, "lower-irgl{prefetch_reads=false}").cuda
    assert "irgl_device_prefetch_" not in off.split(END_OF_RUNTIME)[-1]


@pytest.mark.gpu
@pytest.mark.parametrize("pipeline", ["lower-irgl", "lower-irgl{prefetch_reads=false}"])
def test_gpu_matches_python(tmp_path: Path, pipeline: str) -> None:
    from irgl_runner.api import Program
    from irgl_runner.build import build

    source = tmp_path / "runs.mlir"
    source.write_text(PROGRAM)
    program = Program(build(source, pipeline))
    a = program.alloc(N, np.int32)
    b = program.alloc(N, np.int64)
    for k in (3, 5, 7, 3):  # each call reads its own values
        assert program.call("main", a, b, N, k) == expected(k)
