"""SSSP benchmark: shortest-path distance of every node from a source.

Host function: ``@main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index)``;
the program initializes ``dist`` itself. Checked exactly against
:func:`irgl_runner.reference.sssp_distances` (Dijkstra on the CPU).
"""

from __future__ import annotations

from pathlib import Path

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import INF, compare_exact, sssp_distances
from irgl_runner.validate import distances_problem


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
    args=lambda ctx: [ctx.device_graph, ctx.arrays["dist"], ctx.source],
    check=check,
    validate=validate,
    weighted=True,
    min_weight=0,
    min_weight_reason="its relaxation assumes non-negative weights; a negative "
    "edge loaded both ways is a negative cycle, where it would never end",
)
