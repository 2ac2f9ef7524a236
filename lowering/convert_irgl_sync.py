"""convert-irgl-sync: Atomic, SyncRunningThreads, LocalBarrier and
ReduceAndReturn become runtime calls and structured control flow.

- Blocking Atomic: a divergence-safe acquire loop: every thread of a warp
  keeps trying `irgl_lock_try` (atomicCAS 0→1, acquire), and a thread that
  got the lock runs the body and releases it inside the loop, so no warp
  waits on a lock held by one of its own threads. With `ticket-locks` a
  ticket lock (`irgl_ticket_acquire_i32`/`_i64` and `irgl_ticket_release_*`:
  next/serving halves of one 32- or 64-bit lock word) is used.
- Atomic with Else: one `irgl_lock_try`; the body (then release) on
  success, the else statements on failure.
- SyncRunningThreads → `irgl_grid_sync()` (cooperative-groups grid
  barrier); LocalBarrier → `gpu.barrier`.
- ReduceAndReturn → `irgl_cell_reduce(cell, value)`; the verifier made it
  the last operation on its path, so the iteration or kernel ends after it.
  With `block_reduce`, in a kernel whose every thread reaches the end of its
  body: `irgl_cell_reduce_block(cell, value)` into a shared per-block flag,
  with `irgl_cell_block_begin(cell)` first in the body and
  `irgl_cell_block_flush(cell)` (one store per block) before its return.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import (
    IntegerType,
    MemRefType,
    ModuleOp,
    i1,
)
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irgl_dialect.runtime import LaunchAttr
from irgl_dialect.runtime_library import overload, runtime_function
from irgl_dialect.sync import (
    AtomicOp,
    ExclusiveOp,
    LocalBarrierOp,
    ReduceAndReturnOp,
    SyncRunningThreadsOp,
)
from lowering.builders import LoweringBuilder, take_body
from lowering.runtime_calls import (
    call,
    enclosing_gpu_func,
    every_thread_reaches_end,
    fail,
    kernel_cell,
    symbol_table_of,
)


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
            acquire = overload("irgl_ticket_acquire", locks_type.element_type)
            release = overload("irgl_ticket_release", locks_type.element_type)
            if acquire is None or release is None:
                fail(
                    op,
                    "'irgl.atomic' with ticket-locks needs 32- or 64-bit lock "
                    f"words (memref<?xi32> or memref<?xi64>), got {locks_type}",
                )
            body = take_body(op.body, rewriter)
            assert body.last_op is not None
            rewriter.erase(body.last_op)
            at.call(acquire, [locks, index])
            rewriter.inline_block(body, InsertPoint.before(op))
            at.call(release, [locks, index])
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
    """ReduceAndReturn → `irgl_cell_reduce(cell, value)` (in a kernel of
    `blocked`: `irgl_cell_reduce_block`)."""

    def __init__(self, blocked: frozenset[gpu.FuncOp] = frozenset()):
        self.blocked = blocked

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ReduceAndReturnOp, rewriter: PatternRewriter
    ) -> None:
        cell = kernel_cell(op)
        reduce = "irgl_cell_reduce"
        if enclosing_gpu_func(op) in self.blocked:
            reduce = "irgl_cell_reduce_block"
        call(runtime_function(reduce), [cell, op.value], rewriter)
        rewriter.erase(op)


def _reduce_per_block(kernel: gpu.FuncOp) -> None:
    """`irgl_cell_block_begin(cell)` first in the body and
    `irgl_cell_block_flush(cell)` before each (top-level) return."""
    launch = LaunchAttr.of(kernel)
    assert launch is not None and launch.cell is not None
    cell = kernel.body.block.args[launch.cell]
    table = symbol_table_of(kernel)
    begin = LoweringBuilder(InsertPoint.at_start(kernel.body.block), table=table)
    begin.call(runtime_function("irgl_cell_block_begin"), [cell])
    for ret in [op for op in kernel.body.block.ops if isinstance(op, gpu.ReturnOp)]:
        flush = LoweringBuilder(InsertPoint.before(ret), table=table)
        flush.call(runtime_function("irgl_cell_block_flush"), [cell])


@dataclass(frozen=True)
class ConvertIrglSync(ModulePass):
    """Lower Atomic, SyncRunningThreads, LocalBarrier and ReduceAndReturn
    (see the module docstring).

    Options: `ticket_locks` (bool, false): blocking Atomics use ticket locks
    (`-p 'convert-irgl-sync{ticket_locks=true}'`); `block_reduce` (bool,
    false): ReduceAndReturn reduced per block first.
    """

    name = "convert-irgl-sync"

    ticket_locks: bool = False
    """Use ticket locks for blocking Atomics (32- or 64-bit lock words)."""

    block_reduce: bool = False
    """Reduce ReduceAndReturn values per block before the cell."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, ExclusiveOp):
                fail(
                    inner,
                    "'irgl.exclusive' is lowered by convert-irgl-loops and "
                    "convert-irgl-exclusive: run them first",
                )
        blocked = frozenset(
            k
            for k in op.walk()
            if self.block_reduce
            and isinstance(k, gpu.FuncOp)
            and k.kernel is not None
            and any(isinstance(r, ReduceAndReturnOp) for r in k.walk())
            and every_thread_reaches_end(k)
        )
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerAtomic(self.ticket_locks),
                    LowerSyncRunningThreads(),
                    LowerLocalBarrier(),
                    LowerReduceAndReturn(blocked),
                ]
            )
        ).rewrite_module(op)
        for kernel in blocked:
            _reduce_per_block(kernel)
