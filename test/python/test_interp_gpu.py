"""The lowering tested against the interpreter: every application on the
GPU and on the CPU interpreter with the same small inputs. Deterministic
results must be equal; the others (PageRank's float sums, DMR's refined
mesh) must each pass the app's checker. Marked `gpu`: skipped without one."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import has_gpu
from test_interp_apps import RAW, small_graph

from irgl_interpreter.apps import run_app
from irgl_runner import generators
from irgl_runner.apps import AppSpec, RunContext, execute, load_app

#: Apps whose every output is determined by the input, array by array.
EXACT = {
    "bfs": ["level"],
    "sssp": ["dist"],
    "cc": ["comp"],
    "mis": ["in_set"],
    "tc": ["count"],
    "mst": ["total"],
}
CHECKED = ["mst", "pr"]


@functools.cache
def _gpu_program(name: str):
    from irgl_runner.api import Program
    from irgl_runner.build import build

    return Program(build(load_app(name).mlir))


def _gpu(app: AppSpec, graph, source: int) -> RunContext:
    return execute(app, _gpu_program(app.name), graph, source, reps=1, warmup=0)


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", sorted(RAW))
@pytest.mark.parametrize("name", sorted(EXACT))
def test_gpu_equals_interpreter(name: str, graph_name: str) -> None:
    assert has_gpu()
    app = load_app(name)
    graph = small_graph(graph_name, app.symmetrize, app.weighted)
    source = 9 if app.uses_source else 0
    gpu = _gpu(app, graph, source)
    interp = run_app(app, graph, "random:1", source=source)
    assert interp.problem is None, interp.problem
    assert app.check is not None and app.check(gpu) is None
    for array in EXACT[name]:
        assert np.array_equal(gpu.outputs[array], interp.ctx.outputs[array]), array


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", sorted(RAW))
@pytest.mark.parametrize("name", CHECKED)
def test_gpu_and_interpreter_pass_the_checker(name: str, graph_name: str) -> None:
    assert has_gpu()
    app = load_app(name)
    graph = small_graph(graph_name, app.symmetrize, app.weighted)
    assert app.check is not None
    assert app.check(_gpu(app, graph, 0)) is None
    assert run_app(app, graph, "reversed").problem is None


@pytest.mark.gpu
def test_dmr_gpu_and_interpreter_pass_the_checker() -> None:
    assert has_gpu()
    app = load_app("dmr")
    app.params["points"] = 40
    graph = generators.generate("random:40:0")
    gpu = _gpu(app, graph, 0)
    assert app.check is not None and app.check(gpu) is None
    interp = run_app(app, graph, "random:2")
    assert interp.problem is None, interp.problem
    # same input mesh on both
    assert np.array_equal(gpu.input.arrays["tri"], interp.ctx.input.arrays["tri"])
