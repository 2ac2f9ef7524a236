"""Greedy graph colouring benchmark: Exclusive over closed neighbourhoods,
losers retried (a conflict-heavy workload for the retry worklist and
``lower-irgl{retry_backoff=true}``).

Host function: ``@main(%g: !irgl.graph, %color: memref<?xi32>, %stats:
memref<?xi32>) -> i32``; the program initializes ``color`` itself and leaves
every node's colour (0, 1, ...). ``stats[0]`` counts the invocations of the
colouring kernel (the first launch and every retry re-launch), ``stats[1]``
the failed Exclusives (items retried); the host function returns
``stats[0]``, so ``irgl-bench run color`` reports it as ``result``. Edges are
read as undirected; self loops are ignored (a node never conflicts with
itself). Checked by :func:`coloring_problem`, from the graph alone: every node
coloured, no edge between two nodes of the same colour (proper), and every
node of colour c has neighbours of all colours 0 .. c-1 (greedy: a node
takes the smallest colour its neighbours coloured before it left free, and
colours never change).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.graphs import CSRGraph


def coloring_problem(graph: CSRGraph, color: np.ndarray) -> str | None:
    """Why ``color`` is not a proper greedy colouring of ``graph``, or None."""
    color = np.asarray(color).astype(np.int64).ravel()
    n = graph.num_nodes
    if color.shape != (n,):
        return f"color: {color.shape[0]} values, expected {n}"
    if n and color.min() < 0:
        v = int(np.flatnonzero(color < 0)[0])
        return f"color: node {v} is not coloured ({int(color[v])})"
    src, dst = graph.edge_src(), graph.edge_dst
    proper = src != dst
    clash = proper & (color[src] == color[dst])
    if np.any(clash):
        e = int(np.flatnonzero(clash)[0])
        u, v = int(src[e]), int(dst[e])
        return f"not proper: adjacent nodes {u} and {v} both have colour {color[u]}"
    # distinct (node, smaller neighbour colour) pairs: c of them for colour c
    lower = proper & (color[dst] < color[src])
    pairs = np.unique(np.stack([src[lower], color[dst[lower]]]), axis=1)
    seen = np.bincount(pairs[0], minlength=n) if pairs.size else np.zeros(n, int)
    greedy = seen == color
    if not np.all(greedy):
        v = int(np.flatnonzero(~greedy)[0])
        return (
            f"not greedy: node {v} has colour {int(color[v])} but its neighbours "
            f"have only {int(seen[v])} of the colours below it"
        )
    return None


def check(ctx: RunContext) -> str | None:
    """A proper greedy colouring; the counters agree with the result."""
    color = np.asarray(ctx.outputs["color"]).ravel()
    problem = coloring_problem(ctx.graph, color)
    if problem is not None:
        return problem
    stats = np.asarray(ctx.outputs["stats"]).ravel()
    if ctx.graph.num_nodes > 0 and stats[0] < 1:
        return f"stats: {int(stats[0])} invocations of @color, expected at least 1"
    if ctx.result is not None and int(ctx.result) != int(stats[0]):
        return f"the program returns {ctx.result}, but stats[0] is {int(stats[0])}"
    return None


APP = AppSpec(
    name="color",
    mlir=Path(__file__).with_name("color.mlir"),
    host_fn="main",
    outputs=[
        ArraySpec("color", "int32", init=0),
        ArraySpec("stats", "int32", init=0, length=2),
    ],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["color"], ctx.arrays["stats"]],
    check=check,
    weighted=False,
    uses_source=False,
    output_array="color",
)
