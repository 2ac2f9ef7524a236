"""The work of triangle counting, counted on the CPU (no GPU needed).

    python3 benchmarks/tc/work.py rmat:16 rmat:17 rmat:18 [--json]

Compares two programs on the same cleaned graph:

- ``old``: the program this benchmark had before: for every edge n -> v up
  the (degree, id) rank order, every neighbour w of n is tested for rank
  (a degree lookup) and, if above v, binary-searched in v's whole list;
- ``dag``: ``tc.mlir``: ``@orient`` builds the degree-oriented DAG in the
  graph's CSR slots, ``@sort_out`` sorts each out-list (a copy if it came in
  order, else by rank counting) and ``@count_triangles`` merges out(u) and
  out(v) for every DAG edge u -> v.

Whether an out-list arrives in order depends on the order of ``@orient``'s
atomics. On the GPU, one thread appends the whole list of a node with fewer
than 32 edges (in edge order, so sorted); the others are counted as
unsorted unless they hold at most one entry (``--sorted`` changes that).

Per kernel it reports, from closed formulas over numpy arrays:

- ``reads``: global-memory reads as the program issues them
  (``irgl.graph.degree`` reads two row offsets; ``first_edge``,
  ``last_edge``, ``edge_dst`` and ``memref.load`` one each). Exact, except
  the old binary searches, counted as ``bits(len)`` steps each plus the
  final read (an upper bound: a lower-bound search over ``len`` entries
  takes ``bits(len)`` steps or one fewer, and skips the final read when it
  ends past the list);
- ``atomics``: ``memref.atomic_rmw`` executions (exact for ``@orient``; for
  the count, at most: the old program adds once per DAG edge that closes a
  triangle, counted as those that search at all; the new one once per node
  that is the middle of a triangle, counted as those with an in-list and a
  non-empty out-list);
- ``steps``: iterations of the innermost loops (old: the scan of N(n) plus
  the binary-search steps; dag: the sortedness checks and rank-sort steps,
  plus the merge iterations);
- ``warp_steps``: a SIMT model of the schedule that irgl-nested-parallelism
  gives the edge loop (block of 256 threads for >= 256 edges, a warp for >=
  32, else one thread per node, 32 consecutive nodes to a warp): each lane
  costs the reads of the edge iterations it runs, a warp costs its slowest
  lane, a block phase costs 8 warps times its slowest lane. The total is a
  proxy for issue slots when the loops are latency-bound.

``python3 -m pytest test/python/test_apps_pr_tc.py`` checks these formulas
against sequential, instrumented runs of both programs on small graphs.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass

import numpy as np

from irgl_runner.generators import generate
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import triangle_count

#: Threads of a block; nodes with at least this many edges get a whole block.
BLOCK = 256
WARP = 32


@dataclass
class KernelWork:
    """What one kernel of one program does on one graph."""

    program: str
    kernel: str
    reads: int
    atomics: int
    steps: int
    warp_steps: int


@dataclass
class Oriented:
    """The degree-oriented DAG of a simple graph, as numpy arrays."""

    graph: CSRGraph
    deg: np.ndarray  # per node
    src: np.ndarray  # per edge
    dst: np.ndarray  # per edge
    up: np.ndarray  # per edge: is dst above src in (degree, id) order
    nout: np.ndarray  # per node: |out(n)|
    nin: np.ndarray  # per node: |in(n)|


def orient(graph: CSRGraph) -> Oriented:
    """Rank by (degree, id) and orient every edge upwards."""
    rs = graph.row_start.astype(np.int64)
    dst = graph.edge_dst.astype(np.int64)
    deg = np.diff(rs)
    src = np.repeat(np.arange(graph.num_nodes, dtype=np.int64), deg)
    if np.any(src == dst):
        raise ValueError("the work model needs a graph without self loops")
    key = deg * graph.num_nodes + np.arange(graph.num_nodes)
    up = key[dst] > key[src]
    nout = np.bincount(src[up], minlength=graph.num_nodes)
    return Oriented(graph, deg, src, dst, up, nout, deg - nout)


def bits(x: np.ndarray) -> np.ndarray:
    """Number of binary digits of each non-negative entry (0 for 0)."""
    x = np.asarray(x, dtype=np.int64)
    out = np.zeros(x.shape, dtype=np.int64)
    nz = x > 0
    out[nz] = np.floor(np.log2(x[nz])).astype(np.int64) + 1
    return out


def warp_steps(o: Oriented, lane_cost: np.ndarray) -> int:
    """Cost of an edge loop whose iteration of edge e costs ``lane_cost[e]``
    under the nested-parallelism schedule (see the module docstring)."""
    rs = o.graph.row_start.astype(np.int64)
    pos = np.arange(o.src.size, dtype=np.int64) - rs[o.src]
    phase = np.where(o.deg >= BLOCK, 2, np.where(o.deg >= WARP, 1, 0))[o.src]
    total = 0
    small = phase == 0
    per_node = np.bincount(
        o.src[small], weights=lane_cost[small], minlength=o.graph.num_nodes
    )
    per_node = np.concatenate([per_node, np.zeros((-per_node.size) % WARP)])
    total += int(per_node.reshape(-1, WARP).max(axis=1).sum())
    for ph, width, weight in ((1, WARP, 1), (2, BLOCK, BLOCK // WARP)):
        sel = phase == ph
        if not sel.any():
            continue
        lanes, inverse = np.unique(
            o.src[sel] * width + pos[sel] % width, return_inverse=True
        )
        cost = np.bincount(inverse, weights=lane_cost[sel])
        nodes = lanes // width
        starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
        total += weight * int(np.maximum.reduceat(cost, starts).sum())
    return total


def old_work(o: Oriented) -> list[KernelWork]:
    """The replaced program: one kernel, counted per edge n -> v."""
    n_nodes, n_edges = o.graph.num_nodes, o.src.size
    rs = o.graph.row_start.astype(np.int64)
    key = o.deg * n_nodes + np.arange(n_nodes)
    # rank of key(v) among the keys of N(n): how many w in N(n) lie above v
    order = np.lexsort((key[o.dst], o.src))
    rank = np.empty(n_edges, dtype=np.int64)
    rank[order] = np.arange(n_edges) - rs[o.src[order]]
    above_v = o.deg[o.src] - 1 - rank
    scan = np.where(o.up, o.deg[o.src], 0)
    searches = np.where(o.up, above_v, 0)
    search_steps = searches * bits(o.deg[o.dst])
    # per edge: edge_dst, degree(v); up: first/last(v), then per w: edge_dst,
    # degree(w), and per search its steps and the final read
    lane = 3 + np.where(o.up, 2, 0) + 3 * scan + search_steps + searches
    reads = 4 * n_nodes + int(lane.sum())
    # one per DAG edge that closes a triangle: at most those that search
    atomics_bound = int(np.count_nonzero(searches))
    return [
        KernelWork(
            "old",
            "count_triangles",
            reads,
            atomics_bound,
            int(scan.sum() + search_steps.sum()),
            warp_steps(o, lane.astype(np.float64)),
        )
    ]


def merge_heads(o: Oriented) -> np.ndarray:
    """Per DAG edge (in ``o.up`` order): entries of out(u) and out(v) that
    the merge of ``@count_triangles`` consumes (those up to the smaller of
    the two lists' largest entries)."""
    n_nodes = o.graph.num_nodes
    u, v = o.src[o.up], o.dst[o.up]
    first = np.r_[0, np.cumsum(o.nout)]
    keys = u * n_nodes + v  # out-lists, sorted by node then id
    last = np.full(n_nodes, -1, dtype=np.int64)
    has = o.nout > 0
    last[has] = v[first[1:][has] - 1]
    m = np.minimum(last[u], last[v])

    def upto(node: np.ndarray) -> np.ndarray:
        return np.searchsorted(keys, node * n_nodes + m, side="right") - first[node]

    return np.where(o.nout[v] > 0, upto(u) + upto(v), 0)


def gpu_arrives_sorted(o: Oriented) -> np.ndarray:
    """Per node: does @orient leave its out-list in order on the GPU, for
    certain? Yes for nodes one thread walks alone, and lists of <= 1 entry."""
    return (o.deg < WARP) | (o.nout <= 1)


def dag_work(
    o: Oriented, triangles: int, arrives_sorted: np.ndarray | None = None
) -> list[KernelWork]:
    """``tc.mlir``: its four kernels; ``arrives_sorted`` says per node whether
    its out-list comes out of @orient in order (default: gpu_arrives_sorted)."""
    if arrives_sorted is None:
        arrives_sorted = gpu_arrives_sorted(o)
    arrives_sorted = arrives_sorted | (o.nout <= 1)  # nothing to order
    n_nodes, n_edges = o.graph.num_nodes, o.src.size
    rs = o.graph.row_start.astype(np.int64)
    pos = np.arange(n_edges, dtype=np.int64) - rs[o.src]
    reset = KernelWork("dag", "reset", 0, 0, 0, 0)
    # @orient: degree(n), first, last per node; edge_dst, degree(u) per edge
    lane = np.full(n_edges, 3.0)
    orient_k = KernelWork(
        "dag", "orient", 4 * n_nodes + 3 * n_edges, n_edges, 0, warp_steps(o, lane)
    )
    # @sort_out: first, nout per node; a first edge loop reads each adjacent
    # pair of the list, a second each entry and, if the list is out of
    # order, the whole list to rank it
    k = o.nout[o.src]
    pair = pos + 1 < k
    ranked = (pos < k) & ~arrives_sorted[o.src]
    check = np.where(pair, 2.0, 0.0)
    place = np.where(pos < k, 1.0, 0.0) + np.where(ranked, k, 0)
    sort_k = KernelWork(
        "dag",
        "sort_out",
        2 * n_nodes + int(check.sum() + place.sum()),
        0,
        int(pair.sum() + np.where(ranked, k, 0).sum()),
        warp_steps(o, check) + warp_steps(o, place),
    )
    # @count_triangles: first, last, nout, nin per node; per in slot of a
    # node with a non-empty out-list: lists[e], first(u), nout[u], the two
    # heads, and one reload per consumed entry
    heads = merge_heads(o)
    lane = np.zeros(n_edges)
    # the in slots of v are filled by the DAG edges u -> v; any order will do
    # for the model, since the lanes of a node's in-part are what matters
    v_of = o.dst[o.up]
    order = np.argsort(v_of, kind="stable")
    vv = v_of[order]
    rank_in = np.arange(vv.size) - np.searchsorted(vv, vv)
    slot = rs[vv] + o.nout[vv] + rank_in
    useful = o.nout[vv] > 0
    lane[slot] = np.where(useful, 5 + heads[order], 0)
    # one atomic per node that closes a triangle: at most those with both
    # an in- and a non-empty out-list
    atomics_bound = int(np.count_nonzero((o.nout > 0) & (o.nin > 0)))
    count_k = KernelWork(
        "dag",
        "count_triangles",
        4 * n_nodes + int(lane.sum()),
        atomics_bound,
        int(heads.sum()) - triangles,
        warp_steps(o, lane),
    )
    return [reset, orient_k, sort_k, count_k]


def work(
    graph: CSRGraph, arrives_sorted: np.ndarray | None = None
) -> dict[str, list[KernelWork]]:
    """Both programs' work on ``graph`` (cleaned, no self loops); see
    dag_work for ``arrives_sorted``."""
    o = orient(graph)
    triangles = triangle_count(graph)
    return {"old": old_work(o), "dag": dag_work(o, triangles, arrives_sorted)}


def total(kernels: list[KernelWork]) -> KernelWork:
    """The sum over a program's kernels."""
    return KernelWork(
        kernels[0].program,
        "total",
        sum(k.reads for k in kernels),
        sum(k.atomics for k in kernels),
        sum(k.steps for k in kernels),
        sum(k.warp_steps for k in kernels),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Count TC work on the CPU.")
    p.add_argument("graphs", nargs="+", help="generator specs, e.g. rmat:16")
    p.add_argument("--json", action="store_true", help="one JSON line per row")
    p.add_argument(
        "--sorted",
        choices=("gpu", "all", "none"),
        default="gpu",
        help="which out-lists @orient leaves in order (default: gpu, see above)",
    )
    args = p.parse_args(argv)
    for spec in args.graphs:
        graph = generate(spec)
        arrives = None
        if args.sorted != "gpu":
            fill = args.sorted == "all"
            arrives = np.full(graph.num_nodes, fill, dtype=bool)
        result = work(graph, arrives)
        if not args.json:
            print(f"{spec}: {graph.num_nodes:,} nodes, {graph.num_edges:,} edges")
            head = ("program", "kernel", "reads", "atomics", "steps", "warp steps")
            print("  {:8} {:16} {:>16} {:>12} {:>16} {:>14}".format(*head))
        for kernels in result.values():
            for k in [*kernels, total(kernels)]:
                if args.json:
                    print(json.dumps({"graph": spec, **asdict(k)}))
                else:
                    print(
                        f"  {k.program:8} {k.kernel:16} {k.reads:16,} {k.atomics:12,} "
                        f"{k.steps:16,} {k.warp_steps:14,}"
                    )
        if not args.json:
            old, new = total(result["old"]), total(result["dag"])
            ratios = (
                f"reads {old.reads / new.reads:.2f}x",
                f"steps {old.steps / new.steps:.2f}x",
                f"warp steps {old.warp_steps / new.warp_steps:.2f}x",
            )
            print("  old/dag: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
