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
from lowering.builders import Inserter, take_body
from lowering.runtime_calls import call_at, fail, kernel_cell, symbol_table_of


def _lower_atomic(op: AtomicOp, ticket_locks: bool) -> None:
    at = Inserter(InsertPoint.before(op), symbol_table_of(op))
    locks, index = op.locks, op.index
    body = take_body(op.body)
    if op.blocking and ticket_locks:
        locks_type = locks.type
        assert isinstance(locks_type, MemRefType)
        if locks_type.element_type != IntegerType(64):
            fail(
                op,
                "'irgl.atomic' with ticket-locks needs 64-bit lock words "
                f"(memref<?xi64>), got {locks_type}",
            )
        at.call(runtime_function("irgl_ticket_acquire"), [locks, index])
        for inner in list(body.ops):
            if not isinstance(inner, scf.YieldOp):
                inner.detach()
                Rewriter.insert_op(inner, at.at)
        at.call(runtime_function("irgl_ticket_release"), [locks, index])
        Rewriter.erase_op(op)
        return
    locks_type = locks.type
    assert isinstance(locks_type, MemRefType)
    lock_try = overload("irgl_lock_try", locks_type.element_type)
    release = overload("irgl_lock_release", locks_type.element_type)
    if lock_try is None or release is None:
        fail(
            op,
            "'irgl.atomic' needs 32- or 64-bit lock words (memref<?xi32> or "
            f"memref<?xi64>), got {locks_type}",
        )
    assert body.last_op is not None
    at.nested(InsertPoint.before(body.last_op)).call(release, [locks, index])
    if not op.blocking:
        (got,) = at.call(lock_try, [locks, index])
        else_block = take_body(op.else_body)
        Rewriter.insert_op(scf.IfOp(got, [], Region(body), Region(else_block)), at.at)
        Rewriter.erase_op(op)
        return
    # while (!done) { got = try; if (got) { body; release } done = got }
    false = at.const(0, IntegerType(1))
    before = Block(arg_types=[i1])
    cond = at.nested(InsertPoint.at_end(before))
    go = cond.op(arith.XOrIOp(before.args[0], cond.const(1, IntegerType(1))))
    before.add_op(scf.ConditionOp(go))
    after = Block()
    inner = at.nested(InsertPoint.at_end(after))
    (got,) = inner.call(lock_try, [locks, index])
    after.add_op(scf.IfOp(got, [], Region(body)))
    after.add_op(scf.YieldOp(got))
    Rewriter.insert_op(scf.WhileOp([false], [], Region(before), Region(after)), at.at)
    Rewriter.erase_op(op)


def _for_each_element(
    at: Inserter, op: ExclusiveOp, make_body, init: list[SSAValue] | None = None
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
    at = Inserter(InsertPoint.before(op), table)
    claims = op.object
    prio = at.op(arith.IndexCastOp(priority, i32))
    true = at.const(1, IntegerType(1))

    def guarded(fill) -> None:
        block = Block()
        fill(at.nested(InsertPoint.at_end(block)))
        block.add_op(scf.YieldOp())
        Rewriter.insert_op(scf.IfOp(active, [], Region(block)), at.at)

    def all_mine(b: Inserter) -> SSAValue:
        def check(
            inner: Inserter, element: SSAValue, carried: list[SSAValue]
        ) -> list[SSAValue]:
            (value,) = inner.call(
                runtime_function("irgl_claim_read"), [claims, element]
            )
            mine = inner.op(arith.CmpiOp(value, prio, "eq"))
            return [inner.op(arith.AndIOp(carried[0], mine))]

        return _for_each_element(b, op, check, [true])[0]

    def write_claim(
        b: Inserter, element: SSAValue, _: list[SSAValue]
    ) -> list[SSAValue]:
        b.call(runtime_function("irgl_claim_write"), [claims, element, prio])
        return []

    def raise_claim(
        b: Inserter, element: SSAValue, _: list[SSAValue]
    ) -> list[SSAValue]:
        b.call(runtime_function("irgl_claim_raise"), [claims, element, prio])
        return []

    # phase 1: race
    guarded(lambda b: _for_each_element(b, op, write_claim))
    at.call(runtime_function("irgl_grid_sync"), [])

    # phase 2: priority check
    def raise_lost(b: Inserter) -> None:
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
        for atomic in [o for o in op.walk() if isinstance(o, AtomicOp)]:
            _lower_atomic(atomic, self.ticket_locks)
        for inner in list(op.walk()):
            if isinstance(inner, SyncRunningThreadsOp):
                call_at(
                    runtime_function("irgl_grid_sync"), [], InsertPoint.before(inner)
                )
                Rewriter.erase_op(inner)
            elif isinstance(inner, LocalBarrierOp):
                Rewriter.replace_op(inner, gpu.BarrierOp())
            elif isinstance(inner, ReduceAndReturnOp):
                at = InsertPoint.before(inner)
                call_at(
                    runtime_function("irgl_cell_reduce"),
                    [kernel_cell(inner), inner.value],
                    at,
                )
                Rewriter.erase_op(inner)
