"""Every app with every optimization off (``none``) and on (``all``): the
ablation's two extremes (:mod:`irgl_runner.ablation`) on small graphs, each
result checked against the CPU reference by the app's own check, as
``irgl-bench run`` does.

Without a GPU: every app lowers and emits under every configuration of the
ablation, and ``none`` and ``all`` are different programs.

With a GPU (marker ``gpu``): one subprocess per (app, configuration)
compiles the program once (through the program cache, so ``irgl-bench build
--ablation --configs none,all`` beforehand leaves only the runs) and runs it
on each of the app's graphs (a warm-up and a timed run), one JSON line per
graph; each (app, configuration, graph) is a test that reads its line. The
subprocess has a time limit, so a hang fails that app's tests instead of
stopping the suite.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest
from conftest import has_gpu

from irgl_runner.ablation import ALL, NONE, configurations
from irgl_runner.apps import load_app
from irgl_runner.build import emit_cuda

#: The graph apps, each on a grid, an RMAT graph, a star (one hub: nested
#: parallelism's block path) and a chain (many iterations of one Iterate).
GRAPH_APPS = ["bfs", "sssp", "cc", "mis", "mst", "pr", "pr_pull", "tc"]
GRAPHS = ["grid:24x20", "rmat:10", "star:2000", "path:1500"]

#: DMR's input is a mesh of as many random points as the graph has nodes.
DMR_INPUTS = ["random:1500:0", "random:4000:0"]

CASES = [(a, g) for a in GRAPH_APPS for g in GRAPHS] + [("dmr", g) for g in DMR_INPUTS]
APPS = [*GRAPH_APPS, "dmr"]
CONFIGS = [NONE, ALL]

#: Seconds for one (app, configuration): compiling (when not cached) and
#: every graph.
TIME_LIMIT_S = 600

DRIVER = r"""
import json, sys
from irgl_runner.api import Program, build
from irgl_runner.apps import execute, load_app
from irgl_runner.graph_args import default_source, resolve_graph

name, pipeline, *graphs = sys.argv[1:]
app = load_app(name)
program = Program(build(app.mlir, pipeline=pipeline))
for text in graphs:
    try:
        graph, spec = resolve_graph(text, app.symmetrize, app.weighted, None)
        ctx = execute(app, program, graph, default_source(graph, spec),
                      reps=1, warmup=1)
        problem = app.check(ctx) if app.check is not None else "no check"
        line = {"graph": text, "problem": problem, "ms": ctx.times_ms[0]}
    except Exception as e:  # the next graph still runs
        line = {"graph": text, "problem": f"{type(e).__name__}: {e}"}
    print(json.dumps(line), flush=True)
"""


def _pipelines() -> dict[str, str]:
    return {c.name: c.pipeline for c in configurations()}


# --------------------------------------------------------------- no GPU needed


@pytest.mark.parametrize("app", APPS)
def test_every_configuration_lowers_and_emits(app: str) -> None:
    mlir = load_app(app).mlir
    texts = {name: emit_cuda(mlir, p) for name, p in _pipelines().items()}
    assert all("__global__" in t for t in texts.values())
    assert texts[NONE] != texts[ALL], f"{app}: the optimizations change nothing"


# --------------------------------------------------------------------- GPU


@functools.cache
def _run(app: str, config: str) -> dict[str, dict]:
    """Every graph of ``app`` under ``config``: graph -> its JSON line (an
    ``"error"`` entry when the subprocess died or ran out of time)."""
    graphs = [g for a, g in CASES if a == app]
    cmd = [sys.executable, "-c", DRIVER, app, _pipelines()[config], *graphs]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_LIMIT_S)
    except subprocess.TimeoutExpired as e:
        done = str(e.stdout or "")
        return {"error": {"problem": f"timed out after {TIME_LIMIT_S} s\n{done}"}}
    lines = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            lines[record["graph"]] = record
    if proc.returncode != 0:
        lines["error"] = {"problem": f"exit {proc.returncode}:\n{proc.stderr[-3000:]}"}
    return lines


@pytest.mark.gpu
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize(("app", "graph"), CASES)
def test_app_is_correct_with_optimizations_off_and_on(
    app: str, graph: str, config: str
) -> None:
    assert has_gpu()
    lines = _run(app, config)
    line = lines.get(graph)
    assert line is not None, f"{app} [{config}] on {graph}: no result: {lines}"
    assert line["problem"] is None, f"{app} [{config}] on {graph}: {line['problem']}"
    assert line["ms"] > 0
