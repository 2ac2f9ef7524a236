"""Retry backoff (`lower-irgl{retry_backoff=true}`) and the conflict benchmark
`benchmarks/color`.

Without a GPU: every benchmark lowers with the option and only retrying
kernels change (their ForAll over the worklist gets `retry_blocked`);
color (outlined and host loops), mst and dmr build with nvcc exactly as
`irgl-bench` builds them; the runtime's backoff arithmetic runs on the host
(a small nvcc-built program, no GPU); the colouring check accepts right and
rejects wrong colourings.

With a GPU (marker `gpu`): color on RMAT, a grid, a star and a hub graph
with the option on and off (proper greedy colouring, the launch counter
reported and, on the star, far fewer launches with backoff); every app with
the option on and off through `irgl-bench run`. Each run is a subprocess
with a timeout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import irgl_opt, nvcc_path, run_host_program, shared_build_cache

from irgl_runner.api import compile_cuda
from irgl_runner.apps import RunContext, load_app
from irgl_runner.generators import generate
from irgl_runner.graphs import COOGraph, CSRGraph, clean, write_gr

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RUNTIME_DIR = ROOT / "cuda_emitter" / "runtime"
#: Retry backoff on the three-phase protocol (claim locks retry in place).
BACKOFF = "lower-irgl{retry_backoff=true exclusive_locks=false}"
#: Hashed priorities (sized priorities, the default, take precedence).
HASHED = "hashed_priority=true sized_priority=false"
ALL_APPS = sorted(p.parent.name for p in BENCHMARKS.glob("*/app.py"))


def _lower(app: str, pipeline: str, *target: str) -> str:
    src = BENCHMARKS / app / f"{app}.mlir"
    proc = irgl_opt("-p", pipeline, *target, str(src))
    assert proc.returncode == 0, f"{' '.join(proc.args)}\n{proc.stderr}"
    return proc.stdout


# --------------------------------------------------------------- no GPU needed


def test_color_is_a_benchmark() -> None:
    assert "color" in ALL_APPS


@pytest.mark.parametrize("app", ALL_APPS)
def test_every_app_lowers_with_backoff(app: str) -> None:
    """Only kernels re-launched after conflicts are blocked in retry rounds:
    color's @color (dmr's @refine retries with merge, re-launching nothing)."""
    lowered = _lower(
        app, "lower-irgl{retry_backoff=true outline=false exclusive_locks=false}"
    )
    blocked = lowered.count("retry_blocked>")
    retrying = 1 if app == "color" else 0
    assert blocked == retrying, lowered
    assert lowered.count("@irgl_pipe_backoff_grid(%") == retrying


def test_color_kernel_is_blocked_in_retry_rounds() -> None:
    lowered = _lower("color", BACKOFF)
    assert "#irgl_rt.forall<uniform, retry_blocked>" in lowered
    # backoff keeps the Pipe a host loop whose re-launches shrink the grid
    assert "@irgl_pipe_backoff_grid(" in lowered
    assert "@irgl_wl_next_round(" not in lowered
    off = _lower("color", "lower-irgl{exclusive_locks=false}")
    assert "retry_blocked" not in off
    assert "irgl_wl_next_round" not in off


def test_claim_locks_leave_nothing_to_back_off() -> None:
    """With claim locks (exclusive_locks=true) color retries in place: no
    Retry is left to re-launch on, so backoff changes nothing."""
    lowered = _lower("color", "lower-irgl{retry_backoff=true exclusive_locks=true}")
    assert "retry_blocked" not in lowered
    assert "@irgl_claim_lock(" in lowered
    assert "@irgl_claim_write(" not in lowered


@pytest.mark.parametrize(
    "app,options",
    [
        ("color", "retry_backoff=true"),
        ("mst", "retry_backoff=true"),
        ("dmr", "retry_backoff=true"),
    ],
)
def test_nvcc_builds_with_backoff(tmp_path: Path, app: str, options: str) -> None:
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    cuda = _lower(app, f"lower-irgl{{{options}}}", "-t", "cuda")
    assert 'extern "C" int irgl_entry_main(' in cuda
    so = compile_cuda(cuda, nvcc=nvcc, cache=shared_build_cache())
    assert so.is_file()


BACKOFF_HOST_TEST = r"""
#include "irgl_runtime.cuh"
#include <cstdio>
#define EXPECT(c) \
  do { if (!(c)) { std::printf("FAILED: %s\n", #c); return 1; } } while (0)
int main() {
  // round 0: the cyclic mapping's rounds; round r: at least 2^r
  EXPECT(irgl_backoff_chunk(0, 3) == 3);
  EXPECT(irgl_backoff_chunk(0, 0) == 0);
  EXPECT(irgl_backoff_chunk(1, 1) == 2);
  EXPECT(irgl_backoff_chunk(3, 5) == 8);
  EXPECT(irgl_backoff_chunk(3, 9) == 9);
  EXPECT(irgl_backoff_chunk(40, 1) == (irgl_index(1) << IRGL_BACKOFF_MAX_SHIFT));
  irgl::Worklist a{}, b{};
  EXPECT(irgl_wl_retry_round(a) == 0);
  b = irgl_wl_next_round(b, a);
  EXPECT(irgl_wl_retry_round(b) == 1);
  a = irgl_wl_next_round(a, b);
  EXPECT(irgl_wl_retry_round(a) == 2);
  EXPECT(irgl_wl_retry_round(irgl_wl_first_round(a)) == 0);
  std::printf("ok\n");
  return 0;
}
"""


def test_backoff_arithmetic_on_the_host(tmp_path: Path) -> None:
    run_host_program(tmp_path, "backoff", BACKOFF_HOST_TEST)


def _square() -> CSRGraph:
    """A 4-cycle 0-1-2-3-0 with a chord 0-2 and a pendant node 4 on 0."""
    src = np.array([0, 1, 2, 3, 0, 0])
    dst = np.array([1, 2, 3, 0, 2, 4])
    return clean(COOGraph(5, src, dst, None), symmetrize=True)


def _check(color: list[int], stats=(1, 0), result=None) -> str | None:
    app = load_app("color", BENCHMARKS)
    assert app.check is not None
    outputs = {
        "color": np.array(color, dtype=np.int32),
        "stats": np.array(stats, dtype=np.int32),
    }
    ctx = RunContext(app, _square(), outputs=outputs, result=result)
    return app.check(ctx)


def test_color_check_accepts_greedy_colourings() -> None:
    # 0 first (colour 0), then 2 (1), 1 and 3 (2 each), 4 (1)
    assert _check([0, 2, 1, 2, 1]) is None
    assert _check([0, 2, 1, 2, 1], stats=(3, 5), result=3) is None


@pytest.mark.parametrize(
    "color,expected",
    [
        ([0, 2, 1, 2, 0], "not proper: adjacent nodes 0 and 4"),
        ([0, 1, 1, 2, 1], "not proper: adjacent nodes 1 and 2"),
        ([0, 2, 1, 2, 3], "not greedy: node 4 has colour 3"),
        ([0, 3, 1, 3, 1], "not greedy: node 1 has colour 3"),
        ([0, 2, -1, 2, 1], "node 2 is not coloured"),
        ([0, 2, 1], "3 values, expected 5"),
    ],
)
def test_color_check_rejects(color: list[int], expected: str) -> None:
    problem = _check(color)
    assert problem is not None and expected in problem, problem


def test_color_check_compares_the_counters() -> None:
    assert "0 invocations" in str(_check([0, 2, 1, 2, 1], stats=(0, 0)))
    assert "returns 4" in str(_check([0, 2, 1, 2, 1], stats=(3, 0), result=4))


def test_color_on_the_interpreter_of_a_star() -> None:
    """The hub conflicts with every leaf: the kernel is re-launched on the
    losers, and the colouring is still proper and greedy."""
    from irgl_interpreter.apps import run_app

    app = load_app("color", BENCHMARKS)
    run = run_app(app, generate("star:12"), "random:3")
    assert run.problem is None, run.problem
    stats = run.ctx.outputs["stats"]
    assert stats[0] > 1 and stats[1] > 0  # re-launches and retried items
    assert run.ctx.result == stats[0]


# ------------------------------------------------------------------- GPU runs

GRAPHS = {
    "rmat12": "rmat:12",
    "grid64x64": "grid:64x64",
    "star": "star:20000",
    "hub": "hub:20000:4",
}

#: Runs color on one graph with one pipeline; prints the launch counter.
DRIVER = r"""
import json, sys
from irgl_runner.api import Program, build
from irgl_runner.apps import execute, load_app
from irgl_runner.graphs import read_gr

bench, pipeline, graph_path = sys.argv[1:4]
app = load_app("color", bench)
program = Program(build(app.mlir, pipeline=pipeline))
graph = read_gr(graph_path)
graph.weights = None
ctx = execute(app, program, graph, reps=1, warmup=1)
problem = app.check(ctx)
stats = [int(v) for v in ctx.outputs["stats"]]
print(json.dumps({"problem": problem, "launches": ctx.result, "stats": stats}))
sys.exit(0 if problem is None else 1)
"""


def _run_color(tmp_path: Path, graph: str, pipeline: str) -> dict:
    graph_path = tmp_path / "g.gr"
    write_gr(graph_path, generate(graph))
    cmd = [sys.executable, "-c", DRIVER, str(BENCHMARKS), pipeline, str(graph_path)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail(f"color on {graph} ({pipeline}) did not finish in 600 s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.gpu
@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize(
    "pipeline",
    [
        "lower-irgl",
        "lower-irgl{retry_drain=false sized_priority=false}",
        BACKOFF,
        "lower-irgl{outline=false}",
        "lower-irgl{retry_backoff=true outline=false exclusive_locks=false}",
        "lower-irgl{exclusive_locks=false}",
        "lower-irgl{exclusive_locks=false outline=false}",
        f"lower-irgl{{{HASHED} exclusive_locks=false}}",
        f"lower-irgl{{{HASHED} retry_backoff=true exclusive_locks=false}}",
        "lower-irgl{retry_merged=false}",
        "lower-irgl{retry_drain=false}",
        "lower-irgl{exclusive_warp=false}",
        "lower-irgl{exclusive_footprint=false}",
        "lower-irgl{exclusive_block_claims=0}",
    ],
)
def test_color_runs_on_gpu(tmp_path: Path, graph: str, pipeline: str) -> None:
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    out = _run_color(tmp_path, GRAPHS[graph], pipeline)
    assert out["problem"] is None
    assert out["launches"] == out["stats"][0] >= 1


@pytest.mark.gpu
@pytest.mark.parametrize("outline", ["true", "false"])
def test_backoff_cuts_launches_on_a_star(tmp_path: Path, outline: str) -> None:
    """Every leaf's neighbourhood holds the hub: one winner per uniform round.
    Without backoff that is about one leaf per re-launch; with it round r has
    2^r rounds, so the launches drop to about log2(leaves)."""
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    star = "star:4000"
    rounds = "exclusive_locks=false exclusive_footprint=false"
    plain = _run_color(tmp_path, star, f"lower-irgl{{outline={outline} {rounds}}}")
    backoff = _run_color(
        tmp_path,
        star,
        f"lower-irgl{{retry_backoff=true outline={outline} {rounds}}}",
    )
    assert backoff["launches"] <= 64, backoff
    assert backoff["launches"] * 10 < plain["launches"], (plain, backoff)


@pytest.mark.gpu
@pytest.mark.parametrize("outline", ["true", "false"])
def test_claim_locks_color_a_star(tmp_path: Path, outline: str) -> None:
    """With claim locks (exclusive_locks=true, off by default) the leaves
    retry on the hub's cell in place, so the program's count of slot 0's
    iterations (its `launches` under re-launches) counts slot 0's attempts.
    The hub's cell lets one leaf through at a time, so a leaf loses about
    once per other leaf (a younger holder that dies adds a few): a contender
    starved by the others (the hang fixed in 02108eb) would not finish or
    exceed twice the node count (an H200 had 3,505, 3,809 and 4,050 of
    4,001)."""
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    graph = "star:4000"
    out = _run_color(
        tmp_path, graph, f"lower-irgl{{outline={outline} exclusive_locks=true}}"
    )
    assert out["problem"] is None
    assert 1 <= out["stats"][0] <= 2 * generate(graph).num_nodes, out


#: A graph per app for the on/off run (DMR builds its mesh from the node count).
APP_GRAPHS = {"dmr": "random:3000:0"}


@pytest.mark.gpu
@pytest.mark.parametrize("backoff", ["false", "true"])
@pytest.mark.parametrize("app", ALL_APPS)
def test_every_app_on_gpu_with_and_without_backoff(
    tmp_path: Path, app: str, backoff: str
) -> None:
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    graph = APP_GRAPHS.get(app, "rmat:11")
    cmd = [
        sys.executable,
        "-m",
        "irgl_runner.bench_cli",
        "run",
        app,
        "--graph",
        graph,
        "--reps",
        "1",
        "--cache-dir",
        str(tmp_path / "cache"),
        "-p",
        f"lower-irgl{{retry_backoff={backoff}}}",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{app} (retry_backoff={backoff}) did not finish in 600 s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record["check"] == "passed", record
