"""Partitioning a CSR graph over P ranks, D-IrGL/Gluon style: masters and mirrors.

Ownership
    Global node ids are cut into P contiguous blocks balanced by ``edges + nodes``
    (each node weighs its out-degree plus one); block ``r``, the global ids
    ``bounds[r] .. bounds[r + 1] - 1``, are rank ``r``'s *masters*.  Every node has
    exactly one master.  With at least as many nodes as ranks every rank gets at
    least one master; with fewer, ranks ``num_nodes .. P - 1`` get none (see
    :attr:`Partitioning.ranks_without_masters` and
    :meth:`Partitioning.check_every_rank_has_masters`).

Policies (which rank holds an edge ``u -> v``)
    ``"oec"``, outgoing edge-cut
        the master of ``u``: a node's out-edges live with its master.
    ``"cvc"``, Cartesian vertex-cut
        the ranks form a ``rows x cols`` grid (``rows * cols = P``, as square as
        possible, ``rows >= cols``; rank ``h`` sits at ``(h // cols, h % cols)``);
        the edge goes to the rank in the row of ``u``'s master and the column of
        ``v``'s master, Gluon's ``(owner(u) // cols) * cols + owner(v) % cols``.

Each :class:`Partition` is a graph of *local ids*: its masters ``0 .. num_masters
- 1`` (in global order), then its *mirrors* (every other endpoint of an edge it
holds, sorted by global id, hence grouped by owner rank).  Its CSR covers every
local node (a mirror may have out-edges, under CVC, or none); each row is sorted by
local destination.  For every other rank ``q`` it lists ``mirrors_owned_by[q]``
(local ids of its mirrors whose master is on ``q``) and ``masters_mirrored_on[q]``
(local ids of its masters that ``q`` mirrors), both in increasing global id, so that
rank ``r``'s ``mirrors_owned_by[q]`` and rank ``q``'s ``masters_mirrored_on[r]``
name the same nodes in the same order: reduce (mirrors into masters) and broadcast
(masters to mirrors) move matching index lists.

With ``fold`` the master blocks are folded (:mod:`irgl_runner.partition_fold`:
rank ``r`` masters id blocks ``r`` and ``2P - 1 - r`` of ``2P``), built as the
contiguous blocks of a relabelled graph and named by original ids again.

Everything is deterministic and vectorised (numpy; no Python loop over nodes or
edges).  :func:`partition_graph` builds all ranks, :func:`build_partition` only one
(what a rank needs, scanning the graph in per-block chunks) with the same result.
Partitions are cached as one ``.npz`` per rank (:func:`save_partition`,
:func:`load_or_build_partition`) in ``partitions/`` under the generated-graph cache,
keyed by a hash of the graph's arrays (:func:`graph_key`), the policy and P.
"""

from __future__ import annotations

import hashlib
import math
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from .errors import UsageError
from .graphs import CSRGraph
from .partition_fold import EdgeFold, FoldMap, balanced_bounds

__all__ = [
    "HOT_FRACTION",
    "HOT_ROUND",
    "POLICIES",
    "Partition",
    "Partitioning",
    "Policy",
    "build_folded_partition",
    "build_partition",
    "check_every_rank_has_masters",
    "cvc_grid",
    "default_partition_cache_dir",
    "gather",
    "graph_key",
    "hot_count",
    "hot_groups",
    "hot_min_active",
    "hot_nodes",
    "load_or_build_partition",
    "load_or_build_partitioning",
    "load_partition",
    "master_bounds",
    "master_ranks",
    "partition_cache_path",
    "partition_graph",
    "save_partition",
    "scatter",
]

Policy = Literal["oec", "cvc"]
#: The partitioning policies: outgoing edge-cut and Cartesian vertex-cut.
POLICIES: tuple[Policy, ...] = ("oec", "cvc")

#: A reduce-only exchange refreshes every rank's copies of the graph's
#: ``num_nodes // HOT_FRACTION`` nodes of highest degree (:func:`hot_nodes`)
#: after a round that activated at least ``1 / HOT_ROUND`` of their count of
#: masters (:func:`hot_min_active`). 4 × NVIDIA H200, RMAT-26, 4 GPUs
#: (docs/performance-notes.md, "Hot nodes refreshed after large rounds"):
#: SSSP 37.97 ms without, 38.46 with n/16, 36.57 with n/4, 36.78 with n/2;
#: CC 44.13 without, 40.97 with n/4, 42.33 with n/2 (an all-reduce then).
#: A 64th for the round (the round after SSSP's source refreshed too):
#: SSSP 37.27 against 37.04 ms, CC 41.17 against 41.51 ("The hot nodes'
#: refresh as an all-gather").
HOT_FRACTION = 4
HOT_ROUND = 16

#: Bumped whenever the cached layout or the partitioning itself changes.
_CACHE_VERSION = 1
#: What reading a corrupt or stale cache file raises.
_CACHE_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)
_EMPTY = np.zeros(0, dtype=np.int64)


# ------------------------------------------------------------------ validation


def _check_args(policy: str, num_ranks: int) -> Policy:
    """The policy, checked; raise :class:`ValueError` for bad arguments."""
    if policy not in POLICIES:
        raise ValueError(
            f"unknown partitioning policy {policy!r} (known: {', '.join(POLICIES)})"
        )
    _check_ranks(num_ranks)
    return cast(Policy, policy)


def _check_ranks(num_ranks: int) -> None:
    """Raise :class:`ValueError` unless ``num_ranks`` is an integer >= 1."""
    if isinstance(num_ranks, bool) or not isinstance(num_ranks, (int, np.integer)):
        raise ValueError(f"the rank count must be an integer, got {num_ranks!r}")
    if num_ranks < 1:
        raise ValueError(f"the rank count must be at least 1, got {num_ranks}")


def check_every_rank_has_masters(num_nodes: int, num_ranks: int) -> None:
    """Raise :class:`ValueError` if a graph of ``num_nodes`` nodes leaves some of
    ``num_ranks`` ranks without masters (fewer nodes than ranks): partitioning
    allows it, executing a program on such a partitioning does not."""
    if num_nodes < num_ranks:
        raise ValueError(
            f"the graph has {num_nodes} node{'s' * (num_nodes != 1)}, fewer than "
            f"the {num_ranks} ranks: ranks {num_nodes}..{num_ranks - 1} would own "
            "no nodes; run on at most as many ranks as the graph has nodes"
        )


# ------------------------------------------------------------------- ownership


def master_bounds(graph: CSRGraph, num_ranks: int) -> np.ndarray:
    """Block boundaries (int64, ``num_ranks + 1`` entries): rank ``r`` masters
    ``bounds[r] .. bounds[r + 1] - 1``.

    Blocks balance ``out-degree + 1`` summed over their nodes.  With at least
    ``num_ranks`` nodes every block is non-empty; with fewer, node ``r`` is rank
    ``r``'s only master and the remaining ranks own nothing.
    """
    _check_ranks(num_ranks)
    return balanced_bounds(graph.row_start, graph.num_nodes, int(num_ranks))


def _env_count(name: str, default: int, minimum: int, meaning: str) -> int:
    """The integer in environment variable ``name``, else ``default``;
    :class:`UsageError` (``name must be <meaning>``) for text that is not an
    integer of at least ``minimum``."""
    env = os.environ.get(name, "").strip()
    if not env:
        return default
    try:
        value = int(env)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise UsageError(f"{name} must be {meaning}, got {env!r}")
    return value


def hot_count(num_nodes: int, num_ranks: int, policy: str) -> int:
    """How many nodes a run's reduce-only exchanges refresh on every rank
    (:func:`hot_nodes`): ``num_nodes // HOT_FRACTION`` on several ranks under
    oec (the only policy with reduce-only exchanges), else none.
    ``IRGL_DIST_HOT`` overrides it (0: none; :class:`UsageError` if it is
    not a count)."""
    count = _env_count(
        "IRGL_DIST_HOT", num_nodes // HOT_FRACTION, 0, "a count of nodes"
    )
    if num_ranks < 2 or policy != "oec":
        return 0
    return min(count, num_nodes)


def hot_min_active(count: int) -> int:
    """How many masters a round must activate over all ranks for its
    exchange to refresh ``count`` hot nodes: ``count / HOT_ROUND`` rounded
    up, at least 1; ``IRGL_DIST_HOT_ROUND`` overrides the divisor
    (:class:`UsageError` unless it is a positive integer)."""
    divisor = _env_count("IRGL_DIST_HOT_ROUND", HOT_ROUND, 1, "a positive integer")
    return max(1, -(-int(count) // divisor))


def hot_groups(hot: np.ndarray, owners: np.ndarray, num_ranks: int) -> np.ndarray:
    """The hot list laid out for the refresh's all-gather (int64):
    ``num_ranks`` groups of one size (the largest group's), group ``r`` the
    nodes of ``hot`` that rank ``r`` masters (``owners``), in ``hot``'s order,
    then -1 to fill it. Each rank sends its group's values, its masters'."""
    hot = np.asarray(hot, dtype=np.int64)
    owners = np.asarray(owners, dtype=np.int64)
    counts = np.bincount(owners, minlength=num_ranks)
    size = int(counts.max()) if hot.shape[0] else 0
    order = np.argsort(owners, kind="stable")
    starts = np.cumsum(counts) - counts
    rank = owners[order]
    groups = np.full(num_ranks * size, -1, dtype=np.int64)
    groups[rank * size + np.arange(hot.shape[0]) - starts[rank]] = hot[order]
    return groups


def hot_nodes(graph: CSRGraph, count: int) -> np.ndarray:
    """The ``count`` nodes of highest out-degree (ties: the lower ids), in
    increasing id order (int64): the same list on every rank.

    A reduce-only exchange leaves a mirror with its own rank's value, so a
    rank's filter passes for edges into a node another rank has already
    improved; the nodes most edges lead to cost the most such atomics, and
    the runtime refreshes their copies on every rank after each large round
    with one all-gather of their masters' values (:func:`hot_groups`,
    ``irgl_dist_hot``)."""
    n = graph.num_nodes
    count = max(0, min(int(count), n))
    if count == n:
        return np.arange(n, dtype=np.int64)
    if count == 0:
        return _EMPTY.copy()
    degree = np.diff(np.asarray(graph.row_start, dtype=np.int64))
    cut = np.partition(degree, n - count)[n - count]  # the count-th largest
    above = np.flatnonzero(degree > cut)
    tied = np.flatnonzero(degree == cut)[: count - above.shape[0]]
    return np.sort(np.concatenate([above, tied])).astype(np.int64)


def cvc_grid(num_ranks: int) -> tuple[int, int]:
    """The ``(rows, cols)`` grid of the Cartesian vertex-cut: ``rows * cols ==
    num_ranks``, ``cols`` the largest divisor not above the square root."""
    _check_ranks(num_ranks)
    cols = math.isqrt(int(num_ranks))
    while num_ranks % cols:
        cols -= 1
    return int(num_ranks) // cols, cols


def _owner(bounds: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The master rank of each node (int64)."""
    return np.searchsorted(bounds, nodes, side="right").astype(np.int64) - 1


def master_ranks(
    bounds: np.ndarray, fold: FoldMap | None, nodes: np.ndarray
) -> np.ndarray:
    """The master rank of each global node id under oec's master blocks
    (``bounds``; in partition ids where ``fold`` relabels the graph)."""
    ids = np.asarray(nodes, dtype=np.int64)
    return _owner(bounds, ids if fold is None else fold.to_part(ids))


def _source_blocks(policy: Policy, grid: tuple[int, int], rank: int) -> range:
    """The owner blocks whose out-edges ``rank`` may hold."""
    if policy == "oec":
        return range(rank, rank + 1)
    cols = grid[1]
    row = rank // cols
    return range(row * cols, (row + 1) * cols)


def _block_edges(
    graph: CSRGraph,
    bounds: np.ndarray,
    policy: Policy,
    grid: tuple[int, int],
    rank: int,
    block: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, edge id)`` (global, int64) of the out-edges of ``block``'s
    nodes that ``rank`` holds, in CSR order."""
    lo, hi = int(bounds[block]), int(bounds[block + 1])
    e0, e1 = int(graph.row_start[lo]), int(graph.row_start[hi])
    eid = np.arange(e0, e1, dtype=np.int64)
    dst = graph.edge_dst[e0:e1].astype(np.int64, copy=False)
    src = np.repeat(
        np.arange(lo, hi, dtype=np.int64), np.diff(graph.row_start[lo : hi + 1])
    )
    if policy == "cvc":
        cols = grid[1]
        keep = _owner(bounds, dst) % cols == rank % cols
        src, dst, eid = src[keep], dst[keep], eid[keep]
    return src, dst, eid


def _endpoints_in(
    graph: CSRGraph,
    bounds: np.ndarray,
    policy: Policy,
    grid: tuple[int, int],
    holder: int,
    lo: int,
    hi: int,
) -> np.ndarray:
    """The sorted distinct global ids in ``[lo, hi)`` that are endpoints of the
    edges ``holder`` holds (scanned one owner block at a time)."""
    seen = np.zeros(max(hi - lo, 0), dtype=bool)  # a flag per id: O(edges + ids)
    for block in _source_blocks(policy, grid, holder):
        if policy == "oec":  # every edge of the block; its sources are outside
            b0, b1 = int(bounds[block]), int(bounds[block + 1])
            dst = graph.edge_dst[int(graph.row_start[b0]) : int(graph.row_start[b1])]
            seen[dst[(dst >= lo) & (dst < hi)] - lo] = True
            continue
        src, dst, _ = _block_edges(graph, bounds, policy, grid, holder, block)
        for ids in (src, dst):
            seen[ids[(ids >= lo) & (ids < hi)] - lo] = True
    return np.flatnonzero(seen).astype(np.int64) + lo


# ------------------------------------------------------------------ partitions


@dataclass
class Partition:
    """One rank's part of a graph, in local ids (masters first, then mirrors).

    ``graph`` is a :class:`CSRGraph` over all ``num_local`` local nodes;
    ``global_edge_ids[e]`` is the position in the original CSR of local edge ``e``
    (so edge data maps over as ``data[global_edge_ids]``).  ``local_to_global``
    (int64) gives each local node's global id; masters are the global ids
    ``master_offset .. master_offset + num_masters - 1``.  ``mirrors_owned_by`` and
    ``masters_mirrored_on`` have one int64 array of local ids per rank (empty for
    this rank itself), see the module docstring.
    """

    rank: int
    num_ranks: int
    policy: Policy
    graph: CSRGraph
    local_to_global: np.ndarray
    num_masters: int
    master_offset: int
    global_edge_ids: np.ndarray
    mirrors_owned_by: list[np.ndarray]
    masters_mirrored_on: list[np.ndarray]
    fold_bounds: np.ndarray | None = None
    """With folded master blocks (:mod:`irgl_runner.partition_fold`): the
    fold's ``2P + 1`` block bounds in original ids. ``local_to_global`` and
    ``global_edge_ids`` are then original ids, ``master_offset`` and the
    mirrors' order partition ids."""

    @property
    def fold(self) -> FoldMap | None:
        """The fold of the master blocks, or None (contiguous blocks)."""
        return None if self.fold_bounds is None else FoldMap(self.fold_bounds)

    @property
    def num_local(self) -> int:
        """Masters plus mirrors."""
        return int(self.local_to_global.shape[0])

    @property
    def num_mirrors(self) -> int:
        """Local nodes whose master is on another rank."""
        return self.num_local - self.num_masters

    def mirror_owners(self) -> np.ndarray:
        """The master rank of each mirror (int64, ``num_mirrors`` entries)."""
        counts = [len(ids) for ids in self.mirrors_owned_by]
        return np.repeat(np.arange(self.num_ranks, dtype=np.int64), counts)

    def global_to_local(self, nodes: np.ndarray) -> np.ndarray:
        """Local ids of global ``nodes`` (:class:`KeyError` for one not local)."""
        local, present = self._locate(nodes)
        if not np.all(present):
            bad = int(np.asarray(nodes, dtype=np.int64)[~present][0])
            raise KeyError(f"node {bad} is not local to rank {self.rank}")
        return local

    def local_ids(self, nodes: np.ndarray) -> np.ndarray:
        """Local ids of global ``nodes``, -1 for those not local to the rank
        (and for -1, a hole in :func:`hot_groups`)."""
        local, present = self._locate(nodes)
        return np.where(present & (np.asarray(nodes) >= 0), local, -1)

    def _locate(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Local ids of global ``nodes`` (meaningless where not local) and
        whether each is local (a master or a mirror)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        mirrors = self.local_to_global[self.num_masters :]
        fold = self.fold
        if fold is not None:  # the masters and mirrors' order: partition ids
            nodes, mirrors = fold.to_part(nodes), fold.to_part(mirrors)
        rel = nodes - self.master_offset
        is_master = (rel >= 0) & (rel < self.num_masters)
        pos = np.searchsorted(mirrors, nodes)
        hit = np.zeros(nodes.shape, dtype=bool)
        if mirrors.shape[0]:
            hit = mirrors[np.minimum(pos, mirrors.shape[0] - 1)] == nodes
        return np.where(is_master, rel, self.num_masters + pos), is_master | hit

    def equals(self, other: Partition) -> bool:
        """Whether both partitions hold identical arrays (and metadata)."""
        a, b = self.graph, other.graph
        same_w = (a.weights is None) == (b.weights is None) and (
            a.weights is None or _same(a.weights, cast(np.ndarray, b.weights))
        )
        return (
            (self.rank, self.num_ranks, self.policy, self.num_masters)
            == (other.rank, other.num_ranks, other.policy, other.num_masters)
            and self.master_offset == other.master_offset
            and a.num_nodes == b.num_nodes
            and _same(a.row_start, b.row_start)
            and _same(a.edge_dst, b.edge_dst)
            and same_w
            and _same(self.local_to_global, other.local_to_global)
            and _same(self.global_edge_ids, other.global_edge_ids)
            and len(self.mirrors_owned_by) == len(other.mirrors_owned_by)
            and all(map(_same, self.mirrors_owned_by, other.mirrors_owned_by))
            and len(self.masters_mirrored_on) == len(other.masters_mirrored_on)
            and all(map(_same, self.masters_mirrored_on, other.masters_mirrored_on))
            and _same_fold(self.fold_bounds, other.fold_bounds)
        )


def _same_fold(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Both without a fold, or the same fold."""
    return (a is None and b is None) or (
        a is not None and b is not None and _same(a, b)
    )


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shape, dtype and values."""
    return a.dtype == b.dtype and np.array_equal(a, b)


@dataclass
class Partitioning:
    """All ``num_ranks`` partitions of a graph under one policy.

    ``bounds`` are the master blocks (:func:`master_bounds`); ``grid`` is the
    Cartesian grid (``(num_ranks, 1)`` under ``"oec"``).
    ``ranks_without_masters`` lists the ranks that own no node, which happens
    exactly when the graph has fewer nodes than ranks; such a partitioning is
    valid but cannot run a program (:meth:`check_every_rank_has_masters`).
    """

    policy: Policy
    num_ranks: int
    num_nodes: int
    num_edges: int
    bounds: np.ndarray
    grid: tuple[int, int]
    partitions: list[Partition]
    fold: FoldMap | None = None
    """Folded master blocks (:mod:`irgl_runner.partition_fold`); ``bounds``
    are then in partition ids."""

    @property
    def ranks_without_masters(self) -> tuple[int, ...]:
        """Ranks that own no node (non-empty only with fewer nodes than ranks)."""
        return tuple(int(r) for r in np.flatnonzero(np.diff(self.bounds) == 0))

    def check_every_rank_has_masters(self) -> None:
        """Raise :class:`ValueError` if some rank owns no node (for executors)."""
        check_every_rank_has_masters(self.num_nodes, self.num_ranks)

    def owner(self, nodes: np.ndarray | int) -> np.ndarray:
        """The master rank of each global node id."""
        return master_ranks(self.bounds, self.fold, np.asarray(nodes))

    @property
    def replication_factor(self) -> float:
        """Local nodes over all ranks per graph node (1.0: no mirrors)."""
        local = sum(p.num_local for p in self.partitions)
        return local / self.num_nodes if self.num_nodes else 1.0

    def __getitem__(self, rank: int) -> Partition:
        return self.partitions[rank]

    def __len__(self) -> int:
        return len(self.partitions)

    def equals(self, other: Partitioning) -> bool:
        """Whether both hold identical partitions."""
        return (
            (self.policy, self.num_ranks, self.num_nodes, self.num_edges, self.grid)
            == (
                other.policy,
                other.num_ranks,
                other.num_nodes,
                other.num_edges,
                other.grid,
            )
            and _same(self.bounds, other.bounds)
            and _same_fold(
                None if self.fold is None else self.fold.bounds,
                None if other.fold is None else other.fold.bounds,
            )
            and all(
                a.equals(b)
                for a, b in zip(self.partitions, other.partitions, strict=True)
            )
        )


# -------------------------------------------------------------------- building


@dataclass
class _Local:
    """A rank's local graph before the masters' communication lists."""

    graph: CSRGraph
    local_to_global: np.ndarray
    num_masters: int
    master_offset: int
    global_edge_ids: np.ndarray
    mirrors_owned_by: list[np.ndarray]


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays end to end (the one array itself, not a copy, if alone)."""
    if not arrays:
        return _EMPTY
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _build_local(
    graph: CSRGraph,
    bounds: np.ndarray,
    policy: Policy,
    grid: tuple[int, int],
    rank: int,
) -> _Local:
    """Rank ``rank``'s local graph, local ids and mirror lists."""
    p = bounds.shape[0] - 1
    lo, hi = int(bounds[rank]), int(bounds[rank + 1])
    parts = [
        _block_edges(graph, bounds, policy, grid, rank, b)
        for b in _source_blocks(policy, grid, rank)
    ]
    src, dst, eid = (_joined([part[k] for part in parts]) for k in range(3))
    del parts
    # Flags and a global -> local table over all node ids (O(edges + nodes),
    # no sort or binary search per edge): the mirrors are the flagged ids
    # outside the rank's block, in global order.
    n = graph.num_nodes
    flagged = np.zeros(n, dtype=bool)
    for ids in (src, dst):
        flagged[ids] = True
    flagged[lo:hi] = False
    mirrors = np.flatnonzero(flagged).astype(np.int64)
    del flagged
    num_masters = hi - lo
    num_local = num_masters + int(mirrors.shape[0])
    to_local = np.empty(n, dtype=np.int64)  # read only at local nodes' ids
    to_local[lo:hi] = np.arange(num_masters, dtype=np.int64)
    to_local[mirrors] = num_masters + np.arange(mirrors.shape[0], dtype=np.int64)
    lsrc = to_local[src]
    del src
    ldst = to_local[dst]
    del dst, to_local
    # the rows' lengths before the sort (the same after), then the order of
    # (source, destination): each temporary freed as soon as it is used
    row_start = np.zeros(num_local + 1, dtype=np.int64)
    np.cumsum(np.bincount(lsrc, minlength=num_local), out=row_start[1:])
    key = lsrc
    key *= max(num_local, 1)
    key += ldst
    order = np.argsort(key, kind="stable")
    del key, lsrc
    ldst = ldst[order]
    eid = eid[order]
    del order
    weights = None if graph.weights is None else graph.weights[eid]
    local_graph = CSRGraph(num_local, row_start, ldst, weights)
    l2g = np.concatenate([np.arange(lo, hi, dtype=np.int64), mirrors])
    # Mirrors are sorted by global id, so each owner's are one run of local ids.
    cuts = num_masters + np.searchsorted(mirrors, bounds)
    mirrors_owned_by = [
        np.arange(cuts[q], cuts[q + 1], dtype=np.int64) for q in range(p)
    ]
    return _Local(local_graph, l2g, num_masters, lo, eid, mirrors_owned_by)


def _finish(
    loc: _Local,
    rank: int,
    num_ranks: int,
    policy: Policy,
    masters_mirrored_on: list[np.ndarray],
) -> Partition:
    """A :class:`Partition` from its local part and its masters' lists."""
    return Partition(
        rank=rank,
        num_ranks=num_ranks,
        policy=policy,
        graph=loc.graph,
        local_to_global=loc.local_to_global,
        num_masters=loc.num_masters,
        master_offset=loc.master_offset,
        global_edge_ids=loc.global_edge_ids,
        mirrors_owned_by=loc.mirrors_owned_by,
        masters_mirrored_on=masters_mirrored_on,
    )


def _setup(
    graph: CSRGraph, policy: str, num_ranks: int, bounds: np.ndarray | None = None
) -> tuple[Policy, int, np.ndarray, tuple[int, int]]:
    """Checked policy, rank count, master blocks (``bounds``, else
    :func:`master_bounds`) and grid."""
    pol = _check_args(policy, num_ranks)
    p = int(num_ranks)
    grid = cvc_grid(p) if pol == "cvc" else (p, 1)
    return pol, p, master_bounds(graph, p) if bounds is None else bounds, grid


def _folded(
    graph: CSRGraph, policy: str, num_ranks: int
) -> tuple[FoldMap, CSRGraph, EdgeFold]:
    """The arguments checked, the fold of ``graph`` for ``num_ranks`` ranks
    and ``graph`` relabelled by it (:meth:`FoldMap.relabel`)."""
    _check_args(policy, num_ranks)
    folding = FoldMap.of(graph, int(num_ranks))
    return folding, *folding.relabel(graph)


def _unfold(part: Partition, fold: FoldMap, edges: EdgeFold) -> Partition:
    """A partition of the folded graph (:meth:`FoldMap.relabel`, its edges
    placed in the graph by ``edges``) naming its nodes and edges by their
    original ids."""
    return replace(
        part,
        local_to_global=fold.to_global(part.local_to_global),
        global_edge_ids=edges.to_global(part.global_edge_ids),
        fold_bounds=fold.bounds,
    )


def partition_graph(
    graph: CSRGraph, policy: str, num_ranks: int, fold: bool = False
) -> Partitioning:
    """Split ``graph`` into ``num_ranks`` partitions under ``policy`` (``"oec"``
    or ``"cvc"``), with folded master blocks where ``fold``
    (:mod:`irgl_runner.partition_fold`).  Raises :class:`ValueError` for an
    unknown policy or a rank count below 1; more ranks than nodes is allowed
    (see :attr:`Partitioning.ranks_without_masters`)."""
    if fold:
        folding, relabelled, edges = _folded(graph, policy, num_ranks)
        inner = _partition(relabelled, policy, num_ranks, folding.rank_bounds)
        parts = [_unfold(part, folding, edges) for part in inner.partitions]
        return replace(inner, partitions=parts, fold=folding)
    return _partition(graph, policy, num_ranks)


def _partition(
    graph: CSRGraph, policy: str, num_ranks: int, bounds: np.ndarray | None = None
) -> Partitioning:
    """:func:`partition_graph` without the fold, on master blocks ``bounds``
    (default: :func:`master_bounds`)."""
    pol, p, bounds, grid = _setup(graph, policy, num_ranks, bounds)
    locs = [_build_local(graph, bounds, pol, grid, r) for r in range(p)]
    parts = []
    for r, loc in enumerate(locs):
        lo = loc.master_offset
        # q's mirrors owned by r, as r's local master ids (global order either way).
        on = [
            _EMPTY.copy()
            if q == r
            else locs[q].local_to_global[locs[q].mirrors_owned_by[r]] - lo
            for q in range(p)
        ]
        parts.append(_finish(loc, r, p, pol, on))
    return Partitioning(pol, p, graph.num_nodes, graph.num_edges, bounds, grid, parts)


def build_partition(
    graph: CSRGraph, policy: str, num_ranks: int, rank: int, fold: bool = False
) -> Partition:
    """Only rank ``rank``'s partition (equal to ``partition_graph(...)[rank]``).

    Holds at most one owner block's edges beyond the rank's own at a time
    (with ``fold``, and a relabelled copy of the graph).
    """
    if fold:
        folding, relabelled, edges = _folded(graph, policy, num_ranks)
        return build_folded_partition(
            relabelled, folding, edges, policy, num_ranks, rank
        )
    return _build_one(graph, policy, num_ranks, rank)


def build_folded_partition(
    relabelled: CSRGraph,
    folding: FoldMap,
    edges: EdgeFold,
    policy: str,
    num_ranks: int,
    rank: int,
) -> Partition:
    """Rank ``rank``'s partition with folded master blocks, from the graph
    ``folding`` relabelled (:meth:`FoldMap.relabel`: ``relabelled`` and
    ``edges``), which several ranks' builds can share."""
    part = _build_one(relabelled, policy, num_ranks, rank, folding.rank_bounds)
    return _unfold(part, folding, edges)


def _build_one(
    graph: CSRGraph,
    policy: str,
    num_ranks: int,
    rank: int,
    bounds: np.ndarray | None = None,
) -> Partition:
    """:func:`build_partition` without the fold, on master blocks ``bounds``
    (default: :func:`master_bounds`)."""
    pol, p, bounds, grid = _setup(graph, policy, num_ranks, bounds)
    if not 0 <= rank < p:
        raise ValueError(f"rank {rank} out of range for {p} ranks (valid 0..{p - 1})")
    loc = _build_local(graph, bounds, pol, grid, rank)
    lo, hi = int(bounds[rank]), int(bounds[rank + 1])
    cols = grid[1]
    on = []
    for q in range(p):
        # Under CVC only ranks in this rank's grid row or column see its nodes.
        sees = q != rank and (
            pol == "oec" or q // cols == rank // cols or q % cols == rank % cols
        )
        found = _endpoints_in(graph, bounds, pol, grid, q, lo, hi) if sees else _EMPTY
        on.append(found - lo)
    return _finish(loc, rank, p, pol, on)


# ------------------------------------------------------------- gather, scatter


def gather(
    partitions: Partitioning | Sequence[Partition],
    per_rank_master_values: Sequence[np.ndarray],
) -> np.ndarray:
    """The global array of node values from each rank's master values.

    ``per_rank_master_values[r]`` has ``num_masters`` or ``num_local`` rows (the
    masters' come first); mirrors are ignored.
    """
    parts = list(
        partitions.partitions if isinstance(partitions, Partitioning) else partitions
    )
    if len(per_rank_master_values) != len(parts):
        raise ValueError(
            f"{len(per_rank_master_values)} value arrays for {len(parts)} ranks"
        )
    vals = [np.asarray(v) for v in per_rank_master_values]
    for part, v in zip(parts, vals, strict=True):
        if v.shape[0] not in (part.num_masters, part.num_local):
            raise ValueError(
                f"rank {part.rank}: {v.shape[0]} values, expected {part.num_masters} "
                f"(masters) or {part.num_local} (local nodes)"
            )
    num_nodes = sum(p.num_masters for p in parts)
    out = np.empty((num_nodes, *vals[0].shape[1:]), dtype=vals[0].dtype)
    for part, v in zip(parts, vals, strict=True):
        out[part.local_to_global[: part.num_masters]] = v[: part.num_masters]
    return out


def scatter(
    partitions: Partitioning | Sequence[Partition], global_values: np.ndarray
) -> list[np.ndarray]:
    """Each rank's local copy (masters and mirrors) of a global node array."""
    parts = (
        partitions.partitions if isinstance(partitions, Partitioning) else partitions
    )
    values = np.asarray(global_values)
    return [values[part.local_to_global] for part in parts]


# ----------------------------------------------------------------------- cache


def graph_key(graph: CSRGraph) -> str:
    """A content hash of ``graph`` (node count, offsets, destinations,
    weights), or its :attr:`~irgl_runner.graphs.CSRGraph.content_key` where it
    has one (hashing a graph of 2G edges takes each rank half a minute)."""
    if graph.content_key is not None:
        return graph.content_key
    h = hashlib.blake2b(digest_size=12)
    h.update(np.int64(graph.num_nodes).tobytes())
    for arr in (graph.row_start, graph.edge_dst):
        h.update(np.ascontiguousarray(arr, dtype="<i8").data)
    if graph.weights is not None:
        h.update(b"w")
        h.update(np.ascontiguousarray(graph.weights, dtype="<i4").data)
    return h.hexdigest()


def default_partition_cache_dir() -> Path:
    """``partitions/`` in the generated-graph cache (``$IRGL_GRAPH_CACHE`` or
    ``benchmarks/.cache``)."""
    from .graph_args import default_cache_dir

    return default_cache_dir() / "partitions"


def partition_cache_path(
    cache_dir: str | os.PathLike[str],
    key: str,
    policy: str,
    num_ranks: int,
    rank: int,
    fold: bool = False,
) -> Path:
    """Where rank ``rank``'s partition of the graph ``key`` is cached."""
    pol = _check_args(policy, num_ranks) + (".fold" if fold else "")
    return Path(cache_dir) / f"{key}.{pol}.p{int(num_ranks)}.r{int(rank)}.npz"


def _ragged(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated arrays and their offsets."""
    ptr = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=ptr[1:])
    flat = np.concatenate(arrays) if arrays else _EMPTY
    return flat.astype(np.int64, copy=False), ptr


def _unragged(flat: np.ndarray, ptr: np.ndarray) -> list[np.ndarray]:
    """The arrays :func:`_ragged` joined."""
    return [flat[ptr[i] : ptr[i + 1]] for i in range(ptr.shape[0] - 1)]


def save_partition(path: str | os.PathLike[str], part: Partition) -> None:
    """Write ``part`` as an ``.npz`` (atomically, through a file beside it)."""
    mirrors, mirrors_ptr = _ragged(part.mirrors_owned_by)
    masters, masters_ptr = _ragged(part.masters_mirrored_on)
    arrays: dict[str, Any] = {  # Any: np.savez's keywords are its array names
        "meta": np.array(
            [
                _CACHE_VERSION,
                part.rank,
                part.num_ranks,
                POLICIES.index(part.policy),
                part.num_masters,
                part.master_offset,
                part.graph.num_nodes,
            ],
            dtype=np.int64,
        ),
        "row_start": part.graph.row_start,
        # local ids: 4 bytes where they fit (a partition of a graph of
        # billions of edges is half as large on disk)
        "edge_dst": part.graph.edge_dst.astype(np.int32)
        if part.graph.num_nodes < 2**31
        else part.graph.edge_dst,
        "local_to_global": part.local_to_global,
        "global_edge_ids": part.global_edge_ids,
        "mirrors": mirrors,
        "mirrors_ptr": mirrors_ptr,
        "masters": masters,
        "masters_ptr": masters_ptr,
    }
    if part.graph.weights is not None:
        arrays["weights"] = part.graph.weights
    if part.fold_bounds is not None:
        arrays["fold_bounds"] = part.fold_bounds
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp.npz")
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, p)
    finally:
        if tmp.exists():
            tmp.unlink()


def load_partition(path: str | os.PathLike[str]) -> Partition:
    """Read a partition :func:`save_partition` wrote.  Raises :class:`ValueError`
    for a file of another cache version."""
    with np.load(path, allow_pickle=False) as z:
        meta = [int(x) for x in z["meta"]]
        if meta[0] != _CACHE_VERSION:
            raise ValueError(
                f"{path}: partition cache version {meta[0]}, expected {_CACHE_VERSION}"
            )
        _, rank, num_ranks, pol, num_masters, offset, num_local = meta
        weights = z["weights"] if "weights" in z.files else None
        dst = z["edge_dst"].astype(np.int64, copy=False)
        graph = CSRGraph(num_local, z["row_start"], dst, weights)
        return Partition(
            rank=rank,
            num_ranks=num_ranks,
            policy=POLICIES[pol],
            graph=graph,
            local_to_global=z["local_to_global"],
            num_masters=num_masters,
            master_offset=offset,
            global_edge_ids=z["global_edge_ids"],
            mirrors_owned_by=_unragged(z["mirrors"], z["mirrors_ptr"]),
            masters_mirrored_on=_unragged(z["masters"], z["masters_ptr"]),
            fold_bounds=z["fold_bounds"] if "fold_bounds" in z.files else None,
        )


def load_or_build_partition(
    graph: CSRGraph,
    policy: str,
    num_ranks: int,
    rank: int,
    cache_dir: str | os.PathLike[str] | None = None,
    key: str | None = None,
    fold: bool = False,
) -> Partition:
    """Rank ``rank``'s partition from the cache, or built (:func:`build_partition`)
    and cached.  ``cache_dir`` defaults to :func:`default_partition_cache_dir`;
    ``key`` to :func:`graph_key` (a caller's key must name the graph's content)."""
    path = partition_cache_path(
        cache_dir if cache_dir is not None else default_partition_cache_dir(),
        key if key is not None else graph_key(graph),
        policy,
        num_ranks,
        rank,
        fold,
    )
    want = (rank, num_ranks, policy, fold)
    if path.is_file():
        try:
            part = load_partition(path)
            folded = part.fold_bounds is not None
            if (part.rank, part.num_ranks, part.policy, folded) == want:
                return part
        except _CACHE_ERRORS:
            pass  # corrupt or stale: rebuild below
    part = build_partition(graph, policy, num_ranks, rank, fold)
    save_partition(path, part)
    return part


def load_or_build_partitioning(
    graph: CSRGraph,
    policy: str,
    num_ranks: int,
    cache_dir: str | os.PathLike[str] | None = None,
    key: str | None = None,
    fold: bool = False,
) -> Partitioning:
    """The whole :class:`Partitioning`, every rank through the cache (built with
    :func:`partition_graph` if any rank is missing)."""
    folding = FoldMap.of(graph, int(num_ranks)) if fold else None
    pol, p, bounds, grid = _setup(  # with a fold, the blocks in partition ids
        graph, policy, num_ranks, None if folding is None else folding.rank_bounds
    )
    root = cache_dir if cache_dir is not None else default_partition_cache_dir()
    k = key if key is not None else graph_key(graph)
    paths = [partition_cache_path(root, k, pol, p, r, fold) for r in range(p)]
    parts: list[Partition] = []
    try:
        parts = [load_partition(path) for path in paths]
    except _CACHE_ERRORS:
        parts = []
    if parts and all(
        (q.rank, q.num_ranks, q.policy, q.fold_bounds is not None) == (r, p, pol, fold)
        for r, q in enumerate(parts)
    ):
        return Partitioning(
            pol, p, graph.num_nodes, graph.num_edges, bounds, grid, parts, folding
        )
    whole = partition_graph(graph, pol, p, fold)
    for path, part in zip(paths, whole.partitions, strict=True):
        save_partition(path, part)
    return whole
