"""``irgl-bench all`` and irgl_runner.report without a GPU.

The harness takes its runner as a parameter (``bench_cli.main(argv,
runner=...)``), so these tests run it with fake runners over a fake
benchmarks directory; ``SubprocessRunner`` is exercised with a fake
"python" script standing in for ``irgl-bench run``.  One GPU test runs the
real thing on small graphs.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from irgl_runner import bench_all, bench_cli
from irgl_runner.bench_all import BenchJob, SubprocessRunner, discover_apps, run_all
from irgl_runner.generators import parse_spec
from irgl_runner.report import (
    BEGIN_MARKER,
    END_MARKER,
    BenchRow,
    ReportError,
    markdown_table,
    render_section,
    update_markdown,
    write_chart,
)

APP_PY = textwrap.dedent(
    """
    from pathlib import Path
    from irgl_runner.apps import AppSpec, ArraySpec

    APP = AppSpec(
        name={name!r},
        mlir=Path(__file__).with_name("{name}.mlir"),
        host_fn="main",
        outputs=[ArraySpec("x", "int32")],
        args=lambda ctx: [ctx.device_graph, ctx.arrays["x"]],
        params={params!r},
    )
    """
)


def make_benchmarks(root: Path, apps: dict[str, dict]) -> Path:
    """A benchmarks directory with a minimal app.py per app (params given)."""
    for name, params in apps.items():
        d = root / name
        d.mkdir(parents=True)
        (d / "app.py").write_text(APP_PY.format(name=name, params=params))
    return root


class FakeRunner:
    """Returns canned rows: ``outcomes[(app, graph)]`` is a status or an exception."""

    def __init__(self, outcomes: dict[tuple[str, str], object] | None = None) -> None:
        self.outcomes = outcomes or {}
        self.jobs: list[BenchJob] = []

    def __call__(self, job: BenchJob) -> BenchRow:
        self.jobs.append(job)
        outcome = self.outcomes.get((job.app, job.graph), "passed")
        if isinstance(outcome, Exception):
            raise outcome
        assert isinstance(outcome, str)
        timed = not outcome.startswith("error")
        return BenchRow(
            job.app,
            job.graph,
            outcome,
            median_ms=2.0 if timed else None,
            times_ms=[2.0, 2.5, 1.5] if timed else [],
            gpu="Fake GPU 9000",
            date="2030-01-02T03:04:05+00:00",
        )


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return make_benchmarks(
        tmp_path / "benchmarks", {"bfs": {}, "zeta": {}, "pr": {"tolerance": 1e-4}}
    )


def run_main(
    tmp_path: Path, bench: Path, runner: object, *extra: str
) -> tuple[int, Path]:
    out = tmp_path / "out"
    argv = [
        "all",
        "--benchmarks-dir",
        str(bench),
        "--out-dir",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-chart",
        *extra,
    ]
    return bench_cli.main(argv, runner=runner), out  # type: ignore[arg-type]


def table_rows(md: str) -> list[list[str]]:
    """The data rows of the generated markdown table, as cells."""
    rows = []
    for line in md.splitlines():
        if line.startswith("| ") and not line.startswith("| app |"):
            rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


# ----------------------------------------------------------------- discovery


def test_discover_apps_known_order_first(tmp_path: Path) -> None:
    bench = make_benchmarks(
        tmp_path, {"tc": {}, "bfs": {}, "aaa": {}, "pr": {}, "sssp": {}}
    )
    (tmp_path / "no_app").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "app.py").write_text("")
    assert discover_apps(bench) == ["bfs", "sssp", "pr", "tc", "aaa"]


def test_default_graph_lists_are_valid_specs() -> None:
    for g in (*bench_all.DEFAULT_GRAPHS, *bench_all.QUICK_GRAPHS):
        assert parse_spec(g) is not None
    kinds = {parse_spec(g).kind for g in bench_all.DEFAULT_GRAPHS}  # type: ignore[union-attr]
    assert kinds == {"rmat", "grid", "random", "path"}
    assert "rmat:20" in bench_all.DEFAULT_GRAPHS
    assert "grid:2048x2048" in bench_all.DEFAULT_GRAPHS


def test_repository_apps_are_discovered() -> None:
    apps = discover_apps()
    for name in ("bfs", "sssp", "cc", "pr", "tc"):
        assert name in apps


# ------------------------------------------------------------------- markers


def test_update_markdown_creates_file_with_markers(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "RESULTS.md"
    update_markdown(p, "table one")
    text = p.read_text()
    assert text.count(BEGIN_MARKER) == 1 and text.count(END_MARKER) == 1
    assert text.index(BEGIN_MARKER) < text.index("table one") < text.index(END_MARKER)


def test_update_markdown_keeps_hand_written_text(tmp_path: Path) -> None:
    p = tmp_path / "RESULTS.md"
    p.write_text(
        "# Results\n\nNotes by the lead.\n\n"
        f"{BEGIN_MARKER}\nold table\n{END_MARKER}\n\n## Analysis\n\nHand-written.\n"
    )
    update_markdown(p, "new table")
    text = p.read_text()
    assert "old table" not in text and "new table" in text
    assert text.startswith("# Results\n\nNotes by the lead.\n\n" + BEGIN_MARKER)
    assert text.endswith(f"{END_MARKER}\n\n## Analysis\n\nHand-written.\n")
    update_markdown(p, "newer table")  # idempotent structure
    again = p.read_text()
    assert again == text.replace("new table", "newer table")


def test_update_markdown_appends_markers_to_file_without_them(tmp_path: Path) -> None:
    p = tmp_path / "RESULTS.md"
    p.write_text("# Mine\n\nkeep me")
    update_markdown(p, "T")
    text = p.read_text()
    assert text.startswith(
        "# Mine\n\nkeep me\n\n" + BEGIN_MARKER + "\nT\n" + END_MARKER
    )


@pytest.mark.parametrize(
    "body",
    [
        f"{END_MARKER}\nx\n{BEGIN_MARKER}\n",
        f"{BEGIN_MARKER}\nx\n",
        f"{BEGIN_MARKER}\n{BEGIN_MARKER}\n{END_MARKER}\n",
    ],
)
def test_update_markdown_refuses_broken_markers(tmp_path: Path, body: str) -> None:
    p = tmp_path / "RESULTS.md"
    p.write_text("precious\n" + body)
    with pytest.raises(ReportError, match="markers"):
        update_markdown(p, "T")
    assert p.read_text() == "precious\n" + body


def test_all_with_broken_markers_exits_2_before_running(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "RESULTS.md").write_text(f"{END_MARKER}\n{BEGIN_MARKER}\n")
    runner = FakeRunner()
    rc, _ = run_main(tmp_path, bench, runner, "--graphs", "grid:2x2")
    assert rc == 2
    assert runner.jobs == []
    assert "fix the markers" in capsys.readouterr().err
    assert not (out / "results.json").exists()


# -------------------------------------------------------------- full reports


def test_all_writes_reports_from_fake_results(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = FakeRunner()
    rc, out = run_main(tmp_path, bench, runner, "--graphs", "grid:3x3,rmat:4")
    err = capsys.readouterr().err
    assert rc == 0, err
    # app-major order, known apps first
    assert [(j.app, j.graph) for j in runner.jobs] == [
        ("bfs", "grid:3x3"),
        ("bfs", "rmat:4"),
        ("pr", "grid:3x3"),
        ("pr", "rmat:4"),
        ("zeta", "grid:3x3"),
        ("zeta", "rmat:4"),
    ]
    assert all(j.reps == 5 and j.cache_dir == tmp_path / "cache" for j in runner.jobs)
    # the harness measured the graphs itself
    assert runner.jobs[0].nodes == 9 and runner.jobs[0].edges == 24

    md = (out / "RESULTS.md").read_text()
    rows = table_rows(md)
    assert len(rows) == 6
    assert rows[0] == [
        "bfs",
        "grid:3x3",
        "9",
        "24",
        "2.000",
        "12 k",
        "yes",
        "Fake GPU 9000",
        "2030-01-02",
    ]
    assert "In progress" not in md and "wrong" not in md
    assert "No chart (`--no-chart`)" in md

    doc = json.loads((out / "results.json").read_text())
    assert doc["meta"]["planned"] == 6 and doc["meta"]["done"] == 6
    assert doc["meta"]["gpu"] == "Fake GPU 9000"
    assert doc["meta"]["graphs"] == ["grid:3x3", "rmat:4"]
    assert doc["meta"]["command"].startswith("irgl-bench all --benchmarks-dir")
    first = doc["results"][0]
    assert first["app"] == "bfs" and first["status"] == "passed"
    assert first["correct"] is True
    assert first["edges_per_s"] == pytest.approx(24 / 2e-3)
    assert first["times_ms"] == [2.0, 2.5, 1.5]
    assert "all 6 results correct" in err


def test_all_progress_on_stderr(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _ = run_main(
        tmp_path, bench, FakeRunner(), "--graphs", "grid:2x2", "--apps", "pr,bfs"
    )
    captured = capsys.readouterr()
    assert rc == 0
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert any("preparing graph grid:2x2" in ln and "4 nodes" in ln for ln in lines)
    # --apps order is kept
    assert any(ln.startswith("[1/2] pr on grid:2x2 ... 2.000 ms") for ln in lines)
    assert any(ln.startswith("[2/2] bfs on grid:2x2 ... ") for ln in lines)


def test_partial_reports_written_after_each_row(tmp_path: Path, bench: Path) -> None:
    seen: list[str] = []
    out = tmp_path / "out"

    class Peek(FakeRunner):
        def __call__(self, job: BenchJob) -> BenchRow:
            if (out / "RESULTS.md").exists():
                seen.append((out / "RESULTS.md").read_text())
            return super().__call__(job)

    rc, _ = run_main(tmp_path, bench, Peek(), "--graphs", "grid:2x2")
    assert rc == 0
    assert len(seen) == 2  # before the 2nd and 3rd run
    assert "In progress: 1 of 3 runs done" in seen[0]
    assert len(table_rows(seen[1])) == 2


def test_failures_exit_1_and_keep_every_row(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = FakeRunner(
        {
            ("bfs", "rmat:4"): "failed: level: 3 of 16 values differ",
            ("pr", "grid:2x2"): "error: nvcc failed (exit 1)",
            ("zeta", "rmat:4"): RuntimeError("runner blew up"),
        }
    )
    rc, out = run_main(tmp_path, bench, runner, "--graphs", "grid:2x2,rmat:4")
    err = capsys.readouterr().err
    assert rc == 1
    assert "FAILED: 3 of 6 results are wrong or did not run" in err
    assert "bfs on rmat:4: failed: level: 3 of 16 values differ" in err
    assert "pr on grid:2x2: error: nvcc failed (exit 1)" in err
    assert "zeta on rmat:4: error: RuntimeError: runner blew up" in err
    md = (out / "RESULTS.md").read_text()
    rows = {(r[0], r[1]): r for r in table_rows(md)}
    assert len(rows) == 6
    assert rows[("bfs", "rmat:4")][6] == "**NO**: level: 3 of 16 values differ"
    assert rows[("pr", "grid:2x2")][6].startswith("**error**: nvcc failed")
    assert rows[("pr", "grid:2x2")][4] == ""  # no time for an error
    assert rows[("zeta", "rmat:4")][2] == "16"  # sizes even for failed rows
    assert rows[("bfs", "grid:2x2")][6] == "yes"
    assert "3 of 6 results are wrong or missing" in md
    doc = json.loads((out / "results.json").read_text())
    assert [r["correct"] for r in doc["results"]].count(False) == 3


def test_app_that_does_not_load_gets_error_rows(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (bench / "broken").mkdir()
    (bench / "broken" / "app.py").write_text("raise ImportError('half-written app')\n")
    runner = FakeRunner()
    rc, out = run_main(tmp_path, bench, runner, "--graphs", "grid:2x2,grid:3x2")
    assert rc == 1
    assert all(j.app != "broken" for j in runner.jobs)
    rows = [r for r in table_rows((out / "RESULTS.md").read_text()) if r[0] == "broken"]
    assert len(rows) == 2
    assert rows[0][6].startswith("**error**: app does not load: ")
    doc = json.loads((out / "results.json").read_text())
    broken = [r for r in doc["results"] if r["app"] == "broken"]
    assert "ImportError: half-written app" in broken[0]["status"]
    assert "broken on grid:3x2: error: app does not load" in capsys.readouterr().err


def test_app_own_bench_graphs(tmp_path: Path) -> None:
    bench = make_benchmarks(
        tmp_path / "b",
        {
            "bfs": {},
            "dmr": {"bench_graphs": ["grid:5x5"], "bench_graphs_quick": ["grid:2x3"]},
        },
    )
    runner = FakeRunner()
    rc, _ = run_main(tmp_path, bench, runner, "--graphs", "grid:2x2")
    assert rc == 0
    assert [(j.app, j.graph) for j in runner.jobs] == [
        ("bfs", "grid:2x2"),
        ("dmr", "grid:5x5"),
    ]
    runner = FakeRunner()
    rc, _ = run_main(tmp_path, bench, runner, "--quick", "--apps", "dmr")
    assert rc == 0
    assert [(j.app, j.graph, j.reps) for j in runner.jobs] == [("dmr", "grid:2x3", 3)]


def test_quick_uses_small_graphs(tmp_path: Path, bench: Path) -> None:
    runner = FakeRunner()
    rc, _ = run_main(tmp_path, bench, runner, "--quick", "--apps", "bfs")
    assert rc == 0
    assert [j.graph for j in runner.jobs] == list(bench_all.QUICK_GRAPHS)
    assert all(j.nodes is not None and j.nodes <= 20000 for j in runner.jobs)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--apps", "nope"], "unknown app"),
        (["--graphs", "rmat:abc"], "bad graph spec"),
        (["--graphs", "missing-file.gr"], "neither a generator spec"),
        (["--graphs", "grid:2x2", "--reps", "0"], "--reps"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path,
    bench: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    runner = FakeRunner()
    rc, out = run_main(tmp_path, bench, runner, *extra)
    assert rc == 2
    assert message in capsys.readouterr().err
    assert runner.jobs == []
    assert not (out / "RESULTS.md").exists()


def test_corrupt_graph_file_gives_error_rows(tmp_path: Path, bench: Path) -> None:
    bad = tmp_path / "bad.gr"
    bad.write_bytes(b"\x00" * 7)
    runner = FakeRunner()
    rc, out = run_main(tmp_path, bench, runner, "--graphs", f"grid:2x2,{bad}")
    assert rc == 1
    assert all(j.graph == "grid:2x2" for j in runner.jobs)
    rows = table_rows((out / "RESULTS.md").read_text())
    assert sum("graph does not load" in r[6] for r in rows) == 3


def test_run_all_direct(tmp_path: Path) -> None:
    import io

    jobs = [BenchJob("a", "g1", nodes=3, edges=4), BenchJob("b", "g1", error="nope")]
    progress = io.StringIO()
    calls: list[int] = []
    rows = run_all(
        jobs, FakeRunner(), progress, on_row=lambda rs: calls.append(len(rs))
    )
    assert [r.status for r in rows] == ["passed", "error: nope"]
    assert rows[0].nodes == 3 and rows[0].edges == 4
    assert calls == [1, 2]
    assert "[2/2] b on g1 ... ERROR: nope" in progress.getvalue()


# --------------------------------------------------------------- rendering


def test_markdown_table_escapes_and_formats() -> None:
    rows = [
        BenchRow(
            "pr", "a|b.gr", "failed: x | y\nz", nodes=1234567, edges=10, median_ms=0.5
        ),
        BenchRow("tc", "g", "skipped", median_ms=1500.0, edges=3 * 10**9),
    ]
    table = markdown_table(rows)
    lines = table.splitlines()
    assert lines[0].startswith("| app | graph | nodes | edges | median ms | edges/s |")
    assert "a\\|b.gr" in lines[2] and "**NO**: x \\| y z" in lines[2]
    assert "1,234,567" in lines[2] and "0.500" in lines[2] and "20 k" in lines[2]
    assert "| 1500 |" in lines[3] and "2 G" in lines[3] and "unchecked" in lines[3]


def test_render_section_in_progress_and_notes() -> None:
    rows = [BenchRow("bfs", "g", "passed", median_ms=1.0)]
    text = render_section(
        rows,
        {"planned": 3, "reps": 5, "generated": "2030-01-01"},
        chart="results.png",
        notes=["a note"],
    )
    assert "In progress: 1 of 3 runs done" in text
    assert "Median of 5 timed runs" in text
    assert "![median time by app and graph](results.png)" in text
    assert text.rstrip().endswith("a note")


def test_chart_skipped_without_matplotlib(
    tmp_path: Path, bench: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    note = write_chart(tmp_path / "c.png", [BenchRow("a", "g", "passed")])
    assert note is not None and "matplotlib is not installed" in note
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.png").write_bytes(b"stale")
    rc = bench_cli.main(
        [
            "all",
            "--benchmarks-dir",
            str(bench),
            "--out-dir",
            str(out),
            "--no-cache",
            "--graphs",
            "grid:2x2",
        ],
        runner=FakeRunner(),
    )
    assert rc == 0  # a missing chart does not change the exit code
    assert not (out / "results.png").exists()
    assert "matplotlib is not installed" in (out / "RESULTS.md").read_text()


def test_chart_written_with_matplotlib(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [
        BenchRow("bfs", "g1", "passed", edges=100, median_ms=1.0),
        BenchRow("bfs", "g2", "failed: no", edges=100, median_ms=1.0),
        BenchRow("pr", "g1", "error: boom"),
        BenchRow("pr", "g2", "passed", edges=1000, median_ms=3.0),
    ]
    p = tmp_path / "results.png"
    assert write_chart(p, rows, title="t") is None
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -------------------------------------------------------- SubprocessRunner

FAKE_RUN = r"""
import json, os, signal, sys, time
app = sys.argv[sys.argv.index("run") + 1]
graph = sys.argv[sys.argv.index("--graph") + 1]
record = {"app": app, "graph": graph, "nodes": 5, "edges": 8, "gpu": "Fake",
          "times_ms": [1.0, 3.0, 2.0], "median_ms": 2.0, "edges_per_s": 4000.0,
          "check": "passed"}
if app == "good":
    print("noise"); print(json.dumps(record))
elif app == "wrong":
    record["check"] = "failed"; record["problem"] = "dist: 2 of 5 values differ"
    print(json.dumps(record))
    print("irgl-bench: error: wrong: wrong output: dist: ...", file=sys.stderr)
    sys.exit(1)
elif app == "nvcc":
    print("irgl-bench: error: nvcc failed (exit 1) on x.cu:\nx.cu(3): error: bad",
          file=sys.stderr)
    sys.exit(1)
elif app == "crash":
    sys.stderr.write("about to crash\n"); sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
elif app == "hang":
    time.sleep(60)
elif app == "argv":
    print(json.dumps(dict(record, argv=sys.argv[1:])))
elif app == "device":
    print(json.dumps(dict(record, gpu=os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))))
"""


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    script = tmp_path / "fake_run.py"
    script.write_text(FAKE_RUN)
    exe = tmp_path / "fakepython"
    exe.write_text(f'#!/bin/sh\nshift 2\nexec {sys.executable} {script} "$@"\n')
    exe.chmod(0o755)
    return str(exe)


def test_subprocess_runner_outcomes(fake_python: str, tmp_path: Path) -> None:
    runner = SubprocessRunner(python=fake_python)
    good = runner(BenchJob("good", "rmat:4", reps=3))
    assert good.status == "passed" and good.median_ms == 2.0
    assert good.times_ms == [1.0, 3.0, 2.0] and good.gpu == "Fake"
    assert good.nodes == 5 and good.edges == 8 and good.log is None

    wrong = runner(BenchJob("wrong", "g"))
    assert wrong.status == "failed: dist: 2 of 5 values differ"
    assert wrong.median_ms == 2.0

    nvcc = runner(BenchJob("nvcc", "g", nodes=7))
    assert nvcc.status == "error: nvcc failed (exit 1) on x.cu: x.cu(3): error: bad"
    assert nvcc.nodes == 7 and nvcc.log is not None

    crash = runner(BenchJob("crash", "g"))
    assert crash.status.startswith("error: crashed (SIGSEGV)")
    assert "about to crash" in crash.status

    hang = runner(BenchJob("hang", "g", timeout_s=1))
    assert hang.status == "error: timed out after 1 s"


def test_subprocess_runner_sets_the_jobs_device(
    fake_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    runner = SubprocessRunner(python=fake_python)
    assert runner(BenchJob("device", "g", device="2")).gpu == "2"
    assert runner(BenchJob("device", "g")).gpu == "7"  # the environment's


def test_subprocess_runner_command(fake_python: str, tmp_path: Path) -> None:
    runner = SubprocessRunner(python=fake_python)
    row = runner(
        BenchJob("argv", "grid:2x2", reps=4, benchmarks_dir=tmp_path, cache_dir=None)
    )
    assert row.status == "passed"
    cmd = runner.command(BenchJob("x", "g", reps=4, cache_dir=tmp_path / "c"))
    assert cmd[1:] == [
        "-m",
        "irgl_runner.bench_cli",
        "run",
        "x",
        "--graph",
        "g",
        "--reps",
        "4",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    assert "--no-cache" in runner.command(BenchJob("x", "g", cache_dir=None))


# --------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_all_quick_on_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real harness (subprocess runs) on small graphs: every row correct."""
    out = tmp_path / "out"
    rc = bench_cli.main(
        [
            "all",
            "--apps",
            "bfs,sssp,cc,pr,tc",
            "--graphs",
            "rmat:8,grid:8x8,random:500:400",
            "--reps",
            "2",
            "--out-dir",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0, err
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["results"]) == 15
    assert all(r["status"] == "passed" for r in doc["results"]), err
    assert doc["meta"]["gpu"]


def test_pipeline_and_backend_reach_every_run(tmp_path: Path, bench: Path) -> None:
    runner = FakeRunner()
    pipeline = "lower-irgl{ticket_locks=true}"
    rc, _ = run_main(
        tmp_path,
        bench,
        runner,
        "--apps",
        "bfs,pr",
        "--graphs",
        "grid:2x2",
        "-p",
        pipeline,
    )
    assert rc == 0 and len(runner.jobs) == 2
    for job in runner.jobs:
        assert job.extra_args == ["--backend", "cuda", "--pipeline", pipeline]
        cmd = SubprocessRunner().command(job)
        assert cmd[-4:] == ["--backend", "cuda", "--pipeline", pipeline]


def test_render_section_names_the_commit() -> None:
    meta = {"generated": "2026-11-26", "command": "irgl-bench all", "commit": "abc1234"}
    head = render_section([], meta).splitlines()[0]
    assert head == "Generated 2026-11-26 by `irgl-bench all` at commit abc1234."


def test_commit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """`$IRGL_COMMIT` names the commit of generated tables (a working tree
    copied to a GPU machine may carry a stale `.git`); else git's."""
    from irgl_runner.report import current_commit

    monkeypatch.delenv("IRGL_COMMIT", raising=False)
    from_git = current_commit()
    assert from_git and " " not in from_git
    monkeypatch.setenv("IRGL_COMMIT", "abc1234")
    assert current_commit() == "abc1234"


def test_commit_of_a_changed_tree_says_dirty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree whose tracked files differ from its `.git`'s commit (as a copy
    of the working tree with a stale `.git` does) is named `<commit>-dirty`."""
    import shutil
    import subprocess

    from irgl_runner import report

    if shutil.which("git") is None:
        pytest.skip("needs git")
    monkeypatch.delenv("IRGL_COMMIT", raising=False)
    repo = tmp_path / "copy"
    (repo / "irgl_runner").mkdir(parents=True)
    module = repo / "irgl_runner" / "report.py"
    module.write_text("# the runner\n")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    monkeypatch.setattr(report, "__file__", str(module))
    clean = report.current_commit()
    assert len(clean) >= 7 and not clean.endswith("-dirty")
    module.write_text("# the runner, changed since\n")
    assert report.current_commit() == clean + "-dirty"
