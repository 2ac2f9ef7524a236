"""IR building for the lowering passes: xDSL's `Builder` with the few helpers
the passes share (constants, runtime calls, boolean ops)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder, InsertOpInvT
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.kernels import YieldOp
from irgl_dialect.runtime_library import RuntimeFunction
from lowering.runtime_calls import call


@dataclass
class LoweringBuilder(Builder):
    """A `Builder` that declares the runtime functions it calls in `table`
    (the IR at the insertion point may not be attached yet). Built with
    `rewriter`, it inserts through that `PatternRewriter` (so the pattern
    driver sees every new op)."""

    table: Operation | None = field(default=None, kw_only=True)
    rewriter: PatternRewriter | None = field(default=None, kw_only=True)

    def insert(
        self, op: InsertOpInvT, insertion_point: InsertPoint | None = None
    ) -> InsertOpInvT:
        if self.rewriter is not None:
            return self.rewriter.insert(op, insertion_point or self.insertion_point)
        return super().insert(op, insertion_point)

    @property
    def at(self) -> InsertPoint:
        return self.insertion_point

    def nested(self, at: InsertPoint) -> LoweringBuilder:
        """A builder at another point (of a new block), declaring into the
        same table."""
        return LoweringBuilder(at, table=self.table)

    def op(self, op: Operation) -> SSAValue:
        """Insert `op` and return its (first) result."""
        return self.insert(op).results[0]

    def stmt(self, op: Operation) -> None:
        """Insert an op without results."""
        self.insert(op)

    def gpu_x(self, cls: type[Operation]) -> SSAValue:
        """`gpu.thread_id x` (or `cls` = block_id, block_dim, grid_dim)."""
        return self.op(cls(gpu.DimensionAttr(gpu.DimensionEnum.X)))  # type: ignore[call-arg]

    def const(self, value: int, type: Attribute) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(value, type)))  # type: ignore[arg-type]

    def index(self, value: int) -> SSAValue:
        """An `index` constant."""
        return self.const(value, IndexType())

    def call(self, fn: RuntimeFunction, args: Sequence[SSAValue]) -> list[SSAValue]:
        """`func.call @fn(args)`, declaring `@fn` once."""
        return list(call(fn, args, self, self.table).results)

    def call_value(self, fn: RuntimeFunction, args: Sequence[SSAValue]) -> SSAValue:
        """A runtime call with one result."""
        return self.call(fn, args)[0]

    def both(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.AndIOp(a, b))

    def negate(self, a: SSAValue) -> SSAValue:
        return self.op(arith.XOrIOp(a, self.const(1, i1)))


def emit_if(
    at: LoweringBuilder,
    cond: SSAValue,
    then: Callable[[LoweringBuilder], list[SSAValue]],
    otherwise: Callable[[LoweringBuilder], list[SSAValue]] | None = None,
    types: Sequence[Attribute] = (),
) -> list[SSAValue]:
    """`scf.if cond` at `at`, its branches filled by `then` and `otherwise`
    (none: no else branch), each returning the values it yields, of
    `types`; returns the results."""
    then_block = Block()
    then_block.add_op(scf.YieldOp(*then(at.nested(InsertPoint.at_end(then_block)))))
    else_region = None
    if otherwise is not None:
        else_block = Block()
        else_block.add_op(
            scf.YieldOp(*otherwise(at.nested(InsertPoint.at_end(else_block))))
        )
        else_region = Region(else_block)
    op = scf.IfOp(cond, list(types), Region(then_block), else_region)
    at.stmt(op)
    return list(op.results)


def clone_body(region: Region, into: Block, mapping: dict[SSAValue, SSAValue]) -> None:
    """Append copies of the ops of an irgl region op's single block to `into`
    (its `irgl.yield` as `scf.yield`), operands through `mapping`."""
    for op in region.block.ops:
        into.add_op(
            scf.YieldOp() if isinstance(op, YieldOp) else op.clone(value_mapper=mapping)
        )


def take_body(region: Region, rewriter: PatternRewriter | None = None) -> Block:
    """Detach the single block of an irgl region op, turning its `irgl.yield`
    into `scf.yield`, to become the body of an scf op (through `rewriter`
    when a pattern does it)."""
    block = region.block
    region.detach_block(block)
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    if rewriter is not None:
        rewriter.replace(terminator, scf.YieldOp())
    else:
        Rewriter.replace_op(terminator, scf.YieldOp())
    return block


def zero_of(type_: Attribute) -> Operation | None:
    """An `arith.constant` zero of `type_` (an integer, index or float), or
    None for a type without one."""
    if isinstance(type_, IndexType | IntegerType):
        return arith.ConstantOp(IntegerAttr(0, type_))
    if isinstance(type_, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, type_))
    return None


def unique_name(taken: set[str], base: str) -> str:
    """`base`, or `base` with a number, not in `taken` (added to it)."""
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name
