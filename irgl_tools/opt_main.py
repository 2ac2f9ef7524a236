"""`irgl-opt`: xDSL's opt driver with the irgl dialects, passes and targets.

`--lower-irgl` runs the `lower-irgl` pipeline before any `-p` passes. Errors
(parse errors, verifier failures, pass failures, emitter errors) are printed
as diagnostics and give exit code 1, never a Python traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from irgl_tools.universe import IRGL_UNIVERSE


class IrglOptMain(xDSLOptMain):
    """xDSLOptMain plus `--lower-irgl`; the irgl universe comes from the
    `xdsl.universe` entry point, so nothing is registered twice."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="IrGL optimizer and CUDA compiler", args=args)

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        # Without the installed entry point (a source checkout on PYTHONPATH),
        # register the irgl universe here; never twice.
        known = set(self.ctx.registered_dialect_names)
        for name, factory in IRGL_UNIVERSE.all_dialects.items():
            if name not in known:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in IRGL_UNIVERSE.all_passes.items():
            self.available_passes.setdefault(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, factory in IRGL_UNIVERSE.all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--lower-irgl",
            action="store_true",
            help="run the lower-irgl pipeline (before any -p passes)",
        )

    def setup_pipeline(self) -> None:
        if self.args.lower_irgl:
            extra = self.args.passes
            self.args.passes = "lower-irgl" + ("," + extra if extra else "")
        super().setup_pipeline()


def main(argv: Sequence[str] | None = None) -> int:
    """Run irgl-opt; return the exit code."""
    try:
        IrglOptMain(args=argv).run()
    except (DiagnosticException, ParseError) as error:
        print(str(error).rstrip(), file=sys.stderr)
        # Verifier errors carry the IR with the offending op underlined as notes.
        for note in getattr(error, "__notes__", ()):
            print(str(note).rstrip(), file=sys.stderr)
        return 1
    except FileNotFoundError as error:
        print(f"irgl-opt: error: {error.strerror}: '{error.filename}'", file=sys.stderr)
        return 1
    except (ValueError, NotImplementedError, KeyError) as error:
        print(f"irgl-opt: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # an internal error: report it, no traceback
        if os.environ.get("IRGL_DEBUG"):
            raise
        kind = type(error).__name__
        print(
            f"irgl-opt: internal error ({kind}): {error}\n"
            "(set IRGL_DEBUG=1 for a traceback and please report it)",
            file=sys.stderr,
        )
        return 2
    return 0


def console_main() -> None:
    """Console-script entry point."""
    sys.exit(main())
