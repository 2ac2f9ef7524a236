"""irgl-nested-parallelism: schedule a kernel's edge loops across the threads
of a block, of a warp, or one thread (spec: nested parallelism).

A thread of the outermost ForAll that meets a high-degree node would walk its
edges alone while its neighbours idle; on power-law graphs the whole kernel
then waits for that one thread. This pass marks every inner
`irgl.forall %e in edges(%g, %n)` that lies directly in the body of a plain
kernel's outermost ForAll with `irgl.schedule = "nested"`. convert-irgl-loops
then lowers that outermost ForAll so that every thread runs the same number
of rounds (idle threads included, so they can help) and lowers each marked
loop, with `lower_scheduled_edges`, into three phases:

1. block phase: nodes with at least `block_threshold` edges (the kernel's
   block size): the block elects one such node at a time (`irgl_block_elect`)
   and all its threads share the node's edges;
2. warp phase: nodes with at least 32 edges: the lanes of each warp elect one
   by ballot (`irgl_warp_ballot`, over the mask taken once with
   `irgl_warp_active`) and share its edges;
3. thread phase: every thread walks its own small node.

The elected node's edge range and the per-thread values that the loop body
uses are broadcast (`irgl_block_bcast_*`, `irgl_warp_shfl_*`); the body is
cloned into each phase. Loops whose body needs a per-thread value that cannot
be broadcast (e.g. a memref made inside the ForAll), and kernels that
synchronize the grid, are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    StringAttr,
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
from irgl_dialect.placement import kernel_uses_grid_sync
from lowering.builders import Inserter, take_body
from lowering.kernel_context import enclosing_foralls, is_kernel_like, kernel_kind_of
from lowering.runtime_calls import BLOCK_SIZE, GRID_SYNC, int_attr

#: Attribute marking an edge loop for nested scheduling.
SCHEDULE = "irgl.schedule"
WARP_THRESHOLD = 32


def _broadcast_suffix(t: Attribute) -> str | None:
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, IntegerType) and t.width.data in (1, 32, 64):
        return f"i{t.width.data}"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    return None


def is_scheduled(op: Operation) -> bool:
    """Is `op` an edge loop marked for nested scheduling?"""
    return isinstance(op, ForAllOp) and SCHEDULE in op.attributes


def _per_thread_values(
    loop: ForAllOp, varies: Callable[[SSAValue], bool]
) -> list[SSAValue] | None:
    """Values the loop body uses that differ between threads (`varies`);
    None if one of them cannot be broadcast."""
    found: dict[SSAValue, None] = {}
    for op in loop.body.walk():
        for operand in op.operands:
            if not varies(operand) or isinstance(operand.owner, arith.ConstantOp):
                continue
            if _broadcast_suffix(operand.type) is None:
                return None
            found[operand] = None
    return list(found)


def _in_region_of(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    parent = owner if isinstance(owner, Operation) else owner.parent_op()
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op()
    return False


def _kernel_of(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not is_kernel_like(parent):
        parent = parent.parent_op()
    return parent


def _synchronizes_grid(op: Operation) -> bool:
    from irgl_dialect.kernels import KernelOp

    kernel = _kernel_of(op)
    if isinstance(kernel, KernelOp):
        return kernel_uses_grid_sync(kernel)
    return kernel is not None and GRID_SYNC in kernel.attributes


def _eligible(loop: ForAllOp) -> bool:
    if loop.iterator.data != IteratorKind.EDGES or kernel_kind_of(loop) != "plain":
        return False
    foralls = enclosing_foralls(loop)
    if len(foralls) != 1 or loop.parent_op() is not foralls[0]:
        return False
    outer = foralls[0]
    if _synchronizes_grid(outer):
        return False
    varies = lambda v: _in_region_of(v, outer) and not _in_region_of(v, loop)  # noqa: E731
    return _per_thread_values(loop, varies) is not None


def _clone_body(loop: ForAllOp, into: Block, mapping: dict[SSAValue, SSAValue]) -> None:
    for op in loop.body.block.ops:
        into.add_op(
            scf.YieldOp() if isinstance(op, YieldOp) else op.clone(value_mapper=mapping)
        )


def _shared_phase(
    at: Inserter,
    loop: ForAllOp,
    live: list[SSAValue],
    lo: SSAValue,
    hi: SSAValue,
    want: SSAValue,
    elect: Callable[[Inserter, SSAValue], SSAValue],
    broadcast: Callable[[Inserter, SSAValue, SSAValue], SSAValue],
    rank_and_size: Callable[[Inserter], tuple[SSAValue, SSAValue]],
    is_me: Callable[[Inserter, SSAValue], SSAValue],
) -> None:
    """while ((owner = elect(want && !done)) >= 0) { share owner's edges }"""
    before = Block(arg_types=[i1])
    b = at.nested(InsertPoint.at_end(before))
    owner = elect(b, b.both(want, b.negate(before.args[0])))
    found = b.op(arith.CmpiOp(owner, b.const(0, i32), "sge"))
    before.add_op(scf.ConditionOp(found, owner, before.args[0]))

    after = Block(arg_types=[i32, i1])
    a = at.nested(InsertPoint.at_end(after))
    owner = after.args[0]
    mapping = {value: broadcast(a, value, owner) for value in live}
    rank, size = rank_and_size(a)
    start = a.op(arith.AddiOp(broadcast(a, lo, owner), rank))
    body = Block(arg_types=[IndexType()])
    mapping[loop.index] = body.args[0]
    _clone_body(loop, body, mapping)
    a.stmt(scf.ForOp(start, broadcast(a, hi, owner), size, [], Region(body)))
    after.add_op(scf.YieldOp(a.op(arith.OrIOp(after.args[1], is_me(a, owner)))))
    at.stmt(scf.WhileOp([at.const(0, i1)], [i32, i1], Region(before), Region(after)))


def lower_scheduled_edges(
    loop: ForAllOp,
    active: SSAValue,
    round_body: Block,
    table: Operation,
    block_size: int,
) -> None:
    """Lower one marked edge loop in a uniform round body (see the module
    docstring); `active` says whether this thread has an iteration."""
    at = Inserter(InsertPoint.before(loop), table)
    graph, node = loop.bounds

    def varies(value: SSAValue) -> bool:
        owner = value.owner
        block = owner.parent_block() if isinstance(owner, Operation) else owner
        return block is round_body

    live = _per_thread_values(loop, varies)
    assert live is not None, "irgl-nested-parallelism marked a loop it cannot share"

    # the edge range of an active thread's node; empty for idle threads
    then, other = Block(), Block()
    t = at.nested(InsertPoint.at_end(then))
    then.add_op(
        scf.YieldOp(t.op(FirstEdgeOp(graph, node)), t.op(LastEdgeOp(graph, node)))
    )
    o = at.nested(InsertPoint.at_end(other))
    zero = o.const(0, IndexType())
    other.add_op(scf.YieldOp(zero, zero))
    bounds = scf.IfOp(active, [IndexType(), IndexType()], Region(then), Region(other))
    at.stmt(bounds)
    lo, hi = bounds.results
    degree = at.op(arith.SubiOp(hi, lo))

    def at_least(n: int) -> SSAValue:
        return at.op(arith.CmpiOp(degree, at.const(n, IndexType()), "sge"))

    huge = at_least(block_size)
    big = at.both(at_least(WARP_THRESHOLD), at.negate(huge))

    def bcast(prefix: str) -> Callable[[Inserter, SSAValue, SSAValue], SSAValue]:
        def broadcast(a: Inserter, value: SSAValue, owner: SSAValue) -> SSAValue:
            name = f"{prefix}_{_broadcast_suffix(value.type)}"
            args = (
                [value, owner] if prefix == "irgl_block_bcast" else [mask, value, owner]
            )
            return a.call_value(name, args, value.type)

        return broadcast

    # 1. block phase
    _shared_phase(
        at,
        loop,
        live,
        lo,
        hi,
        huge,
        elect=lambda b, want: b.call_value("irgl_block_elect", [want], i32),
        broadcast=bcast("irgl_block_bcast"),
        rank_and_size=lambda a: (
            a.op(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
            a.op(gpu.BlockDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
        ),
        is_me=lambda a, owner: a.op(
            arith.CmpiOp(
                a.op(
                    arith.IndexCastOp(
                        a.op(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
                        i32,
                    )
                ),
                owner,
                "eq",
            )
        ),
    )
    # 2. warp phase
    mask = at.call_value("irgl_warp_active", [], i32)
    _shared_phase(
        at,
        loop,
        live,
        lo,
        hi,
        big,
        elect=lambda b, want: b.call_value(
            "irgl_warp_first",
            [b.call_value("irgl_warp_ballot", [mask, want], i32)],
            i32,
        ),
        broadcast=bcast("irgl_warp_shfl"),
        rank_and_size=lambda a: (
            a.call_value("irgl_warp_rank", [mask], IndexType()),
            a.call_value("irgl_warp_size", [mask], IndexType()),
        ),
        is_me=lambda a, owner: a.call_value("irgl_warp_is_lane", [owner], i1),
    )
    # 3. thread phase
    small = at.both(active, at.negate(at_least(WARP_THRESHOLD)))
    own = take_body(loop.body)
    walk = Block()
    walk.add_op(scf.ForOp(lo, hi, at.const(1, IndexType()), [], Region(own)))
    walk.add_op(scf.YieldOp())
    at.stmt(scf.IfOp(small, [], Region(walk)))
    Rewriter.erase_op(loop)


def block_size_of(op: Operation) -> int:
    """The block size chosen for the kernel around `op` (256 if unknown)."""
    kernel = _kernel_of(op)
    return (int_attr(kernel, BLOCK_SIZE) if kernel is not None else None) or 256


@dataclass(frozen=True)
class IrglNestedParallelism(ModulePass):
    """Mark edge loops for block/warp/thread scheduling (see the module
    docstring); convert-irgl-loops lowers them."""

    name = "irgl-nested-parallelism"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, ForAllOp)]:
            if _eligible(loop):
                loop.attributes[SCHEDULE] = StringAttr("nested")
