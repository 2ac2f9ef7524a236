"""The robustness benchmark's graphs, sources and cells (``irgl-bench all
--robust``): which sources a graph gets, what a source's run records, and
the rule that says whether a cell's spread among its sources is explained
by the work they did (:func:`explain_spread`)."""

from __future__ import annotations

import statistics
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from .graphs import CSRGraph
from .reference import INF, bfs_levels

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

#: Untimed runs of the counting build per source, at least
#: (:attr:`SourceRun.counted`; as many as the source's timed runs where
#: those are more).
COUNTED_RUNS = 5

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
    #: the atomic read-modify-writes of the program's code in that untimed
    #: run (:meth:`irgl_runner.api.Program.atomics_take`: SSSP's improving
    #: minimums and stamp exchanges), where one ran
    atomics: int | None = None
    #: the span of that untimed run (:meth:`irgl_runner.api.Program.span_take`:
    #: for every step, the most edges one thread read, summed; a hub's
    #: edges read by one block's threads), where one ran
    span: int | None = None
    #: every counted run's totals (``edge_visits`` where counted, ``steps``
    #: summed, ``atomics``, ``span``; :data:`COUNTED_RUNS` untimed runs of
    #: the counting build, the first of which sets the fields above): the
    #: work of one source varies from run to run where which thread reads a
    #: hub's edges does (SSSP on hub graphs), and :func:`work_ratio` takes
    #: the range
    counted: list[dict[str, int]] | None = None
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
    unexplained: list[int]  # sources > SPREAD_LIMIT x what their work accounts for
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


def _count(s: SourceRun, o: SourceRun, name: str, label: str) -> str:
    """``, LABEL A vs B`` for the count ``name`` (``edge_visits``,
    ``atomics``) where both were counted; a count that varied over the
    counted runs as ``least–most``."""
    mine, theirs = _counted_range(s, name), _counted_range(o, name)
    if mine is None or theirs is None:
        return ""

    def text(r: tuple[int, int]) -> str:
        return f"{r[0]:,}" if r[0] == r[1] else f"{r[0]:,}–{r[1]:,}"

    return f", {label} {text(mine)} vs {text(theirs)}"


def _own_spread(runs: Sequence[SourceRun]) -> str:
    """``; one source's own timed runs up to R× apart (role node)`` where,
    among the sources of at least half the slowest one's median, some
    source's slowest timed run took over the spread limit times its fastest:
    the same source, the same reached work, so that much of the cell's
    spread is run-to-run (which thread reads a hub's edges in a step). The
    short sources are left out: a search that reaches nothing varies with
    the machine's state, not with its work."""
    slowest = max((_ms_of(r) for r in runs), default=0.0)
    own = [
        (max(r.times_ms) / min(r.times_ms), r)
        for r in runs
        if len(r.times_ms) > 1 and min(r.times_ms) > 0 and _ms_of(r) >= slowest / 2
    ]
    if not own:
        return ""
    ratio, run = max(own, key=lambda x: x[0])
    if ratio <= SPREAD_LIMIT:
        return ""
    return (
        f"; one source's own timed runs up to {ratio:.2f}× apart "
        f"({run.role} {run.node})"
    )


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


#: The counts of a counted run that measure work: the edges it visited,
#: its synchronization steps (summed over their kinds), its atomics, its
#: span (the longest chain of one thread's edge reads a step, summed).
_COUNTED = ("edge_visits", "steps", "atomics", "span")


def _total(run: SourceRun, name: str) -> int | None:
    """The count ``name`` of ``run`` (steps summed), None where not counted."""
    value = getattr(run, name)
    return sum(value.values()) if isinstance(value, dict) else value


def _counted_range(run: SourceRun, name: str) -> tuple[int, int] | None:
    """The least and the most of count ``name`` over ``run``'s counted runs
    (:attr:`SourceRun.counted`; its one count where it has no list), None
    where not counted."""
    values = [c[name] for c in run.counted or () if name in c]
    if not values:
        one = _total(run, name)
        return None if one is None else (one, one)
    return min(values), max(values)


def _measures(s: SourceRun, o: SourceRun) -> list[tuple[int, int]]:
    """(``s``'s, ``o``'s) amount of every measure of work both have: the
    reached edges, the levels, the depth, each count of the app's replay, the
    edge visits, the steps, the atomics, the span. A count that varies from
    run to run (several counted runs) pairs ``s``'s most with ``o``'s least:
    the time of each is a median over runs whose work varies as much."""
    pairs = [
        (s.reached_edges, o.reached_edges),
        (s.levels, o.levels),
        (s.depth, o.depth),
    ]
    if s.replayed is not None and o.replayed is not None:
        pairs += [(v, o.replayed.get(k, 0)) for k, v in s.replayed.items()]
    for name in _COUNTED:
        mine, theirs = _counted_range(s, name), _counted_range(o, name)
        if mine is not None and theirs is not None:
            pairs.append((mine[1], theirs[0]))
    return pairs


def work_ratio(s: SourceRun, o: SourceRun) -> float:
    """How many times ``o``'s work ``s`` did: the largest ratio of a measure
    of ``s``'s to ``o``'s (:func:`_measures`; infinite where ``o`` has none of
    a measure ``s`` has), at least 1."""
    ratio = 1.0
    for mine, theirs in _measures(s, o):
        if mine > theirs:
            ratio = max(ratio, mine / theirs if theirs > 0 else float("inf"))
    return ratio


def explain_spread(
    cell: RobustCell, limit: float = SPREAD_LIMIT, noise_ms: float = SPREAD_NOISE_MS
) -> Spread | None:
    """The spread of a source-based cell's per-source times (None for other
    apps or without two timed sources).

    A source ``s`` is *unexplained* when some other source ``o`` ran more
    than ``limit`` times (and ``noise_ms``) faster than the work accounts
    for: ``time(s) > limit * work_ratio(s, o) * time(o)``, where
    :func:`work_ratio` is the largest ratio of any measure of ``s``'s work to
    ``o``'s (its reached edges, BFS levels, SSSP depth, the app's replayed
    reads, and where both were counted its edge visits, synchronization
    steps, atomics and span), at least 1. With the fastest source as ``o``
    this is the issue's rule (a source above ``limit`` times the fastest
    needs a reason in its work), in proportion: a source 1.3× slower with
    1.2× the span of a step's longest chain of edge reads is explained, one
    10× slower with 1.3× the edges is not. Comparing with every source also
    catches, say, a hub twice as slow as a random source that reaches the
    same component.
    """
    runs = [s for s in cell.sources or () if s.median_ms is not None]
    if len(runs) < 2:
        return None
    fast, slow = min(runs, key=_ms_of), max(runs, key=_ms_of)
    t_fast, t_slow = _ms_of(fast), _ms_of(slow)
    ratio = t_slow / t_fast if t_fast > 0 else float("inf")
    pairs: list[tuple[SourceRun, SourceRun, float]] = []  # (slow, faster, excess)
    for s in runs:
        worst: tuple[SourceRun, SourceRun, float] | None = None
        for o in runs:
            if o is s or _ms_of(s) - _ms_of(o) <= noise_ms:
                continue
            allowed = limit * work_ratio(s, o) * _ms_of(o)
            if _ms_of(s) > allowed and (
                worst is None or _ms_of(s) / allowed > worst[2]
            ):
                worst = (s, o, _ms_of(s) / allowed)
        if worst is not None:
            pairs.append(worst)
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
        s, o, _ = max(pairs, key=lambda p: p[2])
        reason += (
            f"{'; ' if reason else ''}**unexplained**: {len(pairs)} source(s) "
            f"more than {limit:g}× slower than their work accounts for, e.g. "
            f"{s.role} {s.node} {_ratio(_ms_of(s), _ms_of(o))} {o.role} {o.node} "
            f"with {work_ratio(s, o):.2f}× its work "
            f"({s.reached_edges:,} vs {o.reached_edges:,} edges, {s.levels} vs "
            f"{o.levels} levels{_depths(cell, s, o)}{_replayed(s, o)}"
            f"{_count(s, o, 'edge_visits', 'edge visits')}{_steps(s, o)}"
            f"{_count(s, o, 'atomics', 'atomics')}{_count(s, o, 'span', 'span')})"
        )
    elif flagged:
        reason += "; explained by the work"
    if flagged:
        reason += _own_spread(runs)
    return Spread(
        ratio,
        fast.node,
        slow.node,
        (fast.reached_edges, slow.reached_edges),
        (fast.levels, slow.levels),
        flagged or bool(pairs),
        not pairs,
        [s.node for s, _, _ in pairs],
        reason,
    )


def cell_names(cells: Sequence[RobustCell]) -> str:
    """``bfs on rmat:16@2, sssp on ...``: the cells, for a message."""
    return ", ".join(f"{c.app} on {c.graph}" for c in cells)


def unexplained_cells(cells: Sequence[RobustCell]) -> list[RobustCell]:
    """The cells with a spread among their sources the work does not explain."""
    return [
        c
        for c in cells
        if (sp := explain_spread(c)) is not None and sp.flagged and not sp.explained
    ]


def now_iso() -> str:
    """The local time now, ISO 8601 to the second (a cell's date)."""
    from datetime import datetime

    return datetime.now().astimezone().isoformat(timespec="seconds")


def one_line(text: str, limit: int = 400) -> str:
    """``text`` on one line, at most ``limit`` characters (an error in a
    cell)."""
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
