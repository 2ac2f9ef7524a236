"""PageRank (benchmarks/pr) and triangle counting (benchmarks/tc).

- lowering: ``irgl-opt --lower-irgl`` leaves no irgl op;
- build: the emitted CUDA compiles with nvcc (one nvcc call per app; skipped
  without nvcc);
- checks: the apps' checkers accept a sequential Python model of each kernel
  and reject wrong answers (CPU only);
- GPU (marker ``gpu``): each app runs on small graphs through
  :func:`irgl_runner.apps.execute` and its check passes.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import nvcc_path

from irgl_runner.api import Program, build, compile_cuda, emit_cuda
from irgl_runner.apps import AppSpec, execute, load_app
from irgl_runner.generators import generate
from irgl_runner.graph_args import resolve_graph
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import pagerank, triangle_count

APPS = ("pr", "tc")

#: Small graphs: power-law, high-diameter without triangles, random with
#: isolated nodes, a dense random one (many triangles), and skewed ones: a
#: star and two hubs of degree 200,000 (PageRank's sums on a hub).
SMALL_GRAPHS = (
    "rmat:10",
    "grid:16x12",
    "random:2000:1500",
    "random:300:12000",
    "star:5000",
    "hub:200000:2",
)


def irgl_opt() -> str:
    beside = Path(sys.executable).with_name("irgl-opt")
    return str(beside) if beside.is_file() else "irgl-opt"


# ------------------------------------------------------------------ lowering


@pytest.mark.parametrize("name", APPS)
def test_lowers_completely(name: str) -> None:
    app = load_app(name)
    proc = subprocess.run(
        [irgl_opt(), "--lower-irgl", str(app.mlir)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    ops = re.findall(r'^\s*(?:%[\w#:, %]+ = )?"?([a-z_]+\.[\w.]+)', proc.stdout, re.M)
    assert ops, proc.stdout
    leftover = sorted({op for op in ops if op.startswith("irgl.")})
    assert not leftover, f"irgl ops left after --lower-irgl: {leftover}"
    assert "gpu.launch_func" in ops
    assert "memref.atomic_rmw" in ops


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not found")
@pytest.mark.parametrize("name", APPS)
def test_emitted_cuda_compiles(name: str, tmp_path: Path) -> None:
    app = load_app(name)
    cuda = emit_cuda(app.mlir)
    assert "irgl_entry_main" in cuda
    so = compile_cuda(cuda, nvcc=nvcc_path() or "nvcc", cache=tmp_path)
    assert so.is_file() and so.stat().st_size > 0


# ------------------------------------------- sequential models of the kernels


def pr_model(
    graph: CSRGraph, tol: float, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """benchmarks/pr/pr.mlir run sequentially in float64, rounds in random order."""
    f64 = np.float64
    tol64 = f64(tol)
    rs, dst = graph.row_start, graph.edge_dst
    rank = np.zeros(graph.num_nodes, f64)
    residual = np.full(graph.num_nodes, f64(0.15), f64)
    worklist = list(range(graph.num_nodes))
    rng = np.random.default_rng(seed)
    while worklist:
        out = []
        for k in rng.permutation(len(worklist)):
            n = worklist[k]
            if not residual[n] >= tol64:
                continue
            r, residual[n] = residual[n], f64(0)
            rank[n] = f64(rank[n] + r)
            deg = rs[n + 1] - rs[n]
            if deg == 0:
                continue
            contrib = f64(f64(f64(0.85) * r) / f64(deg))
            for e in range(rs[n], rs[n + 1]):
                d = dst[e]
                old = residual[d]
                residual[d] = new = f64(old + contrib)
                if old < tol64 <= new:
                    out.append(d)
        worklist = out
    return rank, residual


def tc_model(graph: CSRGraph) -> int:
    """benchmarks/tc/tc.mlir run sequentially (bisection + merge per edge)."""
    rs, dst = graph.row_start, graph.edge_dst
    total = 0
    for n in range(graph.num_nodes):
        n_end = rs[n + 1]
        for e in range(rs[n], n_end):
            v = dst[e]
            if v <= n:
                continue
            lo, hi = rs[v], rs[v + 1]
            while lo < hi:
                mid = lo + ((hi - lo) >> 1)
                lo, hi = (mid + 1, hi) if dst[mid] <= v else (lo, mid)
            i, j = e + 1, lo
            while i < n_end and j < rs[v + 1]:
                a, b = dst[i], dst[j]
                total += int(a == b)
                i += int(a <= b)
                j += int(b <= a)
    return total


@pytest.mark.parametrize("spec", ["rmat:7", "grid:6x5", "random:300:250"])
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_pr_check_accepts_model_and_rejects_errors(spec: str, tol: float) -> None:
    pr = load_app("pr")
    check_ranks = pr.check.__globals__["check_ranks"]  # type: ignore[union-attr]
    graph = generate(spec)
    rank, residual = pr_model(graph, tol)
    exact = pagerank(graph, tolerance=tol * 1e-2, max_iterations=100000)
    assert check_ranks(rank, residual, exact, tol) is None
    # the model really is tol-accurate: below the exact values, not by much
    assert np.all(rank <= exact * (1 + 1e-6))
    assert np.all(rank >= exact * (1 - tol / 0.15))

    hub = int(np.argmax(exact))
    too_high = rank.copy()
    too_high[hub] = exact[hub] * 1.01
    assert "values outside" in check_ranks(too_high, residual, exact, tol)
    too_low = rank.copy()
    too_low[hub] = exact[hub] * (1 - 2 * tol / 0.15)
    assert "values outside" in check_ranks(too_low, residual, exact, tol)
    unconverged = residual.copy()
    unconverged[3] = tol
    assert "did not converge" in check_ranks(rank, unconverged, exact, tol)
    nan = rank.copy()
    nan[0] = np.nan
    assert check_ranks(nan, residual, exact, tol) is not None


def test_pr_check_uses_the_app_tolerance() -> None:
    """check(ctx) reads params["tolerance"] and the read-back arrays."""
    from irgl_runner.apps import RunContext

    pr = load_app("pr")
    graph = generate("rmat:6")
    tol = 1e-3
    app = dataclasses.replace(pr, params={**pr.params, "tolerance": tol})
    rank, residual = pr_model(graph, tol)
    ctx = RunContext(app, graph, outputs={"rank": rank, "residual": residual})
    assert pr.check(ctx) is None  # type: ignore[misc]
    ctx.outputs["rank"] = rank * 0.9
    assert pr.check(ctx) is not None  # type: ignore[misc]


@pytest.mark.parametrize(
    "spec", ["rmat:7", "grid:5x5", "random:300:250", "random:40:500"]
)
def test_tc_model_matches_reference(spec: str) -> None:
    graph = generate(spec)
    assert tc_model(graph) == triangle_count(graph)


def test_tc_check() -> None:
    tc = load_app("tc")
    check_count = tc.check.__globals__["check_count"]  # type: ignore[union-attr]
    assert check_count(np.array([5], dtype=np.int64), 5) is None
    assert "got 4 triangles, expected 5" in check_count(np.array([4]), 5)
    assert "expected 1" in check_count(np.array([1, 2]), 3)
    # the runner's initial value is not 0, so a program must zero the count
    assert tc.outputs[0].init != 0 and tc.outputs[0].size(generate("grid:2x2")) == 1


# ----------------------------------------------------------------------- GPU


@pytest.fixture(scope="module")
def programs() -> dict[str, object]:
    return {name: Program(build(load_app(name).mlir)) for name in APPS}


def run_app(app: AppSpec, program: object, spec: str) -> str | None:
    graph, _ = resolve_graph(spec, app.symmetrize, app.weighted, None)
    ctx = execute(app, program, graph, 0, reps=2, warmup=1)  # type: ignore[arg-type]
    assert len(ctx.times_ms) == 2
    assert app.check is not None
    return app.check(ctx)


@pytest.mark.gpu
@pytest.mark.parametrize("spec", SMALL_GRAPHS)
@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-6])
def test_pr_on_gpu(programs: dict[str, object], spec: str, tol: float) -> None:
    pr = load_app("pr")
    app = dataclasses.replace(pr, params={**pr.params, "tolerance": tol})
    problem = run_app(app, programs["pr"], spec)
    assert problem is None, problem


@pytest.mark.gpu
@pytest.mark.parametrize("spec", SMALL_GRAPHS)
def test_tc_on_gpu(programs: dict[str, object], spec: str) -> None:
    problem = run_app(load_app("tc"), programs["tc"], spec)
    assert problem is None, problem
