"""The grid phase of nested parallelism (`lower-irgl{edge_grid_rounds=R}`)
for reducing edge loops: the donor of a hub starts its job's accumulator at
the identity, every block that walks a chunk combines its block total into
it, and the donor combines the job's total into its result.

Without a GPU: which calls the lowering emits and that nvcc builds them
(PageRank pull's f64 sum, MIS's i32 max). With a GPU (marker ``gpu``): both
apps on graphs with hubs pass their checks, each run in a subprocess with a
time limit (a lost chunk would hang the donor).
"""

from __future__ import annotations

import pytest
from conftest import assert_driver_passes, nvcc_path, shared_build_cache

from irgl_runner.api import compile_cuda, emit_cuda
from irgl_runner.apps import load_app

#: Hubs of at least 4 control-block sizes of edges (4,096 with 1,024
#: threads) go to the grid phase.
GRID_PIPELINE = "lower-irgl{edge_grid_rounds=4}"

#: (app, the calls of its reducing loop's grid phase)
APPS = {
    "pr_pull": (
        "irgl_grid_acc_init_f64(",
        "irgl_grid_combine_add_f64(",
        "irgl_grid_finish_f64(",
    ),
    "mis": (
        "irgl_grid_acc_init_i32(",
        "irgl_grid_combine_max_i32(",
        "irgl_grid_finish_i32(",
    ),
}


@pytest.mark.parametrize("app", list(APPS))
def test_reducing_loops_get_the_grid_phase(app: str) -> None:
    cuda = emit_cuda(load_app(app).mlir, GRID_PIPELINE)
    for call in APPS[app]:
        assert call in cuda, call
    default = emit_cuda(load_app(app).mlir)
    kernels = default[default.index("// gpu.module @irgl_kernels") :]
    assert "irgl_grid_take(" not in kernels  # off by default


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not found")
@pytest.mark.parametrize("app", list(APPS))
def test_grid_phase_builds(app: str) -> None:
    cuda = emit_cuda(load_app(app).mlir, GRID_PIPELINE)
    so = compile_cuda(cuda, nvcc=nvcc_path() or "nvcc", cache=shared_build_cache())
    assert so.is_file() and so.stat().st_size > 0


DRIVER = r"""
import sys
from irgl_runner.api import Program, build
from irgl_runner.apps import execute, load_app
from irgl_runner.graph_args import resolve_graph
name, pipeline, spec = sys.argv[1:4]
app = load_app(name)
program = Program(build(app.mlir, pipeline))
graph, _ = resolve_graph(spec, app.symmetrize, app.weighted, None)
ctx = execute(app, program, graph, 0, reps=2, warmup=1)
problem = app.check(ctx)
print(f"{name} on {spec}: {problem or 'ok'}")
sys.exit(0 if problem is None else 1)
"""


@pytest.mark.gpu
@pytest.mark.parametrize(
    "spec", ["hub:200000:2", "hub:1000000", "star:50000", "rmat:16"]
)
@pytest.mark.parametrize("app", list(APPS))
def test_grid_phase_on_gpu(app: str, spec: str) -> None:
    """The results pass the apps' checks (PageRank's sums are added in a
    varying order, within its tolerance)."""
    assert_driver_passes(
        [DRIVER, app, GRID_PIPELINE, spec], f"{app} on {spec} with the grid phase"
    )
