"""irgl-bench scaling without GPUs: the table, the output comparison, and a
refusal that writes nothing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from irgl_runner import scaling
from irgl_runner.bench_cli import main


def _row(gpus: int, ms: float, **extra: object) -> dict[str, object]:
    row = {"app": "bfs", "graph": "rmat:22", "gpus": gpus, "median_ms": ms}
    row.update(policy="none" if gpus == 1 else "oec", correct=True, **extra)
    return row


def test_table_has_speedups_and_traffic() -> None:
    rows = [
        _row(1, 10.0),
        _row(2, 5.0, rounds=8, bytes_per_call=2_000_000, bytes_per_round=250_000),
        _row(4, 4.0, comm_ms=1.5),
        {"app": "bfs", "graph": "rmat:22", "gpus": 4, "policy": "cvc"}
        | {"correct": False, "error": "rank 1 died"},
    ]
    text = scaling.markdown(rows, "NVIDIA H200", "2026-11-26", "abc123")
    assert "NVIDIA H200, 2026-11-26" in text
    lines = [line for line in text.splitlines() if line.startswith("| bfs")]
    assert len(lines) == 4
    assert "| 2.00× |" in lines[1] and "| 2.00 | 250.0 |" in lines[1]
    assert "| 2.50× |" in lines[2] and "| 1.500 |" in lines[2]
    assert "error: rank 1 died" in lines[3]


def test_table_orders_rows_and_names_their_commits() -> None:
    rows = [
        _row(1, 10.0, graph="rmat:24", commit="old"),
        _row(2, 5.0, graph="rmat:24", commit="old"),
        _row(1, 4.0, graph="rmat:22", checked=False),
        _row(1, 3.0, app="cc", graph="rmat:22"),
        _row(2, 2.0, graph="rmat:22"),
    ]
    text = scaling.markdown(rows, "NVIDIA H200", "2026-11-26", "new")
    assert "(commits old, new)" in text and "| commit |" in text
    body = [
        line.split(" | ")[:3] for line in text.splitlines() if line.startswith("| ")
    ]
    assert body[2:] == [
        ["| bfs", "rmat:22", "1"],
        ["| bfs", "rmat:22", "2"],
        ["| cc", "rmat:22", "1"],
        ["| bfs", "rmat:24", "1"],
        ["| bfs", "rmat:24", "2"],
    ]
    lines = text.splitlines()
    unchecked = next(line for line in lines if "| 4.000 |" in line)
    assert "| not checked |" in unchecked and unchecked.endswith("| new |")
    assert next(line for line in lines if "| 10.000 |" in line).endswith("| old |")
    single = scaling.markdown(rows[2:], "NVIDIA H200", "2026-11-26", "new")
    assert "(commit new)" in single and "| commit |" not in single


def test_same_output(tmp_path: Path) -> None:
    def save(name: str, values: np.ndarray) -> Path:
        path = tmp_path / name
        with open(path, "wb") as f:
            np.save(f, values)
        return path

    ints = save("a.npy", np.arange(5, dtype=np.int32))
    assert scaling.same_output(ints, save("b.npy", np.arange(5, dtype=np.int32)))
    changed = np.arange(5, dtype=np.int32)
    changed[3] = 7
    assert not scaling.same_output(ints, save("c.npy", changed))
    ranks = np.array([0.5, 0.25, 0.25])
    near = save("d.npy", ranks)
    assert scaling.same_output(save("e.npy", ranks + 1e-5), near)
    assert not scaling.same_output(save("f.npy", ranks + 1e-2), near)


def test_refuses_without_enough_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("irgl_runner.distributed.gpu_count", lambda: 0)
    out, results = tmp_path / "scaling.json", tmp_path / "RESULTS.md"
    code = main(["scaling", "--json", str(out), "--results", str(results)])
    assert code == 2
    assert "scaling needs 4 GPUs here, found 0" in capsys.readouterr().err
    assert not out.exists() and not results.exists()


def _fake_cells(
    monkeypatch: pytest.MonkeyPatch,
    gpu: str = "NVIDIA H200",
    checks: list[bool] | None = None,
) -> list:
    """gpu_count 4 and a _cell that makes up a row (no GPU, no processes);
    each cell's check_here goes to `checks`."""
    calls: list[tuple[str, str, int, str]] = []

    def cell(app, graph, n, policy, opts, out, check_here=False):  # noqa: ANN001, ANN202
        calls.append((app, graph, n, policy))
        if checks is not None:
            checks.append(check_here)
        with open(out, "wb") as f:
            np.save(f, np.arange(4, dtype=np.int32))
        row = {"app": app, "graph": graph, "gpus": n, "policy": policy}
        return row | {"median_ms": 8.0 / n, "correct": True, "gpu": gpu}

    monkeypatch.setattr("irgl_runner.distributed.gpu_count", lambda: 4)
    monkeypatch.setattr(scaling, "_cell", cell)
    return calls


def _one_gpu_runs_out_of_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[int, bool]]:
    """gpu_count 4 and a _cell whose 1-GPU run runs out of memory while N
    GPUs pass (60 GB a GPU); each call's (GPUs, check_here) goes to the list."""
    calls: list[tuple[int, bool]] = []

    def cell(app, graph, n, policy, opts, out, check_here=False):  # noqa: ANN001, ANN202
        calls.append((n, check_here))
        row = {"app": app, "graph": graph, "gpus": n, "policy": policy}
        if n == 1:
            return row | {"correct": False, "exceeds_one_gpu": True, "error": "oom"}
        row |= {"median_ms": 5.0, "correct": True, "gpu": f"{n} x NVIDIA H200"}
        return row | {"checked": check_here, "gpu_mem_used_bytes": 60 * 10**9}

    monkeypatch.setattr("irgl_runner.distributed.gpu_count", lambda: 4)
    monkeypatch.setattr(scaling, "_cell", cell)
    return calls


def test_a_graph_too_large_for_one_gpu_is_checked_on_several(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 1-GPU run ran out of memory: the N-GPU rows check against the CPU
    reference themselves (there is no 1-GPU output to compare with)."""
    checked = _one_gpu_runs_out_of_memory(monkeypatch)
    out, results = tmp_path / "scaling.json", tmp_path / "RESULTS.md"
    argv = ["scaling", "--apps", "bfs", "--graphs", "big", "--gpus", "1,2"]
    argv += ["--policies", "oec", "--json", str(out), "--results", str(results)]
    assert main(argv) == 1  # the 1-GPU row is not correct: it did not run
    assert checked == [(1, False), (2, True)]
    rows = json.loads(out.read_text())["rows"]
    assert [r["exceeds_one_gpu"] for r in rows] == [True, True]
    table = results.read_text()
    assert "| bfs | big | 1 | none | — |  | exceeds one GPU" in table
    row2 = next(line for line in table.splitlines() if "| big | 2 |" in line)
    assert "| yes |" in row2 and "| 60.0 |" in row2


def test_resume_keeps_a_one_gpu_run_that_ran_out_of_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--resume after a cut-short run on a graph too large for one GPU: the
    1-GPU cell is not run again (it would run out of memory again), and the
    N-GPU rows still say the graph exceeds one GPU and check themselves."""
    calls = _one_gpu_runs_out_of_memory(monkeypatch)
    out = tmp_path / "scaling.json"
    argv = ["scaling", "--apps", "sssp", "--graphs", "big", "--policies", "oec"]
    argv += ["--json", str(out), "--results", ""]
    assert main([*argv, "--gpus", "1"]) == 1  # cut short after the 1-GPU cell
    assert main([*argv, "--gpus", "1,4", "--resume"]) == 1
    assert calls == [(1, False), (4, True)]
    rows = {r["gpus"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows[4]["exceeds_one_gpu"] and rows[4]["checked"]
    assert rows[1]["exceeds_one_gpu"] and not rows[1]["correct"]


def test_several_gpus_are_checked_themselves_where_one_gpu_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 1-GPU run failed (here a worklist overflow) and left no output:
    the N-GPU runs are checked against the CPU reference, and under
    --no-check they say "not checked" instead of a wrong "NO"."""
    calls: list[tuple[int, bool]] = []

    def cell(app, graph, n, policy, opts, out, check_here=False):  # noqa: ANN001, ANN202
        calls.append((n, check_here))
        row = {"app": app, "graph": graph, "gpus": n, "policy": policy}
        if n == 1:
            return row | {"correct": False, "error": "worklist overflow"}
        np.save(out, np.arange(4, dtype=np.int32))
        row |= {"median_ms": 5.0, "correct": True, "gpu": f"{n} x NVIDIA H200"}
        return row if check_here else row | {"checked": False}

    monkeypatch.setattr("irgl_runner.distributed.gpu_count", lambda: 4)
    monkeypatch.setattr(scaling, "_cell", cell)
    out, results = tmp_path / "scaling.json", tmp_path / "RESULTS.md"
    argv = ["scaling", "--apps", "cc", "--graphs", "g", "--gpus", "1,2"]
    argv += ["--policies", "oec", "--json", str(out), "--results", str(results)]
    assert main(argv) == 1  # the 1-GPU row failed
    assert main([*argv, "--no-check"]) == 1
    assert calls == [(1, False), (2, True), (1, False), (2, False)]
    row2 = next(
        line for line in results.read_text().splitlines() if "| g | 2 |" in line
    )
    assert "| not checked |" in row2 and "| NO |" not in row2


def test_weak_scaling_runs_a_graph_per_gpu_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checks: list[bool] = []
    calls = _fake_cells(monkeypatch, checks=checks)
    out, results = tmp_path / "scaling.json", tmp_path / "RESULTS.md"
    common = ["--json", str(out), "--results", str(results), "--policies", "oec"]
    argv = ["scaling", "--apps", "bfs", "--gpus", "1,2,4", *common]
    assert main([*argv, "--weak", "s24,s25"]) == 2  # a graph per GPU count
    assert "a graph per GPU count" in capsys.readouterr().err
    assert main([*argv, "--weak", "s24,s25,s26"]) == 0
    assert calls == [
        ("bfs", "s24", 1, "none"),
        ("bfs", "s25", 2, "oec"),
        ("bfs", "s26", 4, "oec"),
    ]
    assert checks == [False, True, True]  # N GPUs: the CPU reference
    assert json.loads(out.read_text())["weak"] == [["s24", 1], ["s25", 2], ["s26", 4]]
    table = results.read_text()
    assert "### Weak scaling" in table
    assert "| app | policy | s24 on 1 | s25 on 2 | s26 on 4 |" in table
    assert "| bfs | oec | 8.000 (1.00) | 4.000 (2.00) | 2.000 (4.00) |" in table


def test_weak_table_lists_only_an_apps_own_policies() -> None:
    def row(app: str, graph: str, gpus: int, policy: str, ms: float) -> dict:
        return {"app": app, "graph": graph, "gpus": gpus, "policy": policy} | {
            "median_ms": ms,
            "correct": True,
        }

    rows = [
        row("cc", "s24", 1, "none", 8.0),
        row("cc", "s26", 4, "oec", 4.0),
        row("cc", "s26", 4, "oec+fold", 2.0),
        row("bfs", "s24", 1, "none", 6.0),
        row("bfs", "s26", 4, "oec", 3.0),
    ]
    table = scaling.weak_markdown(rows, [["s24", 1], ["s26", 4]])
    assert "| cc | oec+fold | 8.000 (1.00) | 2.000 (4.00) |" in table
    assert "| bfs | oec | 6.000 (1.00) | 3.000 (2.00) |" in table
    assert "| bfs | oec+fold |" not in table  # bfs ran no folded cell


def test_resume_runs_only_the_missing_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[bool] = []
    calls = _fake_cells(monkeypatch, checks=checks)
    out = tmp_path / "scaling.json"
    common = ["--json", str(out), "--results", "", "--policies", "oec"]
    argv = ["scaling", "--apps", "bfs", "--graphs", "g", *common]
    assert main([*argv, "--gpus", "1,2"]) == 0
    assert main([*argv, "--gpus", "1,2,4", "--resume"]) == 0
    assert calls[2:] == [("bfs", "g", 4, "oec")]  # 1 and 2 were done
    assert checks[2:] == [True]  # no 1-GPU output here: the CPU reference
    rows = json.loads(out.read_text())["rows"]
    assert sorted(r["gpus"] for r in rows) == [1, 2, 4]


#: The (app, gpus) of an earlier bfs run merged with a later sssp run.
BFS_THEN_SSSP = [("bfs", 1), ("bfs", 2), ("sssp", 1), ("sssp", 2)]


def _cells(rows: list[dict]) -> list[tuple[str, int]]:
    return [(r["app"], r["gpus"]) for r in rows]


def test_merge_keeps_the_rows_a_run_does_not_redo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_cells(monkeypatch)
    out, results = tmp_path / "scaling.json", tmp_path / "RESULTS.md"
    common = ["--json", str(out), "--results", str(results), "--policies", "oec"]
    assert (
        main(["scaling", "--apps", "bfs", "--graphs", "g", "--gpus", "1,2", *common])
        == 0
    )
    assert calls == [("bfs", "g", 1, "none"), ("bfs", "g", 2, "oec")]
    assert (
        main(
            [
                "scaling",
                "--apps",
                "sssp",
                "--graphs",
                "g",
                "--gpus",
                "2",
                "--merge",
                *common,
            ]
        )
        == 0
    )
    rows = json.loads(out.read_text())["rows"]
    assert _cells(rows) == BFS_THEN_SSSP
    assert all(r["correct"] for r in rows)  # N GPUs gave the 1-GPU output
    table = results.read_text()
    assert (
        "| bfs | g | 2 | oec | 4.000 | 2.00× |" in table and "| sssp | g | 2 |" in table
    )
    assert not (tmp_path / "scaling.json.partial").exists()


def test_merged_failures_of_earlier_runs_do_not_fail_this_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exit status is this run's: an earlier row kept by --merge that
    failed (say, a 1-GPU run that overflowed) does not make it 1."""
    _fake_cells(monkeypatch)
    out = tmp_path / "scaling.json"
    bad = {"app": "cc", "graph": "grid", "gpus": 1, "policy": "none"}
    bad |= {"correct": False, "error": "worklist overflow"}
    out.write_text(json.dumps({"gpu": "NVIDIA H200", "commit": "abc", "rows": [bad]}))
    argv = ["scaling", "--apps", "bfs", "--graphs", "g", "--gpus", "1,2", "--merge"]
    assert main([*argv, "--policies", "oec", "--json", str(out), "--results", ""]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["correct"] for r in rows] == [False, True, True]  # kept, and reported


def test_merge_refuses_rows_of_another_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "scaling.json"
    h100 = "NVIDIA H100 80GB HBM3"
    other = {"app": "bfs", "graph": "big", "gpus": 1, "policy": "none", "gpu": h100}
    other |= {"median_ms": 9.0, "correct": True}
    same = {**other, "graph": "g"}
    out.write_text(json.dumps({"gpu": h100, "rows": [other, same]}))
    _fake_cells(monkeypatch)
    argv = ["scaling", "--apps", "bfs", "--graphs", "g", "--gpus", "2", "--merge"]
    assert main([*argv, "--json", str(out), "--results", ""]) == 2
    err = capsys.readouterr().err
    assert "the earlier rows of bfs on g are from NVIDIA H100" in err
    assert json.loads(out.read_text())["gpu"] == h100
    # another graph's rows may come from another machine: a model column
    out.write_text(json.dumps({"gpu": h100, "rows": [other]}))
    results = tmp_path / "RESULTS.md"
    assert main([*argv, "--json", str(out), "--results", str(results)]) == 0
    payload = json.loads(out.read_text())
    assert payload["gpu"] == f"{h100}; NVIDIA H200"
    table = results.read_text()
    assert "| GPU model |" in table
    assert f"| {h100} |" in table and "| NVIDIA H200 |" in table


def test_a_run_cut_short_keeps_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cells(monkeypatch)
    real = scaling._cell  # the fake

    def cell_then_stop(app, graph, n, policy, opts, out, check_here=False):  # noqa: ANN001, ANN202
        if n == 4:
            raise KeyboardInterrupt
        return real(app, graph, n, policy, opts, out, check_here)

    monkeypatch.setattr(scaling, "_cell", cell_then_stop)
    out = tmp_path / "scaling.json"
    with pytest.raises(KeyboardInterrupt):
        main(
            [
                "scaling",
                "--apps",
                "bfs",
                "--graphs",
                "g",
                "--json",
                str(out),
                "--results",
                "",
            ]
        )
    lines = (tmp_path / "scaling.json.partial").read_text().splitlines()
    assert [json.loads(line)["gpus"] for line in lines] == [1, 2, 2]  # oec, cvc
    assert not out.exists()


def test_merge_takes_the_rows_a_cut_short_run_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cells(monkeypatch)
    out = tmp_path / "scaling.json"
    partial = tmp_path / "scaling.json.partial"
    left = [
        {
            "app": "bfs",
            "graph": "g",
            "gpus": 1,
            "policy": "none",
            "median_ms": 8.0,
            "correct": True,
            "gpu": "NVIDIA H200",
        },
        {
            "app": "bfs",
            "graph": "g",
            "gpus": 2,
            "policy": "oec",
            "median_ms": 4.0,
            "correct": True,
            "gpu": "2 x NVIDIA H200",
        },
    ]
    partial.write_text("\n".join(json.dumps(r) for r in left) + '\n{"app": "bf')
    argv = ["scaling", "--apps", "sssp", "--graphs", "g", "--gpus", "2", "--merge"]
    assert main([*argv, "--policies", "oec", "--json", str(out), "--results", ""]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert _cells(rows) == BFS_THEN_SSSP
    assert not partial.exists()


def test_gpu_model_of_a_row() -> None:
    assert scaling.gpu_model("NVIDIA H200") == "NVIDIA H200"
    assert scaling.gpu_model("4 x NVIDIA H200 (NCCL, oec)") == "NVIDIA H200"
    assert scaling.gpu_model("2 x NVIDIA H100 80GB HBM3 (NCCL, cvc)") == (
        "NVIDIA H100 80GB HBM3"
    )


def test_one_gpu_baseline_failure_is_a_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 1-GPU subprocess ends with a one-line error (the row takes it, and
    "out of memory" in it marks the graph as exceeding one GPU), not a
    traceback."""
    from irgl_runner.errors import IrglError

    def oom(*args: object) -> dict:
        raise IrglError("irgl_pipe_create: cudaMallocAsync: out of memory")

    monkeypatch.setattr(scaling, "one_gpu", oom)
    assert scaling.main(["--one-gpu", "sssp", "big"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "error: irgl_pipe_create: cudaMallocAsync: out of memory"


def test_a_cell_keeps_its_wall_time_and_rank_0s_host_phases(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A row says how long its cell took in all (`wall_s`) and where rank 0's
    host time went (`rank0_host_s`, from the run's record)."""
    phases = {"graph": 1.5, "library": 0.1, "communicator": 0.4, "calls": 2.0}
    record = {"median_ms": 3.0, "check": "skipped", "rank0_host_s": phases}

    def run(argv: list[str], timeout: float) -> tuple[int, str, str]:
        assert "--gpus" in argv
        return 0, "log line\n" + json.dumps(record) + "\n", ""

    monkeypatch.setattr(scaling, "_run", run)
    opts = argparse.Namespace(check=False, reps=1, timeout=10.0)
    row = scaling._cell("bfs", "rmat:8", 2, "oec", opts, tmp_path / "out.txt")
    assert row["median_ms"] == 3.0
    assert row["rank0_host_s"] == phases
    assert isinstance(row["wall_s"], float) and row["wall_s"] >= 0


def test_a_folded_policy_runs_the_ranks_with_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--policies oec+fold``: the ranks get ``--policy oec --fold`` (folded
    master blocks) and the row keeps the name ``oec+fold``."""
    seen: list[list[str]] = []

    def run(argv, timeout):  # noqa: ANN001, ANN202
        seen.append(argv)
        return 0, '{"median_ms": 2.0, "check": "skipped"}\n', ""

    monkeypatch.setattr(scaling, "_run", run)
    opts = argparse.Namespace(check=True, reps=1, timeout=9.0)
    row = scaling._cell("cc", "rmat:8", 2, "oec+fold", opts, tmp_path / "o.npy")
    (argv,) = seen
    i = argv.index("--policy")
    assert argv[i + 1] == "oec" and "--fold" in argv
    assert row["policy"] == "oec+fold" and row["median_ms"] == 2.0
    seen.clear()
    scaling._cell("cc", "rmat:8", 2, "cvc", opts, tmp_path / "o.npy")
    assert "--fold" not in seen[0]
    assert scaling.split_policy("cvc+fold") == ("cvc", True)


def test_an_unknown_policy_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("irgl_runner.distributed.gpu_count", lambda: 4)
    out = tmp_path / "scaling.json"
    code = main(["scaling", "--json", str(out), "--policies", "oec+fold,hvc"])
    assert code == 2
    assert "--policies: unknown hvc" in capsys.readouterr().err
    assert not out.exists()
