"""Work-arounds for xDSL 0.74 behaviour that the IrGL tools depend on.

- String literals: xDSL's lexer matches them with
  `"(?:[^"\\\\\\n\\v\\f]+|\\\\(?:...))*"`, a `+` inside a `*`. On a file cut off
  inside a string that holds escapes there is no closing quote, and the
  regex engine tries every way of splitting the runs of plain characters
  before it gives up: exponential time, so the parser seems to hang. The same
  pattern with possessive quantifiers matches exactly the same strings
  (plain runs and escapes start with different characters, so there is only
  one way to split) and fails in linear time.
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


def apply_xdsl_fixes() -> None:
    """Install the work-arounds (idempotent)."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # pyright: ignore[reportPrivateUsage]
