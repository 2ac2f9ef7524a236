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
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import irgl_opt, nvcc_object_errors, nvcc_path

from irgl_runner.api import Program, build, emit_cuda
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


# ------------------------------------------------------------------ lowering


@pytest.mark.parametrize("name", APPS)
def test_lowers_completely(name: str) -> None:
    app = load_app(name)
    proc = irgl_opt("--lower-irgl", str(app.mlir))
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
    assert nvcc_object_errors(cuda) is None


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


@dataclasses.dataclass
class Counters:
    """What an instrumented sequential run of a TC program did, per kernel."""

    reads: dict[str, int] = dataclasses.field(default_factory=dict)
    atomics: dict[str, int] = dataclasses.field(default_factory=dict)
    steps: dict[str, int] = dataclasses.field(default_factory=dict)
    #: per node: did @orient leave its out-list in order
    arrived_sorted: np.ndarray | None = None

    def add(
        self, kernel: str, reads: int = 0, atomics: int = 0, steps: int = 0
    ) -> None:
        for table, value in (
            (self.reads, reads),
            (self.atomics, atomics),
            (self.steps, steps),
        ):
            table[kernel] = table.get(kernel, 0) + value


def tc_model(
    graph: CSRGraph, rng: np.random.Generator | None = None
) -> tuple[int, Counters]:
    """benchmarks/tc/tc.mlir run sequentially, counting what work.py counts.

    With ``rng``, the edges of each node run in a random order, so the atomic
    appends of @orient leave the out-lists in any order (as on the GPU)."""
    rs, dst = graph.row_start, graph.edge_dst
    n_nodes = graph.num_nodes
    deg = np.diff(rs)
    c = Counters()
    nout = np.zeros(n_nodes, np.int64)
    nin = np.zeros(n_nodes, np.int64)
    unsorted = np.full(graph.num_edges, -1, np.int64)
    lists = np.full(graph.num_edges, -1, np.int64)

    def edges(n: int) -> np.ndarray:
        e = np.arange(rs[n], rs[n + 1])
        return rng.permutation(e) if rng is not None else e

    for n in range(n_nodes):  # @orient
        c.add("orient", reads=4)
        for e in edges(n):
            u = int(dst[e])
            c.add("orient", reads=3)
            if (deg[u], u) > (deg[n], n):
                unsorted[rs[n] + nout[n]] = u
                nout[n] += 1
                c.add("orient", atomics=1)
            elif u != n:
                lists[rs[n + 1] - 1 - nin[n]] = u
                nin[n] += 1
                c.add("orient", atomics=1)
    arrived_sorted = np.zeros(n_nodes, bool)
    for n in range(n_nodes):  # @sort_out
        c.add("sort_out", reads=2)
        first, end = rs[n], rs[n] + nout[n]
        out = unsorted[first:end]
        pairs = max(end - first - 1, 0)
        c.add("sort_out", reads=2 * pairs, steps=pairs)
        arrived_sorted[n] = bool(np.all(out[:-1] <= out[1:]))
        for e in edges(n):
            if e < end:
                x = unsorted[e]
                c.add("sort_out", reads=1)
                if arrived_sorted[n]:
                    lists[e] = x
                    continue
                rank = int(np.count_nonzero(out < x))
                lists[first + rank] = x
                c.add("sort_out", reads=end - first, steps=end - first)
    total = 0
    for v in range(n_nodes):  # @count_triangles
        c.add("count_triangles", reads=4)
        v_first, v_end = rs[v], rs[v] + nout[v]
        found = 0
        for e in edges(v):
            if e < rs[v + 1] - nin[v] or v_end == v_first:
                continue
            u = lists[e]
            i, j, u_end = rs[u], v_first, rs[u] + nout[u]
            a, b = lists[i], lists[j]
            c.add("count_triangles", reads=5)
            while i < u_end and j < v_end:
                step_a, step_b = a <= b, b <= a
                found += int(step_a and step_b)
                c.add("count_triangles", reads=int(step_a) + int(step_b), steps=1)
                if step_a:
                    i += 1
                    a = lists[min(i, u_end - 1)]
                if step_b:
                    j += 1
                    b = lists[min(j, v_end - 1)]
        if found:
            total += found
            c.add("count_triangles", atomics=1)
    c.arrived_sorted = arrived_sorted
    return total, c


def old_tc_model(graph: CSRGraph) -> tuple[int, Counters]:
    """The program tc.mlir replaced, run sequentially and instrumented."""
    rs, dst = graph.row_start, graph.edge_dst
    deg = np.diff(rs)
    c = Counters()
    total = 0
    for n in range(graph.num_nodes):
        c.add("count_triangles", reads=4)
        for e in range(rs[n], rs[n + 1]):
            v = int(dst[e])
            c.add("count_triangles", reads=3)
            if not (deg[v], v) > (deg[n], n):
                continue
            c.add("count_triangles", reads=2)
            found = 0
            for k in range(rs[n], rs[n + 1]):
                w = int(dst[k])
                c.add("count_triangles", reads=3, steps=1)
                if not (deg[w], w) > (deg[v], v):
                    continue
                c.add("searches", steps=1)
                lo, hi = rs[v], rs[v + 1]
                while lo < hi:
                    mid = lo + ((hi - lo) >> 1)
                    c.add("count_triangles", reads=1, steps=1)
                    lo, hi = (mid + 1, hi) if dst[mid] < w else (lo, mid)
                if lo < rs[v + 1]:
                    c.add("count_triangles", reads=1)
                    found += int(dst[lo] == w)
            if found:
                total += found
                c.add("count_triangles", atomics=1)
    return total, c


TC_GRAPHS = ["rmat:7", "grid:5x5", "random:300:250", "random:40:500", "hub:400:2"]


@pytest.mark.parametrize("spec", TC_GRAPHS)
@pytest.mark.parametrize("seed", [None, 1, 2])
def test_tc_model_matches_reference(spec: str, seed: int | None) -> None:
    graph = generate(spec)
    rng = None if seed is None else np.random.default_rng(seed)
    assert tc_model(graph, rng)[0] == triangle_count(graph)


def test_tc_old_model_matches_reference() -> None:
    for spec in TC_GRAPHS:
        graph = generate(spec)
        assert old_tc_model(graph)[0] == triangle_count(graph)


def tc_work() -> Any:
    """benchmarks/tc/work.py as a module."""
    path = Path(load_app("tc").mlir).with_name("work.py")
    spec = importlib.util.spec_from_file_location("tc_work", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tc_work"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("spec", TC_GRAPHS)
def test_tc_work_formulas_count_what_the_programs_do(spec: str) -> None:
    """work.py's closed formulas against the instrumented sequential runs."""
    graph = generate(spec)
    _, new = tc_model(graph, np.random.default_rng(0))
    assert new.arrived_sorted is not None
    if spec == "rmat:7":  # both ways through @sort_out
        longer = np.diff(graph.row_start) > 8
        assert new.arrived_sorted[longer].any() and not new.arrived_sorted[longer].all()
    result = tc_work().work(graph, new.arrived_sorted)
    for k in result["dag"]:
        if k.kernel == "reset":
            continue
        assert k.reads == new.reads[k.kernel], k
        assert k.steps == new.steps.get(k.kernel, 0), k
        if k.kernel == "orient":
            assert k.atomics == new.atomics[k.kernel] == graph.num_edges
        else:
            assert new.atomics.get(k.kernel, 0) <= k.atomics
    _, old = old_tc_model(graph)
    (k,) = result["old"]
    # exact but for the binary searches: each is counted with bits(len)
    # steps and a final read, which it may take one fewer of
    step_slack = k.steps - old.steps["count_triangles"]
    read_slack = k.reads - old.reads["count_triangles"]
    searches = old.steps.get("searches", 0)
    assert 0 <= step_slack <= searches
    assert step_slack <= read_slack <= step_slack + searches
    assert old.atomics.get("count_triangles", 0) <= k.atomics


@pytest.mark.parametrize("base_name", ["random:40:300", "strip"])
def test_tc_program_drops_self_loops(base_name: str) -> None:
    """On the interpreter, in a random order: a self loop is neither an out-
    nor an in-neighbour, so it closes no triangle (the loaders remove them;
    the program does not rely on it), on the DAG path and the sparse one."""
    from irgl_interpreter.apps import run_app as interp_run

    base = triangle_strip(40) if base_name == "strip" else generate(base_name)
    rs, dst = base.row_start, base.edge_dst
    # every third node a loop; every tenth on the strip, to stay sparse
    every = 10 if base_name == "strip" else 3
    rows = [
        [*dst[rs[n] : rs[n + 1]].tolist(), *([n] if n % every == 0 else [])]
        for n in range(40)
    ]
    graph = from_rows(rows)
    assert graph.num_edges == base.num_edges + len(range(0, 40, every))
    assert (graph.num_edges <= 4 * graph.num_nodes) == (base_name == "strip")
    run = interp_run(load_app("tc"), graph, "random:4")
    assert run.problem is None, run.problem
    assert int(run.ctx.outputs["count"][0]) == triangle_count(base) > 0


def from_rows(rows: list[list[int]]) -> CSRGraph:
    """A CSR graph with these (symmetric) rows, each sorted."""
    sorted_rows = [np.sort(np.array(r, np.int64)) for r in rows]
    return CSRGraph(
        len(rows),
        np.r_[0, np.cumsum([len(r) for r in sorted_rows])].astype(np.int64),
        np.concatenate(sorted_rows),
    )


def triangle_strip(n: int) -> CSRGraph:
    """Nodes 0..n-1 joined to the next two: n - 2 triangles, at most 4 edges
    a node (the sparse path of tc.mlir, which grids never test: no triangles)."""
    return from_rows(
        [[m for m in (i - 2, i - 1, i + 1, i + 2) if 0 <= m < n] for i in range(n)]
    )


def fan(n: int, hub_first: bool) -> CSRGraph:
    """A path of n nodes and a hub joined to all of them (node 0 or node n):
    n - 1 triangles around a hub of degree n, still 4 edges a node or fewer
    on average (the sparse path), so an edge next to the hub must not walk
    the hub's whole row."""
    hub, first = (0, 1) if hub_first else (n, 0)
    path = range(first, first + n)
    rows: list[list[int]] = [[] for _ in range(n + 1)]
    for i in path:
        rows[i] += [m for m in (i - 1, i + 1) if m in path] + [hub]
        rows[hub].append(i)
    return from_rows(rows)


#: name -> (graph, its triangles: n - 2 for a strip of n, n - 1 for a fan)
SPARSE_TC_GRAPHS = {
    "strip": (lambda: triangle_strip(50), 48),
    "fan_hub_first": (lambda: fan(60, True), 59),
    "fan_hub_last": (lambda: fan(60, False), 59),
}


@pytest.mark.parametrize(
    "graph_name",
    [*SPARSE_TC_GRAPHS, "grid:7x5", "star:30", "rmat:7", "random:40:300"],
)
def test_tc_program_on_both_paths(graph_name: str) -> None:
    """On the interpreter, in a random order, the count is exact on sparse
    graphs (@count_low_degree: at most 4 edges a node) and dense ones (the
    degree-oriented DAG)."""
    from irgl_interpreter.apps import run_app as interp_run

    made = SPARSE_TC_GRAPHS.get(graph_name)
    graph = made[0]() if made else generate(graph_name)
    sparse = graph.num_edges <= 4 * graph.num_nodes
    assert sparse == (made is not None or graph_name in ("grid:7x5", "star:30"))
    run = interp_run(load_app("tc"), graph, "random:5")
    assert run.problem is None, run.problem
    assert int(run.ctx.outputs["count"][0]) == triangle_count(graph)
    if made is not None:
        assert triangle_count(graph) == made[1]


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
@pytest.mark.parametrize("spec", [*SMALL_GRAPHS, "rmat:14", "grid:300x200"])
def test_tc_on_gpu(programs: dict[str, object], spec: str) -> None:
    problem = run_app(load_app("tc"), programs["tc"], spec)
    assert problem is None, problem


@pytest.mark.gpu
@pytest.mark.parametrize("shape", ["strip", "fan_hub_first", "fan_hub_last"])
def test_tc_on_gpu_sparse_with_triangles(
    programs: dict[str, object], shape: str
) -> None:
    """Sparse graphs of 100,000 nodes with triangles take the sparse path:
    a triangle strip (99,998 triangles) and fans around a hub of degree
    100,000 (99,999)."""
    app = load_app("tc")
    graph = (
        triangle_strip(100_000)
        if shape == "strip"
        else fan(100_000, shape == "fan_hub_first")
    )
    assert graph.num_edges <= 4 * graph.num_nodes
    ctx = execute(app, programs["tc"], graph, 0, reps=2, warmup=1)  # type: ignore[arg-type]
    assert int(ctx.outputs["count"][0]) == (99_998 if shape == "strip" else 99_999)
    assert app.check is not None and app.check(ctx) is None
