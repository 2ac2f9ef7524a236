"""BFS benchmark: level of every node from a source (the model ``AppSpec``).

Host function: ``@main(%g: !irgl.graph, %level: memref<?xi32>, %src: index)``.
``level`` is handed over as INF everywhere except ``level[src] = 0``; the host
function may re-initialize it itself.  Checked exactly against
:func:`irgl_runner.reference.bfs_levels`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import INF, bfs_levels, compare_exact
from irgl_runner.validate import distances_problem


def init_level(ctx: RunContext) -> np.ndarray:
    """INF everywhere, 0 at the source."""
    level = np.full(ctx.graph.num_nodes, INF, dtype=np.int32)
    level[ctx.source] = 0
    return level


#: The constants of `bfs`'s top-down kernel and its host function (bfs.mlir).
GOLDEN = 2654435769
COUNTERS = 32


def _rows(graph: CSRGraph, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge destinations of ``nodes`` concatenated, and each edge's row
    (an index into ``nodes``)."""
    starts = graph.row_start[nodes].astype(np.int64)
    counts = graph.row_start[nodes + 1].astype(np.int64) - starts
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
    edges = graph.edge_dst[offsets + np.arange(total)].astype(np.int64)
    return edges, np.repeat(np.arange(len(nodes)), counts)


def _bottom_up_reads(graph: CSRGraph, level: np.ndarray, start: int) -> int:
    """`bfs_bottom_up` passes from level ``start`` while one finds a parent:
    every unreached node reads its edges in order until one on the level
    before (a parent) or the row's end. Updates ``level``; the reads."""
    degree = np.diff(graph.row_start).astype(np.int64)
    reads, lvl = 0, start
    while True:
        unseen = np.flatnonzero(level == INF)
        edges, rows = _rows(graph, unseen)
        first = degree[unseen].copy()  # no parent: the whole row is read
        hits = np.flatnonzero(level[edges] == lvl - 1)
        if len(hits):
            row_start = np.concatenate(([0], np.cumsum(degree[unseen])[:-1]))
            np.minimum.at(first, rows[hits], hits - row_start[rows[hits]])
        found = first < degree[unseen]
        reads += int(np.where(found, first + 1, first).sum())
        if not found.any():
            return reads
        level[unseen[found]] = lvl
        lvl += 1


def replayed_work(graph: CSRGraph, source: int) -> dict[str, int]:
    """The edges bfs.mlir reads from ``source``, replayed on the CPU from the
    program's own decisions: ``top-down edges`` (the host's path: two hops a
    round on sparse graphs, every reached edge; else the direction-optimizing
    levels until the frontier runs dry, holds a node of more than `limit`
    edges (flag 2), or its sampled counters say heavy (one counter past
    `limit / 32`; a level's sampled sum does not depend on the order)) and
    ``bottom-up reads`` (the passes after a heavy frontier). The same counts
    as the interpreter's edge reads in `bfs` and `bfs_bottom_up`; on the GPU
    the per-source times follow them, not the reached edges
    (docs/performance-notes.md)."""
    nn, ne = graph.num_nodes, int(graph.row_start[-1])
    degree = np.diff(graph.row_start).astype(np.int64)
    if ne <= 4 * nn and int(degree.max(initial=0)) <= ne // 4:
        reached = np.asarray(bfs_levels(graph, source)) != INF
        return {"top-down edges": int(degree[reached].sum()), "bottom-up reads": 0}
    limit = ne // 4
    every = min(max(nn // 32768, 1), 32)
    share = limit // COUNTERS
    level = np.full(nn, INF, dtype=np.int64)
    level[source] = 0
    frontier = np.array([source], dtype=np.int64)
    read, lvl, start = 0, 1, None
    while len(frontier):
        read += int(degree[frontier].sum())
        light = frontier[degree[frontier] <= limit]
        found, _ = _rows(graph, light)
        new = np.unique(found[level[found] == INF])
        level[new] = lvl
        if len(light) < len(frontier):
            start = lvl  # flag 2: this level again, bottom-up
            break
        h = (new * GOLDEN) & 0xFFFFFFFF
        sampled = new[h * every < (1 << 32)]
        lanes = (((sampled * GOLDEN) & 0xFFFFFFFF) >> 22) & (COUNTERS - 1)
        counters = np.bincount(
            lanes, weights=degree[sampled] * every, minlength=COUNTERS
        )
        if (counters > share).any():
            start = lvl + 1  # flag 1: the next level bottom-up
            break
        frontier, lvl = new, lvl + 1
    bottom_up = 0 if start is None else _bottom_up_reads(graph, level, start)
    return {"top-down edges": read, "bottom-up reads": bottom_up}


def check(ctx: RunContext) -> str | None:
    """Levels must equal the CPU BFS exactly (unreachable = INF)."""
    return compare_exact(
        "level", ctx.outputs["level"], bfs_levels(ctx.graph, ctx.source)
    )


def validate(ctx: RunContext) -> str | None:
    """Levels are BFS distances (linear in the edges, no reference run)."""
    return distances_problem(
        "level", ctx.graph, ctx.source, ctx.outputs["level"], weighted=False
    )


APP = AppSpec(
    name="bfs",
    mlir=Path(__file__).with_name("bfs.mlir"),
    # --gpus N: the level-synchronous form (irgl-distribute refuses bfs.mlir)
    distributed_mlir=Path(__file__).resolve().parents[2] / "examples" / "bfs.mlir",
    host_fn="main",
    outputs=[ArraySpec("level", "int32", init=init_level)],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["level"], ctx.source],
    check=check,
    validate=validate,
    weighted=False,
    source_work=replayed_work,
)
