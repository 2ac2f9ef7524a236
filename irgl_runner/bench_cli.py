"""``irgl-bench``: run benchmark apps on graphs.

::

    irgl-bench run bfs --graph rmat:20 --reps 5
    irgl-bench run sssp --graph road.gr --source 7 --output dist.txt
    irgl-bench run mst --graph rmat:16 -p 'lower-irgl{ticket_locks=true}'
    irgl-bench gen grid:2048x2048 -o grid.gr
    irgl-bench all                       # every app x every default graph
    irgl-bench all --quick --apps bfs,pr --graphs rmat:10,grid:32x32
    irgl-bench all --ablation --quick    # every app x graph x configuration
    irgl-bench all --robust              # every graph family, 16 sources each
    irgl-bench build --ablation          # compile them all ahead of time

``run`` checks that its backend can run here (a GPU for ``cuda``) before it
compiles, then prints one JSON line. ``gen`` writes the format the output's
suffix names. ``all`` and ``build`` are :mod:`irgl_runner.bench_all` (the
configurations of ``--ablation``: :mod:`irgl_runner.ablation`; ``--robust``:
:mod:`irgl_runner.robust`; building ahead: :mod:`irgl_runner.prebuild`);
graph arguments are
resolved by :mod:`irgl_runner.graph_args`; ``--backend`` choices come from
:mod:`irgl_runner.backends`.

Exit codes: 0 ok; 1 compile/runtime error or wrong output (``all``: any
wrong or failed row); 2 bad input (missing or corrupt graph, unknown app,
bad source or spec).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import cast

from . import scaling
from .ablation import OPTIMIZATIONS
from .apps import AppError, RunContext, execute, load_app
from .backends import BACKENDS, DEFAULT_BACKEND, load_plugins
from .bench_all import (
    DEFAULT_ABLATION_TIMEOUT_S,
    DEFAULT_GRAPHS,
    DEFAULT_TIMEOUT_S,
    QUICK_GRAPHS,
    Runner,
    cmd_all,
    cmd_build,
)
from .build import DEFAULT_PIPELINE
from .errors import IrglError, UsageError
from .generators import SPEC_FORMS, generate, parse_spec
from .graph_args import default_cache_dir, default_source, resolve_graph
from .graphs import EDGE_LIST_SUFFIXES, GraphFormatError, write_graph
from .partition import check_every_rank_has_masters
from .partition_fold import FOLD_HELP
from .report import write_output
from .robust import (
    DEFAULT_ROBUST_REPS,
    DEFAULT_ROBUST_TIMEOUT_S,
    DEFAULT_SOURCE_SEED,
    DEFAULT_SOURCES,
    RobustRunner,
    cmd_robust,
)

__all__ = ["main", "write_output"]


#: ``--cache-dir``'s help (``run`` and ``all``).
CACHE_DIR_HELP = (
    "generated-graph cache (default $IRGL_GRAPH_CACHE, else .cache in the "
    "benchmarks directory if writable, else $XDG_CACHE_HOME/irgl/graphs)"
)


def package_version() -> str:
    """The installed version of the ``irgl-xdsl`` package (``--version``)."""
    try:
        return version("irgl-xdsl")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "(source checkout)"


class RunFailure(Exception):
    """Compile/runtime failure or wrong output (exit code 1)."""


def _cmd_run(args: argparse.Namespace) -> int:
    if args.gpus is not None and args.gpus < 1:
        raise UsageError(f"--gpus must be at least 1, got {args.gpus}")
    if args.gpus is not None and not BACKENDS[args.backend].simulates_ranks:
        reason = BACKENDS[args.backend].unavailable()  # before compiling
        if reason is not None:
            raise RunFailure(
                f"cannot run on {args.gpus} GPUs with --backend {args.backend}: "
                f"{reason} (--backend interp --gpus N simulates N ranks on the CPU)"
            )
        from .distributed import run_from_bench

        code = run_from_bench(args)
        if code == 2:
            raise UsageError("bad input for a run on several GPUs (see above)")
        if code != 0:
            raise RunFailure(f"{args.app} on {args.gpus} GPUs failed (see above)")
        return 0
    try:
        app = load_app(args.app, args.benchmarks_dir)
    except AppError as e:
        raise UsageError(str(e)) from None
    if args.reps < 1:
        raise UsageError(f"--reps must be at least 1, got {args.reps}")
    cache = (
        None
        if args.no_cache
        else (args.cache_dir or default_cache_dir(args.benchmarks_dir))
    )
    graph, spec = resolve_graph(args.graph, app.symmetrize, app.weighted, cache)
    app.check_graph(graph, args.graph)  # before compiling (exit 2)
    source = args.source if args.source is not None else default_source(graph, spec)
    if app.uses_source and not 0 <= source < graph.num_nodes:
        raise UsageError(f"source {source} out of range for {graph.num_nodes} nodes")
    if args.output and app.primary_output is None:
        raise UsageError(f"app {app.name!r} has no per-node output for --output")
    backend = BACKENDS[args.backend]
    if args.gpus is not None:  # simulated ranks (others ran the launcher above)
        try:
            check_every_rank_has_masters(graph.num_nodes, args.gpus)
        except ValueError as e:
            raise UsageError(str(e)) from None
    if args.rank_partitions:
        raise UsageError(
            "--rank-partitions applies only to several GPUs (--gpus N, "
            f"--backend {DEFAULT_BACKEND})"
        )
    if getattr(args, "fold", False) and args.gpus is None:
        raise UsageError("--fold applies only with --gpus N")
    for other in BACKENDS.values():
        for option in other.options:
            if other is not backend and getattr(args, option, None) is not None:
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag} applies only to --backend {other.name}")
    reason = backend.unavailable()  # after the input checks, before compiling
    if reason is not None:
        raise RunFailure(f"cannot run with --backend {backend.name}: {reason}")

    try:
        program = backend.load(app, args)
        ctx: RunContext = execute(
            app,
            program,
            graph,
            source,
            reps=args.reps,
            warmup=backend.warmup,
            reinit_all=args.reinit_all,
        )
        gpu = program.device_name()
    except UsageError:
        raise
    except (IrglError, *backend.failures) as e:
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
    if app.describe is not None:
        record.update(app.describe(ctx))
    if problem is not None:
        record["problem"] = problem
    if args.reinit_all:
        record["reinit_all"] = True
    if backend.name != DEFAULT_BACKEND:
        record["backend"] = backend.name
    if backend.describe is not None:
        record.update(backend.describe(args))
    describe_runs = getattr(program, "describe_runs", None)
    if callable(describe_runs):  # e.g. simulated ranks' communication
        extra = describe_runs()
        if isinstance(extra, dict):
            record.update(cast(dict[str, object], extra))
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
        raise UsageError(f"not a generator spec: {args.spec!r} (forms: {SPEC_FORMS})")
    graph = generate(spec)
    write_graph(args.output, graph)
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


def _add_compile_arguments(parser: argparse.ArgumentParser) -> None:
    """``--backend`` and ``-p/--pipeline`` (``run``, and ``all`` for each run)."""
    parser.add_argument(
        "--backend",
        choices=list(BACKENDS),
        default=DEFAULT_BACKEND,
        help="where the program runs: "
        + "; ".join(f"{b.name}: {b.help}" for b in BACKENDS.values())
        + f" (default {DEFAULT_BACKEND})",
    )
    lowering = ", ".join(b.name for b in BACKENDS.values() if b.lowers)
    parser.add_argument(
        "-p",
        "--pipeline",
        default=DEFAULT_PIPELINE,
        action=_PipelineAction,
        metavar="PIPELINE",
        help="pass pipeline the program is lowered with, options included, e.g. "
        "'lower-irgl{ticket_locks=true block_size=128}' "
        f"(default {DEFAULT_PIPELINE}; only with --backend {lowering})",
    )


class _PipelineAction(argparse.Action):
    """Stores ``-p/--pipeline`` and notes that it was given (``pipeline_given``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.pipeline_given = True


def _check_pipeline_backend(args: argparse.Namespace) -> None:
    """A usage error for ``-p`` with a backend that runs no passes (``interp``
    runs the IrGL program as written; ``-p`` would be silently ignored)."""
    backend = BACKENDS.get(getattr(args, "backend", ""))
    if backend is None or backend.lowers or not getattr(args, "pipeline_given", False):
        return
    lowering = ", ".join(b.name for b in BACKENDS.values() if b.lowers)
    raise UsageError(
        f"-p/--pipeline applies only to --backend {lowering}: the "
        f"{backend.name} backend runs the IrGL program as written, without passes"
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="irgl-bench", description="Run IrGL benchmark apps on graphs."
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"irgl-bench {package_version()} (IrGL on xDSL)",
    )
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an app and print one JSON line")
    r.add_argument(
        "app", help="name of a directory benchmarks/APP with APP.mlir and app.py"
    )
    r.add_argument(
        "--graph",
        required=True,
        help=f"a .gr/.mtx/.txt/.el file or a generator spec: {SPEC_FORMS}",
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
        "--reinit-all",
        action="store_true",
        help="upload every array's initial value before every run, scratch "
        "declared every_run=False too (the harness's earlier behaviour; for "
        "comparisons)",
    )
    r.add_argument(
        "--no-cache", action="store_true", help="do not cache generated graphs"
    )
    r.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help=CACHE_DIR_HELP,
    )
    r.add_argument(
        "--benchmarks-dir", type=Path, default=None, help="where app directories live"
    )
    r.add_argument(
        "--gpus",
        type=int,
        default=None,
        help="run on N GPUs of this node, one process each, through NCCL "
        "(the program lowered with lower-irgl{distribute=POLICY}; see "
        "irgl_runner.distributed for torchrun/mpirun on several nodes); with "
        "--backend interp, on N simulated ranks in this process",
    )
    r.add_argument(
        "--policy",
        choices=("oec", "cvc"),
        default="oec",
        help="partitioning with --gpus: outgoing edge-cut or Cartesian vertex-cut",
    )
    r.add_argument(
        "--rank-partitions",
        action="store_true",
        help="with --gpus: each rank reads only its own partition (this process "
        "partitions the graph and checks the result)",
    )
    r.add_argument(
        "--fold",
        action="store_true",
        help=f"with --gpus: {FOLD_HELP}",
    )
    _add_compile_arguments(r)
    for backend in BACKENDS.values():
        if backend.add_arguments is not None:
            backend.add_arguments(r)
    r.set_defaults(func=_cmd_run)
    g = sub.add_parser(
        "gen", help="write a generated graph (.gr, .mtx or edge list, by suffix)"
    )
    g.add_argument("spec", help=SPEC_FORMS)
    g.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        help="output file; its suffix picks the format: .gr (binary), .mtx "
        f"(MatrixMarket) or an edge list ({', '.join(EDGE_LIST_SUFFIXES)})",
    )
    g.set_defaults(func=_cmd_gen)
    a = sub.add_parser(
        "all",
        help="run every app on every graph; write RESULTS.md, results.json and .png",
        description="Run every app on every graph, each run in its own "
        "irgl-bench run process. Needs a GPU for --backend cuda (checked "
        "first: without one nothing is run or written). The reports of "
        "benchmarks/ are replaced only when every run has a result (see "
        "--out-dir).",
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
        default=None,
        help="seconds per run before it is stopped: an error, or with "
        f"--ablation a 'timeout' cell (default {DEFAULT_TIMEOUT_S:g}, with "
        f"--ablation {DEFAULT_ABLATION_TIMEOUT_S:g}; 0: none)",
    )
    _add_ablation_arguments(a)
    a.add_argument(
        "--robust",
        action="store_true",
        help="the robustness benchmark: every app on every graph family "
        "(RMAT of several seeds and scales, grid, chain, star, hub-heavy, "
        "uniform random, mostly isolated, small components; --graphs to "
        "choose), BFS and SSSP from --sources sources per graph; writes "
        f"robust.json and a section of RESULTS.md (default {DEFAULT_ROBUST_REPS} "
        f"timed runs, --timeout {DEFAULT_ROBUST_TIMEOUT_S:g} s per app and graph)",
    )
    a.add_argument(
        "--sources",
        type=int,
        default=None,
        help="with --robust, sources per graph for source-based apps: the hub, "
        f"a leaf, an isolated node, the rest random (default {DEFAULT_SOURCES})",
    )
    a.add_argument(
        "--source-seed",
        type=int,
        default=None,
        help="with --robust, the seed the random sources are drawn with "
        f"(default {DEFAULT_SOURCE_SEED})",
    )
    a.add_argument(
        "--merge",
        action="store_true",
        help="keep the results of earlier runs in results.json/ablation.json "
        "(with --robust: robust.json) that this run does not redo (split a "
        "long table over several runs)",
    )
    a.add_argument(
        "--devices",
        type=_device_list,
        default=(),
        metavar="0,1,...",
        help="run the jobs on these CUDA devices at once, one job per device "
        "(CUDA_VISIBLE_DEVICES of each run; e.g. 0,1,2,3 on a 4-GPU machine; "
        "with --robust one app per device)",
    )
    a.add_argument(
        "--rerun-identical",
        action="store_true",
        help="with --ablation, also run a configuration whose program is the "
        "same as an earlier one's (by default its cells repeat that result)",
    )
    a.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="where RESULTS.md, results.json and results.png (with --ablation: "
        "ablation.json) go, written as rows come in, errors included (default "
        "benchmarks/, whose reports are replaced only when every run has a "
        "result: until then, and when some run has none, the rows go to "
        "RESULTS.partial.md and results.partial.json beside them)",
    )
    a.add_argument("--no-chart", action="store_true", help="do not draw results.png")
    a.add_argument(
        "--no-cache", action="store_true", help="do not cache generated graphs"
    )
    a.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help=CACHE_DIR_HELP,
    )
    a.add_argument(
        "--benchmarks-dir", type=Path, default=None, help="where app directories live"
    )
    _add_compile_arguments(a)
    a.set_defaults(func=cmd_all)
    b = sub.add_parser(
        "build",
        help="compile apps ahead of time into the program cache ($IRGL_CACHE_DIR)",
        description="Lower, emit and compile every app (with --ablation: under "
        "every configuration) into the program cache, so that a machine "
        "with a GPU only runs them; the cache key is the content, so the "
        "directory can be carried to another machine (same nvcc flags).",
    )
    b.add_argument(
        "--apps",
        action="append",
        metavar="A[,A...]",
        help="only these apps (default: every benchmarks/*/app.py)",
    )
    _add_ablation_arguments(b)
    b.add_argument(
        "-p",
        "--pipeline",
        action="append",
        metavar="PIPELINE",
        help=f"a pass pipeline to build with (repeatable; default {DEFAULT_PIPELINE}"
        "; with --ablation the one lower-irgl pass every configuration extends)",
    )
    b.add_argument(
        "--program-cache",
        type=Path,
        default=None,
        help="where the libraries go (default $IRGL_CACHE_DIR or ~/.cache/irgl; "
        "irgl-bench run/all look there)",
    )
    b.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        help="nvcc runs at a time (default: the number of CPUs)",
    )
    b.add_argument("--nvcc", default="nvcc", help="the nvcc to run (default nvcc)")
    b.add_argument(
        "--check",
        action="store_true",
        help="compile nothing: exit 1 unless every program is in the cache",
    )
    b.add_argument(
        "--benchmarks-dir", type=Path, default=None, help="where app directories live"
    )
    b.set_defaults(func=cmd_build)
    sc = sub.add_parser(
        "scaling",
        help="the distributable apps on 1, 2, 4 GPUs of this node "
        "(benchmarks/scaling.json and a table in RESULTS.md)",
    )
    scaling.add_arguments(sc)
    sc.set_defaults(func=scaling.run)
    return p


def _add_ablation_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ablation`` and ``--configs`` (``all`` and ``build``)."""
    names = ["none", *(o.name for o in OPTIMIZATIONS), "all", "default"]
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="every configuration of the optimizations: none, each alone, all, "
        "default (lower-irgl options added to -p)",
    )
    parser.add_argument(
        "--configs",
        action="append",
        metavar="C[,C...]",
        help=f"with --ablation, only these configurations ({', '.join(names)})",
    )


def main(
    argv: Sequence[str] | None = None,
    *,
    runner: Runner | None = None,
    robust_runner: RobustRunner | None = None,
) -> int:
    """Entry point of ``irgl-bench``; returns the exit code.

    ``runner`` replaces how ``irgl-bench all`` runs one job, ``robust_runner``
    how ``irgl-bench all --robust`` runs one app (tests pass fakes).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    load_plugins()
    args = _parser().parse_args(argv)
    args.argv = argv
    try:
        _check_pipeline_backend(args)
        if args.func is cmd_all and args.robust:
            return cmd_robust(args, robust_runner)
        if args.func is cmd_all and (args.sources, args.source_seed) != (None, None):
            raise UsageError("--sources and --source-seed apply only with --robust")
        if args.func is cmd_all:
            return cmd_all(args, runner)
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


def _device_list(text: str) -> tuple[str, ...]:
    """``--devices``: distinct CUDA device ordinals, comma-separated."""
    devices = tuple(d.strip() for d in text.split(","))
    if not all(d.isdigit() for d in devices):
        raise argparse.ArgumentTypeError(
            f"expected device numbers separated by commas, got {text!r}"
        )
    if len(set(devices)) != len(devices):
        raise argparse.ArgumentTypeError(f"a device is listed twice in {text!r}")
    return devices


if __name__ == "__main__":
    sys.exit(main())
