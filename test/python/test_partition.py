"""Partitioning for several ranks (irgl_runner/partition.py): every policy and
1..8 ranks on odd graphs; the union of the partitions is the graph."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from irgl_runner.errors import UsageError
from irgl_runner.generators import rmat, star
from irgl_runner.graphs import CSRGraph
from irgl_runner.partition import (
    POLICIES,
    Partition,
    Partitioning,
    build_partition,
    check_every_rank_has_masters,
    cvc_grid,
    gather,
    graph_key,
    hot_count,
    hot_groups,
    hot_min_active,
    hot_nodes,
    load_or_build_partition,
    load_or_build_partitioning,
    load_partition,
    master_bounds,
    partition_cache_path,
    partition_graph,
    save_partition,
    scatter,
)

RANKS = range(1, 9)


def from_edges(
    n: int, src: list[int], dst: list[int], weights: list[int] | None = None
) -> CSRGraph:
    """A CSR graph of exactly these edges (no cleaning: loops, duplicates stay)."""
    s = np.asarray(src, dtype=np.int64)
    order = np.argsort(s, kind="stable")
    row_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(s, minlength=n), out=row_start[1:])
    w = None if weights is None else np.asarray(weights, dtype=np.int32)[order]
    return CSRGraph(n, row_start, np.asarray(dst, dtype=np.int64)[order], w)


def csr(g: object) -> CSRGraph:
    """A generator's cleaned graph, typed."""
    assert isinstance(g, CSRGraph)
    return g


def _graphs() -> dict[str, CSRGraph]:
    rng = np.random.default_rng(7)
    isolated_src = [1, 1, 4, 9, 9, 15]
    isolated_dst = [4, 9, 1, 15, 4, 1]
    loop_src = [0, 0, 0, 2, 2, 3, 3, 3, 5]
    loop_dst = [0, 1, 1, 2, 3, 3, 0, 5, 5]  # self loops and a duplicate 0 -> 1
    hub_out = np.arange(1, 40)
    return {
        "rmat": csr(rmat(7, 8, seed=3)),
        "isolated": from_edges(20, isolated_src, isolated_dst),  # unweighted
        "self_loops": from_edges(
            6, loop_src, loop_dst, rng.integers(1, 9, len(loop_src)).tolist()
        ),
        "star": csr(star(33, seed=2)),
        "directed_hub": from_edges(
            40, [0] * 39 + [5, 7], hub_out.tolist() + [6, 7], list(range(41))
        ),
        "few_active": from_edges(12, [5, 9], [9, 5], [3, 4]),  # 2 non-isolated
        "no_edges": from_edges(5, [], [], []),
        "tiny": from_edges(3, [0, 1, 2], [1, 2, 0], [1, 2, 3]),  # 3 < P
        "empty": from_edges(0, [], []),
    }


GRAPHS = _graphs()
ODD = [k for k in GRAPHS if k != "rmat"]


def edge_table(g: CSRGraph) -> np.ndarray:
    """(src, dst, weight) rows of every edge, sorted (the edge multiset)."""
    t = np.column_stack([g.edge_src(), g.edge_dst, g.weights_or_ones()])
    return t[np.lexsort(t.T[::-1])] if len(t) else t


def global_edges(part: Partition) -> np.ndarray:
    """A partition's edges as (global src, global dst, weight) rows."""
    lg = part.graph
    l2g = part.local_to_global
    return np.column_stack([l2g[lg.edge_src()], l2g[lg.edge_dst], lg.weights_or_ones()])


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(GRAPHS))
def test_union_of_partitions_is_the_graph(name: str, policy: str) -> None:
    g = GRAPHS[name]
    for p in RANKS:
        pt = partition_graph(g, policy, p)
        assert (pt.num_ranks, len(pt), pt.policy) == (p, p, policy)
        ids = np.concatenate([q.global_edge_ids for q in pt.partitions])
        # Each edge exactly once ...
        assert np.array_equal(np.sort(ids), np.arange(g.num_edges))
        union = np.concatenate([global_edges(q) for q in pt.partitions])
        union = union[np.lexsort(union.T[::-1])] if len(union) else union
        # ... and the multiset of (src, dst, weight) is the graph's.
        assert np.array_equal(union.reshape(-1, 3), edge_table(g).reshape(-1, 3))
        for q in pt.partitions:
            lg = q.graph
            lg.validate()
            assert lg.row_start.dtype == np.int64 and lg.edge_dst.dtype == np.int64
            assert (lg.weights is None) == (g.weights is None)
            if lg.weights is not None:
                assert lg.weights.dtype == np.int32
            # Every local edge is the global edge it claims to be.
            e = q.global_edge_ids
            assert np.array_equal(global_edges(q)[:, 0], g.edge_src()[e])
            assert np.array_equal(global_edges(q)[:, 1], g.edge_dst[e])
            # Rows sorted by local destination.
            same_row = np.diff(lg.edge_src()) == 0
            assert np.all(np.diff(lg.edge_dst)[same_row] >= 0)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(GRAPHS))
def test_masters_and_mirrors(name: str, policy: str) -> None:
    g = GRAPHS[name]
    for p in RANKS:
        pt = partition_graph(g, policy, p)
        masters = np.concatenate(
            [q.local_to_global[: q.num_masters] for q in pt.partitions]
        )
        # Every node has exactly one master, on the rank owner() names.
        assert np.array_equal(np.sort(masters), np.arange(g.num_nodes))
        for q in pt.partitions:
            l2g = q.local_to_global
            assert len(np.unique(l2g)) == q.num_local
            assert q.master_offset == pt.bounds[q.rank]
            assert np.all(pt.owner(l2g[: q.num_masters]) == q.rank)
            mirrors = l2g[q.num_masters :]
            assert np.all(np.diff(mirrors) > 0)
            assert np.all(pt.owner(mirrors) != q.rank)
            assert np.array_equal(pt.owner(mirrors), q.mirror_owners())
            # A mirror is there only because a local edge touches it.
            touched = np.union1d(q.graph.edge_src(), q.graph.edge_dst)
            assert np.all(np.isin(np.arange(q.num_masters, q.num_local), touched))
            assert np.array_equal(q.global_to_local(l2g), np.arange(q.num_local))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(GRAPHS))
def test_exchange_lists_match(name: str, policy: str) -> None:
    g = GRAPHS[name]
    for p in RANKS:
        pt = partition_graph(g, policy, p)
        for r in pt.partitions:
            assert len(r.mirrors_owned_by) == len(r.masters_mirrored_on) == p
            assert len(r.mirrors_owned_by[r.rank]) == 0
            assert len(r.masters_mirrored_on[r.rank]) == 0
            listed = np.concatenate(r.mirrors_owned_by)
            assert np.array_equal(listed, np.arange(r.num_masters, r.num_local))
            for q in pt.partitions:
                mine = r.mirrors_owned_by[q.rank]
                theirs = q.masters_mirrored_on[r.rank]
                assert np.all(np.diff(mine) > 0) and np.all(np.diff(theirs) > 0)
                assert np.all(theirs < q.num_masters)
                assert np.array_equal(
                    r.local_to_global[mine], q.local_to_global[theirs]
                )


@pytest.mark.parametrize("name", list(GRAPHS))
def test_edges_live_where_the_policy_says(name: str) -> None:
    g = GRAPHS[name]
    deg = g.degrees()
    for p in RANKS:
        oec = partition_graph(g, "oec", p)
        for q in oec.partitions:
            # Outgoing edge-cut: a master keeps all its out-edges, mirrors none.
            local_deg = q.graph.degrees()
            assert np.array_equal(
                local_deg[: q.num_masters], deg[q.local_to_global[: q.num_masters]]
            )
            assert not np.any(local_deg[q.num_masters :])
        cvc = partition_graph(g, "cvc", p)
        rows, cols = cvc.grid
        src_owner = cvc.owner(g.edge_src())
        dst_owner = cvc.owner(g.edge_dst)
        expected = (src_owner // cols) * cols + dst_owner % cols
        holder = np.empty(g.num_edges, dtype=np.int64)
        for q in cvc.partitions:
            holder[q.global_edge_ids] = q.rank
        assert np.array_equal(holder, expected)
        assert np.array_equal(cvc.bounds, oec.bounds)


def test_cvc_grid_is_as_square_as_possible() -> None:
    for p in range(1, 65):
        rows, cols = cvc_grid(p)
        assert rows * cols == p and cols <= rows
        better = [c for c in range(cols + 1, math.isqrt(p) + 1) if p % c == 0]
        assert not better


@pytest.mark.parametrize("name", ["rmat", "star", "directed_hub", "self_loops"])
def test_blocks_are_balanced(name: str) -> None:
    g = GRAPHS[name]
    w = g.degrees() + 1
    prefix = np.concatenate([[0], np.cumsum(w)])
    for p in RANKS:
        b = master_bounds(g, p)
        assert b[0] == 0 and b[-1] == g.num_nodes
        # Every rank has a master when there are enough nodes.
        assert np.all(np.diff(b) >= 1) or g.num_nodes < p
        cost = np.diff(prefix[b])
        assert cost.max() <= -(-prefix[-1] // p) + 2 * w.max()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(GRAPHS))
def test_deterministic_and_single_rank_build(name: str, policy: str) -> None:
    g = GRAPHS[name]
    for p in RANKS:
        whole = partition_graph(g, policy, p)
        assert whole.equals(partition_graph(g, policy, p))
        for r in range(p):
            assert build_partition(g, policy, p, r).equals(whole[r])


def test_equals_notices_a_difference() -> None:
    whole = partition_graph(GRAPHS["rmat"], "cvc", 4)
    other = partition_graph(GRAPHS["rmat"], "cvc", 4)
    assert len(other[0].masters_mirrored_on[1]) > 0
    other[0].masters_mirrored_on[1] = other[0].masters_mirrored_on[1][:-1]
    assert not whole.equals(other)
    assert not whole[0].equals(whole[1])


def test_gather_scatter_and_an_exchange_round() -> None:
    """In-degrees by local counting, reduce (mirrors into masters) and
    broadcast (masters to mirrors) through the exchange lists."""
    g = GRAPHS["rmat"]
    in_deg = np.bincount(g.edge_dst, minlength=g.num_nodes)
    for policy in POLICIES:
        for p in RANKS:
            pt = partition_graph(g, policy, p)
            ids = np.arange(g.num_nodes) * 3
            local = scatter(pt, ids)
            for q, v in zip(pt.partitions, local, strict=True):
                assert np.array_equal(v, ids[q.local_to_global])
            assert np.array_equal(gather(pt, local), ids)
            counts = [
                np.bincount(q.graph.edge_dst, minlength=q.num_local)
                for q in pt.partitions
            ]
            for r in pt.partitions:  # reduce
                for q in pt.partitions:
                    mine = q.masters_mirrored_on[r.rank]
                    counts[q.rank][mine] += counts[r.rank][r.mirrors_owned_by[q.rank]]
            assert np.array_equal(gather(pt, counts), in_deg)
            for q in pt.partitions:  # broadcast
                for r in pt.partitions:
                    src = q.masters_mirrored_on[r.rank]
                    counts[r.rank][r.mirrors_owned_by[q.rank]] = counts[q.rank][src]
            for q, c in zip(pt.partitions, counts, strict=True):
                assert np.array_equal(c, in_deg[q.local_to_global])


def test_bad_arguments() -> None:
    g = GRAPHS["rmat"]
    for p in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="rank count"):
            partition_graph(g, "oec", p)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown partitioning policy 'hvc'"):
        partition_graph(g, "hvc", 2)
    with pytest.raises(ValueError, match="rank 4 out of range"):
        build_partition(g, "cvc", 4, 4)
    with pytest.raises(KeyError):
        partition_graph(GRAPHS["few_active"], "oec", 4)[0].global_to_local(
            np.array([11])
        )


def test_more_ranks_than_nodes() -> None:
    for name in ("tiny", "empty", "few_active", "no_edges"):
        g = GRAPHS[name]
        for p in RANKS:
            pt = partition_graph(g, "cvc", p)
            without = tuple(range(g.num_nodes, p)) if g.num_nodes < p else ()
            assert pt.ranks_without_masters == without
            assert all(pt[r].num_masters == 0 for r in without)
            if without:
                with pytest.raises(ValueError, match="fewer than"):
                    pt.check_every_rank_has_masters()
            else:
                pt.check_every_rank_has_masters()
    # A hub's heavy block still leaves a master for every rank.
    assert partition_graph(csr(star(9)), "oec", 8).ranks_without_masters == ()
    check_every_rank_has_masters(8, 8)
    with pytest.raises(ValueError, match="3 nodes, fewer than the 4 ranks"):
        check_every_rank_has_masters(3, 4)


def _same_dtypes(a: Partitioning, b: Partitioning) -> bool:
    return all(
        x.graph.edge_dst.dtype == y.graph.edge_dst.dtype
        and x.local_to_global.dtype == y.local_to_global.dtype
        and all(
            m.dtype == n.dtype
            for m, n in zip(x.mirrors_owned_by, y.mirrors_owned_by, strict=True)
        )
        for x, y in zip(a.partitions, b.partitions, strict=True)
    )


@pytest.mark.parametrize("name", ["rmat", "isolated", "empty"])
def test_cache_round_trip(tmp_path: Path, name: str) -> None:
    g = GRAPHS[name]
    for policy in POLICIES:
        built = load_or_build_partitioning(g, policy, 4, cache_dir=tmp_path)
        key = graph_key(g)
        paths = [partition_cache_path(tmp_path, key, policy, 4, r) for r in range(4)]
        assert all(p.is_file() for p in paths)
        loaded = load_or_build_partitioning(g, policy, 4, cache_dir=tmp_path)
        assert loaded.equals(built) and _same_dtypes(loaded, built)
        assert loaded.equals(partition_graph(g, policy, 4))
        one = load_or_build_partition(g, policy, 4, 2, cache_dir=tmp_path)
        assert one.equals(built[2])
    # Policies and rank counts do not share files; keys follow the content.
    assert len(list(tmp_path.glob("*.npz"))) == 8
    assert graph_key(g) == graph_key(GRAPHS[name])
    assert graph_key(g) != graph_key(GRAPHS["star"])


def test_cache_rebuilds_a_corrupt_file(tmp_path: Path) -> None:
    g = GRAPHS["star"]
    path = partition_cache_path(tmp_path, graph_key(g), "oec", 3, 1)
    path.write_bytes(b"not a zip file")
    part = load_or_build_partition(g, "oec", 3, 1, cache_dir=tmp_path)
    assert part.equals(build_partition(g, "oec", 3, 1))
    assert load_partition(path).equals(part)
    # A file holding another rank's partition is not taken for this one.
    save_partition(path, build_partition(g, "oec", 3, 0))
    assert load_or_build_partition(g, "oec", 3, 1, cache_dir=tmp_path).rank == 1


def test_weights_change_the_key() -> None:
    g = GRAPHS["rmat"]
    unweighted = CSRGraph(g.num_nodes, g.row_start, g.edge_dst, None)
    assert graph_key(g) != graph_key(unweighted)


def test_a_graph_read_from_a_file_is_keyed_by_the_file(tmp_path: Path) -> None:
    """resolve_graph names a graph by the file it read (no hash of its
    arrays); the options and a rewritten file give other keys."""
    import os

    from irgl_runner.graph_args import resolve_graph

    cache = tmp_path / "cache"
    g, _ = resolve_graph("rmat:6", True, True, cache)
    again, _ = resolve_graph("rmat:6", True, True, cache)
    unweighted, _ = resolve_graph("rmat:6", True, False, cache)
    assert g.content_key is not None and graph_key(g) == g.content_key
    assert graph_key(again) == graph_key(g)
    assert graph_key(unweighted) != graph_key(g)
    # a rewritten cache file is another graph for the partition cache
    path = next(cache.glob("*.gr"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert graph_key(resolve_graph("rmat:6", True, True, cache)[0]) != graph_key(g)
    # without a key the content is hashed
    plain = CSRGraph(g.num_nodes, g.row_start, g.edge_dst, g.weights)
    assert plain.content_key is None and graph_key(plain) != g.content_key


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(GRAPHS))
def test_folded_master_blocks(name: str, policy: str, tmp_path: Path) -> None:
    """Folded master blocks (irgl_runner/partition_fold.py): the same
    guarantees, nodes and edges by their original ids; each rank masters
    blocks r and 2P-1-r of 2P; one rank's build and the cache agree."""
    g = GRAPHS[name]
    for p in RANKS:
        pt = partition_graph(g, policy, p, fold=True)
        assert pt.fold is not None and pt.fold.bounds.shape == (2 * p + 1,)
        ids = np.concatenate([q.global_edge_ids for q in pt.partitions])
        assert np.array_equal(np.sort(ids), np.arange(g.num_edges))
        union = np.concatenate([global_edges(q) for q in pt.partitions])
        union = union[np.lexsort(union.T[::-1])] if len(union) else union
        assert np.array_equal(union.reshape(-1, 3), edge_table(g).reshape(-1, 3))
        masters = np.concatenate(
            [q.local_to_global[: q.num_masters] for q in pt.partitions]
        )
        assert np.array_equal(np.sort(masters), np.arange(g.num_nodes))
        blocks = pt.fold.bounds
        for q in pt.partitions:
            e = q.global_edge_ids
            assert np.array_equal(global_edges(q)[:, 0], g.edge_src()[e])
            assert np.array_equal(global_edges(q)[:, 1], g.edge_dst[e])
            l2g = q.local_to_global
            assert np.all(pt.owner(l2g[: q.num_masters]) == q.rank)
            assert np.all(pt.owner(l2g[q.num_masters :]) != q.rank)
            assert np.array_equal(q.global_to_local(l2g), np.arange(q.num_local))
            own = np.concatenate(
                [
                    np.arange(blocks[b], blocks[b + 1])
                    for b in (q.rank, 2 * p - 1 - q.rank)
                ]
            )
            assert np.array_equal(np.sort(l2g[: q.num_masters]), own)
            for other in pt.partitions:
                mine = q.mirrors_owned_by[other.rank]
                theirs = other.masters_mirrored_on[q.rank]
                assert np.array_equal(l2g[mine], other.local_to_global[theirs])
            assert build_partition(g, policy, p, q.rank, fold=True).equals(q)
        x = np.arange(g.num_nodes) * 7 % 11
        assert np.array_equal(gather(pt, scatter(pt, x)), x)
        cached = load_or_build_partitioning(g, policy, p, cache_dir=tmp_path, fold=True)
        again = load_or_build_partitioning(g, policy, p, cache_dir=tmp_path, fold=True)
        assert cached.equals(pt) and again.equals(pt)
        plain = load_or_build_partitioning(g, policy, p, cache_dir=tmp_path)
        assert plain.fold is None and plain.equals(partition_graph(g, policy, p))


@pytest.mark.parametrize("name", list(GRAPHS))
def test_hot_nodes_are_the_highest_degrees(name: str) -> None:
    """hot_nodes: the count largest out-degrees, ties to the lower ids, in id
    order, for every count from none to all (a brute-force sort decides)."""
    g = GRAPHS[name]
    degree = np.diff(np.asarray(g.row_start, dtype=np.int64))
    ranked = sorted(range(g.num_nodes), key=lambda v: (-int(degree[v]), v))
    for count in sorted({0, 1, 2, 3, g.num_nodes // 4, g.num_nodes, g.num_nodes + 5}):
        hot = hot_nodes(g, count)
        assert hot.dtype == np.int64
        assert hot.tolist() == sorted(ranked[: min(count, g.num_nodes)])


def test_hot_nodes_with_many_ties() -> None:
    """On a star every leaf has degree 1: after the hub, the lowest leaves."""
    g = GRAPHS["star"]
    hub = int(np.argmax(np.diff(g.row_start)))
    leaves = [v for v in range(g.num_nodes) if v != hub]
    assert hot_nodes(g, 4).tolist() == sorted([hub, *leaves[:3]])


@pytest.mark.parametrize("policy", POLICIES)
def test_local_ids_name_every_copy(policy: str) -> None:
    """local_ids: a node's local id on every rank that holds a copy (master
    or mirror), -1 on the others; global_to_local refuses the latter."""
    g = GRAPHS["rmat"]
    nodes = np.arange(g.num_nodes, dtype=np.int64)
    for part in partition_graph(g, policy, 3).partitions:
        local = part.local_ids(nodes)
        held = local >= 0
        assert np.array_equal(part.local_to_global[local[held]], nodes[held])
        assert int(held.sum()) == part.num_local
        if not held.all():
            with pytest.raises(KeyError, match="not local to rank"):
                part.global_to_local(nodes[~held][:1])


def test_hot_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """A quarter of the nodes on several ranks under oec; none on one rank or
    under cvc (no reduce-only exchange there); IRGL_DIST_HOT overrides."""
    monkeypatch.delenv("IRGL_DIST_HOT", raising=False)
    assert hot_count(1000, 4, "oec") == 250
    assert hot_count(1000, 1, "oec") == 0
    assert hot_count(1000, 2, "cvc") == 0
    monkeypatch.setenv("IRGL_DIST_HOT", "0")
    assert hot_count(1000, 4, "oec") == 0
    monkeypatch.setenv("IRGL_DIST_HOT", "5000")
    assert hot_count(1000, 4, "oec") == 1000
    for bad in ("many", "-3"):
        monkeypatch.setenv("IRGL_DIST_HOT", bad)
        with pytest.raises(UsageError, match="IRGL_DIST_HOT"):
            hot_count(1000, 4, "oec")


@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("ranks", [2, 3, 5])
def test_hot_groups_put_each_node_in_its_masters_group(fold: bool, ranks: int) -> None:
    """hot_groups: equal groups, group r exactly rank r's hot masters in id
    order then -1; on each rank, its own group's local ids are masters and
    the others' mirrors or -1 (what irgl_dist_hot checks)."""
    g = GRAPHS["rmat"]
    parting = partition_graph(g, "oec", ranks, fold=fold)
    hot = hot_nodes(g, g.num_nodes // 3)
    groups = hot_groups(hot, parting.owner(hot), ranks)
    size = groups.shape[0] // ranks
    assert groups.shape[0] == ranks * size
    assert sorted(groups[groups >= 0].tolist()) == hot.tolist()
    for r, part in enumerate(parting.partitions):
        group = groups[r * size : (r + 1) * size]
        real = group[group >= 0]
        assert real.tolist() == sorted(v for v in hot.tolist() if parting.owner(v) == r)
        assert (group[real.shape[0] :] == -1).all()
        local = part.local_ids(groups).reshape(ranks, size)
        mine = local[r]
        assert ((mine >= 0) == (group >= 0)).all() and (mine < part.num_masters).all()
        others = np.delete(local, r, axis=0)
        assert ((others == -1) | (others >= part.num_masters)).all()
    assert hot_groups(hot[:0], parting.owner(hot[:0]), ranks).shape == (0,)


def test_hot_min_active(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sixteenth of the hot nodes, rounded up, at least one;
    IRGL_DIST_HOT_ROUND overrides the divisor."""
    monkeypatch.delenv("IRGL_DIST_HOT_ROUND", raising=False)
    assert [hot_min_active(c) for c in (0, 1, 16, 17, 1600)] == [1, 1, 1, 2, 100]
    monkeypatch.setenv("IRGL_DIST_HOT_ROUND", "64")
    assert hot_min_active(1600) == 25
    for bad in ("often", "0", "-2"):
        monkeypatch.setenv("IRGL_DIST_HOT_ROUND", bad)
        with pytest.raises(UsageError, match="IRGL_DIST_HOT_ROUND"):
            hot_min_active(1600)
