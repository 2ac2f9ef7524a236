"""``irgl-bench all``: every app on every graph, each run in its own
``irgl-bench run`` process (a crash or hang loses one row, not the table),
with progress on stderr and the reports (``RESULTS.md`` between its
markers, ``results.json``, ``results.png``) written as rows come in.

It first checks that the backend can run here (a GPU for ``cuda``). The
benchmarks directory's reports (the default ``--out-dir``; tracked files)
are replaced only when every run has a result: until then, and if some run
has none, the rows go to ``RESULTS.partial.md`` / ``results.partial.json``
beside them. With ``--out-dir`` the reports there are written as rows come
in, errors included.

``irgl-bench all --ablation`` runs every app and graph once per
configuration of :mod:`irgl_runner.ablation` (``none``, each optimization
alone, ``all``, ``default``) and writes its own section of ``RESULTS.md``
(one column per configuration) and ``ablation.json``. A configuration whose
CUDA program is identical to an earlier one's for that app (an option with
nothing to change in it) is not run again: its cells repeat the earlier
time, marked ``(= name)`` (``--rerun-identical`` runs it anyway).
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, TextIO, TypeVar

from .ablation import Configuration, configurations, select_configurations
from .apps import AppError, AppSpec, default_benchmarks_dir, load_app
from .backends import BACKENDS, DEFAULT_BACKEND
from .build import emit_program, library_path
from .errors import CompileError, UsageError
from .generators import parse_spec
from .graph_args import check_graph_arg, default_cache_dir, resolve_graph
from .graphs import GraphFormatError
from .report import (
    ABLATION_BEGIN_MARKER,
    ABLATION_END_MARKER,
    BEGIN_MARKER,
    END_MARKER,
    BenchRow,
    ReportError,
    check_markdown,
    current_commit,
    is_timeout,
    read_json,
    render_ablation_section,
    render_section,
    signal_text,
    update_markdown,
    write_chart,
    write_json,
    wrong_rows,
)

__all__ = [
    "APP_ORDER",
    "BenchJob",
    "DEFAULT_ABLATION_TIMEOUT_S",
    "DEFAULT_GRAPHS",
    "DEFAULT_TIMEOUT_S",
    "QUICK_GRAPHS",
    "Runner",
    "SubprocessRunner",
    "ablation_configs",
    "cmd_all",
    "cmd_build",
    "discover_apps",
    "identical_configs",
    "run_all",
]

#: Graphs of the full table: a power-law graph (Graph500 RMAT), a
#: high-diameter road-like grid, a uniform random graph (with isolated
#: nodes), each with about a million nodes or more, and a chain of a million
#: nodes (diameter a million: one BFS/SSSP step per node, ~3 s per run
#: outlined, ~25 s with host loops).
DEFAULT_GRAPHS: tuple[str, ...] = (
    "rmat:20",
    "grid:2048x2048",
    "random:1000000:8000000",
    "path:1000000",
)

#: Graphs of ``irgl-bench all --quick`` (seconds per app).
QUICK_GRAPHS: tuple[str, ...] = (
    "rmat:12",
    "grid:64x64",
    "random:10000:40000",
    "path:10000",
)

#: Apps listed in this order first, others after them alphabetically.
APP_ORDER: tuple[str, ...] = ("bfs", "sssp", "cc", "pr", "tc", "mst", "mis", "dmr")

DEFAULT_TIMEOUT_S = 1200.0

#: Per-run limit of ``--ablation`` (configurations without outlining take
#: minutes on the chain): a run past it is a ``timeout`` cell, not a failure.
DEFAULT_ABLATION_TIMEOUT_S = 300.0


def discover_apps(benchmarks_dir: str | Path | None = None) -> list[str]:
    """Names of the directories of ``benchmarks_dir`` that hold an ``app.py``."""
    base = (
        Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
    )
    names = {
        p.parent.name
        for p in base.glob("*/app.py")
        if not p.parent.name.startswith((".", "_"))
    }
    known = [a for a in APP_ORDER if a in names]
    return known + sorted(names - set(known))


def location_args(
    benchmarks_dir: str | os.PathLike[str] | None,
    cache_dir: str | os.PathLike[str] | None,
) -> list[str]:
    """A child run's ``--benchmarks-dir`` (where given) and ``--cache-dir``
    (``--no-cache`` without one)."""
    args = [] if benchmarks_dir is None else ["--benchmarks-dir", str(benchmarks_dir)]
    return args + (
        ["--no-cache"] if cache_dir is None else ["--cache-dir", str(cache_dir)]
    )


@dataclass
class BenchJob:
    """One (app, graph) run of ``irgl-bench all``.

    ``nodes``/``edges`` are filled when the harness loaded the graph itself
    (so that even a failed row shows its size); ``error`` set means the run
    cannot happen (the app or graph did not load) and the runner is not called.
    """

    app: str
    graph: str
    reps: int = 5
    nodes: int | None = None
    edges: int | None = None
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    benchmarks_dir: Path | None = None
    cache_dir: Path | None = None
    error: str | None = None
    extra_args: list[str] = field(default_factory=list)
    config: str | None = None  # the ablation configuration (in extra_args' -p)
    same_as: str | None = None  # an earlier configuration with the same program
    device: str | None = None  # the CUDA device it runs on (--devices)


T = TypeVar("T")

#: Runs one job and describes the outcome; must not raise for a failing app
#: (``run_all`` turns an exception into an error row anyway).
Runner = Callable[[BenchJob], BenchRow]


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _one_line(text: str, limit: int = 400) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _error_text(stderr: str, returncode: int) -> str:
    """The gist of a failed ``irgl-bench run``'s stderr."""
    marker = "irgl-bench: error: "
    at = stderr.rfind(marker)
    if at >= 0:
        return _one_line(stderr[at + len(marker) :])
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if returncode < 0:
        return signal_text(returncode) + (f": {_one_line(lines[-1])}" if lines else "")
    if lines:
        return _one_line(lines[-1])
    return f"exit code {returncode} without a message"


def _last_record(stdout: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "app" in record:
                return record
    return None


class SubprocessRunner:
    """Runs each job as ``python -m irgl_runner.bench_cli run ...`` (isolation:
    a CUDA fault, crash or hang costs one row; ``timeout_s`` bounds a run)."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python

    def command(self, job: BenchJob) -> list[str]:
        """The command line for ``job``."""
        cmd = [
            self.python,
            "-m",
            "irgl_runner.bench_cli",
            "run",
            job.app,
            "--graph",
            job.graph,
            "--reps",
            str(job.reps),
        ]
        cmd += location_args(job.benchmarks_dir, job.cache_dir)
        return cmd + list(job.extra_args)

    def __call__(self, job: BenchJob) -> BenchRow:
        date = _now()
        start = time.monotonic()
        proc = subprocess.Popen(
            self.command(job),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so that a timeout also stops nvcc etc.
            env=device_env(job.device),
        )
        try:
            out, err = proc.communicate(timeout=job.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            return BenchRow(
                job.app,
                job.graph,
                f"error: timed out after {job.timeout_s:g} s",
                nodes=job.nodes,
                edges=job.edges,
                date=date,
                wall_s=time.monotonic() - start,
                log=(err or "")[-4000:] or None,
            )
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        wall = time.monotonic() - start
        record = _last_record(out)
        log = (
            err[-4000:]
            if err.strip() and (proc.returncode != 0 or record is None)
            else None
        )
        if record is None:
            return BenchRow(
                job.app,
                job.graph,
                "error: " + _error_text(err, proc.returncode),
                nodes=job.nodes,
                edges=job.edges,
                date=date,
                wall_s=wall,
                log=log,
            )
        check = record.get("check")
        if check == "failed":
            status = "failed: " + _one_line(
                str(record.get("problem") or _error_text(err, 1))
            )
        elif check in ("passed", "skipped"):
            status = (
                check
                if proc.returncode == 0
                else "error: " + _error_text(err, proc.returncode)
            )
        else:
            status = f"error: unexpected check status {check!r}"
        return BenchRow(
            job.app,
            job.graph,
            status,
            nodes=record.get("nodes", job.nodes),
            edges=record.get("edges", job.edges),
            median_ms=record.get("median_ms"),
            times_ms=list(record.get("times_ms") or []),
            gpu=record.get("gpu"),
            date=date,
            wall_s=wall,
            result=record.get("result"),
            log=log,
        )


def _kill_group(proc: subprocess.Popen) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _summary(row: BenchRow) -> str:
    parts = []
    if row.median_ms is not None:
        parts.append(f"{row.median_ms:.3f} ms")
        if row.edges_per_s:
            parts.append(f"{row.edges_per_s:.3g} edges/s")
    if row.status == "passed":
        parts.append("correct")
    elif row.status == "skipped":
        parts.append("unchecked")
    elif row.status.startswith("failed"):
        parts.append("WRONG: " + row.status.partition(":")[2].strip())
    else:
        parts.append("ERROR: " + row.status.partition(":")[2].strip())
    text = ", ".join(parts)
    if row.same_as is not None:
        text += f" (same program as [{row.same_as}], not run again)"
    elif row.wall_s is not None:
        text += f" ({row.wall_s:.1f} s)"
    return text


def run_all(
    jobs: Sequence[BenchJob],
    runner: Runner,
    progress: TextIO | None = None,
    on_row: Callable[[list[BenchRow]], None] | None = None,
    devices: Sequence[str] = (),
    earlier: Sequence[BenchRow] = (),
) -> list[BenchRow]:
    """Run every job with ``runner``; one row per job, always, in the jobs'
    order.

    Progress goes to ``progress`` (stderr by default), one line per job;
    ``on_row(rows_so_far)`` is called after each (to write partial reports).
    With two or more ``devices``, as many jobs run at once, each on its own
    device (``BenchJob.device``); a job whose program is an earlier
    configuration's takes that job's row once it is in, or that
    configuration's row among ``earlier`` (rows kept by ``--merge``) where
    this run does not redo it.
    """
    out = progress if progress is not None else sys.stderr
    width = len(str(len(jobs)))
    done: dict[int, BenchRow] = {}
    lock = threading.Lock()

    def label(k: int, job: BenchJob) -> str:
        what = f"{job.app} on {job.graph}"
        if job.config is not None:
            what += f" [{job.config}]"
        return f"[{k:>{width}}/{len(jobs)}] {what}"

    def run_one(job: BenchJob) -> BenchRow:
        start = time.monotonic()
        if job.error is not None:
            row = BenchRow(job.app, job.graph, "error: " + job.error, date=_now())
        else:
            try:
                row = runner(job)
            except Exception as e:  # a broken runner must not lose the table
                row = BenchRow(
                    job.app,
                    job.graph,
                    f"error: {type(e).__name__}: {_one_line(str(e))}",
                    date=_now(),
                )
        if row.config is None:
            row.config = job.config
        if row.nodes is None:
            row.nodes = job.nodes
        if row.edges is None:
            row.edges = job.edges
        if row.wall_s is None:
            row.wall_s = time.monotonic() - start
        return row

    def record(k: int, row: BenchRow) -> None:
        with lock:
            done[k] = row
            if on_row is not None:
                on_row([done[i] for i in sorted(done)])

    def twin_row(k: int, job: BenchJob) -> BenchRow | None:
        twin = _twin([done[i] for i in sorted(done) if i < k], job) or _twin(
            earlier, job
        )
        if twin is None:
            return None
        return dataclasses.replace(
            twin, config=job.config, same_as=job.same_as, wall_s=0.0
        )

    if len(devices) < 2:
        for k, job in enumerate(jobs, 1):
            out.write(label(k, job) + " ... ")
            out.flush()
            row = twin_row(k, job) or run_one(job)
            out.write(_summary(row) + "\n")
            out.flush()
            record(k, row)
        return [done[k] for k in sorted(done)]

    def on_device(item: tuple[int, BenchJob], device: str) -> None:
        k, job = item
        row = run_one(dataclasses.replace(job, device=device))
        with lock:
            out.write(f"{label(k, job)} (device {device}) ... {_summary(row)}\n")
            out.flush()
        record(k, row)

    numbered = list(enumerate(jobs, 1))
    each_on_a_device(
        [(k, j) for k, j in numbered if j.same_as is None], devices, on_device
    )
    twins = [(k, j) for k, j in numbered if j.same_as is not None]
    for k, job in twins:  # their configurations' rows are in now
        row = twin_row(k, job) or run_one(job)
        out.write(f"{label(k, job)} ... {_summary(row)}\n")
        record(k, row)
    return [done[k] for k in sorted(done)]


def device_env(device: str | None) -> dict[str, str] | None:
    """The environment of a run on CUDA device ``device`` (``--devices``):
    this one with ``CUDA_VISIBLE_DEVICES`` set; None (inherit) without one."""
    if device is None:
        return None
    return {**os.environ, "CUDA_VISIBLE_DEVICES": device}


def each_on_a_device(
    items: Sequence[T], devices: Sequence[str], run: Callable[[T, str], None]
) -> None:
    """`run(item, device)` for every item, as many calls at once as there are
    `devices`, each call holding one of them for itself (``--devices``);
    the first exception of a call is raised once every call has ended."""
    free: queue.Queue[str] = queue.Queue()
    for device in devices:
        free.put(device)

    def hold(item: T) -> None:
        device = free.get()
        try:
            run(item, device)
        finally:
            free.put(device)

    with ThreadPoolExecutor(max_workers=len(devices)) as pool:
        for future in [pool.submit(hold, item) for item in items]:
            future.result()


def prepare_graph(
    g: str, cache: Path | None, progress: IO[str], label: str, weighted: bool
) -> tuple[int | None, int | None, str | None]:
    """Load or generate graph ``g`` (into ``cache``) once before the runs,
    saying so on ``progress``: its node and edge counts, or the error that
    makes every cell on it an error row."""
    progress.write(f"{label}: preparing graph {g} ... ")
    progress.flush()
    start = time.monotonic()
    try:
        graph, _ = resolve_graph(g, True, weighted, cache)
    except (GraphFormatError, UsageError, OSError, ValueError) as e:
        progress.write(f"ERROR: {e}\n")
        return None, None, f"graph does not load: {_one_line(str(e))}"
    progress.write(
        f"{graph.num_nodes:,} nodes, {graph.num_edges:,} edges "
        f"({time.monotonic() - start:.1f} s)\n"
    )
    return graph.num_nodes, graph.num_edges, None


def _twin(rows: Sequence[BenchRow], job: BenchJob) -> BenchRow | None:
    """The row of the configuration ``job`` has the same program as."""
    if job.same_as is None:
        return None
    for row in rows:
        if (row.app, row.graph, row.config) == (job.app, job.graph, job.same_as):
            return row
    return None


def program_key(mlir: str | Path, pipeline: str) -> str:
    """What names the CUDA program ``mlir`` emits under ``pipeline`` (its
    text and build flags): its cached library's file name. Raises
    :class:`CompileError` where it does not emit."""
    return library_path(emit_program(mlir, pipeline)).name


def identical_configs(mlir: Path, configs: Sequence[Configuration]) -> dict[str, str]:
    """Configuration -> the first earlier one whose CUDA program for ``mlir``
    is the same (configurations that do not lower are left out: their runs
    report it)."""
    first: dict[str, str] = {}
    same: dict[str, str] = {}
    for c in configs:
        try:
            key = program_key(mlir, c.pipeline)
        except CompileError:
            continue
        if key in first:
            same[c.name] = first[key]
        else:
            first[key] = c.name
    return same


def split_list(values: Sequence[str] | None) -> list[str]:
    """Comma-separated values of a repeatable option, each once, in order."""
    items: list[str] = []
    for v in values or ():
        items += [x.strip() for x in v.split(",") if x.strip()]
    return list(dict.fromkeys(items))


def selected_apps(
    names: Sequence[str] | None, benchmarks_dir: str | Path | None
) -> list[str]:
    """The apps ``--apps`` names (all apps found when none), in order;
    ``UsageError`` naming the unknown ones."""
    found = discover_apps(benchmarks_dir)
    wanted = split_list(names)
    unknown = [a for a in wanted if a not in found]
    if unknown:
        raise UsageError(
            f"unknown app(s) {', '.join(unknown)} (known: {', '.join(found) or 'none'})"
        )
    return wanted or found


def _app_graphs(app: AppSpec, graphs: list[str], quick: bool) -> list[str]:
    key = "bench_graphs_quick" if quick else "bench_graphs"
    own = app.params.get(key) if quick else None
    if own is None:
        own = app.params.get("bench_graphs")
    return list(own) if own else graphs


def ablation_configs(args: argparse.Namespace) -> list[Configuration] | None:
    """The configurations of ``--ablation`` (``None`` without it); a usage
    error for ``--configs`` without ``--ablation`` or a backend other than
    ``cuda`` (the configurations are lowering options)."""
    names = split_list(getattr(args, "configs", None))
    if not getattr(args, "ablation", False):
        if names:
            raise UsageError("--configs applies only with --ablation")
        if getattr(args, "rerun_identical", False):
            raise UsageError("--rerun-identical applies only with --ablation")
        return None
    backend = getattr(args, "backend", DEFAULT_BACKEND)
    if backend != DEFAULT_BACKEND:
        raise UsageError(
            f"--ablation compares lowerings; it needs --backend {DEFAULT_BACKEND}, "
            f"not {backend}"
        )
    return select_configurations(configurations(args.pipeline), names)


def _timeout(args: argparse.Namespace, ablation: bool) -> float | None:
    """The per-run limit in seconds (``None``: none)."""
    t = args.timeout
    if t is None:
        t = DEFAULT_ABLATION_TIMEOUT_S if ablation else DEFAULT_TIMEOUT_S
    return t if t > 0 else None


def _plan(
    args: argparse.Namespace,
    progress: TextIO,
    configs: Sequence[Configuration] | None = None,
) -> tuple[list[BenchJob], list[str], int]:
    """The jobs of ``irgl-bench all`` (app-major, then graph, then
    configuration), the graph list and reps."""
    bdir = args.benchmarks_dir
    apps = selected_apps(args.apps, bdir)
    if not apps:
        where = bdir or default_benchmarks_dir()
        raise UsageError(f"no apps found (no */app.py under {where})")
    graphs = split_list(args.graphs) or list(
        QUICK_GRAPHS if args.quick else DEFAULT_GRAPHS
    )
    for g in graphs:
        check_graph_arg(g)
    reps = args.reps if args.reps is not None else (3 if args.quick else 5)
    if reps < 1:
        raise UsageError(f"--reps must be at least 1, got {reps}")
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir(bdir))
    if cache is not None:
        # the runs of one graph under many configurations share references
        os.environ.setdefault("IRGL_REFERENCE_CACHE", str(Path(cache) / "references"))
    variants: list[tuple[str | None, str]] = (
        [(c.name, c.pipeline) for c in configs]
        if configs is not None
        else [(None, args.pipeline)]
    )
    timeout = _timeout(args, configs is not None)
    lowers = BACKENDS[args.backend].lowers  # interp: no --pipeline to pass on

    per_app: dict[str, tuple[list[str], str | None]] = {}
    twins: dict[str, dict[str, str]] = {}
    dedupe = configs is not None and not getattr(args, "rerun_identical", False)
    for name in apps:
        try:
            spec = load_app(name, bdir)
        except AppError as e:
            per_app[name] = (graphs, f"app does not load: {_one_line(str(e))}")
            continue
        per_app[name] = (_app_graphs(spec, graphs, args.quick), None)
        if dedupe and configs is not None and spec.mlir.is_file():
            # with --merge, a configuration may repeat one this run leaves
            # out: its cells then repeat that one's earlier rows
            every = (
                configurations(args.pipeline)
                if getattr(args, "merge", False)
                else configs
            )
            selected = {c.name for c in configs}
            twins[name] = {
                config: earlier
                for config, earlier in identical_configs(spec.mlir, every).items()
                if config in selected
            }
            for config, earlier in twins[name].items():
                progress.write(
                    f"irgl-bench all: {name} [{config}] is the same program as "
                    f"[{earlier}]; not run again\n"
                )

    sizes: dict[str, tuple[int | None, int | None, str | None]] = {}
    for g in dict.fromkeys(x for gs, _ in per_app.values() for x in gs):
        if cache is None and parse_spec(g) is not None:
            sizes[g] = (None, None, None)  # each run generates it anyway
            continue
        sizes[g] = prepare_graph(g, cache, progress, "irgl-bench all", weighted=False)

    jobs = []
    for name in apps:
        app_graphs, app_error = per_app[name]
        for g in app_graphs:
            nodes, edges, graph_error = sizes.get(g, (None, None, None))
            for config, pipeline in variants:
                jobs.append(
                    BenchJob(
                        name,
                        g,
                        reps,
                        nodes=nodes,
                        edges=edges,
                        timeout_s=timeout,
                        benchmarks_dir=bdir,
                        cache_dir=cache,
                        error=app_error or graph_error,
                        extra_args=["--backend", args.backend]
                        + (["--pipeline", pipeline] if lowers else []),
                        config=config,
                        same_as=twins.get(name, {}).get(config or ""),
                    )
                )
    return jobs, graphs, reps


def _did_not_run(rows: Sequence[BenchRow], ablation: bool) -> list[BenchRow]:
    """The rows without a result: errors (a compile or runtime error, a crash,
    an app or graph that does not load); with ``--ablation`` a timeout is a
    result. Wrong outputs ran."""
    return [
        r
        for r in rows
        if r.status.startswith("error") and not (ablation and is_timeout(r))
    ]


def partial_path(path: Path) -> Path:
    """Where a guarded report's rows go until every run has a result:
    ``RESULTS.md`` -> ``RESULTS.partial.md``, ``results.json`` ->
    ``results.partial.json``."""
    return path.with_name(f"{path.stem}.partial{path.suffix}")


def cmd_all(args: argparse.Namespace, runner: Runner | None = None) -> int:
    """``irgl-bench all``: plan, run every job, write the reports; the exit code.

    With the real runner (``runner`` None) the backend must be able to run
    here (a GPU for ``cuda``): otherwise nothing is run or written (exit 1).
    Without ``--out-dir`` the reports are the benchmarks directory's (tracked
    files): rows go to ``*.partial.*`` files beside them as they come in, and
    the reports are replaced only when every run has a result.
    """
    progress = sys.stderr
    configs = ablation_configs(args)
    ablation = configs is not None
    if runner is None:
        reason = BACKENDS[args.backend].unavailable()
        if reason is not None:
            progress.write(
                f"irgl-bench all: error: cannot run with --backend {args.backend}: "
                f"{reason}; nothing was run and no report was written\n"
            )
            return 1
    guarded = args.out_dir is None
    out_dir = Path(args.out_dir) if args.out_dir else default_benchmarks_dir()
    md_path, json_path, png_path = (
        out_dir / "RESULTS.md",
        out_dir / ("ablation.json" if ablation else "results.json"),
        out_dir / "results.png",
    )
    md_partial, json_partial = partial_path(md_path), partial_path(json_path)
    markers = (
        (ABLATION_BEGIN_MARKER, ABLATION_END_MARKER)
        if ablation
        else (BEGIN_MARKER, END_MARKER)
    )
    meta: dict[str, object] = {
        "generated": _now(),
        "command": "irgl-bench " + shlex.join(args.argv),
        "commit": current_commit(),
    }
    # fail on broken markers before spending hours on runs
    try:
        check_markdown(md_path, *markers)
    except ReportError as e:
        raise UsageError(str(e)) from None
    jobs, graphs, reps = _plan(args, progress, configs)
    columns = [(c.name, c.pipeline) for c in configs or ()]
    kept: list[BenchRow] = []
    notes_merged: list[str] = []
    if getattr(args, "merge", False):
        kept, columns, note = _merge_earlier(
            json_path, jobs, columns, args.benchmarks_dir
        )
        notes_merged = [note] if note else []
    meta.update(
        reps=reps,
        apps=list(dict.fromkeys([*(r.app for r in kept), *(j.app for j in jobs)])),
        graphs=list(dict.fromkeys([*(r.graph for r in kept), *graphs])),
        planned=len(kept) + len(jobs),
    )
    if configs is not None:
        meta.update(timeout=_timeout(args, True), configurations=dict(columns))
    n_apps = len({j.app for j in jobs})
    per = f"{len(configs)} configurations, " if configs is not None else ""
    where = (
        f"{md_partial} ({md_path.name} once every run has a result)"
        if guarded
        else str(md_path)
    )
    progress.write(
        f"irgl-bench all: {len(jobs)} runs ({n_apps} apps, {per}{reps} timed "
        f"runs each) -> {where}\n"
    )

    def write(
        new: list[BenchRow],
        chart: str | None = None,
        notes: Sequence[str] = (),
        final: bool = True,
    ) -> None:
        """The reports (``final``) or, while guarded, their partial files."""
        rows = kept + new
        notes = [*notes, *notes_merged]
        gpus = sorted({r.gpu for r in rows if r.gpu})
        full = {**meta, "gpu": ", ".join(gpus) or None, "done": len(rows)}
        md, js = (md_path, json_path) if final else (md_partial, json_partial)
        write_json(js, rows, full)
        if configs is not None:
            section = render_ablation_section(rows, columns, full, notes)
        else:
            section = render_section(rows, full, chart=chart, notes=notes)
        update_markdown(md, section, *markers)

    def write_partial(rows: list[BenchRow]) -> None:
        try:
            write(rows, final=not guarded)
        except (ReportError, OSError) as e:  # keep running; the end retries
            progress.write(f"irgl-bench all: warning: cannot write results: {e}\n")

    rows: list[BenchRow] = []
    try:
        rows = run_all(
            jobs,
            runner or SubprocessRunner(),
            progress,
            write_partial,
            getattr(args, "devices", ()),
            kept,
        )
    except KeyboardInterrupt:
        written = f"{md_partial}, {json_partial}" if guarded else "partial results"
        progress.write(f"\nirgl-bench all: interrupted; {written} written\n")
        return 130
    missing = _did_not_run(rows, ablation)
    if guarded and missing:
        note = (
            f"{len(missing)} of {len(rows)} runs have no result: "
            f"{md_path.name} and {json_path.name} were left as they were."
        )
        try:
            write(rows, notes=[note], final=False)
        except ReportError as e:
            raise UsageError(str(e)) from None
        progress.write(
            f"irgl-bench all: {len(missing)} of {len(rows)} runs have no result, "
            f"so {md_path} and {json_path} were not changed; this run's results "
            f"are in {md_partial} and {json_partial} (rerun the failed ones, "
            "with --merge to keep the rest, or pass --out-dir to write the "
            "reports elsewhere)\n"
        )
        return _verdict(rows, ablation, md_partial, json_partial, None)
    notes: list[str] = []
    chart = None
    if ablation:
        pass  # the tables are the report
    elif args.no_chart:
        notes.append("No chart (`--no-chart`).")
    else:
        gpus = sorted({r.gpu for r in rows if r.gpu})
        title = "irgl-bench all" + (f" on {', '.join(gpus)}" if gpus else "")
        title += f" ({str(meta['generated'])[:10]})"
        note = write_chart(png_path, kept + rows, title=title)
        if note is None:
            chart = os.path.relpath(png_path, md_path.parent)
        else:
            if png_path.exists():
                png_path.unlink()  # a stale chart would contradict the table
            notes.append(note)
            progress.write(f"irgl-bench all: note: {note}\n")
    try:
        write(rows, chart, notes)
    except ReportError as e:
        raise UsageError(str(e)) from None
    if guarded:
        for stale in (md_partial, json_partial):
            stale.unlink(missing_ok=True)
    return _verdict(rows, ablation, md_path, json_path, png_path if chart else None)


def _merge_earlier(
    json_path: Path,
    jobs: Sequence[BenchJob],
    columns: list[tuple[str, str]],
    benchmarks_dir: str | Path | None = None,
) -> tuple[list[BenchRow], list[tuple[str, str]], str | None]:
    """``--merge``: the rows of ``json_path`` that this run does not redo, the
    configuration columns of both (in the standard order) and a note saying
    what was merged. A configuration whose pipeline changed since (an
    ablation option added, say) keeps its earlier rows where each row's app
    emits the same CUDA program under both pipelines; otherwise the merge is
    refused, naming the apps to redo."""
    try:
        rows, meta = read_json(json_path)
    except ReportError as e:
        raise UsageError(f"cannot --merge: {e}") from None
    planned = {(j.app, j.graph, j.config) for j in jobs}
    kept = [r for r in rows if (r.app, r.graph, r.config) not in planned]
    earlier = meta.get("configurations") or {}
    now = dict(columns)
    same_programs = 0
    if columns and isinstance(earlier, dict):
        changed = {
            name: pipeline
            for name, pipeline in earlier.items()
            if name in now and now[name] != pipeline
        }
        pairs = sorted(
            {
                (r.app, r.config)
                for r in kept
                if r.config is not None and r.config in changed
            }
        )
        differ = [
            (app, name)
            for app, name in pairs
            if not _same_program(app, changed[name], now[name], benchmarks_dir)
        ]
        if differ:
            name = differ[0][1]
            apps = sorted({app for app, _ in differ})
            raise UsageError(
                f"cannot --merge: configuration {name!r} was {changed[name]!r} in "
                f"{json_path}, now {now[name]!r}, and the programs of "
                f"{', '.join(apps)} differ between them: redo them (--apps "
                f"{','.join(apps)})"
            )
        same_programs = len(pairs)
        order = [c.name for c in configurations()]
        merged = {**earlier, **now}
        columns = sorted(
            merged.items(),
            key=lambda c: order.index(c[0]) if c[0] in order else len(order),
        )
    if not kept:
        return [], columns, None
    command = meta.get("command")
    note = f"{len(kept)} results merged from an earlier run" + (
        f" (`{command}`)." if command else "."
    )
    if same_programs:
        note += (
            f" Of those, the apps' rows under {same_programs} (app, configuration) "
            "pairs were measured under an earlier pipeline of the configuration "
            "that emits the same CUDA program."
        )
    return kept, columns, note


def _same_program(
    app: str, before: str, after: str, benchmarks_dir: str | Path | None
) -> bool:
    """Whether ``app`` emits the same CUDA program (text and build flags)
    under the pipelines ``before`` and ``after`` (False where either does
    not emit)."""
    try:
        mlir = load_app(app, benchmarks_dir).mlir
        return program_key(mlir, before) == program_key(mlir, after)
    except (AppError, CompileError, UsageError, OSError):
        return False


def _where(row: BenchRow) -> str:
    return f"{row.app} on {row.graph}" + (f" [{row.config}]" if row.config else "")


def _verdict(
    rows: list[BenchRow],
    ablation: bool,
    md_path: Path,
    json_path: Path,
    png_path: Path | None,
) -> int:
    """Say how it went on stderr; the exit code (1 if any result is wrong or
    did not run; with ``--ablation`` a timeout is a result, not a failure)."""
    progress = sys.stderr
    late = [r for r in rows if ablation and is_timeout(r)]
    wrong = [r for r in wrong_rows(rows) if not (ablation and is_timeout(r))]
    if late:
        progress.write(
            f"irgl-bench all: {len(late)} runs timed out (shown as timeout): "
            + ", ".join(_where(r) for r in late)
            + "\n"
        )
    if wrong:
        lines = [
            f"irgl-bench all: FAILED: {len(wrong)} of {len(rows)} results are wrong "
            "or did not run:"
        ]
        lines += [f"  {_where(r)}: {r.status}" for r in wrong]
        lines.append(f"(details in {json_path}; table in {md_path})")
        progress.write("\n".join(lines) + "\n")
        return 1
    done = len(rows) - len(late)
    progress.write(
        f"irgl-bench all: all {done} results correct; wrote {md_path}, "
        f"{json_path}" + (f", {png_path}" if png_path else "") + "\n"
    )
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    """``irgl-bench build``: compile every app (under every ``--ablation``
    configuration, or each ``-p``) into the program cache, or with
    ``--check`` only say whether each is there; the exit code."""
    from .build import DEFAULT_PIPELINE, cache_dir
    from .prebuild import BuildItem, build_all, nvcc_version, write_manifest

    progress = sys.stderr
    pipelines = list(dict.fromkeys(args.pipeline or [DEFAULT_PIPELINE]))
    if args.ablation:
        if len(pipelines) > 1:
            raise UsageError(
                "--ablation takes one -p/--pipeline (the base of every configuration)"
            )
        base = argparse.Namespace(
            ablation=True,
            configs=args.configs,
            backend=DEFAULT_BACKEND,
            pipeline=pipelines[0],
        )
        configs = ablation_configs(base)
        assert configs is not None
        variants = [(c.name, c.pipeline) for c in configs]
    else:
        if split_list(args.configs):
            raise UsageError("--configs applies only with --ablation")
        variants = [("default" if p == DEFAULT_PIPELINE else p, p) for p in pipelines]
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    bdir = args.benchmarks_dir
    found = discover_apps(bdir)
    wanted = split_list(args.apps)
    unknown = [a for a in wanted if a not in found]
    if unknown:
        raise UsageError(
            f"unknown app(s) {', '.join(unknown)} (known: {', '.join(found) or 'none'})"
        )
    items: list[BuildItem] = []
    broken: list[str] = []
    for name in wanted or found:
        try:
            spec = load_app(name, bdir)
        except AppError as e:
            broken.append(f"{name}: app does not load: {_one_line(str(e))}")
            continue
        items += [BuildItem(name, c, p, spec.mlir) for c, p in variants]
    cache = Path(args.program_cache) if args.program_cache else cache_dir()
    jobs = args.jobs or os.cpu_count() or 1
    verb = "checking" if args.check else "building"
    progress.write(
        f"irgl-bench build: {verb} {len(items)} programs "
        f"({len(items) // max(1, len(variants))} apps x {len(variants)} "
        f"configurations) in {cache}\n"
    )
    outcomes = build_all(items, cache, jobs, args.nvcc, args.check, progress)
    if not args.check:
        write_manifest(cache, outcomes, nvcc_version(args.nvcc))
    libraries = {o.library for o in outcomes if o.ok and o.library is not None}
    size = sum(p.stat().st_size for p in libraries)
    counts = {
        s: sum(o.status == s for o in outcomes)
        for s in ("compiled", "cached", "missing")
    }
    failed = [o for o in outcomes if o.status.startswith("error")]
    summary = {
        "programs": len(outcomes),
        "libraries": len(libraries),
        **counts,
        "errors": len(failed) + len(broken),
        "library_bytes": size,
        "cache": str(cache),
    }
    print(json.dumps(summary), flush=True)
    bad = [f"{o.item.app} [{o.item.config}]: {o.status}" for o in failed] + broken
    bad += [
        f"{o.item.app} [{o.item.config}]: not in the cache ({o.item.pipeline})"
        for o in outcomes
        if o.status == "missing"
    ]
    if bad:
        progress.write(
            f"irgl-bench build: FAILED: {len(bad)} of {len(outcomes) + len(broken)} "
            "programs are not in the cache:\n" + "".join(f"  {line}\n" for line in bad)
        )
        return 1
    progress.write(
        f"irgl-bench build: all {len(outcomes)} programs in {cache} "
        f"({len(libraries)} libraries, {size / 2**20:.1f} MiB)\n"
    )
    return 0
