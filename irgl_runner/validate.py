"""Checks of search and component results in time linear in the edges,
without a reference run (in the manner of Graph500's validation): for graphs
too large for the CPU references of :mod:`irgl_runner.reference` (Dijkstra,
scipy's components), such as one that exceeds a GPU's memory.

Each walks the edges in blocks of rows (bounded memory) and returns ``None``
or what is wrong, naming a node. A result that passes is the unique correct
one: BFS levels and SSSP distances are the shortest distances (a source at
0, no edge that shortens a distance, a tight edge into every other reached
node, unreached nodes only next to unreached ones); component labels are
each component's smallest id.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .graphs import CSRGraph
from .reference import INF

__all__ = ["cc_labels_problem", "distances_problem", "edge_blocks"]

#: Edges a block holds (about 0.3 GB of temporaries at a time).
BLOCK_EDGES = 1 << 24


def edge_blocks(
    graph: CSRGraph, block_edges: int = BLOCK_EDGES
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """(source, destination, weight or None) of every edge, a block of whole
    rows at a time (a row longer than the block alone)."""
    rs = graph.row_start
    n = graph.num_nodes
    lo = 0
    while lo < n:
        hi = int(np.searchsorted(rs, rs[lo] + block_edges, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        e0, e1 = int(rs[lo]), int(rs[hi])
        src = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(rs[lo : hi + 1]))
        dst = np.asarray(graph.edge_dst[e0:e1], dtype=np.int64)
        w = None if graph.weights is None else np.asarray(graph.weights[e0:e1])
        yield src, dst, w
        lo = hi


def distances_problem(
    name: str, graph: CSRGraph, source: int, dist: np.ndarray, weighted: bool
) -> str | None:
    """Whether ``dist`` are the shortest distances from ``source`` (edge
    weights, at least 1, or 1 each unless ``weighted``; unreached = INF) on
    a graph whose edges go both ways: every reached node but the source is
    put there by a tight edge from a nearer one, so its distance is a
    path's, and no edge is shorter."""
    d = np.asarray(dist, dtype=np.int64).ravel()
    n = graph.num_nodes
    if d.shape != (n,):
        return f"{name}: {d.size} values, expected {n}"
    if d[source] != 0:
        return f"{name}: the source {source} is at {int(d[source])}, not 0"
    bad = (d < 0) | ((d > INF - 1) & (d != INF))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return f"{name}: node {i} has {int(d[i])}, neither a distance nor INF"
    tight = np.zeros(n, dtype=bool)
    tight[source] = True
    for src, dst, w in edge_blocks(graph):
        if weighted and w is not None:
            step = w.astype(np.int64)
            if step.size and step.min() < 1:
                # a tight zero-weight cycle could stand in for a path
                return f"{name}: cannot validate distances over zero-weight edges"
        else:
            step = np.ones(dst.shape[0], dtype=np.int64)
        du, dv = d[src], d[dst]
        reached = du != INF
        shorter = reached & (du + step < dv)
        if shorter.any():
            k = int(np.flatnonzero(shorter)[0])
            return (
                f"{name}: the edge {int(src[k])} -> {int(dst[k])} shortens node "
                f"{int(dst[k])}'s {int(dv[k])} to {int(du[k] + step[k])}"
            )
        tight[dst[reached & (du + step == dv)]] = True
    loose = (d != INF) & ~tight
    if loose.any():
        i = int(np.flatnonzero(loose)[0])
        return f"{name}: node {i} at {int(d[i])} has no neighbour that puts it there"
    return None


def cc_labels_problem(graph: CSRGraph, comp: np.ndarray) -> str | None:
    """Whether ``comp`` labels every node with its component's smallest id
    (a graph whose edges go both ways): the ends of every edge agree, every
    label is a node labelled with itself, and no node is below its label."""
    c = np.asarray(comp, dtype=np.int64).ravel()
    n = graph.num_nodes
    if c.shape != (n,):
        return f"comp: {c.size} values, expected {n}"
    ids = np.arange(n, dtype=np.int64)
    bad = (c < 0) | (c > ids)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return f"comp: node {i} has label {int(c[i])}, not a node id at most its own"
    roots = c[c] != c
    if roots.any():
        i = int(np.flatnonzero(roots)[0])
        return f"comp: node {i}'s label {int(c[i])} is labelled {int(c[c[i]])}"
    for src, dst, _ in edge_blocks(graph):
        split = c[src] != c[dst]
        if split.any():
            k = int(np.flatnonzero(split)[0])
            return (
                f"comp: the edge {int(src[k])} -> {int(dst[k])} joins labels "
                f"{int(c[src[k]])} and {int(c[dst[k]])}"
            )
    return None
