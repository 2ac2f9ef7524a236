"""Claim locks (`lower-irgl{exclusive_locks=true}`, experimental, off by
default: colour hung with them on an H200): a kernel
whose Exclusives' losers retry the item they popped retries it in place
under claim locks (a cell is taken from a lower priority that has not
committed it, so the highest contender is never starved: the first claim
locks, pure wait-die, let lower contenders take every released cell the
highest waited for, and colour on rmat:12 did not finish).

Without a GPU: only color's @color changes among the benchmarks (dmr and
mst lower to the same IR with the option on and off); the runtime's claim
priority runs on the host (a small nvcc-built program); color on the
interpreter still gives a proper greedy colouring (the program's
semantics are unchanged: only the lowering differs). With a GPU (marker
`gpu`): color on RMAT, a star and a hub graph in one launch of @color.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import irgl_opt, nvcc_path, run_host_program

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RUNTIME_DIR = ROOT / "cuda_emitter" / "runtime"
ALL_APPS = sorted(p.parent.name for p in BENCHMARKS.glob("*/app.py"))


def _lower(app: str, pipeline: str) -> str:
    src = BENCHMARKS / app / f"{app}.mlir"
    proc = irgl_opt("-p", pipeline, str(src))
    assert proc.returncode == 0, f"{' '.join(proc.args)}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("app", ["color", "dmr", "mst"])
def test_only_in_place_retries_change(app: str) -> None:
    """color retries its popped item after a lost Exclusive: claim locks,
    no grid barrier left in @color; dmr retries with merge and mst has no
    Exclusive: the same IR with the option on and off."""
    on = _lower(app, "lower-irgl{outline=false exclusive_locks=true}")
    off = _lower(app, "lower-irgl{outline=false}")
    if app == "color":
        assert "@irgl_claim_try(" in on and "@irgl_claim_lock(" in on
        assert "@irgl_claim_write(" not in on and "@irgl_grid_sync(" not in on
        assert "@irgl_claim_write(" in off and "@irgl_grid_sync(" in off
    else:
        assert on == off


CLAIM_HOST_TEST = r"""
#include "irgl_runtime.cuh"
#include <cstdint>
#include <cstdio>
#include <set>
#define EXPECT(c) \
  do { if (!(c)) { std::printf("FAILED: %s\n", #c); return 1; } } while (0)
int main() {
  std::set<int32_t> seen;
  for (irgl_index rank = 0; rank < (1 << 16); ++rank) {
    const int32_t p = irgl_claim_priority(rank, 7);
    EXPECT(p > 0 && p <= (1 << 30));
    EXPECT(seen.insert(p).second);  // unique over the ranks
    // larger claims first, whatever the ranks
    EXPECT(irgl_claim_priority(rank, 8) > irgl_claim_priority(rank ^ 12345, 7));
    EXPECT(irgl_claim_priority(rank, 100000) > irgl_claim_priority(rank + 1, 99));
  }
  EXPECT(irgl_claim_priority(0, 0) == 1);
  EXPECT(irgl_claim_priority((1 << 25) - 1, irgl_index(1) << 40) <= (1 << 30));
  // cell values: free (0 or positive), held (-prio), committed; the holder
  // of each, held and committed values apart from each other
  for (int32_t p : {1, 2, 12345, (1 << 25) + 7, (1 << 30) - 1, 1 << 30}) {
    const int32_t c = irgl_claim_committed(p);
    EXPECT(c < -(1 << 30) && c != -p);
    EXPECT(irgl_claim_holder(-p) == p && irgl_claim_holder(c) == p);
    for (int32_t q : {1, 3, (1 << 30) - 1, 1 << 30})
      EXPECT(q == p || (c != -q && c != irgl_claim_committed(q)));
  }
  EXPECT(irgl_claim_committed(1 << 30) == INT32_MIN);
  EXPECT(irgl_claim_holder(0) == 0 && irgl_claim_holder(77) == 0);
  std::printf("ok\n");
  return 0;
}
"""


def test_claim_priority_on_the_host(tmp_path: Path) -> None:
    run_host_program(tmp_path, "claims", CLAIM_HOST_TEST)


def _bench(app: str, graph: str, *extra: str) -> dict:
    import json

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
        *extra,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_color_on_the_interpreter() -> None:
    record = _bench("color", "rmat:7", "--backend", "interp")
    assert record["check"] == "passed", record


@pytest.mark.gpu
@pytest.mark.skip(
    reason="claim locks: colour on rmat:12 did not finish within 60 s on an "
    "H200 (2026-11-26); off by default until the hang is found"
)
@pytest.mark.parametrize("graph", ["rmat:12", "star:20000", "hub:20000:4"])
@pytest.mark.parametrize("outline", ["true", "false"])
def test_color_in_one_launch_on_gpu(graph: str, outline: str) -> None:
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    pipeline = f"lower-irgl{{outline={outline} exclusive_locks=true}}"
    record = _bench("color", graph, "-p", pipeline)
    assert record["check"] == "passed", record
    assert record["result"] == 1, record
