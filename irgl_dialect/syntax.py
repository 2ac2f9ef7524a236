"""Shared pieces of the custom syntax of irgl ops with regions, and the
parser that remembers where each op came from (`SourceParser`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, IRNode, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from irgl_dialect.kernels import add_implicit_yield
from irgl_dialect.placement import RULE_DOMINANCE

_SOURCE_SPANS: WeakKeyDictionary[Operation, Span] = WeakKeyDictionary()


def source_span(op: Operation) -> Span | None:
    """Where `op` was written (from its first token to its end), if it was
    parsed by a `SourceParser` and not rebuilt since."""
    return _SOURCE_SPANS.get(op)


_ERROR_OP = "irgl_error_op"
_raise_exception = Diagnostic.raise_exception


def _raise_exception_at_op(
    self: Diagnostic, ir: IRNode, underlying_error: Exception
) -> NoReturn:
    """`Diagnostic.raise_exception`, remembering the op the error is about."""
    if isinstance(ir, Operation) and not hasattr(underlying_error, _ERROR_OP):
        setattr(underlying_error, _ERROR_OP, ir)
    _raise_exception(self, ir, underlying_error)


def track_error_ops() -> None:
    """Make every verifier diagnostic remember its op (`error_op`).

    `Diagnostic.raise_exception(op, error)`, which xDSL's and irgl's
    verifier errors go through, prints the module into a note and forgets
    the op; the wrapped version also keeps it on the error. Idempotent.
    """
    Diagnostic.raise_exception = _raise_exception_at_op


def error_op(error: BaseException) -> Operation | None:
    """The op that a verifier diagnostic is about (None if unknown)."""
    op = getattr(error, _ERROR_OP, None)
    return op if isinstance(op, Operation) else None


def moved_to(error: BaseException, op: Operation) -> None:
    """Make `op` the op `error` is about (`error_op`): the op of the parsed
    module that a pass's copy of it failed on."""
    setattr(error, _ERROR_OP, op)


def source_diagnostic(error: DiagnosticException) -> DiagnosticException:
    """`error` reported at its op's place in the input: the message prefixed
    with `file:line:col: error:`, the note (the whole module) replaced by the
    op's source line with the op underlined. Unchanged where the op has no
    source location (it was made by a pass, or not parsed by a
    `SourceParser`)."""
    op = error_op(error)
    span = source_span(op) if op is not None else None
    if span is None or vars(error).get("irgl_sourced") or not error.args:
        return error
    line_end = span.input.get_end_of_line(span.start)
    first_line = Span(span.start, min(span.end, line_end), span.input, span.line_offset)
    context = first_line.print_with_context().rstrip("\n").split("\n", 1)[1]
    error.args = (f"{first_line.get_location()}: error: {error.args[0]}",)
    vars(error).update(__notes__=[context], irgl_sourced=True)
    return error


def end_of_code_before(source: Input, pos: Position) -> Position:
    """The position just after the last code character before `pos`,
    skipping whitespace and `//` comments."""
    text = source.content[:pos]
    while True:
        stripped = text.rstrip()
        line_start = stripped.rfind("\n") + 1
        comment = stripped.find("//", line_start)
        if comment < 0 or '"' in stripped[line_start:comment]:
            return len(stripped)
        text = stripped[:comment]


def parse_body(parser: Parser, args: Sequence[Parser.Argument] = ()) -> Region:
    """Parse a single-block body whose `irgl.yield` may be left implicit.

    A missing body is reported at the end of the op's text (not at the next
    token, which may be lines further down).
    """
    region = parser.parse_optional_region(args)
    if region is None:
        _missing_region(parser)
    add_implicit_yield(region)
    return region


def _missing_region(parser: Parser) -> NoReturn:
    end = end_of_code_before(parser.lexer.input, parser.pos)
    parser.raise_error("expected the op's region `{ ... }` after this", end, end)


def print_body(printer: Printer, region: Region, *, terminator: bool = False) -> None:
    """Print a body, hiding its empty `irgl.yield` unless `terminator`."""
    printer.print_string(" ")
    printer.print_region(
        region,
        print_entry_block_args=False,
        print_empty_block=False,
        print_block_terminators=terminator,
    )


class SourceParser(Parser):
    """xDSL's parser that records where each op was written (`source_span`)
    and reports uses before definitions that xDSL would let through.

    xDSL resolves an operand that is not defined yet to a placeholder that
    the later definition replaces in its users; an operand defined inside
    the op's own region is defined before the op exists, so the placeholder
    stays in the op and fails later with a bare Python error.
    """

    def __init__(
        self,
        ctx: Context,
        input: str | bytes,
        name: str = "<unknown>",
        line_offset: int = 0,
    ):
        """`line_offset`: the lines before `input` in its file (a chunk of
        `--split-input-file`), added to the line numbers of `source_span`."""
        super().__init__(ctx, input, name)
        track_error_ops()
        self._line_offset = line_offset
        self._forward_uses: dict[SSAValue, Span] = {}

    def resolve_operand(
        self, operand: UnresolvedOperand, type: Attribute
    ) -> SSAValue[Attribute]:
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_uses.setdefault(value, operand.span)
        return value

    def parse_region(
        self, arguments: Iterable[Parser.Argument] | None = None
    ) -> Region:
        region = self.parse_optional_region(arguments)
        if region is None:
            _missing_region(self)
        return region

    def parse_operation(self) -> Operation:
        start = self.pos
        op = super().parse_operation()
        if any(isinstance(operand, ForwardDeclaredValue) for operand in op.operands):
            self._check_forward_operands(op)
        end = end_of_code_before(self.lexer.input, self.pos)
        _SOURCE_SPANS[op] = Span(
            start, max(end, start + 1), self.lexer.input, self._line_offset
        )
        return op

    def _check_forward_operands(self, op: Operation) -> None:
        pending = {
            id(value)
            for references in self.forward_ssa_references.values()
            for value in references.values()
        }
        for operand in op.operands:
            if not isinstance(operand, ForwardDeclaredValue) or id(operand) in pending:
                continue
            span = self._forward_uses.get(operand)
            name = span.text if span is not None else "an operand"
            self.raise_error(
                f"'{op.name}' uses {name}, which is defined only inside the "
                f"op's own region; values must be defined before their uses "
                f"(rule: {RULE_DOMINANCE})",
                span,
            )

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """The module; an input of only whitespace and comments is an empty
        module (as for mlir-opt), and one that ends inside an operation, a
        region or a block says so at its end."""
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as error:
            use = self._first_undefined_use()
            if use is None or not error.msg.startswith("values used but not"):
                self._raise_at_end(error)
                raise
            raise ParseError(
                use,
                f"{use.text} is used but never defined (values used but "
                f"not defined: [{', '.join(self._undefined_names())}])",
            ) from None

    def _raise_at_end(self, error: ParseError) -> None:
        """A clearer message for a parse error at the end of the input."""
        at = self._current_token
        if at.kind != MLIRTokenKind.EOF or error.msg.startswith("values used"):
            return
        # xDSL's message there is often a fragment (" in block definition")
        detail = error.msg.strip()
        detail = "" if detail.startswith("in ") else f" ({detail})"
        raise ParseError(
            at.span,
            "unexpected end of input: an operation, region or block is not "
            f"finished, a '}}' may be missing{detail}",
        ) from error

    def _undefined_names(self) -> Iterable[str]:
        return ("%" + name for name in self.forward_ssa_references)

    def _first_undefined_use(self) -> Span | None:
        spans = [
            span
            for references in self.forward_ssa_references.values()
            for value in references.values()
            if (span := self._forward_uses.get(value)) is not None
        ]
        return min(spans, key=lambda span: span.start, default=None)


#: Modules parsed lately, by their text and what decided their parse (see
#: :func:`parse_remembered`).
_PARSED: OrderedDict[tuple[object, ...], ModuleOp] = OrderedDict()
_PARSED_LIMIT = 32
_PARSED_LOCK = threading.Lock()


def parse_remembered(
    ctx: Context,
    input: str | bytes,
    name: str = "<unknown>",
    line_offset: int = 0,
    parse: Callable[[SourceParser], ModuleOp] = SourceParser.parse_module,
) -> ModuleOp:
    """`parse(SourceParser(ctx, input, name, line_offset))`, remembered per
    process: the same input parsed again (the same name, line offset, parse
    function and dialects of `ctx`) gives a clone of the module parsed before,
    with its `source_span`s, instead of parsing again (a clone costs a tenth
    of a parse; the interpreter, the runner and the tests parse an app many
    times). Errors are not remembered: a failing input is parsed each time."""
    key = (
        input,
        name,
        line_offset,
        parse,
        ctx.allow_unregistered,
        tuple(sorted(ctx.registered_dialect_names)),
        tuple(sorted(d.name for d in ctx.loaded_dialects)),
    )
    with _PARSED_LOCK:
        found = _PARSED.get(key)
        if found is not None:
            _PARSED.move_to_end(key)
    if found is None:
        found = parse(SourceParser(ctx, input, name, line_offset))
        with _PARSED_LOCK:
            _PARSED[key] = found
            if len(_PARSED) > _PARSED_LIMIT:
                _PARSED.popitem(last=False)
    module = found.clone()
    for original, copy in zip(found.walk(), module.walk(), strict=True):
        span = _SOURCE_SPANS.get(original)
        if span is not None:
            _SOURCE_SPANS[copy] = span
    return module
