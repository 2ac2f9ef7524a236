"""``irgl-bench all --robust`` without a GPU: source selection, reached work,
the spread's verdict, the report, the harness with fake runners, the worker
on the CPU interpreter, and BFS/SSSP on small members of every graph family
from the hub, a leaf and an isolated node (the right result, and edge visits
in proportion to the edges reached)."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from irgl_interpreter.apps import interp_program
from irgl_runner import bench_cli, robust
from irgl_runner.apps import AppSpec, execute, load_app
from irgl_runner.backends import BACKENDS
from irgl_runner.generators import generate
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import INF
from irgl_runner.robust import (
    MAX_SOURCE_REPS,
    ROBUST_BEGIN_MARKER,
    ROBUST_END_MARKER,
    ROBUST_GRAPHS,
    RobustCell,
    RobustJob,
    SourceRun,
    SubprocessRobustRunner,
    explain_spread,
    pick_sources,
    reached_work,
    render_robust_section,
    run_sources,
)

# ------------------------------------------------------------------ sources


def test_pick_sources_roles_and_determinism() -> None:
    graph = generate("random:200:150")
    degrees = graph.degrees()
    sources = pick_sources(graph, 16, seed=3)
    assert len(sources) == 16 and len({n for n, _ in sources}) == 16
    roles = dict((r, n) for n, r in sources)
    assert roles["hub"] == int(np.argmax(degrees))
    assert degrees[roles["leaf"]] == 1 and degrees[roles["isolated"]] == 0
    assert [r for _, r in sources][3:] == ["random"] * 13
    assert pick_sources(graph, 16, seed=3) == sources
    assert pick_sources(graph, 16, seed=4) != sources
    assert pick_sources(generate("random:200:150@2"), 16, seed=3) != sources


def test_pick_sources_small_and_regular_graphs() -> None:
    assert sorted(n for n, _ in pick_sources(generate("path:5"), 16)) == list(range(5))
    grid = pick_sources(generate("grid:8x8"), 16)
    assert {r for _, r in grid} == {"hub", "random"}  # no leaf, nothing isolated
    assert pick_sources(generate("isolated:50:0:1"), 3) == [
        (0, "hub"),
        *pick_sources(generate("isolated:50:0:1"), 3)[1:],
    ]


def test_robust_graphs_cover_the_families() -> None:
    kinds = [g.split(":")[0] for g in ROBUST_GRAPHS]
    for kind in ("rmat", "grid", "path", "star", "hub", "random", "isolated"):
        assert kind in kinds
    assert "islands" in kinds
    seeds = {g.partition("@")[2] for g in ROBUST_GRAPHS if g.startswith("rmat")}
    assert len(seeds) >= 3  # several seeds


def test_reached_work() -> None:
    graph = generate("islands:20:5")
    node = 0
    from irgl_runner.reference import bfs_levels

    levels = bfs_levels(graph, node)
    nodes, edges, count, depth = reached_work(graph, levels, node)
    reached = levels != INF
    assert nodes == int(reached.sum()) == 5
    assert edges == int(graph.degrees()[reached].sum())
    assert count == int(levels[reached].max()) + 1 == depth + 1
    assert reached_work(graph, levels, node, levels) == (nodes, edges, count, depth)
    # a weighted search's depth is its farthest distance, not a hop count
    distances = np.where(reached, levels * 7, INF)
    assert reached_work(graph, distances, node)[2:] == (count, 7 * depth)


# ------------------------------------------------------------------- spread


def _cell(*runs: tuple[str, float, int, int]) -> RobustCell:
    """A BFS cell from (role, ms, reached edges, levels) per source."""
    sources = [
        SourceRun(k, role, 1, "passed", [ms], ms, 1, edges, levels)
        for k, (role, ms, edges, levels) in enumerate(runs)
    ]
    return RobustCell(
        "bfs",
        "g",
        "passed",
        10,
        20,
        [s.median_ms or 0.0 for s in sources],
        sources,
        "Fake GPU 9000",
        "2030-01-02T03:04:05+00:00",
    )


def test_spread_explained_by_reached_edges() -> None:
    spread = explain_spread(
        _cell(("isolated", 0.05, 0, 1), ("hub", 3.1, 100000, 9), ("r", 3.0, 100000, 9))
    )
    assert spread is not None and spread.flagged and spread.explained
    assert "time max/min 62×" in spread.reason
    assert "reached edges max/min 100000/0" in spread.reason
    assert "explained by the work" in spread.reason


def test_sssp_spread_explained_by_depth() -> None:
    """SSSP's rounds follow its farthest distance: a source twice as deep
    (same edges, same hops) is explained, one as deep is not."""

    def sssp(*runs: tuple[str, float, int]) -> RobustCell:
        cell = _cell(*((role, ms, 500, 6) for role, ms, _ in runs))
        cell.app = "sssp"
        for run, (_, _, depth) in zip(cell.sources or [], runs, strict=True):
            run.depth = depth
        return cell

    deeper = explain_spread(sssp(("hub", 2.0, 300), ("random", 4.0, 700)))
    assert deeper is not None and deeper.flagged and deeper.explained
    same = explain_spread(sssp(("hub", 2.0, 300), ("random", 4.0, 310)))
    assert same is not None and same.unexplained == [1]
    assert "depth 310 vs 300" in same.reason


def test_bfs_spread_explained_by_replayed_reads() -> None:
    """Same reached edges and levels: a source that read 3x the top-down edges
    or the bottom-up reads (replayed) is explained; one that read as much of
    both is not; a run without a replay (None) is judged by reached edges and
    levels alone."""
    cell = _cell(("random", 0.15, 500, 6), ("random", 0.36, 500, 6))
    assert explain_spread(cell).unexplained == [1]  # type: ignore[union-attr]
    (fast, slow) = cell.sources or []
    fast.replayed = {"top-down edges": 2_500, "bottom-up reads": 40_000}
    slow.replayed = {"top-down edges": 32_000, "bottom-up reads": 40_000}
    assert explain_spread(cell).explained  # type: ignore[union-attr]
    slow.replayed = {"top-down edges": 2_600, "bottom-up reads": 150_000}
    assert explain_spread(cell).explained  # type: ignore[union-attr]
    slow.replayed = {"top-down edges": 2_600, "bottom-up reads": 41_000}
    same = explain_spread(cell)
    assert same is not None and same.unexplained == [1]
    assert "top-down edges 2,600 vs 2,500, bottom-up reads 41,000 vs 40,000" in (
        same.reason
    )


class _Quick:
    """A program whose every timed call reports 0.04 ms (it still runs)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def time_call(self, host_fn: str, *args: object) -> float:
        self.inner.call(host_fn, *args)  # type: ignore[attr-defined]
        return 0.04


def _bfs_on_rmat5(sources: int) -> tuple[AppSpec, CSRGraph, list[tuple[int, str]]]:
    """bfs, an unweighted rmat:5@1 and `sources` sources of it."""
    app = load_app("bfs")
    graph = generate("rmat:5@1")
    graph.weights = None
    return app, graph, pick_sources(graph, sources)


def test_short_sources_get_more_runs() -> None:
    """With short_total_ms a source's runs go on until they add up to it, at
    most MAX_SOURCE_REPS; without, exactly reps."""
    app, graph, sources = _bfs_on_rmat5(1)
    program = _Quick(interp_program(app, "sequential"))
    plain = run_sources(app, program, graph, sources, 3, 0)  # type: ignore[arg-type]
    assert [len(r.times_ms) for r in plain] == [3]
    longer = run_sources(app, program, graph, sources, 3, 0, short_total_ms=5.0)  # type: ignore[arg-type]
    assert [len(r.times_ms) for r in longer] == [MAX_SOURCE_REPS]
    assert longer[0].status == "passed"
    text = render_robust_section(
        [], {"reps": 3, "short_runs_total_ms": 5.0, "max_source_reps": 31}
    )
    assert "at least 3 timed runs, more for a short one (until they add up to 5 ms" in (
        text
    )


class _Counting(_Quick):
    """A `_Quick` program that records the source of each of its calls (the
    host function's last argument)."""

    def __init__(self, inner: object) -> None:
        super().__init__(inner)
        self.sources: list[int] = []

    def time_call(self, host_fn: str, *args: object) -> float:
        self.sources.append(int(args[-1]))  # type: ignore[call-overload]
        return super().time_call(host_fn, *args)


def test_sources_are_measured_in_turns() -> None:
    """The sources take turns: one timed run of each a turn, each right after
    `warmup` untimed runs of the same source, so that a slow spell of the
    machine falls on every source alike; recorded per source (`warmups`,
    `in_turns`) and named by the section; robust.json from before says
    what it measured."""
    app, graph, sources = _bfs_on_rmat5(3)
    program = _Counting(interp_program(app, "sequential"))
    runs = run_sources(app, program, graph, sources, 2, 1)  # type: ignore[arg-type]
    nodes = [node for node, _ in sources]
    one_turn = [n for n in nodes for _ in range(2)]  # warm-up, then timed
    assert program.sources == one_turn * 2
    assert [len(r.times_ms) for r in runs] == [2] * len(sources)
    assert [(r.warmups, r.in_turns) for r in runs] == [(1, True)] * len(sources)
    assert all(r.status == "passed" for r in runs)
    cell = RobustCell("bfs", "rmat:5@1", "passed", sources=runs)
    assert "measured in turns, one timed run of each a turn" in (
        render_robust_section([cell])
    )
    again = RobustCell.from_json(json.loads(json.dumps(cell.to_json())))
    assert [r.in_turns for r in again.sources or ()] == [True] * len(sources)
    blocks = RobustCell.from_json(
        {
            **cell.to_json(),
            "sources": [{**dataclasses.asdict(r), "in_turns": False} for r in runs],
        }
    )
    assert "(one warm-up before each source)" in render_robust_section([blocks])
    old = RobustCell.from_json(
        {
            **cell.to_json(),
            "sources": [
                {**dataclasses.asdict(r), "warmups": None, "in_turns": False}
                for r in runs
            ],
        }
    )
    assert "(one warm-up per graph)" in render_robust_section([old])
    mixed = render_robust_section([cell, old])
    assert "where robust.json says `in_turns`; else one warm-up per graph" in mixed
    cold = run_sources(app, program, graph, sources, 1, 0)  # type: ignore[arg-type]
    unwarmed = RobustCell("bfs", "rmat:5@1", "passed", sources=cold)
    assert "measured in turns, one timed run of each a turn, no warm-up runs" in (
        render_robust_section([unwarmed])
    )


def test_short_sources_keep_taking_turns() -> None:
    """A short source keeps taking turns after the others have their runs,
    until its runs add up to short_total_ms."""
    app, graph, sources = _bfs_on_rmat5(2)
    program = _Counting(interp_program(app, "sequential"))
    runs = run_sources(app, program, graph, sources, 2, 0, short_total_ms=0.2)  # type: ignore[arg-type]
    assert [len(r.times_ms) for r in runs] == [5, 5]  # 5 x 0.04 ms
    assert program.sources == [node for node, _ in sources] * 5


def test_bfs_replay_matches_the_interpreter() -> None:
    """bfs's `source_work` (replayed in numpy) counts exactly the edge reads
    of the `bfs` and `bfs_bottom_up` kernels in the interpreter on the
    direction-optimizing path (RMAT, a star, a hub); on the two-hop path (a
    grid) its top-down edges are the reached edges."""
    app = load_app("bfs")
    assert app.source_work is not None
    for family in ("rmat:11@2", "rmat:12@1", "star:300", "hub:2000:4"):
        graph = generate(family)
        graph.weights = None
        for node, role in pick_sources(graph, 5):
            program = interp_program(app, "sequential")
            execute(app, program, graph, node, reps=1, warmup=0)
            reads = program.stats.edge_visits_by_kernel
            expected = {
                "top-down edges": reads.get("bfs", 0),
                "bottom-up reads": reads.get("bfs_bottom_up", 0),
            }
            assert app.source_work(graph, node) == expected, (family, role, node)
    grid = generate("grid:6x7")
    assert app.source_work(grid, 0)["top-down edges"] == grid.row_start[-1]


def test_spread_explained_by_levels_and_unexplained() -> None:
    deeper = explain_spread(_cell(("random", 1.0, 500, 10), ("random", 1.9, 500, 19)))
    assert deeper is not None and deeper.explained
    odd = explain_spread(_cell(("random", 1.0, 500, 10), ("hub", 1.5, 520, 10)))
    assert odd is not None and odd.flagged and not odd.explained
    assert odd.unexplained == [1] and "**unexplained**" in odd.reason
    assert (
        "e.g. hub 1 1.5× random 0 with 1.04× its work (520 vs 500 edges" in odd.reason
    )
    # slow against a source of the same work, not only against the fastest
    hub = explain_spread(
        _cell(("isolated", 0.05, 0, 1), ("random", 1.0, 500, 10), ("hub", 2, 500, 9))
    )
    assert hub is not None and hub.unexplained == [2]
    assert "hub 2 2× random 1" in hub.reason
    calm = explain_spread(_cell(("random", 1.0, 500, 10), ("hub", 1.1, 500, 10)))
    assert calm is not None and not calm.flagged and calm.reason == ""
    noise = explain_spread(_cell(("isolated", 0.010, 0, 1), ("random", 0.025, 0, 1)))
    assert noise is not None and noise.flagged and noise.explained  # within 20 µs
    assert explain_spread(RobustCell("cc", "g", "passed", times_ms=[1.0, 2.0])) is None


def test_spread_in_proportion_to_the_work() -> None:
    """A slower source is explained by its work in proportion: 1.3× slower
    with 1.25× the reached edges is explained (under the limit times the
    work), 10× slower with 1.3× the edges is not, and the worst pair is the
    one furthest above what its work accounts for."""
    near = explain_spread(_cell(("random", 1.0, 400, 10), ("random", 1.3, 500, 10)))
    assert near is not None and near.flagged and near.explained
    far = explain_spread(_cell(("random", 1.0, 400, 10), ("random", 10.0, 520, 10)))
    assert far is not None and far.unexplained == [1]
    assert "with 1.30× its work" in far.reason
    both = explain_spread(
        _cell(("random", 1.0, 400, 10), ("random", 2.0, 400, 10), ("hub", 4.0, 800, 10))
    )
    # 2 against 1 for the same work (1.67× over the limit); 4 against 2 for
    # twice the edges is within it, 4 against 1 for twice the edges is not
    assert both is not None and both.unexplained == [1, 2]
    assert "random 1 2× random 0 with 1.00× its work" in both.reason


def test_cell_json_round_trip_and_section() -> None:
    cell = _cell(("isolated", 0.05, 0, 1), ("hub", 3.1, 100000, 9))
    d = json.loads(json.dumps(cell.to_json()))
    assert d["min_ms"] == 0.05 and d["max_ms"] == 3.1 and d["spread"]["explained"]
    assert RobustCell.from_json(d) == cell
    other = RobustCell("cc", "g", "passed", 10, 20, [1.0, 1.5, 2.0], None, "Fake")
    wrong = RobustCell("sssp", "g", "failed: 1 of 2 sources wrong", 10, 20)
    late = RobustCell("color", "g", "error: timed out after 60 s")
    meta = {"generated": "2030-01-02T03:04:05+00:00", "command": "irgl-bench all"}
    md = render_robust_section([cell, other, wrong, late], meta)
    assert md.splitlines()[0].endswith("— Fake, Fake GPU 9000, 2030-01-02")
    assert "2 sources (hub, isolated, 0 random)" in md and "3 runs" in md
    assert "| 1.000 | 1.500 | 2.000 | 2.00 | yes |" in md
    assert "**1 of 4 cells are wrong or missing:** sssp on g." in md
    assert "ran past the time limit: color on g" in md and "| timeout |" in md


# ----------------------------------------------------------------- harness

APP_PY = """
from pathlib import Path
from irgl_runner.apps import AppSpec, ArraySpec

APP = AppSpec(
    name={name!r},
    mlir=Path(__file__).with_name("{name}.mlir"),
    host_fn="main",
    outputs=[ArraySpec("x", "int32")],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["x"]],
    uses_source={uses_source!r},
    params={params!r},
)
"""


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    root = tmp_path / "benchmarks"
    for name, uses_source, params in (
        ("bfs", True, {}),
        ("cc", False, {}),
        ("dmr", False, {"bench_graphs": ["random:30:0"]}),
    ):
        (root / name).mkdir(parents=True)
        (root / name / "app.py").write_text(
            APP_PY.format(name=name, uses_source=uses_source, params=params)
        )
    return root


class FakeRobustRunner:
    """Canned cells: ``outcomes[(app, graph)]`` is a status (default passed)."""

    def __init__(self, outcomes: dict[tuple[str, str], str] | None = None) -> None:
        self.outcomes = outcomes or {}
        self.jobs: list[RobustJob] = []

    def __call__(self, job: RobustJob, on_cell: Callable[[RobustCell], None]) -> None:
        self.jobs.append(job)
        for g in job.graphs:
            status = self.outcomes.get((job.app, g), "passed")
            if status == "skip":
                continue  # the harness fills in "no result"
            cell = _cell(("isolated", 0.05, 0, 1), ("hub", 3.1, 100000, 9))
            cell.app, cell.graph, cell.status = job.app, g, status
            cell.nodes = cell.edges = None  # the harness knows them
            if job.app != "bfs":
                cell.sources = None
            on_cell(cell)


def _main(argv: list[str], runner: object) -> int:
    return bench_cli.main(argv, robust_runner=runner)  # type: ignore[arg-type]


def test_robust_writes_json_and_section(tmp_path: Path, bench: Path) -> None:
    out = tmp_path / "out"
    runner = FakeRobustRunner()
    args = ["all", "--robust", "--benchmarks-dir", str(bench), "--out-dir", str(out)]
    args += ["--cache-dir", str(tmp_path / "cache"), "--graphs", "path:9,star:7"]
    assert _main([*args, "--sources", "5", "--source-seed", "9"], runner) == 0
    assert [(j.app, j.graphs) for j in runner.jobs] == [
        ("bfs", ["path:9", "star:7"]),
        ("cc", ["path:9", "star:7"]),
        ("dmr", ["random:30:0"]),  # its own input, not a family
    ]
    job = runner.jobs[0]
    assert (job.sources, job.source_seed, job.reps) == (5, 9, 3)
    doc = json.loads((out / "robust.json").read_text())
    assert doc["meta"]["sources"] == 5 and doc["meta"]["gpu"] == "Fake GPU 9000"
    assert [(c["app"], c["graph"], c["nodes"]) for c in doc["cells"]][:2] == [
        ("bfs", "path:9", 9),
        ("bfs", "star:7", 7),
    ]
    assert doc["cells"][0]["sources"][1]["reached_edges"] == 100000
    md = (out / "RESULTS.md").read_text()
    assert md.count(ROBUST_BEGIN_MARKER) == md.count(ROBUST_END_MARKER) == 1
    assert "Fake GPU 9000, 20" in md and "explained by the work" in md


def _guarded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The default report directory, moved to a temporary one with a
    hand-written RESULTS.md."""
    home = tmp_path / "reports"
    home.mkdir()
    (home / "RESULTS.md").write_text("# hand-written\n")
    monkeypatch.setattr(robust, "default_benchmarks_dir", lambda: home)
    return home


def test_reports_replaced_only_when_every_cell_has_a_result(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bench: Path
) -> None:
    home = _guarded(monkeypatch, tmp_path)
    args = ["all", "--robust", "--benchmarks-dir", str(bench), "--graphs", "path:9"]
    args += ["--cache-dir", str(tmp_path / "cache"), "--apps", "bfs,cc"]
    missing = FakeRobustRunner({("cc", "path:9"): "skip"})
    assert _main(args, missing) == 1
    assert (home / "RESULTS.md").read_text() == "# hand-written\n"
    assert not (home / "robust.json").exists()
    partial = (home / "RESULTS.partial.md").read_text()
    assert "cc on path:9" in partial and "**error**: no result" in partial
    assert _main(args, FakeRobustRunner({("cc", "path:9"): "error: timed out"})) == 0
    assert "# hand-written" in (home / "RESULTS.md").read_text()
    assert (home / "robust.json").exists()
    assert not (home / "RESULTS.partial.md").exists()


def test_no_gpu_fails_before_touching_anything(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = _guarded(monkeypatch, tmp_path)
    monkeypatch.setitem(
        BACKENDS,
        "cuda",
        dataclasses.replace(BACKENDS["cuda"], unavailable=lambda: "no GPU (test)"),
    )
    assert bench_cli.main(["all", "--robust", "--graphs", "path:9"]) == 1
    assert "no GPU (test); nothing was run" in capsys.readouterr().err
    assert sorted(p.name for p in home.iterdir()) == ["RESULTS.md"]
    assert (home / "RESULTS.md").read_text() == "# hand-written\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--robust", "--ablation"], "--ablation does not apply with --robust"),
        (["--robust", "--sources", "0"], "--sources must be at least 1"),
        (["--sources", "4"], "only with --robust"),
    ],
)
def test_usage_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(["all", *extra], FakeRobustRunner()) == 2
    assert message in capsys.readouterr().err


FAKE_WORKER = r"""
import json, os, signal, sys, time
app = sys.argv[sys.argv.index("irgl_runner.robust") + 1]
graphs = sys.argv[sys.argv.index("--graphs") + 1].split(",")
for g in graphs:
    print(json.dumps({"event": "start", "graph": g}), flush=True)
    if g == "hang":
        time.sleep(60)
    if g == "crash":
        sys.stderr.write("about to crash\n"); sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    print(json.dumps({"app": app, "graph": g, "status": "passed",
                      "times_ms": [1.0], "argv": sys.argv[1:],
                      "gpu": os.environ.get("CUDA_VISIBLE_DEVICES", "unset")}),
          flush=True)
"""


def test_subprocess_runner_restarts_after_a_hang_or_crash(tmp_path: Path) -> None:
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    exe = tmp_path / "fakepython"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    exe.chmod(0o755)
    runner = SubprocessRobustRunner(python=str(exe))
    job = RobustJob("bfs", ["a", "hang", "b", "crash", "c"], timeout_s=1)
    cells: list[RobustCell] = []
    runner(job, cells.append)
    assert [(c.graph, c.status.split(" (")[0]) for c in cells] == [
        ("a", "passed"),
        ("hang", "error: timed out after 1 s"),
        ("b", "passed"),
        ("crash", "error: crashed"),
        ("c", "passed"),
    ]
    assert "about to crash" in cells[3].status
    cmd = runner.command(job, ["a"])
    assert cmd[1:5] == ["-m", "irgl_runner.robust", "bfs", "--graphs"]
    assert "--no-cache" in cmd and "--source-seed" in cmd
    # a job's device is the worker's CUDA_VISIBLE_DEVICES
    cells.clear()
    runner(dataclasses.replace(job, graphs=["a"], device="3"), cells.append)
    assert [c.gpu for c in cells] == ["3"]


def test_worker_on_the_interpreter(tmp_path: Path) -> None:
    """The real worker (a subprocess) on the CPU interpreter: every source
    checked, its reached edges and edge visits recorded."""
    out = tmp_path / "out"
    argv = ["all", "--robust", "--backend", "interp", "--apps", "bfs,cc"]
    argv += ["--graphs", "path:8,isolated:40:20:8", "--sources", "5", "--reps", "1"]
    argv += ["--out-dir", str(out), "--cache-dir", str(tmp_path / "cache")]
    assert bench_cli.main(argv) == 0
    doc = json.loads((out / "robust.json").read_text())
    bfs = [c for c in doc["cells"] if c["app"] == "bfs"]
    assert [c["status"] for c in doc["cells"]] == ["passed"] * 4
    for cell in bfs:
        assert len(cell["sources"]) == 5
        for s in cell["sources"]:
            assert s["status"] == "passed" and s["edge_visits"] is not None
            if s["role"] == "isolated":
                assert s["reached_edges"] == 0 and s["edge_visits"] == 0
    path = bfs[0]["sources"]
    assert all(s["reached_edges"] == 14 for s in path)  # the whole chain
    assert "CPU interpreter" in (out / "RESULTS.md").read_text()


# ------------------------------------------- BFS and SSSP on every family

#: Small members of every family of the robust benchmark.
SMALL_FAMILIES = (
    "rmat:7@1",
    "rmat:7@2",
    "grid:8x8",
    "path:40",
    "star:40",
    "hub:40:2",
    "random:60:100",
    "isolated:120:60:12",
    "islands:600:6",
)

#: Edge visits per reached edge at most (BFS: two levels a round on sparse
#: graphs reads an edge several times; SSSP: a few relaxations per edge).
VISITS_PER_REACHED_EDGE = {"bfs": 6, "sssp": 4}


@pytest.mark.parametrize("family", SMALL_FAMILIES)
@pytest.mark.parametrize("app_name", ["bfs", "sssp"])
def test_work_follows_the_reached_edges(app_name: str, family: str) -> None:
    """From the hub, a leaf, an isolated node and a random node: the reference
    result, and edge visits within a constant of the edges reached (no pass
    over the whole graph: a source in an island of 6 nodes reads only its
    island, an isolated source at most 64 edges)."""
    app = load_app(app_name)
    graph = generate(family)
    if not app.weighted:
        graph.weights = None
    sources = pick_sources(graph, 4)
    runs = run_sources(app, interp_program(app, "sequential"), graph, sources, 1, 0)
    per_edge = VISITS_PER_REACHED_EDGE[app_name]
    for run in runs:
        what = f"{app_name} on {family} from {run.role} {run.node}"
        assert run.status == "passed", f"{what}: {run.status}"
        assert run.edge_visits is not None
        if run.role == "isolated":
            assert run.reached_edges == 0 and run.edge_visits <= 64, what
        else:
            assert run.edge_visits <= per_edge * run.reached_edges, what
        if family.startswith("islands"):
            assert run.reached_edges <= 6 * 5 * 2, what  # one island at most


def test_checks_in_forked_processes_agree() -> None:
    """The per-source checks give the same verdicts and work in 2 forked
    processes as here (the worker checks in parallel on a many-core host)."""
    app = load_app("sssp")
    graph = generate("random:60:100")
    sources = pick_sources(graph, 5)
    here = run_sources(app, interp_program(app, "sequential"), graph, sources, 1, 0)
    forked = run_sources(
        app, interp_program(app, "sequential"), graph, sources, 1, 0, check_jobs=2
    )
    strip = [dataclasses.replace(r, times_ms=[], median_ms=None) for r in here]
    assert [
        dataclasses.replace(r, times_ms=[], median_ms=None) for r in forked
    ] == strip
    assert all(r.status == "passed" for r in forked)


def test_default_graphs_and_merge(tmp_path: Path, bench: Path) -> None:
    """Without --graphs, the source-based apps also get the larger RMAT
    graphs; --merge keeps the cells of robust.json that a run does not redo."""
    out = tmp_path / "out"
    base = ["all", "--robust", "--benchmarks-dir", str(bench), "--out-dir", str(out)]
    runner = FakeRobustRunner()
    assert _main([*base, "--no-cache", "--apps", "bfs,cc"], runner) == 0
    assert runner.jobs[0].graphs == [*ROBUST_GRAPHS, *robust.ROBUST_SOURCE_GRAPHS]
    assert runner.jobs[1].graphs == list(ROBUST_GRAPHS)
    assert _main([*base, "--no-cache", "--graphs", "path:9"], FakeRobustRunner()) == 0
    again = [*base, "--no-cache", "--merge", "--apps", "cc", "--graphs", "star:7"]
    assert _main(again, FakeRobustRunner()) == 0
    doc = json.loads((out / "robust.json").read_text())
    assert [(c["app"], c["graph"]) for c in doc["cells"]] == [
        ("bfs", "path:9"),
        ("cc", "path:9"),
        ("cc", "star:7"),
        ("dmr", "random:30:0"),
    ]
    assert "3 cells merged from robust.json." in (out / "RESULTS.md").read_text()


class DeviceRobustFake(FakeRobustRunner):
    """FakeRobustRunner that takes a while per app and records each job's
    device and the most apps running at once."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def __call__(self, job: RobustJob, on_cell: Callable[[RobustCell], None]) -> None:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        try:
            super().__call__(job, on_cell)
        finally:
            with self.lock:
                self.running -= 1


def test_robust_devices_run_apps_at_once_with_the_same_report(
    tmp_path: Path, bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--robust --devices 0,1`: two apps at once, one per device; the JSON
    holds the cells a run one app at a time gives, in the apps' order."""
    docs = []
    for run, extra in (("one", []), ("two", ["--devices", "0,1"])):
        out = tmp_path / run
        runner = DeviceRobustFake()
        args = [
            "all",
            "--robust",
            "--benchmarks-dir",
            str(bench),
            "--out-dir",
            str(out),
        ]
        args += ["--cache-dir", str(tmp_path / "cache"), "--graphs", "path:9,star:7"]
        assert _main([*args, *extra], runner) == 0, capsys.readouterr().err
        doc = json.loads((out / "robust.json").read_text())
        docs.append([(c["app"], c["graph"], c["status"]) for c in doc["cells"]])
        if extra:
            assert runner.most == 2
            assert {j.device for j in runner.jobs} <= {"0", "1"}
            assert "(device " in capsys.readouterr().err
        else:
            assert runner.most == 1 and {j.device for j in runner.jobs} == {None}
    assert docs[0] == docs[1]
