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

This module holds the runner (the worker processes) and the command; the
cells, sources and spread rule are in :mod:`irgl_runner.robust_cells`, the
worker in :mod:`irgl_runner.robust_worker` and the reports in
:mod:`irgl_runner.robust_report` (their public names are re-exported here).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .apps import (
    AppError,
    default_benchmarks_dir,
    load_app,
)
from .backends import BACKENDS
from .errors import UsageError
from .graph_args import check_graph_arg, default_cache_dir
from .report import (
    ReportError,
    check_markdown,
    current_commit,
    signal_text,
    update_markdown,
)
from .robust_cells import (
    COUNTED_RUNS,
    DEFAULT_ROBUST_REPS,
    DEFAULT_ROBUST_TIMEOUT_S,
    DEFAULT_SOURCE_SEED,
    DEFAULT_SOURCES,
    MAX_SOURCE_REPS,
    QUICK_ROBUST_GRAPHS,
    ROBUST_BEGIN_MARKER,
    ROBUST_END_MARKER,
    ROBUST_GRAPHS,
    ROBUST_SOURCE_GRAPHS,
    SHORT_RUNS_TOTAL_MS,
    SPREAD_LIMIT,
    SPREAD_NOISE_MS,
    STARTUP_TIMEOUT_S,
    RobustCell,
    SourceRun,
    cell_names,
    explain_spread,
    now_iso,
    one_line,
    pick_sources,
    reached_work,
    unexplained_cells,
)
from .robust_report import (
    correct_mark,
    read_robust_json,
    render_robust_section,
    write_robust_json,
)
from .robust_worker import (
    count_edges,
    counting_program,
    run_sources,
    worker_main,
)

__all__ = [
    "cmd_robust",
    "COUNTED_RUNS",
    "count_edges",
    "counting_program",
    "DEFAULT_ROBUST_REPS",
    "DEFAULT_ROBUST_TIMEOUT_S",
    "DEFAULT_SOURCE_SEED",
    "DEFAULT_SOURCES",
    "explain_spread",
    "MAX_SOURCE_REPS",
    "pick_sources",
    "QUICK_ROBUST_GRAPHS",
    "reached_work",
    "read_robust_json",
    "render_robust_section",
    "ROBUST_BEGIN_MARKER",
    "ROBUST_END_MARKER",
    "ROBUST_GRAPHS",
    "ROBUST_SOURCE_GRAPHS",
    "RobustCell",
    "RobustJob",
    "RobustRunner",
    "run_sources",
    "SourceRun",
    "SPREAD_LIMIT",
    "SPREAD_NOISE_MS",
    "SubprocessRobustRunner",
    "unexplained_cells",
    "worker_main",
    "write_robust_json",
]

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
    device: str | None = None  # the CUDA device it runs on (--devices)


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
        from .bench_all import device_env

        proc = subprocess.Popen(
            self.command(job, graphs),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env=device_env(job.device),
        )
        lines: queue.Queue[str | None] = queue.Queue()
        err_tail: list[str] = []
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        tail = threading.Thread(target=_tail, args=(proc.stderr, err_tail), daemon=True)
        tail.start()
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
                            date=now_iso(),
                            wall_s=time.monotonic() - started,
                            log="".join(err_tail)[-4000:] or None,
                        )
                    )
                    return done + 1
                if line is None:  # the worker ended early
                    proc.wait()
                    # its last words: the stderr reader may still be behind
                    tail.join(timeout=STDERR_DRAIN_S)
                    text = "".join(err_tail)
                    on_cell(
                        RobustCell(
                            job.app,
                            graphs[done],
                            "error: " + _crash_text(text, proc.returncode or 0),
                            date=now_iso(),
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


#: How long a crashed worker's stderr may take to be read to its end.
STDERR_DRAIN_S = 5.0


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
    last = one_line(lines[-1]) if lines else ""
    if returncode < 0:
        return signal_text(returncode) + (f": {last}" if last else "")
    return last or f"worker ended (exit code {returncode}) without a result"


def _kill_group(proc: subprocess.Popen[str]) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


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
    parts.append(correct_mark(cell).replace("**", ""))
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
        "generated": now_iso(),
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
    lock = threading.Lock()

    def run_job(job: RobustJob) -> None:
        """One app's cells (on a device of ``--devices`` if given)."""
        got: list[RobustCell] = []
        on = f" (device {job.device})" if job.device is not None else ""

        def on_cell(cell: RobustCell) -> None:
            nodes, edges, _ = sizes.get(cell.graph, (None, None, None))
            cell.nodes = cell.nodes if cell.nodes is not None else nodes
            cell.edges = cell.edges if cell.edges is not None else edges
            with lock:
                got.append(cell)
                cells.append(cell)
                progress.write(
                    f"[{len(cells):>{width}}/{planned}] {job.app} on {cell.graph}"
                    f"{on}: {_summary(cell)}\n"
                )
                progress.flush()
                try:
                    write(final=not guarded)
                except (ReportError, OSError) as e:
                    progress.write(f"irgl-bench all --robust: warning: {e}\n")

        broken = {g: sizes[g][2] for g in job.graphs if g in sizes and sizes[g][2]}
        runnable = [g for g in job.graphs if g not in broken]
        for g, why in broken.items():
            on_cell(RobustCell(job.app, g, f"error: {why}", date=now_iso()))
        if runnable:
            try:
                run(dataclasses.replace(job, graphs=runnable), on_cell)
            except Exception as e:  # a broken runner must not lose the table
                with lock:
                    progress.write(f"irgl-bench all --robust: {job.app}: {e}\n")
        seen = {c.graph for c in got}
        for g in runnable:
            if g not in seen:
                on_cell(RobustCell(job.app, g, "error: no result", date=now_iso()))

    def on_device(job: RobustJob, device: str) -> None:
        run_job(dataclasses.replace(job, device=device))

    from .bench_all import each_on_a_device

    try:
        if len(args.devices) < 2:
            for job in jobs:
                run_job(job)
        else:  # one app at a time on each device
            each_on_a_device(jobs, args.devices, on_device)
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
            + cell_names(late)
            + "\n"
        )
    if odd:
        progress.write(
            f"irgl-bench all --robust: {len(odd)} cells have a spread the work "
            "does not explain: " + cell_names(odd) + "\n"
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
