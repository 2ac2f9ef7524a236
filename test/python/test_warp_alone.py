"""A contender alone in its launch runs its Exclusive's body on its warp
(convert-irgl-exclusive `warp_alone`, `lower-irgl{exclusive_warp}`, on by
default in lower-irgl; lowering/warp_alone.py).

PROGRAM's one-iteration launch is such a contender. Its body has a reduction
loop of three carried values (or, min, add) over a range of `vals`, then
an atomic whose old value it stores, so the GPU run checks the split loop,
the lanes' totals, the contender's lane's writes and the atomic's
broadcast against numpy, with the warp path on and off. The colouring's
drain (one-item windows) runs on the GPU in test_retry_backoff.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import irgl_opt

from irgl_interpreter.interpreter import parse_program, run_host

PROGRAM = """
irgl.kernel @scan(%vals: memref<?xi32>, %claims: memref<?xi32>,
                  %cells: memref<?xindex>, %counter: memref<?xi32>,
                  %out: memref<?xi64>, %lo: index, %hi: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    %first = arith.addi %lo, %i : index
    irgl.exclusive %claims array(%cells[%c2]) : memref<?xi32>, memref<?xindex> {
      %zero = arith.constant 0 : i64
      %one = arith.constant 1 : i64
      %low6 = arith.constant 63 : i64
      %big = arith.constant 1000000 : i32
      %zero32 = arith.constant 0 : i32
      %bits, %least, %count = scf.for %k = %first to %hi step %c1
          iter_args(%m = %zero, %l = %big, %s = %c0) -> (i64, i32, index) {
        %v = memref.load %vals[%k] : memref<?xi32>
        %w = arith.extsi %v : i32 to i64
        %shift = arith.andi %w, %low6 : i64
        %bit = arith.shli %one, %shift : i64
        %nm = arith.ori %m, %bit : i64
        %nl = arith.minsi %l, %v : i32
        %positive = arith.cmpi sgt, %v, %zero32 : i32
        %inc = arith.select %positive, %c1, %c0 : index
        %ns = arith.addi %s, %inc : index
        scf.yield %nm, %nl, %ns : i64, i32, index
      }
      %one32 = arith.constant 1 : i32
      %old = "memref.atomic_rmw"(%one32, %counter, %c0) <{kind = 1 : i64}>
          : (i32, memref<?xi32>, index) -> i32
      %at0 = arith.muli %i, %c4 : index
      memref.store %bits, %out[%at0] : memref<?xi64>
      %least64 = arith.extsi %least : i32 to i64
      %at1 = arith.addi %at0, %c1 : index
      memref.store %least64, %out[%at1] : memref<?xi64>
      %count64 = arith.index_cast %count : index to i64
      %at2 = arith.addi %at0, %c2 : index
      memref.store %count64, %out[%at2] : memref<?xi64>
      %old64 = arith.extsi %old : i32 to i64
      %at3 = arith.addi %at0, %c3 : index
      memref.store %old64, %out[%at3] : memref<?xi64>
    }
  }
}
irgl.kernel host @main(%vals: memref<?xi32>, %claims: memref<?xi32>,
                       %cells: memref<?xindex>, %counter: memref<?xi32>,
                       %out: memref<?xi64>, %lo: index, %hi: index) {
  %c1 = arith.constant 1 : index
  irgl.invoke @scan(%vals, %claims, %cells, %counter, %out, %lo, %hi, %c1)
      : (memref<?xi32>, memref<?xi32>, memref<?xindex>, memref<?xi32>,
         memref<?xi64>, index, index, index)
}
"""

#: (lo, hi) ranges of `vals`: empty, under a warp, several warps, uneven.
RANGES = [(5, 5), (3, 20), (0, 1000), (17, 999)]


def values() -> np.ndarray:
    rng = np.random.default_rng(11)
    return rng.integers(-500, 500, size=1000, dtype=np.int32)


def expected(vals: np.ndarray, lo: int, hi: int, counter: int) -> np.ndarray:
    """What one call of @main stores, in numpy."""
    part = vals[lo:hi].astype(np.int64)
    bits = 0
    for v in part:
        bits |= 1 << (int(v) & 63)
    least = min([1000000, *[int(v) for v in part]])
    return np.array(
        [np.int64(np.uint64(bits)), least, int((part > 0).sum()), counter],
        dtype=np.int64,
    )


def arguments(
    vals: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """claims, cells, counter, out."""
    return (
        np.zeros(4, np.int32),
        np.array([1, 2], np.int64),
        np.zeros(1, np.int32),
        np.zeros(4, np.int64),
    )


def test_interpreter_matches_numpy() -> None:
    vals = values()
    claims, cells, counter, out = arguments(vals)
    for calls, (lo, hi) in enumerate(RANGES):
        run_host(
            parse_program(PROGRAM),
            "main",
            [vals, claims, cells, counter, out, lo, hi],
            "sequential",
        )
        np.testing.assert_array_equal(out, expected(vals, lo, hi, calls))


def test_the_lone_contender_runs_on_its_warp(tmp_path: Path) -> None:
    source = tmp_path / "scan.mlir"
    source.write_text(PROGRAM)
    on = "lower-irgl{outline=false exclusive_warp=true}"
    proc = irgl_opt("-p", on, "-t", "cuda", str(source))
    assert proc.returncode == 0, proc.stderr
    for call in (
        "irgl_warp_ballot(",
        "irgl_warp_reduce_or_i64(",
        "irgl_warp_reduce_min_i32(",
        "irgl_warp_reduce_add_index(",
        "irgl_warp_shfl_i32(",  # the atomic's old value
        "irgl_warp_sync(",
    ):
        assert call in proc.stdout, call
    default = irgl_opt("-p", "lower-irgl{outline=false}", "-t", "cuda", str(source))
    assert default.returncode == 0, default.stderr
    assert "irgl_warp_ballot(" in default.stdout  # on by default
    pipeline = "lower-irgl{outline=false exclusive_warp=false}"
    off = irgl_opt("-p", pipeline, "-t", "cuda", str(source))
    assert off.returncode == 0, off.stderr
    kernel = off.stdout.split("__global__ void scan(int32_t*")[1]
    assert "irgl_warp_ballot(" not in kernel


@pytest.mark.gpu
@pytest.mark.parametrize(
    "pipeline",
    [
        "lower-irgl",
        "lower-irgl{exclusive_warp=false}",
        "lower-irgl{outline=false}",
    ],
)
def test_gpu_matches_numpy(pipeline: str, tmp_path: Path) -> None:
    from irgl_runner.api import Program
    from irgl_runner.build import build

    source = tmp_path / "scan.mlir"
    source.write_text(PROGRAM)
    program = Program(build(source, pipeline))
    vals = values()
    host = arguments(vals)
    device = [program.alloc(len(a), a.dtype).from_numpy(a) for a in (vals, *host)]
    for calls, (lo, hi) in enumerate(RANGES):
        program.call("main", *device, lo, hi)
        got = device[-1].to_numpy()
        np.testing.assert_array_equal(got, expected(vals, lo, hi, calls), str((lo, hi)))
