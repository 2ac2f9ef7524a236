"""Checks of search and component results in time linear in the edges,
without a reference run (in the manner of Graph500's validation): for graphs
too large for the CPU references of :mod:`irgl_runner.reference` (Dijkstra,
scipy's components), such as one that exceeds a GPU's memory.

Each walks the edges in blocks of rows (bounded memory per block; the
blocks on ``IRGL_GEN_THREADS`` threads, see :mod:`irgl_runner._parallel`)
and returns ``None`` or what is wrong, naming a node (the first wrong edge
in edge order, whatever the thread count). A result that passes is the
unique correct one: BFS levels and SSSP distances are the shortest
distances (a source at 0, no edge that shortens a distance, a tight edge
into every other reached node, unreached nodes only next to unreached
ones); component labels are each component's smallest id.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from . import _parallel
from .graphs import CSRGraph
from .reference import INF

__all__ = ["cc_labels_problem", "distances_problem", "edge_blocks", "row_spans"]

#: Edges a block holds (about 0.3 GB of temporaries per block at a time).
BLOCK_EDGES = 1 << 24


def row_spans(graph: CSRGraph, block_edges: int | None = None) -> list[tuple[int, int]]:
    """The graph's rows cut into consecutive spans ``[lo, hi)`` of about
    ``block_edges`` (default :data:`BLOCK_EDGES`) edges each (a row longer
    than that alone)."""
    if block_edges is None:
        block_edges = BLOCK_EDGES
    rs = graph.row_start
    n = graph.num_nodes
    out = []
    lo = 0
    while lo < n:
        hi = int(np.searchsorted(rs, rs[lo] + block_edges, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        out.append((lo, hi))
        lo = hi
    return out


def _block(
    graph: CSRGraph, span: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(source, destination, weight or None) of the edges of rows ``span``."""
    lo, hi = span
    rs = graph.row_start
    e0, e1 = int(rs[lo]), int(rs[hi])
    src = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(rs[lo : hi + 1]))
    dst = np.asarray(graph.edge_dst[e0:e1], dtype=np.int64)
    w = None if graph.weights is None else np.asarray(graph.weights[e0:e1])
    return src, dst, w


def edge_blocks(
    graph: CSRGraph, block_edges: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """(source, destination, weight or None) of every edge, a block of whole
    rows at a time (a row longer than the block alone)."""
    for span in row_spans(graph, block_edges):
        yield _block(graph, span)


def _first(problems: list[str | None]) -> str | None:
    """The first block's problem, if any block has one."""
    return next((p for p in problems if p is not None), None)


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

    def check(span: tuple[int, int]) -> str | None:
        src, dst, w = _block(graph, span)
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
        # blocks on other threads may set the same flags: each only sets True
        tight[dst[reached & (du + step == dv)]] = True
        return None

    problem = _first(_parallel.pmap(check, row_spans(graph)))
    if problem is not None:
        return problem
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

    def check(span: tuple[int, int]) -> str | None:
        src, dst, _ = _block(graph, span)
        split = c[src] != c[dst]
        if split.any():
            k = int(np.flatnonzero(split)[0])
            return (
                f"comp: the edge {int(src[k])} -> {int(dst[k])} joins labels "
                f"{int(c[src[k]])} and {int(c[dst[k]])}"
            )
        return None

    return _first(_parallel.pmap(check, row_spans(graph)))
