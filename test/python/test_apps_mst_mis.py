"""Borůvka MST and MIS benchmarks (benchmarks/mst, benchmarks/mis).

Without a GPU: both programs lower with ``--lower-irgl`` (MST also with
``lower-irgl{ticket_locks=true}``, on its own 32-bit lock words and on its
64-bit-lock variant), their CUDA
builds with nvcc exactly as ``irgl-bench`` builds it (one nvcc run per
program, skipped without nvcc), and the apps' checks accept right and reject
wrong outputs.

With a GPU (marker ``gpu``): each program runs through the irgl_runner
machinery (``irgl_runner.apps.execute``) on connected and disconnected graphs
(RMAT scale 10, a grid, random graphs with isolated nodes, equal weights, a
long path, no edges) and the app's check must pass. Every run is a
subprocess with a timeout, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import irgl_opt, nvcc_object_errors, nvcc_path

from irgl_runner.apps import AppSpec, RunContext, load_app
from irgl_runner.generators import generate
from irgl_runner.graphs import COOGraph, CSRGraph, clean, write_gr
from irgl_runner.reference import cc_min_labels, mis_problem, mst_weight

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
TICKET_PASS = "lower-irgl{ticket_locks=true}"


def _mst_module() -> ModuleType:
    path = BENCHMARKS / "mst" / "app.py"
    spec = importlib.util.spec_from_file_location("irgl_test_mst_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: MST with ticket locks: on its 64-bit-lock variant, and on ``mst.mlir``'s
#: own 32-bit lock words.
TICKET_VARIANTS = ("mst-ticket", "mst-ticket-i32")


def _program_text(variant: str) -> str:
    if variant == "mst-ticket":
        return _mst_module().ticket_lock_mlir()
    if variant == "mst-ticket-i32":
        variant = "mst"
    return (BENCHMARKS / variant / f"{variant}.mlir").read_text()


def _pass_args(variant: str) -> list[str]:
    return ["-p", TICKET_PASS] if variant in TICKET_VARIANTS else ["--lower-irgl"]


def _lower(tmp_path: Path, variant: str, *target: str) -> str:
    """irgl-opt on the program of `variant`; its stdout (fails on errors)."""
    src = tmp_path / f"{variant}.mlir"
    src.write_text(_program_text(variant))
    proc = irgl_opt(*_pass_args(variant), *target, str(src))
    assert proc.returncode == 0, f"{' '.join(proc.args)}\n{proc.stderr}"
    return proc.stdout


VARIANTS = ["mst", "mst-ticket", "mst-ticket-i32", "mis"]


# --------------------------------------------------------------- no GPU needed


@pytest.mark.parametrize("variant", VARIANTS)
def test_lowers(tmp_path: Path, variant: str) -> None:
    lowered = _lower(tmp_path, variant)
    assert "gpu.module" in lowered
    assert "func.func @main" in lowered
    if variant == "mst":
        # blocking Atomic: the divergence-safe CAS loop on 32-bit lock words
        assert "@irgl_lock_try_i32(%locks" in lowered
        assert "irgl_ticket_acquire" not in lowered
    if variant in TICKET_VARIANTS:
        bits = "i32" if variant == "mst-ticket-i32" else "i64"
        assert f"@irgl_ticket_acquire_{bits}(%locks" in lowered
        assert f"@irgl_ticket_release_{bits}(%locks" in lowered
        assert "irgl_lock_try" not in lowered
        assert f"memref<?x{bits}>" in lowered


def test_ticket_variant_changes_only_the_lock_type() -> None:
    mst = _mst_module()
    original = (BENCHMARKS / "mst" / "mst.mlir").read_text().splitlines()
    ticket = mst.ticket_lock_mlir().splitlines()
    changed = [(a, b) for a, b in zip(original, ticket, strict=True) if a != b]
    assert changed == [(mst.CAS_LOCKS, mst.TICKET_LOCKS)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_nvcc_compiles(tmp_path: Path, variant: str) -> None:
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    cuda = _lower(tmp_path, variant, "-t", "cuda")
    assert 'extern "C" int irgl_entry_main(' in cuda
    assert nvcc_object_errors(cuda) is None


def _ctx(app: AppSpec, graph: CSRGraph, **outputs: np.ndarray) -> RunContext:
    return RunContext(app, graph, outputs=dict(outputs))


def _greedy_mis(graph: CSRGraph) -> np.ndarray:
    flags = np.zeros(graph.num_nodes, dtype=np.int32)
    blocked = np.zeros(graph.num_nodes, dtype=bool)
    for v in range(graph.num_nodes):
        if not blocked[v]:
            flags[v] = 1
            blocked[graph.edge_dst[graph.row_start[v] : graph.row_start[v + 1]]] = True
    return flags


def test_mst_check() -> None:
    app = load_app("mst", BENCHMARKS)
    graph = generate("random:300:250")  # disconnected, with isolated nodes
    comp = cc_min_labels(graph).astype(np.int32)
    total = np.array([mst_weight(graph)], dtype=np.int64)
    assert app.check is not None
    assert app.check(_ctx(app, graph, comp=comp, total=total)) is None
    wrong = app.check(_ctx(app, graph, comp=comp, total=total + 1))
    assert wrong is not None and "MST weight" in wrong
    merged = np.zeros_like(comp)  # one component: wrong partition
    assert app.check(_ctx(app, graph, comp=merged, total=total)) is not None
    shifted = comp.copy()
    shifted[comp == 0] = 1  # a component named by a node that is not its root
    assert app.check(_ctx(app, graph, comp=shifted, total=total)) is not None


def test_mis_check() -> None:
    app = load_app("mis", BENCHMARKS)
    graph = generate("random:300:400")
    good = _greedy_mis(graph)
    assert mis_problem(graph, good) is None
    assert app.check is not None
    assert app.check(_ctx(app, graph, in_set=good)) is None
    assert app.check(_ctx(app, graph, in_set=np.zeros_like(good))) is not None
    assert app.check(_ctx(app, graph, in_set=np.ones_like(good))) is not None
    undecided = good.copy()
    undecided[0] = 2
    assert "state 2" in str(app.check(_ctx(app, graph, in_set=undecided)))


# ------------------------------------------------------------------- GPU runs


def _equal_weights(n: int, m: int, seed: int) -> CSRGraph:
    """A random graph whose weights are only 1 and 2 (many MST ties)."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    return clean(COOGraph(n, src, dst, rng.integers(1, 3, m).astype(np.int32)))


def _path(n: int) -> CSRGraph:
    """A path whose edge i-(i+1) weighs i+1: Borůvka hooks one long chain."""
    src = np.arange(n - 1, dtype=np.int64)
    weights = np.arange(1, n, dtype=np.int32)
    return clean(COOGraph(n, src, src + 1, weights))


GRAPHS = {
    "rmat10": lambda: generate("rmat:10"),
    "grid32x32": lambda: generate("grid:32x32"),
    "random-isolated": lambda: generate("random:2000:1500"),
    "equal-weights": lambda: _equal_weights(1000, 3000, 7),
    "path": lambda: _path(5000),
    "no-edges": lambda: generate("random:100:0"),
    "star": lambda: generate("star:5000"),
    "hub": lambda: generate("hub:50000:2"),
}

#: Runs one app on one graph in a fresh interpreter and exits 0 iff it checks.
DRIVER = r"""
import subprocess, sys
from pathlib import Path
from irgl_runner.api import Program, build
from irgl_runner.apps import execute, load_app
from irgl_runner.graphs import read_gr

bench, variant, graph_path, work = sys.argv[1:5]
app = load_app("mst" if variant.startswith("mst-ticket") else variant, bench)
if variant.startswith("mst-ticket"):
    program = Program(build(Path(work) / f"{variant}.mlir",
                            pipeline="lower-irgl{ticket_locks=true}"))
else:
    program = Program(build(app.mlir))
graph = read_gr(graph_path)
if not app.weighted:
    graph.weights = None
ctx = execute(app, program, graph, reps=2, warmup=1)
problem = app.check(ctx)
print(f"{variant} on {graph.num_nodes} nodes / {graph.num_edges} edges: "
      f"{problem or 'ok'} ({min(ctx.times_ms):.3f} ms)")
sys.exit(0 if problem is None else 1)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", list(GRAPHS))
@pytest.mark.parametrize("variant", VARIANTS)
def test_runs_on_gpu(tmp_path: Path, variant: str, graph_name: str) -> None:
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    graph_path = tmp_path / f"{graph_name}.gr"
    write_gr(graph_path, GRAPHS[graph_name]())
    for ticket in TICKET_VARIANTS:
        (tmp_path / f"{ticket}.mlir").write_text(_program_text(ticket))
    cmd = [
        sys.executable,
        "-c",
        DRIVER,
        str(BENCHMARKS),
        variant,
        str(graph_path),
        str(tmp_path),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{variant} on {graph_name} did not finish in 600 s (hang?)")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert ": ok (" in proc.stdout, out
