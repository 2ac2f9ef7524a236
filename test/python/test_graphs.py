"""Graph loaders, the .gr writer and the shared cleaning path."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from irgl_runner.graphs import (
    COOGraph,
    CSRGraph,
    GraphFormatError,
    clean,
    load_graph,
    read_edge_list,
    read_gr,
    read_mtx,
    write_gr,
)


def adjacency(g: CSRGraph) -> dict[int, list[tuple[int, int | None]]]:
    """{node: [(dst, weight)]} for readable comparisons."""
    out: dict[int, list[tuple[int, int | None]]] = {}
    for v in range(g.num_nodes):
        lo, hi = int(g.row_start[v]), int(g.row_start[v + 1])
        ws = [None] * (hi - lo) if g.weights is None else g.weights[lo:hi].tolist()
        out[v] = list(zip(g.edge_dst[lo:hi].tolist(), ws, strict=True))
    return out


def gr_bytes(
    n: int, ends: list[int], dst: list[int], weights: list[int] | None, pad: bool = True
) -> bytes:
    """A .gr file assembled by hand from the format description."""
    m = len(dst)
    esize = 0 if weights is None else 4
    data = struct.pack("<4Q", 1, esize, n, m)
    data += struct.pack(f"<{n}Q", *ends)
    data += struct.pack(f"<{m}I", *dst)
    if m % 2 and pad:
        data += b"\0" * 4
    if weights is not None:
        data += struct.pack(f"<{m}i", *weights)
    return data


# ------------------------------------------------------------------------ .gr


def test_read_gr_hand_built(tmp_path: Path) -> None:
    p = tmp_path / "g.gr"
    # 0 -> 1 (w 5), 0 -> 2 (w 7), 2 -> 0 (w 9); 3 edges => padding
    p.write_bytes(gr_bytes(3, [2, 2, 3], [1, 2, 0], [5, 7, 9]))
    g = read_gr(p)
    assert g.num_nodes == 3 and g.num_edges == 3
    assert g.row_start.tolist() == [0, 2, 2, 3]
    assert adjacency(g) == {0: [(1, 5), (2, 7)], 1: [], 2: [(0, 9)]}
    assert g.row_start.dtype == np.int64 and g.edge_dst.dtype == np.int64
    assert g.weights is not None and g.weights.dtype == np.int32


def test_read_gr_unweighted_with_and_without_padding(tmp_path: Path) -> None:
    for pad in (True, False):
        p = tmp_path / f"g{pad}.gr"
        p.write_bytes(gr_bytes(2, [1, 1], [1], None, pad=pad))
        g = read_gr(p)
        assert g.weights is None and adjacency(g) == {0: [(1, None)], 1: []}


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("m_odd", [True, False])
def test_gr_round_trip(tmp_path: Path, weighted: bool, m_odd: bool) -> None:
    rng = np.random.default_rng(3)
    n, m = 50, 201 if m_odd else 200
    coo = COOGraph(
        n,
        rng.integers(0, n, m),
        rng.integers(0, n, m),
        rng.integers(1, 100, m) if weighted else None,
    )
    g = clean(coo, symmetrize=False)
    p = tmp_path / "rt.gr"
    write_gr(p, g)
    h = read_gr(p)
    assert h.num_nodes == g.num_nodes
    np.testing.assert_array_equal(h.row_start, g.row_start)
    np.testing.assert_array_equal(h.edge_dst, g.edge_dst)
    if weighted:
        np.testing.assert_array_equal(h.weights, g.weights)
    else:
        assert h.weights is None
    # Size follows the format exactly.
    esize = 4 if weighted else 0
    mm = g.num_edges
    expected = 32 + 8 * n + 4 * mm + (4 if mm % 2 else 0) + esize * mm
    assert p.stat().st_size == expected


def test_gr_empty_graph_round_trip(tmp_path: Path) -> None:
    g = CSRGraph(0, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    write_gr(tmp_path / "e.gr", g)
    h = read_gr(tmp_path / "e.gr")
    assert h.num_nodes == 0 and h.num_edges == 0


def _bad_gr_cases() -> dict[str, tuple[bytes, str]]:
    good = gr_bytes(3, [2, 2, 3], [1, 2, 0], [5, 7, 9])
    return {
        "empty": (b"", "too short"),
        "short-header": (good[:20], "too short"),
        "version": (struct.pack("<4Q", 2, 0, 0, 0), "version 2"),
        "edge-size": (struct.pack("<4Q", 1, 8, 0, 0), "edge data size 8"),
        "truncated": (good[:-3], "truncated"),
        "trailing": (good + b"\0" * 8, "trailing bytes"),
        "header-lies": (struct.pack("<4Q", 1, 0, 1000, 5) + good[32:], "truncated"),
        "huge-header": (struct.pack("<4Q", 1, 0, 2**40, 2**50), "nodes"),
        "dst-range": (
            gr_bytes(3, [2, 2, 3], [1, 7, 0], [5, 7, 9]),
            "destination node id 7 out of range",
        ),
        "offsets-decrease": (gr_bytes(3, [2, 1, 3], [1, 2, 0], None), "decrease"),
        "last-offset": (gr_bytes(3, [1, 1, 2], [1, 2, 0], None), "last edge offset"),
    }


@pytest.mark.parametrize("case", sorted(_bad_gr_cases()))
def test_bad_gr(tmp_path: Path, case: str) -> None:
    data, fragment = _bad_gr_cases()[case]
    p = tmp_path / f"{case}.gr"
    p.write_bytes(data)
    with pytest.raises(GraphFormatError) as info:
        load_graph(p)
    assert fragment in str(info.value)
    assert str(p) in str(info.value) and info.value.path == str(p)


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(GraphFormatError, match="no such file"):
        load_graph(tmp_path / "nope.gr")
    d = tmp_path / "dir.gr"
    d.mkdir()
    with pytest.raises(GraphFormatError, match="directory"):
        load_graph(d)
    with pytest.raises(GraphFormatError, match="no such file"):
        load_graph(tmp_path / "nope.mtx")


def test_unknown_extension(tmp_path: Path) -> None:
    p = tmp_path / "g.xyz"
    p.write_text("0 1\n")
    with pytest.raises(GraphFormatError, match="unknown graph file extension"):
        load_graph(p)


# ------------------------------------------------------------------------ .mtx


def test_mtx_pattern_symmetric(tmp_path: Path) -> None:
    p = tmp_path / "p.mtx"
    p.write_text(
        "%%MatrixMarket matrix coordinate pattern symmetric\n"
        "% comment\n4 4 3\n2 1\n3 1\n4 4\n"
    )
    g = load_graph(p)
    # 1-based (2,1),(3,1) => 0-1, 0-2; the diagonal (4,4) is a self loop: dropped
    assert adjacency(g) == {0: [(1, 1), (2, 1)], 1: [(0, 1)], 2: [(0, 1)], 3: []}


def test_mtx_integer_general(tmp_path: Path) -> None:
    p = tmp_path / "w.mtx"
    p.write_text(
        "%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 2 5\n2 3 4\n1 2 3\n"
    )
    coo = read_mtx(p)
    assert coo.num_nodes == 3 and coo.num_edges == 3
    g = load_graph(p, symmetrize=False)
    # duplicate 1->2 keeps the smaller weight 3
    assert adjacency(g) == {0: [(1, 3)], 1: [(2, 4)], 2: []}
    assert adjacency(load_graph(p, weighted=False))[1] == [(0, None), (2, None)]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n", "3x4"),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 0.5\n",
            "non-integer",
        ),
        ("this is not a matrix\n", "not a valid MatrixMarket"),
        (
            "%%MatrixMarket matrix coordinate pattern general\n2 2 5\n1 2\n",
            "not a valid MatrixMarket",
        ),
    ],
)
def test_bad_mtx(tmp_path: Path, text: str, fragment: str) -> None:
    p = tmp_path / "bad.mtx"
    p.write_text(text)
    with pytest.raises(GraphFormatError, match=fragment):
        load_graph(p)


# ------------------------------------------------------------------ edge lists


def test_edge_list_parsing(tmp_path: Path) -> None:
    p = tmp_path / "g.txt"
    p.write_text(
        "# SNAP header\n% another comment\n\n0 1 4\n1 2 6\n  2\t0   1\n0 1 2\n3 3 9\n"
    )
    g = load_graph(p, symmetrize=False)
    assert g.num_nodes == 4
    assert adjacency(g) == {0: [(1, 2)], 1: [(2, 6)], 2: [(0, 1)], 3: []}
    coo = read_edge_list(p)
    assert coo.num_edges == 5  # raw: duplicates and the self loop are still there


def test_edge_list_unweighted_symmetrized(tmp_path: Path) -> None:
    p = tmp_path / "g.el"
    p.write_text("0 2\n2 1\n")
    g = load_graph(p)
    assert g.weights is None
    assert adjacency(g) == {0: [(2, None)], 1: [(2, None)], 2: [(0, None), (1, None)]}


def test_empty_edge_list(tmp_path: Path) -> None:
    p = tmp_path / "e.txt"
    p.write_text("# nothing\n")
    assert load_graph(p).num_nodes == 0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0 1\n1 x\n", "line 2: 'x' is not an integer"),
        ("0 1\n1 2.5\n", "line 2: '2.5' is not an integer"),
        ("# c\n0 1\n1 2 3\n", "line 3: expected 2 columns"),
        ("0\n", "line 1: expected 'src dst [weight]'"),
        ("0 1\n-1 2\n", "line 2: negative node id"),
        ("0 1 99999999999\n", "do not fit in int32"),
    ],
)
def test_bad_edge_list(tmp_path: Path, text: str, fragment: str) -> None:
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(GraphFormatError) as info:
        load_graph(p)
    assert fragment in str(info.value)


def test_binary_edge_list(tmp_path: Path) -> None:
    p = tmp_path / "bin.txt"
    p.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(GraphFormatError, match="not a text file"):
        load_graph(p)


# ---------------------------------------------------------------------- clean


def test_clean_loops_duplicates_min_weight_symmetrize() -> None:
    coo = COOGraph(
        4,
        np.array([0, 0, 1, 1, 2, 3, 1]),
        np.array([1, 1, 0, 1, 3, 2, 2]),
        np.array([9, 4, 6, 1, 5, 8, 2]),
    )
    g = clean(coo, symmetrize=True)
    # 0-1: weights 9, 4, 6 => 4; 1-1 loop dropped; 2-3: 5, 8 => 5; 1-2: 2
    assert adjacency(g) == {
        0: [(1, 4)],
        1: [(0, 4), (2, 2)],
        2: [(1, 2), (3, 5)],
        3: [(2, 5)],
    }
    d = clean(coo, symmetrize=False)
    assert adjacency(d) == {0: [(1, 4)], 1: [(0, 6), (2, 2)], 2: [(3, 5)], 3: [(2, 8)]}


def test_clean_wide_weight_range_uses_general_path() -> None:
    # weights spanning the whole int32 range cannot be packed with the edge key
    coo = COOGraph(
        3, np.array([0, 0, 1]), np.array([1, 1, 2]), np.array([2**31 - 1, -(2**31), 7])
    )
    g = clean(coo, symmetrize=False)
    assert adjacency(g) == {0: [(1, -(2**31))], 1: [(2, 7)], 2: []}


def test_clean_accepts_csr_and_is_idempotent() -> None:
    rng = np.random.default_rng(0)
    coo = COOGraph(
        30, rng.integers(0, 30, 300), rng.integers(0, 30, 300), rng.integers(1, 9, 300)
    )
    g = clean(coo)
    h = clean(g)
    assert adjacency(g) == adjacency(h)
    g.validate()


def test_clean_rejects_out_of_range() -> None:
    with pytest.raises(
        GraphFormatError, match="destination node id 5 out of range for 3 nodes"
    ):
        clean(COOGraph(3, np.array([0]), np.array([5])))
    with pytest.raises(GraphFormatError, match="source node id -1"):
        clean(COOGraph(3, np.array([-1]), np.array([0])))
