"""Interpreter functions of the C escape hatch (spec: CBlock, CExpr, CDecl,
CDeclGlobal, Names, NOP).

C text is opaque: an `irgl.cexpr` or an `irgl.cblock` inside a kernel runs
only if a Python implementation is registered for its exact text, and is
otherwise an error naming the op and its text. Implementations receive the
values of `$0`, `$1`, ... (numbers, numpy arrays for memrefs) and return the
expression's value (CExpr) or nothing (CBlock)::

    registry = CRegistry()
    registry.register("max($0, $1)", lambda a, b: max(a, b))

Module-level CBlocks, CDecl, CDeclGlobal and Names are declarations for
other C text: they do nothing here. A few CUDA atomics that programs write
as C text (`atomicCAS(&$0[$1], $2, $3)`, ...) come registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from irgl_dialect import c_escape as c
from irgl_interpreter.state import IrglRuntimeError, irgl_state

#: A Python implementation of a piece of C text.
CImpl = Callable[..., Any]


def _cas(array: np.ndarray, i: int, compare: Any, value: Any) -> Any:
    old = array[i].item()
    if old == compare:
        array[i] = value
    return old


def _fetch(update: Callable[[Any, Any], Any]) -> CImpl:
    def run(array: np.ndarray, i: int, value: Any) -> Any:
        old = array[i].item()
        array[i] = update(old, value)
        return old

    return run


def _builtins() -> dict[str, CImpl]:
    table: dict[str, CImpl] = {"atomicCAS(&$0[$1], $2, $3)": _cas}
    for name, update in (
        ("atomicAdd", lambda a, b: a + b),
        ("atomicSub", lambda a, b: a - b),
        ("atomicMin", min),
        ("atomicMax", max),
        ("atomicExch", lambda a, b: b),
        ("atomicOr", lambda a, b: a | b),
        ("atomicAnd", lambda a, b: a & b),
    ):
        table[f"{name}(&$0[$1], $2)"] = _fetch(update)
    return table


@dataclass
class CRegistry:
    """Python implementations of C text, by exact text."""

    impls: dict[str, CImpl] = field(default_factory=_builtins)

    def register(self, text: str, fn: CImpl) -> None:
        """Run `fn($0, $1, ...)` wherever a CExpr/CBlock has exactly `text`."""
        self.impls[text] = fn

    def update(self, impls: dict[str, CImpl] | Iterable[tuple[str, CImpl]]) -> None:
        """Register several implementations at once."""
        for text, fn in dict(impls).items():
            self.register(text, fn)

    def lookup(self, op: Operation, text: str) -> CImpl:
        fn = self.impls.get(text)
        if fn is None:
            raise IrglRuntimeError(
                op,
                f"'{op.name}' with C text {text!r} cannot be interpreted: no "
                "Python implementation is registered for it (register one with "
                "CRegistry.register(text, fn), e.g. through "
                "irgl_interpreter.run_host(..., c_impls={text: fn}))",
            )
        return fn


#: Implementations every run starts with (add to it with `register_c`).
DEFAULT_REGISTRY = CRegistry()


def register_c(text: str, fn: CImpl) -> None:
    """Register `fn` for `text` for every later run (see :class:`CRegistry`)."""
    DEFAULT_REGISTRY.register(text, fn)


def _registry(interpreter: Interpreter) -> CRegistry:
    state = irgl_state(interpreter)
    return state.c_registry if state.c_registry is not None else DEFAULT_REGISTRY


def _call(op: c.CExprOp | c.CBlockOp, fn: CImpl, args: PythonValues) -> Any:
    try:
        return fn(*args)
    except IrglRuntimeError:
        raise
    except Exception as error:
        raise IrglRuntimeError(
            op,
            f"the implementation of C text {op.text.data!r} failed: "
            f"{type(error).__name__}: {error}",
        ) from error


@register_impls
class CEscapeFunctions(InterpreterFunctions):
    """C text through registered Python implementations; declarations do nothing."""

    @impl(c.CExprOp)
    def run_cexpr(
        self, interpreter: Interpreter, op: c.CExprOp, args: PythonValues
    ) -> PythonValues:
        fn = _registry(interpreter).lookup(op, op.text.data)
        return (_call(op, fn, args),)

    @impl(c.CBlockOp)
    def run_cblock(
        self, interpreter: Interpreter, op: c.CBlockOp, args: PythonValues
    ) -> PythonValues:
        if isinstance(op.parent_op(), ModuleOp):
            return ()  # file-scope C: declarations for other C text
        fn = _registry(interpreter).lookup(op, op.text.data)
        _call(op, fn, args[: len(op.args)])
        return ()

    @impl(c.CDeclOp)
    def run_cdecl(
        self, interpreter: Interpreter, op: c.CDeclOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(c.CDeclGlobalOp)
    def run_cdecl_global(
        self, interpreter: Interpreter, op: c.CDeclGlobalOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(c.NamesOp)
    def run_names(
        self, interpreter: Interpreter, op: c.NamesOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(c.NopOp)
    def run_nop(
        self, interpreter: Interpreter, op: c.NopOp, args: PythonValues
    ) -> PythonValues:
        return ()
