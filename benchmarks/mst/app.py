"""Borůvka minimum spanning forest benchmark (the specification's Atomic example).

Host function: ``@main(%g: !irgl.graph, %comp: memref<?xi32>, %total:
memref<?xi64>)``; the program initializes both itself.  ``comp`` is the
component id (the root node) of every node, ``total[0]`` the weight of the
minimum spanning forest; the graph is read as undirected with its integer
weights.  Checked exactly against :func:`irgl_runner.reference.mst_weight`
(scipy), and ``comp`` must group the nodes as the connected components do.

``mst.mlir`` uses 32-bit lock words: CAS locks by default, ticket locks with
16-bit halves under ``irgl-opt -p 'lower-irgl{ticket_locks=true}'``.
:func:`ticket_lock_mlir` gives the program with 64-bit lock words (ticket
locks with 32-bit halves).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import cc_labels, mst_weight, same_partition

MLIR = Path(__file__).with_name("mst.mlir")

#: The line of ``mst.mlir`` that fixes the lock word type (CAS locks: i32).
CAS_LOCKS = "!locks = memref<?xi32>"
#: Its replacement with 64-bit lock words.
TICKET_LOCKS = "!locks = memref<?xi64>"


def ticket_lock_mlir() -> str:
    """``mst.mlir`` with 64-bit lock words."""
    text = MLIR.read_text()
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.strip() == CAS_LOCKS]
    if len(hits) != 1:
        raise ValueError(f"{MLIR}: expected one line {CAS_LOCKS!r}, found {len(hits)}")
    lines[hits[0]] = lines[hits[0]].replace(CAS_LOCKS, TICKET_LOCKS)
    return "".join(lines)


def check(ctx: RunContext) -> str | None:
    """The forest weight must equal scipy's; ``comp`` must be the components."""
    total = int(np.asarray(ctx.outputs["total"]).ravel()[0])
    expected = mst_weight(ctx.graph)
    if total != expected:
        return f"total: MST weight {total}, expected {expected}"
    comp = np.asarray(ctx.outputs["comp"]).astype(np.int64).ravel()
    n = ctx.graph.num_nodes
    if comp.shape != (n,):
        return f"comp: {comp.shape[0]} values, expected {n}"
    if n == 0:
        return None
    if comp.min() < 0 or comp.max() >= n:
        bad = int(np.flatnonzero((comp < 0) | (comp >= n))[0])
        return f"comp: node {bad} has component id {comp[bad]}, not a node id"
    if np.any(comp[comp] != comp):
        bad = int(np.flatnonzero(comp[comp] != comp)[0])
        return f"comp: node {bad} has component {comp[bad]}, which is not a root"
    if not same_partition(comp, cc_labels(ctx.graph)):
        return "comp: the components differ from the connected components"
    return None


APP = AppSpec(
    name="mst",
    mlir=MLIR,
    host_fn="main",
    outputs=[
        ArraySpec("comp", "int32", init=0),
        ArraySpec("total", "int64", init=0, length=1),
    ],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["comp"], ctx.arrays["total"]],
    check=check,
    weighted=True,
    uses_source=False,
    output_array="comp",
    min_weight=1,
    min_weight_reason="the checker's reference (scipy) reads a weight of 0 as no edge",
)
