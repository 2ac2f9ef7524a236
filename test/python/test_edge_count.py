"""Counting builds (nvcc flag ``-DIRGL_COUNT_EDGES``): the runtime counts the
edges the program's threads read, and ``Program.edge_reads_take`` reads
it; it also counts the synchronization
steps (kernel launches, grid barriers, block 0's lone rounds), which
``Program.steps_take`` reads, the program's atomics (``atomics_take``) and
the span (``span_take``: for every step, the most edges one thread read,
summed). The robustness benchmark uses them to tie
BFS's and SSSP's per-source times to the work they did."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from irgl_interpreter.apps import interp_program
from irgl_runner.apps import execute, load_app
from irgl_runner.generators import generate
from irgl_runner.robust import (
    COUNTED_RUNS,
    RobustCell,
    SourceRun,
    count_edges,
    explain_spread,
    pick_sources,
    render_robust_section,
)


def test_counting_build_compiles_and_exports_the_counter() -> None:
    """SSSP's program with the counter compiles (the whole header: the
    counter is a device variable of the program's module) and exports
    irgl_edge_reads_take (a plain build does not: the GPU test's
    Program.edge_reads_take says so)."""
    from conftest import check_build_flags, nvcc_path, shared_build_cache

    from irgl_runner.build import build

    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    flags = check_build_flags("-DIRGL_COUNT_EDGES")
    counting = build(load_app("sssp").mlir, flags=flags, cache=shared_build_cache())
    exports = subprocess.run(
        ["nm", "-D", "--defined-only", str(counting)], capture_output=True, text=True
    ).stdout
    assert "irgl_edge_reads_take" in exports
    assert "irgl_steps_take" in exports
    assert "irgl_atomics_take" in exports
    assert "irgl_span_take" in exports
    assert "irgl_entry_main" in exports


class _Counting:
    """An interpreter program posing as a counting build: its edge reads are
    the interpreter's edge visits since the last take."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.taken = 0
        self.invocations = 0
        self.atomics = 0
        self.calls = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def call(self, host_fn: str, *args: object) -> object:
        self.calls += 1
        return self.inner.call(host_fn, *args)  # type: ignore[attr-defined]

    def edge_reads_take(self) -> int:
        visits = self.inner.stats.edge_visits  # type: ignore[attr-defined]
        taken, self.taken = visits - self.taken, visits
        return taken

    def atomics_take(self) -> int:
        """The interpreter's atomics since the last take."""
        count = self.inner.stats.atomics  # type: ignore[attr-defined]
        taken, self.atomics = count - self.atomics, count
        return taken

    def span_take(self) -> int:
        """A span per call (the interpreter has no threads to count one
        with): 7, so a test can see it was taken once a call."""
        return 7

    def steps_take(self) -> dict[str, int]:
        """The interpreter's kernel invocations since the last take, as
        launches."""
        count = self.inner.stats.invocations  # type: ignore[attr-defined]
        taken, self.invocations = count - self.invocations, count
        return {"launches": taken, "grid barriers": 0, "block-0 rounds": 0}


def test_count_edges_gives_each_source_its_counted_runs() -> None:
    """count_edges runs the counting build COUNTED_RUNS times per source,
    sets edge_visits to what the first run took (none from an isolated node,
    every stored edge of the reached part at least once from the others)
    and keeps every run's totals."""
    app = load_app("sssp")
    graph = generate("rmat:6@1")
    sources = pick_sources(graph, 4)
    runs = [SourceRun(node, role, 0, "passed") for node, role in sources]
    counter = _Counting(interp_program(app, "sequential"))
    count_edges(app, counter, graph, runs)  # type: ignore[arg-type]
    assert counter.calls == len(runs) * COUNTED_RUNS
    degrees = graph.degrees()
    for run in runs:
        assert run.edge_visits is not None
        if run.role == "isolated":
            assert run.edge_visits == 0
        else:
            assert run.edge_visits >= int(degrees[run.node]) > 0
        assert run.steps is not None and run.steps["launches"] > 0
        assert run.atomics is not None
        assert (run.atomics > 0) == (run.role != "isolated")
        assert run.span == 7
        # the interpreter's sequential schedule does the same work each run
        first = {
            "edge_visits": run.edge_visits,
            "steps": sum(run.steps.values()),
            "atomics": run.atomics,
            "span": 7,
        }
        assert run.counted == [first] * COUNTED_RUNS


def test_count_edges_counts_a_source_as_often_as_it_was_timed() -> None:
    """A source timed more often than COUNTED_RUNS is counted as often (its
    work varies from run to run as much for the counts as for the times)."""
    app = load_app("sssp")
    graph = generate("rmat:6@1")
    (node, role), *_ = pick_sources(graph, 1)
    timed = SourceRun(node, role, 0, "passed", times_ms=[0.1] * (COUNTED_RUNS + 2))
    once = SourceRun(node, role, 0, "passed", times_ms=[0.1])
    counter = _Counting(interp_program(app, "sequential"))
    count_edges(app, counter, graph, [timed, once])  # type: ignore[arg-type]
    assert timed.counted is not None and len(timed.counted) == COUNTED_RUNS + 2
    assert once.counted is not None and len(once.counted) == COUNTED_RUNS
    assert counter.calls == 2 * COUNTED_RUNS + 2


def test_count_edges_counts_only_steps_for_an_app_with_a_replay() -> None:
    """BFS replays its reads on the CPU (its bottom-up pass stops edge loops
    early, which a range count would add whole): count_edges leaves its edge
    visits alone and sets its steps; a source deeper in the graph takes more
    invocations than an isolated one."""
    app = load_app("bfs")
    assert app.source_work is not None
    graph = generate("rmat:6@1")
    sources = pick_sources(graph, 4)
    runs = [SourceRun(node, role, 0, "passed") for node, role in sources]
    count_edges(app, _Counting(interp_program(app, "sequential")), graph, runs)  # type: ignore[arg-type]
    by_role = {run.role: run for run in runs}
    for run in runs:
        assert run.edge_visits is None
        assert run.steps is not None
    isolated, hub = by_role["isolated"].steps, by_role["hub"].steps
    assert isolated is not None and hub is not None
    assert hub["launches"] > isolated["launches"]


def _sssp_cell(
    *runs: tuple[float, int | None],
    steps: tuple[int, ...] | None = None,
    atomics: tuple[int, ...] | None = None,
    span: tuple[int, ...] | None = None,
) -> RobustCell:
    """SSSP sources of the same reached edges, levels and depth, with these
    (median ms, edge visits) and, with ``steps``, these grid barriers, with
    ``atomics``, these atomics, with ``span``, these spans."""
    sources = [
        SourceRun(
            k,
            "random",
            4,
            "passed",
            [ms],
            ms,
            50,
            500,
            6,
            300,
            edge_visits=visits,
            steps=None
            if steps is None
            else {"launches": 2, "grid barriers": steps[k], "block-0 rounds": 0},
            atomics=None if atomics is None else atomics[k],
            span=None if span is None else span[k],
        )
        for k, (ms, visits) in enumerate(runs)
    ]
    return RobustCell(
        "sssp", "g", "passed", 64, 500, [ms for ms, _ in runs], sources, "GPU", "now"
    )


def test_spread_explained_by_edge_visits() -> None:
    """Same reached edges, levels and depth: a source that relaxed 3x the
    edges is explained, one that relaxed as many is not, and without counts
    the verdict is as before."""
    assert explain_spread(_sssp_cell((1.0, 20_000), (3.0, 60_000))).explained  # type: ignore[union-attr]
    same = explain_spread(_sssp_cell((1.0, 20_000), (3.0, 21_000)))
    assert same is not None and same.unexplained == [1]
    assert "edge visits 21,000 vs 20,000" in same.reason
    uncounted = explain_spread(_sssp_cell((1.0, None), (3.0, None)))
    assert uncounted is not None and uncounted.unexplained == [1]
    assert "edge visits" not in uncounted.reason


def test_spread_explained_by_steps() -> None:
    """Same reached edges, levels, depth and edge visits: a source 3x as slow
    that passed 3x the grid barriers is explained; one that passed as many
    is not, and the reason gives both sources' steps."""
    more = explain_spread(_sssp_cell((1.0, 20_000), (3.0, 20_000), steps=(100, 300)))
    assert more is not None and more.explained
    same = explain_spread(_sssp_cell((1.0, 20_000), (3.0, 20_000), steps=(100, 101)))
    assert same is not None and same.unexplained == [1]
    assert "steps 103 vs 102" in same.reason
    assert "grid barriers 101 vs 100" in same.reason


def test_spread_explained_by_atomics() -> None:
    """Same reached edges, levels, depth, edge visits and steps: a source 2x
    as slow that issued 2x the atomics (improvements) is explained; one
    that issued as many is not, and the reason gives both counts."""
    steps = (100, 100)
    more = explain_spread(
        _sssp_cell((1.0, 20_000), (2.0, 20_000), steps=steps, atomics=(5_000, 10_000))
    )
    assert more is not None and more.explained
    same = explain_spread(
        _sssp_cell((1.0, 20_000), (2.0, 20_000), steps=steps, atomics=(5_000, 5_100))
    )
    assert same is not None and same.unexplained == [1]
    assert "atomics 5,100 vs 5,000" in same.reason


def test_spread_explained_by_span() -> None:
    """Same reached edges, levels, depth, edge visits, steps and atomics: a
    source 1.6x as slow whose span is 1.6x (a hub's edges read by one block
    in more of its steps) is explained; one of the same span is not, and
    the reason gives both spans."""
    steps, atomics = (100, 100), (5_000, 5_000)
    more = explain_spread(
        _sssp_cell(
            (1.0, 20_000),
            (1.6, 20_000),
            steps=steps,
            atomics=atomics,
            span=(900, 1_440),
        )
    )
    assert more is not None and more.explained
    same = explain_spread(
        _sssp_cell(
            (1.0, 20_000), (1.6, 20_000), steps=steps, atomics=atomics, span=(900, 950)
        )
    )
    assert same is not None and same.unexplained == [1]
    assert "span 950 vs 900" in same.reason


@pytest.mark.gpu
def test_counting_build_counts_sssp_relaxations(tmp_path: Path) -> None:
    """On the GPU: nothing from a source without out-edges; from the others at least
    the reached part's stored edges (every reached node relaxes its edges at
    least once); a plain build says it counts nothing."""
    from irgl_runner.api import Program
    from irgl_runner.build import DEFAULT_NVCC_FLAGS, build
    from irgl_runner.errors import IrglError
    from irgl_runner.robust import reached_work

    app = load_app("sssp")
    graph = generate("rmat:10@3")
    sources = pick_sources(graph, 6)
    runs = [SourceRun(node, role, 0, "passed") for node, role in sources]
    flags = (*DEFAULT_NVCC_FLAGS, "-DIRGL_COUNT_EDGES")
    counter = Program(build(app.mlir, flags=flags, cache=tmp_path))
    count_edges(app, counter, graph, runs)
    reference = interp_program(app, "sequential")
    counted = 0
    for run in runs:
        assert run.edge_visits is not None
        ctx = execute(app, reference, graph, run.node, reps=1, warmup=0)
        dist = ctx.outputs[app.primary_output]  # type: ignore[index]
        reached_nodes, reached_edges, _, _ = reached_work(graph, dist, run.node)
        if reached_edges == 0:  # isolated, or a sink (in-edges only)
            assert run.edge_visits == 0
            assert run.atomics == 0
            assert run.span == 0
            continue
        assert run.edge_visits >= reached_edges
        # a step's longest chain of one thread's edge reads, summed: at
        # least one read, at most every read
        assert run.span is not None and 0 < run.span <= run.edge_visits
        # every reached node but the source got its distance through an
        # atomic min that won (and a stamp exchange)
        assert run.atomics is not None and run.atomics >= reached_nodes - 1
        counted += 1
    assert counted >= 3
    for run in runs:  # every call launches its kernels
        assert run.steps is not None and run.steps["launches"] > 0
    plain = Program(build(app.mlir, cache=tmp_path))
    with pytest.raises(IrglError, match="-DIRGL_COUNT_EDGES"):
        plain.edge_reads_take()
    with pytest.raises(IrglError, match="-DIRGL_COUNT_EDGES"):
        plain.steps_take()
    with pytest.raises(IrglError, match="-DIRGL_COUNT_EDGES"):
        plain.atomics_take()
    with pytest.raises(IrglError, match="-DIRGL_COUNT_EDGES"):
        plain.span_take()
    assert counter.atomics_take() == 0  # the last take left nothing
    assert counter.span_take() == 0


@pytest.mark.gpu
def test_counting_build_span_splits_a_hub(tmp_path: Path) -> None:
    """On the GPU: SSSP from a star's hub reads the hub's 4,095 edges with
    many threads (a team of blocks walks the lone hub), so the span, the
    most edges one thread read a step summed over the steps, is at least
    4,095 over the largest block (1,024 threads; every step adds its longest
    chain) and well below the edges read: the hub's 4,095 edges once each,
    though every thread of the team takes the hub's range (a count of the
    ranges its threads took gave the hub's degree for every thread of the
    team, millions), then every leaf's one edge back, four times each (the
    edge loop is unrolled by four, and a copy past a range's end reads its
    last edge again): 5 x 4,095 + 1 on an H200."""
    from irgl_runner.api import Program
    from irgl_runner.build import DEFAULT_NVCC_FLAGS, build

    app = load_app("sssp")
    graph = generate("star:4096")
    hub = [SourceRun(0, "hub", int(graph.degrees()[0]), "passed")]
    flags = (*DEFAULT_NVCC_FLAGS, "-DIRGL_COUNT_EDGES")
    count_edges(app, Program(build(app.mlir, flags=flags, cache=tmp_path)), graph, hub)
    run = hub[0]
    assert run.edge_visits is not None and 2 * 4095 <= run.edge_visits <= 6 * 4095
    assert run.span is not None and 4095 // 1024 <= run.span < 4095 // 4


@pytest.mark.gpu
def test_counting_build_counts_bfs_steps(tmp_path: Path) -> None:
    """On the GPU: BFS's counting build counts its steps; a search from the
    corner of a 64x64 grid (127 levels, two a round on this sparse graph:
    63 rounds, block 0's alone while the frontier is small) takes many more
    grid barriers and lone rounds than one from an isolated node of another
    graph, and a second take right after reads zero."""
    from irgl_runner.api import Program
    from irgl_runner.build import DEFAULT_NVCC_FLAGS, build

    app = load_app("bfs")
    flags = (*DEFAULT_NVCC_FLAGS, "-DIRGL_COUNT_EDGES")
    counter = Program(build(app.mlir, flags=flags, cache=tmp_path))
    grid = generate("grid:64x64")
    isolated = generate("isolated:4096:8192")
    deep = [SourceRun(0, "random", 0, "passed")]
    count_edges(app, counter, grid, deep)
    lonely = int((isolated.degrees() == 0).nonzero()[0][0])
    alone = [SourceRun(lonely, "isolated", 0, "passed")]
    count_edges(app, counter, isolated, alone)
    d, a = deep[0].steps, alone[0].steps
    assert d is not None and a is not None
    assert d["launches"] > 0 and a["launches"] > 0
    assert d["grid barriers"] + d["block-0 rounds"] >= 60
    assert sum(d.values()) > 5 * sum(a.values())
    assert sum(counter.steps_take().values()) == 0


def test_spread_takes_the_range_of_the_counted_runs() -> None:
    """SSSP on a hub graph: a source's span varies from run to run (which
    thread reads the hub's edges). 1.56x as slow, with spans 2,116-2,512
    against the faster source's 1,728-2,124: explained by its most against
    the other's least (1.45x); by the first counted runs alone (2,116 vs
    1,728, 1.22x) it is not; the reason gives both ranges."""
    cell = _sssp_cell(
        (0.77, 20_000),
        (1.20, 20_000),
        steps=(14, 14),
        atomics=(5_000, 5_000),
        span=(1_728, 2_116),
    )
    assert explain_spread(cell).unexplained == [1]  # type: ignore[union-attr]
    fast, slow = cell.sources or []
    common = {"edge_visits": 20_000, "steps": 16, "atomics": 5_000}
    fast.counted = [common | {"span": v} for v in (1_728, 2_120, 2_124)]
    slow.counted = [common | {"span": v} for v in (2_116, 2_508, 2_512)]
    spread = explain_spread(cell)
    assert spread is not None and spread.explained
    slow.counted = [common | {"span": v} for v in (2_116, 2_120, 2_118)]
    narrow = explain_spread(cell)
    assert narrow is not None and narrow.unexplained == [1]
    assert "span 2,116–2,120 vs 1,728–2,124" in narrow.reason
    section = render_robust_section([cell], {"generated": "now"})
    assert "counted in 3 untimed runs" in section


def test_spread_names_a_sources_own_run_to_run_spread() -> None:
    """A flagged cell's reason says how far apart one source's own timed
    runs were, among the sources of at least half the slowest median (the
    same work run again); a short source's noise is left out, and a cell
    whose sources each run steadily says nothing of it."""
    cell = _sssp_cell((1.0, 20_000), (2.0, 60_000), (0.1, 0))
    assert cell.sources is not None
    cell.sources[0].times_ms = [1.0, 0.9, 1.5]
    cell.sources[1].times_ms = [2.0, 1.8, 2.1]
    cell.sources[2].times_ms = [0.1, 0.5, 0.1]  # a short source: left out
    spread = explain_spread(cell)
    assert spread is not None and spread.flagged
    assert "own timed runs up to 1.67× apart (random 0)" in spread.reason
    cell.sources[0].times_ms = [1.0, 1.0, 1.1]
    steady = explain_spread(cell)
    assert steady is not None and "own timed runs" not in steady.reason
