"""Reductions of an inner `irgl.forall ... reduce(kind, %init : T)`: the
combining operation, its identity, and the loop body that accumulates.

A reducing ForAll lowers to a loop-carried value: the sequential path of
convert-irgl-loops gives the `scf.for` an iter_arg, and convert-irgl-nested-edges
gives each lane a partial that warp or block reductions
(`irgl_warp_reduce_<kind>_<T>`, `irgl_block_reduce_<kind>_<T>`) combine for
the node's owner thread. No atomics are involved.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.runtime_library import RuntimeFunction, overload

#: Bit width of `index` on the CUDA target (irgl_index is int64_t).
_INDEX_WIDTH = 64


def combine(kind: str, a: SSAValue, b: SSAValue) -> Operation:
    """The operation that combines `a` and `b` under reduction `kind` (`or`,
    `and`, `xor`: integers only)."""
    if isinstance(a.type, AnyFloat):
        float_ops = {
            "add": arith.AddfOp,
            "min": arith.MinnumfOp,
            "max": arith.MaxnumfOp,
        }
        return float_ops[kind](a, b)
    int_ops = {
        "add": arith.AddiOp,
        "min": arith.MinSIOp,
        "max": arith.MaxSIOp,
        "or": arith.OrIOp,
        "and": arith.AndIOp,
        "xor": arith.XOrIOp,
    }
    return int_ops[kind](a, b)


def identity(kind: str, type_: Attribute) -> Operation:
    """A constant `e` with `combine(kind, e, x) == x` for every `x` of `type_`."""
    if isinstance(type_, AnyFloat):
        value = {"add": 0.0, "min": math.inf, "max": -math.inf}[kind]
        return arith.ConstantOp(FloatAttr(value, type_))
    assert isinstance(type_, IndexType | IntegerType)
    width = _INDEX_WIDTH if isinstance(type_, IndexType) else type_.width.data
    value = {
        "add": 0,
        "min": 2 ** (width - 1) - 1,
        "max": -(2 ** (width - 1)),
        "or": 0,
        "xor": 0,
        "and": -1,
    }[kind]
    return arith.ConstantOp(IntegerAttr(value, type_))


def reduction_of(loop: ForAllOp) -> tuple[str, SSAValue, SSAValue] | None:
    """`(kind, init, result)` of a reducing ForAll, else None."""
    if loop.reduce is None or loop.init is None or loop.result is None:
        return None
    return loop.reduce.data, loop.init, loop.result


def accumulating_block(body: Block, kind: str, into: Block | None = None) -> Block:
    """Turn a reducing ForAll's body (its `irgl.yield %v`) into an `scf.for`
    body that carries the partial: `^bb(%i, %acc)`, ending in
    `scf.yield combine(%acc, %v)`. `into` (default: `body` itself, detached by
    the caller) receives the operations."""
    block = body if into is None else into
    terminator = block.last_op
    assert isinstance(terminator, YieldOp) and len(terminator.values) == 1
    value = terminator.values[0]
    acc = block.insert_arg(value.type, len(block.args))
    step = combine(kind, acc, value)
    Rewriter.replace_op(terminator, [step, scf.YieldOp(step.results[0])])
    return block


def warp_reduce(kind: str, type_: Attribute) -> RuntimeFunction:
    """`irgl_warp_reduce_<kind>_<T>(mask, v)`: the total over the lanes of mask."""
    fn = overload(f"irgl_warp_reduce_{kind}", type_)
    assert fn is not None, f"no warp reduction {kind} for {type_}"
    return fn


def block_reduce(kind: str, type_: Attribute) -> RuntimeFunction:
    """`irgl_block_reduce_<kind>_<T>(v)`: the total over the block (block-uniform)."""
    fn = overload(f"irgl_block_reduce_{kind}", type_)
    assert fn is not None, f"no block reduction {kind} for {type_}"
    return fn
