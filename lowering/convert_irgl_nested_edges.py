"""convert-irgl-nested-edges: share the edges of high-degree nodes across the
threads of a block or a warp.

irgl-nested-parallelism marks edge loops (`#irgl_rt.nested_edges`) in a
kernel's outermost ForAll; convert-irgl-loops runs that ForAll in uniform
rounds and wraps each marked loop in `irgl_rt.collective active(%a)
rank(%r)`, so every thread of the grid reaches it (idle ones included, so
they can help). This pass lowers each one into three phases:

1. block phase: nodes with at least the kernel's block size of edges: the
   block elects one such node at a time (`irgl_block_elect`) and all its
   threads share the node's edges;
2. warp phase: nodes with at least 32 edges: the lanes of each warp elect one
   by ballot (`irgl_warp_ballot`, over the mask taken once with
   `irgl_warp_active`) and share its edges;
3. thread phase: every thread walks its own small node.

The elected node's edge range and the per-thread values that the loop body
uses are broadcast (`irgl_block_bcast_*`, `irgl_warp_shfl_*`); the body is
cloned into each phase.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IndexType, ModuleOp, i1, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irgl_dialect.graph import FirstEdgeOp, LastEdgeOp
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.runtime import CollectiveOp, LaunchAttr, NestedEdgesAttr
from irgl_dialect.runtime_library import overload, runtime_function
from lowering.builders import LoweringBuilder, take_body
from lowering.edge_sharing import WARP_THRESHOLD, per_thread_values
from lowering.runtime_calls import enclosing_gpu_func, fail, symbol_table_of


def _clone_body(loop: ForAllOp, into: Block, mapping: dict[SSAValue, SSAValue]) -> None:
    for op in loop.body.block.ops:
        into.add_op(
            scf.YieldOp() if isinstance(op, YieldOp) else op.clone(value_mapper=mapping)
        )


def _shared_phase(
    at: LoweringBuilder,
    loop: ForAllOp,
    live: list[SSAValue],
    lo: SSAValue,
    hi: SSAValue,
    want: SSAValue,
    elect: Callable[[LoweringBuilder, SSAValue], SSAValue],
    broadcast: Callable[[LoweringBuilder, SSAValue, SSAValue], SSAValue],
    rank_and_size: Callable[[LoweringBuilder], tuple[SSAValue, SSAValue]],
    is_me: Callable[[LoweringBuilder, SSAValue], SSAValue],
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


def _lower_shared_edges(
    loop: ForAllOp,
    active: SSAValue,
    round_body: Block,
    at: LoweringBuilder,
    block_size: int,
) -> None:
    """Lower one marked edge loop in a uniform round body (see the module
    docstring); `active` says whether this thread has an iteration."""
    graph, node = loop.bounds

    def varies(value: SSAValue) -> bool:
        owner = value.owner
        block = owner.parent_block() if isinstance(owner, Operation) else owner
        return block is round_body

    live = per_thread_values(loop, varies)
    if live is None:
        fail(loop, "this edge loop uses a per-thread value that cannot be broadcast")

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

    def bcast(prefix: str) -> Callable[[LoweringBuilder, SSAValue, SSAValue], SSAValue]:
        def broadcast(a: LoweringBuilder, value: SSAValue, owner: SSAValue) -> SSAValue:
            fn = overload(prefix, value.type)
            assert fn is not None, f"no {prefix} for {value.type}"
            args = (
                [value, owner] if prefix == "irgl_block_bcast" else [mask, value, owner]
            )
            return a.call_value(fn, args)

        return broadcast

    # 1. block phase
    _shared_phase(
        at,
        loop,
        live,
        lo,
        hi,
        huge,
        elect=lambda b, want: b.call_value(
            runtime_function("irgl_block_elect"), [want]
        ),
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
    mask = at.call_value(runtime_function("irgl_warp_active"), [])
    _shared_phase(
        at,
        loop,
        live,
        lo,
        hi,
        big,
        elect=lambda b, want: b.call_value(
            runtime_function("irgl_warp_first"),
            [b.call_value(runtime_function("irgl_warp_ballot"), [mask, want])],
        ),
        broadcast=bcast("irgl_warp_shfl"),
        rank_and_size=lambda a: (
            a.call_value(runtime_function("irgl_warp_rank"), [mask]),
            a.call_value(runtime_function("irgl_warp_size"), [mask]),
        ),
        is_me=lambda a, owner: a.call_value(
            runtime_function("irgl_warp_is_lane"), [owner]
        ),
    )
    # 3. thread phase
    small = at.both(active, at.negate(at_least(WARP_THRESHOLD)))
    own = take_body(loop.body)
    walk = Block()
    walk.add_op(scf.ForOp(lo, hi, at.const(1, IndexType()), [], Region(own)))
    walk.add_op(scf.YieldOp())
    at.stmt(scf.IfOp(small, [], Region(walk)))


class LowerNestedEdges(RewritePattern):
    """`irgl_rt.collective` around a marked edge loop → the three phases."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CollectiveOp, rewriter: PatternRewriter) -> None:
        loop = op.inner
        if not isinstance(loop, ForAllOp) or NestedEdgesAttr.of(loop) is None:
            return
        round_body = op.parent_block()
        assert round_body is not None
        launch = LaunchAttr.of(enclosing_gpu_func(op))
        block_size = 256 if launch is None else launch.block
        at = LoweringBuilder(
            InsertPoint.before(op), table=symbol_table_of(op), rewriter=rewriter
        )
        _lower_shared_edges(loop, op.active, round_body, at, block_size)
        rewriter.erase(op, safe_erase=False)


@dataclass(frozen=True)
class ConvertIrglNestedEdges(ModulePass):
    """Lower the edge loops marked by irgl-nested-parallelism (in
    `irgl_rt.collective`, made by convert-irgl-loops) into block, warp and
    thread phases (see the module docstring)."""

    name = "convert-irgl-nested-edges"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # each rewrite restructures a whole round body: apply the pattern
        # once per collective op rather than through a worklist driver
        pattern = LowerNestedEdges()
        for collective in [o for o in op.walk() if isinstance(o, CollectiveOp)]:
            pattern.match_and_rewrite(collective, PatternRewriter(collective))
        for inner in op.walk():
            if isinstance(inner, ForAllOp) and NestedEdgesAttr.of(inner) is not None:
                fail(
                    inner,
                    "an edge loop marked #irgl_rt.nested_edges is lowered with its "
                    "outermost ForAll: run convert-irgl-loops first",
                )
