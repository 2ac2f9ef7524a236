"""``irgl-bench``: run a benchmark app on a graph and print one JSON line.

::

    irgl-bench run bfs --graph rmat:20 --reps 5
    irgl-bench run sssp --graph road.gr --source 7 --output dist.txt
    irgl-bench gen grid:2048x2048 -o grid.gr

Exit codes: 0 ok; 1 compile/runtime error or wrong output; 2 bad input
(missing or corrupt graph, unknown app, bad source or spec).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

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

__all__ = ["main", "load_program", "resolve_graph", "default_source", "write_output"]


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

    try:
        program = load_program(app)
        ctx: RunContext = execute(app, program, graph, source, reps=args.reps, warmup=1)
        gpu = program.device_name()  # type: ignore[attr-defined]
    except IrglError as e:
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
    print(json.dumps(record), flush=True)
    if args.output:
        name = app.primary_output
        assert name is not None
        write_output(args.output, ctx.outputs[name])
    if problem is not None:
        raise RunFailure(f"{app.name}: wrong output: {problem}")
    return 0


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
    r.set_defaults(func=_cmd_run)
    g = sub.add_parser("gen", help="write a generated graph as .gr")
    g.add_argument(
        "spec", help="rmat:SCALE[:EF], grid:WxH or random:N:M, optionally @SEED"
    )
    g.add_argument("-o", "--output", type=Path, required=True, help="output .gr file")
    g.set_defaults(func=_cmd_gen)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``irgl-bench``; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
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
