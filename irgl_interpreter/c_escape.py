"""Interpreter functions of the C escape hatch (spec: CBlock, CExpr, CDecl,
CDeclGlobal, Names, NOP).

C text is opaque: an `irgl.cexpr` or an `irgl.cblock` inside a kernel runs
only if a Python implementation is registered for its exact text, or if it
is exactly a call `NAME($0, $1, ...)` of a device kernel of the program
(which is then interpreted), and is otherwise an error naming the op and
its text. Implementations receive the
values of `$0`, `$1`, ... (numbers, numpy arrays for memrefs) and return the
expression's value (CExpr) or nothing (CBlock)::

    registry = CRegistry()
    registry.register("max($0, $1)", lambda a, b: max(a, b))

Module-level CBlocks, CDecl, CDeclGlobal and Names are declarations for
other C text: they do nothing here. A few CUDA atomics that programs write
as C text (`atomicCAS(&$0[$1], $2, $3)`, ...) come registered.
"""

from __future__ import annotations

import re
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
from irgl_dialect.attributes import KernelKind
from irgl_dialect.kernels import KernelOp
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


def _device_kernel(interpreter: Interpreter, op: Operation, text: str) -> Any:
    """The device kernel that C text `NAME($0, ..., $k)` calls, if any."""
    state = irgl_state(interpreter)
    key = (op, "device kernel")
    if key in state.cache:
        return state.cache[key]
    kernel = None
    call = re.fullmatch(r"\s*([A-Za-z_]\w*)\((.*)\)\s*;?\s*", text)
    if call is not None:
        wanted = ", ".join(f"${i}" for i in range(len(op.operands)))
        module = interpreter.module
        for candidate in module.ops:
            if (
                isinstance(candidate, KernelOp)
                and candidate.kernel_kind == KernelKind.DEVICE
                and candidate.sym_name.data == call[1]
                and call[2].strip() == wanted
                and len(candidate.body.block.args) == len(op.operands)
            ):
                kernel = candidate
    state.cache[key] = kernel
    return kernel


def _run_c(interpreter: Interpreter, op: c.CExprOp | c.CBlockOp, args: PythonValues):
    """Run C text: a registered implementation, or a call of a device kernel."""
    registry = _registry(interpreter)
    text = op.text.data
    if text not in registry.impls:
        kernel = _device_kernel(interpreter, op, text)
        if kernel is not None:
            return interpreter.run_ssacfg_region(
                kernel.body, args, kernel.sym_name.data
            )
    return (_call(op, registry.lookup(op, text), args),)


_REGISTRY_KEY = "irgl.c_registry"


def _registry(interpreter: Interpreter) -> CRegistry:
    """The registry of `interpreter`'s run (DEFAULT_REGISTRY unless set)."""
    registry: CRegistry = interpreter.get_data(
        CEscapeFunctions, _REGISTRY_KEY, lambda: DEFAULT_REGISTRY
    )
    return registry


def set_c_registry(interpreter: Interpreter, registry: CRegistry) -> None:
    """Run the C text of `interpreter`'s program with `registry`."""
    interpreter.set_data(CEscapeFunctions, _REGISTRY_KEY, registry)


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
        results = _run_c(interpreter, op, args)
        if len(results) != 1:
            raise IrglRuntimeError(
                op, f"C text {op.text.data!r} gave {len(results)} values, expected 1"
            )
        return results

    @impl(c.CBlockOp)
    def run_cblock(
        self, interpreter: Interpreter, op: c.CBlockOp, args: PythonValues
    ) -> PythonValues:
        if isinstance(op.parent_op(), ModuleOp):
            return ()  # file-scope C: declarations for other C text
        _run_c(interpreter, op, args[: len(op.args)])
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
