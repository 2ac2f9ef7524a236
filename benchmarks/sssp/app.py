"""SSSP benchmark: shortest-path distance of every node from a source.

Host function: ``@main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index,
%delta: i32)``; the program initializes ``dist`` itself and relaxes in
distance windows ``delta`` wide (:func:`window`). Checked exactly against
:func:`irgl_runner.reference.sssp_distances` (Dijkstra on the CPU).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import INF, compare_exact, sssp_distances
from irgl_runner.validate import distances_problem

if TYPE_CHECKING:
    from irgl_runner.graphs import CSRGraph
    from irgl_runner.rank_partitions import RankGraph


#: The windows' width on graphs of at least :data:`DENSE_MEAN_DEGREE` edges a
#: node: the heaviest edge of the benchmark graphs (weights in [1, 64]).
NARROW_WINDOW = 64
#: ... and on sparser graphs: 32 times that.
WIDE_WINDOW = 2048
DENSE_MEAN_DEGREE = 8


def window(graph: CSRGraph | RankGraph) -> int:
    """The width of SSSP's distance windows for ``graph`` (from its global
    sizes, which every rank of a several-GPU run knows alike).

    On a graph of few levels (RMAT, uniform random) a narrow window relaxes
    a node about once, where a wide one relaxes it at each of its
    improvements; on one of many levels (grids, paths) narrow windows
    multiply the phases, each a pass over the nodes. One H200, 2048 → 64:
    random:1000000:8000000 2.05 → 0.80 ms, RMAT-20 2.41 → 1.94,
    random:200000:1600000 0.47 → 0.39, but grid:512x512 4.4 → 8.0 and
    path:50000 106 → 220 (docs/performance-notes.md, "SSSP's window width").
    """
    dense = graph.num_edges >= DENSE_MEAN_DEGREE * graph.num_nodes
    return NARROW_WINDOW if dense else WIDE_WINDOW


def check(ctx: RunContext) -> str | None:
    """Distances must equal the CPU reference exactly (unreachable = INF)."""
    return compare_exact(
        "dist", ctx.outputs["dist"], sssp_distances(ctx.graph, ctx.source)
    )


def validate(ctx: RunContext) -> str | None:
    """Distances are shortest paths (linear in the edges, no Dijkstra)."""
    return distances_problem(
        "dist", ctx.graph, ctx.source, ctx.outputs["dist"], weighted=True
    )


APP = AppSpec(
    name="sssp",
    mlir=Path(__file__).with_name("sssp.mlir"),
    host_fn="main",
    outputs=[ArraySpec("dist", "int32", init=INF)],
    args=lambda ctx: [
        ctx.device_graph,
        ctx.arrays["dist"],
        ctx.source,
        window(ctx.graph),
    ],
    check=check,
    validate=validate,
    weighted=True,
    min_weight=0,
    min_weight_reason="its relaxation assumes non-negative weights; a negative "
    "edge loaded both ways is a negative cycle, where it would never end",
)
