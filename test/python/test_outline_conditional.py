# ruff: noqa: E501
"""Invocations inside an `scf.if` of a Pipe body, outlined
(`lower-irgl{outline_conditional}`, irgl-outline-iterations `conditional`):
the control kernel builds with nvcc; SSSP written to skip its window's scan
after a phase that ran no round gives the same distances on the
interpreter with fewer invocations, and on a GPU (outlined with the option)
the reference's."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import has_gpu, nvcc_object_errors, shared_build_cache

from irgl_interpreter.apps import run_app
from irgl_runner.apps import AppSpec, execute, load_app
from irgl_runner.build import emit_program
from irgl_runner.generators import generate

PIPELINE = "lower-irgl{outline_conditional=true}"

#: A Pipe whose round invokes @mark only where the host's flag says so.
FLAGGED = """
irgl.kernel @step(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel @mark(%out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %i in range(%c0, %c1) {
    %old = "memref.atomic_rmw"(%one, %out, %c0) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
  }
}
irgl.kernel host @main(%g: !irgl.graph, %out: memref<?xi32>, %flag: i1) {
  irgl.pipe {
    irgl.invoke @step(%g) : (!irgl.graph)
    scf.if %flag {
      irgl.invoke @mark(%out) : (memref<?xi32>)
    }
  }
}
"""

#: SSSP's window steps, and the same under a test that a round ran.
WINDOW_STEPS = """\
      irgl.invoke @find_far(%g, %dist, %stamp, %win, %rounds) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, i32)
      irgl.invoke @advance(%win, %delta) : (memref<?xi32>, i32)
      irgl.invoke @split(%g, %dist, %win) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
"""
GUARDED = (
    "      %ran = arith.cmpi ne, %rounds, %c1 : i32\n      scf.if %ran {\n"
    + "".join("  " + line + "\n" for line in WINDOW_STEPS.splitlines())
    + "      }\n"
)


@functools.cache
def _guarded_sssp(folder: str) -> AppSpec:
    """The SSSP app with its window steps run only after a phase that ran
    a round (only the first phase can run none: from a source without
    edges, where nothing is far)."""
    app = load_app("sssp")
    text = Path(app.mlir).read_text()
    assert WINDOW_STEPS in text, "benchmarks/sssp/sssp.mlir's window steps moved"
    path = Path(folder) / "sssp_guarded.mlir"
    path.write_text(text.replace(WINDOW_STEPS, GUARDED))
    return replace(app, mlir=path)


def _isolated(graph) -> int:
    return int(np.flatnonzero(np.diff(graph.row_start) == 0)[0])


def test_flagged_pipe_builds_with_nvcc(tmp_path: Path) -> None:
    source = tmp_path / "flagged.mlir"
    source.write_text(FLAGGED)
    program = emit_program(source, PIPELINE)
    assert "main_control" in program.cuda
    assert nvcc_object_errors(program) is None


def test_guarded_sssp_matches_and_skips_the_empty_phase(tmp_path: Path) -> None:
    app = load_app("sssp")
    guarded = _guarded_sssp(str(tmp_path))
    graph = generate("rmat:9")
    for source in (0, _isolated(graph)):
        plain = run_app(app, graph, "sequential", source=source)
        runs = run_app(guarded, graph, "random:3", source=source)
        assert plain.problem is None and runs.problem is None
        np.testing.assert_array_equal(
            plain.ctx.outputs["dist"], runs.ctx.outputs["dist"]
        )
    # from a node without edges only @init runs (no window steps)
    assert runs.stats.invocations < plain.stats.invocations


@pytest.mark.gpu
@pytest.mark.parametrize("spec", ["rmat:12", "grid:40x30", "random:3000:30000"])
def test_guarded_sssp_outlined_on_gpu(spec: str, tmp_path_factory) -> None:
    from irgl_runner.api import Program, build

    assert has_gpu()
    guarded = _guarded_sssp(str(tmp_path_factory.mktemp("guarded")))
    program = Program(build(guarded.mlir, PIPELINE, cache=shared_build_cache()))
    graph = generate(spec)
    sources = [0] + (
        [_isolated(graph)] if (np.diff(graph.row_start) == 0).any() else []
    )
    for source in sources:
        ctx = execute(guarded, program, graph, source=source, reps=2, warmup=1)
        assert guarded.check is not None and guarded.check(ctx) is None, (spec, source)
