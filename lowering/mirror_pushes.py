"""Mirrors pushed without a worklist slot.

Under `irgl-distribute`, a pushed mirror's worklist item only carries a bit:
the exchange after the round marks the items, and a mirror's mark travels to
its master with the mirror's value (reduce-only: the master is activated
where that value improved it), while the item itself is dropped. In a round
kernel whose pushes are guarded by a round stamp (SSSP's, CC's), a mirror
costs a stamp exchange, a worklist slot and a pass over the slot to set that
bit; on four ranks most pushes are mirrors (78% of them in SSSP on an RMAT
graph, docs/performance-notes.md).

So in the round kernel of an Iterate synchronized reduce-only
(lowering/reduce_only.py), a push of a neighbour splits on the master bound:

    %own = irgl_dist.is_master %g[%v]
    scf.if %own {
      <the push, with the round stamp's exchange and test that decide it>
    } else {
      irgl_dist.push_mirror %g[%v]
    }

`irgl_dist.push_mirror` sets the mirror's pushed bit directly (a byte store,
the same for every thread that pushes it in a round, so no stamp is needed
to push it once). The round stamp moves into the master's branch only where
its exchange, its test and the `scf.if` that pushes are consecutive and do
nothing else (the round-stamp pattern of lowering/round_stamps.py); a
mirror's stamp entry then stays as the last clear left it, which the
round-stamp rule allows (every copy holds a value other than the coming
rounds' counters). Elsewhere only the push is split.

This is exact for a kernel that only such Iterates invoke: reduce-only
requires every push of a neighbour to follow an atomic that lowered the
neighbour's entry, so the exchange carries that mirror's value and, with
it, the bit; and nothing else reads the stamp. The runtime clears the bits
as the exchange takes them (a first worklist drops them, as it drops
mirror items).
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import memref, scf
from xdsl.ir import Block, Operation, Region
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.distributed import IsMasterOp, PushMirrorOp
from irgl_dialect.graph import EdgeDstOp
from irgl_dialect.kernels import KernelOp
from irgl_dialect.worklist import PushOp
from lowering.reduce_only import KernelNodes
from lowering.round_stamps import decides_only_pushes, kernel_param


def _stamped(
    push: PushOp, kernel: KernelOp, stamps: set[int]
) -> list[Operation] | None:
    """The round stamp's exchange, test and `scf.if` that decide `push`,
    where they are consecutive and serve only the push; else None. (A
    position in `stamps` passed `round_stamps.stamp_counter`: every use of
    that array is an exchange of the counter whose result is only compared
    with it, `ne`, to decide pushes.)"""
    branch = push.parent_op()
    if not isinstance(branch, scf.IfOp):
        return None
    test = branch.cond.owner
    exchange = branch.prev_op and branch.prev_op.prev_op
    if not (
        isinstance(test, Operation)
        and test is branch.prev_op
        and isinstance(exchange, memref.AtomicRMWOp)
        and kernel_param(kernel, exchange.memref) in stamps
        and exchange.indices[0] is push.item
        and exchange.result.get_user_of_unique_use() is test
        and branch.cond.has_one_use()
        and decides_only_pushes(branch.cond, push.item)
    ):
        return None
    return [exchange, test, branch]


def _split(ops: list[Operation], push: PushOp) -> None:
    """Wrap `ops` (consecutive, ending with or being `push`) in
    `scf.if (is_master)` with `push_mirror` in the else branch."""
    dst = push.item.owner
    assert isinstance(dst, EdgeDstOp)
    own = IsMasterOp(dst.graph, push.item)
    own.result.name_hint = "own"
    Rewriter.insert_op(own, InsertPoint.before(ops[0]))
    then_block, else_block = Block(), Block()
    branch = scf.IfOp(own.result, [], Region(then_block), Region(else_block))
    Rewriter.insert_op(branch, InsertPoint.after(own))
    for op in ops:
        op.detach()
        then_block.add_op(op)
    then_block.add_op(scf.YieldOp())
    else_block.add_ops([PushMirrorOp(dst.graph, push.item), scf.YieldOp()])


def push_mirrors(nodes: KernelNodes, stamps: Iterable[int]) -> int:
    """Split every push of a neighbour in `nodes.kernel` on the master bound
    (see the module docstring); `stamps`: the parameter positions of the
    round stamps left to each rank. The number of pushes split."""
    positions = set(stamps)
    pushes = [
        op
        for op in nodes.kernel.body.walk()
        if isinstance(op, PushOp)
        and op.item in nodes.neighbours
        and op.item not in nodes.masters
        and isinstance(op.item.owner, EdgeDstOp)
    ]
    for push in pushes:
        _split(_stamped(push, nodes.kernel, positions) or [push], push)
    return len(pushes)
