"""Short worklists walked by teams of blocks (`lower-irgl{edge_teams=T}`, on
by default with T = 8; lowering/edge_teams.py): which ForAlls qualify, that
the emitted CUDA builds, and (marker ``gpu``) that BFS and SSSP give the
reference's results with teams of two blocks from hubs, whose rounds of one
item the teams share (the default's teams run in every GPU test of them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import assert_driver_passes, nvcc_path, shared_build_cache
from xdsl.parser import Parser

from irgl_dialect.loops import ForAllOp
from irgl_runner.api import compile_cuda, emit_cuda
from irgl_runner.apps import load_app
from irgl_runner.build import _context
from lowering.edge_teams import team_edge_loop
from lowering.nested_parallelism import IrglNestedParallelism

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_BFS = ROOT / "examples" / "bfs.mlir"
NO_TEAMS = "lower-irgl{edge_teams=0}"
PAIRS = "lower-irgl{edge_teams=2}"

KERNEL = """
irgl.kernel @k(%g: !irgl.graph, %level: memref<?xi32>, %L: i32) {{
  %inf = arith.constant 1073741823 : i32
  irgl.forall %i in worklist {{
    %n = irgl.wl.pop %i
{before}
    irgl.forall %e in edges(%g, %n) {{
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {{
        memref.store %L, %level[%dst] : memref<?xi32>
        irgl.wl.push %dst
      }}
    }}
  }}
}}
"""


def _outer_loop(before: str) -> ForAllOp:
    """The outermost ForAll of KERNEL, its edge loop marked for nested
    scheduling (as convert-irgl-loops sees it)."""
    ctx = _context()
    module = Parser(ctx, KERNEL.format(before=before)).parse_module()
    IrglNestedParallelism().apply(ctx, module)
    loops = [op for op in module.walk() if isinstance(op, ForAllOp)]
    return loops[0]


def test_reads_then_an_edge_loop_qualify() -> None:
    assert team_edge_loop(_outer_loop("")) is not None
    loads = "    %d = memref.load %level[%n] : memref<?xi32>"
    assert team_edge_loop(_outer_loop(loads)) is not None


def test_effects_before_the_edge_loop_do_not() -> None:
    # a team repeats what comes before the edge loop on each of its blocks
    store = "    memref.store %L, %level[%n] : memref<?xi32>"
    assert team_edge_loop(_outer_loop(store)) is None
    push = "    irgl.wl.push %n"
    assert team_edge_loop(_outer_loop(push)) is None


def test_bfs_and_sssp_get_teams_unless_turned_off() -> None:
    for mlir in (EXAMPLE_BFS, load_app("sssp").mlir):
        teams = emit_cuda(mlir)
        without = emit_cuda(mlir, NO_TEAMS)
        # the team form reads its item's edge range once more
        first = "irgl_graph_first_edge("
        assert teams.count(first) > without.count(first)
        # the team size is a constant of the test `count <= blocks / T`
        assert emit_cuda(mlir, PAIRS) != teams
    # PageRank pull's edge loop reduces: no team form
    pr = load_app("pr_pull").mlir
    assert emit_cuda(pr) == emit_cuda(pr, NO_TEAMS)


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not found")
def test_teams_build() -> None:
    so = compile_cuda(
        emit_cuda(EXAMPLE_BFS, PAIRS),
        nvcc=nvcc_path() or "nvcc",
        cache=shared_build_cache(),
    )
    assert so.is_file() and so.stat().st_size > 0


DRIVER = r"""
import sys
from dataclasses import replace
from irgl_runner.api import Program, build
from irgl_runner.apps import execute, load_app
from irgl_runner.graph_args import default_source, resolve_graph
name, pipeline, spec, example = sys.argv[1:5]
app = load_app(name)
if example == "1":
    app = replace(app, mlir=app.distributed_mlir)
program = Program(build(app.mlir, pipeline))
graph, parsed = resolve_graph(spec, app.symmetrize, app.weighted, None)
source = default_source(graph, parsed) if spec.startswith("rmat") else 0
ctx = execute(app, program, graph, source, reps=2, warmup=1)
problem = app.check(ctx)
print(f"{name} on {spec} from {source}: {problem or 'ok'}")
sys.exit(0 if problem is None else 1)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("spec", ["star:50000", "rmat:16", "hub:200000:2"])
@pytest.mark.parametrize(
    "app, example", [("bfs", True), ("sssp", False)], ids=["bfs-levels", "sssp"]
)
def test_teams_on_gpu(app: str, example: bool, spec: str) -> None:
    """From a hub (node 0 of a star, RMAT's highest degree) the first round
    is one item that a team of blocks shares; with teams of two, later short
    rounds are shared too; every result as the reference."""
    assert_driver_passes(
        [DRIVER, app, PAIRS, spec, "1" if example else "0"],
        f"{app} on {spec} with edge teams",
    )


@pytest.mark.gpu
@pytest.mark.parametrize("threshold", [0, 1000])
def test_dynamic_pipe_example_on_gpu(threshold: int) -> None:
    """examples/dynamic_pipe.mlir labels the neighbours of the nodes of more
    than `threshold` edges: with 1000, the hubs alone (a worklist of four,
    walked by teams), with 0 every node with an edge (a full worklist)."""
    from irgl_runner.api import Program, build
    from irgl_runner.generators import generate

    graph = generate("hub:100000:4")
    program = Program(build(ROOT / "examples" / "dynamic_pipe.mlir"))
    label = program.alloc(graph.num_nodes, "int32").fill(0)
    program.call("main", program.upload_graph(graph), label, threshold, False)
    degree = graph.degrees()
    expected = np.zeros(graph.num_nodes, dtype=np.int32)
    for node in np.flatnonzero(degree > threshold):
        lo, hi = int(graph.row_start[node]), int(graph.row_start[node + 1])
        expected[graph.edge_dst[lo:hi]] = 1
    assert threshold == 0 or np.count_nonzero(degree > threshold) <= 4
    np.testing.assert_array_equal(label.to_numpy(), expected)
