"""CPU references against hand-computed answers and independent methods."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from irgl_runner.generators import rmat, uniform_random
from irgl_runner.graphs import COOGraph, CSRGraph, clean
from irgl_runner.reference import (
    INF,
    bfs_levels,
    cc_labels,
    cc_min_labels,
    compare_close,
    compare_exact,
    is_mis,
    mis_problem,
    mst_weight,
    pagerank,
    same_partition,
    sssp_distances,
    triangle_count,
)


def graph(
    n: int, edges: list[tuple[int, int] | tuple[int, int, int]], symmetrize: bool = True
) -> CSRGraph:
    """Build a cleaned graph from an edge list (weights optional)."""
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges]) if edges and len(edges[0]) == 3 else None  # type: ignore[misc]
    return clean(COOGraph(n, src, dst, w), symmetrize=symmetrize)


def test_bfs_by_hand() -> None:
    # 0-1-2-3 path, 1-4, 4-3 shortcut; 5-6 separate; 7 isolated
    g = graph(8, [(0, 1), (1, 2), (2, 3), (1, 4), (4, 3), (5, 6)])
    assert bfs_levels(g, 0).tolist() == [0, 1, 2, 3, 2, INF, INF, INF]
    assert bfs_levels(g, 3).tolist() == [3, 2, 1, 0, 1, INF, INF, INF]
    assert bfs_levels(g, 6).tolist() == [INF, INF, INF, INF, INF, 1, 0, INF]
    assert bfs_levels(g, 0).dtype == np.int32


def test_bfs_directed_follows_out_edges() -> None:
    g = graph(3, [(0, 1), (2, 1)], symmetrize=False)
    assert bfs_levels(g, 0).tolist() == [0, 1, INF]
    assert bfs_levels(g, 1).tolist() == [INF, 0, INF]
    with pytest.raises(ValueError, match="out of range"):
        bfs_levels(g, 3)


def test_sssp_by_hand() -> None:
    # direct 0-3 costs 10; 0-1-2-3 costs 2+3+1 = 6; 2-4 costs 7; 5 unreachable
    g = graph(6, [(0, 3, 10), (0, 1, 2), (1, 2, 3), (2, 3, 1), (2, 4, 7), (3, 4, 9)])
    assert sssp_distances(g, 0).tolist() == [0, 2, 5, 6, 12, INF]
    assert sssp_distances(g, 4).tolist() == [12, 10, 7, 8, 0, INF]


def test_sssp_unweighted_equals_bfs() -> None:
    g = uniform_random(200, 300, seed=2)
    assert isinstance(g, CSRGraph)
    g.weights = None
    np.testing.assert_array_equal(sssp_distances(g, 5), bfs_levels(g, 5))


def test_sssp_matches_bellman_ford() -> None:
    g = uniform_random(60, 150, seed=11)
    assert isinstance(g, CSRGraph) and g.weights is not None
    dist = np.full(60, np.inf)
    dist[0] = 0
    src, dst, w = g.edge_src(), g.edge_dst, g.weights
    for _ in range(60):
        cand = dist[src] + w
        np.minimum.at(dist, dst, cand)
    expected = np.where(np.isfinite(dist), dist, INF).astype(np.int64)
    assert sssp_distances(g, 0).tolist() == expected.tolist()


def test_components_by_hand() -> None:
    g = graph(7, [(0, 1), (1, 2), (4, 3), (5, 5)])
    assert cc_min_labels(g).tolist() == [0, 0, 0, 3, 3, 5, 6]
    assert same_partition(cc_labels(g), [0, 0, 0, 3, 3, 5, 6])
    directed = graph(3, [(0, 1), (2, 1)], symmetrize=False)  # weakly connected
    assert cc_min_labels(directed).tolist() == [0, 0, 0]


def test_same_partition() -> None:
    assert same_partition([0, 0, 1, 2], [7, 7, 3, 9])
    assert not same_partition([0, 0, 1, 2], [7, 7, 7, 9])  # merges two groups
    assert not same_partition([0, 0, 0, 2], [7, 7, 3, 9])  # splits a group
    assert not same_partition([0, 1], [0, 1, 2])
    assert same_partition([], [])


def test_mst_by_hand() -> None:
    # square 0-1-2-3-0 with weights 1,2,3,4 and diagonal 0-2 of weight 1:
    # MST = 1 (0-1) + 1 (0-2) + 3 (2-3)
    g = graph(4, [(0, 1, 1), (1, 2, 2), (2, 3, 3), (3, 0, 4), (0, 2, 1)])
    assert mst_weight(g) == 5
    # forest: the same plus a separate edge 4-5 of weight 7 and isolated 6
    f = graph(7, [(0, 1, 1), (1, 2, 2), (2, 3, 3), (3, 0, 4), (0, 2, 1), (4, 5, 7)])
    assert mst_weight(f) == 12
    # duplicate edges: cleaning keeps the lighter copy
    assert mst_weight(graph(2, [(0, 1, 9), (1, 0, 3)])) == 3


def test_mst_matches_kruskal() -> None:
    g = uniform_random(80, 200, seed=6)
    assert isinstance(g, CSRGraph) and g.weights is not None
    parent = list(range(80))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    edges = sorted(
        zip(g.weights.tolist(), g.edge_src().tolist(), g.edge_dst.tolist(), strict=True)
    )
    total = 0
    for w, u, v in edges:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
            total += w
    assert mst_weight(g) == total


def test_mis_checker() -> None:
    # path 0-1-2-3 plus isolated 4
    g = graph(5, [(0, 1), (1, 2), (2, 3)])
    assert is_mis(g, np.array([1, 0, 1, 0, 1]))
    assert is_mis(g, np.array([0, 1, 0, 1, 1]))
    assert is_mis(g, np.array([1, 0, 0, 1, 1]))
    problem = mis_problem(g, np.array([1, 1, 0, 1, 1]))
    assert problem is not None and "not independent" in problem and "0 and 1" in problem
    problem = mis_problem(g, np.array([1, 0, 0, 0, 1]))
    assert problem is not None and "not maximal" in problem and "node 2" in problem
    problem = mis_problem(g, np.array([1, 0, 1, 0, 0]))
    assert (
        problem is not None and "node 4" in problem
    )  # isolated nodes must be in the set
    assert "flags for 5 nodes" in (mis_problem(g, np.array([1, 0])) or "")


def test_pagerank_by_hand() -> None:
    # 2-cycle: x = 0.15 + 0.85 x  =>  x = 1
    g = graph(2, [(0, 1)])
    np.testing.assert_allclose(pagerank(g, tolerance=1e-12), [1.0, 1.0], rtol=1e-9)
    # star: centre 0 with leaves 1, 2 (undirected).  x1 = x2 = 0.15 + 0.85 * x0 / 2,
    # x0 = 0.15 + 0.85 * (x1 + x2)  =>  x0 = 0.15 + 0.85 * (0.3 + 0.85 x0)
    x0 = (0.15 + 0.85 * 0.3) / (1 - 0.85**2)
    x1 = 0.15 + 0.85 * x0 / 2
    np.testing.assert_allclose(
        pagerank(graph(3, [(0, 1), (0, 2)]), tolerance=1e-12), [x0, x1, x1], rtol=1e-9
    )


def test_pagerank_matches_linear_solve() -> None:
    g = rmat(7, 4, seed=1)
    assert isinstance(g, CSRGraph)
    n, d = g.num_nodes, 0.85
    deg = g.degrees().astype(float)
    inv = np.divide(1.0, deg, out=np.zeros(n), where=deg > 0)
    p_t = sp.csc_matrix(
        sp.csr_matrix((np.ones(g.num_edges), (g.edge_dst, g.edge_src())), shape=(n, n))
        @ sp.diags(inv)
    )
    exact = np.asarray(
        spla.spsolve(sp.identity(n, format="csc") - d * p_t, np.full(n, 1 - d))
    )
    got = pagerank(g, tolerance=1e-10)
    assert compare_close("pr", got, exact, rtol=1e-6, atol=1e-8) is None
    loose = pagerank(g, tolerance=1e-3)
    assert compare_close("pr", loose, exact, rtol=1e-2, atol=1e-2) is None


def brute_triangles(g: CSRGraph) -> int:
    adj = {(int(u), int(v)) for u, v in zip(g.edge_src(), g.edge_dst, strict=True)}
    return sum(
        1
        for a, b, c in itertools.combinations(range(g.num_nodes), 3)
        if (a, b) in adj and (b, c) in adj and (a, c) in adj
    )


def test_triangles_by_hand() -> None:
    k4 = graph(4, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    assert triangle_count(k4) == 4
    assert triangle_count(graph(4, [(0, 1), (1, 2), (2, 0), (2, 3)])) == 1
    assert triangle_count(graph(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)])) == 0
    # a directed 3-cycle is one undirected triangle
    assert triangle_count(graph(3, [(0, 1), (1, 2), (2, 0)], symmetrize=False)) == 1
    assert triangle_count(graph(0, [])) == 0


def test_triangles_match_trace_and_brute_force() -> None:
    g = uniform_random(40, 160, seed=12)
    assert isinstance(g, CSRGraph)
    a = g.to_scipy(weighted=False).toarray().astype(np.int64)
    by_trace = int(np.trace(a @ a @ a)) // 6
    assert by_trace > 0
    assert triangle_count(g) == by_trace == brute_triangles(g)
    h = rmat(8, 8, seed=4)
    assert isinstance(h, CSRGraph)
    b = h.to_scipy(weighted=False).toarray().astype(np.int64)
    assert triangle_count(h) == int(np.trace(b @ b @ b)) // 6


def test_compare_helpers() -> None:
    assert compare_exact("x", np.array([1, 2]), np.array([1, 2])) is None
    msg = compare_exact("level", np.array([1, 5, 3]), np.array([1, 2, 3]))
    assert msg is not None and "1 of 3" in msg and "node 1: got 5, expected 2" in msg
    assert "2 values, expected 3" in (
        compare_exact("x", np.zeros(2), np.zeros(3)) or ""
    )
    assert compare_close("pr", np.array([1.0, 2.0]), np.array([1.0001, 2.0])) is None
    assert compare_close("pr", np.array([1.0, 2.5]), np.array([1.0, 2.0])) is not None


def test_pagerank_reference_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With $IRGL_REFERENCE_CACHE the result is kept on disk, keyed by the
    graph and the parameters: a second process-like call reads it back, and
    another graph or tolerance solves anew."""
    g = rmat(8, 4, seed=3)
    assert isinstance(g, CSRGraph)
    monkeypatch.delenv("IRGL_REFERENCE_CACHE", raising=False)
    plain = pagerank(g, tolerance=1e-8)
    monkeypatch.setenv("IRGL_REFERENCE_CACHE", str(tmp_path / "refs"))
    first = pagerank(g, tolerance=1e-8)
    files = sorted((tmp_path / "refs").glob("pagerank-*.npy"))
    assert len(files) == 1
    np.testing.assert_array_equal(first, plain)
    # the stored file is what a later call returns
    marked = first.copy()
    marked[0] = -1.0
    np.save(files[0], marked)
    assert pagerank(g, tolerance=1e-8)[0] == -1.0
    # other parameters, other graph: other entries
    pagerank(g, tolerance=1e-6)
    other = rmat(8, 4, seed=4)
    assert isinstance(other, CSRGraph)
    pagerank(other, tolerance=1e-8)
    assert len(list((tmp_path / "refs").glob("pagerank-*.npy"))) == 3


def test_triangle_count_reference_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The triangle count is kept like PageRank's values: one file per graph,
    read back by a later call; an unreadable file is counted again."""
    g = rmat(8, 4, seed=3)
    assert isinstance(g, CSRGraph)
    monkeypatch.delenv("IRGL_REFERENCE_CACHE", raising=False)
    plain = triangle_count(g)
    assert plain > 0
    monkeypatch.setenv("IRGL_REFERENCE_CACHE", str(tmp_path / "refs"))
    assert triangle_count(g) == plain
    (stored,) = sorted((tmp_path / "refs").glob("triangles-*.npy"))
    np.save(stored, np.array([plain + 7]))
    assert triangle_count(g) == plain + 7
    stored.write_bytes(b"not an array")
    assert triangle_count(g) == plain
    other = rmat(8, 4, seed=4)
    assert isinstance(other, CSRGraph)
    triangle_count(other)
    assert len(list((tmp_path / "refs").glob("triangles-*.npy"))) == 2
