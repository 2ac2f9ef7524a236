"""The ``interp`` backend of ``irgl-bench run``: the same app spec, inputs,
checker and JSON line, run on the CPU reference interpreter
(``irgl-bench run APP --graph G --backend interp [--schedule random:SEED]``).

Long runs print progress on stderr (``interp: run 1/5, 12.3 s, ... edge
visits``) every few seconds when stderr is a terminal, or always with
``--progress`` (never with ``--no-progress``)."""

from __future__ import annotations

import argparse
import sys

from irgl_runner.apps import AppSpec
from irgl_runner.backends import Backend, RunnableProgram, register_backend
from irgl_runner.errors import UsageError

from . import InterpretationFailure, ProgramError
from .dmr import DmrUnavailable
from .state import Schedule


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schedule",
        default=None,
        help="with --backend interp: ForAll order sequential, reversed or "
        "random:SEED, optionally ',fail=RATE' (default sequential)",
    )

    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --backend interp: a line on stderr every 5 s of a run (run "
        "i/n, seconds, edge visits, kernel invocations); default: only when "
        "stderr is a terminal",
    )


def _schedule_text(args: argparse.Namespace) -> str:
    return args.schedule if args.schedule is not None else "sequential"


def _load(app: AppSpec, args: argparse.Namespace) -> RunnableProgram:
    from .apps import RunProgress, interp_program

    try:
        schedule = Schedule.parse(_schedule_text(args))
    except ValueError as e:
        raise UsageError(f"--schedule: {e}") from None
    if getattr(args, "gpus", None) is not None:
        return _distributed(app, args, schedule)
    program = interp_program(app, schedule)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    if show:
        program.progress = RunProgress(sys.stderr, total=args.reps)
    return program


def _distributed(
    app: AppSpec, args: argparse.Namespace, schedule: Schedule
) -> RunnableProgram:
    """`--gpus N`: the app's distributed program (`irgl-distribute` with
    `--policy`) on N simulated ranks, the NCCL calls played in process (its
    `describe_runs` adds the ranks, the policy and what moved to the JSON
    line)."""
    from .apps import app_c_impls
    from .distributed import DistributedInterpProgram, DistributionError

    mlir = app.distributed_mlir or app.mlir
    try:
        return DistributedInterpProgram(
            mlir,
            args.gpus,
            args.policy,
            schedule,
            app_c_impls(app.name),
            fold=getattr(args, "fold", False),
        )
    except DistributionError as e:
        raise UsageError(f"{app.name} cannot run on several ranks: {e}") from None


register_backend(
    Backend(
        name="interp",
        help="the CPU reference interpreter (no GPU, no compiler)",
        unavailable=lambda: None,
        load=_load,
        add_arguments=_add_arguments,
        options=("schedule", "progress"),
        warmup=0,
        failures=(InterpretationFailure, ProgramError, DmrUnavailable),
        describe=lambda args: {"schedule": _schedule_text(args)},
        lowers=False,  # it runs the IrGL program as written: -p is refused
        simulates_ranks=True,  # --gpus N: N simulated ranks (_distributed)
    )
)
