"""irgl-nested-parallelism: schedule a kernel's edge loops across a warp.

A thread of the outermost ForAll that meets a high-degree node would walk its
edges alone while its neighbours idle (and, on power-law graphs, the whole
kernel waits for it). This pass rewrites each inner
`irgl.forall %e in edges(%g, %n)` of a plain kernel (nested in the outermost
ForAll through `scf.if`s only) into two phases:

1. warp phase: the lanes that reached the loop together (their mask taken
   once with `irgl_warp_active`) repeatedly elect, by ballot, one lane whose
   node has at least `threshold` edges; that lane's edge range and the values
   its loop body uses are broadcast (`irgl_warp_shfl_*`), and all lanes of
   the mask share its edges (lane rank, rank + size, ...);
2. thread phase: every lane walks its own low-degree node sequentially.

The body is cloned into both phases. Loops whose body uses a per-thread value
that cannot be broadcast (e.g. a memref made inside the ForAll) are left
alone, as are kernels that synchronize the grid. Runs after
convert-irgl-kernels and before convert-irgl-loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.graph import FirstEdgeOp, LastEdgeOp
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.placement import (
    enclosing_foralls,
    kernel_kind_of,
    kernel_uses_grid_sync,
)
from lowering.runtime_calls import call, symbol_table_of


def _shuffle_suffix(t: Attribute) -> str | None:
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, IntegerType) and t.width.data in (1, 32, 64):
        return f"i{t.width.data}"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    return None


def _is_inside(op: Operation, ancestor: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent_op()
    return False


def _defined_inside(value: SSAValue, ancestor: Operation) -> bool:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return op is ancestor or (op is not None and _is_inside(op, ancestor))


def _live_ins(loop: ForAllOp, outer: ForAllOp) -> list[SSAValue] | None:
    """Values the loop uses that vary per thread; None if one cannot be
    broadcast."""
    found: dict[SSAValue, None] = {}
    for op in loop.body.walk():
        for operand in op.operands:
            if _defined_inside(operand, loop) or not _defined_inside(operand, outer):
                continue
            if isinstance(operand.owner, arith.ConstantOp):
                continue  # the same on every lane
            if _shuffle_suffix(operand.type) is None:
                return None
            found[operand] = None
    return list(found)


def _candidate(loop: ForAllOp) -> ForAllOp | None:
    """The outermost ForAll of `loop` if the loop can be shared by a warp."""
    if loop.iterator.data != IteratorKind.EDGES or kernel_kind_of(loop) != "plain":
        return None
    foralls = enclosing_foralls(loop)
    if len(foralls) != 1:
        return None
    outer = foralls[0]
    parent = loop.parent_op()
    while parent is not outer:
        if not isinstance(parent, scf.IfOp):
            return None
        parent = parent.parent_op()
    return outer


class _At:
    def __init__(self, at: InsertPoint, table: Operation):
        self.at, self.table = at, table

    def op(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, self.at)
        return op.results[0]

    def stmt(self, op: Operation) -> None:
        Rewriter.insert_op(op, self.at)

    def call(self, name: str, args: list[SSAValue], result: Attribute) -> SSAValue:
        return call(name, args, [result], self.at, self.table).results[0]

    def const(self, value: int, type: Attribute) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(value, type)))  # type: ignore[arg-type]


def _clone_body(loop: ForAllOp, into: Block, mapping: dict[SSAValue, SSAValue]) -> None:
    for op in loop.body.block.ops:
        if isinstance(op, YieldOp):
            into.add_op(scf.YieldOp())
        else:
            into.add_op(op.clone(value_mapper=mapping))


def _rewrite(loop: ForAllOp, outer: ForAllOp, live_ins: list[SSAValue], threshold: int) -> None:
    table = symbol_table_of(loop)
    at = _At(InsertPoint.before(loop), table)
    graph, node = loop.bounds
    lo = at.op(FirstEdgeOp(graph, node))
    hi = at.op(LastEdgeOp(graph, node))
    degree = at.op(arith.SubiOp(hi, lo))
    big = at.op(arith.CmpiOp(degree, at.const(threshold, IndexType()), "sge"))
    mask = at.call("irgl_warp_active", [], i32)

    # while (ballot(mask, big && !done)) { share the leader's edges }
    before = Block(arg_types=[i1])
    b = _At(InsertPoint.at_end(before), table)
    pending = b.op(arith.AndIOp(big, b.op(arith.XOrIOp(before.args[0], b.const(1, i1)))))
    ballot = b.call("irgl_warp_ballot", [mask, pending], i32)
    some = b.op(arith.CmpiOp(ballot, b.const(0, i32), "ne"))
    before.add_op(scf.ConditionOp(some, ballot, before.args[0]))

    after = Block(arg_types=[i32, i1])
    a = _At(InsertPoint.at_end(after), table)
    leader = a.call("irgl_warp_first", [after.args[0]], i32)

    def broadcast(value: SSAValue) -> SSAValue:
        suffix = _shuffle_suffix(value.type)
        return a.call(f"irgl_warp_shfl_{suffix}", [mask, value, leader], value.type)

    mapping = {value: broadcast(value) for value in live_ins}
    start = a.op(arith.AddiOp(broadcast(lo), a.call("irgl_warp_rank", [mask], IndexType())))
    step = a.call("irgl_warp_size", [mask], IndexType())
    shared = Block(arg_types=[IndexType()])
    mapping[loop.index] = shared.args[0]
    _clone_body(loop, shared, mapping)
    a.stmt(scf.ForOp(start, broadcast(hi), step, [], Region(shared)))
    me = a.call("irgl_warp_is_lane", [leader], i1)
    after.add_op(scf.YieldOp(a.op(arith.OrIOp(after.args[1], me))))
    Rewriter.insert_op(
        scf.WhileOp([at.const(0, i1)], [i32, i1], Region(before), Region(after)), at.at
    )

    # every lane walks its own small node
    small = at.op(arith.XOrIOp(big, at.const(1, i1)))
    own = loop.body.block
    loop.body.detach_block(own)
    terminator = own.last_op
    assert isinstance(terminator, YieldOp)
    Rewriter.replace_op(terminator, scf.YieldOp())
    then = Block()
    then.add_op(scf.ForOp(lo, hi, at.const(1, IndexType()), [], Region(own)))
    then.add_op(scf.YieldOp())
    Rewriter.insert_op(scf.IfOp(small, [], Region(then)), at.at)
    Rewriter.erase_op(loop)


@dataclass(frozen=True)
class IrglNestedParallelism(ModulePass):
    """Share high-degree edge loops across the lanes of a warp (see the
    module docstring)."""

    name = "irgl-nested-parallelism"

    threshold: int = 32
    """Nodes with at least this many edges are walked by the whole warp."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, ForAllOp)]:
            outer = _candidate(loop)
            if outer is None or _grid_synchronized(outer):
                continue
            live_ins = _live_ins(loop, outer)
            if live_ins is not None:
                _rewrite(loop, outer, live_ins, self.threshold)


def _grid_synchronized(outer: ForAllOp) -> bool:
    from xdsl.dialects import gpu

    from irgl_dialect.kernels import KernelOp

    parent = outer.parent_op()
    while parent is not None and not isinstance(parent, KernelOp | gpu.FuncOp):
        parent = parent.parent_op()
    if isinstance(parent, KernelOp):
        return kernel_uses_grid_sync(parent)
    return parent is not None and "irgl.grid_sync" in parent.attributes
