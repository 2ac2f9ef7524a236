"""Folded master blocks: each rank masters two id blocks, one from each end.

Under :mod:`irgl_runner.partition`'s contiguous blocks, rank 0 masters the
lowest ids. Where a program's work follows the ids, that rank does more:
connected components by label propagation (``benchmarks/cc/cc_lp.mlir``)
lowers a neighbour's label where the node's id is the smaller, so on two
ranks three in four of rank 0's edges write in its first round, one in
four of rank 1's (2 × H200, RMAT-26: 64.0 against 33.5 ms; see
docs/performance-notes.md, "CC's rounds rank by rank").

Folding cuts the ids into ``2P`` blocks balanced as the ``P`` blocks are
(out-degree + 1 a node) and gives rank ``r`` blocks ``r`` and ``2P - 1 - r``,
so every rank holds low and high ids alike (in a synchronous model of
cc_lp's rounds on RMAT-20 the busiest rank's share of the lowerings goes
from 1.19× an even share to 1.01× on 2 ranks, 1.29× to 1.01× on 4).

It is a relabelling: :class:`FoldMap` numbers the blocks in the order 0,
2P−1, 1, 2P−2, ... (*partition ids*), the graph is partitioned in those
ids with the contiguous blocks, and each :class:`~irgl_runner.partition.
Partition` then names its nodes and edges by their original ids again
(``local_to_global``, ``global_edge_ids``) and carries the fold
(``fold_bounds``); its ``master_offset`` and its mirrors' order stay in
partition ids. A program sees original ids (``irgl_dist_global_id``), and
a global id the host hands it goes through the fold first
(``irgl_dist_local_node``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graphs import CSRGraph

#: What ``--fold`` does, for the command lines that take it.
FOLD_HELP = (
    "folded master blocks: each rank masters two id blocks, one from each end "
    "of the ids (irgl_runner.partition_fold; evens out work that follows the "
    "ids, as label propagation's first round)"
)


def balanced_bounds(row_start: np.ndarray, num_nodes: int, blocks: int) -> np.ndarray:
    """Bounds (int64, ``blocks + 1``) of ``blocks`` contiguous id blocks
    balancing out-degree + 1, every block non-empty where there are at least
    as many nodes (else node ``b`` alone in block ``b``, the rest empty)."""
    n, p = int(num_nodes), int(blocks)
    ranks = np.arange(p + 1, dtype=np.int64)
    if n < p:
        return np.minimum(ranks, n)
    # cost[i] = sum over nodes < i of (degree + 1), strictly increasing.
    cost = row_start.astype(np.int64) + np.arange(n + 1, dtype=np.int64)
    total = int(cost[-1])
    targets = (ranks * total + p - 1) // p  # ceil(r * total / p), exact in int64
    bounds = np.searchsorted(cost, targets, side="left").astype(np.int64)
    # Make the blocks non-empty: strictly increasing, ending at n.
    bounds = ranks + np.maximum.accumulate(bounds - ranks)
    bounds = np.minimum(bounds, n - p + ranks)
    bounds[0] = 0
    return bounds


@dataclass(frozen=True)
class FoldMap:
    """The relabelling of the folded blocks (see the module docstring).

    ``bounds`` (int64, ``2P + 1``) are the blocks in original ids; block
    ``order[k]`` comes k-th in partition ids, from ``part_starts[k]``."""

    bounds: np.ndarray

    @staticmethod
    def of(graph: CSRGraph, num_ranks: int) -> FoldMap:
        """The fold of ``graph`` for ``num_ranks`` ranks."""
        return FoldMap(balanced_bounds(graph.row_start, graph.num_nodes, 2 * num_ranks))

    @property
    def order(self) -> np.ndarray:
        """Block indices in partition-id order: 0, 2P-1, 1, 2P-2, ..."""
        blocks = self.bounds.shape[0] - 1
        half = np.arange(blocks // 2, dtype=np.int64)
        return np.stack([half, blocks - 1 - half], axis=1).reshape(-1)

    @property
    def part_starts(self) -> np.ndarray:
        """Where each block of :attr:`order` starts in partition ids (int64,
        one more entry: the node count)."""
        sizes = np.diff(self.bounds)[self.order]
        starts = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        return starts

    @property
    def rank_bounds(self) -> np.ndarray:
        """The ranks' master blocks in partition ids (int64, ``P + 1``): rank
        ``r`` masters blocks ``r`` and ``2P - 1 - r``, partition ids
        ``rank_bounds[r] .. rank_bounds[r + 1] - 1``."""
        return self.part_starts[::2]

    def to_part(self, ids: np.ndarray) -> np.ndarray:
        """Partition ids of original ids."""
        ids = np.asarray(ids, dtype=np.int64)
        block = np.searchsorted(self.bounds, ids, side="right") - 1
        start_of = np.empty(self.bounds.shape[0] - 1, dtype=np.int64)
        start_of[self.order] = self.part_starts[:-1]
        return start_of[block] + ids - self.bounds[block]

    def to_global(self, pids: np.ndarray) -> np.ndarray:
        """Original ids of partition ids."""
        pids = np.asarray(pids, dtype=np.int64)
        starts = self.part_starts
        k = np.searchsorted(starts, pids, side="right") - 1
        return self.bounds[self.order[k]] + pids - starts[k]

    def row_start(self, graph: CSRGraph) -> np.ndarray:
        """``graph``'s row offsets in partition ids (int64)."""
        rs = graph.row_start.astype(np.int64, copy=False)
        degrees = np.concatenate(
            [
                np.diff(rs[int(self.bounds[b]) : int(self.bounds[b + 1]) + 1])
                for b in self.order
            ]
        )
        row_start = np.zeros(graph.num_nodes + 1, dtype=np.int64)
        np.cumsum(degrees, out=row_start[1:])
        return row_start

    def relabel(self, graph: CSRGraph) -> tuple[CSRGraph, EdgeFold]:
        """``graph`` in partition ids, and where its edges were in ``graph``
        (its blocks' rows are contiguous there: no per-edge table)."""
        rs = graph.row_start.astype(np.int64, copy=False)
        blocks = [(int(self.bounds[b]), int(self.bounds[b + 1])) for b in self.order]
        row_start = self.row_start(graph)
        dst = np.empty(graph.num_edges, dtype=np.int64)
        at = 0
        for lo, hi in blocks:  # block by block, in chunks: bounded temporaries
            for e0 in range(int(rs[lo]), int(rs[hi]), _CHUNK):
                e1 = min(e0 + _CHUNK, int(rs[hi]))
                dst[at : at + e1 - e0] = self.to_part(graph.edge_dst[e0:e1])
                at += e1 - e0
        weights = None
        if graph.weights is not None:
            weights = np.concatenate(
                [graph.weights[int(rs[lo]) : int(rs[hi])] for lo, hi in blocks]
            )
        starts = np.array([int(rs[lo]) for lo, _ in blocks], dtype=np.int64)
        edges = EdgeFold(row_start[self.part_starts], starts)
        return CSRGraph(graph.num_nodes, row_start, dst, weights), edges


#: Edges mapped at a time by :meth:`FoldMap.relabel`.
_CHUNK = 1 << 24


@dataclass(frozen=True)
class EdgeFold:
    """Where the edges of a graph :meth:`FoldMap.relabel` made were in the
    original: its block ``k``'s edges, from ``part_starts[k]``, were a run
    from ``starts[k]``."""

    part_starts: np.ndarray
    starts: np.ndarray

    def to_global(self, edges: np.ndarray) -> np.ndarray:
        """Original positions of the relabelled graph's edges."""
        edges = np.asarray(edges, dtype=np.int64)
        k = np.searchsorted(self.part_starts, edges, side="right") - 1
        k = np.minimum(k, self.starts.shape[0] - 1)
        return self.starts[k] + edges - self.part_starts[k]
