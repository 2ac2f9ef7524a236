"""Host code reading and writing elements of device arrays
(convert-irgl-host-memory): a store before a launch is seen by the kernel,
a load after it sees the kernel's writes, a host loop's body reads the array
each round, and a rank-0 array and a `memref.alloc` work too. The
interpreter gives the expected values on the CPU; the GPU (marker ``gpu``)
must agree with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irgl_interpreter import parse_program, run_host

PROGRAM = """
// out[i] = a[i] + a[0] * 10 + scale[] for every i.
irgl.kernel @spread(%a: memref<?xi32>, %out: memref<?xi32>, %scale: memref<i32>,
                    %n: index) {
  %z = arith.constant 0 : index
  %ten = arith.constant 10 : i32
  %s = memref.load %scale[] : memref<i32>
  irgl.forall %i in range(%z, %n) {
    %x = memref.load %a[%i] : memref<?xi32>
    %h = memref.load %a[%z] : memref<?xi32>
    %t = arith.muli %h, %ten : i32
    %y = arith.addi %x, %t : i32
    %r = arith.addi %y, %s : i32
    memref.store %r, %out[%i] : memref<?xi32>
  }
}

// a[i] += 1 for every i; ReduceAndReturn whether a[last] is still below 5.
irgl.kernel @bump(%a: memref<?xi32>, %n: index, %rounds: i32) {
  %z = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %five = arith.constant 5 : i32
  %c1 = arith.constant 1 : index
  %last = arith.subi %n, %c1 : index
  irgl.forall %i in range(%z, %n) {
    %x = memref.load %a[%i] : memref<?xi32>
    %y = arith.addi %x, %one : i32
    memref.store %y, %a[%i] : memref<?xi32>
    %is_last = arith.cmpi eq, %i, %last : index
    scf.if %is_last {
      %below = arith.cmpi slt, %y, %five : i32
      irgl.reduce_and_return %below
    }
  }
}

irgl.kernel host @main(%a: memref<?xi32>, %out: memref<?xi32>, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seven = arith.constant 7 : i32
  %three = arith.constant 3 : i32
  %zero = arith.constant 0 : i32
  // A host store before the launch, through a rank-0 device allocation too.
  memref.store %seven, %a[%c0] : memref<?xi32>
  %scale = memref.alloc() : memref<i32>
  memref.store %three, %scale[] : memref<i32>
  irgl.invoke @spread(%a, %out, %scale, %n)
      : (memref<?xi32>, memref<?xi32>, memref<i32>, index)
  memref.dealloc %scale : memref<i32>
  // A host loop whose body reads the array each round (not outlined).
  %rounds = irgl.iterate while any @bump(%a, %n, %r = %zero)
      : (memref<?xi32>, index, i32) {
    %first = memref.load %a[%c0] : memref<?xi32>
    %next = arith.addi %r, %first : i32
    irgl.yield %next : i32
  }
  // A host load after the launches, of an element the kernels wrote.
  %o1 = memref.load %out[%c1] : memref<?xi32>
  %sum = arith.addi %rounds, %o1 : i32
  irgl.return %sum : i32
}
"""

N = 1000


def initial() -> np.ndarray:
    return np.arange(N, dtype=np.int32) % 4


def expected() -> tuple[int, np.ndarray, np.ndarray]:
    """The host kernel's result, `a` and `out`, computed with numpy."""
    a = initial()
    a[0] = 7
    out = a + a[0] * 10 + 3
    carried = 0
    while True:
        a += 1
        carried += int(a[0])
        if not a[-1] < 5:
            break
    return carried + int(out[1]), a, out


def test_interpreter_matches_numpy() -> None:
    a, out = initial(), np.zeros(N, np.int32)
    result = run_host(parse_program(PROGRAM), "main", [a, out, N])
    value, want_a, want_out = expected()
    assert result.values == (value,)
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(out, want_out)


@pytest.mark.gpu
def test_gpu_matches_numpy(tmp_path: Path) -> None:
    from irgl_runner.api import Program
    from irgl_runner.build import build

    source = tmp_path / "host_memory.mlir"
    source.write_text(PROGRAM)
    program = Program(build(source))
    a = program.alloc(N, np.int32).from_numpy(initial())
    out = program.alloc(N, np.int32)
    value = program.call("main", a, out, N)
    want_value, want_a, want_out = expected()
    assert value == want_value
    np.testing.assert_array_equal(a.to_numpy(), want_a)
    np.testing.assert_array_equal(out.to_numpy(), want_out)
