"""Maximal independent set benchmark (Luby-style, hashed priorities).

Host function: ``@main(%g: !irgl.graph, %state: memref<?xi32>)``; the program
initializes ``state`` itself and leaves 1 for the nodes in the set, 0 for the
others.  Edges are read as undirected, self loops are ignored.  Checked with
:func:`irgl_runner.reference.mis_problem`: the set must be independent and
maximal (any maximal independent set passes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import mis_problem


def check(ctx: RunContext) -> str | None:
    """Every node decided (0 or 1); the 1s form a maximal independent set."""
    state = np.asarray(ctx.outputs["in_set"]).ravel()
    undecided = (state != 0) & (state != 1)
    if np.any(undecided):
        v = int(np.flatnonzero(undecided)[0])
        return f"in_set: node {v} has state {int(state[v])}, expected 0 or 1"
    return mis_problem(ctx.graph, state)


APP = AppSpec(
    name="mis",
    mlir=Path(__file__).with_name("mis.mlir"),
    host_fn="main",
    outputs=[ArraySpec("in_set", "int32", init=0)],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["in_set"]],
    check=check,
    weighted=False,
    uses_source=False,
)
