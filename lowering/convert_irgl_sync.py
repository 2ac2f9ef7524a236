"""convert-irgl-sync: Atomic, Exclusive, SyncRunningThreads, LocalBarrier and
ReduceAndReturn become runtime calls and structured control flow.

- Blocking Atomic: a divergence-safe acquire loop: every thread of a warp
  keeps trying `irgl_lock_try` (atomicCAS 0→1, acquire), and a thread that
  got the lock runs the body and releases it inside the loop, so no warp
  waits on a lock held by one of its own threads. With `ticket-locks` a
  ticket lock (`irgl_ticket_acquire`/`release`, 64-bit lock words) is used.
- Atomic with Else: one `irgl_lock_try`; the body (then release) on
  success, the else statements on failure.
- Exclusive (lowered by convert-irgl-loops, which knows whether the thread
  has an iteration this round, through `lower_exclusive`): race (each
  contender writes its priority into the claim cell of every element), grid
  barrier, priority check (a contender that lost a claim raises every claim
  to its priority with atomicMax), grid barrier, check (a contender whose
  priority stands on every element wins and runs the body; others run the
  else statements), grid barrier. The contender with the highest priority
  always wins, so some thread always makes progress, and no two winners
  share an element.
- SyncRunningThreads → `irgl_grid_sync()` (cooperative-groups grid
  barrier); LocalBarrier → `gpu.barrier`.
- ReduceAndReturn → `irgl_cell_reduce(cell, value)`; the verifier made it
  the last operation on its path, so the iteration or kernel ends after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    i1,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import ExclusiveForm
from irgl_dialect.runtime_library import overload, runtime_function
from irgl_dialect.sync import (
    AtomicOp,
    ExclusiveOp,
    LocalBarrierOp,
    ReduceAndReturnOp,
    SyncRunningThreadsOp,
)
from lowering.builders import LoweringBuilder, take_body
from lowering.runtime_calls import call, fail, kernel_cell, symbol_table_of


class LowerAtomic(RewritePattern):
    """A blocking Atomic → the divergence-safe acquire loop (or a ticket
    lock); an Atomic with Else → one try (see the module docstring)."""

    def __init__(self, ticket_locks: bool):
        self.ticket_locks = ticket_locks

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtomicOp, rewriter: PatternRewriter) -> None:
        at = LoweringBuilder(
            InsertPoint.before(op), table=symbol_table_of(op), rewriter=rewriter
        )
        locks, index = op.locks, op.index
        locks_type = locks.type
        assert isinstance(locks_type, MemRefType)
        if op.blocking and self.ticket_locks:
            if locks_type.element_type != IntegerType(64):
                fail(
                    op,
                    "'irgl.atomic' with ticket-locks needs 64-bit lock words "
                    f"(memref<?xi64>), got {locks_type}",
                )
            body = take_body(op.body, rewriter)
            assert body.last_op is not None
            rewriter.erase(body.last_op)
            at.call(runtime_function("irgl_ticket_acquire"), [locks, index])
            rewriter.inline_block(body, InsertPoint.before(op))
            at.call(runtime_function("irgl_ticket_release"), [locks, index])
            rewriter.erase(op)
            return
        lock_try = overload("irgl_lock_try", locks_type.element_type)
        release = overload("irgl_lock_release", locks_type.element_type)
        if lock_try is None or release is None:
            fail(
                op,
                "'irgl.atomic' needs 32- or 64-bit lock words (memref<?xi32> or "
                f"memref<?xi64>), got {locks_type}",
            )
        body = take_body(op.body, rewriter)
        assert body.last_op is not None
        at.nested(InsertPoint.before(body.last_op)).call(release, [locks, index])
        if not op.blocking:
            (got,) = at.call(lock_try, [locks, index])
            else_block = take_body(op.else_body, rewriter)
            at.stmt(scf.IfOp(got, [], Region(body), Region(else_block)))
            rewriter.erase(op)
            return
        # while (!done) { got = try; if (got) { body; release } done = got }
        false = at.const(0, IntegerType(1))
        before = Block(arg_types=[i1])
        cond = at.nested(InsertPoint.at_end(before))
        go = cond.op(arith.XOrIOp(before.args[0], cond.const(1, IntegerType(1))))
        cond.stmt(scf.ConditionOp(go))
        after = Block()
        inner = at.nested(InsertPoint.at_end(after))
        (got,) = inner.call(lock_try, [locks, index])
        inner.stmt(scf.IfOp(got, [], Region(body)))
        inner.stmt(scf.YieldOp(got))
        at.stmt(scf.WhileOp([false], [], Region(before), Region(after)))
        rewriter.erase(op)


class LowerSyncRunningThreads(RewritePattern):
    """SyncRunningThreads → `irgl_grid_sync()`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: SyncRunningThreadsOp, rewriter: PatternRewriter
    ) -> None:
        call(runtime_function("irgl_grid_sync"), [], rewriter)
        rewriter.erase(op)


class LowerLocalBarrier(RewritePattern):
    """LocalBarrier → `gpu.barrier` (`__syncthreads()`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LocalBarrierOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, gpu.BarrierOp())


class LowerReduceAndReturn(RewritePattern):
    """ReduceAndReturn → `irgl_cell_reduce(cell, value)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ReduceAndReturnOp, rewriter: PatternRewriter
    ) -> None:
        cell = kernel_cell(op)
        call(runtime_function("irgl_cell_reduce"), [cell, op.value], rewriter)
        rewriter.erase(op)


def _for_each_element(
    at: LoweringBuilder, op: ExclusiveOp, make_body, init: list[SSAValue] | None = None
) -> list[SSAValue]:
    """Emit a loop over the elements named by an Exclusive; `make_body(b,
    element, carried)` returns the next carried values."""
    if op.form.data == ExclusiveForm.ARRAY:
        start, end, step = (
            at.const(0, IndexType()),
            op.range[0],
            at.const(1, IndexType()),
        )
    else:
        start, end, step = op.range
    carried = init or []
    block = Block(arg_types=[IndexType(), *[v.type for v in carried]])
    b = at.nested(InsertPoint.at_end(block))
    raw = b.op(memref.LoadOp.get(op.items, [block.args[0]]))
    element = (
        raw
        if isinstance(raw.type, IndexType)
        else b.op(arith.IndexCastOp(raw, IndexType()))
    )
    nexts = make_body(b, element, list(block.args[1:]))
    block.add_op(scf.YieldOp(*nexts))
    loop = scf.ForOp(start, end, step, carried, Region(block))
    Rewriter.insert_op(loop, at.at)
    return list(loop.results)


def lower_exclusive(
    op: ExclusiveOp, active: SSAValue, priority: SSAValue, table: Operation
) -> None:
    """Lower one Exclusive; `active` tells whether this thread contends this
    round, `priority` (index, unique among contenders, > 0) orders them;
    runtime functions are declared in `table`."""
    at = LoweringBuilder(InsertPoint.before(op), table=table)
    claims = op.object
    prio = at.op(arith.IndexCastOp(priority, i32))
    true = at.const(1, IntegerType(1))

    def guarded(fill) -> None:
        block = Block()
        fill(at.nested(InsertPoint.at_end(block)))
        block.add_op(scf.YieldOp())
        Rewriter.insert_op(scf.IfOp(active, [], Region(block)), at.at)

    def all_mine(b: LoweringBuilder) -> SSAValue:
        def check(
            inner: LoweringBuilder, element: SSAValue, carried: list[SSAValue]
        ) -> list[SSAValue]:
            (value,) = inner.call(
                runtime_function("irgl_claim_read"), [claims, element]
            )
            mine = inner.op(arith.CmpiOp(value, prio, "eq"))
            return [inner.op(arith.AndIOp(carried[0], mine))]

        return _for_each_element(b, op, check, [true])[0]

    def write_claim(
        b: LoweringBuilder, element: SSAValue, _: list[SSAValue]
    ) -> list[SSAValue]:
        b.call(runtime_function("irgl_claim_write"), [claims, element, prio])
        return []

    def raise_claim(
        b: LoweringBuilder, element: SSAValue, _: list[SSAValue]
    ) -> list[SSAValue]:
        b.call(runtime_function("irgl_claim_raise"), [claims, element, prio])
        return []

    # phase 1: race
    guarded(lambda b: _for_each_element(b, op, write_claim))
    at.call(runtime_function("irgl_grid_sync"), [])

    # phase 2: priority check
    def raise_lost(b: LoweringBuilder) -> None:
        lost = b.op(arith.XOrIOp(all_mine(b), b.const(1, IntegerType(1))))
        block = Block()
        inner = b.nested(InsertPoint.at_end(block))
        _for_each_element(inner, op, raise_claim)
        block.add_op(scf.YieldOp())
        Rewriter.insert_op(scf.IfOp(lost, [], Region(block)), b.at)

    guarded(raise_lost)
    at.call(runtime_function("irgl_grid_sync"), [])

    # phase 3: check, then the body or the else statements
    then_block = Block()
    then_at = at.nested(InsertPoint.at_end(then_block))
    won = all_mine(then_at)
    then_block.add_op(scf.IfOp(won, [], Region(take_body(op.body)), _else_region(op)))
    then_block.add_op(scf.YieldOp())
    Rewriter.insert_op(scf.IfOp(active, [], Region(then_block)), at.at)
    at.call(runtime_function("irgl_grid_sync"), [])
    Rewriter.erase_op(op)


def _else_region(op: ExclusiveOp) -> Region | None:
    if not op.else_body.blocks:
        return None
    return Region(take_body(op.else_body))


@dataclass(frozen=True)
class ConvertIrglSync(ModulePass):
    """Lower Atomic, SyncRunningThreads, LocalBarrier and ReduceAndReturn
    (see the module docstring)."""

    name = "convert-irgl-sync"

    ticket_locks: bool = False
    """Use ticket locks for blocking Atomics (needs memref<?xi64> locks)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, ExclusiveOp):
                fail(
                    inner,
                    "'irgl.exclusive' is lowered by convert-irgl-loops (with the "
                    "outermost ForAll): run it first",
                )
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerAtomic(self.ticket_locks),
                    LowerSyncRunningThreads(),
                    LowerLocalBarrier(),
                    LowerReduceAndReturn(),
                ]
            )
        ).rewrite_module(op)
