"""Edge-loop reductions (`irgl.forall ... reduce(kind, %init : T)`) end to
end: add over f64 and i64, min over i32, max over index, on graphs whose
nodes fall into all three nested-parallelism phases (block: >= 256 edges,
warp: >= 32, thread). The expected values come from numpy; the interpreter
must agree with them (CPU), and so must the GPU (marker ``gpu``). The f64
values are small integers, so every summation order gives the same sum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irgl_interpreter import Graph, parse_program, run_host
from irgl_runner.generators import generate
from irgl_runner.graphs import CSRGraph

PROGRAM = """
irgl.kernel @k(%g: !irgl.graph, %x: memref<?xi32>, %f: memref<?xf64>,
               %sum: memref<?xf64>, %lo: memref<?xi32>, %hi: memref<?xindex>,
               %count: memref<?xi64>) {
  %big = arith.constant 2147483647 : i32
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  irgl.forall %n in nodes(%g) {
    %own = memref.load %f[%n] : memref<?xf64>
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %own : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %f[%u] : memref<?xf64>
      irgl.yield %v : f64
    }
    memref.store %s, %sum[%n] : memref<?xf64>
    %m = irgl.forall %e in edges(%g, %n) reduce(min, %big : i32) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xi32>
      irgl.yield %v : i32
    }
    memref.store %m, %lo[%n] : memref<?xi32>
    %h = irgl.forall %e in edges(%g, %n) reduce(max, %n : index) {
      %u = irgl.graph.edge_dst %g[%e]
      irgl.yield %u : index
    }
    memref.store %h, %hi[%n] : memref<?xindex>
    %c = irgl.forall %e in edges(%g, %n) reduce(add, %zero : i64) {
      irgl.yield %one : i64
    }
    memref.store %c, %count[%n] : memref<?xi64>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %x: memref<?xi32>, %f: memref<?xf64>,
                       %sum: memref<?xf64>, %lo: memref<?xi32>, %hi: memref<?xindex>,
                       %count: memref<?xi64>) {
  irgl.invoke @k(%g, %x, %f, %sum, %lo, %hi, %count)
      : (!irgl.graph, memref<?xi32>, memref<?xf64>, memref<?xf64>, memref<?xi32>,
         memref<?xindex>, memref<?xi64>)
}
"""

GRAPHS = ("star:300", "hub:3000:2", "rmat:10")


def inputs(graph: CSRGraph) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.integers(-(10**6), 10**6, graph.num_nodes).astype(np.int32)
    f = rng.integers(0, 100, graph.num_nodes).astype(np.float64)
    return x, f


def expected(graph: CSRGraph) -> dict[str, np.ndarray]:
    x, f = inputs(graph)
    n, src, dst = graph.num_nodes, graph.edge_src(), graph.edge_dst
    lo = np.full(n, np.iinfo(np.int32).max, np.int64)
    np.minimum.at(lo, src, x[dst])
    hi = np.arange(n, dtype=np.int64)
    np.maximum.at(hi, src, dst)
    return {
        "sum": f + np.bincount(src, weights=f[dst], minlength=n),
        "lo": lo.astype(np.int32),
        "hi": hi,
        "count": graph.degrees().astype(np.int64),
    }


def test_graphs_reach_every_phase() -> None:
    degrees = np.concatenate([generate(spec).degrees() for spec in GRAPHS])
    assert (degrees >= 256).any() and ((degrees >= 32) & (degrees < 256)).any()
    assert ((degrees > 0) & (degrees < 32)).any()


@pytest.mark.parametrize("spec", ["star:300", "rmat:7"])
def test_interpreter_matches_numpy(spec: str) -> None:
    graph = generate(spec)
    x, f = inputs(graph)
    n = graph.num_nodes
    out = {
        "sum": np.zeros(n),
        "lo": np.zeros(n, np.int32),
        "hi": np.zeros(n, np.int64),
        "count": np.zeros(n, np.int64),
    }
    interp_graph = Graph(n, graph.row_start.tolist(), graph.edge_dst.tolist(), None)
    run_host(
        parse_program(PROGRAM),
        "main",
        [interp_graph, x, f, out["sum"], out["lo"], out["hi"], out["count"]],
        "random:2",
    )
    for name, values in expected(graph).items():
        np.testing.assert_array_equal(out[name], values, err_msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("spec", GRAPHS)
def test_gpu_matches_numpy(spec: str, tmp_path: Path) -> None:
    from irgl_runner.api import Program
    from irgl_runner.build import build

    source = tmp_path / "reductions.mlir"
    source.write_text(PROGRAM)
    program = Program(build(source))
    graph = generate(spec)
    x, f = inputs(graph)
    n = graph.num_nodes
    arrays = {
        "x": program.alloc(n, np.int32).from_numpy(x),
        "f": program.alloc(n, np.float64).from_numpy(f),
        "sum": program.alloc(n, np.float64),
        "lo": program.alloc(n, np.int32),
        # memref<?xindex> holds irgl_index: 32 bits in the default build
        # (64 only with IRGL_INDEX_BITS=64)
        "hi": program.alloc(n, np.int32),
        "count": program.alloc(n, np.int64),
    }
    program.call("main", program.upload_graph(graph), *arrays.values())
    for name, values in expected(graph).items():
        np.testing.assert_array_equal(arrays[name].to_numpy(), values, err_msg=name)
