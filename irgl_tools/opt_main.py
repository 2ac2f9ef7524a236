"""`irgl-opt`: xDSL's opt driver with the irgl dialects, passes and targets.

`--lower-irgl` runs the `lower-irgl` pipeline before any `-p` passes; the
input file's directory is added to the `include_dirs` of `lower-irgl` and
`convert-irgl-c`, where `irgl.cinclude` headers are found. Errors
(parse errors, verifier failures, pass failures, emitter errors) are printed
as diagnostics and give exit code 1, never a Python traceback. Every
diagnostic names a location: a parse error its line and column, a verifier
error the offending op (underlined in the printed module) -- also when xDSL's
own verifiers or parsers fail with a bare Python exception.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from irgl_dialect.placement import located_error, verify_dominance
from irgl_dialect.upstream_checks import verify_if_yields, verify_predicates
from irgl_tools.universe import IRGL_UNIVERSE
from irgl_tools.xdsl_fixes import apply_xdsl_fixes
from lowering.convert_irgl_c import add_include_dir

apply_xdsl_fixes()


def _irgl_version() -> str:
    try:
        return version("irgl-xdsl")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "(source checkout)"


def malformed_op_error(op: Operation, error: Exception) -> DiagnosticException:
    """A verifier diagnostic at `op` for an error that one of its verifiers
    raised without a location (a bare Python exception, or a diagnostic that
    xDSL raises before it knows the op)."""
    if isinstance(error, DiagnosticException):
        message = str(error)
    else:
        message = (
            f"'{op.name}' is malformed (its verifier failed with "
            f"{type(error).__name__}: {error})"
        )
    return located_error(op, message, VerifyException(message))


def verify_located(module: ModuleOp) -> None:
    """`module.verify()` plus a dominance check, every error located.

    On an error without a location each op is verified on its own (without
    its nested ops), outermost first, to find the one that fails.
    """
    try:
        module.verify()
    except DiagnosticException as error:
        if getattr(error, "__notes__", None):
            raise
        _locate(module, error)
    except Exception as error:
        _locate(module, error)
    verify_dominance(module)
    verify_if_yields(module)
    verify_predicates(module)


def _locate(module: ModuleOp, error: Exception) -> NoReturn:
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as inner:
            if not getattr(inner, "__notes__", None):
                raise malformed_op_error(op, inner) from error
        except Exception as inner:
            raise malformed_op_error(op, inner) from error
    raise malformed_op_error(module, error) from error


def parse_located(parser: Parser, implicit_module: bool = True) -> ModuleOp:
    """`parser.parse_module()`, with bare exceptions raised while parsing (by
    xDSL's parsers or attribute verifiers) turned into parse errors at the
    current position."""
    try:
        return parser.parse_module(implicit_module)
    except ParseError:
        raise
    except DiagnosticException as error:
        raise ParseError(parser._current_token.span, str(error)) from error  # pyright: ignore[reportPrivateUsage]
    except Exception as error:
        raise ParseError(
            parser._current_token.span,  # pyright: ignore[reportPrivateUsage]
            f"invalid input here ({type(error).__name__}: {error})",
        ) from error


class IrglOptMain(xDSLOptMain):
    """xDSLOptMain plus `--lower-irgl`; the irgl universe comes from the
    `xdsl.universe` entry point, so nothing is registered twice."""

    version_format = (
        f"irgl-opt {_irgl_version()} (IrGL on xDSL), built on xdsl version "
        "{xdsl_version}"
    )

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="IrGL optimizer and CUDA compiler", args=args)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            parser = Parser(self.ctx, io.read(), self.get_input_name())
            return parse_located(parser, not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

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
        # `irgl.cinclude` headers ship beside the program: look for them in
        # the input file's directory (the working directory for stdin),
        # after any `include_dirs` given explicitly.
        name = self.get_input_name()
        here = os.path.dirname(os.path.abspath(name)) if name != "stdin" else "."
        self.pipeline = add_include_dir(self.pipeline, here)
        inner = self.pipeline.callback
        if inner is None or self.args.disable_verify:
            return

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            # Verify first with located diagnostics; then xDSL's own callback
            # (which verifies again, cheaply, and prints between passes).
            verify_located(module)
            inner(previous, module, following)

        self.pipeline = replace(self.pipeline, callback=callback)


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
