"""The retry drain (`lower-irgl{retry_drain}`, on by default) and Exclusive's
sized priorities (`lower-irgl{sized_priority}`, on by default).

Without a GPU: which kernels are drained (remarks), what the control kernel
and the drained body look like in the emitted CUDA, that `retry_drain=false`
keeps every retry round on the grid, and the runtime's storm test and
window arithmetic (a host program built with nvcc). The GPU runs of the
drained colouring are in test_retry_backoff.py (`test_color_runs_on_gpu`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import irgl_opt, run_host_program

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


def _irgl_opt(app: str, pipeline: str, *extra: str) -> subprocess.CompletedProcess:
    proc = irgl_opt("-p", pipeline, *extra, str(BENCHMARKS / app / f"{app}.mlir"))
    assert proc.returncode == 0, proc.stderr
    return proc


def _function(cuda: str, name: str) -> str:
    """The text of the definition of `name` in emitted CUDA."""
    pattern = rf"^__device__ void {name}\([^;]*?\) {{\n(.*?)^}}"
    match = re.search(pattern, cuda, re.S | re.M)
    assert match is not None, f"no definition of {name}"
    return match.group(1)


def test_color_is_drained_by_default() -> None:
    remarks = _irgl_opt("color", "lower-irgl{remarks=true}", "-o", "/dev/null").stderr
    assert (
        "@color's retry storms are drained by block 0 (retry_drain) and a team of"
        " up to 32 blocks (retry_drain_blocks)"
    ) in remarks
    cuda = _irgl_opt("color", "lower-irgl", "-t", "cuda").stdout
    body = _function(cuda, "color_device")
    # the body takes its grid; the Exclusive's three barriers follow it
    assert body.count("irgl_sync_blocks(") == 3
    assert "irgl_grid_sync()" not in body
    control = cuda[cuda.index("main_control(irgl::Graph v0") :]
    for call in (
        "irgl_ctl_drain_storm(",
        "irgl_wl_window(",
        "irgl_ctl_drain_window(",  # the first window
        "irgl_ctl_drain_next(",  # then solo streaks (retry_drain_solo)
        "irgl_ctl_drain_left(",
        "irgl_ctl_drain_streak(",
        "irgl_ctl_drain_team_start((irgl_index)32, ",  # retry_drain_blocks
        "irgl_ctl_drain_team(",
        "irgl_ctl_team_drain_losers(",
        "irgl_ctl_team_drain_move(",
    ):
        assert call in control, call
    # an only contender (a window of one item) claims nothing: the claim
    # phases are guarded by "active and not alone", the check by "alone or"
    alone = re.search(r"bool (v\d+) = (v\d+) == 1;", body)
    assert alone is not None
    assert f"bool {_not(body, alone.group(1))} " in body
    # a window: this block of the team (block 0 alone once the team is 1)
    team = re.search(r"irgl_index (v\d+) = irgl_ctl_drain_team_start\(", control)
    assert team is not None
    window = re.search(
        r"color_device\([^;]*, (v\d+), (v\d+)\);\n"
        r" *irgl_index v\d+ = irgl_ctl_team_drain_losers\([^;]*\2\);",
        control,
    )
    assert window is not None
    block = window.group(1)
    assert re.search(rf"irgl_index {block} = \(irgl_index\)blockIdx.x;", control)
    # sized priorities: larger claims first
    assert "irgl_claim_priority(" in body


def _not(body: str, value: str) -> str:
    """The name of `value ^ true` in a body."""
    match = re.search(rf"bool (v\d+) = {value} \^ true;", body)
    assert match is not None, f"no negation of {value}"
    return match.group(1)


def test_retry_drain_solo_false_keeps_windows_of_winners() -> None:
    """`retry_drain_solo=false`: every window twice the last one's winners,
    and a contender always claims its elements (the earlier lowering)."""
    cuda = _irgl_opt("color", "lower-irgl{retry_drain_solo=false}", "-t", "cuda").stdout
    control = cuda[cuda.index("main_control(irgl::Graph v0") :]
    assert control.count("irgl_ctl_drain_window(") == 2
    assert "irgl_ctl_drain_next(" not in control
    body = _function(cuda, "color_device")
    assert not re.search(r"bool v\d+ = v\d+ == 1;", body)


def test_retry_drain_blocks_1_keeps_block_0_alone() -> None:
    """`retry_drain_blocks=1`: block 0 alone takes every window (one block's
    geometry, block barriers), no team."""
    cuda = _irgl_opt("color", "lower-irgl{retry_drain_blocks=1}", "-t", "cuda").stdout
    control = cuda[cuda.index("main_control(irgl::Graph v0") :]
    assert re.search(r"color_device\([^;]*\(irgl_index\)0, \(irgl_index\)1\);", control)
    assert "irgl_ctl_drain_move(" in control
    assert "irgl_ctl_drain_team" not in control
    assert "irgl_ctl_team_" not in control


@pytest.mark.parametrize("value", ["0", "1025"])
def test_retry_drain_blocks_out_of_range_is_rejected(value: str) -> None:
    proc = irgl_opt(
        "-p",
        f"lower-irgl{{retry_drain_blocks={value}}}",
        str(BENCHMARKS / "color" / "color.mlir"),
    )
    assert proc.returncode != 0
    assert f"retry_drain_blocks must be from 1 to 1024, got {value}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_retry_drain_false_keeps_grid_rounds() -> None:
    pipeline = "lower-irgl{retry_drain=false sized_priority=false remarks=true}"
    proc = _irgl_opt("color", pipeline, "-t", "cuda")
    assert "retry storms" not in proc.stderr
    body = _function(proc.stdout, "color_device")
    assert body.count("irgl_grid_sync()") == 3
    assert "irgl_sync_blocks" not in body
    assert "irgl_claim_priority(" not in body
    control = proc.stdout[proc.stdout.index("main_control(irgl::Graph v0") :]
    assert "irgl_ctl_drain" not in control


def test_only_kernels_that_retry_conflicts_are_drained() -> None:
    """dmr's @refine retries with merge (onto `out`, nothing re-launched) and
    runs C text: no drain; no other benchmark retries."""
    for app in sorted(p.parent.name for p in BENCHMARKS.glob("*/app.py")):
        if app == "color":
            continue
        remarks = _irgl_opt(app, "lower-irgl{remarks=true}", "-o", "/dev/null").stderr
        assert "retry storms" not in remarks, app


DRAIN_HOST_TEST = r"""
#include "irgl_runtime.cuh"
#include <cstdio>

int main() {
  int bad = 0;
  // a storm: at most one in 16 attempted won, and at most 256
  bad += !irgl::drain_storm(99999, 100000);     // 1 won
  bad += !irgl::drain_storm(9744, 10000);       // 256 won, 1 in 39
  bad += irgl::drain_storm(9743, 10000);        // 257 won
  bad += irgl::drain_storm(40, 100);            // 60 won, 3 in 5
  bad += irgl::drain_storm(900000, 1000000);    // 100000 won
  bad += !irgl::drain_storm(0, 0);              // nothing attempted
  // the next window: twice the winners, in [1, cap]
  bad += irgl::drain_window(0, 1024) != 1;
  bad += irgl::drain_window(1, 1024) != 2;
  bad += irgl::drain_window(300, 1024) != 600;
  bad += irgl::drain_window(600, 1024) != 1024;
  bad += irgl::drain_window(5, 8) != 8;
  // solo streaks: a window of several items with at most one winner starts
  // a streak of one-item windows; a window of two probes after it
  bad += irgl::drain_next(1, 2, 0, 1024) != 1;       // contention: solo
  bad += irgl::drain_next(0, 8, 0, 1024) != 1;
  bad += irgl::drain_left(1, 2, 4, 0) != 4;          // the streak's windows
  bad += irgl::drain_streak(1, 2, 4, 1024) != 8;     // the next one doubles
  bad += irgl::drain_streak(1, 2, 800, 1024) != 1024;
  bad += irgl::drain_next(1, 1, 3, 1024) != 1;       // still solo
  bad += irgl::drain_left(1, 1, 4, 3) != 2;
  bad += irgl::drain_streak(1, 1, 4, 1024) != 4;     // kept while solo
  bad += irgl::drain_next(1, 1, 1, 1024) != 2;       // streak over: probe
  bad += irgl::drain_left(1, 1, 4, 1) != 0;
  bad += irgl::drain_next(1, 1, 0, 1024) != 2;       // the pass's last item
  bad += irgl::drain_next(2, 2, 0, 1024) != 4;       // a probe both won
  bad += irgl::drain_streak(2, 2, 8, 1024) != 1;     // contention over
  bad += irgl::drain_left(2, 2, 8, 0) != 0;
  bad += irgl::drain_next(300, 1024, 0, 1024) != 600;  // as drain_window
  std::printf(bad == 0 ? "ok\n" : "%d bad\n", bad);
  return bad != 0;
}
"""


def test_drain_arithmetic_on_the_host(tmp_path: Path) -> None:
    run_host_program(tmp_path, "drain", DRAIN_HOST_TEST)


@pytest.mark.parametrize("app", ["dmr", "color"])
def test_retry_merged_calls_the_body_once_per_site(app: str) -> None:
    """`retry_merged` (the default): the first attempt and the retry rounds
    share one call of the body (colour keeps the drain's, on block 0 of one
    block), one fewer than with `retry_merged=false`."""

    def calls(cuda: str) -> int:
        head = re.search(r" main_control\([^;{]*\) \{", cuda)
        assert head is not None
        control = cuda[head.start() :]
        return control[: control.index("\n}\n")].count(f"{BODY[app]}(")

    merged = _irgl_opt(app, "lower-irgl", "-t", "cuda")
    plain = _irgl_opt(app, "lower-irgl{retry_merged=false}", "-t", "cuda")
    assert merged.returncode == 0, merged.stderr
    assert calls(merged.stdout) == calls(plain.stdout) - 1 >= 1
    # (nvcc: test_small_worklist's merged retry Pipe, with retry_merged)


#: The device body of each app's retrying kernel.
BODY = {"dmr": "refine_device", "color": "color_device"}
