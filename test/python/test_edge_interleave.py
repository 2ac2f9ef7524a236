"""convert-irgl-nested-edges `interleave` (lower-irgl `edge_interleave=N`):
a thread runs N iterations of each phase's edge loop interleaved, operation
by operation, so that their loads and atomics are issued together.

- lowering: each phase of BFS reads the destinations of four edges before
  the first level, and issues the four exchanges before the first push; a
  body with an operation whose used result has no zero (a
  `memref.alloca`) keeps the serial loop; bad values are diagnostics;
- build: a plain and a reducing app compile (nvcc, skipped without);
- GPU (marker ``gpu``): every graph app passes its CPU check with
  `edge_interleave=4` on RMAT, grid, star, hub, raw random and path graphs
  (degrees of every residue modulo 4, isolated nodes, hubs next to them)
  and with `edge_interleave=3` on RMAT (a step that does not divide the
  degrees)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import (
    assert_app_passes_its_check,
    emitted_code,
    irgl_opt,
    nvcc_object_errors,
)
from test_apps_traversal import GRAPHS

from irgl_runner.apps import load_app

# reducing loops too (lower-irgl interleaves only the others by default)
PIPELINE = "lower-irgl{edge_interleave=4 edge_interleave_reduce=4}"
APPS = ["bfs", "sssp", "cc", "mis", "mst", "pr", "pr_pull", "tc"]


def _bfs_kernel(code: str) -> str:
    """BFS's top-down step as the control kernel runs it (its device body:
    the kernel itself is not emitted when only the control kernel runs it)."""
    start = code.index("__device__ void bfs_device(irgl::Graph g")
    return code[start : code.index("\n}\n", start)]


def test_bfs_phases_load_four_edges_at_once() -> None:
    kernel = _bfs_kernel(emitted_code("bfs", PIPELINE))
    lines = [line.strip() for line in kernel.splitlines()]
    dsts = [i for i, line in enumerate(lines) if "irgl_graph_edge_dst(g, " in line]
    # block, warp and thread phases: four destinations in a row each, then
    # the four levels, then the four exchanges before the first push (staged
    # per block: BFS pushes from its edge loop, block_push_edges)
    assert len(dsts) == 12
    for phase in range(3):
        first = dsts[4 * phase]
        assert dsts[4 * phase : 4 * phase + 4] == list(range(first, first + 4))
        loads = lines[first + 4 : first + 8]
        level = r"int32_t \w+ = level\[\w+\];"
        assert all(re.fullmatch(level, line) for line in loads), loads
    assert kernel.count("atomicExch(") == 12
    text = "\n".join(lines[dsts[8] :])
    push = re.search(r"irgl_wl_push_block\(", text)
    assert push is not None
    assert push.start() > [m.start() for m in re.finditer(r"atomicExch\(", text)][-1]


def test_plain_lowering_walks_one_edge_at_a_time() -> None:
    kernel = _bfs_kernel(emitted_code("bfs", "lower-irgl{edge_interleave=1}"))
    assert kernel.count("irgl_graph_edge_dst(g, ") == 3
    assert kernel.count("atomicExch(") == 3


def test_default_interleaves_loops_without_a_reduction() -> None:
    """lower-irgl's defaults: edge_interleave=4 for BFS's edge loop, 1
    (serial) for PageRank's reducing one unless edge_interleave_reduce."""
    assert emitted_code("bfs", "lower-irgl") == emitted_code(
        "bfs", "lower-irgl{edge_interleave=4}"
    )
    default = emitted_code("pr_pull", "lower-irgl")
    assert default == emitted_code("pr_pull", "lower-irgl{edge_interleave=1}")
    assert default != emitted_code("pr_pull", PIPELINE)


def test_edge_interleave_reduce_must_not_be_negative() -> None:
    proc = irgl_opt(
        "-p",
        "convert-irgl-nested-edges{interleave_reduce=-1}",
        str(load_app("bfs").mlir),
    )
    assert proc.returncode != 0
    assert "interleave_reduce must be at least 0, got -1" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "pipeline",
    [
        "convert-irgl-nested-edges{interleave_budget=-1}",
        "lower-irgl{edge_interleave_budget=-5}",
    ],
)
def test_interleave_budget_must_not_be_negative(pipeline: str) -> None:
    proc = irgl_opt("-p", pipeline, str(load_app("bfs").mlir))
    assert proc.returncode != 0
    assert "interleave_budget must be at least 0, got -" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_interleave_budget_takes_only_large_bodies() -> None:
    """The default budget gives BFS's two-hop body (77 operations) two
    copies in its block and warp phases, and leaves CC's (49 operations, the
    next largest of the shipped apps' edge bodies) four, as without a
    budget."""
    unlimited = "lower-irgl{edge_interleave_budget=0}"
    assert emitted_code("bfs", "lower-irgl") != emitted_code("bfs", unlimited)
    assert emitted_code("cc", "lower-irgl") == emitted_code("cc", unlimited)


def test_reducing_loop_keeps_the_serial_order() -> None:
    code = emitted_code("pr_pull", PIPELINE)
    # the partial adds copy 0's value, then each later copy's or 0.0
    assert re.search(
        r"double (\w+) = \w+ \+ \w+;\n\s*double \w+ = \w+ \? \w+ : 0", code
    )


SCRATCH_BODY = """
irgl.kernel @k(%g: !irgl.graph, %x: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %buf = memref.alloca() : memref<1xi32>
      %v = memref.load %x[%d] : memref<?xi32>
      memref.store %v, %buf[%c0] : memref<1xi32>
    }
  }
}
"""


def test_body_without_zeros_keeps_the_serial_loop(tmp_path: Path) -> None:
    source = tmp_path / "scratch.mlir"
    source.write_text(SCRATCH_BODY)
    passes = "convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops"
    serial = irgl_opt("-p", f"{passes},convert-irgl-nested-edges", str(source))
    asked = irgl_opt(
        "-p", f"{passes},convert-irgl-nested-edges{{interleave=4}}", str(source)
    )
    assert serial.returncode == 0 and asked.returncode == 0, asked.stderr
    assert asked.stdout == serial.stdout


@pytest.mark.parametrize("value", ["0", "-2"])
def test_edge_interleave_must_be_positive(value: str) -> None:
    proc = irgl_opt(
        "-p", f"lower-irgl{{edge_interleave={value}}}", str(load_app("bfs").mlir)
    )
    assert proc.returncode != 0
    assert f"edge_interleave must be at least 1, got {value}" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("app", ["bfs", "pr_pull"])
def test_app_compiles_with_interleave(app: str, tmp_path: Path) -> None:
    from irgl_runner.api import emit_cuda

    cuda = emit_cuda(load_app(app).mlir, PIPELINE)
    assert nvcc_object_errors(cuda) is None


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", APPS)
def test_app_passes_its_check_with_interleave(name: str, graph_name: str) -> None:
    assert_app_passes_its_check(name, GRAPHS[graph_name](), PIPELINE)


@pytest.mark.gpu
@pytest.mark.parametrize("name", APPS)
def test_app_passes_its_check_with_an_odd_interleave(name: str) -> None:
    assert_app_passes_its_check(
        name, GRAPHS["rmat10"](), "lower-irgl{edge_interleave=3}"
    )
