"""Chunked, threaded RMAT generation and cleaning give exactly the serial graphs.

The oracles: the serial RMAT generator as it was before the threaded one
(``irgl_runner/_parallel.py``), and :func:`clean`'s serial path, which every
input shorter than two chunks still takes: every generated array must be
equal, dtype included, whatever the chunk size and thread count.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from irgl_runner import _parallel
from irgl_runner.generators import (
    WEIGHT_MAX,
    WEIGHT_MIN,
    generate,
    grid2d,
    hub_graph,
    rmat,
    star,
    uniform_random,
)
from irgl_runner.graphs import COOGraph, CSRGraph, clean

# ----------------------------------------------------------------- the oracles


def oracle_rmat(scale, edge_factor=16, seed=1, a=0.57, b=0.19, c=0.19, permute=True):
    """The serial RMAT generator (raw edges)."""
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edge_factor * n
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    ab, abc = a + b, a + b + c
    for bit in range(scale):
        u = rng.random(m, dtype=np.float32)
        src_bit = u >= ab
        dst_bit = ((u >= a) & (u < ab)) | (u >= abc)
        src |= src_bit.astype(np.int64) << bit
        dst |= dst_bit.astype(np.int64) << bit
    if permute:
        perm = rng.permutation(n)
        src, dst = perm[src], perm[dst]
    w = rng.integers(WEIGHT_MIN, WEIGHT_MAX + 1, size=m, dtype=np.int32)
    return COOGraph(n, src, dst, w)


def oracle_clean(coo: COOGraph, symmetrize: bool = True) -> CSRGraph:
    """:func:`clean`'s serial path (taken by any input shorter than two
    chunks), which the threaded path must match byte for byte."""
    saved = os.environ.get("IRGL_GEN_CHUNK")
    os.environ["IRGL_GEN_CHUNK"] = str(2 * len(coo.src) + 2)
    try:
        return clean(coo, symmetrize=symmetrize)
    finally:
        if saved is None:
            del os.environ["IRGL_GEN_CHUNK"]
        else:
            os.environ["IRGL_GEN_CHUNK"] = saved


# ---------------------------------------------------------------------- helpers


def assert_same_array(a, b) -> None:
    if a is None or b is None:
        assert a is None and b is None
        return
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    assert np.array_equal(a, b)


def assert_same_stream(a: np.random.Generator, b: np.random.Generator) -> None:
    """Same generator state (a stale unbuffered half aside) and same draws on."""
    sa, sb = a.bit_generator.state, b.bit_generator.state
    assert sa["state"] == sb["state"] and sa["has_uint32"] == sb["has_uint32"]
    if sa["has_uint32"]:
        assert sa["uinteger"] == sb["uinteger"]
    assert_same_array(a.random(5, dtype=np.float32), b.random(5, dtype=np.float32))
    assert_same_array(a.random(5), b.random(5))


def assert_same_coo(a: COOGraph, b: COOGraph) -> None:
    assert a.num_nodes == b.num_nodes
    for field in ("src", "dst", "weights"):
        assert_same_array(getattr(a, field), getattr(b, field))


def assert_same_csr(a: CSRGraph, b: CSRGraph) -> None:
    assert a.num_nodes == b.num_nodes
    for field in ("row_start", "edge_dst", "weights"):
        assert_same_array(getattr(a, field), getattr(b, field))


# (chunk size, threads): the defaults, then many small chunks on 1 and 3 threads
# (the threaded paths run on inputs of at least two chunks).
SETTINGS = [(None, None), ("6", "1"), ("64", "3"), ("1000", "2")]


@pytest.fixture(params=SETTINGS, ids=lambda s: f"chunk{s[0]}-threads{s[1]}")
def chunking(request, monkeypatch):
    chunk, threads = request.param
    for name, value in (("IRGL_GEN_CHUNK", chunk), ("IRGL_GEN_THREADS", threads)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return request.param


RMAT_ARGS = [
    dict(scale=10),
    dict(scale=12, seed=3),
    dict(scale=14, edge_factor=8),
    dict(scale=18, seed=7),
    dict(scale=1, edge_factor=3),
    dict(scale=0, edge_factor=5),
    dict(scale=9, edge_factor=0),
    dict(scale=11, permute=False),
    dict(scale=10, a=0.45, b=0.15, c=0.15, seed=9),
    dict(scale=8, a=0.5, b=0.0, c=0.5),  # d = 0: bound at 2**24, general path
    dict(scale=8, a=np.float64(0.3), b=np.float32(0.3), c=0.2),  # numpy scalars
]


def _skip_slow(kwargs: dict, chunking: tuple[str | None, str | None]) -> None:
    """Scale 18 with default chunking only; scale 12 and up not in 6-edge
    chunks (thousands of chunks: seconds, and the graphs of scale 8-11
    cover them)."""
    scale = kwargs.get("scale", 0)
    if scale == 18 and chunking[0] is not None:
        pytest.skip("large case: default chunking only")
    if scale >= 12 and chunking[0] == "6":
        pytest.skip("tiny chunks are covered on the smaller graphs")


@pytest.mark.parametrize("kwargs", RMAT_ARGS, ids=lambda k: repr(k))
def test_rmat_raw_matches_serial(kwargs, chunking) -> None:
    _skip_slow(kwargs, chunking)
    got = rmat(raw=True, **kwargs)
    assert isinstance(got, COOGraph)
    assert_same_coo(got, oracle_rmat(**kwargs))


@pytest.mark.parametrize(
    "kwargs", RMAT_ARGS[:4] + RMAT_ARGS[7:9], ids=lambda k: repr(k)
)
def test_rmat_clean_matches_serial(kwargs, chunking) -> None:
    _skip_slow(kwargs, chunking)
    got = rmat(**kwargs)
    assert isinstance(got, CSRGraph)
    assert_same_csr(got, oracle_clean(oracle_rmat(**kwargs)))


def test_rmat_18_at_7_node_1_isolated() -> None:
    g = generate("rmat:18@7")
    assert g.row_start[2] == g.row_start[1]


RAW_GRAPHS = {
    "grid": lambda: grid2d(40, 30, raw=True),
    "random": lambda: uniform_random(700, 5000, seed=4, raw=True),
    "hub": lambda: hub_graph(300, 2, raw=True),
    "star": lambda: star(500, raw=True),
    "rmat12@3": lambda: oracle_rmat(12, seed=3),
}


@pytest.mark.parametrize("name", sorted(RAW_GRAPHS))
@pytest.mark.parametrize("symmetrize", [True, False])
def test_clean_matches_serial(name, symmetrize, chunking) -> None:
    coo = RAW_GRAPHS[name]()
    assert_same_csr(clean(coo, symmetrize=symmetrize), oracle_clean(coo, symmetrize))


@pytest.mark.parametrize(
    "spec",
    [
        "rmat:10",
        "rmat:12@3",
        "rmat:14:8",
        "grid:40x30",
        "random:700:5000",
        "hub:300:2",
        "star:500",
    ],
)
def test_generate_matches_serial_clean(spec, monkeypatch) -> None:
    """Cleaned specs: the threaded clean (forced by small chunks) gives the
    serial CSR of the raw edges the generator hands to it."""
    from irgl_runner import generators

    monkeypatch.setenv("IRGL_GEN_CHUNK", "50")
    monkeypatch.setenv("IRGL_GEN_THREADS", "3")
    seen: list[COOGraph] = []

    def spy(coo: COOGraph, symmetrize: bool = True) -> CSRGraph:
        seen.append(coo)
        return clean(coo, symmetrize=symmetrize)

    monkeypatch.setattr(generators, "clean", spy)
    got = generate(spec)
    assert len(seen) == 1 and seen[0].num_edges >= 100  # several chunks
    assert_same_csr(got, oracle_clean(seen[0]))
    if spec.startswith("rmat"):
        body, _, seed = spec.partition("@")
        params = [int(x) for x in body.split(":")[1:]]
        assert_same_coo(seen[0], oracle_rmat(*params, seed=int(seed or 1)))


def test_clean_edge_cases_match_serial(chunking) -> None:
    rng = np.random.default_rng(5)
    n, m = 50, 3000
    s, d = rng.integers(0, n, m), rng.integers(0, n, m)
    cases = [
        COOGraph(n, s, d, rng.integers(-5, 1000, m)),  # negative weights
        COOGraph(n, s, d, None),  # unweighted
        COOGraph(n, s, s, rng.integers(0, 9, m)),  # only self loops
        COOGraph(n, s, d, np.full(m, 7)),  # one weight: no weight bits
        COOGraph(n, s, d, rng.integers(0, 9, m).astype(np.int64)),
        COOGraph(1 << 20, s * 20000, d * 20000, rng.integers(0, 2**31 - 1, m)),
    ]
    for coo in cases:
        for symmetrize in (True, False):
            assert_same_csr(
                clean(coo, symmetrize=symmetrize), oracle_clean(coo, symmetrize)
            )


def test_draw_uint32_each_matches_one_draw(monkeypatch) -> None:
    """Chunked weight draws from any stream position (a buffered half 32-bit
    value included) equal one draw, and leave the generator where it would."""
    monkeypatch.setenv("IRGL_GEN_CHUNK", "10")
    monkeypatch.setenv("IRGL_GEN_THREADS", "3")

    def draw(g: np.random.Generator, k: int) -> np.ndarray:
        return g.integers(WEIGHT_MIN, WEIGHT_MAX + 1, size=k, dtype=np.int32)

    for skip in (0, 1, 3):
        for count in (0, 1, 19, 20, 21, 101):
            a, b = np.random.default_rng(11), np.random.default_rng(11)
            a.random(skip, dtype=np.float32)
            b.random(skip, dtype=np.float32)
            assert_same_array(
                _parallel.draw_uint32_each(a, count, draw, np.int32), draw(b, count)
            )
            assert_same_stream(a, b)


@pytest.mark.parametrize("skip", [0, 1, 2, 7, 8, 9, 1001])
@pytest.mark.parametrize("start", [0, 1])
def test_skip_uint32_matches_draws(skip, start) -> None:
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    a.random(start, dtype=np.float32)
    b.random(start, dtype=np.float32)
    _parallel.skip_uint32(a, skip)
    b.random(skip, dtype=np.float32)
    assert_same_stream(a, b)


def test_chunk_settings(monkeypatch) -> None:
    monkeypatch.setenv("IRGL_GEN_CHUNK", "7")
    monkeypatch.setenv("IRGL_GEN_THREADS", "5")
    assert _parallel.chunk_size() == 8
    assert _parallel.threads() == 5
    assert _parallel.spans(1, 20, 8) == [(1, 9), (9, 17), (17, 20)]
