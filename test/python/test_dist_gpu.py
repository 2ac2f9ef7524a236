"""Several GPUs through NCCL (marker gpu; needs at least 2 GPUs, 4 for the
4-rank cases): each app's output on 2 and 4 ranks under both policies equals
the single-GPU output of the same program (PageRank pull and MIS, edge-cut
only: their own checks); a rank that never starts makes the others fail
within the timeout.

Run: NCCL_NVLS_ENABLE=0 python -m pytest -v test/python/test_dist_gpu.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: app -> (program, graph)
CASES = {
    "bfs": (ROOT / "examples/bfs.mlir", "rmat:12"),
    "cc": (ROOT / "benchmarks/cc/cc_lp.mlir", "rmat:12"),
    "sssp": (ROOT / "benchmarks/sssp/sssp.mlir", "rmat:12"),
}


def _all_test_gpus() -> str | None:
    """Every GPU of ``$IRGL_TEST_GPUS``: an xdist worker of the spread GPU
    suite sees one of them (conftest), but a program on several GPUs needs
    them all."""
    from conftest import TEST_GPUS_ENV

    return os.environ.get(TEST_GPUS_ENV) or None


@cache
def gpu_count() -> int:
    from irgl_runner.distributed import gpu_count as count

    return count(_all_test_gpus())


def _needs(gpus: int) -> None:
    if gpu_count() < gpus:
        pytest.skip(f"needs {gpus} GPUs, found {gpu_count()}")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    gpus = _all_test_gpus()
    if gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpus
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    env.setdefault("IRGL_DIST_TIMEOUT", "120")
    return env


def _read(path: Path) -> np.ndarray:
    return np.loadtxt(path, dtype=np.int64, ndmin=2)[:, 1]


@cache
def single_gpu(app: str, tmp: str) -> np.ndarray:
    """The program's output on one GPU (irgl-bench run -p, no distribution)."""
    program, graph = CASES[app]
    out = Path(tmp) / f"{app}.single.txt"
    from irgl_runner.api import Program
    from irgl_runner.apps import execute, load_app
    from irgl_runner.build import build
    from irgl_runner.generators import generate

    spec = load_app(app)
    from dataclasses import replace

    spec = replace(spec, mlir=program)
    g = generate(graph)
    if not spec.weighted:
        g.weights = None
    ctx = execute(spec, Program(build(program)), g, 0, reps=1, warmup=0)
    name = spec.primary_output
    assert name is not None
    values = np.asarray(ctx.outputs[name], dtype=np.int64)
    np.savetxt(out, np.c_[np.arange(len(values)), values], fmt="%d")
    return values


def _run(
    app: str,
    gpus: int,
    policy: str,
    out: Path,
    env: dict[str, str],
    extra: tuple[str, ...] = (),
) -> str:
    """Run ``app`` on ``gpus`` ranks; its stdout (the record)."""
    program, graph = CASES[app]
    cmd = [
        sys.executable,
        "-m",
        "irgl_runner.distributed",
        app,
        "--graph",
        graph,
        "--mlir",
        str(program),
        "--gpus",
        str(gpus),
        "--policy",
        policy,
        "--source",
        "0",
        "--reps",
        "1",
        "--output",
        str(out),
        *extra,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert '"check": "passed"' in proc.stdout, proc.stdout + proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("policy", ["oec", "cvc"])
@pytest.mark.parametrize("gpus", [2, 4])
@pytest.mark.parametrize("app", sorted(CASES))
def test_several_gpus_match_one(
    app: str, gpus: int, policy: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _needs(gpus)
    tmp = tmp_path_factory.getbasetemp()
    expected = single_gpu(app, str(tmp))
    out = tmp_path_factory.mktemp(f"{app}{gpus}{policy}") / "out.txt"
    record = json.loads(_run(app, gpus, policy, out, _env()).strip().splitlines()[-1])
    np.testing.assert_array_equal(_read(out), expected)
    # where rank 0's host time went, step by step
    phases = record["rank0_host_s"]
    assert set(phases) == {
        "graph",
        "library",
        "communicator",
        "partition",
        "upload",
        "calls",
    }, phases
    assert all(v >= 0 for v in phases.values()), phases


@pytest.mark.gpu
@pytest.mark.parametrize("gpus", [2, 3])
@pytest.mark.parametrize("app", sorted(CASES))
def test_folded_master_blocks_match_one_gpu(
    app: str, gpus: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """--fold (irgl_runner/partition_fold.py): each rank masters two id
    blocks; the gathered masters come back in the original order, a host's
    source goes through the fold (irgl_dist_local_node), the output is the
    single GPU's."""
    _needs(gpus)
    tmp = tmp_path_factory.getbasetemp()
    expected = single_gpu(app, str(tmp))
    out = tmp_path_factory.mktemp(f"{app}{gpus}fold") / "out.txt"
    record = json.loads(
        _run(app, gpus, "oec", out, _env(), ("--fold",)).strip().splitlines()[-1]
    )
    assert record["fold"] is True
    np.testing.assert_array_equal(_read(out), expected)


@pytest.mark.gpu
def test_folded_rank_partitions_match_one_gpu(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """--fold --rank-partitions: the launcher relabels the graph once and
    checks; each rank reads its folded partition; the single GPU's output."""
    _needs(2)
    tmp = tmp_path_factory.getbasetemp()
    expected = single_gpu("sssp", str(tmp))
    out = tmp_path_factory.mktemp("sssp2foldranks") / "out.txt"
    _run("sssp", 2, "oec", out, _env(), ("--fold", "--rank-partitions"))
    np.testing.assert_array_equal(_read(out), expected)


@pytest.mark.gpu
@pytest.mark.parametrize("app", ["bfs", "sssp"])
def test_rank_partitions_match_one_gpu(
    app: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """--rank-partitions: each rank reads only its partition, the launcher
    checks; the output is the single GPU's, the record reports memory."""
    import json

    _needs(2)
    tmp = tmp_path_factory.getbasetemp()
    expected = single_gpu(app, str(tmp))
    out = tmp_path_factory.mktemp(f"{app}ranks") / "out.txt"
    stdout = _run(app, 2, "oec", out, _env(), ("--rank-partitions",))
    np.testing.assert_array_equal(_read(out), expected)
    record = json.loads(stdout.strip().splitlines()[-1])
    assert record["checked_by"] == "reference"
    assert 0 < record["gpu_mem_used_bytes"] <= record["gpu_mem_total_bytes"]


@pytest.mark.gpu
def test_64_bit_indices_match_one_gpu(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The path a graph too large for 32 bits takes (IRGL_INDEX_BITS=64 forces
    it on a small one): each rank reads its partition, 64-bit `irgl_index`,
    the output is the single (32-bit) GPU's."""
    _needs(2)
    tmp = tmp_path_factory.getbasetemp()
    expected = single_gpu("sssp", str(tmp))
    out = tmp_path_factory.mktemp("sssp64") / "out.txt"
    env = _env() | {"IRGL_INDEX_BITS": "64"}
    _run("sssp", 2, "oec", out, env, ("--rank-partitions",))
    np.testing.assert_array_equal(_read(out), expected)


@pytest.mark.gpu
@pytest.mark.parametrize("gpus", [2, 4])
@pytest.mark.parametrize("app", ["pr_pull", "mis"])
def test_edge_cut_apps_pass_their_checks(app: str, gpus: int) -> None:
    """PageRank pull and MIS distribute under the edge-cut only (they read
    degrees / reduce over a popped node's edges): on 2 and 4 GPUs each
    passes its own check against the CPU reference (PageRank within its
    tolerance; MIS independent and maximal)."""
    _needs(gpus)
    cmd = [sys.executable, "-m", "irgl_runner.distributed", app]
    cmd += ["--graph", "rmat:12", "--gpus", str(gpus), "--policy", "oec"]
    cmd += ["--reps", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert '"check": "passed"' in proc.stdout, proc.stdout + proc.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.parametrize("hot", ["", "4096"])
@pytest.mark.parametrize("gpus", [2, 4])
@pytest.mark.parametrize("app", ["cc", "sssp"])
def test_hot_nodes_refreshed_under_update_tracking_match_one_gpu(
    app: str, gpus: int, hot: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The reduce-only exchanges with only changed entries sent (forced:
    rmat:12's lists are below the tracking threshold) and the hot nodes'
    refresh (the default quarter, or every node) after large rounds: the
    refreshed mirrors' last copies keep later changes moving, so the output
    is one GPU's."""
    _needs(gpus)
    tmp = tmp_path_factory.getbasetemp()
    expected = single_gpu(app, str(tmp))
    out = tmp_path_factory.mktemp(f"hot{app}{gpus}{hot}") / "out.txt"
    env = _env() | {"IRGL_DIST_TRACK": "1", "IRGL_DIST_HOT": hot}
    _run(app, gpus, "oec", out, env)
    np.testing.assert_array_equal(_read(out), expected)


@pytest.mark.gpu
def test_rank_that_never_starts_fails_everyone_in_time(tmp_path: Path) -> None:
    """Rank 1 of 2 is never started: rank 0 must exit non-zero with a clear
    error once the timeout passes (no hang), having written nothing."""
    _needs(1)
    env = _env()
    env.update(
        RANK="0",
        WORLD_SIZE="2",
        LOCAL_RANK="0",
        IRGL_DIST_DIR=str(tmp_path),
        IRGL_DIST_RUN_ID="lonely",
        IRGL_DIST_TIMEOUT="20",
    )
    out = tmp_path / "out.txt"
    program, graph = CASES["bfs"]
    cmd = [sys.executable, "-m", "irgl_runner.distributed", "bfs", "--graph"]
    cmd += [graph, "--mlir", str(program), "--output", str(out), "--reps", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode != 0
    assert "rank 0 of 2" in proc.stderr and "IRGL_DIST_TIMEOUT" in proc.stderr
    assert not out.exists()
