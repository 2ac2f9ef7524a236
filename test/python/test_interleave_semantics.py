"""The edge interleave (lowering/interleave.py) keeps each iteration's
effects: a program's edge loops are replaced by their interleaved
`scf.for`s (2, 3 and 4 copies) and the interpreter runs both versions on
graphs with every degree from 0 to 9; the arrays must agree exactly.

The body has what the transformation treats specially: graph reads and a
load at an address derived from the index (unguarded for a copy past the
end), an atomic, a load at a loaded address and a division (guarded), nested plain
`scf.if`s around an atomic and a store (flattened), and a reducing loop
(copies combined in the serial order)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.graph import FirstEdgeOp, LastEdgeOp
from irgl_dialect.loops import ForAllOp
from irgl_interpreter import Graph, parse_program, run_host
from lowering.builders import LoweringBuilder
from lowering.interleave import check_interleavable, interleaved_loop
from lowering.reductions import reduction_of

#: `memref.atomic_rmw` addi on an i32 array (spelled ADD in the program).
ADD = "<{kind = 0 : i64}> : (i32, memref<?xi32>, index) -> i32"

PROGRAM = """
irgl.kernel @k(%g: !irgl.graph, %x: memref<?xi32>, %hits: memref<?xi32>,
               %seen: memref<?xi32>, %out: memref<?xi64>, %count: memref<?xi32>) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %zero64 = arith.constant 0 : i64
  %n1 = arith.constant 1 : index
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %c = "memref.atomic_rmw"(%one, %count, %n) ADD
      %v = memref.load %x[%d] : memref<?xi32>
      %vi = arith.index_cast %v : i32 to index
      %hop = memref.load %x[%vi] : memref<?xi32>
      %big = arith.cmpi sgt, %hop, %w : i32
      scf.if %big {
        %old = "memref.atomic_rmw"(%one, %hits, %d) ADD
        %q = arith.divsi %hop, %w : i32
        %fresh = arith.cmpi eq, %old, %zero : i32
        scf.if %fresh {
          memref.store %v, %seen[%d] : memref<?xi32>
        }
        %r = "memref.atomic_rmw"(%q, %hits, %n) ADD
      }
    }
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %zero64 : i64) {
      %d = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%d] : memref<?xi32>
      %wide = arith.extsi %v : i32 to i64
      %e64 = arith.index_cast %e : index to i64
      %t = arith.muli %wide, %e64 : i64
      irgl.yield %t : i64
    }
    memref.store %s, %out[%n] : memref<?xi64>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %x: memref<?xi32>, %hits: memref<?xi32>,
                       %seen: memref<?xi32>, %out: memref<?xi64>,
                       %count: memref<?xi32>) {
  irgl.invoke @k(%g, %x, %hits, %seen, %out, %count)
      : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi64>,
         memref<?xi32>)
}
""".replace(" ADD", " " + ADD)


def _interleave(module: ModuleOp, copies: int) -> None:
    """Replace every edge loop of `module` by its interleaved scf.for."""
    loops = [
        op
        for op in module.walk()
        if isinstance(op, ForAllOp) and op.parent_op() is not None
        if isinstance(op.parent_op(), ForAllOp)
    ]
    assert len(loops) == 2
    for loop in loops:
        check_interleavable(loop.body.block)
        graph, node = loop.bounds
        at = LoweringBuilder(InsertPoint.before(loop))
        lo = at.op(FirstEdgeOp(graph, node))
        hi = at.op(LastEdgeOp(graph, node))
        reduction = reduction_of(loop)
        carried = None if reduction is None else (reduction[0], reduction[1])
        walked = at.insert(
            interleaved_loop(at, loop.body.block, lo, hi, 1, copies, carried)
        )
        Rewriter.replace_op(loop, [], list(walked.results))


def _graph(seed: int) -> Graph:
    """Nodes of every degree 0..9 (repeated), random destinations, weights
    1..3."""
    rng = np.random.default_rng(seed)
    degrees = np.tile(np.arange(10), 6)
    rng.shuffle(degrees)
    n = len(degrees)
    row = np.concatenate([[0], np.cumsum(degrees)]).tolist()
    dst = rng.integers(0, n, row[-1]).tolist()
    weights = rng.integers(1, 4, row[-1]).tolist()
    return Graph(n, row, dst, weights)


def _run(module: ModuleOp, graph: Graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed + 100)
    n = graph.num_nodes
    arrays = {
        "x": rng.integers(0, n, n).astype(np.int32),
        "hits": np.zeros(n, np.int32),
        "seen": np.full(n, -1, np.int32),
        "out": np.zeros(n, np.int64),
        "count": np.zeros(n, np.int32),
    }
    run_host(module, "main", [graph, *arrays.values()])
    return arrays


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("copies", [2, 3, 4])
def test_interleaved_loops_do_what_the_serial_ones_do(seed: int, copies: int) -> None:
    graph = _graph(seed)
    serial = _run(parse_program(PROGRAM), graph, seed)
    module = parse_program(PROGRAM)
    _interleave(module, copies)
    module.verify()
    interleaved = _run(module, graph, seed)
    assert serial["hits"].any() and (serial["seen"] >= 0).any()
    np.testing.assert_array_equal(serial["count"], np.diff(graph.row_start))
    for name in serial:
        np.testing.assert_array_equal(interleaved[name], serial[name], err_msg=name)
