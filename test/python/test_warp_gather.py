"""convert-irgl-nested-edges `warp_gather` and `unroll` (lower-irgl
`warp_gather=true`, `edge_unroll=N`): the small nodes' edge lists of a warp
are laid end to end and walked 32 at a time; the shared phases' edge loops
get `#pragma unroll N`.

- lowering: the gather's runtime calls replace the thread phase, for plain
  and reducing edge loops; the unroll pragma is printed;
- build: a plain, a reducing and a nested-loop edge body compile with both
  options (nvcc, skipped without);
- GPU (marker ``gpu``): every graph app passes its CPU check with both
  options on RMAT, grid, star, hub and raw random graphs (small-degree
  nodes of all sizes next to shared ones)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (
    assert_app_passes_its_check,
    emitted_code,
    irgl_opt,
    nvcc_object_errors,
)
from test_apps_traversal import GRAPHS as TRAVERSAL_GRAPHS

from irgl_runner.apps import load_app

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = "lower-irgl{warp_gather=true edge_unroll=4}"
APPS = ["bfs", "sssp", "cc", "mis", "mst", "pr", "pr_pull", "tc"]


def test_gather_replaces_the_thread_phase_of_a_reducing_loop() -> None:
    plain = emitted_code("pr_pull", "lower-irgl{edge_unroll=1}")
    gathered = emitted_code("pr_pull", PIPELINE)
    assert "irgl_warp_exscan_index(" not in plain
    for call in (
        "irgl_warp_exscan_index(",
        "irgl_warp_owner(",
        "irgl_warp_segment_add_f64(",
    ):
        # the outlined device body (the control kernel runs every
        # invocation: the kernel itself is not emitted)
        assert gathered.count(call) == 1, call
    assert gathered.count("#pragma unroll 4") == 2  # block + warp phase
    assert "#pragma unroll" not in plain


def test_gather_of_a_plain_edge_loop_has_no_segment_reduction() -> None:
    code = emitted_code("bfs", PIPELINE)
    assert "irgl_warp_owner(" in code
    assert "irgl_warp_segment_" not in code


def test_edge_unroll_on_interleaved_loops_is_optional() -> None:
    """By default the pragma only where a loop is not interleaved (PageRank
    pull's reducing loops keep it); lower-irgl{edge_unroll_interleaved=true}
    puts it on the interleaved loops too. That program is the default's with
    more `#pragma unroll` lines, so the default's nvcc tests cover the rest
    of it."""
    every = "lower-irgl{edge_unroll_interleaved=true}"

    def without_pragmas(code: str) -> list[str]:
        return [line for line in code.splitlines() if "#pragma unroll" not in line]

    for app in ("bfs", "tc"):
        default, more = emitted_code(app, "lower-irgl"), emitted_code(app, every)
        assert default.count("#pragma unroll 4") < more.count("#pragma unroll 4"), app
        assert without_pragmas(more) == without_pragmas(default), app
    assert emitted_code("pr_pull", every) == emitted_code("pr_pull", "lower-irgl")


def test_edge_unroll_must_be_positive() -> None:
    proc = irgl_opt("-p", "lower-irgl{edge_unroll=0}", str(load_app("bfs").mlir))
    assert proc.returncode != 0
    assert "edge_unroll must be at least 1, got 0" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("app", ["bfs", "pr_pull", "tc"])
def test_app_compiles_with_gather_and_unroll(app: str, tmp_path: Path) -> None:
    from irgl_runner.api import emit_cuda

    cuda = emit_cuda(load_app(app).mlir, PIPELINE)
    assert nvcc_object_errors(cuda) is None


#: test_apps_traversal's graphs (RMAT, grid, raw random, star, hub) but the
#: path, whose degrees are all below the gather's threshold anyway.
GRAPHS = {name: make for name, make in TRAVERSAL_GRAPHS.items() if name != "path"}


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", APPS)
def test_app_passes_its_check_with_gather_and_unroll(
    name: str, graph_name: str
) -> None:
    assert_app_passes_its_check(name, GRAPHS[graph_name](), PIPELINE)
