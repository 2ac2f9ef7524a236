"""Node arrays that `irgl-distribute` synchronizes reduce-only.

Gluon's reduce-only synchronization: after a round of a push-style
program, the mirrors a rank updated are reduced into their masters and
nothing is broadcast back (`irgl_dist.sync_worklist reduce %a min`). A
mirror then lags its master: it holds its own rank's value, which for a
min is never below the master's (a mirror only falls by its rank's
atomics, and every fall is sent to the master). That is harmless where
every read of a mirror is a *filter*: SSSP's

    %cur = memref.load %dist[%dst]
    %shorter = arith.cmpi slt, %nd, %cur : i32
    scf.if %shorter {
      "memref.atomic_rmw"(%nd, %dist, %dst) <{kind = 7}>   // mins
      ... irgl.wl.push %dst ...
    }

A lagging `%cur` only lets more threads through to the atomic; the atomic
lowers the mirror, the reduce carries the value to the master, and the
master takes it only if it is lower. Pushes are filtered the same way: a
pushed mirror activates its master only where its value improved the
master's (the runtime decides, per entry, in the same exchange). So the
round needs one exchange of the updated mirrors (with a pushed bit)
instead of a reduce, a broadcast and a worklist exchange.

The conditions, checked here for the array `A` that an Iterate's round
kernel writes (edge-cut only: a popped node is a master there):

- the round kernel pushes; every node array it writes other than `A` is a
  round stamp left to each rank (lowering/round_stamps.py); it writes `A`
  only with atomics of one reduction among min, max, minu, maxu;
- every push of a neighbour is inside a filter on `A` at that neighbour
  and follows, inside the same filter, an atomic of that reduction on `A`
  at the neighbour (a pushed mirror fell below its value at the round's
  start, so the exchange carries it, and the push depends on the fall as
  the owner's activation does: a push after the atomic but outside a
  filter, which one GPU makes whatever the atomic did, is not filtered);
- in every kernel passed `A`: an atomic's result is unused (a mirror's old
  value lags); `A` is read at a neighbour only as a filter: its loaded
  value is used only by comparisons that pass more often as the value lags
  (for min: `x < cur`, `x <= cur`, `cur > x`, `cur >= x`), each the
  condition of an `scf.if` without results or else whose block holds the
  atomic on `A` at that neighbour; every other access is at the ForAll's
  node or the popped node (masters).

The output gathers masters only, so mirrors are never brought up to date.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf
from xdsl.ir import Operation, SSAValue

from irgl_dialect.distributed import REDUCE_ONLY_REDUCTIONS, Reduction
from irgl_dialect.kernels import KernelOp
from irgl_dialect.orchestration import IterateOp
from irgl_dialect.placement import ancestors
from irgl_dialect.worklist import PushOp
from lowering.round_stamps import kernel_param

#: memref.atomic_rmw kinds of each reduction (signed and float min/max,
#: unsigned min/max).
_ATOMIC_KINDS: dict[Reduction, frozenset[int]] = {
    Reduction.MIN: frozenset({6, 7, 14}),
    Reduction.MAX: frozenset({3, 4, 13}),
    Reduction.MINU: frozenset({8}),
    Reduction.MAXU: frozenset({5}),
}

#: arith.cmpi predicates that pass more often as the loaded value lags
#: (min: is higher; max: is lower), by the side the loaded value is on.
_FILTERS: dict[Reduction, dict[int, int]] = {
    # slt, sle with the value on the right; sgt, sge with it on the left
    Reduction.MIN: {2: 1, 3: 1, 4: 0, 5: 0},
    Reduction.MINU: {6: 1, 7: 1, 8: 0, 9: 0},
    Reduction.MAX: {4: 1, 5: 1, 2: 0, 3: 0},
    Reduction.MAXU: {8: 1, 9: 1, 6: 0, 7: 0},
}


@dataclass
class KernelNodes:
    """A plain kernel's node ids: those that are masters (the ForAll's node,
    under an edge-cut the popped node) and neighbours (edge destinations)."""

    kernel: KernelOp
    masters: set[SSAValue]
    neighbours: set[SSAValue]


@dataclass
class RoundSite:
    """An Iterate, its round kernel, the host values of the kernel's
    parameters, and the positions of the node arrays it writes with their
    reductions (round stamps excluded)."""

    op: IterateOp
    nodes: KernelNodes
    args: list[SSAValue]
    writes: dict[int, Reduction]
    pushes: bool


def _accesses(kernel: KernelOp, params: set[int]) -> Iterable[Operation]:
    for op in kernel.body.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp | memref.AtomicRMWOp):
            if kernel_param(kernel, op.memref) in params:
                yield op


def _is_atomic_on(
    op: Operation, kernel: KernelOp, params: set[int], index: SSAValue, red: Reduction
) -> bool:
    return (
        isinstance(op, memref.AtomicRMWOp)
        and kernel_param(kernel, op.memref) in params
        and op.indices[0] is index
        and op.kind.value.data in _ATOMIC_KINDS[red]
    )


def _filter(
    load: memref.LoadOp, kernel: KernelOp, params: set[int], red: Reduction
) -> bool:
    """Is the loaded neighbour value only a filter before the array's atomic
    at the same neighbour (see the module docstring)?"""
    index = load.indices[0]
    for use in load.res.uses:
        test = use.operation
        if not isinstance(test, arith.CmpiOp):
            return False
        side = _FILTERS[red].get(test.predicate.value.data)
        if side != use.index:
            return False
        for branch_use in test.result.uses:
            branch = branch_use.operation
            if (
                not isinstance(branch, scf.IfOp)
                or branch_use.index != 0
                or branch.results
                or branch.false_region.blocks
            ):
                return False
            if not any(
                _is_atomic_on(op, kernel, params, index, red)
                for op in branch.true_region.walk()
            ):
                return False
    return True


def _kernel_tolerates(nodes: KernelNodes, params: set[int], red: Reduction) -> bool:
    """Do the kernel's accesses of the array (at `params`) tolerate mirrors
    that lag their masters?"""
    kernel = nodes.kernel
    for op in _accesses(kernel, params):
        assert isinstance(op, memref.LoadOp | memref.StoreOp | memref.AtomicRMWOp)
        if isinstance(op, memref.AtomicRMWOp) and op.result.uses:
            return False
        if len(op.indices) != 1:
            return False
        index = op.indices[0]
        if index in nodes.masters:
            continue
        if index not in nodes.neighbours:
            return False
        if isinstance(op, memref.LoadOp):
            if not _filter(op, kernel, params, red):
                return False
        elif not _is_atomic_on(op, kernel, params, index, red):
            return False
    return True


def _pushes_follow_atomics(
    nodes: KernelNodes, params: set[int], red: Reduction
) -> bool:
    """Is every push of a neighbour inside a filter on the array at that
    neighbour (an `scf.if` on a comparison `_filter` accepts), after an
    atomic of `red` on the array at that neighbour inside the same filter?
    Then a pushed mirror fell below the value it had when the round began,
    so the exchange of changed mirrors carries it, and its push depends on
    the fall, as the owner's activation does."""
    kernel = nodes.kernel
    atomics = [
        op
        for op in _accesses(kernel, params)
        if isinstance(op, memref.AtomicRMWOp)
        and op.kind.value.data in _ATOMIC_KINDS[red]
    ]
    for push in kernel.body.walk():
        if not isinstance(push, PushOp) or push.item in nodes.masters:
            continue
        if push.item not in nodes.neighbours:
            return False
        filters = [
            branch
            for branch in ancestors(push)
            if isinstance(branch, scf.IfOp)
            and _filters_on(branch, kernel, params, push.item, red)
        ]
        if not any(
            atomic.indices[0] is push.item
            and _follows(push, atomic)
            and any(branch.is_ancestor(atomic) for branch in filters)
            for atomic in atomics
        ):
            return False
    return True


def _filters_on(
    branch: scf.IfOp,
    kernel: KernelOp,
    params: set[int],
    index: SSAValue,
    red: Reduction,
) -> bool:
    """Is `branch`'s condition a comparison of a load of the array at
    `index` that passes more often as the loaded value lags?"""
    test = branch.cond.owner
    if not isinstance(test, arith.CmpiOp):
        return False
    side = _FILTERS[red].get(test.predicate.value.data)
    if side is None:
        return False
    load = test.operands[side].owner
    return (
        isinstance(load, memref.LoadOp)
        and kernel_param(kernel, load.memref) in params
        and load.indices[0] is index
    )


def _follows(op: Operation, earlier: Operation) -> bool:
    """Is `op`, or an op enclosing it, after `earlier` in `earlier`'s block?"""
    block = earlier.parent_block()
    return any(
        current.parent_block() is block and earlier.is_before_in_block(current)
        for current in (op, *ancestors(op))
    )


def reduce_only_arrays(
    rounds: list[RoundSite],
    users: Callable[[SSAValue], list[tuple[KernelNodes, set[int]]]],
) -> dict[IterateOp, tuple[int, Reduction]]:
    """The Iterates whose round kernel's one min/max node array can be
    synchronized reduce-only, with the array's parameter position and
    reduction. `users(array)`: every kernel passed the array (by its root
    on the host), with the parameter positions it takes it at."""
    found: dict[IterateOp, tuple[int, Reduction]] = {}
    for site in rounds:
        if not site.pushes or len(site.writes) != 1:
            continue
        ((position, red),) = site.writes.items()
        if red not in REDUCE_ONLY_REDUCTIONS:
            continue
        params = {p for p, a in enumerate(site.args) if a is site.args[position]}
        kernel = site.nodes.kernel
        if any(
            isinstance(op, memref.StoreOp)
            or (
                isinstance(op, memref.AtomicRMWOp)
                and op.kind.value.data not in _ATOMIC_KINDS[red]
            )
            for op in _accesses(kernel, params)
        ):
            continue
        if not _pushes_follow_atomics(site.nodes, params, red):
            continue
        if all(
            _kernel_tolerates(nodes, positions, red)
            for nodes, positions in users(site.args[position])
        ):
            found[site.op] = (position, red)
    return found
