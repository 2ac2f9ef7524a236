"""Pull PageRank (benchmarks/pr_pull) beside the residual push version
(benchmarks/pr), both checked against the same reference bounds.

- lowering: no irgl op is left, and the pull kernel has no atomics (its
  edge sums are `irgl.forall ... reduce(add, ...)`, shared by warps and
  blocks under nested parallelism);
- build: the emitted CUDA compiles with nvcc (skipped without nvcc);
- checks: a float64 model of the kernels passes the app's checker, which
  rejects wrong ranks, unconverged residuals and non-symmetric graphs;
- GPU (marker ``gpu``): both variants on small graphs and on a hub with a
  million neighbours, at tolerances down to 1e-6.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import irgl_opt, nvcc_path, shared_build_cache

from irgl_runner.api import Program, build, compile_cuda, emit_cuda
from irgl_runner.apps import RunContext, execute, load_app
from irgl_runner.generators import generate
from irgl_runner.graph_args import resolve_graph
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import pagerank

VARIANTS = ("pr", "pr_pull")

#: Small graphs of test_apps_pr_tc plus a hub with a million neighbours.
GPU_GRAPHS = (
    "rmat:10",
    "grid:16x12",
    "random:2000:1500",
    "star:5000",
    "hub:200000:2",
    "hub:1000000",
)


def _lowered() -> str:
    app = load_app("pr_pull")
    proc = irgl_opt("--lower-irgl", str(app.mlir))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_pr_pull_lowers_completely_without_atomics() -> None:
    text = _lowered()
    ops = re.findall(r'^\s*(?:%[\w#:, %]+ = )?"?([a-z_]+\.[\w.]+)', text, re.M)
    assert "gpu.launch_func" in ops
    assert not sorted({op for op in ops if op.startswith("irgl.")})
    assert "memref.atomic_rmw" not in ops
    # the edge sum is shared by blocks and warps for high-degree nodes
    assert "@irgl_block_reduce_add_f64" in text
    assert "@irgl_warp_reduce_add_f64" in text


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not found")
def test_pr_pull_cuda_compiles(tmp_path: Path) -> None:
    cuda = emit_cuda(load_app("pr_pull").mlir)
    assert "irgl_entry_main" in cuda
    assert "irgl_block_reduce_add_f64(" in cuda
    so = compile_cuda(cuda, nvcc=nvcc_path() or "nvcc", cache=shared_build_cache())
    assert so.is_file() and so.stat().st_size > 0


def pull_model(graph: CSRGraph, tol: float) -> tuple[np.ndarray, np.ndarray, int]:
    """benchmarks/pr_pull/pr_pull.mlir in float64: rank, residual, rounds."""
    deg = graph.degrees()
    has = deg > 0
    degf = deg.astype(np.float64)
    # the start: u = 1, or 1 - d where a node has over a quarter of the edges
    # (app.py's start_guess)
    unit = 0.15 if int(deg.max(initial=0)) > graph.num_edges // 4 else 1.0
    c = np.where(has, unit / np.where(has, degf, 1.0), unit)
    rank = np.zeros(graph.num_nodes)
    src = graph.edge_src()
    rounds = 0
    bias = 0.15 - unit  # the first round: rank u, the residual of the guess
    while True:
        rounds += 1
        rank += np.where(has, c * degf, c)
        sums = np.bincount(src, weights=c[graph.edge_dst], minlength=graph.num_nodes)
        r_next = 0.85 * sums + bias
        bias = 0.0
        c = np.where(has, r_next / np.where(has, degf, 1.0), r_next)
        if not np.any(np.abs(r_next) >= tol):
            return rank, r_next, rounds


@pytest.mark.parametrize("spec", ["rmat:7", "grid:6x5", "random:300:250", "star:50"])
@pytest.mark.parametrize("tol", [1e-4, 1e-8])
def test_pr_pull_check_accepts_model_and_rejects_errors(spec: str, tol: float) -> None:
    """`tolerance` is on normalized ranks: the program runs to residuals below
    tol * n in magnitude (from the uniform guess, of either sign); the check
    accepts exactly that and rejects a wrong rank (the invariant x = rank +
    M r breaks) or an unconverged residual."""
    app = load_app("pr_pull")
    graph = generate(spec)
    scaled = tol * graph.num_nodes
    assert app.args is not None
    rank, residual, rounds = pull_model(graph, scaled)
    # the reference's PageRank is what the ranks and the residuals imply
    exact = pagerank(graph, tolerance=1e-12, max_iterations=100000)
    propagate = sys.modules[app.check.__module__].propagate  # type: ignore[union-attr]
    implied = rank + propagate(graph, residual, 0.85)
    assert np.allclose(implied, exact, rtol=1e-9, atol=1e-9)
    assert rounds >= 1
    ctx = RunContext(
        dataclasses.replace(app, params={**app.params, "tolerance": tol}),
        graph,
        outputs={"rank": rank, "residual": residual},
    )
    assert app.check(ctx) is None  # type: ignore[misc]
    hub = int(np.argmax(rank))
    ctx.outputs["rank"] = rank.copy()
    ctx.outputs["rank"][hub] *= 1.0 + 1e-5
    assert "break x = rank + M r" in app.check(ctx)  # type: ignore[misc,operator]
    ctx.outputs["rank"] = rank
    ctx.outputs["residual"] = residual.copy()
    ctx.outputs["residual"][0] = scaled
    assert "not in (-tol*n, tol*n)" in app.check(ctx)  # type: ignore[misc,operator]
    ctx.outputs["residual"][0] = -scaled
    assert "not in (-tol*n, tol*n)" in app.check(ctx)  # type: ignore[misc,operator]


def test_pr_pull_passes_the_scaled_tolerance() -> None:
    """The program gets tol * n (the bound on unnormalized residuals)."""
    app = load_app("pr_pull")
    graph = generate("rmat:7")
    ctx = RunContext(app, graph)
    ctx.device_graph = None
    ctx.arrays = {"rank": None, "residual": None, "scratch": None}
    assert app.args is not None
    tol, unit = app.args(ctx)[-2:]
    assert tol == pytest.approx(app.params["tolerance"] * graph.num_nodes)
    assert unit == 1.0
    star = generate("star:100")
    ctx = RunContext(app, star)
    ctx.device_graph = None
    ctx.arrays = {"rank": None, "residual": None, "scratch": None}
    assert app.args(ctx)[-1] == pytest.approx(0.15)


def test_pr_pull_check_rejects_a_directed_graph() -> None:
    app = load_app("pr_pull")
    directed = CSRGraph(3, np.array([0, 1, 2, 2]), np.array([1, 2]))
    ctx = RunContext(
        app, directed, outputs={"rank": np.zeros(3), "residual": np.zeros(3)}
    )
    assert "symmetric" in app.check(ctx)  # type: ignore[misc,operator]


@pytest.fixture(scope="module")
def programs() -> dict[str, Program]:
    return {name: Program(build(load_app(name).mlir)) for name in VARIANTS}


@pytest.mark.gpu
@pytest.mark.parametrize("spec", GPU_GRAPHS)
@pytest.mark.parametrize("tol", [1e-4, 1e-6])
@pytest.mark.parametrize("name", VARIANTS)
def test_pr_variants_on_gpu(
    programs: dict[str, Program], name: str, spec: str, tol: float
) -> None:
    base = load_app(name)
    app = dataclasses.replace(base, params={**base.params, "tolerance": tol})
    graph, _ = resolve_graph(spec, app.symmetrize, app.weighted, None)
    ctx = execute(app, programs[name], graph, 0, reps=2, warmup=1)
    assert app.check is not None
    problem = app.check(ctx)
    assert problem is None, problem
