"""Work-arounds for xDSL 0.74 behaviour that the IrGL tools depend on.

- String literals: xDSL's lexer matches them with
  `"(?:[^"\\\\\\n\\v\\f]+|\\\\(?:...))*"`, a `+` inside a `*`. On a file cut off
  inside a string that holds escapes there is no closing quote, and the
  regex engine tries every way of splitting the runs of plain characters
  before it gives up: exponential time, so the parser seems to hang. The same
  pattern with possessive quantifiers matches exactly the same strings
  (plain runs and escapes start with different characters, so there is only
  one way to split) and fails in linear time.
- Diagnostics: `Diagnostic.raise_exception(op, error)` (used by every
  verifier error, xDSL's and irgl's) prints the whole module into a note and
  forgets the op. The wrapped version also remembers the op on the error
  (`error_op`), so that irgl-opt can report it at its source location.
"""

from __future__ import annotations

import re
from typing import NoReturn

from xdsl.ir import IRNode, Operation
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')

_ERROR_OP = "irgl_error_op"
_original_raise_exception = Diagnostic.raise_exception


def _raise_exception(
    self: Diagnostic, ir: IRNode, underlying_error: Exception
) -> NoReturn:
    """`Diagnostic.raise_exception`, remembering the op the error is about."""
    if isinstance(ir, Operation) and not hasattr(underlying_error, _ERROR_OP):
        setattr(underlying_error, _ERROR_OP, ir)
    _original_raise_exception(self, ir, underlying_error)


def error_op(error: BaseException) -> Operation | None:
    """The op that a verifier diagnostic is about (None if unknown)."""
    op = getattr(error, _ERROR_OP, None)
    return op if isinstance(op, Operation) else None


def apply_xdsl_fixes() -> None:
    """Install the work-arounds (idempotent)."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # pyright: ignore[reportPrivateUsage]
    Diagnostic.raise_exception = _raise_exception
