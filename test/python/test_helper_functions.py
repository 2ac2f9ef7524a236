"""Helper functions: `func.func` helpers called with `func.call` and device
kernels called with `irgl.call`, from plain kernels (inside an Iterate that
the default pipeline outlines), from device kernels and from host code.

The program runs on the interpreter against numpy, lowers (the helpers end
up as device functions of the gpu.module, a host-called one also on the
host), compiles with nvcc with and without outlining, and runs on the GPU
(marker `gpu`). Bad calls are diagnostics, never tracebacks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import irgl_opt, nvcc_object_errors

from irgl_interpreter.interpreter import ProgramError, parse_program, run_host
from irgl_runner.graphs import CSRGraph, as_graph

#: Every node's value grows by `twice_clamped(value + degree)` while it is
#: below LIMIT (a worklist Iterate from every node); then the host clamps
#: entry 0 with the same helper @clamp the device uses.
PROGRAM = """
func.func private @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  func.return %y : i32
}
func.func private @clamp(%x: i32, %hi: i32) -> i32 {
  %y = arith.minsi %x, %hi : i32
  func.return %y : i32
}
func.func private @twice_clamped(%x: i32) -> i32 {
  %y = func.call @twice(%x) : (i32) -> i32
  %c = arith.constant 1000 : i32
  %z = func.call @clamp(%y, %c) : (i32, i32) -> i32
  func.return %z : i32
}
irgl.kernel device @deg(%g: !irgl.graph, %n: index) -> i32 {
  %d = irgl.graph.degree %g[%n]
  %i = arith.index_cast %d : index to i32
  irgl.return %i : i32
}
irgl.kernel device @step(%g: !irgl.graph, %n: index, %v: i32) -> i32 {
  %d = irgl.call @deg(%g, %n) : (!irgl.graph, index) -> i32
  %s = arith.addi %v, %d : i32
  %w = func.call @twice_clamped(%s) : (i32) -> i32
  irgl.return %w : i32
}
irgl.kernel @relax(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %v = memref.load %a[%n] : memref<?xi32>
    %w = irgl.call @step(%g, %n, %v) : (!irgl.graph, index, i32) -> i32
    memref.store %w, %a[%n] : memref<?xi32>
    %limit = arith.constant 100 : i32
    %small = arith.cmpi slt, %w, %limit : i32
    scf.if %small {
      irgl.wl.push %n
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %cap: i32) {
  %c0 = arith.constant 0 : index
  %n = irgl.graph.num_nodes %g
  %all = memref.alloc(%n) : memref<?xindex>
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.store %i, %all[%i] : memref<?xindex>
  }
  irgl.iterate @relax(%g, %a) : (!irgl.graph, memref<?xi32>)
      initial %all[%n] : memref<?xindex> {
  }
  memref.dealloc %all : memref<?xindex>
  %v = memref.load %a[%c0] : memref<?xi32>
  %w = func.call @clamp(%v, %cap) : (i32, i32) -> i32
  memref.store %w, %a[%c0] : memref<?xi32>
}
"""

LIMIT = 100
CAP = 50


def graph() -> CSRGraph:
    """A small directed graph with degrees 0 to 4."""
    rng = np.random.default_rng(7)
    dense = (rng.random((24, 24)) < 0.12).astype(np.int32)
    np.fill_diagonal(dense, 0)
    return as_graph(sp.csr_matrix(dense))


def expected(g: CSRGraph, initial: np.ndarray) -> np.ndarray:
    """What @main computes, in numpy."""
    degree = np.diff(g.row_start).astype(np.int64)
    values = initial.astype(np.int64)
    active = np.ones(len(values), dtype=bool)
    while active.any():
        values[active] = np.minimum(2 * (values[active] + degree[active]), 1000)
        active &= values < LIMIT
    values[0] = min(values[0], CAP)
    return values.astype(np.int32)


def initial_values(n: int) -> np.ndarray:
    return (np.arange(n, dtype=np.int32) * 7) % 40


@pytest.mark.parametrize("schedule", ["sequential", "random:3"])
def test_interpreter_matches_numpy(schedule: str) -> None:
    g = graph()
    a = initial_values(g.num_nodes)
    want = expected(g, a)
    run_host(parse_program(PROGRAM), "main", [g, a, CAP], schedule)
    np.testing.assert_array_equal(a, want)
    assert a.max() >= LIMIT  # the helpers ran, more than once per node


def run_opt(tmp_path: Path, *args: str) -> str:
    """irgl-opt on PROGRAM; its stdout (the test fails on an error)."""
    source = tmp_path / "helpers.mlir"
    source.write_text(PROGRAM)
    proc = irgl_opt(*args, str(source))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_lowering_makes_device_functions(tmp_path: Path) -> None:
    text = run_opt(tmp_path, "-p", "lower-irgl")
    host, device = text.split('"gpu.module"', 1)
    assert "irgl." not in text.replace("irgl_rt.", "").replace("@irgl_", "")
    # @clamp is called by host code: a copy stays on the host
    assert "func.func private @clamp(" in host
    assert "func.func private @twice(" not in host
    for name in ("twice", "clamp", "twice_clamped"):
        assert f"func.func private @{name}(" in device
    assert "func.func @deg(" in device and "func.func @step(" in device
    # the outlined body calls the device kernel like the kernel did; the
    # kernel itself is gone (the control kernel runs every invocation)
    assert device.count("func.call @step(") == 1
    assert 'sym_name = "relax"' not in device


@pytest.mark.parametrize("pipeline", ["lower-irgl", "lower-irgl{outline=false}"])
def test_nvcc_compiles(pipeline: str, tmp_path: Path) -> None:
    cuda = run_opt(tmp_path, "-p", pipeline, "-t", "cuda")
    assert "__device__ int32_t twice_clamped(int32_t x) {" in cuda
    assert "static int32_t irgl_host_clamp(int32_t x, int32_t hi) {" in cuda
    if pipeline == "lower-irgl":
        assert "main_control(" in cuda
    assert nvcc_object_errors(cuda) is None


BAD_CALLS = {
    "recursion": (
        """
        func.func private @f(%x: i32) -> i32 {
          %y = func.call @f(%x) : (i32) -> i32
          func.return %y : i32
        }
        irgl.kernel @k(%x: i32) {
          %y = func.call @f(%x) : (i32) -> i32
        }
        """,
        "device code has no recursion",
    ),
    "host kernel from a device kernel": (
        """
        irgl.kernel host @main() {
        }
        irgl.kernel device @d() {
          irgl.call @main() : () -> ()
        }
        """,
        "a host kernel; only device kernels are called",
    ),
    "device kernel from host code": (
        """
        irgl.kernel device @d() {
        }
        irgl.kernel host @main() {
          irgl.call @d() : () -> ()
        }
        """,
        "may only appear in plain or device kernels, but it is in a host kernel",
    ),
    "kernel construct in a helper": (
        """
        func.func private @h(%x: index) {
          irgl.wl.push %x
          func.return
        }
        irgl.kernel @k() {
          irgl.forall %i in worklist {
            %n = irgl.wl.pop %i
            func.call @h(%n) : (index) -> ()
          }
        }
        """,
        "func.func helpers called from kernels hold no irgl ops",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_calls_are_located_diagnostics(case: str, tmp_path: Path) -> None:
    text, message = BAD_CALLS[case]
    with pytest.raises(ProgramError, match=message):
        parse_program(text)
    source = tmp_path / "bad.mlir"
    source.write_text(text)
    proc = irgl_opt("-p", "lower-irgl", str(source))
    assert proc.returncode != 0
    assert f"{source}:" in proc.stderr and "error: '" in proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("pipeline", ["lower-irgl", "lower-irgl{outline=false}"])
def test_gpu_matches_numpy(pipeline: str, tmp_path: Path) -> None:
    from irgl_runner.api import Program
    from irgl_runner.build import build

    source = tmp_path / "helpers.mlir"
    source.write_text(PROGRAM)
    program = Program(build(source, pipeline))
    g = graph()
    initial = initial_values(g.num_nodes)
    a = program.alloc(g.num_nodes, np.int32).from_numpy(initial)
    program.call("main", program.upload_graph(g), a, CAP)
    np.testing.assert_array_equal(a.to_numpy(), expected(g, initial))
