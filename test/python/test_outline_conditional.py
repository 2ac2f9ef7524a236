# ruff: noqa: E501
"""Invocations inside an `scf.if` of a Pipe body, outlined (the default:
`lower-irgl{outline_conditional}`, irgl-outline-iterations `conditional`):
a Pipe whose rounds invoke a kernel only where the host's flag says so
counts the same rounds on a GPU as on the interpreter, and SSSP, whose
window steps run only after a phase that ran a round, gives the same
distances as without that guard, with fewer invocations from a source
without edges."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import has_gpu, nvcc_object_errors, shared_build_cache

from irgl_interpreter.apps import InterpProgram, run_app
from irgl_runner.apps import AppSpec, load_app
from irgl_runner.build import emit_program
from irgl_runner.generators import generate

#: A Pipe of N rounds (every node pushed, then each round's item n pushes
#: n - 1 while n > 0) whose rounds invoke @mark only where the host's flag
#: says so: out[0] counts the rounds that took the branch.
FLAGGED = """
irgl.kernel @seed(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.wl.push %n
  }
}
irgl.kernel @step(%g: !irgl.graph) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %more = arith.cmpi ugt, %n, %c0 : index
    scf.if %more {
      %m = arith.subi %n, %c1 : index
      irgl.wl.push %m
    }
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
  irgl.pipe once {
    irgl.invoke @seed(%g) : (!irgl.graph)
    irgl.pipe {
      irgl.invoke @step(%g) : (!irgl.graph)
      scf.if %flag {
        irgl.invoke @mark(%out) : (memref<?xi32>)
      }
    }
  }
}
"""

#: SSSP's guarded window steps (benchmarks/sssp/sssp.mlir) and the same
#: steps unguarded.
GUARD_OPEN = "      %ran = arith.cmpi ne, %rounds, %c1 : i32\n      scf.if %ran {\n"
STEP_NAMES = ("@find_far", "@advance", "@split")


@functools.cache
def _unguarded_sssp(folder: str) -> AppSpec:
    """The SSSP app with its window steps run after every phase."""
    app = load_app("sssp")
    text = Path(app.mlir).read_text()
    start = text.index(GUARD_OPEN)
    end = text.index("      }\n", start)
    steps = text[start + len(GUARD_OPEN) : end].splitlines(keepends=True)
    assert [s.split()[1].split("(")[0] for s in steps] == list(STEP_NAMES)
    path = Path(folder) / "sssp_unguarded.mlir"
    path.write_text(
        text[:start] + "".join(s[2:] for s in steps) + text[end + len("      }\n") :]
    )
    return replace(app, mlir=path)


def _isolated(graph) -> int:
    return int(np.flatnonzero(np.diff(graph.row_start) == 0)[0])


def _flagged_rounds(program: Any, nodes: int, flag: bool) -> int:
    graph = generate(f"path:{nodes}")
    out = program.alloc(1, np.int32).from_numpy(np.zeros(1, np.int32))
    program.call("main", program.upload_graph(graph), out, flag)
    return int(out.to_numpy()[0])


def test_flagged_pipe_outlined_and_builds_with_nvcc(tmp_path: Path) -> None:
    source = tmp_path / "flagged.mlir"
    source.write_text(FLAGGED)
    program = emit_program(source, "lower-irgl")
    host = program.cuda.split("static void irgl_host_main(irgl::Graph g,")[1]
    host = host.split("\n}\n")[0]
    # one launch of the control kernel, no host loop of rounds
    assert host.count("launch_cooperative(main_control,") == 1
    assert "irgl_pipe_advance" not in host and "launch(" not in host
    assert nvcc_object_errors(program) is None


def test_flagged_pipe_on_the_interpreter(tmp_path: Path) -> None:
    source = tmp_path / "flagged.mlir"
    source.write_text(FLAGGED)
    program = InterpProgram(source, "sequential", {})
    assert _flagged_rounds(program, 7, False) == 0
    assert _flagged_rounds(program, 7, True) == 7


@pytest.mark.gpu
def test_flagged_pipe_on_gpu(tmp_path: Path) -> None:
    from irgl_runner.api import Program
    from irgl_runner.build import build

    assert has_gpu()
    source = tmp_path / "flagged.mlir"
    source.write_text(FLAGGED)
    program = Program(build(source, "lower-irgl", cache=shared_build_cache()))
    reference = InterpProgram(source, "sequential", {})
    for nodes in (1, 5, 300):
        for flag in (False, True):
            assert _flagged_rounds(program, nodes, flag) == _flagged_rounds(
                reference, nodes, flag
            ), (nodes, flag)


def test_guarded_sssp_matches_and_skips_the_empty_phase(tmp_path: Path) -> None:
    app = load_app("sssp")
    unguarded = _unguarded_sssp(str(tmp_path))
    graph = generate("rmat:9")
    for source in (0, _isolated(graph)):
        plain = run_app(unguarded, graph, "sequential", source=source)
        runs = run_app(app, graph, "random:3", source=source)
        assert plain.problem is None and runs.problem is None
        np.testing.assert_array_equal(
            plain.ctx.outputs["dist"], runs.ctx.outputs["dist"]
        )
    # from a node without edges only @init runs (no window steps)
    assert runs.stats.invocations < plain.stats.invocations
