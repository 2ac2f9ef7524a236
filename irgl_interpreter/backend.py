"""The ``interp`` backend of ``irgl-bench run``: the same app spec, inputs,
checker and JSON line, run on the CPU reference interpreter
(``irgl-bench run APP --graph G --backend interp [--schedule random:SEED]``)."""

from __future__ import annotations

import argparse

from irgl_runner.apps import AppSpec
from irgl_runner.backends import Backend, RunnableProgram, register_backend
from irgl_runner.errors import UsageError

from . import InterpretationFailure, ProgramError
from .dmr import DmrUnavailable


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schedule",
        default=None,
        help="with --backend interp: ForAll order sequential, reversed or "
        "random:SEED, optionally ',fail=RATE' (default sequential)",
    )


def _schedule_text(args: argparse.Namespace) -> str:
    return args.schedule if args.schedule is not None else "sequential"


def _load(app: AppSpec, args: argparse.Namespace) -> RunnableProgram:
    from .apps import interp_program
    from .state import Schedule

    try:
        schedule = Schedule.parse(_schedule_text(args))
    except ValueError as e:
        raise UsageError(f"--schedule: {e}") from None
    return interp_program(app, schedule)


register_backend(
    Backend(
        name="interp",
        help="the CPU reference interpreter (no GPU, no compiler)",
        unavailable=lambda: None,
        load=_load,
        add_arguments=_add_arguments,
        options=("schedule",),
        warmup=0,
        failures=(InterpretationFailure, ProgramError, DmrUnavailable),
        describe=lambda args: {"schedule": _schedule_text(args)},
        lowers=False,  # it runs the IrGL program as written: -p is refused
    )
)
