"""`irgl-opt`: xDSL's opt driver with the irgl dialects, passes and targets.

`--lower-irgl` runs the `lower-irgl` pipeline before any `-p` passes; the
input file's directory is added to the `include_dirs` of `lower-irgl` and
`convert-irgl-c`, where `irgl.cinclude` headers are found. Errors
(parse errors, verifier failures, pass failures, emitter errors, a malformed
`-p` or `-t`, an unreadable input) are printed as diagnostics and give exit
code 1, never a Python traceback; a closed output pipe ends it quietly (exit
code 141, as a process killed by SIGPIPE). Every diagnostic names a location:
a parse error its line and column, a verifier error the offending op -- its
`file:line:col` and source line when the op comes from the input, else the
printed module with the op underlined -- also when xDSL's own verifiers or
parsers fail with a bare Python exception. `--help` lists the irgl passes
and their options.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from irgl_dialect.placement import located_error, verify_dominance
from irgl_dialect.syntax import parse_remembered, source_diagnostic
from irgl_dialect.upstream_checks import verify_if_yields, verify_predicates
from irgl_tools.universe import IRGL_UNIVERSE
from irgl_tools.xdsl_fixes import apply_xdsl_fixes

apply_xdsl_fixes()


def _irgl_version() -> str:
    try:
        return version("irgl-xdsl")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "(source checkout)"


#: The exit code when the output pipe closes early (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141


class UsageError(Exception):
    """A bad command line (a malformed `-p` or `-t`); `main` prints it as
    `irgl-opt: error: ...` and exits with code 1."""


def spec_syntax_error(option: str, spec: str, error: ArgSpecParseError) -> str:
    """The message for a `-p`/`-t` string that xDSL's spec parser rejects:
    the column, xDSL's reason and the string with a caret under the spot."""
    text = str(error).rstrip("\n")
    found = re.search(r"pass-pipeline:\d+:(\d+)", text)
    reason = text.splitlines()[-1].strip() if text else "malformed"
    if found is None:
        return f"{option} {spec!r}: {reason}"
    column = int(found.group(1))
    hint = ""
    if reason == "Unknown token":
        hint = (
            " (a value other than a number, true/false or a plain word must"
            ' be quoted, e.g. include_dirs="/tmp")'
        )
    return (
        f"malformed {option} at column {column}: {reason}{hint}\n"
        f"  {spec}\n  {' ' * (column - 1)}^"
    )


def check_pipeline(
    spec: str,
    available: Mapping[str, Callable[[], type[ModulePass]]],
    option: str = "-p",
) -> None:
    """Raise a `UsageError` if `spec` is not a pipeline of known passes with
    valid options."""
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as error:
        raise UsageError(spec_syntax_error(option, spec, error)) from None
    for pass_spec in specs:
        factory = available.get(pass_spec.name)
        if factory is None:
            raise UsageError(
                f"{option}: unknown pass '{pass_spec.name}' (irgl-opt --help "
                "lists the passes)"
            )
        try:
            factory().from_pass_spec(pass_spec)
        except (ValueError, TypeError) as error:
            raise UsageError(
                f"{option}: bad options for pass '{pass_spec.name}': {error} "
                "(irgl-opt --help lists its options)"
            ) from None


def _summary(doc: str | None, width: int = 68) -> str:
    """` -- ` and the first sentence of a docstring, cut to `width`."""
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    sentence = paragraph.split(". ")[0].rstrip(".")
    if not sentence:
        return ""
    if len(sentence) > width:
        sentence = sentence[: width - 3].rsplit(" ", 1)[0] + "..."
    return f" -- {sentence}"


def irgl_passes_help() -> str:
    """The `--help` epilog: every irgl pass with its options, read from the
    pass classes (so it cannot go stale)."""
    lines = [
        "irgl passes (-p 'pass{option=value option=value},pass'; list values",
        "are comma-separated, strings with other characters quoted):",
    ]
    for name, factory in sorted(IRGL_UNIVERSE.all_passes.items()):
        cls = factory()
        lines.append(f"  {name}{_summary(cls.__doc__)}")
        for info in get_pass_option_infos(cls):
            kind = info.expected_type.replace("'", "")
            default = "" if info.default_value is None else f" = {info.default_value}"
            lines.append(f"      {info.name}: {kind}{default}")
    for name, factory in sorted(IRGL_UNIVERSE.all_targets.items()):
        target = factory()
        lines.append(
            f"irgl target -t '{name}{{option=value}}'{_summary(target.__doc__)}"
        )
        for field in dataclasses.fields(target):
            default = field.default
            if isinstance(default, bool):
                default = str(default).lower()
            shown = "" if default is dataclasses.MISSING else f" = {default}"
            lines.append(f"      {field.name}{shown}")
    lines.append("The README's 'Pass and target options' section explains them.")
    return "\n".join(lines)


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


def _implicit_parse(parser: Parser) -> ModuleOp:
    """`parse_located` of a file whose ops may stand outside a module."""
    return parse_located(parser, True)


def _explicit_parse(parser: Parser) -> ModuleOp:
    """`parse_located` of a file that must be one `builtin.module`."""
    return parse_located(parser, False)


class IrglOptMain(xDSLOptMain):
    """xDSLOptMain plus `--lower-irgl`; the irgl universe comes from the
    `xdsl.universe` entry point, so nothing is registered twice."""

    version_format = (
        f"irgl-opt {_irgl_version()} (IrGL on xDSL), built on xdsl version "
        "{xdsl_version}"
    )

    def __init__(self, args: Sequence[str] | None = None):
        self._line_offset = 0
        try:
            super().__init__(description="IrGL optimizer and CUDA compiler", args=args)
        except ArgSpecParseError as error:
            # `-p` is checked in `setup_pipeline`; this is xDSL's parse of `-t`.
            raise UsageError(spec_syntax_error("-t", self.args.target, error)) from None

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except DiagnosticException as error:
            raise source_diagnostic(error) from error.__cause__

    def output_resulting_program(self, prog: ModuleOp) -> str:
        try:
            return super().output_resulting_program(prog)
        except DiagnosticException as error:
            raise source_diagnostic(error) from error.__cause__

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            implicit = not self.args.no_implicit_module
            return parse_remembered(
                self.ctx,
                io.read(),
                self.get_input_name(),
                self._line_offset,
                _implicit_parse if implicit else _explicit_parse,
            )

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
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        # The epilog imports every pass: only `--help` (and usage errors that
        # print it) pay for that, not every run.
        plain_help = arg_parser.format_help

        def format_help() -> str:
            if arg_parser.epilog is None:
                arg_parser.epilog = irgl_passes_help()
            return plain_help()

        arg_parser.format_help = format_help

    def setup_pipeline(self) -> None:
        check_pipeline(self.args.passes, self.available_passes)
        if self.args.lower_irgl:
            extra = self.args.passes
            self.args.passes = "lower-irgl" + ("," + extra if extra else "")
        super().setup_pipeline()
        # `irgl.cinclude` headers ship beside the program: look for them in
        # the input file's directory (the working directory for stdin),
        # after any `include_dirs` given explicitly.
        if self.pipeline.passes:  # (a run without passes needs no lowering module)
            from lowering.convert_irgl_c import add_include_dir

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
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`irgl-opt ... | head`)
        return EXIT_BROKEN_PIPE
    except (DiagnosticException, ParseError) as error:
        if isinstance(error, DiagnosticException):
            error = source_diagnostic(error)
        print(str(error).rstrip(), file=sys.stderr)
        # Verifier errors carry the IR with the offending op underlined as notes.
        for note in getattr(error, "__notes__", ()):
            print(str(note).rstrip(), file=sys.stderr)
        return 1
    except UsageError as error:
        print(f"irgl-opt: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # an input or output that cannot be opened
        where = f": '{error.filename}'" if error.filename is not None else ""
        print(f"irgl-opt: error: {error.strerror or error}{where}", file=sys.stderr)
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
    code = main()
    if code == EXIT_BROKEN_PIPE:
        # Python flushes stdout once more at exit; send that to /dev/null so
        # that it does not complain about the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(code)


if __name__ == "__main__":  # python -m irgl_tools.opt_main: as irgl-opt
    sys.argv[0] = "irgl-opt"
    console_main()
