"""Small IR-building helpers shared by the lowering passes."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.kernels import YieldOp
from irgl_dialect.runtime_library import RuntimeFunction
from lowering.runtime_calls import call


class Inserter:
    """Inserts ops at one insertion point; runtime functions are declared in
    `table` (the IR at the insertion point may not be attached yet)."""

    def __init__(self, at: InsertPoint, table: Operation):
        self.at = at
        self.table = table

    def nested(self, at: InsertPoint) -> Inserter:
        """An inserter at another point, declaring into the same table."""
        return Inserter(at, self.table)

    def op(self, op: Operation) -> SSAValue:
        """Insert `op` and return its (first) result."""
        Rewriter.insert_op(op, self.at)
        return op.results[0]

    def stmt(self, op: Operation) -> None:
        """Insert an op without results."""
        Rewriter.insert_op(op, self.at)

    def const(self, value: int, type: Attribute) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(value, type)))  # type: ignore[arg-type]

    def call(self, fn: RuntimeFunction, args: Sequence[SSAValue]) -> list[SSAValue]:
        """`func.call @fn(args)`, declaring `@fn` once."""
        return list(call(fn, args, Builder(self.at), self.table).results)

    def call_value(self, fn: RuntimeFunction, args: Sequence[SSAValue]) -> SSAValue:
        """A runtime call with one result."""
        return self.call(fn, args)[0]

    def both(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.AndIOp(a, b))

    def negate(self, a: SSAValue) -> SSAValue:
        return self.op(arith.XOrIOp(a, self.const(1, i1)))


def take_body(region: Region) -> Block:
    """Detach the single block of an irgl region op, turning its `irgl.yield`
    into `scf.yield`, to become the body of an scf op."""
    block = region.block
    region.detach_block(block)
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    Rewriter.replace_op(terminator, scf.YieldOp())
    return block
