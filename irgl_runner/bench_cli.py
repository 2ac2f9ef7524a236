"""``irgl-bench``: run benchmark apps on graphs.

::

    irgl-bench run bfs --graph rmat:20 --reps 5
    irgl-bench run sssp --graph road.gr --source 7 --output dist.txt
    irgl-bench gen grid:2048x2048 -o grid.gr
    irgl-bench all                       # every app x every default graph
    irgl-bench all --quick --apps bfs,pr --graphs rmat:10,grid:32x32

``run`` prints one JSON line. ``all`` runs every app of ``benchmarks/*/app.py``
on every graph (each run in its own ``irgl-bench run`` process, so that a
crash or hang loses one row, not the table), shows progress on stderr and
writes ``RESULTS.md`` (between its markers), ``results.json`` and
``results.png`` (with matplotlib) in ``--out-dir``. An app whose
``params["bench_graphs"]`` (``"bench_graphs_quick"`` with ``--quick``) lists
graphs runs on those instead of the common list (e.g. a mesh app).

Exit codes: 0 ok; 1 compile/runtime error or wrong output (``all``: any
wrong or failed row); 2 bad input (missing or corrupt graph, unknown app,
bad source or spec).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

import numpy as np

from .apps import (
    AppError,
    AppSpec,
    ProgramLike,
    RunContext,
    default_benchmarks_dir,
    execute,
    load_app,
)
from .generators import GraphSpec, generate, parse_spec
from .graphs import CSRGraph, GraphFormatError, load_graph, read_gr, write_gr
from .report import (
    BenchRow,
    ReportError,
    check_markdown,
    render_section,
    update_markdown,
    write_chart,
    write_json,
    wrong_rows,
)

__all__ = [
    "BenchJob",
    "DEFAULT_GRAPHS",
    "QUICK_GRAPHS",
    "Runner",
    "SubprocessRunner",
    "default_source",
    "discover_apps",
    "load_program",
    "main",
    "resolve_graph",
    "run_all",
    "write_output",
]


class UsageError(Exception):
    """Bad command-line input (exit code 2)."""


class RunFailure(Exception):
    """Compile/runtime failure or wrong output (exit code 1)."""


def default_cache_dir() -> Path:
    """Generated-graph cache: ``$IRGL_GRAPH_CACHE`` or ``benchmarks/.cache``."""
    env = os.environ.get("IRGL_GRAPH_CACHE")
    return Path(env) if env else default_benchmarks_dir() / ".cache"


def resolve_graph(
    text: str,
    symmetrize: bool = True,
    weighted: bool = True,
    cache_dir: Path | None = None,
) -> tuple[CSRGraph, GraphSpec | None]:
    """Load a graph file or build a generator spec (cached as ``.gr`` if ``cache_dir``).

    Returns the graph and the parsed spec (``None`` for files).
    """
    try:
        spec = parse_spec(text)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec is None:
        return load_graph(text, symmetrize=symmetrize, weighted=weighted), None
    graph: CSRGraph | None = None
    cached = (
        cache_dir / (spec.name.replace(":", "_").replace("@", "_seed") + ".gr")
        if cache_dir
        else None
    )
    if cached is not None and cached.is_file():
        try:
            graph = read_gr(cached)
        except GraphFormatError as e:
            print(
                f"irgl-bench: warning: regenerating corrupt cache file ({e})",
                file=sys.stderr,
            )
    if graph is None:
        graph = generate(spec)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_gr(cached, graph)
    if not weighted:
        graph.weights = None
    return graph, spec


def default_source(graph: CSRGraph, spec: GraphSpec | None) -> int:
    """The highest-degree node for RMAT graphs (lowest id on ties), else 0."""
    if spec is not None and spec.kind == "rmat" and graph.num_nodes:
        return int(np.argmax(graph.degrees()))
    return 0


def load_program(app: AppSpec) -> ProgramLike:
    """Lower, compile and load ``app.mlir`` (tests replace this function)."""
    from .api import Program, compile_cuda, emit_cuda

    return Program(compile_cuda(emit_cuda(app.mlir)))


def write_output(path: str | Path, values: np.ndarray) -> None:
    """Write ``"node value"`` lines (floats with 9 significant digits)."""
    values = np.asarray(values).ravel()
    nodes = np.arange(values.shape[0])
    with open(path, "w") as f:
        if values.dtype.kind == "f":
            lines = (
                f"{i} {v:.9g}\n"
                for i, v in zip(nodes.tolist(), values.tolist(), strict=True)
            )
        else:
            vals = values.astype(np.int64).tolist()
            lines = (f"{i} {v}\n" for i, v in zip(nodes.tolist(), vals, strict=True))
        f.writelines(lines)


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        app = load_app(args.app, args.benchmarks_dir)
    except AppError as e:
        raise UsageError(str(e)) from None
    if args.reps < 1:
        raise UsageError(f"--reps must be at least 1, got {args.reps}")
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir())
    graph, spec = resolve_graph(args.graph, app.symmetrize, app.weighted, cache)
    source = args.source if args.source is not None else default_source(graph, spec)
    if app.uses_source and not 0 <= source < graph.num_nodes:
        raise UsageError(f"source {source} out of range for {graph.num_nodes} nodes")
    if args.output and app.primary_output is None:
        raise UsageError(f"app {app.name!r} has no per-node output for --output")

    from .api import IrglError

    interp = args.backend == "interp"
    if not interp and args.schedule != "sequential":
        raise UsageError("--schedule applies only to --backend interp")
    failures = _interp_failures() if interp else (IrglError,)
    try:
        program = _interp_program(app, args) if interp else load_program(app)
        warmup = 0 if interp else 1
        ctx: RunContext = execute(
            app, program, graph, source, reps=args.reps, warmup=warmup
        )
        gpu = program.device_name()  # type: ignore[attr-defined]
    except failures as e:
        raise RunFailure(str(e)) from None

    problem = None
    if args.no_check or app.check is None:
        status = "skipped"
    else:
        problem = app.check(ctx)
        status = "passed" if problem is None else "failed"
    median = statistics.median(ctx.times_ms)
    record = {
        "app": app.name,
        "graph": spec.name if spec is not None else args.graph,
        "nodes": graph.num_nodes,
        "edges": graph.num_edges,
        "gpu": gpu,
        "source": source if app.uses_source else None,
        "times_ms": [round(t, 6) for t in ctx.times_ms],
        "median_ms": round(median, 6),
        "edges_per_s": graph.num_edges / (median / 1e3) if median > 0 else None,
        "check": status,
    }
    if ctx.result is not None:
        record["result"] = ctx.result
    if problem is not None:
        record["problem"] = problem
    if interp:
        record["backend"] = "interp"
        record["schedule"] = args.schedule
    print(json.dumps(record), flush=True)
    if args.output:
        name = app.primary_output
        assert name is not None
        write_output(args.output, ctx.outputs[name])
    if problem is not None:
        raise RunFailure(f"{app.name}: wrong output: {problem}")
    return 0


# --- `run --backend interp`: the same app on the CPU reference interpreter ---


def _interp_program(app: AppSpec, args: argparse.Namespace) -> ProgramLike:
    """``app`` on :mod:`irgl_interpreter` under the ``--schedule``."""
    from irgl_interpreter.apps import interp_program
    from irgl_interpreter.state import Schedule

    try:
        schedule = Schedule.parse(args.schedule)
    except ValueError as e:
        raise UsageError(f"--schedule: {e}") from None
    return interp_program(app, schedule)


def _interp_failures() -> tuple[type[Exception], ...]:
    """What a program that fails on the interpreter raises."""
    from irgl_interpreter import InterpretationFailure, ProgramError
    from irgl_interpreter.dmr import DmrUnavailable

    return (InterpretationFailure, ProgramError, DmrUnavailable)


# --- end of `--backend interp` ---


def _cmd_gen(args: argparse.Namespace) -> int:
    try:
        spec = parse_spec(args.spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec is None:
        raise UsageError(
            f"not a generator spec: {args.spec!r} "
            "(forms: rmat:SCALE[:EF], grid:WxH, random:N:M)"
        )
    graph = generate(spec)
    write_gr(args.output, graph)
    print(
        json.dumps(
            {
                "graph": spec.name,
                "nodes": graph.num_nodes,
                "edges": graph.num_edges,
                "file": str(args.output),
            }
        )
    )
    return 0


# ------------------------------------------------------------------ all


#: Graphs of the full table: a power-law graph (Graph500 RMAT), a
#: high-diameter road-like grid, and a uniform random graph (with isolated
#: nodes), each with about a million nodes or more.
DEFAULT_GRAPHS: tuple[str, ...] = (
    "rmat:20",
    "grid:2048x2048",
    "random:1000000:8000000",
)

#: Graphs of ``irgl-bench all --quick`` (seconds per app).
QUICK_GRAPHS: tuple[str, ...] = ("rmat:12", "grid:64x64", "random:10000:40000")

#: Apps listed in this order first, others after them alphabetically.
APP_ORDER: tuple[str, ...] = ("bfs", "sssp", "cc", "pr", "tc", "mst", "mis", "dmr")

DEFAULT_TIMEOUT_S = 1200.0


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
        import signal

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"crashed ({name})" + (f": {_one_line(lines[-1])}" if lines else "")
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
        if job.benchmarks_dir is not None:
            cmd += ["--benchmarks-dir", str(job.benchmarks_dir)]
        if job.cache_dir is None:
            cmd.append("--no-cache")
        else:
            cmd += ["--cache-dir", str(job.cache_dir)]
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
    if row.wall_s is not None:
        text += f" ({row.wall_s:.1f} s)"
    return text


def run_all(
    jobs: Sequence[BenchJob],
    runner: Runner,
    progress: TextIO | None = None,
    on_row: Callable[[list[BenchRow]], None] | None = None,
) -> list[BenchRow]:
    """Run every job (in order) with ``runner``; one row per job, always.

    Progress goes to ``progress`` (stderr by default), one line per job;
    ``on_row(rows_so_far)`` is called after each (to write partial reports).
    """
    out = progress if progress is not None else sys.stderr
    rows: list[BenchRow] = []
    width = len(str(len(jobs)))
    for k, job in enumerate(jobs, 1):
        out.write(f"[{k:>{width}}/{len(jobs)}] {job.app} on {job.graph} ... ")
        out.flush()
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
        if row.nodes is None:
            row.nodes = job.nodes
        if row.edges is None:
            row.edges = job.edges
        if row.wall_s is None:
            row.wall_s = time.monotonic() - start
        out.write(_summary(row) + "\n")
        out.flush()
        rows.append(row)
        if on_row is not None:
            on_row(rows)
    return rows


def _split_list(values: Sequence[str] | None) -> list[str]:
    items: list[str] = []
    for v in values or ():
        items += [x.strip() for x in v.split(",") if x.strip()]
    return list(dict.fromkeys(items))


def _check_graph_arg(text: str) -> None:
    try:
        spec = parse_spec(text)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec is None and not Path(text).is_file():
        raise UsageError(
            f"graph {text!r} is neither a generator spec (rmat:SCALE[:EF], grid:WxH, "
            "random:N:M) nor an existing file"
        )


def _app_graphs(app: AppSpec, graphs: list[str], quick: bool) -> list[str]:
    key = "bench_graphs_quick" if quick else "bench_graphs"
    own = app.params.get(key) if quick else None
    if own is None:
        own = app.params.get("bench_graphs")
    return list(own) if own else graphs


def _plan(
    args: argparse.Namespace, progress: TextIO
) -> tuple[list[BenchJob], list[str], int]:
    """The jobs of ``irgl-bench all`` (app-major), the graph list and reps."""
    bdir = args.benchmarks_dir
    found = discover_apps(bdir)
    wanted = _split_list(args.apps)
    unknown = [a for a in wanted if a not in found]
    if unknown:
        raise UsageError(
            f"unknown app(s) {', '.join(unknown)} (known: {', '.join(found) or 'none'})"
        )
    apps = wanted or found
    if not apps:
        where = bdir or default_benchmarks_dir()
        raise UsageError(f"no apps found (no */app.py under {where})")
    graphs = _split_list(args.graphs) or list(
        QUICK_GRAPHS if args.quick else DEFAULT_GRAPHS
    )
    for g in graphs:
        _check_graph_arg(g)
    reps = args.reps if args.reps is not None else (3 if args.quick else 5)
    if reps < 1:
        raise UsageError(f"--reps must be at least 1, got {reps}")
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir())

    per_app: dict[str, tuple[list[str], str | None]] = {}
    for name in apps:
        try:
            spec = load_app(name, bdir)
        except AppError as e:
            per_app[name] = (graphs, f"app does not load: {_one_line(str(e))}")
            continue
        per_app[name] = (_app_graphs(spec, graphs, args.quick), None)

    sizes: dict[str, tuple[int | None, int | None, str | None]] = {}
    for g in dict.fromkeys(x for gs, _ in per_app.values() for x in gs):
        if cache is None and parse_spec(g) is not None:
            sizes[g] = (None, None, None)  # each run generates it anyway
            continue
        progress.write(f"irgl-bench all: preparing graph {g} ... ")
        progress.flush()
        start = time.monotonic()
        try:
            graph, _ = resolve_graph(g, True, False, cache)
        except (GraphFormatError, UsageError, OSError, ValueError) as e:
            sizes[g] = (None, None, f"graph does not load: {_one_line(str(e))}")
            progress.write(f"ERROR: {e}\n")
            continue
        sizes[g] = (graph.num_nodes, graph.num_edges, None)
        progress.write(
            f"{graph.num_nodes:,} nodes, {graph.num_edges:,} edges "
            f"({time.monotonic() - start:.1f} s)\n"
        )
        del graph

    jobs = []
    for name in apps:
        app_graphs, app_error = per_app[name]
        for g in app_graphs:
            nodes, edges, graph_error = sizes.get(g, (None, None, None))
            jobs.append(
                BenchJob(
                    name,
                    g,
                    reps,
                    nodes=nodes,
                    edges=edges,
                    timeout_s=args.timeout if args.timeout > 0 else None,
                    benchmarks_dir=bdir,
                    cache_dir=cache,
                    error=app_error or graph_error,
                )
            )
    return jobs, graphs, reps


def _cmd_all(args: argparse.Namespace, runner: Runner | None = None) -> int:
    progress = sys.stderr
    out_dir = Path(args.out_dir) if args.out_dir else default_benchmarks_dir()
    md_path, json_path, png_path = (
        out_dir / "RESULTS.md",
        out_dir / "results.json",
        out_dir / "results.png",
    )
    meta: dict[str, object] = {
        "generated": _now(),
        "command": "irgl-bench " + shlex.join(args.argv),
    }
    # fail on broken markers before spending hours on runs
    try:
        check_markdown(md_path)
    except ReportError as e:
        raise UsageError(str(e)) from None
    jobs, graphs, reps = _plan(args, progress)
    meta.update(
        reps=reps,
        apps=list(dict.fromkeys(j.app for j in jobs)),
        graphs=graphs,
        planned=len(jobs),
    )
    n_apps = len({j.app for j in jobs})
    progress.write(
        f"irgl-bench all: {len(jobs)} runs ({n_apps} apps, {reps} timed runs "
        f"each) -> {md_path}\n"
    )

    def write(
        rows: list[BenchRow], chart: str | None = None, notes: Sequence[str] = ()
    ) -> None:
        gpus = sorted({r.gpu for r in rows if r.gpu})
        full = {**meta, "gpu": ", ".join(gpus) or None, "done": len(rows)}
        write_json(json_path, rows, full)
        update_markdown(md_path, render_section(rows, full, chart=chart, notes=notes))

    def write_partial(rows: list[BenchRow]) -> None:
        try:
            write(rows)
        except (ReportError, OSError) as e:  # keep running; the end retries
            progress.write(f"irgl-bench all: warning: cannot write results: {e}\n")

    rows: list[BenchRow] = []
    try:
        rows = run_all(jobs, runner or SubprocessRunner(), progress, write_partial)
    except KeyboardInterrupt:
        progress.write("\nirgl-bench all: interrupted; partial results written\n")
        return 130
    notes: list[str] = []
    chart = None
    if args.no_chart:
        notes.append("No chart (`--no-chart`).")
    else:
        gpus = sorted({r.gpu for r in rows if r.gpu})
        title = "irgl-bench all" + (f" on {', '.join(gpus)}" if gpus else "")
        title += f" ({str(meta['generated'])[:10]})"
        note = write_chart(png_path, rows, title=title)
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
    wrong = wrong_rows(rows)
    if wrong:
        lines = [
            f"irgl-bench all: FAILED: {len(wrong)} of {len(rows)} results are wrong "
            "or did not run:"
        ]
        lines += [f"  {r.app} on {r.graph}: {r.status}" for r in wrong]
        lines.append(f"(details in {json_path}; table in {md_path})")
        progress.write("\n".join(lines) + "\n")
        return 1
    progress.write(
        f"irgl-bench all: all {len(rows)} results correct; wrote {md_path}, "
        f"{json_path}" + (f", {png_path}" if chart else "") + "\n"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="irgl-bench", description="Run IrGL benchmark apps on graphs."
    )
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an app and print one JSON line")
    r.add_argument(
        "app", help="name of a directory benchmarks/APP with APP.mlir and app.py"
    )
    r.add_argument(
        "--graph",
        required=True,
        help="a .gr/.mtx/.txt/.el file or rmat:SCALE, grid:WxH, random:N:M",
    )
    r.add_argument(
        "--source",
        type=int,
        default=None,
        help="source node (default: max degree for rmat, else 0)",
    )
    r.add_argument(
        "--reps", type=int, default=5, help="timed runs after one warm-up (default 5)"
    )
    r.add_argument(
        "--output",
        type=Path,
        default=None,
        help="write 'node value' lines of the result",
    )
    r.add_argument(
        "--no-check", action="store_true", help="skip the CPU reference check"
    )
    r.add_argument(
        "--no-cache", action="store_true", help="do not cache generated graphs"
    )
    r.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="generated-graph cache (default benchmarks/.cache)",
    )
    r.add_argument(
        "--benchmarks-dir", type=Path, default=None, help="where app directories live"
    )
    r.add_argument(
        "--backend",
        choices=("gpu", "interp"),
        default="gpu",
        help="gpu (default) or interp: the CPU reference interpreter, no GPU",
    )
    r.add_argument(
        "--schedule",
        default="sequential",
        help="with --backend interp: ForAll order sequential, reversed or "
        "random:SEED, optionally ',fail=RATE' (default sequential)",
    )
    r.set_defaults(func=_cmd_run)
    g = sub.add_parser("gen", help="write a generated graph as .gr")
    g.add_argument(
        "spec", help="rmat:SCALE[:EF], grid:WxH or random:N:M, optionally @SEED"
    )
    g.add_argument("-o", "--output", type=Path, required=True, help="output .gr file")
    g.set_defaults(func=_cmd_gen)
    a = sub.add_parser(
        "all",
        help="run every app on every graph; write RESULTS.md, results.json and .png",
    )
    a.add_argument(
        "--graphs",
        action="append",
        metavar="G[,G...]",
        help="graphs (specs or files, comma-separated, repeatable); default "
        f"{','.join(DEFAULT_GRAPHS)} or, with --quick, {','.join(QUICK_GRAPHS)}",
    )
    a.add_argument(
        "--apps",
        action="append",
        metavar="A[,A...]",
        help="only these apps (default: every benchmarks/*/app.py)",
    )
    a.add_argument("--quick", action="store_true", help="small graphs and 3 timed runs")
    a.add_argument(
        "--reps",
        type=int,
        default=None,
        help="timed runs after one warm-up (default 5)",
    )
    a.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help="seconds per run before it counts as an error "
        f"(default {DEFAULT_TIMEOUT_S:g}; 0: none)",
    )
    a.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="where RESULTS.md, results.json and results.png go (default benchmarks/)",
    )
    a.add_argument("--no-chart", action="store_true", help="do not draw results.png")
    a.add_argument(
        "--no-cache", action="store_true", help="do not cache generated graphs"
    )
    a.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="generated-graph cache (default benchmarks/.cache)",
    )
    a.add_argument(
        "--benchmarks-dir", type=Path, default=None, help="where app directories live"
    )
    a.set_defaults(func=_cmd_all)
    return p


def main(argv: Sequence[str] | None = None, *, runner: Runner | None = None) -> int:
    """Entry point of ``irgl-bench``; returns the exit code.

    ``runner`` replaces how ``irgl-bench all`` runs one job (tests pass a fake).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.argv = argv
    try:
        if args.func is _cmd_all:
            return _cmd_all(args, runner)
        return int(args.func(args))
    except (UsageError, GraphFormatError) as e:
        print(f"irgl-bench: error: {e}", file=sys.stderr)
        return 2
    except RunFailure as e:
        print(f"irgl-bench: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(
            f"irgl-bench: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
