"""Graphs in CSR form: loaders and writers (.gr, .mtx, edge lists), cleaning.

Every loader goes through :func:`clean`, the single cleaning path: it drops
self loops and duplicate edges (keeping the minimum weight), optionally
symmetrizes, and sorts each adjacency list by destination.  Bad input raises
:class:`GraphFormatError` with the file name and a readable message.

In-memory graphs take the same path: :meth:`CSRGraph.from_edges` (numpy
``src``/``dst`` arrays, optional weights), :meth:`CSRGraph.from_edge_index`
(a PyG-style ``2 x E`` array or tensor), :meth:`CSRGraph.from_scipy` (any
scipy sparse matrix or array) and :meth:`CSRGraph.from_networkx`;
:func:`as_graph` picks one of them for whatever it is given.
"""

from __future__ import annotations

import io
import itertools
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from . import _parallel

__all__ = [
    "COOGraph",
    "CSRGraph",
    "GraphFormatError",
    "as_graph",
    "check_min_weight",
    "clean",
    "load_graph",
    "read_edge_list",
    "read_gr",
    "read_mtx",
    "write_edge_list",
    "write_gr",
    "write_graph",
    "write_mtx",
    "EDGE_LIST_SUFFIXES",
]

#: File suffixes read as whitespace-separated edge lists.
EDGE_LIST_SUFFIXES = (".txt", ".el", ".edges", ".tsv", ".wel")

_GR_HEADER = struct.Struct("<4Q")
_INT32_MAX = np.iinfo(np.int32).max
_MEMORY = "<in-memory graph>"


class GraphFormatError(Exception):
    """A graph file (or in-memory edge set) that cannot be used."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


@dataclass
class CSRGraph:
    """A directed graph in CSR form (an undirected one stores both directions).

    ``row_start`` has ``num_nodes + 1`` int64 entries; the out-edges of node
    ``n`` are ``edge_dst[row_start[n]:row_start[n + 1]]`` (int64) with weights
    ``weights[...]`` (int32), or ``weights is None`` for an unweighted graph.
    """

    num_nodes: int
    row_start: np.ndarray
    edge_dst: np.ndarray
    weights: np.ndarray | None = None
    content_key: str | None = field(default=None, compare=False, repr=False)
    """A name for this content that is cheaper than hashing it (set by
    :func:`irgl_runner.graph_args.resolve_graph` from the file it read: its
    path, size, modification time and the load's options), or None;
    :func:`irgl_runner.partition.graph_key` uses it. Whoever changes the
    arrays must reset it."""

    @property
    def num_edges(self) -> int:
        """Number of stored (directed) edges."""
        return int(self.edge_dst.shape[0])

    def degrees(self) -> np.ndarray:
        """Out-degree of every node (int64)."""
        return np.diff(self.row_start)

    def max_degree(self) -> int:
        """The largest out-degree (0 without nodes)."""
        return int(self.degrees().max(initial=0))

    def edge_src(self) -> np.ndarray:
        """Source node of every edge (int64), in CSR order."""
        return np.repeat(np.arange(self.num_nodes, dtype=np.int64), self.degrees())

    def weights_or_ones(self) -> np.ndarray:
        """The edge weights, or all ones for an unweighted graph (int32)."""
        if self.weights is None:
            return np.ones(self.num_edges, dtype=np.int32)
        return self.weights

    def to_coo(self) -> COOGraph:
        """The same edges as a :class:`COOGraph`."""
        return COOGraph(
            self.num_nodes,
            self.edge_src(),
            self.edge_dst.copy(),
            None if self.weights is None else self.weights.copy(),
        )

    def to_scipy(self, weighted: bool = True):  # -> scipy.sparse.csr_matrix
        """A scipy CSR matrix ``A[u, v] = w(u, v)`` (1 where unweighted)."""
        import scipy.sparse as sp

        data = (
            self.weights_or_ones()
            if weighted
            else np.ones(self.num_edges, dtype=np.int32)
        )
        return sp.csr_matrix(
            (data.astype(np.int64), self.edge_dst, self.row_start),
            shape=(self.num_nodes, self.num_nodes),
        )

    def validate(self, source: str | os.PathLike[str] = _MEMORY) -> None:
        """Check the CSR invariants; raise :class:`GraphFormatError` if broken."""
        n, rs = self.num_nodes, self.row_start
        if n < 0:
            raise GraphFormatError(source, f"negative node count {n}")
        if rs.shape != (n + 1,):
            raise GraphFormatError(
                source,
                f"row_start has {rs.shape[0]} entries, expected {n + 1}",
            )
        if rs[0] != 0 or rs[-1] != self.num_edges:
            raise GraphFormatError(
                source,
                f"row_start runs from {int(rs[0])} to {int(rs[-1])}, "
                f"expected 0 to {self.num_edges} (the edge count)",
            )
        if n and np.any(np.diff(rs) < 0):
            bad = int(np.flatnonzero(np.diff(rs) < 0)[0])
            raise GraphFormatError(source, f"edge offsets decrease at node {bad}")
        _check_range(source, self.edge_dst, n, "destination")
        if self.weights is not None and self.weights.shape != self.edge_dst.shape:
            raise GraphFormatError(
                source, f"{self.weights.shape[0]} weights for {self.num_edges} edges"
            )

    # -- in-memory constructors (all through :func:`clean`) -----------------

    @classmethod
    def from_edges(
        cls,
        src: object,
        dst: object,
        weights: object = None,
        num_nodes: int | None = None,
        symmetrize: bool = False,
    ) -> CSRGraph:
        """A cleaned graph of the edges ``src[i] -> dst[i]`` (weight
        ``weights[i]``, or unweighted).

        The arrays may be numpy arrays, lists, or CPU/CUDA tensors and CuPy
        arrays (copied to the host); ids are 0-based integers.  The node count
        is ``max id + 1`` unless ``num_nodes`` is given.  ``symmetrize`` adds
        the reverse of every edge (for undirected data stored once).
        """
        return _from_edges(src, dst, weights, num_nodes, symmetrize, "<edge list>")

    @classmethod
    def from_edge_index(
        cls,
        edge_index: object,
        weights: object = None,
        num_nodes: int | None = None,
        symmetrize: bool = False,
    ) -> CSRGraph:
        """A cleaned graph of a PyTorch Geometric style ``edge_index``: a
        ``2 x E`` integer array or tensor (row 0 sources, row 1
        destinations); ``weights`` (E values, e.g. ``edge_attr``) is optional.
        """
        source = "<edge_index>"
        arr = _host_array(edge_index, "edge_index", source)
        if arr.ndim != 2 or arr.shape[0] != 2:
            hint = (
                " (it looks like E x 2: pass its transpose)"
                if arr.ndim == 2 and arr.shape[1] == 2
                else ""
            )
            raise GraphFormatError(
                source, f"edge_index has shape {arr.shape}, expected (2, E){hint}"
            )
        return _from_edges(arr[0], arr[1], weights, num_nodes, symmetrize, source)

    @classmethod
    def from_scipy(
        cls, matrix: object, symmetrize: bool = False, weighted: bool = True
    ) -> CSRGraph:
        """A cleaned graph of a square scipy sparse matrix or array (any
        format): every stored entry ``A[u, v]`` is an edge ``u -> v`` whose
        weight is the (integral) value; ``weighted=False`` or a boolean
        matrix gives an unweighted graph."""
        import scipy.sparse as sp

        source = "<scipy sparse matrix>"
        if not sp.issparse(matrix):
            raise TypeError(
                f"CSRGraph.from_scipy needs a scipy sparse matrix or array, "
                f"got {type(matrix).__name__}"
            )
        coo = sp.coo_matrix(cast(Any, matrix))
        rows, cols = cast(tuple[int, int], coo.shape)
        if rows != cols:
            raise GraphFormatError(
                source, f"matrix is {rows}x{cols}; a graph needs a square matrix"
            )
        data = np.asarray(coo.data)
        weights = (
            _weight_values(data, source)
            if weighted and data.dtype != np.bool_
            else None
        )
        return clean(
            COOGraph(rows, np.asarray(coo.row), np.asarray(coo.col), weights),
            symmetrize=symmetrize,
            source=source,
        )

    @classmethod
    def from_networkx(
        cls, graph: object, weight: str | None = "weight", symmetrize: bool = False
    ) -> CSRGraph:
        """A cleaned graph of a networkx graph (any of its four classes).

        Nodes that are exactly ``0..n-1`` keep their ids; other node labels
        are numbered in ``graph.nodes`` order.  An undirected graph gives both
        directions of every edge; a directed one its edges as they are, unless
        ``symmetrize``.  Edge attribute ``weight`` (integral; 1 where an edge
        lacks it) gives the weights, unless no edge has it or ``weight`` is
        None (unweighted).  Parallel edges keep the smallest weight.
        """
        source = "<networkx graph>"
        if not all(hasattr(graph, a) for a in ("nodes", "edges", "is_directed")):
            raise TypeError(
                f"CSRGraph.from_networkx needs a networkx graph, "
                f"got {type(graph).__name__}"
            )
        g = cast(Any, graph)
        nodes = list(g.nodes)
        n = len(nodes)
        identity = all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in nodes
        ) and set(nodes) == set(range(n))
        index: dict[object, int] = (
            {v: int(cast(int, v)) for v in nodes}
            if identity
            else {v: i for i, v in enumerate(nodes)}
        )
        if weight is None:
            triples = [(u, v, None) for u, v in g.edges()]
        else:
            triples = list(g.edges(data=weight, default=None))
        src = np.fromiter((index[u] for u, _, _ in triples), np.int64, len(triples))
        dst = np.fromiter((index[v] for _, v, _ in triples), np.int64, len(triples))
        weights = None
        if any(w is not None for _, _, w in triples):
            try:
                values = np.array(
                    [1 if w is None else w for _, _, w in triples], dtype=np.float64
                )
            except (TypeError, ValueError):
                raise GraphFormatError(
                    source, f"edge attribute {weight!r} has non-numeric values"
                ) from None
            weights = _weight_values(values, source)
        symmetric = symmetrize or not g.is_directed()
        return clean(
            COOGraph(n, src, dst, weights), symmetrize=symmetric, source=source
        )


@dataclass
class COOGraph:
    """An uncleaned edge set: parallel ``src``/``dst`` arrays plus optional weights."""

    num_nodes: int
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None = None

    @property
    def num_edges(self) -> int:
        """Number of (raw) edges."""
        return int(self.src.shape[0])


def _check_range(
    source: str | os.PathLike[str], ids: np.ndarray, n: int, what: str
) -> None:
    """Raise if any node id is outside ``[0, n)``."""
    if ids.size == 0:
        return
    lo, hi = _parallel.minmax(ids)
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise GraphFormatError(
            source,
            f"{what} node id {bad} out of range for {n} nodes (valid ids 0..{n - 1})",
        )


def clean(
    graph: CSRGraph | COOGraph,
    symmetrize: bool = True,
    source: str | os.PathLike[str] = _MEMORY,
) -> CSRGraph:
    """Drop self loops and duplicate edges, optionally symmetrize, sort rows.

    Duplicates keep the minimum weight (after symmetrization ``u->v`` and
    ``v->u`` therefore carry the same weight).  Returns a new CSR graph.
    """
    coo = graph.to_coo() if isinstance(graph, CSRGraph) else graph
    n = int(coo.num_nodes)
    if n < 0:
        raise GraphFormatError(source, f"negative node count {n}")
    if n >= 2**31:
        raise GraphFormatError(source, f"{n} nodes is too many (limit 2^31 - 1)")
    src = np.asarray(coo.src, dtype=np.int64)
    dst = np.asarray(coo.dst, dtype=np.int64)
    if src.shape != dst.shape or src.ndim != 1:
        raise GraphFormatError(
            source, f"src/dst arrays differ in shape: {src.shape} vs {dst.shape}"
        )
    w = None
    wrange = (0, 0)
    if coo.weights is not None:
        w = np.asarray(coo.weights)
        if w.shape != src.shape:
            raise GraphFormatError(
                source, f"{w.shape[0]} weights for {src.shape[0]} edges"
            )
        wrange = _parallel.minmax(w) if w.size else (0, 0)
        if wrange[0] < np.iinfo(np.int32).min or wrange[1] > _INT32_MAX:
            raise GraphFormatError(source, "edge weights do not fit in int32")
        w = w.astype(np.int32)
    _check_range(source, src, n, "source")
    _check_range(source, dst, n, "destination")
    if src.shape[0] >= 2 * _parallel.chunk_size():
        wlo, wbits = 0, 0
        if w is not None:
            wlo = wrange[0]
            wbits = (wrange[1] - wrange[0]).bit_length()
        if (n * n) << wbits < 2**62:
            return _clean_parallel(n, src, dst, w, wlo, wbits, symmetrize)

    keep = src != dst
    src, dst = src[keep], dst[keep]
    if w is not None:
        w = w[keep]
    if symmetrize:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        if w is not None:
            w = np.concatenate([w, w])

    key = src * n + dst  # n < 2^31, so n * n fits in int64
    wbits = (
        (int(w.max()) - int(w.min())).bit_length() if w is not None and w.size else 0
    )
    if w is None:
        key = np.unique(key)
        out_w = None
    elif w.size == 0:
        out_w = w
    elif (n * n) << wbits < 2**62:
        # Fast path: pack (edge, weight) into one int64 and use a plain sort;
        # the first entry of each edge's run then holds its minimum weight.
        wlo = int(w.min())
        packed = np.sort((key << wbits) | (w.astype(np.int64) - wlo))
        key = packed >> wbits
        first = np.empty(key.shape[0], dtype=bool)
        first[:1] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        packed = packed[first]
        key = key[first]
        out_w = ((packed & ((1 << wbits) - 1)) + wlo).astype(np.int32)
    else:
        order = np.argsort(key, kind="stable")
        key = key[order]
        first = np.empty(key.shape[0], dtype=bool)
        first[:1] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        out_w = np.minimum.reduceat(w[order], starts)
        key = key[starts]
    # key is sorted: row n spans the keys in [n * num_nodes, (n + 1) * num_nodes).
    row_start = np.searchsorted(key, np.arange(n + 1, dtype=np.int64) * n).astype(
        np.int64
    )
    row_start[-1] = key.shape[0]
    edge_dst = key - np.repeat(np.arange(n, dtype=np.int64) * n, np.diff(row_start))
    return CSRGraph(n, row_start, edge_dst.astype(np.int64, copy=False), out_w)


def _clean_parallel(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    w: np.ndarray | None,
    wlo: int,
    wbits: int,
    symmetrize: bool,
) -> CSRGraph:
    """:func:`clean`'s packed-key path for large inputs, in threads.

    The serial path sorts ``(src * n + dst) << wbits | (w - wlo)`` once and
    keeps the first entry of each edge; its result depends only on the set of
    packed values, so here (1) each chunk of the input packs and sorts its
    edges, (2) sampled quantiles cut the key space at row starts into
    buckets, (3) each bucket gathers its runs from every chunk, sorts and drops
    duplicates (equal edges never straddle a bucket), (4) the buckets are
    unpacked into their slices of the CSR arrays.  ``wlo``/``wbits`` may come
    from all weights (self loops included): any range that fits gives the
    same minimum weights.
    """
    size = _parallel.chunk_size()

    def pack(span: tuple[int, int]) -> np.ndarray:
        lo, hi = span
        s, d = src[lo:hi], dst[lo:hi]
        keep = s != d
        s, d = s[keep], d[keep]
        keys = [s * n + d, d * n + s] if symmetrize else [s * n + d]
        if w is None:
            packed = np.concatenate(keys)
        else:
            wk = w[lo:hi][keep].astype(np.int64) - wlo
            packed = np.concatenate([(k << wbits) | wk for k in keys])
        packed.sort()
        return packed

    runs = _parallel.pmap(pack, _parallel.spans(0, src.shape[0], size))

    # Bucket bounds: row starts near quantiles of a sample of the sorted runs.
    buckets = 4 * _parallel.threads()
    sample = np.sort(
        np.concatenate([r[:: max(1, r.shape[0] // (4 * buckets))] for r in runs])
    )
    rows = np.empty(0, dtype=np.int64)
    if sample.size:
        picks = sample[(np.arange(1, buckets) * sample.shape[0]) // buckets]
        rows = np.unique((picks >> wbits) // n)
    bounds = np.concatenate([[0], (rows[rows > 0] * n) << wbits, [2**62]])
    row_bounds = np.concatenate([[0], rows[rows > 0], [n]])
    cuts = [np.searchsorted(r, bounds) for r in runs]

    def dedup(b: int) -> np.ndarray:
        packed = np.concatenate(
            [r[c[b] : c[b + 1]] for r, c in zip(runs, cuts, strict=True)]
        )
        packed.sort()  # (timsort merging the runs measured slower)
        first = np.empty(packed.shape[0], dtype=bool)
        first[:1] = True
        key = packed >> wbits
        np.not_equal(key[1:], key[:-1], out=first[1:])
        return packed[first]

    uniq = _parallel.pmap(dedup, range(len(bounds) - 1))
    runs.clear()  # the sorted runs are no longer needed
    offsets = np.concatenate([[0], np.cumsum([u.shape[0] for u in uniq])])
    edge_dst = np.empty(int(offsets[-1]), dtype=np.int64)
    out_w = None if w is None else np.empty(edge_dst.shape[0], dtype=np.int32)
    degree = np.zeros(n, dtype=np.int64)

    def unpack(b: int) -> None:
        packed, lo, hi = uniq[b], offsets[b], offsets[b + 1]
        key = packed >> wbits
        row = key // n
        np.subtract(key, row * n, out=edge_dst[lo:hi])
        if out_w is not None:
            out_w[lo:hi] = (packed & ((1 << wbits) - 1)) + wlo
        r0, r1 = int(row_bounds[b]), int(row_bounds[b + 1])
        degree[r0:r1] = np.bincount(row - r0, minlength=r1 - r0)

    _parallel.pmap(unpack, range(len(uniq)))
    row_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=row_start[1:])
    return CSRGraph(n, row_start, edge_dst, out_w)


# ------------------------------------------------------------ in-memory graphs


def _host_array(values: object, what: str, source: str) -> np.ndarray:
    """``values`` as a numpy array: numpy and array-likes as they are, torch
    tensors and CuPy/Numba CUDA arrays copied to the host."""
    module = type(values).__module__
    obj = cast(Any, values)
    try:
        if module.startswith("torch") and hasattr(obj, "detach"):
            return np.asarray(obj.detach().cpu().numpy())
        if hasattr(obj, "__cuda_array_interface__"):
            if hasattr(obj, "get"):  # CuPy
                return np.asarray(obj.get())
            if hasattr(obj, "copy_to_host"):  # Numba
                return np.asarray(obj.copy_to_host())
        arr = np.asarray(obj)
    except (TypeError, ValueError) as e:
        raise GraphFormatError(source, f"{what} is not an array: {e}") from None
    if arr.dtype == object:
        raise GraphFormatError(
            source, f"{what} is not a numeric array (got {type(values).__name__})"
        )
    return arr


def _integral(arr: np.ndarray, what: str, source: str) -> np.ndarray:
    """``arr`` (integers, or floats with integral values) as int64."""
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f" and arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise GraphFormatError(source, f"{what} has non-finite values")
        if not np.array_equal(arr, np.rint(arr)):
            raise GraphFormatError(source, f"{what} has non-integer values")
        if np.abs(arr).max() >= 2.0**63:
            raise GraphFormatError(source, f"{what} has values beyond 64 bits")
        return arr.astype(np.int64)
    raise GraphFormatError(source, f"{what} must hold integers, got dtype {arr.dtype}")


def _weight_values(values: np.ndarray, source: str) -> np.ndarray:
    """Edge weights as int64 (range-checked later by :func:`clean`)."""
    if values.dtype == np.bool_:
        values = values.astype(np.int64)
    if values.dtype.kind == "c":
        raise GraphFormatError(source, "complex-valued edge weights")
    return _integral(values, "edge weights", source)


def _from_edges(
    src: object,
    dst: object,
    weights: object,
    num_nodes: int | None,
    symmetrize: bool,
    source: str,
) -> CSRGraph:
    """The shared body of :meth:`CSRGraph.from_edges` and ``from_edge_index``."""
    s = _integral(_host_array(src, "src", source), "src", source)
    d = _integral(_host_array(dst, "dst", source), "dst", source)
    if s.ndim != 1 or s.shape != d.shape:
        raise GraphFormatError(
            source,
            f"src and dst must be 1-D arrays of one length, got shapes "
            f"{s.shape} and {d.shape}",
        )
    w = None
    if weights is not None:
        w = _weight_values(_host_array(weights, "weights", source).ravel(), source)
        if w.shape != s.shape:
            raise GraphFormatError(
                source, f"{w.shape[0]} weights for {s.shape[0]} edges"
            )
    if num_nodes is None:
        n = int(max(s.max(), d.max())) + 1 if s.size else 0
    elif isinstance(num_nodes, (int, np.integer)) and not isinstance(num_nodes, bool):
        n = int(num_nodes)
    else:
        raise TypeError(f"num_nodes must be an int, got {type(num_nodes).__name__}")
    return clean(
        COOGraph(n, s, d, w),
        symmetrize=symmetrize,
        source=source,
    )


def as_graph(graph: object) -> CSRGraph:
    """``graph`` as a :class:`CSRGraph`: a CSRGraph as it is, a
    :class:`COOGraph`, scipy sparse matrix or networkx graph converted
    through :func:`clean` (directed data stays directed); anything else
    raises ``TypeError`` saying what to pass."""
    if isinstance(graph, CSRGraph):
        return graph
    if isinstance(graph, COOGraph):
        return clean(graph, symmetrize=False)
    module = type(graph).__module__
    if module.startswith("scipy.sparse"):
        return CSRGraph.from_scipy(graph)
    if module.startswith("networkx"):
        return CSRGraph.from_networkx(graph)
    hint = ""
    if hasattr(graph, "shape") or isinstance(graph, (list, tuple)):
        hint = (
            "; for edge arrays use CSRGraph.from_edges(src, dst[, weights]) or "
            "CSRGraph.from_edge_index(edge_index)"
        )
    raise TypeError(
        "expected a graph: an irgl_runner.graphs.CSRGraph (load_graph, "
        "generators.generate), a scipy sparse matrix or a networkx graph, "
        f"got {type(graph).__name__}{hint}"
    )


def check_min_weight(
    graph: CSRGraph,
    minimum: int,
    why: str,
    source: str | os.PathLike[str] = _MEMORY,
) -> None:
    """Raise :class:`GraphFormatError` naming the first edge whose weight
    (1 where unweighted) is below ``minimum``; ``why`` ends the message."""
    if graph.weights is None:
        if minimum <= 1 or graph.num_edges == 0:
            return
        weights = graph.weights_or_ones()
    else:
        weights = graph.weights
    if weights.size == 0 or int(weights.min()) >= minimum:
        return
    e = int(np.argmax(weights < minimum))
    u = int(np.searchsorted(graph.row_start, e, side="right")) - 1
    raise GraphFormatError(
        source,
        f"edge {u} -> {int(graph.edge_dst[e])} has weight {int(weights[e])}; {why}",
    )


# --------------------------------------------------------------------------- .gr


def read_gr(path: str | os.PathLike[str]) -> CSRGraph:
    """Read a Galois binary ``.gr`` (version 1) file as is (no cleaning)."""
    p = Path(path)
    data = _map_bytes(p)
    if len(data) < _GR_HEADER.size:
        raise GraphFormatError(
            p, f"file is {len(data)} bytes, too short for the 32-byte .gr header"
        )
    version, esize, n, m = _GR_HEADER.unpack_from(bytes(data[: _GR_HEADER.size]), 0)
    if version != 1:
        raise GraphFormatError(
            p, f"unsupported .gr version {version} (only version 1 is supported)"
        )
    if esize not in (0, 4):
        raise GraphFormatError(
            p, f"edge data size {esize} bytes is unsupported (expected 0 or 4)"
        )
    if n >= 2**31:
        raise GraphFormatError(p, f"header claims {n} nodes (limit 2^31 - 1)")
    pad = 4 if m % 2 else 0
    base = _GR_HEADER.size + 8 * n + 4 * m
    expected = base + (pad + esize * m if esize else 0)
    allowed = {expected} if esize else {base, base + pad}
    if len(data) not in allowed:
        what = "truncated" if len(data) < expected else "has trailing bytes"
        raise GraphFormatError(
            p,
            f"file {what}: {len(data)} bytes, but a header of {n} nodes, {m} edges and "
            f"{esize}-byte edge data needs {expected} bytes",
        )
    off = _GR_HEADER.size
    ends = np.frombuffer(data, dtype="<u8", count=n, offset=off)
    off += 8 * n
    if n and (np.any(ends[1:] < ends[:-1]) or int(ends[-1]) != m):
        if int(ends[-1]) != m:
            msg = f"last edge offset is {int(ends[-1])}, but the header says {m} edges"
        else:
            bad = int(np.flatnonzero(ends[1:] < ends[:-1])[0]) + 1
            msg = f"edge offsets decrease at node {bad}"
        raise GraphFormatError(p, msg)
    if n == 0 and m != 0:
        raise GraphFormatError(p, f"header says 0 nodes but {m} edges")
    row_start = np.zeros(n + 1, dtype=np.int64)
    row_start[1:] = ends
    dst = np.frombuffer(data, dtype="<u4", count=m, offset=off).astype(np.int64)
    off += 4 * m + pad
    _check_range(p, dst, n, "destination")
    weights = None
    if esize == 4:
        weights = np.frombuffer(data, dtype="<i4", count=m, offset=off).astype(np.int32)
    return CSRGraph(int(n), row_start, dst, weights)


def _write_atomically(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` through a temporary file beside it; an
    OSError names ``path`` (the file the caller asked for), not the temporary."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, p)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    finally:
        if tmp.exists():
            tmp.unlink()


def write_gr(path: str | os.PathLike[str], graph: CSRGraph) -> None:
    """Write ``graph`` as a Galois ``.gr`` version 1 file (atomically)."""
    graph.validate()
    n, m = graph.num_nodes, graph.num_edges
    if n and int(graph.edge_dst.max(initial=0)) >= 2**32:
        raise ValueError("node ids must fit in 32 bits for .gr")
    esize = 0 if graph.weights is None else 4

    def chunks() -> Iterator[bytes]:
        yield _GR_HEADER.pack(1, esize, n, m)
        yield np.ascontiguousarray(graph.row_start[1:], dtype="<u8").tobytes()
        yield np.ascontiguousarray(graph.edge_dst, dtype="<u4").tobytes()
        if m % 2:
            yield b"\0" * 4
        if graph.weights is not None:
            yield np.ascontiguousarray(graph.weights, dtype="<i4").tobytes()

    _write_atomically(path, chunks())


def _edge_lines(graph: CSRGraph, base: int) -> Iterator[bytes]:
    """``src dst [weight]`` lines (``base``-based ids), in blocks."""
    src = graph.edge_src() + base
    dst = graph.edge_dst + base
    cols = [src, dst] if graph.weights is None else [src, dst, graph.weights]
    table = np.column_stack([np.asarray(c, dtype=np.int64) for c in cols])
    fmt = " ".join(["%d"] * table.shape[1])
    block = 1 << 16
    for start in range(0, table.shape[0], block):
        buf = io.BytesIO()
        np.savetxt(buf, table[start : start + block], fmt=fmt)
        yield buf.getvalue()


def write_mtx(path: str | os.PathLike[str], graph: CSRGraph) -> None:
    """Write ``graph`` as a MatrixMarket coordinate file (general: every
    directed edge once, 1-based; ``integer`` with weights, else ``pattern``)."""
    graph.validate()
    field = "pattern" if graph.weights is None else "integer"
    n = graph.num_nodes
    header = (
        f"%%MatrixMarket matrix coordinate {field} general\n"
        f"% written by irgl_runner\n{n} {n} {graph.num_edges}\n"
    ).encode()
    _write_atomically(path, itertools.chain([header], _edge_lines(graph, 1)))


def write_edge_list(path: str | os.PathLike[str], graph: CSRGraph) -> None:
    """Write ``graph`` as an edge list: ``src dst [weight]`` per directed edge,
    0-based (what :func:`read_edge_list` reads)."""
    graph.validate()
    header = (
        f"# {graph.num_nodes} nodes, {graph.num_edges} directed edges; "
        "src dst" + ("" if graph.weights is None else " weight") + "\n"
    ).encode()
    _write_atomically(path, itertools.chain([header], _edge_lines(graph, 0)))


def write_graph(path: str | os.PathLike[str], graph: CSRGraph) -> None:
    """Write ``graph`` in the format its file suffix names: ``.gr``,
    ``.mtx`` or an edge-list suffix (:data:`EDGE_LIST_SUFFIXES`)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".gr":
        write_gr(path, graph)
    elif suffix == ".mtx":
        write_mtx(path, graph)
    elif suffix in EDGE_LIST_SUFFIXES:
        write_edge_list(path, graph)
    else:
        known = ", ".join((".gr", ".mtx", *EDGE_LIST_SUFFIXES))
        raise GraphFormatError(
            path, f"unknown graph file extension {Path(path).suffix!r} (known: {known})"
        )


# -------------------------------------------------------------------------- .mtx


def read_mtx(path: str | os.PathLike[str]) -> COOGraph:
    """Read a MatrixMarket file as raw edges ``row -> col`` (pattern => weight 1).

    Symmetric matrices come back with both triangles.  Non-integral values raise
    (use ``load_graph(..., weighted=False)`` to ignore values).
    """
    import scipy.io
    import scipy.sparse as sp

    p = Path(path)
    _read_bytes(p, probe=True)
    try:
        mat = scipy.io.mmread(str(p))
    except Exception as e:  # scipy raises ValueError/OSError/... on malformed files
        raise GraphFormatError(p, f"not a valid MatrixMarket file: {e}") from None
    if not sp.issparse(mat):
        mat = sp.coo_matrix(np.asarray(mat))
    mat = sp.coo_matrix(mat)
    rows, cols = cast(tuple[int, int], mat.shape)
    if rows != cols:
        raise GraphFormatError(
            p, f"matrix is {rows}x{cols}; a graph needs a square matrix"
        )
    data = np.asarray(mat.data)
    if np.iscomplexobj(data):
        raise GraphFormatError(p, "complex-valued matrices are not supported")
    if data.size and not np.all(np.isfinite(data)):
        raise GraphFormatError(p, "matrix has non-finite values")
    if data.size and not np.array_equal(data, np.rint(data)):
        raise GraphFormatError(
            p, "matrix has non-integer values; edge weights must be integers"
        )
    if data.size and (data.min() < np.iinfo(np.int32).min or data.max() > _INT32_MAX):
        raise GraphFormatError(p, "edge weights do not fit in int32")
    return COOGraph(
        rows, mat.row.astype(np.int64), mat.col.astype(np.int64), data.astype(np.int32)
    )


# -------------------------------------------------------------------- edge lists


def read_edge_list(
    path: str | os.PathLike[str], num_nodes: int | None = None
) -> COOGraph:
    """Read a SNAP-style edge list: ``src dst [weight]`` per line.

    Lines starting with ``#`` or ``%`` and blank lines are skipped.  All edge
    lines must have the same number of columns (2 or 3).  Node ids are 0-based;
    the node count is ``max id + 1`` unless ``num_nodes`` is given.
    """
    p = Path(path)
    raw = _read_bytes(p)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GraphFormatError(
            p, f"not a text file (byte {e.start} is not UTF-8)"
        ) from None
    numbered = [
        (i, s)
        for i, line in enumerate(text.splitlines(), 1)
        if (s := line.strip()) and s[0] not in "#%"
    ]
    if not numbered:
        n = num_nodes or 0
        e = np.zeros(0, dtype=np.int64)
        return COOGraph(n, e, e.copy(), None)
    ncols = len(numbered[0][1].split())
    if ncols not in (2, 3):
        ln, s = numbered[0]
        raise GraphFormatError(
            p, f"line {ln}: expected 'src dst [weight]', got {s[:60]!r}"
        )
    tokens = " ".join(s for _, s in numbered).split()
    if len(tokens) != ncols * len(numbered):
        for ln, s in numbered:
            if len(s.split()) != ncols:
                raise GraphFormatError(
                    p,
                    f"line {ln}: expected {ncols} columns like the first edge line, "
                    f"got {s[:60]!r}",
                )
    try:
        table = np.array(tokens).astype(np.int64).reshape(len(numbered), ncols)
    except (ValueError, OverflowError):
        for ln, s in numbered:
            for tok in s.split():
                try:
                    int(tok)
                except ValueError:
                    raise GraphFormatError(
                        p, f"line {ln}: {tok!r} is not an integer (in {s[:60]!r})"
                    ) from None
        raise GraphFormatError(p, "a number does not fit in 64 bits") from None
    src, dst = table[:, 0].copy(), table[:, 1].copy()
    ids_max = int(max(src.max(), dst.max()))
    ids_min = int(min(src.min(), dst.min()))
    if ids_min < 0:
        ln = numbered[int(np.flatnonzero((src < 0) | (dst < 0))[0])][0]
        raise GraphFormatError(p, f"line {ln}: negative node id {ids_min}")
    n = ids_max + 1 if num_nodes is None else num_nodes
    if ids_max >= n:
        ln = numbered[int(np.flatnonzero((src >= n) | (dst >= n))[0])][0]
        raise GraphFormatError(
            p, f"line {ln}: node id {ids_max} out of range for {n} nodes"
        )
    weights = None
    if ncols == 3:
        w = table[:, 2]
        if w.min() < np.iinfo(np.int32).min or w.max() > _INT32_MAX:
            raise GraphFormatError(p, "edge weights do not fit in int32")
        weights = w.astype(np.int32)
    return COOGraph(n, src, dst, weights)


# ---------------------------------------------------------------------- dispatch


def load_graph(
    path: str | os.PathLike[str],
    symmetrize: bool = True,
    weighted: bool = True,
) -> CSRGraph:
    """Load ``.gr``/``.mtx``/edge-list files, cleaned (see :func:`clean`).

    ``weighted=False`` drops the weights.  Unknown extensions raise
    :class:`GraphFormatError`.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    graph: CSRGraph | COOGraph
    if suffix == ".gr":
        graph = read_gr(p)
    elif suffix == ".mtx":
        graph = read_mtx(p)
    elif suffix in EDGE_LIST_SUFFIXES:
        graph = read_edge_list(p)
    else:
        known = ", ".join((".gr", ".mtx", *EDGE_LIST_SUFFIXES))
        raise GraphFormatError(
            p, f"unknown graph file extension {p.suffix!r} (known: {known})"
        )
    if not weighted:
        graph.weights = None
    return clean(graph, symmetrize=symmetrize, source=p)


def _map_bytes(p: Path) -> bytes | np.ndarray:
    """A file's bytes, mapped rather than read where it is large (a graph of
    billions of edges is then copied once, into its arrays, not twice);
    OS errors become :class:`GraphFormatError`."""
    _read_bytes(p, probe=True)
    try:
        if p.stat().st_size < 1 << 20:
            return p.read_bytes()
        return np.memmap(p, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as e:
        raise GraphFormatError(
            p, f"cannot read: {getattr(e, 'strerror', None) or e}"
        ) from None


def _read_bytes(p: Path, probe: bool = False) -> bytes:
    """Read a file, turning OS errors into :class:`GraphFormatError`."""
    try:
        if probe:
            with open(p, "rb"):
                return b""
        return p.read_bytes()
    except FileNotFoundError:
        raise GraphFormatError(p, "no such file") from None
    except IsADirectoryError:
        raise GraphFormatError(p, "is a directory, not a graph file") from None
    except OSError as e:
        raise GraphFormatError(p, f"cannot read: {e.strerror or e}") from None
