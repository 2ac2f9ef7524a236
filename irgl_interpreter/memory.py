"""Memory and the arithmetic xDSL's interpreter lacks, for IrGL programs.

Memrefs are numpy arrays (so that a Python caller hands node properties
over without copying); loads give Python numbers. Allocations are
zero-filled, as device allocations are in our runtime. `memref.atomic_rmw`
returns the old value. The arith operations the benchmarks use beyond
xDSL's `ArithFunctions` (min/max, shifts, extensions, int<->float) are here,
with the wrap-around of their bit width.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import arith, builtin, memref
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from irgl_interpreter.state import IrglRuntimeError, irgl_state

_NUMPY_DTYPES: dict[Attribute, Any] = {
    builtin.i1: np.bool_,
    builtin.i8: np.int8,
    builtin.i16: np.int16,
    builtin.i32: np.int32,
    builtin.i64: np.int64,
    builtin.IndexType(): np.int64,
    builtin.f32: np.float32,
    builtin.f64: np.float64,
}


def numpy_dtype(element_type: Attribute) -> Any:
    """The numpy dtype that holds elements of `element_type`."""
    if element_type not in _NUMPY_DTYPES:
        raise ValueError(f"no numpy dtype for memref element type {element_type}")
    return _NUMPY_DTYPES[element_type]


def _width(interpreter: Interpreter, type_: Attribute) -> int:
    if isinstance(type_, builtin.IntegerType):
        return type_.width.data
    return interpreter.index_bitwidth


def wrap(value: int, width: int) -> int:
    """`value` as a signed integer of `width` bits (two's complement)."""
    mask = (1 << width) - 1
    value &= mask
    return value - (1 << width) if value >> (width - 1) else value


def _unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def _index(
    op: Operation, array: np.ndarray, indices: tuple[int, ...]
) -> tuple[int, ...]:
    if len(indices) != array.ndim:
        raise IrglRuntimeError(
            op, f"{len(indices)} indices into a rank-{array.ndim} memref"
        )
    for axis, (i, n) in enumerate(zip(indices, array.shape, strict=True)):
        if not 0 <= i < n:
            raise IrglRuntimeError(
                op,
                f"index {i} out of bounds of a memref of {n} elements"
                + (f" (dimension {axis})" if array.ndim > 1 else ""),
            )
    return indices


@register_impls
class MemoryFunctions(InterpreterFunctions):
    """memref ops on numpy arrays (registered over xDSL's MemRefFunctions)."""

    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        return (_allocate(op, op.memref.type, args),)

    @impl(memref.AllocaOp)
    def run_alloca(
        self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues
    ) -> PythonValues:
        return (_allocate(op, op.memref.type, args),)

    @impl(memref.DeallocOp)
    def run_dealloc(
        self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(memref.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues
    ) -> PythonValues:
        array, *indices = args
        key = tuple(indices)
        for i in key:
            if i < 0:  # numpy would count from the end
                _index(op, array, key)
        try:
            return (array[key].item(),)
        except IndexError:
            _index(op, array, key)
            raise

    @impl(memref.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues
    ) -> PythonValues:
        value, array, *indices = args
        key = tuple(indices)
        for i in key:
            if i < 0:  # numpy would count from the end
                _index(op, array, key)
        try:
            array[key] = value
        except IndexError:
            _index(op, array, key)
            raise
        except OverflowError:
            array[key] = array.dtype.type(value & ((1 << (8 * array.itemsize)) - 1))
        return ()

    @impl(memref.AtomicRMWOp)
    def run_atomic_rmw(
        self, interpreter: Interpreter, op: memref.AtomicRMWOp, args: PythonValues
    ) -> PythonValues:
        value, array, *indices = args
        key = _index(op, array, tuple(indices))
        old = array[key].item()
        kind = op.kind.value.data
        type_ = op.result.type
        if kind in (0, 9, 3, 6, 13, 14):  # float kinds
            new = {
                0: lambda: old + value,
                9: lambda: old * value,
                3: lambda: max(old, value),
                13: lambda: max(old, value),
                6: lambda: min(old, value),
                14: lambda: min(old, value),
            }[kind]()
        elif kind == 2:
            new = value
        else:
            width = _width(interpreter, type_)
            signed = {
                1: lambda: old + value,
                4: lambda: max(old, value),
                7: lambda: min(old, value),
                10: lambda: old * value,
                11: lambda: old | value,
                12: lambda: old & value,
            }
            if kind in signed:
                new = wrap(signed[kind](), width)
            elif kind in (5, 8):
                a, b = _unsigned(old, width), _unsigned(value, width)
                new = wrap(max(a, b) if kind == 5 else min(a, b), width)
            else:
                raise IrglRuntimeError(op, f"memref.atomic_rmw kind {kind} is unknown")
        array[key] = new
        stats = irgl_state(interpreter).stats
        stats.atomics += 1
        if new != old:
            stats.atomic_changes += 1
        return (old,)


def _allocate(op: Operation, type_: Attribute, sizes: PythonValues) -> np.ndarray:
    assert isinstance(type_, builtin.MemRefType)
    shape: list[int] = []
    dynamic = iter(sizes)
    for extent in type_.get_shape():
        shape.append(int(next(dynamic)) if extent < 0 else extent)
    if any(n < 0 for n in shape):
        raise IrglRuntimeError(op, f"allocation of negative size {shape}")
    return np.zeros(shape, dtype=numpy_dtype(type_.get_element_type()))


def _binary_int(interpreter: Interpreter, op: Operation, fn: Any) -> PythonValues:
    width = _width(interpreter, op.results[0].type)
    return (wrap(fn(width), width),)


_SIGNED_PREDICATES = {
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    2: lambda a, b: a < b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a >= b,
}


@register_impls
class ArithExtraFunctions(InterpreterFunctions):
    """arith ops used by IrGL programs that xDSL's ArithFunctions lacks, and
    faster versions of the integer ops it has (same results)."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        value = op.value
        if isinstance(value, builtin.IntegerAttr):
            width = _width(interpreter, op.results[0].type)
            return (wrap(value.value.data, width),)
        if isinstance(value, builtin.FloatAttr):
            return (value.value.data,)
        raise IrglRuntimeError(op, f"arith.constant of {value} is not supported")

    @impl(arith.AddiOp)
    def run_addi(
        self, interpreter: Interpreter, op: arith.AddiOp, args: PythonValues
    ) -> PythonValues:
        return (wrap(args[0] + args[1], _width(interpreter, op.results[0].type)),)

    @impl(arith.SubiOp)
    def run_subi(
        self, interpreter: Interpreter, op: arith.SubiOp, args: PythonValues
    ) -> PythonValues:
        return (wrap(args[0] - args[1], _width(interpreter, op.results[0].type)),)

    @impl(arith.MuliOp)
    def run_muli(
        self, interpreter: Interpreter, op: arith.MuliOp, args: PythonValues
    ) -> PythonValues:
        return (wrap(args[0] * args[1], _width(interpreter, op.results[0].type)),)

    @impl(arith.AndIOp)
    def run_andi(
        self, interpreter: Interpreter, op: arith.AndIOp, args: PythonValues
    ) -> PythonValues:
        a, b = int(args[0]), int(args[1])
        return (wrap(a & b, _width(interpreter, op.results[0].type)),)

    @impl(arith.OrIOp)
    def run_ori(
        self, interpreter: Interpreter, op: arith.OrIOp, args: PythonValues
    ) -> PythonValues:
        a, b = int(args[0]), int(args[1])
        return (wrap(a | b, _width(interpreter, op.results[0].type)),)

    @impl(arith.XOrIOp)
    def run_xori(
        self, interpreter: Interpreter, op: arith.XOrIOp, args: PythonValues
    ) -> PythonValues:
        a, b = int(args[0]), int(args[1])
        return (wrap(a ^ b, _width(interpreter, op.results[0].type)),)

    @impl(arith.CmpiOp)
    def run_cmpi(
        self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues
    ) -> PythonValues:
        width = _width(interpreter, op.operands[0].type)
        predicate = op.predicate.value.data
        a, b = int(args[0]), int(args[1])
        if predicate < 6:
            return (_SIGNED_PREDICATES[predicate](wrap(a, width), wrap(b, width)),)
        compare = _SIGNED_PREDICATES[predicate - 4]
        return (compare(_unsigned(a, width), _unsigned(b, width)),)

    @impl(arith.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: arith.SelectOp, args: PythonValues
    ) -> PythonValues:
        return (args[1] if args[0] else args[2],)

    @impl(arith.IndexCastOp)
    def run_index_cast(
        self, interpreter: Interpreter, op: arith.IndexCastOp, args: PythonValues
    ) -> PythonValues:
        into = _width(interpreter, op.results[0].type)
        return (
            wrap(wrap(int(args[0]), _width(interpreter, op.operands[0].type)), into),
        )

    @impl(arith.MinSIOp)
    def run_minsi(
        self, interpreter: Interpreter, op: arith.MinSIOp, args: PythonValues
    ) -> PythonValues:
        return (min(args),)

    @impl(arith.MaxSIOp)
    def run_maxsi(
        self, interpreter: Interpreter, op: arith.MaxSIOp, args: PythonValues
    ) -> PythonValues:
        return (max(args),)

    @impl(arith.MinUIOp)
    def run_minui(
        self, interpreter: Interpreter, op: arith.MinUIOp, args: PythonValues
    ) -> PythonValues:
        w = _width(interpreter, op.result.type)
        return (wrap(min(_unsigned(a, w) for a in args), w),)

    @impl(arith.MaxUIOp)
    def run_maxui(
        self, interpreter: Interpreter, op: arith.MaxUIOp, args: PythonValues
    ) -> PythonValues:
        w = _width(interpreter, op.result.type)
        return (wrap(max(_unsigned(a, w) for a in args), w),)

    @impl(arith.ShRUIOp)
    def run_shrui(
        self, interpreter: Interpreter, op: arith.ShRUIOp, args: PythonValues
    ) -> PythonValues:
        a, b = args
        return _binary_int(interpreter, op, lambda w: _unsigned(a, w) >> b)

    @impl(arith.RemUIOp)
    def run_remui(
        self, interpreter: Interpreter, op: arith.RemUIOp, args: PythonValues
    ) -> PythonValues:
        a, b = args
        if b == 0:
            raise IrglRuntimeError(op, "division by zero")
        return _binary_int(interpreter, op, lambda w: _unsigned(a, w) % _unsigned(b, w))

    @impl(arith.DivUIOp)
    def run_divui(
        self, interpreter: Interpreter, op: arith.DivUIOp, args: PythonValues
    ) -> PythonValues:
        a, b = args
        if b == 0:
            raise IrglRuntimeError(op, "division by zero")
        return _binary_int(
            interpreter, op, lambda w: _unsigned(a, w) // _unsigned(b, w)
        )

    @impl(arith.DivSIOp)
    def run_divsi(
        self, interpreter: Interpreter, op: arith.DivSIOp, args: PythonValues
    ) -> PythonValues:
        a, b = int(args[0]), int(args[1])
        if b == 0:
            raise IrglRuntimeError(op, "division by zero")
        quotient = abs(a) // abs(b)  # C division truncates toward zero
        return _binary_int(
            interpreter, op, lambda w: quotient if (a < 0) == (b < 0) else -quotient
        )

    @impl(arith.RemSIOp)
    def run_remsi(
        self, interpreter: Interpreter, op: arith.RemSIOp, args: PythonValues
    ) -> PythonValues:
        a, b = int(args[0]), int(args[1])
        if b == 0:
            raise IrglRuntimeError(op, "division by zero")
        rem = abs(a) % abs(b)  # the sign of the dividend, as in C
        return _binary_int(interpreter, op, lambda w: rem if a >= 0 else -rem)

    @impl(arith.ExtSIOp)
    def run_extsi(
        self, interpreter: Interpreter, op: arith.ExtSIOp, args: PythonValues
    ) -> PythonValues:
        return (wrap(int(args[0]), _width(interpreter, op.input.type)),)

    @impl(arith.ExtUIOp)
    def run_extui(
        self, interpreter: Interpreter, op: arith.ExtUIOp, args: PythonValues
    ) -> PythonValues:
        return (_unsigned(int(args[0]), _width(interpreter, op.input.type)),)

    @impl(arith.TruncIOp)
    def run_trunci(
        self, interpreter: Interpreter, op: arith.TruncIOp, args: PythonValues
    ) -> PythonValues:
        return (wrap(int(args[0]), _width(interpreter, op.result.type)),)

    @impl(arith.SIToFPOp)
    def run_sitofp(
        self, interpreter: Interpreter, op: arith.SIToFPOp, args: PythonValues
    ) -> PythonValues:
        return (_round(op.result.type, float(args[0])),)

    @impl(arith.FPToSIOp)
    def run_fptosi(
        self, interpreter: Interpreter, op: arith.FPToSIOp, args: PythonValues
    ) -> PythonValues:
        return (wrap(int(args[0]), _width(interpreter, op.result.type)),)

    @impl(arith.NegfOp)
    def run_negf(
        self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues
    ) -> PythonValues:
        return (-args[0],)

    @impl(arith.DivfOp)
    def run_divf(
        self, interpreter: Interpreter, op: arith.DivfOp, args: PythonValues
    ) -> PythonValues:
        a, b = args
        if b == 0.0:
            inf = float("nan") if a == 0.0 or a != a else float("inf")
            return (inf if a >= 0 or a != a else -inf,)
        return (_round(op.result.type, a / b),)

    @impl(arith.AddfOp)
    def run_addf(
        self, interpreter: Interpreter, op: arith.AddfOp, args: PythonValues
    ) -> PythonValues:
        return (_round(op.result.type, args[0] + args[1]),)

    @impl(arith.SubfOp)
    def run_subf(
        self, interpreter: Interpreter, op: arith.SubfOp, args: PythonValues
    ) -> PythonValues:
        return (_round(op.result.type, args[0] - args[1]),)

    @impl(arith.MulfOp)
    def run_mulf(
        self, interpreter: Interpreter, op: arith.MulfOp, args: PythonValues
    ) -> PythonValues:
        return (_round(op.result.type, args[0] * args[1]),)

    @impl(arith.ExtFOp)
    def run_extf(
        self, interpreter: Interpreter, op: arith.ExtFOp, args: PythonValues
    ) -> PythonValues:
        return (float(args[0]),)

    @impl(arith.TruncFOp)
    def run_truncf(
        self, interpreter: Interpreter, op: arith.TruncFOp, args: PythonValues
    ) -> PythonValues:
        return (_round(op.result.type, float(args[0])),)


def _round(type_: Attribute, value: float) -> float:
    """`value` rounded to the precision of `type_` (f32 arithmetic is f32)."""
    if isinstance(type_, builtin.Float32Type):
        return float(np.float32(value))
    return value
