"""The exceptions of the runner (one base class, so callers catch one type)."""

from __future__ import annotations

__all__ = ["CompileError", "IrglError", "IrglRuntimeError", "UsageError"]


class IrglError(Exception):
    """Base class of the errors the runner raises."""


class CompileError(IrglError):
    """The program does not parse, verify, lower or emit, or nvcc failed; the
    message is the diagnostic (with the file's location where the compiler
    gives one)."""


class IrglRuntimeError(IrglError):
    """An entry point or runtime helper reported failure (``irgl_last_error()``)."""


class UsageError(IrglError):
    """Bad input from the user: an unknown app, a missing or bad graph, a bad
    option value (``irgl-bench`` exits with code 2)."""
