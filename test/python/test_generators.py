"""Seeded generators: determinism, cleanliness, structure, spec parsing."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from irgl_runner.generators import (
    WEIGHT_MAX,
    WEIGHT_MIN,
    GraphSpec,
    generate,
    grid2d,
    hub_graph,
    islands,
    mostly_isolated,
    parse_spec,
    path_graph,
    rmat,
    star,
    uniform_random,
)
from irgl_runner.graphs import COOGraph, CSRGraph, clean


def assert_clean(g: CSRGraph) -> None:
    """No loops/duplicates, sorted rows, symmetric with symmetric weights in range."""
    g.validate()
    src, dst = g.edge_src(), g.edge_dst
    assert not np.any(src == dst), "self loop"
    same_row = src[1:] == src[:-1]
    assert np.all(dst[1:][same_row] > dst[:-1][same_row]), (
        "rows not strictly sorted (duplicate or unsorted)"
    )
    assert g.weights is not None
    assert (
        g.weights.min(initial=WEIGHT_MIN) >= WEIGHT_MIN
        and g.weights.max(initial=WEIGHT_MAX) <= WEIGHT_MAX
    )
    a = sp.csr_matrix(
        (g.weights.astype(np.int64), dst, g.row_start), shape=(g.num_nodes,) * 2
    )
    assert (a != a.T).nnz == 0, "not symmetric (or weights differ per direction)"


def same_graph(a: CSRGraph, b: CSRGraph) -> bool:
    return (
        a.num_nodes == b.num_nodes
        and np.array_equal(a.row_start, b.row_start)
        and np.array_equal(a.edge_dst, b.edge_dst)
        and np.array_equal(np.asarray(a.weights), np.asarray(b.weights))
    )


GENERATORS = {
    "rmat": lambda seed: rmat(8, 8, seed=seed),
    "grid": lambda seed: grid2d(7, 5, seed=seed),
    "random": lambda seed: uniform_random(300, 900, seed=seed),
    "path": lambda seed: path_graph(50, seed=seed),
    "star": lambda seed: star(40, seed=seed),
    "hub": lambda seed: hub_graph(200, 3, seed=seed),
    "isolated": lambda seed: mostly_isolated(300, 200, 40, seed=seed),
    "islands": lambda seed: islands(300, 12, seed=seed),
}


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_deterministic_and_clean(kind: str) -> None:
    make = GENERATORS[kind]
    a, b, c = make(1), make(1), make(2)
    assert (
        isinstance(a, CSRGraph) and isinstance(b, CSRGraph) and isinstance(c, CSRGraph)
    )
    assert same_graph(a, b)
    assert_clean(a)
    assert_clean(c)
    if kind == "grid":
        assert np.array_equal(a.edge_dst, c.edge_dst) and not np.array_equal(
            np.asarray(a.weights), np.asarray(c.weights)
        )
    else:
        assert not same_graph(a, c)


def test_rmat_shape_and_skew() -> None:
    g = rmat(10, 16, seed=5)
    assert isinstance(g, CSRGraph)
    assert g.num_nodes == 1024
    assert g.num_edges <= 2 * 16 * 1024
    deg = g.degrees()
    assert deg.max() > 8 * deg.mean()  # power-law-ish: a few hubs
    assert np.any(deg == 0)  # RMAT leaves isolated nodes


def test_rmat_quadrant_probabilities() -> None:
    raw = rmat(1, 4000, seed=3, permute=False, raw=True)
    assert isinstance(raw, COOGraph)
    quad = raw.src * 2 + raw.dst  # (0,0)=A, (0,1)=B, (1,0)=C, (1,1)=D
    freq = np.bincount(quad, minlength=4) / raw.num_edges
    np.testing.assert_allclose(freq, [0.57, 0.19, 0.19, 0.05], atol=0.02)


def test_rmat_raw_has_noise_and_cleans_to_generated() -> None:
    raw = rmat(6, 16, seed=9, raw=True)
    assert isinstance(raw, COOGraph)
    assert np.any(raw.src == raw.dst)
    keys = raw.src * raw.num_nodes + raw.dst
    assert np.unique(keys).size < keys.size
    assert same_graph(clean(raw), rmat(6, 16, seed=9))  # type: ignore[arg-type]


def test_grid_structure_by_hand() -> None:
    g = grid2d(3, 2, seed=0)
    assert isinstance(g, CSRGraph)
    # 0 1 2
    # 3 4 5
    expected = {0: [1, 3], 1: [0, 2, 4], 2: [1, 5], 3: [0, 4], 4: [1, 3, 5], 5: [2, 4]}
    got = {
        v: g.edge_dst[g.row_start[v] : g.row_start[v + 1]].tolist() for v in range(6)
    }
    assert got == expected
    big = grid2d(20, 13, seed=0)
    assert isinstance(big, CSRGraph)
    assert big.num_edges == 2 * (2 * 20 * 13 - 20 - 13)
    assert_clean(big)


def test_uniform_random_isolated_and_connected() -> None:
    sparse = uniform_random(1000, 100, seed=4)
    assert isinstance(sparse, CSRGraph)
    assert sparse.num_nodes == 1000 and np.any(sparse.degrees() == 0)
    conn = uniform_random(500, 50, seed=4, connected=True)
    assert isinstance(conn, CSRGraph)
    assert_clean(conn)
    ncomp, _ = csgraph.connected_components(conn.to_scipy(), directed=False)
    assert ncomp == 1


def test_uniform_random_raw_has_duplicates_and_loops() -> None:
    raw = uniform_random(50, 400, seed=8, raw=True)
    assert isinstance(raw, COOGraph)
    assert np.any(raw.src == raw.dst)
    keys = raw.src * raw.num_nodes + raw.dst
    assert np.unique(keys).size < keys.size
    cleaned = clean(raw)
    assert_clean(cleaned)
    # Injected duplicates/loops add no new edges, only extra (maybe lower) weights.
    plain = uniform_random(50, 400, seed=8)
    assert (
        isinstance(plain, CSRGraph)
        and plain.weights is not None
        and cleaned.weights is not None
    )
    assert np.array_equal(cleaned.row_start, plain.row_start)
    assert np.array_equal(cleaned.edge_dst, plain.edge_dst)
    assert np.all(cleaned.weights <= plain.weights)
    # Each cleaned weight is the minimum over the raw copies of the edge (both ways).
    assert raw.weights is not None
    for e in range(0, cleaned.num_edges, 7):
        u, v = int(cleaned.edge_src()[e]), int(cleaned.edge_dst[e])
        both = ((raw.src == u) & (raw.dst == v)) | ((raw.src == v) & (raw.dst == u))
        assert cleaned.weights[e] == raw.weights[both].min()


def test_parse_spec() -> None:
    assert parse_spec("rmat:20") == GraphSpec("rmat", (20, 16))
    assert parse_spec("rmat:12:8") == GraphSpec("rmat", (12, 8))
    assert parse_spec("grid:2048x1024") == GraphSpec("grid", (2048, 1024))
    assert parse_spec("random:100000:800000@7") == GraphSpec(
        "random", (100000, 800000), 7
    )
    assert parse_spec("graph.gr") is None
    assert parse_spec("/data/rmat.gr") is None
    assert GraphSpec("grid", (4, 5)).name == "grid:4x5"
    assert GraphSpec("rmat", (5, 16), 3).name == "rmat:5:16@3"
    for bad in ["rmat:", "rmat:x", "grid:10", "random:5", "rmat:31", "grid:3x3@z"]:
        with pytest.raises(ValueError, match="graph spec|too large"):
            parse_spec(bad)


def test_generate_matches_functions() -> None:
    assert same_graph(generate("grid:4x3"), grid2d(4, 3))  # type: ignore[arg-type]
    assert same_graph(generate("rmat:5:4@2"), rmat(5, 4, seed=2))  # type: ignore[arg-type]
    assert same_graph(generate("random:40:60"), uniform_random(40, 60))  # type: ignore[arg-type]


def test_path_star_hub_structure() -> None:
    path = generate("path:6")
    assert path.num_nodes == 6 and path.degrees().tolist() == [1, 2, 2, 2, 2, 1]
    assert path.edge_dst[path.row_start[2] : path.row_start[3]].tolist() == [1, 3]
    levels = csgraph.shortest_path(path.to_scipy(weighted=False), indices=0)
    assert levels.tolist() == [0, 1, 2, 3, 4, 5]  # diameter n - 1
    assert generate("path:1").num_edges == 0

    s = generate("star:7")
    assert s.degrees().tolist() == [6, 1, 1, 1, 1, 1, 1]
    assert s.edge_dst[: s.row_start[1]].tolist() == [1, 2, 3, 4, 5, 6]
    assert set(s.edge_dst[s.row_start[1] :].tolist()) == {0}

    n, hubs = 1000, 2
    h = generate(f"hub:{n}:{hubs}")
    deg = h.degrees()
    assert deg[0] == deg[1] == n - 1  # each hub reaches every other node
    assert deg[hubs:].max() < 30 and deg[hubs:].min() >= hubs
    assert same_graph(h, hub_graph(n, hubs))  # type: ignore[arg-type]
    assert generate("hub:50").degrees()[0] == 49  # one hub by default


def test_path_star_hub_specs() -> None:
    assert parse_spec("path:1048576") == GraphSpec("path", (1048576,))
    assert parse_spec("star:10@3") == GraphSpec("star", (10,), 3)
    assert parse_spec("hub:100") == GraphSpec("hub", (100, 1))
    assert parse_spec("hub:100:4") == GraphSpec("hub", (100, 4))
    assert GraphSpec("path", (9,)).name == "path:9"
    assert GraphSpec("hub", (9, 2), 5).name == "hub:9:2@5"
    assert same_graph(generate("path:30@4"), path_graph(30, seed=4))  # type: ignore[arg-type]
    assert same_graph(generate("star:30"), star(30))  # type: ignore[arg-type]
    for bad in ["path:0", "path:", "star:0", "star:1x2", "hub:0", "hub:5:6", "hub:5:0"]:
        with pytest.raises(ValueError, match="graph spec"):
            parse_spec(bad)
    with pytest.raises(ValueError, match="at least 1 node"):
        path_graph(0)
    with pytest.raises(ValueError, match="hub count"):
        hub_graph(3, 4)


@pytest.mark.parametrize("bad", ["grid:0x5", "grid:5x0", "grid:0x0"])
def test_empty_grid_spec_is_an_error(bad: str) -> None:
    with pytest.raises(ValueError, match="at least 1x1"):
        parse_spec(bad)


def _components(g: CSRGraph) -> np.ndarray:
    """Component sizes."""
    _, labels = csgraph.connected_components(g.to_scipy(weighted=False))
    return np.bincount(labels)


def test_mostly_isolated_structure() -> None:
    g = generate("isolated:1000:800:50")
    deg = g.degrees()
    assert (deg > 0).sum() <= 50 and (deg == 0).sum() >= 950
    assert _components(g).max() <= 50
    assert same_graph(g, mostly_isolated(1000, 800, 50))  # type: ignore[arg-type]
    default = generate("isolated:1000:800")  # a tenth of the nodes carry edges
    assert (default.degrees() > 0).sum() <= 100
    assert parse_spec("isolated:1000:800") == GraphSpec("isolated", (1000, 800, 100))
    assert GraphSpec("isolated", (10, 5, 2), 3).name == "isolated:10:5:2@3"


def test_islands_structure() -> None:
    g = generate("islands:1000:16@2")
    sizes = _components(g)
    assert sizes.max() == 16 and sizes.sum() == 1000
    assert (sizes == 16).sum() == 1000 // 16  # every island is connected
    assert g.num_edges > 2 * (1000 - len(sizes))  # chords besides the trees
    assert same_graph(g, islands(1000, 16, seed=2))  # type: ignore[arg-type]
    assert parse_spec("islands:50:5") == GraphSpec("islands", (50, 5))
    assert _components(generate("islands:10:1")).tolist() == [1] * 10


@pytest.mark.parametrize(
    "bad",
    ["isolated:0:5", "isolated:5", "isolated:10:5:11", "islands:0:3", "islands:5:0"],
)
def test_isolated_and_islands_bad_specs(bad: str) -> None:
    with pytest.raises(ValueError, match="graph spec"):
        parse_spec(bad)
