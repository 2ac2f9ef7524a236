"""The robustness benchmark's worker (``python -m irgl_runner.robust APP
--graphs ...``): one app over its graphs, each source timed in turns with
the graph's other sources, checked against the CPU reference, and its work
counted (reached edges, the app's replay, a counting build's edge visits
and steps); one JSON line per graph."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .apps import (
    AppError,
    AppSpec,
    RunContext,
    alloc_outputs,
    load_app,
)
from .backends import BACKENDS, RunnableProgram
from .errors import IrglError, UsageError
from .graph_args import default_cache_dir, resolve_graph
from .graphs import CSRGraph, GraphFormatError
from .robust_cells import (
    COUNTED_RUNS,
    DEFAULT_ROBUST_REPS,
    DEFAULT_SOURCE_SEED,
    DEFAULT_SOURCES,
    MAX_SOURCE_REPS,
    SHORT_RUNS_TOTAL_MS,
    RobustCell,
    SourceRun,
    now_iso,
    one_line,
    pick_sources,
    reached_work,
)

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
    are its edge reads in one more, untimed run of that build."""
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
    """A counting build of an app (:meth:`irgl_runner.api.Program.edge_reads_take`)."""

    def call(self, host_fn: str, *args: object) -> Any: ...
    def edge_reads_take(self) -> int: ...
    def steps_take(self) -> dict[str, int]: ...
    def atomics_take(self) -> int: ...
    def span_take(self) -> int: ...


def count_edges(
    app: AppSpec,
    counter: EdgeCounter,
    graph: CSRGraph,
    runs: Sequence[SourceRun],
    counted_runs: int = COUNTED_RUNS,
) -> None:
    """Set each run's ``steps``, ``atomics`` and ``span`` to the
    synchronization steps, the program's atomics and the span (the most
    edges one thread read in a step, summed) that an untimed run of the
    counting build ``counter`` from its source takes and, for an
    app without a replay of its work (SSSP), its ``edge_visits`` to the
    edges the run's threads read (an app with a replay has its reads counted
    on the CPU from its own decisions). It runs
    ``counted_runs`` times a source, or as often as it was timed where that
    is more: the first run sets those fields, and every run's totals go to
    ``counted`` (the work varies between runs where which thread reads a
    hub's edges does, so the counts sample it as often as the times do)."""
    device_graph = counter.upload_graph(graph)
    for run in runs:
        run.counted = []
        for k in range(max(counted_runs, len(run.times_ms))):
            ctx = RunContext(app, graph, run.node)
            ctx.device_graph = device_graph
            for name, values in alloc_outputs(app, counter, ctx).items():
                ctx.arrays[name].from_numpy(values)
            counter.edge_reads_take()  # what earlier calls left
            counter.steps_take()
            counter.atomics_take()
            counter.span_take()
            counter.call(app.host_fn, *app.args(ctx))
            reads = counter.edge_reads_take()
            steps, atomics = counter.steps_take(), counter.atomics_take()
            span = counter.span_take()
            totals = {"steps": sum(steps.values()), "atomics": atomics, "span": span}
            if app.source_work is None:
                totals["edge_visits"] = reads
            run.counted.append(totals)
            if k == 0:
                run.steps, run.atomics, run.span = steps, atomics, span
                if app.source_work is None:
                    run.edge_visits = reads


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
    date = now_iso()
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
            cell = RobustCell(args.app, g, f"error: {one_line(str(e))}", date=now_iso())
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
            cell = RobustCell(args.app, g, f"error: {one_line(str(e))}", date=now_iso())
        if not cell.correct:
            code = 1
        _emit(cell.to_json())
    return code


def _emit(record: Mapping[str, Any]) -> None:
    print(json.dumps(record), flush=True)
