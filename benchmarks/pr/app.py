"""PageRank benchmark: residual-based, data-driven (worklist), float64.

Host function: ``@main(%g: !irgl.graph, %rank: memref<?xf64>,
%residual: memref<?xf64>, %tol: f64)``; the program initializes both arrays
itself (rank 0, residual ``1 - d`` with ``d = 0.85``, every node pushed).

What it computes is the unnormalized PageRank of
:func:`irgl_runner.reference.pagerank`, ``x = (1 - d) + d * A^T D^-1 x``
(dangling nodes lose their share; the ranks sum to about the node count, not
to 1), so the normalisations agree by construction.  The reference stops on
its own residual test and is itself an approximation, so the check does not
compare the two runs' stopping points; it checks what the algorithm
guarantees:

- every final residual is below ``tol`` (the worklist really drained);
- ``rank`` bounds the exact PageRank ``x`` from below: ``rank = x - M r``
  with ``M = (I - d A^T D^-1)^-1 >= 0`` and ``0 <= r < tol`` the final
  residuals, and ``M (tol * 1) = tol / (1 - d) * x``, so
  ``x * (1 - tol / (1 - d)) <= rank <= x`` node by node.

``x`` is taken from the float64 reference run with a tolerance 100 times
tighter (which underestimates ``x`` by at most ``0.01 * tol / (1 - d)``,
relatively), and both bounds are widened by :data:`FLOAT_RTOL` for the
rounding of the GPU's float64 atomic sums. (The program accumulated in
float32 once: on a graph with a hub of 10^6 in-edges the hub's small
contributions vanished against its running sum and its rank ended about 1.5%
low, far outside the bound; float64 keeps every graph inside it.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import pagerank

#: Damping factor; the program hard-codes it (0.85 and 1 - d = 0.15).
DAMPING = 0.85

#: Default convergence tolerance on residuals (``params["tolerance"]``).
TOLERANCE = 1e-4

#: Relative slack for the rounding of float64 atomic sums (about 10^6 adds of
#: relative error 2^-53 each stay far below it).
FLOAT_RTOL = 1e-7

#: The reference runs with ``tolerance * REFERENCE_TIGHTENING``.
REFERENCE_TIGHTENING = 1e-2


def rank_bounds(
    exact: np.ndarray, tol: float, damping: float = DAMPING
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds on the GPU ranks, given (nearly) exact PageRank."""
    gap = tol / (1.0 - damping)
    ref_gap = tol * REFERENCE_TIGHTENING / (1.0 - damping)
    lower = exact * (1.0 - gap - FLOAT_RTOL) - 1e-7
    upper = exact * (1.0 + ref_gap * 1.01 + FLOAT_RTOL) + 1e-7
    return lower, upper


def check_ranks(
    rank: np.ndarray, residual: np.ndarray, exact: np.ndarray, tol: float
) -> str | None:
    """``None`` if ``rank``/``residual`` are a converged run for ``tol``, else why."""
    rank = np.asarray(rank, dtype=np.float64).ravel()
    residual = np.asarray(residual).ravel()
    if rank.shape != exact.shape or residual.shape != exact.shape:
        return (
            f"rank/residual: {rank.shape[0]}/{residual.shape[0]} values, "
            f"expected {exact.shape[0]}"
        )
    high = residual >= tol
    if np.any(high) or not np.all(np.isfinite(residual)):
        i = int(np.flatnonzero(high | ~np.isfinite(residual))[0])
        return (
            f"residual: {int(high.sum())} of {residual.size} nodes did not converge "
            f"(residual >= tol={tol:g}); first at node {i}: {residual[i]!r}"
        )
    lower, upper = rank_bounds(exact, tol)
    bad = ~((rank >= lower) & (rank <= upper))  # also catches NaN
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        return (
            f"rank: {int(bad.sum())} of {rank.size} values outside "
            f"[x*(1 - tol/(1-d) - {FLOAT_RTOL:g}), x*(1 + {FLOAT_RTOL:g})] "
            f"for tol={tol:g}; first at node {i}: got {rank[i]!r}, "
            f"exact PageRank x={exact[i]!r}"
        )
    return None


def check(ctx: RunContext) -> str | None:
    """Converged residuals and ranks within the tolerance's bound of PageRank."""
    tol = float(ctx.params["tolerance"])
    exact = pagerank(
        ctx.graph,
        damping=DAMPING,
        tolerance=tol * REFERENCE_TIGHTENING,
        max_iterations=100000,
    )
    return check_ranks(ctx.outputs["rank"], ctx.outputs["residual"], exact, tol)


APP = AppSpec(
    name="pr",
    mlir=Path(__file__).with_name("pr.mlir"),
    host_fn="main",
    outputs=[
        ArraySpec("rank", "float64", init=0.0),
        ArraySpec("residual", "float64", init=0.0),
    ],
    args=lambda ctx: [
        ctx.device_graph,
        ctx.arrays["rank"],
        ctx.arrays["residual"],
        float(ctx.params["tolerance"]),
    ],
    check=check,
    weighted=False,
    uses_source=False,
    output_array="rank",
    params={"tolerance": TOLERANCE, "damping": DAMPING},
)
