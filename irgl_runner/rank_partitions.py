"""Runs on several GPUs whose ranks read only their own partition
(``--rank-partitions``): the launcher builds every rank's partition into the
partition cache (:func:`prepare_rank_partitions`) and checks rank 0's
outputs (:func:`check_in_launcher`: the app's reference check, or its
linear-time validation above :data:`~irgl_runner.apps.REFERENCE_EDGES`
edges); a rank reads its partition file alone (:func:`rank_graph`) and
hands the app driver a :class:`RankGraph` in place of the global graph.
:mod:`irgl_runner.distributed` runs both sides.
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .apps import REFERENCE_EDGES, AppSpec, RunContext
from .errors import IrglError, UsageError
from .graphs import CSRGraph
from .partition import (
    Partition,
    build_folded_partition,
    build_partition,
    default_partition_cache_dir,
    graph_key,
    load_partition,
    master_bounds,
    partition_cache_path,
    save_partition,
)
from .partition_fold import EdgeFold, FoldMap

__all__ = [
    "RankGraph",
    "check_in_launcher",
    "prepare_rank_partitions",
    "rank_graph",
    "save_outputs",
]


@dataclass
class RankGraph:
    """What a rank knows of the global graph when it loads only its own
    partition (the launcher's ``--rank-partitions``): its sizes, the master
    blocks and the partition. It stands in for the graph in
    :func:`irgl_runner.apps.execute`, which (for the distributable apps)
    reads only its sizes (and the largest degree: :meth:`max_degree`) and,
    to check the weights, the rank's own edges' weights; the launcher, which
    holds the graph, runs the app's check."""

    num_nodes: int
    num_edges: int
    bounds: np.ndarray
    part: Partition
    largest_degree: int = 0

    def max_degree(self) -> int:
        """The global graph's largest out-degree (from the launcher)."""
        return self.largest_degree

    @property
    def weights(self) -> np.ndarray | None:
        return self.part.graph.weights

    def weights_or_ones(self) -> np.ndarray:
        return self.part.graph.weights_or_ones()


def rank_graph(shared: dict[str, Any], policy: str, rank: int, world: int) -> RankGraph:
    """This rank's :class:`RankGraph` from the launcher's plan (its
    partition file, read alone)."""
    if len(shared["files"]) != world:
        raise UsageError(
            f"rank {rank}: the plan has {len(shared['files'])} partitions "
            f"for {world} ranks"
        )
    path = Path(shared["files"][rank])
    try:
        part = load_partition(path)
    except (OSError, ValueError, KeyError) as e:
        raise IrglError(f"rank {rank}: cannot read its partition {path}: {e}") from None
    if (part.rank, part.num_ranks, part.policy) != (rank, world, policy):
        raise IrglError(
            f"rank {rank}: {path} holds rank {part.rank} of {part.num_ranks} "
            f"({part.policy}), not rank {rank} of {world} ({policy})"
        )
    bounds = np.asarray(shared["bounds"], dtype=np.int64)
    return RankGraph(
        int(shared["num_nodes"]),
        int(shared["num_edges"]),
        bounds,
        part,
        int(shared.get("max_degree", 0)),
    )


def save_outputs(path: Path, outputs: dict[str, np.ndarray]) -> None:
    """The read-back outputs as one ``.npz`` (atomically)."""
    tmp = path.with_name(f".{path.name}.tmp.npz")
    arrays: dict[str, Any] = {k: np.asarray(v) for k, v in outputs.items()}
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


#: The graph the processes of prepare_rank_partitions partition (inherited
#: through fork, not copied); with folded master blocks, relabelled once,
#: with its fold.
_PREPARED: CSRGraph | None = None
_FOLDED: tuple[FoldMap, EdgeFold] | None = None


def _build_and_save(job: tuple[str, int, int, str]) -> None:
    policy, ranks, rank, path = job
    assert _PREPARED is not None
    if _FOLDED is not None:
        folding, edges = _FOLDED
        part = build_folded_partition(_PREPARED, folding, edges, policy, ranks, rank)
    else:
        part = build_partition(_PREPARED, policy, ranks, rank)
    save_partition(path, part)


#: A partition's build peaks at about this many times its share of the
#: graph's arrays, by policy (the numpy allocations of rank 1 of 4 on
#: rmat:21, tracemalloc: 2.7 under oec, 5.3 under cvc; with a margin for
#: what the allocator keeps).
BUILD_PEAK_FACTOR = {"oec": 4, "cvc": 7}


#: Where Linux says how much memory can be had without swapping.
MEMINFO = Path("/proc/meminfo")


def available_memory() -> int | None:
    """Bytes of host memory available now: /proc/meminfo's MemAvailable
    (free memory plus the page cache that can be dropped: a graph file just
    written or read sits there), else the free pages; None if unknown."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _fits(graph: CSRGraph, policy: str, ranks: int) -> int:
    """How many partitions can be built at once in the memory available
    now (at least 1)."""
    share = sum(
        a.nbytes
        for a in (graph.row_start, graph.edge_dst, graph.weights)
        if a is not None
    ) // max(ranks, 1)
    free = available_memory()
    if free is None:
        return 1
    factor = BUILD_PEAK_FACTOR.get(policy, max(BUILD_PEAK_FACTOR.values()))
    return max(1, free // max(factor * share, 1))


def prepare_rank_partitions(
    graph: CSRGraph,
    policy: str,
    ranks: int,
    cache_dir: Path | None = None,
    fold: bool = False,
) -> dict[str, Any]:
    """Every rank's partition in the partition cache, the missing ones built
    in parallel (forked processes that share the graph: each holds one
    partition; as many at once as the available memory holds), and what a rank
    needs besides its file: the graph's sizes and master blocks (with
    ``fold``, folded master blocks: the graph relabelled once, here, and the
    blocks in partition ids)."""
    global _PREPARED, _FOLDED
    root = cache_dir if cache_dir is not None else default_partition_cache_dir()
    key = graph_key(graph)
    files = [
        str(partition_cache_path(root, key, policy, ranks, r, fold))
        for r in range(ranks)
    ]
    jobs = [(policy, ranks, r, f) for r, f in enumerate(files) if not Path(f).is_file()]
    folding = FoldMap.of(graph, ranks) if fold else None
    bounds = master_bounds(graph, ranks) if folding is None else folding.rank_bounds
    _PREPARED = graph
    if folding is not None and jobs:
        relabelled, edges = folding.relabel(graph)
        _PREPARED, _FOLDED = relabelled, (folding, edges)
    try:
        workers = min(len(jobs), os.cpu_count() or 1, _fits(graph, policy, ranks))
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                pool.map(_build_and_save, jobs)
        else:
            for job in jobs:
                _build_and_save(job)
    finally:
        _PREPARED = _FOLDED = None
    return {
        "num_nodes": graph.num_nodes,
        "num_edges": graph.num_edges,
        "max_degree": graph.max_degree(),
        "bounds": [int(b) for b in bounds],
        "files": files,
    }


def check_in_launcher(
    app: AppSpec,
    graph: CSRGraph,
    source: int,
    record: dict[str, Any],
    outputs: dict[str, np.ndarray],
    no_check: bool,
) -> str | None:
    """The app's check of a run on rank partitions (rank 0's outputs), in
    the launcher: its reference ``check``, or above
    :data:`~irgl_runner.apps.REFERENCE_EDGES` edges its ``validate``
    (linear in the edges); sets the record's ``check`` and ``checked_by``
    (and ``problem``)."""
    large = graph.num_edges > REFERENCE_EDGES and app.validate is not None
    fn = app.validate if large else app.check
    if no_check or fn is None:
        record["check"] = "skipped"
        return None
    ctx = RunContext(app, graph, source)
    ctx.outputs = outputs
    ctx.result = record.get("result")
    problem = fn(ctx)
    record["checked_by"] = "validation" if large else "reference"
    record["check"] = "passed" if problem is None else "failed"
    if problem is not None:
        record["problem"] = problem
    return problem
