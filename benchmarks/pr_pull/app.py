"""PageRank benchmark, topology-driven pull variant: Jacobi on residuals, float64.

Host function: ``@main(%g: !irgl.graph, %rank: memref<?xf64>,
%residual: memref<?xf64>, %scratch: memref<?xf64>, %tol: f64, %unit: f64)``;
the program initializes the arrays itself from the guess ``unit``
(:func:`start_guess`).

It computes the same unnormalized PageRank as ``benchmarks/pr`` (the
residual push version) and :func:`irgl_runner.reference.pagerank`,
``x = (1 - d) + d * A^T D^-1 x`` with ``d = 0.85``, by the reference's own
recurrence: every round each node adds its residual to its rank and pulls
``d * r[u] / outdeg(u)`` from its in-neighbours (an edge-loop reduction, no
atomics) into its next residual. It starts from the uniform guess (rank 1
after the first round, whose residuals are those of the guess, of either
sign), as power iteration and Gunrock's PageRank start from ``1 / n``; a
graph where one node has over a quarter of the edges (a star) starts from
rank ``1 - d`` instead (4 rounds on a 100,000-leaf star instead of 86).

- Tolerance (``params["tolerance"]``, default 1e-6): on the *normalized*
  ranks ``p = x / n`` (mean ``1 / n``, sum about 1), the convention of
  Gunrock's PageRank: the rounds stop (``irgl.iterate while any``) at the
  first round in which no node's normalized rank moves by ``tol`` or more,
  i.e. every new residual is below ``tol * n`` in magnitude (the program is
  passed ``tol * n``).  On RMAT scale 18 that is 9 rounds at 1e-6 (Gunrock's
  own stopping rule, ``max |p - p_last| < tol`` from ``p = 1 / n``, takes 9
  iterations there too; from rank 0 and residual ``1 - d``, the program's
  start before, 36 rounds).
- Check: the residuals are below ``tol * n`` in magnitude and the ranks satisfy the
  recurrence's invariant ``x = rank + M r`` (``M = (I - d A^T D^-1)^-1``,
  applied on the CPU) to float64 rounding, against a reference solved to
  ``1e-10``; so the GPU did exactly the rounds' arithmetic, and its error is
  the stated ``M r``.
- Normalization: the ``rank`` output is unnormalized (it sums to about the
  number of nodes, to ``n - d * (mass lost at dangling nodes)``); divide by
  ``n`` for ``p``.
- Isolated nodes (no edges) end with rank ``1 - d``; they neither give nor
  receive.  Dangling nodes (no out-edges)
  lose their share, as in the reference; on the symmetric graphs this app
  runs on, a dangling node is isolated.
- Symmetry: a node pulls over its own edge list, which are its in-edges only
  when the graph is symmetric.  Generated graphs are symmetric and graph
  files are symmetrized on load (``symmetrize=True``); the check rejects a
  graph that is not symmetric instead of comparing a different quantity.
- Numerics: float64 throughout; a hub's sum over 10^6 in-edges loses about
  10^6 * 2^-53 relative, far inside the tolerance.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import pagerank, pull_step

#: Damping factor; the program hard-codes it (0.85 and 1 - d = 0.15).
DAMPING = 0.85

#: Default convergence tolerance on normalized ranks (``params["tolerance"]``).
TOLERANCE = 1e-6


def is_symmetric(graph: CSRGraph) -> bool:
    """Does every edge u -> v have its reverse v -> u (with multiplicity)?"""
    src = graph.edge_src().astype(np.int64)
    dst = graph.edge_dst.astype(np.int64)
    n = max(graph.num_nodes, 1)
    forward = np.sort(src * n + dst)
    backward = np.sort(dst * n + src)
    return bool(np.array_equal(forward, backward))


#: The reference solves to this (unnormalized) tolerance for the check.
REFERENCE_TOLERANCE = 1e-10

#: Relative slack of the invariant check (float64 rounding of the rounds).
INVARIANT_RTOL = 1e-7


def scaled_tolerance(tol: float, graph: CSRGraph) -> float:
    """The bound on unnormalized residuals that `tol` on normalized ranks
    means: ``tol * n``."""
    return tol * max(graph.num_nodes, 1)


def start_guess(graph: CSRGraph) -> float:
    """The uniform guess the program starts from: 1 (power iteration's
    start), or ``1 - d`` where one node has more than a quarter of the edges
    (a star), whose leaves it starts at their rank."""
    star = graph.max_degree() > graph.num_edges // 4
    return 1.0 - DAMPING if star else 1.0


def propagate(graph: CSRGraph, residual: np.ndarray, damping: float) -> np.ndarray:
    """``M r = sum_k (d A^T D^-1)^k r``: what the residuals ``r`` still add
    to the ranks, summed until the remainder is below float64 rounding."""
    step = pull_step(graph, damping)
    r = np.asarray(residual, dtype=np.float64).copy()
    total = np.zeros(graph.num_nodes)
    floor = 1e-15 * max(float(np.abs(r).max(initial=0.0)), 1e-300)
    while r.size and np.abs(r).max() > floor:
        total += r
        r = step(r)
    return total


def check(ctx: RunContext) -> str | None:
    """Converged residuals (``tol`` on normalized ranks) and the invariant
    ``x = rank + M r`` against the reference PageRank."""
    if not is_symmetric(ctx.graph):
        return "pr_pull needs a symmetric graph (it pulls over out-edges)"
    tol = scaled_tolerance(float(ctx.params["tolerance"]), ctx.graph)
    rank = np.asarray(ctx.outputs["rank"], dtype=np.float64).ravel()
    residual = np.asarray(ctx.outputs["residual"], dtype=np.float64).ravel()
    n = ctx.graph.num_nodes
    if rank.shape != (n,) or residual.shape != (n,):
        return f"rank/residual: {rank.size}/{residual.size} values, expected {n}"
    high = ~(np.abs(residual) < tol)
    if np.any(high):
        i = int(np.flatnonzero(high)[0])
        return (
            f"residual: {int(high.sum())} of {n} nodes not in (-tol*n, tol*n), "
            f"tol*n={tol:g}; "
            f"first at node {i}: {residual[i]!r}"
        )
    exact = pagerank(
        ctx.graph, damping=DAMPING, tolerance=REFERENCE_TOLERANCE, max_iterations=100000
    )
    implied = rank + propagate(ctx.graph, residual, DAMPING)
    slack = INVARIANT_RTOL * exact + REFERENCE_TOLERANCE / (1.0 - DAMPING)
    bad = ~(np.abs(implied - exact) <= slack)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        return (
            f"rank: {int(bad.sum())} of {n} nodes break x = rank + M r; first at "
            f"node {i}: rank {rank[i]!r} + M r {implied[i] - rank[i]!r} != "
            f"x {exact[i]!r}"
        )
    return None


def normalized_error(ctx: RunContext) -> float:
    """``max |rank - x| / n``: the run's error on the normalized ranks."""
    exact = pagerank(
        ctx.graph, damping=DAMPING, tolerance=REFERENCE_TOLERANCE, max_iterations=100000
    )
    rank = np.asarray(ctx.outputs["rank"], dtype=np.float64).ravel()
    return float(np.abs(rank - exact).max(initial=0.0)) / max(ctx.graph.num_nodes, 1)


APP = AppSpec(
    name="pr_pull",
    mlir=Path(__file__).with_name("pr_pull.mlir"),
    host_fn="main",
    outputs=[
        ArraySpec("rank", "float64", init=0.0),
        ArraySpec("residual", "float64", init=0.0),
        ArraySpec("scratch", "float64", init=0.0, read_back=False),
    ],
    args=lambda ctx: [
        ctx.device_graph,
        ctx.arrays["rank"],
        ctx.arrays["residual"],
        ctx.arrays["scratch"],
        scaled_tolerance(float(ctx.params["tolerance"]), ctx.graph),
        start_guess(ctx.graph),
    ],
    check=check,
    weighted=False,
    uses_source=False,
    output_array="rank",
    params={"tolerance": TOLERANCE, "damping": DAMPING},
)
