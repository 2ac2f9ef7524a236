"""PageRank benchmark, topology-driven pull variant: Jacobi on residuals, float64.

Host function: ``@main(%g: !irgl.graph, %rank: memref<?xf64>,
%residual: memref<?xf64>, %scratch: memref<?xf64>, %tol: f64)``; the program
initializes the arrays itself.

It computes the same unnormalized PageRank as ``benchmarks/pr`` (the
residual push version) and :func:`irgl_runner.reference.pagerank`,
``x = (1 - d) + d * A^T D^-1 x`` with ``d = 0.85``, by the reference's own
recurrence: every round each node adds its residual to its rank and pulls
``d * r[u] / outdeg(u)`` from its in-neighbours (an edge-loop reduction, no
atomics) into its next residual; the rounds stop (``irgl.iterate while
any``) once every new residual is below ``tol``.  So the check is
``benchmarks/pr``'s: residuals below ``tol`` and
``x * (1 - tol / (1 - d)) <= rank <= x`` node by node (widened for rounding).

- Normalization: none; the ranks sum to about the number of nodes (to
  ``n - d * (mass lost at dangling nodes)``), not to 1.  Divide by the node
  count for a probability vector.
- Isolated nodes (no edges) keep rank ``1 - d``; they neither give nor
  receive.  Dangling nodes (no out-edges) lose their share, as in the
  reference; on the symmetric graphs this app runs on, a dangling node is
  isolated.
- Symmetry: a node pulls over its own edge list, which are its in-edges only
  when the graph is symmetric.  Generated graphs are symmetric and graph
  files are symmetrized on load (``symmetrize=True``); the check rejects a
  graph that is not symmetric instead of comparing a different quantity.
- Numerics: float64 throughout; a hub's sum over 10^6 in-edges loses about
  10^6 * 2^-53 relative, far inside the tolerance.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import pagerank


def _push_app() -> ModuleType:
    """benchmarks/pr/app.py: the shared bounds and checker."""
    path = Path(__file__).resolve().parents[1] / "pr" / "app.py"
    spec = importlib.util.spec_from_file_location("irgl_bench_app_pr_bounds", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PR = _push_app()

#: Damping factor; the program hard-codes it (0.85 and 1 - d = 0.15).
DAMPING: float = _PR.DAMPING

#: Default convergence tolerance on residuals (``params["tolerance"]``).
TOLERANCE = 1e-6


def is_symmetric(graph: CSRGraph) -> bool:
    """Does every edge u -> v have its reverse v -> u (with multiplicity)?"""
    src = graph.edge_src().astype(np.int64)
    dst = graph.edge_dst.astype(np.int64)
    n = max(graph.num_nodes, 1)
    forward = np.sort(src * n + dst)
    backward = np.sort(dst * n + src)
    return bool(np.array_equal(forward, backward))


def check(ctx: RunContext) -> str | None:
    """Converged residuals and ranks within the tolerance's bound of PageRank."""
    if not is_symmetric(ctx.graph):
        return "pr_pull needs a symmetric graph (it pulls over out-edges)"
    tol = float(ctx.params["tolerance"])
    exact = pagerank(
        ctx.graph,
        damping=DAMPING,
        tolerance=tol * _PR.REFERENCE_TIGHTENING,
        max_iterations=100000,
    )
    return _PR.check_ranks(ctx.outputs["rank"], ctx.outputs["residual"], exact, tol)


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
        float(ctx.params["tolerance"]),
    ],
    check=check,
    weighted=False,
    uses_source=False,
    output_array="rank",
    params={"tolerance": TOLERANCE, "damping": DAMPING},
)
