"""``irgl-bench`` / ``irgl-opt`` rough edges (issue 27, items 6 and 7), no GPU
needed: ``--version``, dates in help texts, the ``// Build:`` line of
``inline-runtime=false`` output, located parse errors in ``irgl-bench run``,
``-p`` with ``--backend interp``, the graph cache's default place,
interpreter progress and ``irgl-bench all`` without a GPU."""

from __future__ import annotations

import argparse
import dataclasses
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import OWN_REGION_OPERAND, nvcc_path

from irgl_runner import bench_cli
from irgl_runner.backends import BACKENDS

REPO = Path(__file__).resolve().parents[2]
IRGL_OPT = [sys.executable, str(REPO / "tools" / "irgl-opt")]


APP_PY = """\
from pathlib import Path
from irgl_runner.apps import AppSpec
APP = AppSpec(name={name!r}, mlir=Path(__file__).with_name({mlir!r}),
              host_fn='main', outputs=[], args=lambda ctx: [],
              uses_source=False)
"""


def make_app(root: Path, name: str, program: str) -> Path:
    """A benchmarks directory `root` with one app `name` running `program`."""
    d = root / name
    d.mkdir(parents=True)
    (d / f"{name}.mlir").write_text(program)
    (d / "app.py").write_text(APP_PY.format(name=name, mlir=f"{name}.mlir"))
    return root


def run_cli(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = bench_cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def no_gpu_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``--backend cuda`` get past its GPU check (nothing here runs)."""
    monkeypatch.setitem(
        BACKENDS,
        "cuda",
        dataclasses.replace(BACKENDS["cuda"], unavailable=lambda: None),
    )


# ---------------------------------------------------------------- --version


def test_irgl_bench_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        bench_cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"irgl-bench {version('irgl-xdsl')} (IrGL on xDSL)"
    )


def test_irgl_opt_version() -> None:
    proc = subprocess.run(
        [*IRGL_OPT, "--version"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("irgl-opt ")


# ---------------------------------------------------------- dates in --help

#: An ISO date or a "before/after/since <year>" remark.
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b(before|after|since|until) (19|20)\d\d\b")


def _all_help(parser: argparse.ArgumentParser) -> list[str]:
    """The help text of `parser` and of every subcommand under it."""
    texts = [parser.format_help()]
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            for sub in action.choices.values():
                texts += _all_help(sub)
    return texts


def test_no_help_text_contains_a_date() -> None:
    bench_cli.load_plugins()
    texts = _all_help(bench_cli._parser())  # pyright: ignore[reportPrivateUsage]
    assert len(texts) >= 4  # irgl-bench, run, gen, all, build
    assert any("--reinit-all" in t for t in texts)
    for text in texts:
        assert DATE.search(text) is None, DATE.search(text)
    opt = subprocess.run(
        [*IRGL_OPT, "--help"], capture_output=True, text=True, timeout=120
    )
    assert opt.returncode == 0 and DATE.search(opt.stdout) is None


# ------------------------------------------------- the // Build: line's -I


def _build_line(cuda: str) -> str:
    line = cuda.splitlines()[1]
    assert line.startswith("// Build: nvcc ")
    return line.removeprefix("// Build: ")


@pytest.mark.parametrize("inline", [True, False])
def test_build_line_names_the_runtime_folder(tmp_path: Path, inline: bool) -> None:
    target = "cuda" if inline else "cuda{inline_runtime=false}"
    proc = subprocess.run(
        [*IRGL_OPT, "--lower-irgl", "-t", target, str(REPO / "examples" / "bfs.mlir")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    source = tmp_path / "bfs.cu"
    source.write_text(proc.stdout)
    line = _build_line(proc.stdout).replace("<this file>", shlex.quote(str(source)))
    words = shlex.split(line)
    if inline:
        assert "-I" not in words  # self-contained
        return
    folder = Path(words[words.index("-I") + 1])
    assert (folder / "irgl_runtime.cuh").is_file()
    nvcc = nvcc_path()
    if nvcc is None:
        return
    # the Build line as written (only nvcc's location and -o added)
    build = subprocess.run(
        [str(nvcc), *words[1:], "-o", str(tmp_path / "bfs.o")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr


# ---------------------------------------- irgl-bench run: located parse errors


def test_run_gives_located_diagnostic_for_own_region_operand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = make_app(tmp_path / "apps", "own", OWN_REGION_OPERAND)
    no_gpu_needed(monkeypatch)
    code, out, err = run_cli(
        ["run", "own", "--graph", "grid:2x2", "--no-cache"]
        + ["--benchmarks-dir", str(bench)],
        capsys,
    )
    assert code == 1 and out == "" and "Traceback" not in err
    assert "internal compiler error" not in err
    assert err.startswith(f"irgl-bench: error: {bench / 'own' / 'own.mlir'}:8:35")
    assert "uses %n, which is defined only inside the op's own region" in err


# ------------------------------------------------- the graph cache's place


def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``--backend cuda`` find no GPU (the fake "no GPU" condition)."""
    monkeypatch.setitem(
        BACKENDS,
        "cuda",
        dataclasses.replace(BACKENDS["cuda"], unavailable=lambda: "no GPU here (test)"),
    )


def test_default_graph_cache_is_beside_the_benchmarks_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from irgl_runner import graph_args

    monkeypatch.delenv("IRGL_GRAPH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    bench = tmp_path / "bench"
    bench.mkdir()
    assert graph_args.default_cache_dir(bench) == bench / ".cache"
    # the checkout's benchmarks/ only without --benchmarks-dir
    checkout = graph_args.default_cache_dir()
    assert checkout == REPO / "benchmarks" / ".cache"
    # a folder it cannot write to (an installed package's): the user's cache
    monkeypatch.setattr(graph_args.os, "access", lambda *a, **k: False)
    assert graph_args.default_cache_dir(bench) == tmp_path / "xdg" / "irgl" / "graphs"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert graph_args.default_cache_dir() == Path.home() / ".cache/irgl/graphs"
    # the environment variable wins
    monkeypatch.setenv("IRGL_GRAPH_CACHE", str(tmp_path / "env"))
    assert graph_args.default_cache_dir(bench) == tmp_path / "env"


@pytest.mark.parametrize("how", ["default", "--cache-dir", "env"])
def test_run_caches_graphs_beside_its_benchmarks_dir(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    monkeypatch.delenv("IRGL_GRAPH_CACHE", raising=False)
    bench = make_app(tmp_path / "apps", "own", OWN_REGION_OPERAND)
    no_gpu(monkeypatch)  # the graph is resolved (and cached) before this check
    spec = "grid:3x11"
    extra: list[str] = []
    where = bench / ".cache"
    if how == "--cache-dir":
        where = tmp_path / "mine"
        extra = ["--cache-dir", str(where)]
    elif how == "env":
        where = tmp_path / "env"
        monkeypatch.setenv("IRGL_GRAPH_CACHE", str(where))
    code, _, err = run_cli(
        ["run", "own", "--graph", spec, "--benchmarks-dir", str(bench), *extra],
        capsys,
    )
    assert code == 1 and "no GPU here (test)" in err
    assert (where / "grid_3x11.gr").is_file()
    assert not (REPO / "benchmarks" / ".cache" / "grid_3x11.gr").exists()
    if how != "default":
        assert not (bench / ".cache").exists()


# ------------------------------------------------- -p with --backend interp


@pytest.mark.parametrize("flag", [["-p", "bogus-pass"], ["--pipeline=lower-irgl"]])
def test_interp_backend_refuses_a_pipeline(
    capsys: pytest.CaptureFixture[str], flag: list[str]
) -> None:
    code, out, err = run_cli(
        ["run", "bfs", "--graph", "grid:2x2", "--no-cache", "--backend", "interp"]
        + flag,
        capsys,
    )
    assert code == 2 and out == ""
    assert err.strip() == (
        "irgl-bench: error: -p/--pipeline applies only to --backend cuda: the "
        "interp backend runs the IrGL program as written, without passes"
    )


def test_interp_backend_runs_without_a_pipeline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        ["run", "bfs", "--graph", "grid:2x2", "--no-cache", "--backend", "interp"],
        capsys,
    )
    assert code == 0 and '"check": "passed"' in out


def test_all_with_interp_passes_no_pipeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from irgl_runner.bench_all import BenchJob
    from irgl_runner.report import BenchRow

    jobs: list[BenchJob] = []

    def runner(job: BenchJob) -> BenchRow:
        jobs.append(job)
        return BenchRow(job.app, job.graph, "passed", median_ms=1.0, times_ms=[1.0])

    common = ["all", "--apps", "bfs", "--graphs", "grid:2x2", "--no-cache"]
    common += ["--out-dir", str(tmp_path), "--no-chart", "--backend", "interp"]
    assert bench_cli.main([*common, "-p", "lower-irgl"], runner=runner) == 2
    assert "-p/--pipeline applies only to --backend cuda" in capsys.readouterr().err
    assert jobs == []
    assert bench_cli.main(common, runner=runner) == 0
    assert [j.extra_args for j in jobs] == [["--backend", "interp"]]


# ------------------------------ irgl-bench all: no GPU, no overwritten reports

OLD_MD = "# Results\n\nthe H100 table\n"
OLD_JSON = '{"meta": {}, "results": []}\n'


@pytest.fixture
def tracked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the checkout's benchmarks/ (the default --out-dir),
    with reports from an earlier run and two apps."""
    from test_bench_all import make_benchmarks

    from irgl_runner import bench_all

    bench = make_benchmarks(tmp_path / "benchmarks", {"bfs": {}, "pr": {}})
    (bench / "RESULTS.md").write_text(OLD_MD)
    (bench / "results.json").write_text(OLD_JSON)
    (bench / "ablation.json").write_text(OLD_JSON)
    monkeypatch.setattr(bench_all, "default_benchmarks_dir", lambda: bench)
    return bench


def all_argv(bench: Path, *extra: str) -> list[str]:
    return ["all", "--benchmarks-dir", str(bench), "--no-cache", "--no-chart", *extra]


def test_all_without_gpu_fails_before_anything(
    tracked: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from irgl_runner import bench_all

    def no_runner() -> object:
        raise AssertionError("a run was started without a GPU")

    no_gpu(monkeypatch)
    monkeypatch.setattr(bench_all, "SubprocessRunner", no_runner)
    before = sorted(p.name for p in tracked.iterdir())
    code = bench_cli.main(all_argv(tracked, "--quick"))
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.strip() == (
        "irgl-bench all: error: cannot run with --backend cuda: no GPU here "
        "(test); nothing was run and no report was written"
    )
    assert sorted(p.name for p in tracked.iterdir()) == before
    assert (tracked / "RESULTS.md").read_text() == OLD_MD
    assert (tracked / "results.json").read_text() == OLD_JSON


@pytest.mark.parametrize("ablation", [False, True])
def test_all_with_errors_leaves_the_tracked_reports(
    tracked: Path, capsys: pytest.CaptureFixture[str], ablation: bool
) -> None:
    from test_bench_all import FakeRunner

    runner = FakeRunner({("pr", "grid:2x2"): "error: nvcc failed (exit 1)"})
    extra = ["--graphs", "grid:2x2", *(["--ablation"] if ablation else [])]
    code = bench_cli.main(all_argv(tracked, *extra), runner=runner)
    err = capsys.readouterr().err
    assert code == 1 and runner.jobs
    json_name = "ablation.json" if ablation else "results.json"
    assert (tracked / "RESULTS.md").read_text() == OLD_MD
    assert (tracked / json_name).read_text() == OLD_JSON
    assert "were not changed" in err and "RESULTS.partial.md" in err
    partial = (tracked / "RESULTS.partial.md").read_text()
    assert "have no result" in partial and "error" in partial
    stem = json_name.removesuffix(".json")
    assert "nvcc failed" in (tracked / f"{stem}.partial.json").read_text()


def test_all_replaces_the_tracked_reports_when_every_run_has_a_result(
    tracked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_bench_all import FakeRunner

    from irgl_runner.bench_all import BenchJob
    from irgl_runner.report import BenchRow

    seen: list[tuple[str, bool]] = []

    class Peek(FakeRunner):
        def __call__(self, job: BenchJob) -> BenchRow:
            md = (tracked / "RESULTS.md").read_text()
            seen.append((md, (tracked / "RESULTS.partial.md").exists()))
            return super().__call__(job)

    # a wrong output is a result: the table shows it
    runner = Peek({("bfs", "grid:2x2"): "failed: level: 1 of 4 values differ"})
    code = bench_cli.main(all_argv(tracked, "--graphs", "grid:2x2"), runner=runner)
    assert code == 1
    assert [md for md, _ in seen] == [OLD_MD, OLD_MD]  # untouched while running
    assert seen[1][1]  # the first row went to the partial file
    md = (tracked / "RESULTS.md").read_text()
    assert md.startswith(OLD_MD) and "values differ" in md
    assert '"results": []' not in (tracked / "results.json").read_text()
    assert not (tracked / "RESULTS.partial.md").exists()
    assert not (tracked / "results.partial.json").exists()
    capsys.readouterr()


# ------------------------------------------------ interpreter progress lines


def test_run_progress_lines_with_a_fake_clock() -> None:
    import io

    from irgl_interpreter.apps import RunProgress
    from irgl_interpreter.state import Stats

    now = [100.0]
    out = io.StringIO()
    progress = RunProgress(out, total=2, interval_s=5.0, clock=lambda: now[0])
    progress.begin()
    progress.update(Stats(10, 1))  # too early: nothing
    now[0] += 6.0
    progress.update(Stats(1234567, 42))
    now[0] += 1.0
    progress.update(Stats(1234600, 43))  # within 5 s of the last line
    now[0] += 0.5
    progress.end(Stats(2000000, 50))
    progress.begin()  # a short run: silent
    now[0] += 1.0
    progress.update(Stats(5, 1))
    progress.end(Stats(5, 1))
    assert out.getvalue().splitlines() == [
        "interp: run 1/2, 6.0 s, 1,234,567 edge visits, 42 kernel invocations",
        "interp: run 1/2 done, 7.5 s, 2,000,000 edge visits, 50 kernel invocations",
    ]


@pytest.mark.parametrize("flag", ["--progress", "--no-progress", None])
def test_interp_progress_on_stderr(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flag: str | None,
) -> None:
    from irgl_interpreter import apps as interp_apps

    monkeypatch.setattr(interp_apps, "PROGRESS_INTERVAL_S", 0.0)
    argv = ["run", "bfs", "--graph", "grid:3x3", "--no-cache", "--backend", "interp"]
    argv += ["--reps", "2", *([flag] if flag else [])]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and '"check": "passed"' in out
    lines = err.splitlines()
    if flag != "--progress":  # stderr is not a terminal here: off by default
        assert lines == []
        return
    assert lines and all(line.startswith("interp: run ") for line in lines)
    assert any(line.startswith("interp: run 1/2, ") for line in lines)
    assert lines[-1].startswith("interp: run 2/2 done, ")
    assert "edge visits" in lines[-1] and "kernel invocations" in lines[-1]


def test_progress_applies_only_to_interp(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        ["run", "bfs", "--graph", "grid:2x2", "--no-cache", "--progress"], capsys
    )
    assert code == 2
    assert "--progress applies only to --backend interp" in err


def test_python_m_opt_main_runs_irgl_opt(tmp_path: Path) -> None:
    """`python -m irgl_tools.opt_main` is irgl-opt (it did nothing, exit 0)."""
    bad = tmp_path / "bad.mlir"
    bad.write_text("irgl.kernel @k(\n")
    done = subprocess.run(
        [sys.executable, "-m", "irgl_tools.opt_main", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode != 0
    assert "bad.mlir:" in done.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "irgl_tools.opt_main", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert ok.returncode == 0 and "irgl-opt" in ok.stdout
