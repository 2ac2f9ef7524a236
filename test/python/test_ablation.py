"""The ablation without a GPU: its configurations (irgl_runner.ablation),
``irgl-bench all --ablation`` with a fake runner (planning, the tables,
``ablation.json``, exit codes) and ``irgl-bench build`` with a fake nvcc
(what it compiles, the manifest, ``--check``, a cache moved elsewhere)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import stat
import textwrap
import threading
import time
from pathlib import Path

import pytest
from xdsl.passes import PassPipeline

from irgl_runner import bench_cli
from irgl_runner import build as build_module
from irgl_runner.ablation import (
    ALL,
    DEFAULT,
    NONE,
    OPTIMIZATIONS,
    Configuration,
    Optimization,
    configurations,
    select_configurations,
)
from irgl_runner.bench_all import (
    DEFAULT_ABLATION_TIMEOUT_S,
    DEFAULT_GRAPHS,
    DEFAULT_TIMEOUT_S,
    QUICK_GRAPHS,
    BenchJob,
    identical_configs,
)
from irgl_runner.build import emit_program, library_path
from irgl_runner.errors import UsageError
from irgl_runner.generators import parse_spec
from irgl_runner.prebuild import MANIFEST_NAME
from irgl_runner.report import (
    ABLATION_BEGIN_MARKER,
    ABLATION_END_MARKER,
    BEGIN_MARKER,
    END_MARKER,
    BenchRow,
    ablation_tables,
)
from lowering.lower_irgl import LowerIrgl

REPO = Path(__file__).resolve().parents[2]


def _lower_irgl(pipeline: str) -> LowerIrgl:
    """The LowerIrgl pass a pipeline text builds."""
    (p,) = PassPipeline.parse_spec({"lower-irgl": lambda: LowerIrgl}, pipeline).passes
    assert isinstance(p, LowerIrgl)
    return p


def _enabled(p: LowerIrgl) -> set[str]:
    """The optimizations a LowerIrgl pass has on."""
    on = set()
    for o in OPTIMIZATIONS:
        if all(getattr(p, k) == v for k, v in o.on):
            on.add(o.name)
        else:
            assert all(getattr(p, k) == v for k, v in o.off), o
    return on


# ------------------------------------------------------------ configurations


def test_every_optimization_is_a_lower_irgl_option() -> None:
    fields = {f.name for f in dataclasses.fields(LowerIrgl)}
    for o in OPTIMIZATIONS:
        assert o.options <= fields, f"{o.name}: not lower-irgl options"
        assert {k for k, _ in o.on} == {k for k, _ in o.off}


def test_configurations_none_each_alone_all_default() -> None:
    configs = configurations()
    names = [o.name for o in OPTIMIZATIONS]
    assert [c.name for c in configs] == [NONE, *names, ALL, DEFAULT]
    by_name = {c.name: _lower_irgl(c.pipeline) for c in configs}
    assert _enabled(by_name[NONE]) == set()
    for o in OPTIMIZATIONS:
        assert {o.name, *o.requires} <= _enabled(by_name[o.name])
    # what is required is required in turn: the drain's team needs the
    # drain, which needs the control kernel
    assert _enabled(by_name["retry_drain_blocks"]) == {
        "retry_drain_blocks",
        "retry_drain",
        "outline",
    }
    for o in OPTIMIZATIONS:
        for r in _enabled(by_name[o.name]) - {o.name}:
            assert _enabled(by_name[r]) <= _enabled(by_name[o.name])
    assert _enabled(by_name[ALL]) == set(names)
    assert configs[-1] == Configuration(DEFAULT, "lower-irgl")
    assert by_name[DEFAULT] == LowerIrgl()
    assert "outline" in names and "block_push" in names


def test_refinements_run_with_what_they_refine() -> None:
    by_name = {c.name: _lower_irgl(c.pipeline) for c in configurations()}
    for name in ("warp_gather", "edge_unroll", "edge_interleave"):
        assert by_name[name].nested_parallelism, name
        assert not by_name[name].outline, name
    assert by_name["small_worklist"].outline
    assert by_name["small_worklist"].small_worklist > 0
    assert not by_name["outline"].small_worklist


def test_unknown_requirement_is_a_usage_error() -> None:
    extra = (*OPTIMIZATIONS, Optimization.flag("ticket_locks", requires=("x",)))
    with pytest.raises(UsageError, match="unknown"):
        configurations("lower-irgl", extra)


def test_base_options_are_kept_in_every_configuration() -> None:
    configs = configurations("lower-irgl{block-size=128 ticket_locks=true}")
    for c in configs:
        p = _lower_irgl(c.pipeline)
        assert p.block_size == 128 and p.ticket_locks, c
    assert configs[-1].pipeline == "lower-irgl{block_size=128 ticket_locks=true}"


def test_adding_an_optimization_is_one_entry() -> None:
    extra = (*OPTIMIZATIONS, Optimization.flag("ticket_locks", "tickets"))
    configs = configurations("lower-irgl", extra)
    assert [c.name for c in configs][-3:] == ["tickets", ALL, DEFAULT]
    by_name = {c.name: _lower_irgl(c.pipeline) for c in configs}
    assert by_name["tickets"].ticket_locks and not by_name[NONE].ticket_locks
    assert by_name[ALL].ticket_locks and not by_name["tickets"].outline


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("lower-irgl{outline=false}", "--ablation sets outline itself"),
        ("lower-irgl,lower-irgl", "needs a pipeline of one lower-irgl pass"),
        ("convert-irgl-kernels", "needs a pipeline of one lower-irgl pass"),
        ("lower-irgl{bogus=1}", "bogus"),
        ("lower-irgl{block_size=100}", "block_size"),
        ("lower-irgl{", "bad pass pipeline"),
    ],
)
def test_bad_base_pipelines(pipeline: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        configurations(pipeline)


def test_a_stale_optimization_is_named() -> None:
    with pytest.raises(UsageError, match="no_such_option"):
        configurations("lower-irgl", [Optimization.flag("no_such_option")])


def test_select_configurations_keeps_column_order() -> None:
    configs = configurations()
    picked = select_configurations(configs, ["all", "none"])
    assert [c.name for c in picked] == [NONE, ALL]
    assert select_configurations(configs, []) == configs
    with pytest.raises(UsageError, match="unknown configuration.*nope"):
        select_configurations(configs, ["nope"])


def test_default_graphs_have_a_chain() -> None:
    paths = [g for g in DEFAULT_GRAPHS if g.startswith("path:")]
    assert len(paths) == 1
    spec = parse_spec(paths[0])
    assert spec is not None and spec.kind == "path"
    assert any(g.startswith("path:") for g in QUICK_GRAPHS)


# ------------------------------------------------------- irgl-bench all --ablation

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
    )
    """
)


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    root = tmp_path / "benchmarks"
    for name in ("bfs", "sssp"):
        (root / name).mkdir(parents=True)
        (root / name / "app.py").write_text(APP_PY.format(name=name))
    return root


class FakeRunner:
    """Canned rows by (app, graph, configuration): a status, or (status, ms)."""

    def __init__(self, outcomes: dict[tuple[str, str, str], object] | None = None):
        self.outcomes = outcomes or {}
        self.jobs: list[BenchJob] = []

    def __call__(self, job: BenchJob) -> BenchRow:
        self.jobs.append(job)
        assert job.config is not None
        outcome = self.outcomes.get((job.app, job.graph, job.config), "passed")
        status, ms = outcome if isinstance(outcome, tuple) else (outcome, 4.0)
        timed = not str(status).startswith("error")
        return BenchRow(
            job.app,
            job.graph,
            str(status),
            median_ms=float(ms) if timed else None,
            gpu="Fake GPU",
        )


def run_ablation(
    tmp_path: Path, bench: Path, runner: FakeRunner, *extra: str
) -> tuple[int, Path]:
    out = tmp_path / "out"
    argv = [
        "all",
        "--ablation",
        "--benchmarks-dir",
        str(bench),
        "--out-dir",
        str(out),
        "--no-cache",
        *extra,
    ]
    return bench_cli.main(argv, runner=runner), out  # type: ignore[arg-type]


def _pipeline_of(job: BenchJob) -> str:
    args = job.extra_args
    return args[args.index("--pipeline") + 1]


def test_ablation_plans_app_graph_configuration(tmp_path: Path, bench: Path) -> None:
    runner = FakeRunner()
    rc, _ = run_ablation(tmp_path, bench, runner, "--graphs", "grid:3x3,path:5")
    assert rc == 0
    configs = configurations()
    expected = [
        (app, g, c.name)
        for app in ("bfs", "sssp")
        for g in ("grid:3x3", "path:5")
        for c in configs
    ]
    assert [(j.app, j.graph, j.config) for j in runner.jobs] == expected
    pipelines = {c.name: c.pipeline for c in configs}
    for j in runner.jobs:
        assert j.config is not None and _pipeline_of(j) == pipelines[j.config]
        assert j.extra_args[:2] == ["--backend", "cuda"]
        assert j.timeout_s == DEFAULT_ABLATION_TIMEOUT_S


def test_ablation_configs_and_timeout_options(tmp_path: Path, bench: Path) -> None:
    runner = FakeRunner()
    rc, _ = run_ablation(
        tmp_path,
        bench,
        runner,
        "--graphs",
        "grid:2x2",
        "--apps",
        "bfs",
        "--configs",
        "all,none",
        "--timeout",
        "7",
        "-p",
        "lower-irgl{block_size=64}",
    )
    assert rc == 0
    assert [j.config for j in runner.jobs] == [NONE, ALL]
    assert all(j.timeout_s == 7 for j in runner.jobs)
    assert all("block_size=64" in _pipeline_of(j) for j in runner.jobs)
    runner = FakeRunner()
    rc, _ = run_ablation(
        tmp_path, bench, runner, "--graphs", "grid:2x2", "--timeout", "0"
    )
    assert rc == 0 and all(j.timeout_s is None for j in runner.jobs)


def test_plain_all_keeps_its_timeout_and_one_run(tmp_path: Path, bench: Path) -> None:
    seen: list[BenchJob] = []

    def record(job: BenchJob) -> BenchRow:
        seen.append(job)
        return BenchRow(job.app, job.graph, "passed", median_ms=1.0)

    out = tmp_path / "o"
    argv = ["all", "--benchmarks-dir", str(bench), "--out-dir", str(out)]
    argv += ["--no-cache", "--no-chart", "--graphs", "grid:2x2", "--apps", "bfs"]
    assert bench_cli.main(argv, runner=record) == 0
    assert [(j.config, j.timeout_s) for j in seen] == [(None, DEFAULT_TIMEOUT_S)]
    assert _pipeline_of(seen[0]) == "lower-irgl"
    assert (out / "results.json").is_file()
    assert not (out / "ablation.json").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--configs", "nope"], "unknown configuration"),
        (["-p", "lower-irgl{outline=true}"], "--ablation sets outline itself"),
        (["--backend", "interp"], "needs --backend cuda"),
    ],
)
def test_ablation_usage_errors_exit_2(
    tmp_path: Path,
    bench: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    runner = FakeRunner()
    rc, out = run_ablation(tmp_path, bench, runner, "--graphs", "grid:2x2", *extra)
    assert rc == 2
    assert message in capsys.readouterr().err
    assert runner.jobs == [] and not (out / "RESULTS.md").exists()


@pytest.mark.parametrize(
    ("option", "name"),
    [
        (["--configs", "none"], "--configs"),
        (["--rerun-identical"], "--rerun-identical"),
    ],
)
def test_ablation_options_without_ablation_are_usage_errors(
    tmp_path: Path,
    bench: Path,
    capsys: pytest.CaptureFixture[str],
    option: list[str],
    name: str,
) -> None:
    argv = ["all", "--benchmarks-dir", str(bench), *option]
    assert bench_cli.main([*argv, "--out-dir", str(tmp_path)]) == 2
    assert f"{name} applies only with --ablation" in capsys.readouterr().err


def _table(md: str, header_start: str) -> dict[tuple[str, str], list[str]]:
    """The rows of the markdown table whose header starts with ``header_start``."""
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(header_start))
    rows = {}
    for ln in lines[start + 2 :]:
        if not ln.startswith("| "):
            break
        cells = [c.strip() for c in ln.strip("|").split(" | ")]
        rows[(cells[0], cells[1])] = cells[2:]
    return rows


def test_ablation_table_marks_and_exit_codes(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [c.name for c in configurations()]
    outcomes: dict[tuple[str, str, str], object] = {
        ("bfs", "path:5", NONE): "error: timed out after 300 s",
        ("bfs", "path:5", "outline"): ("passed", 1.0),
        ("bfs", "grid:2x2", NONE): ("passed", 8.0),
        ("bfs", "grid:2x2", ALL): ("passed", 2.0),
        ("sssp", "grid:2x2", ALL): ("failed: dist: 1 of 4 values differ", 1.5),
    }
    runner = FakeRunner(outcomes)
    rc, out = run_ablation(tmp_path, bench, runner, "--graphs", "grid:2x2,path:5")
    err = capsys.readouterr().err
    assert rc == 1  # the wrong sssp result; the timeout alone would not fail
    assert "FAILED: 1 of" in err and "sssp on grid:2x2 [all]: failed: dist" in err
    assert "1 runs timed out" in err and "bfs on path:5 [none]" in err
    md = (out / "RESULTS.md").read_text()
    assert md.count(ABLATION_BEGIN_MARKER) == 1 and BEGIN_MARKER not in md
    ms = _table(md, "| app | graph | none |")
    assert list(ms) == [
        ("bfs", "grid:2x2"),
        ("bfs", "path:5"),
        ("sssp", "grid:2x2"),
        ("sssp", "path:5"),
    ]
    col = {n: i for i, n in enumerate(names)}
    assert ms[("bfs", "path:5")][col[NONE]] == "timeout"
    assert ms[("bfs", "path:5")][col["outline"]] == "**1.000**"
    assert ms[("bfs", "grid:2x2")][col[NONE]] == "8.000"
    assert ms[("bfs", "grid:2x2")][col[ALL]] == "**2.000**"
    assert ms[("sssp", "grid:2x2")][col[ALL]] == "1.500 ✗"
    assert ms[("sssp", "grid:2x2")][col[NONE]] == "**4.000**"  # wrong is not best
    speedup = _table(md, "| app | graph | " + names[1])
    others = {n: i for i, n in enumerate(names[1:])}
    assert speedup[("bfs", "grid:2x2")][others[ALL]] == "4.00x"
    assert speedup[("bfs", "path:5")][others["outline"]] == ""  # no baseline
    assert speedup[("sssp", "grid:2x2")][others[ALL]] == ""  # wrong result
    assert "`none`: `lower-irgl{outline=false" in md
    assert "stopped after 300 s" in md

    doc = json.loads((out / "ablation.json").read_text())
    assert doc["meta"]["configurations"] == {
        c.name: c.pipeline for c in configurations()
    }
    assert doc["meta"]["planned"] == 2 * 2 * len(names) == len(doc["results"])
    first = doc["results"][0]
    assert (first["app"], first["graph"], first["config"]) == ("bfs", "grid:2x2", NONE)


def test_only_timeouts_exit_0(tmp_path: Path, bench: Path) -> None:
    runner = FakeRunner({("sssp", "grid:2x2", NONE): "error: timed out after 9 s"})
    rc, _ = run_ablation(tmp_path, bench, runner, "--graphs", "grid:2x2")
    assert rc == 0
    runner = FakeRunner({("sssp", "grid:2x2", NONE): "error: nvcc failed"})
    rc, out = run_ablation(tmp_path, bench, runner, "--graphs", "grid:2x2")
    assert rc == 1
    ms = _table((out / "RESULTS.md").read_text(), "| app | graph | none |")
    assert ms[("sssp", "grid:2x2")][0] == "error"


def test_ablation_and_plain_sections_share_results_md(
    tmp_path: Path, bench: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "RESULTS.md").write_text("# Mine\n\nhand-written\n")
    rc = bench_cli.main(
        [
            "all",
            "--benchmarks-dir",
            str(bench),
            "--out-dir",
            str(out),
            "--no-cache",
            "--no-chart",
            "--graphs",
            "grid:2x2",
        ],
        runner=lambda job: BenchRow(job.app, job.graph, "passed", median_ms=1.0),
    )
    assert rc == 0
    plain = (out / "RESULTS.md").read_text()
    rc, _ = run_ablation(tmp_path, bench, FakeRunner(), "--graphs", "grid:2x2")
    assert rc == 0
    rc, _ = run_ablation(tmp_path, bench, FakeRunner(), "--graphs", "grid:2x2")
    assert rc == 0
    text = (out / "RESULTS.md").read_text()
    assert text.startswith(plain.rstrip("\n"))  # the plain section is untouched
    assert text.count(ABLATION_BEGIN_MARKER) == 1
    assert text.count(ABLATION_END_MARKER) == 1
    assert text.count(END_MARKER) == 1 and "hand-written" in text
    assert (out / "results.json").is_file() and (out / "ablation.json").is_file()


def test_broken_ablation_markers_exit_2_before_running(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "RESULTS.md").write_text(f"{ABLATION_END_MARKER}\n{ABLATION_BEGIN_MARKER}\n")
    runner = FakeRunner()
    rc, _ = run_ablation(tmp_path, bench, runner, "--graphs", "grid:2x2")
    assert rc == 2 and runner.jobs == []
    assert "fix the markers" in capsys.readouterr().err


def test_merge_splits_a_table_over_runs(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graphs = ["--graphs", "grid:2x2"]
    first = FakeRunner({("bfs", "grid:2x2", NONE): ("passed", 5.0)})
    rc, out = run_ablation(tmp_path, bench, first, *graphs, "--apps", "bfs")
    assert rc == 0
    second = FakeRunner({("sssp", "grid:2x2", ALL): ("passed", 3.0)})
    args = [*graphs, "--apps", "sssp", "--merge", "--configs", "none,all"]
    rc, _ = run_ablation(tmp_path, bench, second, *args)
    assert rc == 0 and {j.app for j in second.jobs} == {"sssp"}
    md = (out / "RESULTS.md").read_text()
    ms = _table(md, "| app | graph | none |")
    names = [c.name for c in configurations()]
    assert list(ms) == [("bfs", "grid:2x2"), ("sssp", "grid:2x2")]
    assert ms[("bfs", "grid:2x2")][0] == "5.000"  # kept from the first run
    assert ms[("sssp", "grid:2x2")][names.index(ALL)] == "**3.000**"
    assert ms[("sssp", "grid:2x2")][names.index("outline")] == ""  # not run
    assert f"{len(names)} results merged from an earlier run" in md
    assert "In progress" not in md
    doc = json.loads((out / "ablation.json").read_text())
    assert len(doc["results"]) == len(names) + 2
    assert doc["meta"]["apps"] == ["bfs", "sssp"]
    assert list(doc["meta"]["configurations"]) == names

    # redoing a result replaces it; the exit code is this run's
    third = FakeRunner({("bfs", "grid:2x2", NONE): "failed: level differs"})
    rc, _ = run_ablation(
        tmp_path, bench, third, *graphs, "--apps", "bfs", "--configs", "none", "--merge"
    )
    assert rc == 1
    doc = json.loads((out / "ablation.json").read_text())
    bfs_none = [r for r in doc["results"] if (r["app"], r["config"]) == ("bfs", NONE)]
    assert [r["status"] for r in bfs_none] == ["failed: level differs"]
    assert len(doc["results"]) == len(names) + 2
    capsys.readouterr()

    # another base pipeline does not mix with the earlier columns: the rows
    # this run keeps (sssp's) would be of other programs (here: of an app
    # whose program cannot be emitted to compare)
    rc, _ = run_ablation(
        tmp_path,
        bench,
        FakeRunner(),
        *graphs,
        "--apps",
        "bfs",
        "--merge",
        "-p",
        "lower-irgl{block_size=64}",
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "cannot --merge: configuration '" in err
    assert "the programs of sssp differ between them: redo them (--apps sssp)" in err


def test_merge_keeps_rows_whose_program_a_changed_configuration_keeps(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An earlier run's configuration without an option added since (here
    `retry_drain_blocks`, which only drained programs depend on) keeps its
    rows where the app emits the same program under both pipelines; one that
    changes the program (`nested_parallelism`) refuses the merge."""
    cc = (REPO / "benchmarks" / "cc" / "cc.mlir").read_text()
    for name in ("bfs", "sssp"):
        (bench / name / f"{name}.mlir").write_text(cc)
    graphs = ["--graphs", "grid:2x2", "--configs", "none"]
    first = FakeRunner({("sssp", "grid:2x2", NONE): ("passed", 7.0)})
    rc, out = run_ablation(tmp_path, bench, first, *graphs)
    assert rc == 0
    doc_path = out / "ablation.json"
    doc = json.loads(doc_path.read_text())
    none = doc["meta"]["configurations"][NONE]
    assert " retry_drain_blocks=1" in none
    older = none.replace(" retry_drain_blocks=1", "")
    doc["meta"]["configurations"][NONE] = older
    doc_path.write_text(json.dumps(doc))
    rc, _ = run_ablation(
        tmp_path, bench, FakeRunner(), *graphs, "--apps", "bfs", "--merge"
    )
    assert rc == 0
    md = (out / "RESULTS.md").read_text()
    assert "emits the same CUDA program" in md
    assert _table(md, "| app | graph | none |")[("sssp", "grid:2x2")][0] == "**7.000**"
    doc = json.loads(doc_path.read_text())
    assert doc["meta"]["configurations"][NONE] == none

    doc["meta"]["configurations"][NONE] = none.replace(
        "nested_parallelism=false", "nested_parallelism=true"
    )
    doc_path.write_text(json.dumps(doc))
    rc, _ = run_ablation(
        tmp_path, bench, FakeRunner(), *graphs, "--apps", "bfs", "--merge"
    )
    assert rc == 2
    assert "redo them (--apps sssp)" in capsys.readouterr().err


def test_merge_fills_a_new_column_from_the_earlier_rows_of_the_same_program(
    tmp_path: Path, bench: Path
) -> None:
    """With --merge, a configuration whose program is that of one this run
    leaves out takes that configuration's earlier row: nothing runs."""
    sssp = (REPO / "benchmarks" / "sssp" / "sssp.mlir").read_text()
    (bench / "sssp" / "sssp.mlir").write_text(sssp)  # no Exclusive, no Retry
    graphs = ["--graphs", "grid:2x2", "--apps", "sssp"]
    first = FakeRunner(
        {
            ("sssp", "grid:2x2", NONE): ("passed", 7.0),
            ("sssp", "grid:2x2", "outline"): ("passed", 3.0),
        }
    )
    rc, out = run_ablation(tmp_path, bench, first, *graphs, "--configs", "none,outline")
    assert rc == 0
    second = FakeRunner()
    rc, _ = run_ablation(
        tmp_path,
        bench,
        second,
        *graphs,
        "--configs",
        "sized_priority,retry_drain",
        "--merge",
    )
    assert rc == 0 and second.jobs == []
    doc = json.loads((out / "ablation.json").read_text())
    by_config = {r["config"]: r for r in doc["results"]}
    assert by_config["sized_priority"]["same_as"] == NONE
    assert by_config["sized_priority"]["median_ms"] == 7.0
    assert by_config["retry_drain"]["same_as"] == "outline"
    assert by_config["retry_drain"]["median_ms"] == 3.0
    ms = _table((out / "RESULTS.md").read_text(), "| app | graph | none |")
    assert ms[("sssp", "grid:2x2")] == [
        "7.000",
        "**3.000**",
        "**3.000** (= outline)",
        "7.000 (= none)",
    ]


def test_merge_in_the_plain_table(tmp_path: Path, bench: Path) -> None:
    out = tmp_path / "o"
    argv = ["all", "--benchmarks-dir", str(bench), "--out-dir", str(out)]
    argv += ["--no-cache", "--no-chart", "--graphs", "grid:2x2"]

    def ok(job: BenchJob) -> BenchRow:
        return BenchRow(job.app, job.graph, "passed", median_ms=1.0)

    assert bench_cli.main([*argv, "--apps", "bfs"], runner=ok) == 0
    assert bench_cli.main([*argv, "--apps", "sssp", "--merge"], runner=ok) == 0
    doc = json.loads((out / "results.json").read_text())
    assert [r["app"] for r in doc["results"]] == ["bfs", "sssp"]
    assert doc["meta"]["planned"] == doc["meta"]["done"] == 2
    assert bench_cli.main([*argv, "--apps", "sssp"], runner=ok) == 0  # no --merge
    doc = json.loads((out / "results.json").read_text())
    assert [r["app"] for r in doc["results"]] == ["sssp"]


def test_merge_refuses_a_corrupt_results_file(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "ablation.json").write_text("{not json")
    runner = FakeRunner()
    rc, _ = run_ablation(tmp_path, bench, runner, "--graphs", "grid:2x2", "--merge")
    assert rc == 2 and runner.jobs == []
    assert "cannot --merge" in capsys.readouterr().err


def test_ablation_tables_in_progress_cells_are_empty() -> None:
    rows = [BenchRow("bfs", "g", "passed", median_ms=3.0, config=NONE)]
    text = ablation_tables(rows, [NONE, ALL])
    assert "| bfs | g | **3.000** |  |" in text
    assert "| bfs | g |  |" in text.split("Speedup")[1]
    assert "Speedup" not in ablation_tables(rows, [NONE])


def test_identical_configs_have_identical_programs() -> None:
    mlir = REPO / "benchmarks" / "bfs" / "bfs.mlir"
    configs = configurations()
    same = identical_configs(mlir, configs)
    pipelines = {c.name: c.pipeline for c in configs}
    for later, earlier in same.items():
        names = [c.name for c in configs]
        assert names.index(earlier) < names.index(later)
        a = emit_program(mlir, pipelines[earlier]).cuda
        assert a == emit_program(mlir, pipelines[later]).cuda
    assert NONE not in same and ALL not in same  # the extremes differ (BFS)
    assert identical_configs(REPO / "no-such.mlir", configs) == {}


def _real_bfs(tmp_path: Path) -> tuple[Path, Path]:
    """A benchmarks directory whose one app is the shipped BFS program;
    (the directory, the program)."""
    real = tmp_path / "real"
    (real / "bfs").mkdir(parents=True)
    bfs = REPO / "benchmarks" / "bfs" / "bfs.mlir"
    (real / "bfs" / "app.py").write_text(
        APP_PY.format(name="bfs").replace(
            'Path(__file__).with_name("bfs.mlir")', repr(str(bfs))
        )
    )
    return real, bfs


def test_identical_programs_are_not_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real, bfs = _real_bfs(tmp_path)
    same = identical_configs(bfs, configurations())
    assert same, "BFS has no configuration without effect to test with"
    times = {c.name: ("passed", 10.0 + k) for k, c in enumerate(configurations())}
    outcomes = {("bfs", "grid:2x2", c): t for c, t in times.items()}
    runner = FakeRunner(outcomes)  # type: ignore[arg-type]
    rc, out = run_ablation(tmp_path, real, runner, "--graphs", "grid:2x2")
    err = capsys.readouterr().err
    assert rc == 0, err
    ran = [j.config for j in runner.jobs]
    assert set(ran) == {c.name for c in configurations()} - set(same)
    names = [c.name for c in configurations()]
    ms = _table((out / "RESULTS.md").read_text(), "| app | graph | none |")
    for later, earlier in same.items():
        assert f"bfs [{later}] is the same program as [{earlier}]" in err
        cell = ms[("bfs", "grid:2x2")][names.index(later)]
        assert cell.endswith(f"(= {earlier})")
        assert f"{times[earlier][1]:.3f}" in cell
    doc = json.loads((out / "ablation.json").read_text())
    rows = {r["config"]: r for r in doc["results"]}
    assert len(rows) == len(names)
    for later, earlier in same.items():
        assert rows[later]["same_as"] == earlier
        assert rows[later]["median_ms"] == rows[earlier]["median_ms"]

    runner = FakeRunner()
    rc, _ = run_ablation(
        tmp_path, real, runner, "--graphs", "grid:2x2", "--rerun-identical"
    )
    assert rc == 0 and [j.config for j in runner.jobs] == names
    assert all(j.same_as is None for j in runner.jobs)


# ---------------------------------------------------------- irgl-bench build


def _compiles(log: Path) -> int:
    """How many times the fake nvcc compiled a program's source (not
    ``--version``, the runtime library or a link of a compiled object)."""
    source = re.compile(r"/irgl_[0-9a-f]+\.cu(\s|$)")
    return sum(bool(source.search(ln)) for ln in log.read_text().splitlines())


def _build(*argv: str) -> int:
    return bench_cli.main(["build", *argv])


def _summary(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_build_compiles_each_distinct_program_once(
    tmp_path: Path,
    fake_nvcc: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    nvcc, log = fake_nvcc
    cache = tmp_path / "programs"
    common = ["--apps", "bfs", "--program-cache", str(cache), "--nvcc", str(nvcc)]
    # for BFS retry_backoff changes nothing (no Retry): the same program as none
    configs = ["--ablation", "--configs", "none,retry_backoff,all"]
    assert _build(*common, *configs, "-j", "2") == 0
    captured = capsys.readouterr()
    summary = _summary(captured.out)
    assert summary["programs"] == 3 and summary["libraries"] == 2
    assert summary["compiled"] == 2 and summary["cached"] == 1
    assert summary["errors"] == 0 and summary["missing"] == 0
    assert _compiles(log) == 2
    assert "-arch=sm_90" in log.read_text().split()
    assert "all 3 programs in" in captured.err

    doc = json.loads((cache / MANIFEST_NAME).read_text())
    entries = {e["config"]: e for e in doc["programs"]}
    assert set(entries) == {NONE, "retry_backoff", ALL}
    assert entries[NONE]["library"] == entries["retry_backoff"]["library"]
    assert entries[NONE]["library"] != entries[ALL]["library"]
    pipelines = {c.name: c.pipeline for c in configurations()}
    for name, e in entries.items():
        assert e["app"] == "bfs" and e["pipeline"] == pipelines[name]
        lib = cache / e["library"]
        assert lib.is_file() and lib.with_suffix(".abi.json").is_file()
        # exactly where irgl-bench run's build() looks
        bfs = REPO / "benchmarks" / "bfs" / "bfs.mlir"
        assert library_path(emit_program(bfs, e["pipeline"]), cache=cache) == lib

    # again: nothing to compile; the manifest keeps one entry per program
    assert _build(*common, *configs) == 0
    assert _summary(capsys.readouterr().out)["cached"] == 3
    assert _compiles(log) == 2
    assert len(json.loads((cache / MANIFEST_NAME).read_text())["programs"]) == 3
    # the default pipeline adds its own entry
    assert _build(*common) == 0
    capsys.readouterr()
    doc = json.loads((cache / MANIFEST_NAME).read_text())
    assert [e["config"] for e in doc["programs"]].count(DEFAULT) == 1


def test_build_check_finds_a_moved_cache_and_reports_missing(
    tmp_path: Path,
    fake_nvcc: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nvcc, log = fake_nvcc
    cache = tmp_path / "programs"
    configs = ["--apps", "bfs", "--ablation", "--configs", "none,all"]
    assert _build(*configs, "--program-cache", str(cache), "--nvcc", str(nvcc)) == 0
    capsys.readouterr()
    # "another machine": the cache and the runtime headers elsewhere
    moved = tmp_path / "elsewhere" / "programs"
    shutil.copytree(cache, moved)
    runtime = tmp_path / "other-checkout" / "runtime"
    shutil.copytree(build_module.runtime_include_dir(), runtime)
    monkeypatch.setattr(build_module, "runtime_include_dir", lambda: runtime)
    monkeypatch.setenv("IRGL_CACHE_DIR", str(moved))
    calls = _compiles(log)
    assert _build(*configs, "--check", "--nvcc", str(tmp_path / "no-nvcc")) == 0
    summary = _summary(capsys.readouterr().out)
    assert summary["cached"] == 2 and summary["cache"] == str(moved)
    assert _compiles(log) == calls
    # a changed runtime header is a different library: missing, exit 1
    header = runtime / "irgl_runtime.cuh"
    header.write_text(header.read_text() + "\n// changed\n")
    assert _build(*configs, "--check") == 1
    captured = capsys.readouterr()
    assert _summary(captured.out)["missing"] == 2
    assert "FAILED: 2 of 2 programs are not in the cache" in captured.err
    assert "bfs [none]: not in the cache (lower-irgl{outline=false" in captured.err


def test_build_reports_nvcc_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "nvcc"
    bad.write_text("#!/bin/sh\necho 'x.cu(1): error: broken' >&2\nexit 2\n")
    bad.chmod(bad.stat().st_mode | stat.S_IEXEC)
    rc = _build(
        "--apps",
        "bfs",
        "--program-cache",
        str(tmp_path / "c"),
        "--nvcc",
        str(bad),
    )
    captured = capsys.readouterr()
    assert rc == 1
    assert _summary(captured.out)["errors"] == 1
    assert "bfs [default]: error: nvcc failed (exit 2)" in captured.err
    assert "x.cu(1): error: broken" in captured.err
    doc = json.loads((tmp_path / "c" / MANIFEST_NAME).read_text())
    assert doc["programs"] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--apps", "nope"], "unknown app"),
        (["--configs", "none"], "--configs applies only with --ablation"),
        (["--ablation", "-p", "lower-irgl", "-p", "lower-irgl{block_size=64}"], "one"),
        (["--ablation", "--configs", "nope"], "unknown configuration"),
        (["-j", "0"], "--jobs"),
    ],
)
def test_build_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert _build(*argv, "--program-cache", str(tmp_path / "c")) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


class DeviceFake(FakeRunner):
    """FakeRunner that takes a while per job and records each job's device
    and the most jobs running at once."""

    def __init__(self, outcomes: dict[tuple[str, str, str], object] | None = None):
        super().__init__(outcomes)
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def __call__(self, job: BenchJob) -> BenchRow:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        try:
            return super().__call__(job)
        finally:
            with self.lock:
                self.running -= 1


def test_devices_run_jobs_at_once_with_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--devices 0,1`: two jobs at once, each on one of the devices; the
    table and the JSON hold what a run one job at a time gives, the rows of
    identical programs included."""
    real, bfs = _real_bfs(tmp_path)
    times = {c.name: ("passed", 10.0 + k) for k, c in enumerate(configurations())}
    outcomes = {("bfs", "grid:2x2", c): t for c, t in times.items()}
    docs = []
    for run, extra in (("one", []), ("two", ["--devices", "0,1"])):
        runner = DeviceFake(outcomes)  # type: ignore[arg-type]
        rc, out = run_ablation(
            tmp_path / run, real, runner, "--graphs", "grid:2x2", *extra
        )
        assert rc == 0, capsys.readouterr().err
        doc = json.loads((out / "ablation.json").read_text())
        docs.append(
            [
                (r["config"], r["status"], r["median_ms"], r["same_as"])
                for r in doc["results"]
            ]
        )
        if extra:
            assert runner.most == 2
            assert {j.device for j in runner.jobs} == {"0", "1"}
            assert "(device 0)" in capsys.readouterr().err
        else:
            assert runner.most == 1 and {j.device for j in runner.jobs} == {None}
    assert docs[0] == docs[1]
    assert any(same for *_, same in docs[1])


@pytest.mark.parametrize(
    ("value", "message"),
    [("0,0", "a device is listed twice"), ("0,x", "expected device numbers")],
)
def test_devices_must_be_distinct_numbers(
    tmp_path: Path,
    bench: Path,
    capsys: pytest.CaptureFixture[str],
    value: str,
    message: str,
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_ablation(tmp_path, bench, FakeRunner(), "--devices", value)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
