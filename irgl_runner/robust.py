"""``irgl-bench all --robust``: every app on every graph family, and the
source-based apps (BFS, SSSP) from many sources per graph.

Graph families (:data:`ROBUST_GRAPHS`): RMAT of several scales and seeds, a
grid, a chain, a star, a hub-heavy graph, a uniform random graph, a graph of
mostly isolated nodes and one whose largest component is small. For an app
that takes a source, :func:`pick_sources` draws ``--sources`` nodes per
graph (16 by default): the hub (highest degree), a leaf (degree 1) and an
isolated node where the graph has them, the rest uniformly at random, all
from ``--source-seed`` and the graph's name. Each source's run is checked
against the CPU reference and records its time and the edges it reached
(stored edges whose source node the search reached) and its BFS depth.

A cell of a source-based app whose slowest source takes more than
:data:`SPREAD_LIMIT` times its fastest one is flagged; the flag is
*explained* when no source takes more than that factor (and
:data:`SPREAD_NOISE_MS`) longer than another source that reached at least
1/factor of its edges, of its BFS levels (the rounds a level-synchronous
search needs) and of its depth (the largest finite result: SSSP's farthest
distance, which its distance windows, and so its rounds, follow): the extra
time is in the work. An unexplained flag is what
the benchmark is there to find (:func:`explain_spread`).

Each app runs in its own worker process (``python -m irgl_runner.robust``)
over all its graphs, one JSON line per graph; a graph that runs past
``--timeout`` gets a ``timeout`` cell and the worker is restarted for the
graphs after it. Reports: ``benchmarks/robust.json`` and a section of
``RESULTS.md`` between :data:`ROBUST_BEGIN_MARKER` and
:data:`ROBUST_END_MARKER`; as with ``irgl-bench all``, the backend must be
able to run here (checked first: nothing is run or written otherwise), and
the benchmarks directory's reports are replaced only when every cell has a
result (a timeout is one).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import shlex
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from .apps import (
    AppError,
    AppSpec,
    RunContext,
    alloc_outputs,
    default_benchmarks_dir,
    load_app,
)
from .backends import BACKENDS, RunnableProgram
from .errors import IrglError, UsageError
from .graph_args import check_graph_arg, default_cache_dir, resolve_graph
from .graphs import CSRGraph, GraphFormatError
from .reference import INF, bfs_levels
from .report import (
    ReportError,
    check_markdown,
    current_commit,
    signal_text,
    update_markdown,
)

__all__ = [
    "QUICK_ROBUST_GRAPHS",
    "ROBUST_BEGIN_MARKER",
    "ROBUST_END_MARKER",
    "ROBUST_GRAPHS",
    "ROBUST_SOURCE_GRAPHS",
    "RobustCell",
    "RobustJob",
    "RobustRunner",
    "SPREAD_LIMIT",
    "SPREAD_NOISE_MS",
    "SourceRun",
    "SubprocessRobustRunner",
    "cmd_robust",
    "explain_spread",
    "read_robust_json",
    "pick_sources",
    "reached_work",
    "render_robust_section",
    "run_sources",
    "write_robust_json",
]

#: The default graphs, sized so that every app on all of them (16 sources
#: each for BFS and SSSP, CPU checks and graph generation included) takes a
#: few minutes on one H100 or H200 with the programs built.
ROBUST_GRAPHS: tuple[str, ...] = (
    "rmat:16@1",
    "rmat:16@2",
    "rmat:18@3",
    "grid:512x512",
    "path:50000",
    "star:100000",
    "hub:100000:4",
    "random:200000:1600000",
    "isolated:1000000:1000000",
    "islands:200000:64",
)

#: Larger RMAT graphs that only the source-based apps (BFS, SSSP) run on by
#: default: their references are fast, unlike those of TC or PageRank.
ROBUST_SOURCE_GRAPHS: tuple[str, ...] = ("rmat:20@4",)

#: ``--robust --quick``: the same families, tiny (the interpreter runs them).
QUICK_ROBUST_GRAPHS: tuple[str, ...] = (
    "rmat:8@1",
    "rmat:8@2",
    "grid:12x12",
    "path:64",
    "star:64",
    "hub:64:2",
    "random:64:128",
    "isolated:128:64:16",
    "islands:128:8",
)

DEFAULT_SOURCES = 16
DEFAULT_SOURCE_SEED = 1
DEFAULT_ROBUST_REPS = 3
#: A source's runs go on past ``reps`` until they add up to this many
#: milliseconds (at most :data:`MAX_SOURCE_REPS` runs): a search that reaches
#: little takes tens of microseconds, and three such runs left the
#: robustness table with spreads of 30-45 us between sources of equal work.
SHORT_RUNS_TOTAL_MS = 5.0
MAX_SOURCE_REPS = 31
DEFAULT_ROBUST_TIMEOUT_S = 30.0

#: How long a worker may take before its first graph (loading the app:
#: lowering and, when the program is not in the cache, nvcc).
STARTUP_TIMEOUT_S = 1200.0

#: A source-based cell whose slowest source takes more than this times its
#: fastest one needs a reason in the work (reached edges or BFS levels).
SPREAD_LIMIT = 1.2

#: A source at most this many ms slower than the fastest needs no reason
#: (the jitter of a host-timed call, a few kernel launches).
SPREAD_NOISE_MS = 0.02

ROBUST_BEGIN_MARKER = "<!-- irgl-bench all --robust: begin -->"
ROBUST_END_MARKER = "<!-- irgl-bench all --robust: end -->"


# ------------------------------------------------------------------ sources


def pick_sources(
    graph: CSRGraph, count: int = DEFAULT_SOURCES, seed: int = DEFAULT_SOURCE_SEED
) -> list[tuple[int, str]]:
    """``count`` distinct sources (all nodes if fewer) with their role: the
    ``hub`` (highest degree, lowest id on ties), a ``leaf`` (degree 1) and an
    ``isolated`` node (degree 0) where there are such, drawn at random, then
    ``random`` nodes, in that order. The same graph and seed give the same
    list (the seed is mixed with the graph's content)."""
    n = graph.num_nodes
    if n == 0 or count < 1:
        return []
    degrees = graph.degrees()
    key = zlib.crc32(np.ascontiguousarray(graph.row_start).tobytes())
    rng = np.random.default_rng([seed, key, n])
    picked: dict[int, str] = {int(np.argmax(degrees)): "hub"}
    for role, wanted in (("leaf", 1), ("isolated", 0)):
        candidates = np.flatnonzero(degrees == wanted)
        if candidates.size and len(picked) < count:
            node = int(candidates[rng.integers(candidates.size)])
            picked.setdefault(node, role)
    want = min(count, n)
    while len(picked) < want:
        for node in rng.integers(0, n, size=2 * (want - len(picked))).tolist():
            if len(picked) < want:
                picked.setdefault(int(node), "random")
    return list(picked.items())


def reached_work(
    graph: CSRGraph, output: np.ndarray, source: int, levels: np.ndarray | None = None
) -> tuple[int, int, int, int]:
    """Reached nodes, reached edges (stored edges whose source node was
    reached), BFS levels (1 + the largest finite hop count) and depth (the
    largest finite ``output``: BFS's last level, SSSP's farthest distance)
    of a search from ``source`` whose per-node ``output`` is ``INF`` where
    unreached. ``levels`` are the BFS levels if known (else computed)."""
    values = np.asarray(output).ravel()
    reached = values != INF
    edges = int(graph.degrees()[reached].sum())
    hops = bfs_levels(graph, source) if levels is None else np.asarray(levels)
    finite = hops[hops != INF]
    depth = int(values[reached].max(initial=0))
    return int(reached.sum()), edges, int(finite.max(initial=0)) + 1, depth


# -------------------------------------------------------------------- cells


@dataclass
class SourceRun:
    """One source of a source-based cell."""

    node: int
    role: str
    degree: int
    status: str  # "passed", "skipped" or "failed: ..."
    times_ms: list[float] = field(default_factory=list)
    median_ms: float | None = None
    reached_nodes: int = 0
    reached_edges: int = 0
    levels: int = 0
    #: the largest finite output: BFS's last level, SSSP's farthest distance
    #: (SSSP's windows, its rounds, follow it, not the hop count)
    depth: int = 0
    edge_visits: int | None = None  # the interpreter's count, where it ran
    #: the synchronization steps of one untimed run of a counting build
    #: (:meth:`irgl_runner.api.Program.steps_take`: kernel launches, grid
    #: barriers, block 0's lone rounds), where one ran
    steps: dict[str, int] | None = None
    #: the app's replay of the edges its phases read (``AppSpec.source_work``;
    #: BFS: top-down edges and bottom-up reads), where the app has one
    replayed: dict[str, int] | None = None
    #: untimed runs from this source before its timed ones (None: measured
    #: when only the graph's first source had a warm-up); with `in_turns`,
    #: before each timed one
    warmups: int | None = None
    #: measured in turns with the graph's other sources: one timed run of
    #: each source (after its `warmups`) a turn, so that a slow spell of the
    #: machine falls on every source alike (False: its runs in one block)
    in_turns: bool = False

    @property
    def correct(self) -> bool:
        """Not known to be wrong."""
        return self.status in ("passed", "skipped")


@dataclass
class RobustCell:
    """One app on one graph: min/median/max over sources (source-based apps)
    or over timed runs (the others)."""

    app: str
    graph: str
    status: str  # "passed", "skipped", "failed: ...", "error: ..."
    nodes: int | None = None
    edges: int | None = None
    times_ms: list[float] = field(default_factory=list)  # per source or per run
    sources: list[SourceRun] | None = None  # None: not a source-based app
    gpu: str | None = None
    date: str | None = None
    wall_s: float | None = None
    log: str | None = None

    @property
    def correct(self) -> bool:
        """Passed, or ran without a check."""
        return self.status in ("passed", "skipped")

    @property
    def timed_out(self) -> bool:
        """Stopped for running past ``--timeout``."""
        return self.status.startswith("error: timed out")

    def stats(self) -> tuple[float, float, float] | None:
        """(min, median, max) ms, or None without times."""
        if not self.times_ms:
            return None
        t = self.times_ms
        return min(t), statistics.median(t), max(t)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, with min/median/max and the spread's verdict."""
        d = asdict(self)
        s = self.stats()
        d["min_ms"], d["median_ms"], d["max_ms"] = s if s else (None, None, None)
        spread = explain_spread(self)
        d["spread"] = None if spread is None else asdict(spread)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RobustCell:
        """Inverse of :meth:`to_json` (extra keys ignored)."""
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in names}
        if kwargs.get("sources") is not None:
            src_names = {f.name for f in fields(SourceRun)}
            kwargs["sources"] = [
                SourceRun(**{k: v for k, v in s.items() if k in src_names})
                for s in kwargs["sources"]
            ]
        return cls(**kwargs)


@dataclass
class Spread:
    """How a source-based cell's slowest source compares with its fastest."""

    time_ratio: float
    fastest: int  # node ids
    slowest: int
    edges: tuple[int, int]  # reached edges of the fastest and the slowest
    levels: tuple[int, int]
    flagged: bool  # time_ratio > SPREAD_LIMIT, or some source unexplained
    explained: bool  # no source is unexplained
    unexplained: list[int]  # sources > SPREAD_LIMIT x one with as much work
    reason: str


def _ratio(a: float, b: float) -> str:
    """``a / b`` for the table: ``3.1×``, ``2e+05×``, ``1234/0``."""
    if b <= 0:
        return f"{a:g}/0" if a > 0 else "1×"
    r = a / b
    return (
        f"{r:.2g}×" if r < 100 else f"{r:.0e}×".replace("e+0", "e").replace("e+", "e")
    )


def _ms_of(run: SourceRun) -> float:
    return run.median_ms or 0.0


def _depths(cell: RobustCell, s: SourceRun, o: SourceRun) -> str:
    """``, depth A vs B`` where the depth is not the levels' (SSSP)."""
    return "" if cell.app == "bfs" else f", depth {s.depth:,} vs {o.depth:,}"


def _replayed(s: SourceRun, o: SourceRun) -> str:
    """``, top-down edges A vs B, ...`` where the app replays its work."""
    if s.replayed is None or o.replayed is None:
        return ""
    return "".join(
        f", {name} {s.replayed[name]:,} vs {o.replayed.get(name, 0):,}"
        for name in s.replayed
    )


def _visits(s: SourceRun, o: SourceRun) -> str:
    """``, edge visits A vs B`` where both were counted."""
    if s.edge_visits is None or o.edge_visits is None:
        return ""
    return f", edge visits {s.edge_visits:,} vs {o.edge_visits:,}"


def _steps(s: SourceRun, o: SourceRun) -> str:
    """``, steps A vs B (launches, grid barriers, block-0 rounds)`` where both
    were counted."""
    if s.steps is None or o.steps is None:
        return ""
    return (
        f", steps {sum(s.steps.values()):,} vs {sum(o.steps.values()):,} ("
        + ", ".join(f"{k} {v:,} vs {o.steps.get(k, 0):,}" for k, v in s.steps.items())
        + ")"
    )


def _as_many_steps(o: SourceRun, s: SourceRun, limit: float) -> bool:
    """Whether ``o`` took at least ``1/limit`` of the synchronization steps
    ``s`` took (True where either was not counted)."""
    if o.steps is None or s.steps is None:
        return True
    return limit * sum(o.steps.values()) >= sum(s.steps.values())


def _as_many_visits(o: SourceRun, s: SourceRun, limit: float) -> bool:
    """Whether ``o`` visited at least ``1/limit`` of the edges ``s`` visited
    (True where either was not counted)."""
    if o.edge_visits is None or s.edge_visits is None:
        return True
    return limit * o.edge_visits >= s.edge_visits


def _as_much_replayed(o: SourceRun, s: SourceRun, limit: float) -> bool:
    """Whether ``o`` read at least ``1/limit`` of each count ``s`` read in
    the app's replay (True where either has none)."""
    if o.replayed is None or s.replayed is None:
        return True
    return all(limit * o.replayed.get(k, 0) >= v for k, v in s.replayed.items())


def explain_spread(
    cell: RobustCell, limit: float = SPREAD_LIMIT, noise_ms: float = SPREAD_NOISE_MS
) -> Spread | None:
    """The spread of a source-based cell's per-source times (None for other
    apps or without two timed sources).

    A source is *unexplained* when some other source that reached at least
    ``1/limit`` of its edges and of its BFS levels (and read at least
    ``1/limit`` of each count of the app's replay, where it has one, of
    the edges it visited and of the synchronization steps it took, where
    both were counted) ran
    more than ``limit`` times (and ``noise_ms``) faster: the extra time is
    not in the work. With
    the fastest source as that other one this is the issue's rule (a source
    above ``limit`` times the fastest needs more than ``limit`` times its
    edges or levels); comparing with every source also catches, say, a hub
    twice as slow as a random source that reaches the same component.
    """
    runs = [s for s in cell.sources or () if s.median_ms is not None]
    if len(runs) < 2:
        return None
    fast, slow = min(runs, key=_ms_of), max(runs, key=_ms_of)
    t_fast, t_slow = _ms_of(fast), _ms_of(slow)
    ratio = t_slow / t_fast if t_fast > 0 else float("inf")
    pairs: list[tuple[SourceRun, SourceRun]] = []  # (slow one, faster one)
    for s in runs:
        peers = [
            o
            for o in runs
            if o is not s
            and limit * o.reached_edges >= s.reached_edges
            and limit * o.levels >= s.levels
            and limit * o.depth >= s.depth
            and _as_much_replayed(o, s, limit)
            and _as_many_visits(o, s, limit)
            and _as_many_steps(o, s, limit)
        ]
        if not peers:
            continue
        o = min(peers, key=_ms_of)
        if _ms_of(s) > limit * _ms_of(o) and _ms_of(s) - _ms_of(o) > noise_ms:
            pairs.append((s, o))
    flagged = ratio > limit
    reason = ""
    if flagged:
        reason = (
            f"time max/min {_ratio(t_slow, t_fast)}, reached edges max/min "
            f"{_ratio(slow.reached_edges, fast.reached_edges)}, levels "
            f"{_ratio(slow.levels, fast.levels)} (slowest {slow.role} "
            f"{slow.node}: {slow.reached_edges:,} edges, {slow.levels} levels; "
            f"fastest {fast.role} {fast.node}: {fast.reached_edges:,} edges, "
            f"{fast.levels} levels)"
        )
    if pairs:
        s, o = max(pairs, key=lambda p: _ms_of(p[0]) / max(_ms_of(p[1]), 1e-9))
        reason += (
            f"{'; ' if reason else ''}**unexplained**: {len(pairs)} source(s) "
            f"more than {limit:g}× slower than one with as much work, e.g. "
            f"{s.role} {s.node} {_ratio(_ms_of(s), _ms_of(o))} {o.role} {o.node} "
            f"({s.reached_edges:,} vs {o.reached_edges:,} edges, {s.levels} vs "
            f"{o.levels} levels{_depths(cell, s, o)}{_replayed(s, o)}"
            f"{_visits(s, o)}{_steps(s, o)})"
        )
    elif flagged:
        reason += "; explained by the work"
    return Spread(
        ratio,
        fast.node,
        slow.node,
        (fast.reached_edges, slow.reached_edges),
        (fast.levels, slow.levels),
        flagged or bool(pairs),
        not pairs,
        [s.node for s, _ in pairs],
        reason,
    )


def unexplained_cells(cells: Sequence[RobustCell]) -> list[RobustCell]:
    """The cells with a spread among their sources the work does not explain."""
    return [
        c
        for c in cells
        if (sp := explain_spread(c)) is not None and sp.flagged and not sp.explained
    ]


# ------------------------------------------------------------------- worker


def run_sources(
    app: AppSpec,
    program: RunnableProgram,
    graph: CSRGraph,
    sources: Sequence[tuple[int, str]],
    reps: int = DEFAULT_ROBUST_REPS,
    warmup: int = 1,
    check_jobs: int = 1,
    short_total_ms: float = 0.0,
    counter: EdgeCounter | None = None,
) -> list[SourceRun]:
    """Run ``app`` from each source (the graph uploaded once), then check
    each against the CPU reference and measure the work it reached (in
    ``check_jobs`` forked processes when more than 1: the references are the
    slow part).

    The sources are measured in turns: each turn runs every source that
    wants more runs once, after ``warmup`` untimed runs of the same source
    (a source's first runs after a much slower one were up to 3× slower
    than its later ones), so that a slow spell of the machine, which once
    doubled one zero-work source's runs for most of its block, falls on
    every source alike instead of on the one measured then. A source wants
    ``reps`` timed runs or, with ``short_total_ms``, more until they add up
    to that many milliseconds (at most :data:`MAX_SOURCE_REPS`). With
    ``counter`` (a counting build of the app), each source's edge visits
    are its edge ranges in one more, untimed run of that build."""
    device_graph = program.upload_graph(graph)
    degrees = graph.degrees()
    stats = getattr(program, "stats", None)  # the interpreter counts edge visits
    contexts: list[tuple[RunContext, dict[str, np.ndarray]]] = []
    for node, _ in sources:
        ctx = RunContext(app, graph, node)
        ctx.device_graph = device_graph
        contexts.append((ctx, alloc_outputs(app, program, ctx)))
    visits: list[int | None] = [0] * len(sources)
    last: list[Any] = [None] * len(sources)  # the host function's result

    def run_once(k: int, timed: bool) -> None:
        ctx, initial = contexts[k]
        for name, values in initial.items():
            ctx.arrays[name].from_numpy(values)
        before = getattr(stats, "edge_visits", None)
        ms = program.time_call(app.host_fn, *app.args(ctx))
        after = getattr(stats, "edge_visits", None)
        last[k] = program.last_result
        if not timed:
            return
        ctx.times_ms.append(ms)
        counted = visits[k]
        if isinstance(before, int) and isinstance(after, int) and counted is not None:
            visits[k] = counted + after - before
        else:
            visits[k] = None

    def wants_more(k: int) -> bool:
        times = contexts[k][0].times_ms
        return len(times) < reps or (
            sum(times) < short_total_ms and len(times) < max(reps, MAX_SOURCE_REPS)
        )

    pending = list(range(len(sources)))
    while pending:
        for k in pending:
            for _ in range(warmup):
                run_once(k, timed=False)
            run_once(k, timed=True)
        pending = [k for k in pending if wants_more(k)]
    out: list[SourceRun] = []
    results: list[tuple[int, dict[str, np.ndarray], Any]] = []
    for k, (node, role) in enumerate(sources):
        ctx = contexts[k][0]
        outputs = {
            s.name: ctx.arrays[s.name].to_numpy() for s in app.outputs if s.read_back
        }
        results.append((node, outputs, last[k]))
        run = SourceRun(
            node,
            role,
            int(degrees[node]),
            "unchecked",
            [round(t, 6) for t in ctx.times_ms],
            round(statistics.median(ctx.times_ms), 6),
            warmups=warmup,
            in_turns=True,
        )
        counted = visits[k]
        if stats is not None and counted is not None:
            run.edge_visits = counted // len(ctx.times_ms)
        out.append(run)
    for run, (status, work) in zip(
        out, _check_all(app, graph, results, check_jobs), strict=True
    ):
        run.status = status
        if work is not None:
            run.reached_nodes, run.reached_edges, run.levels, run.depth = work
        if app.source_work is not None and run.correct:
            run.replayed = dict(app.source_work(graph, run.node))
    if counter is not None:
        count_edges(app, counter, graph, out)
    return out


class EdgeCounter(RunnableProgram, Protocol):
    """A counting build of an app (:meth:`irgl_runner.api.Program.edge_ranges_take`)."""

    def call(self, host_fn: str, *args: object) -> Any: ...
    def edge_ranges_take(self) -> int: ...
    def steps_take(self) -> dict[str, int]: ...


def count_edges(
    app: AppSpec, counter: EdgeCounter, graph: CSRGraph, runs: Sequence[SourceRun]
) -> None:
    """Set each run's ``steps`` to the synchronization steps that one untimed
    run of the counting build ``counter`` from its source takes and, for an
    app without a replay of its work (SSSP), its ``edge_visits`` to the edge
    ranges the run takes (an app with a replay stops edge loops early:
    BFS's bottom-up pass, whose whole ranges a count would add)."""
    device_graph = counter.upload_graph(graph)
    for run in runs:
        ctx = RunContext(app, graph, run.node)
        ctx.device_graph = device_graph
        for name, values in alloc_outputs(app, counter, ctx).items():
            ctx.arrays[name].from_numpy(values)
        counter.edge_ranges_take()  # what earlier calls left
        counter.steps_take()
        counter.call(app.host_fn, *app.args(ctx))
        ranges = counter.edge_ranges_take()
        run.steps = counter.steps_take()
        if app.source_work is None:
            run.edge_visits = ranges


def counting_program(app: AppSpec, args: argparse.Namespace) -> EdgeCounter | None:
    """A counting build of a source-based app, for the CUDA backend; None for
    the others (the interpreter counts its edge visits itself)."""
    if args.backend != "cuda" or not app.uses_source:
        return None
    from .api import Program
    from .build import DEFAULT_NVCC_FLAGS, build

    flags = (*DEFAULT_NVCC_FLAGS, "-DIRGL_COUNT_EDGES")
    return Program(build(app.mlir, pipeline=args.pipeline, flags=flags))


#: What the forked checkers read (set before the pool forks).
_CHECKING: tuple[AppSpec, CSRGraph] | None = None


def _check_one(
    item: tuple[int, dict[str, np.ndarray], Any],
) -> tuple[str, tuple[int, int, int, int] | None]:
    """The status and (reached nodes, edges, levels, depth) of one source's
    output."""
    assert _CHECKING is not None
    app, graph = _CHECKING
    node, outputs, result = item
    ctx = RunContext(app, graph, node)
    ctx.outputs, ctx.result = outputs, result
    problem = app.check(ctx) if app.check is not None else None
    status = (
        "skipped"
        if app.check is None
        else ("passed" if problem is None else f"failed: {problem}")
    )
    primary = app.primary_output
    if primary is None:
        return status, None
    output = outputs[primary]
    levels = output if app.name == "bfs" and problem is None else None
    return status, reached_work(graph, output, node, levels)


def _check_all(
    app: AppSpec,
    graph: CSRGraph,
    items: Sequence[tuple[int, dict[str, np.ndarray], Any]],
    jobs: int,
) -> list[tuple[str, tuple[int, int, int, int] | None]]:
    """:func:`_check_one` of every item, in ``jobs`` forked processes if more
    than 1 (where fork exists), else here."""
    global _CHECKING
    _CHECKING = (app, graph)
    try:
        jobs = min(jobs, len(items))
        if jobs > 1 and hasattr(os, "fork"):
            import multiprocessing
            import warnings
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("fork")
            with warnings.catch_warnings():  # the children only run numpy/scipy
                warnings.simplefilter("ignore", DeprecationWarning)
                with ProcessPoolExecutor(jobs, mp_context=context) as pool:
                    return list(pool.map(_check_one, items))
        return [_check_one(item) for item in items]
    finally:
        _CHECKING = None


def _cell_status(runs: Sequence[SourceRun]) -> str:
    bad = [r for r in runs if not r.correct]
    if bad:
        what = bad[0].status.partition(":")[2].strip()
        return (
            f"failed: {len(bad)} of {len(runs)} sources wrong, e.g. {bad[0].role} "
            f"{bad[0].node}: {what}"
        )
    return "skipped" if all(r.status == "skipped" for r in runs) else "passed"


def _worker_cell(
    app: AppSpec,
    program: RunnableProgram,
    graph_text: str,
    args: argparse.Namespace,
    counter: EdgeCounter | None = None,
) -> RobustCell:
    """One graph in the worker: load it, run from every source (or once),
    check, and with ``counter`` count each source's edge visits; the cell."""
    date = _now()
    start = time.monotonic()
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir())
    graph, _ = resolve_graph(graph_text, app.symmetrize, app.weighted, cache)
    app.check_graph(graph, graph_text)
    gpu = program.device_name()
    if app.uses_source:
        sources = pick_sources(graph, args.sources, args.source_seed)
        warmup = BACKENDS[args.backend].warmup
        # more runs for short sources on a GPU (the interpreter's are long)
        short = 0.0 if args.backend == "interp" else SHORT_RUNS_TOTAL_MS
        runs = run_sources(
            app,
            program,
            graph,
            sources,
            args.reps,
            warmup,
            args.check_jobs,
            short,
            counter,
        )
        cell = RobustCell(
            app.name,
            graph_text,
            _cell_status(runs),
            graph.num_nodes,
            graph.num_edges,
            [r.median_ms for r in runs if r.median_ms is not None],
            runs,
            gpu,
            date,
        )
    else:
        from .apps import execute

        warmup = BACKENDS[args.backend].warmup
        ctx = execute(app, program, graph, 0, reps=args.reps, warmup=warmup)
        problem = app.check(ctx) if app.check is not None else None
        status = (
            "skipped"
            if app.check is None
            else ("passed" if problem is None else f"failed: {problem}")
        )
        cell = RobustCell(
            app.name,
            graph_text,
            status,
            graph.num_nodes,
            graph.num_edges,
            [round(t, 6) for t in ctx.times_ms],
            None,
            gpu,
            date,
        )
    cell.wall_s = round(time.monotonic() - start, 3)
    return cell


def worker_main(argv: Sequence[str] | None = None) -> int:
    """``python -m irgl_runner.robust APP --graphs G,...``: one JSON line per
    graph (``{"event": "start", ...}`` before it, the cell after)."""
    from .backends import load_plugins

    load_plugins()
    p = argparse.ArgumentParser(prog="python -m irgl_runner.robust")
    p.add_argument("app")
    p.add_argument("--graphs", required=True)
    p.add_argument("--sources", type=int, default=DEFAULT_SOURCES)
    p.add_argument("--source-seed", type=int, default=DEFAULT_SOURCE_SEED)
    p.add_argument("--reps", type=int, default=DEFAULT_ROBUST_REPS)
    p.add_argument(
        "--check-jobs",
        type=int,
        default=max(1, min(16, (os.cpu_count() or 1) - 1)),
        help="processes that check the sources' outputs (default: CPUs - 1, <= 16)",
    )
    p.add_argument("--backend", choices=list(BACKENDS), default="cuda")
    p.add_argument("-p", "--pipeline", default=None)
    p.add_argument("--cache-dir", type=Path, default=None)
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--benchmarks-dir", type=Path, default=None)
    for backend in BACKENDS.values():
        if backend.add_arguments is not None:
            backend.add_arguments(p)
    args = p.parse_args(argv)
    if args.pipeline is None:
        from .build import DEFAULT_PIPELINE

        args.pipeline = DEFAULT_PIPELINE
    graphs = [g for g in args.graphs.split(",") if g]
    backend = BACKENDS[args.backend]
    try:
        app = load_app(args.app, args.benchmarks_dir)
        program = backend.load(app, args)
        counter = counting_program(app, args)
    except (AppError, UsageError, IrglError, *backend.failures) as e:
        for g in graphs:
            _emit({"event": "start", "graph": g})
            cell = RobustCell(args.app, g, f"error: {_one_line(str(e))}", date=_now())
            _emit(cell.to_json())
        return 1
    code = 0
    for g in graphs:
        _emit({"event": "start", "graph": g})
        try:
            cell = _worker_cell(app, program, g, args, counter)
        except (
            AppError,
            UsageError,
            GraphFormatError,
            IrglError,
            OSError,
            ValueError,
            *backend.failures,
        ) as e:
            cell = RobustCell(args.app, g, f"error: {_one_line(str(e))}", date=_now())
        if not cell.correct:
            code = 1
        _emit(cell.to_json())
    return code


def _emit(record: Mapping[str, Any]) -> None:
    print(json.dumps(record), flush=True)


def _now() -> str:
    from datetime import datetime

    return datetime.now().astimezone().isoformat(timespec="seconds")


def _one_line(text: str, limit: int = 400) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


# ------------------------------------------------------------------- runner


@dataclass
class RobustJob:
    """One app over its graphs (one worker process)."""

    app: str
    graphs: list[str]
    sources: int = DEFAULT_SOURCES
    source_seed: int = DEFAULT_SOURCE_SEED
    reps: int = DEFAULT_ROBUST_REPS
    timeout_s: float | None = DEFAULT_ROBUST_TIMEOUT_S  # per graph
    benchmarks_dir: Path | None = None
    cache_dir: Path | None = None
    extra_args: list[str] = field(default_factory=list)


#: Runs a job, calling ``on_cell`` once per graph (in order); the harness
#: fills in an error cell for a graph it was not called for.
RobustRunner = Callable[[RobustJob, Callable[[RobustCell], None]], None]


class SubprocessRobustRunner:
    """Runs a job as ``python -m irgl_runner.robust``; a graph past its
    timeout, or a crash, costs that graph's cell, and a new worker takes the
    graphs after it."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python

    def command(self, job: RobustJob, graphs: Sequence[str]) -> list[str]:
        """The worker's command line for ``graphs`` of ``job``."""
        cmd = [self.python, "-m", "irgl_runner.robust", job.app]
        cmd += ["--graphs", ",".join(graphs), "--sources", str(job.sources)]
        cmd += ["--source-seed", str(job.source_seed), "--reps", str(job.reps)]
        from .bench_all import location_args

        cmd += location_args(job.benchmarks_dir, job.cache_dir)
        return cmd + list(job.extra_args)

    def __call__(self, job: RobustJob, on_cell: Callable[[RobustCell], None]) -> None:
        todo = list(job.graphs)
        while todo:
            done = self._run(job, todo, on_cell)
            todo = todo[done:]

    def _run(
        self,
        job: RobustJob,
        graphs: Sequence[str],
        on_cell: Callable[[RobustCell], None],
    ) -> int:
        """One worker over ``graphs``; how many of them got a cell (at least 1)."""
        proc = subprocess.Popen(
            self.command(job, graphs),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        err_tail: list[str] = []
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        threading.Thread(
            target=_tail, args=(proc.stderr, err_tail), daemon=True
        ).start()
        done = 0
        started = time.monotonic()
        limit = job.timeout_s
        if limit is not None:  # the worker compiles before its first graph
            limit = max(limit, STARTUP_TIMEOUT_S)
        try:
            while done < len(graphs):
                left = None
                if limit is not None:
                    left = max(0.0, started + limit - time.monotonic())
                try:
                    line = lines.get(timeout=left)
                except queue.Empty:
                    _kill_group(proc)
                    on_cell(
                        RobustCell(
                            job.app,
                            graphs[done],
                            f"error: timed out after {limit:g} s",
                            date=_now(),
                            wall_s=time.monotonic() - started,
                            log="".join(err_tail)[-4000:] or None,
                        )
                    )
                    return done + 1
                if line is None:  # the worker ended early
                    proc.wait()
                    text = "".join(err_tail)
                    on_cell(
                        RobustCell(
                            job.app,
                            graphs[done],
                            "error: " + _crash_text(text, proc.returncode or 0),
                            date=_now(),
                            wall_s=time.monotonic() - started,
                            log=text[-4000:] or None,
                        )
                    )
                    return done + 1
                record = _parse(line)
                if record is None:
                    continue
                if record.get("event") == "start":
                    started, limit = time.monotonic(), job.timeout_s
                    continue
                if "app" in record:
                    on_cell(RobustCell.from_json(record))
                    done += 1
            proc.wait()
            return done
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise


def _pump(stream: IO[str] | None, out: queue.Queue[str | None]) -> None:
    if stream is not None:
        for line in stream:
            out.put(line)
    out.put(None)


def _tail(stream: IO[str] | None, out: list[str]) -> None:
    if stream is not None:
        for line in stream:
            out.append(line)
            if len(out) > 200:
                del out[:100]


def _parse(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _crash_text(stderr: str, returncode: int) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    last = _one_line(lines[-1]) if lines else ""
    if returncode < 0:
        return signal_text(returncode) + (f": {last}" if last else "")
    return last or f"worker ended (exit code {returncode}) without a result"


def _kill_group(proc: subprocess.Popen[str]) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


# ------------------------------------------------------------------- report


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.3f}" if value < 1000 else f"{value:.0f}"


def _correct(cell: RobustCell) -> str:
    if cell.status == "passed":
        return "yes"
    if cell.status == "skipped":
        return "unchecked"
    if cell.timed_out:
        return "timeout"
    head, _, detail = cell.status.partition(":")
    return ("**NO**" if head == "failed" else "**error**") + (
        f": {detail.strip()}" if detail.strip() else ""
    )


def _over(cell: RobustCell) -> str:
    if cell.sources is None:
        return f"{len(cell.times_ms)} runs" if cell.times_ms else ""
    roles = [s.role for s in cell.sources]
    special = [r for r in ("hub", "leaf", "isolated") if r in roles]
    return (
        f"{len(roles)} sources ({', '.join(special)}, {roles.count('random')} random)"
    )


def _cell_text(text: object, limit: int = 400) -> str:
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("|", "\\|")


def robust_table(cells: Sequence[RobustCell]) -> str:
    """The markdown table: one line per app and graph."""
    cols = ["app", "graph", "nodes", "edges", "over", "min ms", "median ms"]
    cols += ["max ms", "max/min", "correct?", "spread (source-based apps)"]
    right = {"nodes", "edges", "min ms", "median ms", "max ms", "max/min"}
    lines = [
        "| " + " | ".join(cols) + " |",
        "|" + "|".join("---:" if c in right else "---" for c in cols) + "|",
    ]
    for c in cells:
        s = c.stats()
        spread = explain_spread(c)
        ratio = f"{s[2] / s[0]:.2f}" if s and s[0] > 0 else ""
        row = [
            c.app,
            c.graph,
            "" if c.nodes is None else f"{c.nodes:,}",
            "" if c.edges is None else f"{c.edges:,}",
            _over(c),
            _ms(s[0]) if s else "",
            _ms(s[1]) if s else "",
            _ms(s[2]) if s else "",
            ratio,
            _correct(c),
            spread.reason if spread is not None and spread.flagged else "",
        ]
        lines.append("| " + " | ".join(_cell_text(x) for x in row) + " |")
    return "\n".join(lines) + "\n"


def _source_runs(meta: Mapping[str, Any], reps: int) -> str:
    """How many timed runs a source had, as the section says it."""
    total = meta.get("short_runs_total_ms")
    if not total:
        return f"{reps} timed runs"
    return (
        f"at least {reps} timed runs, more for a short one (until they add up "
        f"to {total:g} ms, at most {meta.get('max_source_reps', MAX_SOURCE_REPS)})"
    )


def _source_warmups(cells: Sequence[RobustCell]) -> str:
    """How the section says the sources were measured: in turns, each timed
    run after a warm-up of its source (robust.json's `in_turns`), or in
    blocks with a warm-up before each source (`warmups`), or, earlier, one
    warm-up per graph."""
    runs = [r for c in cells for r in c.sources or ()]
    turns = [r for r in runs if r.in_turns]
    if runs and len(turns) == len(runs):
        return _turns(turns)
    if turns:
        return (
            _turns(turns)
            + " where robust.json says `in_turns`; else "
            + _block_warmups([r for r in runs if not r.in_turns])
        )
    return _block_warmups(runs)


def _turns(runs: Sequence[SourceRun]) -> str:
    """The sources measured in turns, with or without warm-ups."""
    text = "the graph's sources measured in turns, one timed run of each a turn"
    if all(r.warmups for r in runs):
        return text + ", each right after a warm-up run of the same source"
    if not any(r.warmups for r in runs):
        return text + ", no warm-up runs"
    return text + ", most right after a warm-up run of the same source"


def _block_warmups(runs: Sequence[SourceRun]) -> str:
    """The warm-ups of sources measured in blocks."""
    each = [r for r in runs if r.warmups]
    if runs and len(each) == len(runs):
        return "one warm-up before each source"
    if each:
        return (
            "one warm-up before each source where robust.json gives the source "
            "`warmups`, else one per graph"
        )
    return "one warm-up per graph"


def render_robust_section(
    cells: Sequence[RobustCell],
    meta: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """The ``RESULTS.md`` section (its heading names the GPU and the date)."""
    meta = dict(meta or {})
    gpus = sorted({c.gpu for c in cells if c.gpu})
    generated = str(meta.get("generated") or "")
    title = "## Robustness: every app on every graph family, BFS and SSSP from "
    title += f"{meta.get('sources', DEFAULT_SOURCES)} sources per graph"
    title += f" — {', '.join(gpus) or 'no GPU result yet'}"
    title += f", {generated[:10]}" if generated else ""
    out = [title]
    head = f"Generated {generated}" if generated else "Generated"
    if meta.get("command"):
        head += f" by `{meta['command']}`"
    if meta.get("commit"):
        head += f" at commit {meta['commit']}"
    out.append(head + ".")
    reps = meta.get("reps", DEFAULT_ROBUST_REPS)
    counted = (
        ", and of the edges it visited where they were counted (the "
        "interpreter's count; on the GPU, for SSSP, the edge ranges its threads "
        "took in one more, untimed run of a build with `-DIRGL_COUNT_EDGES`)"
        if any(r.edge_visits is not None for c in cells for r in c.sources or ())
        else ""
    )
    if any(r.steps is not None for c in cells for r in c.sources or ()):
        counted += (
            ", and of the synchronization steps it took (kernel launches, grid "
            "barriers and the rounds block 0 took alone, counted in that untimed "
            "run of the `-DIRGL_COUNT_EDGES` build: each costs a round trip "
            "through the GPU's memory whatever the work)"
        )
    out.append(
        f"BFS and SSSP: per graph {meta.get('sources', DEFAULT_SOURCES)} sources "
        "(the hub of highest degree, a leaf and an isolated node where the graph "
        "has them, the rest uniformly random; seed "
        f"{meta.get('source_seed', DEFAULT_SOURCE_SEED)} mixed with the graph), "
        f"each the median of {_source_runs(meta, reps)} "
        f"({_source_warmups(cells)}), each "
        "checked against the CPU reference; min/median/max over the sources. "
        f"Other apps: min/median/max of {reps} timed runs after one warm-up. "
        "Host call to device synchronization. Reached edges = stored edges "
        "whose source node the search reached; levels = BFS depth + 1; SSSP's "
        "depth = its farthest finite distance (its distance windows follow it). A "
        f"source-based cell whose slowest source takes more than {SPREAD_LIMIT:g}× "
        "its fastest is described in the last column: time, reached edges and "
        "levels of the slowest over the fastest. It is explained by the work "
        f"unless some source takes more than {SPREAD_LIMIT:g}× (and "
        f"{SPREAD_NOISE_MS * 1000:g} µs) longer than another source that reached "
        f"at least 1/{SPREAD_LIMIT:g} of its edges, of its levels, (SSSP) of "
        "its depth and (BFS) of its top-down edges and bottom-up reads (replayed "
        "on the CPU from the program's own decisions: the reads the interpreter "
        "counts in `bfs` and `bfs_bottom_up`; on the two-hop path the reached "
        f"edges){counted}: then it is **unexplained**, with the worst such pair. "
        "Per-source times, reached edges, levels, depths, replayed reads, "
        "counted edge visits and steps are in `robust.json`."
    )
    planned = meta.get("planned")
    if planned is not None and len(cells) < planned:
        out.append(f"**In progress: {len(cells)} of {planned} cells done.**")
    wrong = [c for c in cells if not c.correct and not c.timed_out]
    if wrong:
        out.append(
            f"**{len(wrong)} of {len(cells)} cells are wrong or missing:** "
            + ", ".join(f"{c.app} on {c.graph}" for c in wrong)
            + "."
        )
    late = [c for c in cells if c.timed_out]
    if late:
        out.append(
            f"{len(late)} cells ran past the time limit: "
            + ", ".join(f"{c.app} on {c.graph}" for c in late)
            + "."
        )
    odd = unexplained_cells(cells)
    if odd:
        out.append(
            f"**{len(odd)} cells have a spread the work does not explain:** "
            + ", ".join(f"{c.app} on {c.graph}" for c in odd)
            + "."
        )
    text = "\n\n".join(out) + "\n\n" + robust_table(cells)
    for note in notes:
        text += f"\n{note}\n"
    return text


def write_robust_json(
    path: Path, cells: Sequence[RobustCell], meta: Mapping[str, Any]
) -> None:
    """``robust.json``: the meta data and every cell with its sources."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    doc = {"meta": dict(meta), "cells": [c.to_json() for c in cells]}
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)


def read_robust_json(path: Path) -> tuple[list[RobustCell], dict[str, Any]]:
    """The cells and meta data of a ``robust.json``."""
    doc = json.loads(Path(path).read_text())
    return [RobustCell.from_json(c) for c in doc["cells"]], dict(doc["meta"])


# ---------------------------------------------------------------- command


def _usage_checks(args: argparse.Namespace) -> None:
    for flag, given in (
        ("--ablation", getattr(args, "ablation", False)),
        ("--configs", bool(getattr(args, "configs", None))),
        ("--rerun-identical", getattr(args, "rerun_identical", False)),
    ):
        if given:
            raise UsageError(f"{flag} does not apply with --robust")
    if args.sources is None:
        args.sources = DEFAULT_SOURCES
    if args.source_seed is None:
        args.source_seed = DEFAULT_SOURCE_SEED
    if args.sources < 1:
        raise UsageError(f"--sources must be at least 1, got {args.sources}")


def _plan(
    args: argparse.Namespace, progress: IO[str]
) -> tuple[list[RobustJob], dict[str, tuple[int | None, int | None, str | None]]]:
    """The jobs (one per app) and each graph's size or why it does not load."""
    from .bench_all import prepare_graph, selected_apps, split_list

    bdir = args.benchmarks_dir
    apps = selected_apps(args.apps, bdir)
    graphs = split_list(args.graphs) or list(
        QUICK_ROBUST_GRAPHS if args.quick else ROBUST_GRAPHS
    )
    larger = [] if args.graphs or args.quick else list(ROBUST_SOURCE_GRAPHS)
    for g in graphs:
        check_graph_arg(g)
    reps = args.reps if args.reps is not None else DEFAULT_ROBUST_REPS
    if reps < 1:
        raise UsageError(f"--reps must be at least 1, got {reps}")
    args.reps = reps
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir(bdir))
    if cache is not None:
        os.environ.setdefault("IRGL_REFERENCE_CACHE", str(Path(cache) / "references"))
    timeout = args.timeout if args.timeout is not None else DEFAULT_ROBUST_TIMEOUT_S
    lowers = BACKENDS[args.backend].lowers
    extra = ["--backend", args.backend] + (["-p", args.pipeline] if lowers else [])
    jobs: list[RobustJob] = []
    for name in apps:
        app_graphs = graphs
        try:
            spec = load_app(name, bdir)
            if spec.uses_source:
                app_graphs = graphs + larger
            own = spec.params.get(
                "bench_graphs_quick" if args.quick else "bench_graphs"
            )
            if own:  # an input that is not one of the families (DMR's mesh)
                app_graphs = list(own)
        except AppError:
            pass  # the worker reports it, once per graph
        jobs.append(
            RobustJob(
                name,
                app_graphs,
                args.sources,
                args.source_seed,
                reps,
                timeout if timeout > 0 else None,
                bdir,
                cache,
                extra,
            )
        )
    sizes: dict[str, tuple[int | None, int | None, str | None]] = {}
    for g in dict.fromkeys(x for j in jobs for x in j.graphs):
        if cache is None:
            continue  # each worker generates it anyway
        sizes[g] = prepare_graph(
            g, cache, progress, "irgl-bench all --robust", weighted=True
        )
    return jobs, sizes


def _summary(cell: RobustCell) -> str:
    s = cell.stats()
    parts = [f"{s[0]:.3f}/{s[1]:.3f}/{s[2]:.3f} ms"] if s else []
    parts.append(_correct(cell).replace("**", ""))
    spread = explain_spread(cell)
    if spread is not None and spread.flagged:
        parts.append(
            f"spread {spread.time_ratio:.2f}x "
            + ("explained" if spread.explained else "UNEXPLAINED")
        )
    if cell.wall_s is not None:
        parts.append(f"({cell.wall_s:.1f} s)")
    return ", ".join(parts)


def cmd_robust(args: argparse.Namespace, runner: RobustRunner | None = None) -> int:
    """``irgl-bench all --robust``: plan, run, write the reports; the exit code
    (1 if a cell is wrong or has no result; a timeout is a result)."""
    from .bench_all import partial_path

    progress = sys.stderr
    _usage_checks(args)
    if runner is None:
        reason = BACKENDS[args.backend].unavailable()
        if reason is not None:
            progress.write(
                "irgl-bench all --robust: error: cannot run with --backend "
                f"{args.backend}: {reason}; nothing was run and no report was "
                "written\n"
            )
            return 1
    guarded = args.out_dir is None
    out_dir = Path(args.out_dir) if args.out_dir else default_benchmarks_dir()
    md_path, json_path = out_dir / "RESULTS.md", out_dir / "robust.json"
    md_partial, json_partial = partial_path(md_path), partial_path(json_path)
    try:
        check_markdown(md_path, ROBUST_BEGIN_MARKER, ROBUST_END_MARKER)
    except ReportError as e:
        raise UsageError(str(e)) from None
    jobs, sizes = _plan(args, progress)
    kept: list[RobustCell] = []
    if getattr(args, "merge", False) and json_path.is_file():
        redo = {(j.app, g) for j in jobs for g in j.graphs}
        try:
            earlier, _ = read_robust_json(json_path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"cannot --merge {json_path}: {e}") from None
        kept = [c for c in earlier if (c.app, c.graph) not in redo]
    planned = len(kept) + sum(len(j.graphs) for j in jobs)
    meta: dict[str, Any] = {
        "generated": _now(),
        "command": "irgl-bench " + shlex.join(getattr(args, "argv", ["all"])),
        "commit": current_commit(),
        "reps": args.reps,
        "short_runs_total_ms": SHORT_RUNS_TOTAL_MS,
        "max_source_reps": MAX_SOURCE_REPS,
        "sources": args.sources,
        "source_seed": args.source_seed,
        "spread_limit": SPREAD_LIMIT,
        "apps": list(dict.fromkeys([*(c.app for c in kept), *(j.app for j in jobs)])),
        "graphs": list(
            dict.fromkeys(
                [*(c.graph for c in kept), *(g for j in jobs for g in j.graphs)]
            )
        ),
        "planned": planned,
    }
    where = f"{md_partial} ({md_path.name} once every cell has a result)"
    progress.write(
        f"irgl-bench all --robust: {planned} cells ({len(jobs)} apps, "
        f"{args.sources} sources per graph for source-based apps, {args.reps} "
        f"timed runs each) -> {where if guarded else md_path}\n"
    )
    cells: list[RobustCell] = list(kept)

    from .bench_all import discover_apps

    rank = {a: k for k, a in enumerate(discover_apps(args.benchmarks_dir))}
    merged = [f"{len(kept)} cells merged from {json_path.name}."] if kept else []

    def write(final: bool, notes: Sequence[str] = ()) -> None:
        gpus = sorted({c.gpu for c in cells if c.gpu})
        full = {**meta, "gpu": ", ".join(gpus) or None, "done": len(cells)}
        md, js = (md_path, json_path) if final else (md_partial, json_partial)
        ordered = sorted(cells, key=lambda c: rank.get(c.app, len(rank)))
        write_robust_json(js, ordered, full)
        section = render_robust_section(ordered, full, [*notes, *merged])
        update_markdown(md, section, ROBUST_BEGIN_MARKER, ROBUST_END_MARKER)

    width = len(str(planned))
    run = runner or SubprocessRobustRunner()
    try:
        for job in jobs:
            got: list[RobustCell] = []

            def on_cell(
                cell: RobustCell, job: RobustJob = job, got: list[RobustCell] = got
            ) -> None:
                nodes, edges, _ = sizes.get(cell.graph, (None, None, None))
                cell.nodes = cell.nodes if cell.nodes is not None else nodes
                cell.edges = cell.edges if cell.edges is not None else edges
                got.append(cell)
                cells.append(cell)
                progress.write(
                    f"[{len(cells):>{width}}/{planned}] {job.app} on {cell.graph}: "
                    f"{_summary(cell)}\n"
                )
                progress.flush()
                try:
                    write(final=not guarded)
                except (ReportError, OSError) as e:
                    progress.write(f"irgl-bench all --robust: warning: {e}\n")

            broken = {g: sizes[g][2] for g in job.graphs if g in sizes and sizes[g][2]}
            runnable = [g for g in job.graphs if g not in broken]
            for g, why in broken.items():
                on_cell(RobustCell(job.app, g, f"error: {why}", date=_now()))
            if runnable:
                try:
                    run(dataclasses.replace(job, graphs=runnable), on_cell)
                except Exception as e:  # a broken runner must not lose the table
                    progress.write(f"irgl-bench all --robust: {job.app}: {e}\n")
            seen = {c.graph for c in got}
            for g in runnable:
                if g not in seen:
                    on_cell(RobustCell(job.app, g, "error: no result", date=_now()))
    except KeyboardInterrupt:
        progress.write("\nirgl-bench all --robust: interrupted\n")
        return 130
    missing = [c for c in cells if c.status.startswith("error") and not c.timed_out]
    if guarded and missing:
        note = (
            f"{len(missing)} of {len(cells)} cells have no result: {md_path.name} "
            f"and {json_path.name} were left as they were."
        )
        try:
            write(final=False, notes=[note])
        except ReportError as e:
            raise UsageError(str(e)) from None
        progress.write(
            f"irgl-bench all --robust: {note} This run's results are in "
            f"{md_partial} and {json_partial}\n"
        )
    else:
        try:
            write(final=True)
        except ReportError as e:
            raise UsageError(str(e)) from None
        if guarded:
            for stale in (md_partial, json_partial):
                stale.unlink(missing_ok=True)
    return _verdict(cells, md_path, json_path)


def _verdict(cells: Sequence[RobustCell], md_path: Path, json_path: Path) -> int:
    progress = sys.stderr
    late = [c for c in cells if c.timed_out]
    wrong = [c for c in cells if not c.correct and not c.timed_out]
    odd = unexplained_cells(cells)
    if late:
        progress.write(
            f"irgl-bench all --robust: {len(late)} cells timed out: "
            + ", ".join(f"{c.app} on {c.graph}" for c in late)
            + "\n"
        )
    if odd:
        progress.write(
            f"irgl-bench all --robust: {len(odd)} cells have a spread the work "
            "does not explain: "
            + ", ".join(f"{c.app} on {c.graph}" for c in odd)
            + "\n"
        )
    if wrong:
        lines = [
            f"irgl-bench all --robust: FAILED: {len(wrong)} of {len(cells)} cells:"
        ]
        lines += [f"  {c.app} on {c.graph}: {c.status}" for c in wrong]
        progress.write("\n".join(lines) + "\n")
        return 1
    progress.write(
        f"irgl-bench all --robust: {len(cells) - len(late)} cells correct; "
        f"report in {md_path} and {json_path} (or their .partial files)\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(worker_main())
