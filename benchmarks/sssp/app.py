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
from lowering.stamp_test import HUB_SKEW

if TYPE_CHECKING:
    from irgl_runner.graphs import CSRGraph
    from irgl_runner.rank_partitions import RankGraph


#: The windows' width on graphs of at least :data:`DENSE_MEAN_DEGREE` edges a
#: node and no hub: the heaviest edge of the benchmark graphs (weights in
#: [1, 64]).
NARROW_WINDOW = 64
#: ... and on the others: 32 times that.
WIDE_WINDOW = 2048
DENSE_MEAN_DEGREE = 8


def window(graph: CSRGraph | RankGraph) -> int:
    """The width of SSSP's distance windows for ``graph``, from its global
    sizes and largest degree, which every rank of a several-GPU run knows
    alike.

    On a dense graph without hubs (uniform random) a narrow window relaxes
    a node about once, where a wide one relaxes it at each of its
    improvements; on a sparse one (grids, paths, stars) narrow windows
    multiply the phases, each a pass over the nodes, and where hubs are
    (RMAT, hub graphs) a narrow window gains nothing or loses. One H200,
    2048 → 64, medians over nine sources of each graph's ratio:
    random:1000000:8000000 0.39× (2.0 → 0.8 ms), random:200000:1600000
    0.79×, RMAT-16/18/20 1.06× / 0.99× / 0.98×, hub:100000:4 1.16×; from
    node 0, grid:512x512 1.8× and path:50000 2.1× (docs/performance-notes.md,
    "SSSP's window width").
    """
    n, m = graph.num_nodes, graph.num_edges
    dense = m >= DENSE_MEAN_DEGREE * n
    hubs = graph.max_degree() * n > HUB_SKEW * m  # the round stamps' test's hubs
    return NARROW_WINDOW if dense and not hubs else WIDE_WINDOW


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
