"""Seeded synthetic graphs: RMAT (Graph500), 2D grids, uniform random graphs,
paths (high diameter), stars, hub-heavy graphs (skewed degrees), graphs of
mostly isolated nodes and graphs of many small components.

All generators take a ``seed`` and use :func:`numpy.random.default_rng`, so the
same arguments always give the same graph.  With ``raw=True`` they return the
uncleaned :class:`COOGraph` (duplicates, self loops, one direction only) so that
:func:`irgl_runner.graphs.clean` can be exercised; otherwise the cleaned,
symmetric :class:`CSRGraph` with int32 weights in ``[1, 64]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _parallel
from .graphs import COOGraph, CSRGraph, clean

__all__ = [
    "GraphSpec",
    "SPEC_FORMS",
    "WEIGHT_MAX",
    "WEIGHT_MIN",
    "generate",
    "grid2d",
    "hub_graph",
    "islands",
    "mostly_isolated",
    "parse_spec",
    "path_graph",
    "rmat",
    "star",
    "uniform_random",
]

WEIGHT_MIN = 1
WEIGHT_MAX = 64
DEFAULT_SEED = 1


def _weights(rng: np.random.Generator, m: int) -> np.ndarray:
    """Uniform integer weights in ``[WEIGHT_MIN, WEIGHT_MAX]``."""
    return rng.integers(WEIGHT_MIN, WEIGHT_MAX + 1, size=m, dtype=np.int32)


def rmat(
    scale: int,
    edge_factor: int = 16,
    seed: int = DEFAULT_SEED,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    permute: bool = True,
    raw: bool = False,
) -> CSRGraph | COOGraph:
    """Graph500 RMAT: ``2**scale`` nodes, ``edge_factor * 2**scale`` raw edges.

    Each edge picks one quadrant per bit (probabilities A, B, C, 1-A-B-C);
    node labels are then randomly permuted (as Graph500 does) unless
    ``permute=False``.  The cleaned result is symmetric with duplicates and
    self loops removed, so it has at most ``2 * edge_factor * 2**scale`` edges.
    """
    if not 0 <= scale <= 30:
        raise ValueError(f"rmat scale must be in 0..30, got {scale}")
    if edge_factor < 0:
        raise ValueError(f"edge factor must be >= 0, got {edge_factor}")
    if min(a, b, c) < 0 or a + b + c > 1:
        raise ValueError("rmat probabilities must be >= 0 and sum to at most 1")
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edge_factor * n
    ab, abc = a + b, a + b + c
    # The serial algorithm (kept as the oracle in test_generators_parallel.py):
    #   for bit in range(scale):
    #       u = rng.random(m, dtype=np.float32)
    #       src |= (u >= ab) << bit; dst |= (((u >= a) & (u < ab)) | (u >= abc)) << bit
    #   perm = rng.permutation(n); src, dst = perm[src], perm[dst]
    #   weights = _weights(rng, m)
    # Here bit ``bit`` of edge ``i`` is 32-bit stream value ``bit * m + i``, so
    # chunks of edges take all their bits at once from advanced copies of the
    # generator (in threads); the main generator skips the bit draws, then
    # makes the permutation and the weights as the serial code does.
    bits_state = rng.bit_generator.state
    _parallel.skip_uint32(rng, scale * m)
    perm = rng.permutation(n) if permute else None
    weights = _parallel.draw_uint32_each(rng, m, _weights, np.int32)
    src = np.empty(m, dtype=np.int64)
    dst = np.empty(m, dtype=np.int64)
    if scale == 0:
        src[:] = 0
        dst[:] = 0
    else:
        # m is even here: every chunk starts at an even stream position.
        cut = _rmat_thresholds(a, ab, abc)
        _parallel.pmap(
            lambda span: _rmat_chunk(bits_state, m, scale, span, cut, perm, src, dst),
            _parallel.spans(0, m, _parallel.chunk_size()),
        )
    coo = COOGraph(n, src, dst, weights)
    return coo if raw else clean(coo, symmetrize=True)


def _first_true(pred: Callable[[int], bool]) -> int:
    """Least ``k`` in ``[0, 2**24]`` with ``pred(k)`` (``2**24`` if none), for a
    ``pred`` that is false, then true as ``k`` grows."""
    lo, hi = 0, 1 << 24
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _rmat_thresholds(a: float, ab: float, abc: float) -> tuple[int, int, int, int]:
    """The serial comparisons of a float32 draw ``u = k * 2**-24`` as bounds on
    the 24-bit integer ``k``: ``u >= t`` iff ``k >= K``, ``u < ab`` iff
    ``k < K``.  Each bound comes from evaluating the serial expression itself
    on float32 arrays, so numpy's promotion of ``a, ab, abc`` applies as is."""

    def u(k: int) -> np.ndarray:
        return np.array([k], dtype=np.float32) * np.float32(2.0**-24)

    return (
        _first_true(lambda k: bool((u(k) >= a)[0])),
        _first_true(lambda k: not bool((u(k) < ab)[0])),
        _first_true(lambda k: bool((u(k) >= ab)[0])),
        _first_true(lambda k: bool((u(k) >= abc)[0])),
    )


def _rmat_chunk(
    bits_state: Mapping[str, Any],
    m: int,
    scale: int,
    span: tuple[int, int],
    cut: tuple[int, int, int, int],
    perm: np.ndarray | None,
    src_out: np.ndarray,
    dst_out: np.ndarray,
) -> None:
    """Edges ``span`` of an RMAT graph: every bit, then the permutation."""
    lo, hi = span
    k_a, k_lt_ab, k_ab, k_abc = cut
    size = hi - lo
    src = np.zeros(size, dtype=np.uint32)
    dst = np.zeros(size, dtype=np.uint32)
    sbit = np.empty(size, dtype=bool)
    dbit = np.empty(size, dtype=bool)
    tmp = np.empty(size, dtype=bool)
    # Usual case (0 <= a <= a+b <= a+b+c < 1 in float32): compare the raw
    # 32-bit values with the bounds shifted up (no shift of the draws), and B|D
    # is (u >= a) ^ (u >= ab) ^ (u >= abc).
    simple = k_lt_ab == k_ab and k_a <= k_ab <= k_abc < 1 << 24
    for bit in range(scale - 1, -1, -1):  # highest first: shift left, or in
        y = _parallel.raw_uint32(_parallel.substream(bits_state, bit * m + lo), size)
        if simple:
            np.greater_equal(y, k_ab << 8, out=sbit)  # quadrants C, D
            np.greater_equal(y, k_a << 8, out=dbit)  # quadrants B, D
            np.logical_xor(dbit, sbit, out=dbit)
            np.greater_equal(y, k_abc << 8, out=tmp)
            np.logical_xor(dbit, tmp, out=dbit)
        else:
            np.right_shift(y, 8, out=y)  # the serial float32 draw is y * 2**-24
            np.greater_equal(y, k_ab, out=sbit)
            np.greater_equal(y, k_a, out=dbit)
            np.less(y, k_lt_ab, out=tmp)
            np.logical_and(dbit, tmp, out=dbit)
            np.greater_equal(y, k_abc, out=tmp)
            np.logical_or(dbit, tmp, out=dbit)
        np.left_shift(src, 1, out=src)
        np.bitwise_or(src, sbit, out=src)
        np.left_shift(dst, 1, out=dst)
        np.bitwise_or(dst, dbit, out=dst)
    if perm is None:
        src_out[lo:hi] = src
        dst_out[lo:hi] = dst
    else:
        np.take(perm, src, out=src_out[lo:hi], mode="clip")  # all in range
        np.take(perm, dst, out=dst_out[lo:hi], mode="clip")


def grid2d(
    w: int, h: int, seed: int = DEFAULT_SEED, raw: bool = False
) -> CSRGraph | COOGraph:
    """A ``w x h`` 4-neighbour grid; node ``(x, y)`` is ``y * w + x``.

    Each undirected edge gets one uniform weight in ``[1, 64]``; the raw form
    holds only the right/down direction.
    """
    if w < 0 or h < 0:
        raise ValueError(f"grid dimensions must be >= 0, got {w}x{h}")
    rng = np.random.default_rng(seed)
    ids = np.arange(w * h, dtype=np.int64).reshape(h, w)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    coo = COOGraph(w * h, src, dst, _weights(rng, src.shape[0]))
    return coo if raw else clean(coo, symmetrize=True)


def uniform_random(
    n: int,
    m: int,
    seed: int = DEFAULT_SEED,
    connected: bool = False,
    raw: bool = False,
) -> CSRGraph | COOGraph:
    """``m`` uniformly random edges among ``n`` nodes, symmetrized.

    Isolated nodes are kept unless ``connected=True``, which adds a random
    spanning path first.  ``raw=True`` returns the uncleaned edges and
    deliberately adds duplicate edges (with other weights) and self loops.
    """
    if n < 0 or m < 0:
        raise ValueError(f"n and m must be >= 0, got n={n}, m={m}")
    if n == 0 and m > 0:
        raise ValueError("cannot place edges in a graph with no nodes")
    rng = np.random.default_rng(seed)
    src = rng.integers(0, max(n, 1), size=m, dtype=np.int64)
    dst = rng.integers(0, max(n, 1), size=m, dtype=np.int64)
    if connected and n > 1:
        perm = rng.permutation(n)
        src, dst = np.concatenate([perm[:-1], src]), np.concatenate([perm[1:], dst])
    weights = _weights(rng, src.shape[0])
    if raw and m > 0:
        k = max(1, m // 10)
        pick = rng.integers(0, src.shape[0], size=k)
        loops = rng.integers(0, n, size=k, dtype=np.int64)
        src = np.concatenate([src, src[pick], loops])
        dst = np.concatenate([dst, dst[pick], loops])
        weights = np.concatenate([weights, _weights(rng, k), _weights(rng, k)])
        order = rng.permutation(src.shape[0])
        src, dst, weights = src[order], dst[order], weights[order]
    coo = COOGraph(n, src, dst, weights)
    return coo if raw else clean(coo, symmetrize=True)


def path_graph(
    n: int, seed: int = DEFAULT_SEED, raw: bool = False
) -> CSRGraph | COOGraph:
    """A chain ``0 - 1 - ... - n-1`` (diameter ``n - 1``: one BFS level per node)."""
    if n < 1:
        raise ValueError(f"a path needs at least 1 node, got {n}")
    rng = np.random.default_rng(seed)
    src = np.arange(n - 1, dtype=np.int64)
    coo = COOGraph(n, src, src + 1, _weights(rng, n - 1))
    return coo if raw else clean(coo, symmetrize=True)


def star(n: int, seed: int = DEFAULT_SEED, raw: bool = False) -> CSRGraph | COOGraph:
    """Node 0 joined to each of the other ``n - 1`` nodes (one hub of degree
    ``n - 1``, every other node of degree 1)."""
    if n < 1:
        raise ValueError(f"a star needs at least 1 node, got {n}")
    rng = np.random.default_rng(seed)
    leaves = np.arange(1, n, dtype=np.int64)
    coo = COOGraph(n, np.zeros(n - 1, dtype=np.int64), leaves, _weights(rng, n - 1))
    return coo if raw else clean(coo, symmetrize=True)


def hub_graph(
    n: int, hubs: int = 1, seed: int = DEFAULT_SEED, raw: bool = False
) -> CSRGraph | COOGraph:
    """``hubs`` hub nodes (``0 .. hubs-1``) joined to every node, over a
    uniform random background of ``2 n`` edges: a few nodes of degree about
    ``n`` among many of degree about 5 (skewed sums and contention)."""
    if n < 1:
        raise ValueError(f"a hub graph needs at least 1 node, got {n}")
    if not 1 <= hubs <= n:
        raise ValueError(f"hub count must be in 1..{n}, got {hubs}")
    rng = np.random.default_rng(seed)
    hub_src = np.repeat(np.arange(hubs, dtype=np.int64), n)
    hub_dst = np.tile(np.arange(n, dtype=np.int64), hubs)
    bg_src = rng.integers(0, n, size=2 * n, dtype=np.int64)
    bg_dst = rng.integers(0, n, size=2 * n, dtype=np.int64)
    src = np.concatenate([hub_src, bg_src])
    dst = np.concatenate([hub_dst, bg_dst])
    coo = COOGraph(n, src, dst, _weights(rng, src.shape[0]))
    return coo if raw else clean(coo, symmetrize=True)


def mostly_isolated(
    n: int,
    m: int,
    active: int | None = None,
    seed: int = DEFAULT_SEED,
    raw: bool = False,
) -> CSRGraph | COOGraph:
    """``m`` uniformly random edges among ``active`` randomly chosen nodes of
    ``n`` (default ``n // 10``): every other node is isolated (a search from
    one of them reaches nothing; a topology-driven kernel still visits them)."""
    if n < 1:
        raise ValueError(f"a graph needs at least 1 node, got {n}")
    active = max(1, n // 10) if active is None else active
    if not 1 <= active <= n or m < 0:
        raise ValueError(f"need 1 <= active <= {n} and m >= 0, got {active}, {m}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(n, size=active, replace=False).astype(np.int64)
    src = chosen[rng.integers(0, active, size=m)]
    dst = chosen[rng.integers(0, active, size=m)]
    coo = COOGraph(n, src, dst, _weights(rng, m))
    return coo if raw else clean(coo, symmetrize=True)


def islands(
    n: int, size: int, seed: int = DEFAULT_SEED, raw: bool = False
) -> CSRGraph | COOGraph:
    """``n`` nodes in connected components of ``size`` nodes (the last one
    smaller): each a random tree plus as many random chords, node ids shuffled
    so that components interleave. The largest component is small: a search
    from any source stays in its island, whatever the graph's size."""
    if n < 1 or size < 1:
        raise ValueError(f"islands need n >= 1 and size >= 1, got {n}, {size}")
    rng = np.random.default_rng(seed)
    pos = np.arange(n, dtype=np.int64)
    base = pos - pos % size  # first position of each node's island
    offset = pos - base
    tree = offset > 0  # each later member joins a random earlier one
    t_src = pos[tree]
    t_dst = base[tree] + (rng.random(int(tree.sum())) * offset[tree]).astype(np.int64)
    span = np.minimum(size, n - base)  # island sizes, per node
    c_src = pos
    c_dst = base + (rng.random(n) * span).astype(np.int64)
    perm = rng.permutation(n).astype(np.int64)
    src = perm[np.concatenate([t_src, c_src])]
    dst = perm[np.concatenate([t_dst, c_dst])]
    coo = COOGraph(n, src, dst, _weights(rng, src.shape[0]))
    return coo if raw else clean(coo, symmetrize=True)


# ------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class GraphSpec:
    """A parsed generator spec: ``rmat:20``, ``grid:64x32``, ``random:1000:8000``,
    ``path:1000``, ``star:1000``, ``hub:1000:2``, ``isolated:1000:800:100``,
    ``islands:1000:16``."""

    kind: str
    params: tuple[int, ...]
    seed: int = DEFAULT_SEED

    @property
    def name(self) -> str:
        """Canonical text form (usable as a file name)."""
        if self.kind == "grid":
            body = f"grid:{self.params[0]}x{self.params[1]}"
        else:
            body = ":".join([self.kind, *map(str, self.params)])
        return body if self.seed == DEFAULT_SEED else f"{body}@{self.seed}"


SPEC_FORMS = (
    "rmat:SCALE[:EDGE_FACTOR], grid:WxH, random:N:M, path:N, star:N, hub:N[:HUBS], "
    "isolated:N:M[:ACTIVE], islands:N:SIZE (each optionally followed by @SEED)"
)
"""The generator spec forms, for messages and help texts."""

_KINDS = ("rmat", "grid", "random", "path", "star", "hub", "isolated", "islands")


def parse_spec(text: str) -> GraphSpec | None:
    """Parse a generator spec; ``None`` if ``text`` does not look like one.

    Raises :class:`ValueError` for a known generator with bad parameters.
    """
    head, _, rest = text.partition(":")
    if head not in _KINDS:
        return None
    body, _, seed_text = rest.partition("@")
    seed = DEFAULT_SEED
    if seed_text:
        if not seed_text.isdigit():
            raise ValueError(f"bad seed in graph spec {text!r}; forms: {SPEC_FORMS}")
        seed = int(seed_text)
    if head == "rmat" and re.fullmatch(r"\d+(:\d+)?", body):
        params = tuple(int(x) for x in body.split(":"))
        if len(params) == 1:
            params = (params[0], 16)
        if params[0] > 30:
            raise ValueError(f"rmat scale {params[0]} is too large (max 30)")
        return GraphSpec("rmat", params, seed)
    if head == "grid" and (mt := re.fullmatch(r"(\d+)x(\d+)", body)):
        w, h = int(mt[1]), int(mt[2])
        if w == 0 or h == 0:
            raise ValueError(
                f"graph spec {text!r}: grid dimensions must be at least 1x1"
            )
        return GraphSpec("grid", (w, h), seed)
    if head == "random" and (mt := re.fullmatch(r"(\d+):(\d+)", body)):
        n, m = int(mt[1]), int(mt[2])
        if n == 0 and m > 0:
            raise ValueError(f"graph spec {text!r}: edges need at least one node")
        return GraphSpec("random", (n, m), seed)
    if head in ("path", "star") and body.isdigit():
        if int(body) == 0:
            raise ValueError(f"graph spec {text!r}: a {head} needs at least 1 node")
        return GraphSpec(head, (int(body),), seed)
    if head == "hub" and re.fullmatch(r"\d+(:\d+)?", body):
        params = tuple(int(x) for x in body.split(":"))
        if len(params) == 1:
            params = (params[0], 1)
        n, hubs = params
        if n == 0 or not 1 <= hubs <= n:
            raise ValueError(
                f"graph spec {text!r}: hub:N:HUBS needs N >= 1 and 1 <= HUBS <= N"
            )
        return GraphSpec("hub", params, seed)
    if head == "isolated" and re.fullmatch(r"\d+:\d+(:\d+)?", body):
        params = tuple(int(x) for x in body.split(":"))
        if len(params) == 2:
            params = (*params, max(1, params[0] // 10))
        n, _, active = params
        if n == 0 or not 1 <= active <= n:
            raise ValueError(
                f"graph spec {text!r}: isolated:N:M:ACTIVE needs N >= 1 and "
                "1 <= ACTIVE <= N"
            )
        return GraphSpec("isolated", params, seed)
    if head == "islands" and (mt := re.fullmatch(r"(\d+):(\d+)", body)):
        n, size = int(mt[1]), int(mt[2])
        if n == 0 or size == 0:
            raise ValueError(f"graph spec {text!r}: islands:N:SIZE needs N, SIZE >= 1")
        return GraphSpec("islands", (n, size), seed)
    raise ValueError(f"bad graph spec {text!r}; forms: {SPEC_FORMS}")


def generate(spec: GraphSpec | str) -> CSRGraph:
    """Build the cleaned graph a spec describes."""
    if isinstance(spec, str):
        parsed = parse_spec(spec)
        if parsed is None:
            raise ValueError(f"not a graph spec: {spec!r}; forms: {SPEC_FORMS}")
        spec = parsed
    if spec.kind == "rmat":
        g = rmat(spec.params[0], spec.params[1], seed=spec.seed)
    elif spec.kind == "grid":
        g = grid2d(spec.params[0], spec.params[1], seed=spec.seed)
    elif spec.kind == "path":
        g = path_graph(spec.params[0], seed=spec.seed)
    elif spec.kind == "star":
        g = star(spec.params[0], seed=spec.seed)
    elif spec.kind == "hub":
        g = hub_graph(spec.params[0], spec.params[1], seed=spec.seed)
    elif spec.kind == "isolated":
        n, m, active = spec.params
        g = mostly_isolated(n, m, active, seed=spec.seed)
    elif spec.kind == "islands":
        g = islands(spec.params[0], spec.params[1], seed=spec.seed)
    else:
        g = uniform_random(spec.params[0], spec.params[1], seed=spec.seed)
    assert isinstance(g, CSRGraph)
    return g
