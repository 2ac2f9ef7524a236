"""Interpreter functions of the C escape hatch (spec: CBlock, CExpr, CDecl,
CDeclGlobal, Names, NOP).

C text is opaque: an `irgl.cexpr` or an `irgl.cblock` inside a kernel runs
only if a Python implementation is registered for its exact text, or if it
is a call `NAME($0, $1, ...)` (spaced in any way) of a device kernel of the
program (which is then interpreted), and is otherwise an error naming the op
and its text. Implementations receive the
values of `$0`, `$1`, ... (numbers, numpy arrays for memrefs) and return the
expression's value (CExpr) or nothing (CBlock)::

    registry = CRegistry()
    registry.register("max($0, $1)", lambda a, b: max(a, b))

A CExpr's value must fit its result type, or the run stops with an error
naming the C text and the implementation: an integer (a Python or numpy
integer, or a bool) that the width holds, signed or unsigned (it goes on as
the signed value, as the interpreter's other integers do), a bool (or 0/1)
for `i1`, a real number for a float, a numpy array of the element type and
rank for a memref, never None.

Module-level CBlocks, CDecl, CDeclGlobal and Names are declarations for
other C text: they do nothing here. A few CUDA atomics that programs write
as C text (`atomicCAS(&$0[$1], $2, $3)`, ...) come registered.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
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
from irgl_interpreter.memory import numpy_dtype, wrap
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
    call = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*", text, re.DOTALL)
    if call is not None:
        wanted = [f"${i}" for i in range(len(op.operands))]
        given = [a.strip() for a in call[2].split(",")] if call[2].strip() else []
        module = interpreter.module
        for candidate in module.ops:
            if (
                isinstance(candidate, KernelOp)
                and candidate.kernel_kind == KernelKind.DEVICE
                and candidate.sym_name.data == call[1]
                and given == wanted
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
    fn = registry.lookup(op, text)
    value = _call(op, fn, args)
    if isinstance(op, c.CExprOp):
        value = _checked_result(op, fn, value, interpreter.index_bitwidth)
    return (value,)


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


def _implementation_name(fn: CImpl) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module else name


def _checked_result(op: c.CExprOp, fn: CImpl, value: Any, index_width: int) -> Any:
    """`value`, the result of the implementation `fn` of `op`'s C text, as a
    value of `op`'s result type (integers as Python ints, signed; i1 as a
    bool; floats as Python floats); an error naming the C text and `fn` if it
    is None or does not fit the type."""
    type_ = op.result.type

    def bad(what: str) -> IrglRuntimeError:
        return IrglRuntimeError(
            op,
            f"the implementation {_implementation_name(fn)} of C text "
            f"{op.text.data!r} returned {what}, but the 'irgl.cexpr' is of "
            f"type {type_}",
        )

    if value is None:
        raise bad("None (no value)")
    shown = f"{value!r} ({type(value).__name__})"
    if isinstance(type_, IntegerType | IndexType):
        width = type_.width.data if isinstance(type_, IntegerType) else index_width
        if not isinstance(value, numbers.Integral | np.bool_):
            raise bad(shown)
        number = int(value)
        if width == 1:
            if number not in (0, 1):
                raise bad(f"{shown}, which is neither true nor false")
            return bool(number)
        if not -(1 << (width - 1)) <= number < (1 << width):
            raise bad(f"{shown}, out of range for {width} bits")
        return wrap(number, width)
    if isinstance(type_, AnyFloat):
        if not isinstance(value, numbers.Real | np.bool_):
            raise bad(shown)
        return float(value)
    if isinstance(type_, MemRefType):
        if not isinstance(value, np.ndarray):
            raise bad(shown)
        element = type_.get_element_type()
        try:
            dtype = np.dtype(numpy_dtype(element))
        except ValueError:
            dtype = None
        rank = len(type_.get_shape())
        if value.ndim != rank or (dtype is not None and value.dtype != dtype):
            raise bad(f"an array of {value.dtype} of rank {value.ndim}")
    return value


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
