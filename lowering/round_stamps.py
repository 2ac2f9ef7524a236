"""Round stamps that `irgl-distribute` leaves unsynchronized.

A *round stamp* is a node array that only filters pushes: an Iterate's round
kernel exchanges the round counter into a node's entry and pushes the node
when the old entry differs from the counter, so a node is pushed at most once
a round (benchmarks/cc/cc_lp.mlir, benchmarks/sssp/sssp.mlir):

    %last = "memref.atomic_rmw"(%ROUND, %stamp, %v) <{kind = 2 : i64}> ...
    %first = arith.cmpi ne, %last, %ROUND : i32
    scf.if %first { irgl.wl.push %v }

Synchronizing such a stamp after each round (reduce the mirrors, broadcast
the masters) changes nothing a later round can see, provided every copy of
every entry holds a value other than the coming rounds' counters:

- the counter starts at a constant and grows by a positive constant each
  round, so the values stored in earlier rounds of the same Iterate never
  equal a later round's counter;
- every other write of the array is a *clear*: an unconditional store of a
  constant below the counter's start at every node (a ForAll over nodes);
  one runs before the Iterate (or the counter starts above 0: the
  allocation's zero fill is then that first clear), and the clears' own
  synchronization stays;
- nothing else reads or writes the array, the host allocates it, and the
  Iterate does not carry it.

Then every copy starts the Iterate equal (allocations are zero-filled, and
the clear's broadcast moves every master it changed), the first exchange of
a round on each rank sees an older value and pushes, exactly as with the
synchronization, and each rank's own copy is enough. On RMAT-26 the stamp
doubled the bytes a CC round sent (it is as large as the labels).

Where loops enclose the Iterate (SSSP's, one Iterate per distance window),
each loop's body must hold a clear (in the Iterate's own block it may sit in
an `scf.if` taken exactly when the Iterate ran a round, its final counter
unequal to the start, as SSSP's window steps: a run without rounds stamps
nothing), and one `sync_nodes set` of the stamp
follows each run of the Iterate instead: the clear writes only masters and
its broadcast moves only the masters it changed, so without that sync a
mirror stamped on its rank while its master was not would keep the last
run's stamp and miss a push in the next run
(test/python/programs/bfs_two_passes_stamped.mlir). With it, every copy
agrees before the clear, and every copy holds the clear's value after it.
Where irgl-distribute computes every clear on the mirrors too (its
`mirrors`: a clear's constant is computable on every copy), every copy holds
the clear's value after it whatever it held before, and that sync is
dropped (`irgl-distribute` decides; this module only finds the stamps).
In a P-rank run of SSSP on the interpreter (rmat:11) the stamp was half of
the values a round reduced and broadcast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.kernels import KernelOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.worklist import PushOp

_ATOMIC_ASSIGN = 2
_CMPI_NE = 1


def kernel_param(kernel: KernelOp, value: SSAValue) -> int | None:
    """The position of `value` among `kernel`'s parameters, if it is one."""
    if isinstance(value, BlockArgument) and value.block is kernel.body.block:
        return value.index
    return None


def int_constant(value: SSAValue) -> int | None:
    """`value`'s integer if an `arith.constant` defines it."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _only_pushes(region_block: Block | None, item: SSAValue | None) -> bool:
    if region_block is None:
        return True
    return all(
        isinstance(op, scf.YieldOp)
        or (isinstance(op, PushOp) and (item is None or op.item is item))
        for op in region_block.ops
    ) and (
        not isinstance(region_block.last_op, scf.YieldOp)
        or not region_block.last_op.operands
    )


def decides_only_pushes(test: SSAValue, item: SSAValue | None = None) -> bool:
    """Is every use of the i1 `test` the condition of an `scf.if` with no
    results and no else whose block only pushes (only `item`, where given)?"""
    for use in test.uses:
        branch = use.operation
        if not isinstance(branch, scf.IfOp) or use.index != 0:
            return False
        if branch.results or branch.false_region.blocks:
            return False
        if not _only_pushes(branch.true_region.block, item):
            return False
    return True


def _guards_pushes(exchange: memref.AtomicRMWOp, counter: SSAValue) -> bool:
    """Is the old value `exchange` returns only compared (ne) with `counter`,
    each comparison deciding nothing but pushes?"""
    for use in exchange.result.uses:
        cmp = use.operation
        if not (
            isinstance(cmp, arith.CmpiOp)
            and cmp.predicate.value.data == _CMPI_NE
            and cmp.operands[1 - use.index] is counter
        ):
            return False
        if not decides_only_pushes(cmp.result):
            return False
    return True


def _array_uses(kernel: KernelOp, position: int) -> list[Operation]:
    return [use.operation for use in kernel.body.block.args[position].uses]


def stamp_counter(kernel: KernelOp, position: int) -> int | None:
    """The parameter position of the round counter if the array at
    `position` is used in `kernel` only as a round stamp (see the module
    docstring), else None."""
    counter: int | None = None
    for op in _array_uses(kernel, position):
        if not (
            isinstance(op, memref.AtomicRMWOp)
            and op.kind.value.data == _ATOMIC_ASSIGN
            and op.memref is kernel.body.block.args[position]
        ):
            return None
        param = kernel_param(kernel, op.value)
        if param is None or (counter is not None and param != counter):
            return None
        if not _guards_pushes(op, op.value):
            return None
        counter = param
    return counter


def clear_value(kernel: KernelOp, position: int) -> int | None:
    """The constant `kernel` stores into every node's entry of the array at
    `position` if that is all it does with the array, else None."""
    values: set[int] = set()
    for op in _array_uses(kernel, position):
        if not (
            isinstance(op, memref.StoreOp)
            and op.memref is kernel.body.block.args[position]
            and len(op.indices) == 1
        ):
            return None
        loop = op.parent_op()
        if not (
            isinstance(loop, ForAllOp)
            and loop.iterator.data == IteratorKind.NODES
            and op.parent_block() is loop.body.block
            and op.indices[0] is loop.body.block.args[0]
        ):
            return None
        value = int_constant(op.value)
        if value is None:
            return None
        values.add(value)
    return values.pop() if len(values) == 1 else None


@dataclass
class StampSite:
    """An invocation as the stamp analysis sees it: the op, the callee and the
    host values bound to the callee's parameters (an Iterate's carried ones as
    its body's arguments)."""

    op: InvokeOp | IterateOp
    kernel: KernelOp
    args: list[SSAValue]


def _other_operand(op: Operation, value: SSAValue) -> SSAValue | None:
    """The operand of the binary `op` beside `value`, if `value` is one."""
    lhs, rhs = op.operands
    return rhs if lhs is value else lhs if rhs is value else None


def _counter_start(iterate: IterateOp, carried: SSAValue) -> int | None:
    """The start of an Iterate's carried counter if it grows by a positive
    constant every round, else None."""
    if (
        not isinstance(carried, BlockArgument)
        or carried.block is not iterate.body.block
    ):
        return None
    index = carried.index
    initial = iterate.args[iterate.carried_positions[index]]
    terminator = iterate.body.block.last_op
    if terminator is None or index >= len(terminator.operands):
        return None
    step = terminator.operands[index].owner
    if not isinstance(step, arith.AddiOp):
        return None
    other = _other_operand(step, carried)
    increment = None if other is None else int_constant(other)
    if increment is None or increment <= 0:
        return None
    return int_constant(initial)


def _runs_at_most_once(op: Operation) -> bool:
    return isinstance(op, scf.IfOp | KernelOp) or (
        isinstance(op, PipeOp) and op.once is not None
    )


def _if_a_round_ran(
    branch: Operation, iterate: IterateOp, counter: int, start: int
) -> bool:
    """Is `branch` an `scf.if` without else on `iterate`'s final counter
    (carried value `counter`) differing from its `start`, i.e. taken exactly
    when the Iterate ran a round? A run without rounds stamps nothing, so a
    clear only such a run skips still separates every two runs' stamps."""
    if not isinstance(branch, scf.IfOp) or branch.false_region.blocks:
        return False
    cmp = branch.cond.owner
    if not (isinstance(cmp, arith.CmpiOp) and cmp.predicate.value.data == _CMPI_NE):
        return False
    other = _other_operand(cmp, iterate.results[counter])
    return other is not None and int_constant(other) == start


def _clear_rule(
    iterate: IterateOp,
    clears: Sequence[InvokeOp],
    counter: int,
    start: int,
) -> bool | None:
    """None where the stamp stays synchronized after every round; else
    whether loops enclose the Iterate (then each has a clear in its body,
    and one sync after each run of the Iterate makes the copies agree before
    the next clear). Either way a clear runs before the Iterate is first
    reached; where the counter starts above 0 the allocation's zero fill is
    that clear, on every rank. In the Iterate's own block a clear may sit in
    an `scf.if` taken when the Iterate ran a round (SSSP's window steps)."""
    before = start > 0
    looped = False
    op: Operation = iterate
    while (block := op.parent_block()) is not None:
        parent = block.parent_op()
        index = block.get_operation_index(op)
        here = [c for c in clears if c.parent_block() is block]
        if any(block.get_operation_index(c) < index for c in here):
            before = True
        if op is iterate:  # clears after it, in a branch taken if it ran a round
            here += [
                c
                for c in clears
                if (branch := c.parent_op()) is not None
                and branch.parent_block() is block
                and block.get_operation_index(branch) > index
                and _if_a_round_ran(branch, iterate, counter, start)
            ]
        if parent is None or isinstance(parent, KernelOp):
            break
        if not _runs_at_most_once(parent):
            if not here:
                return None
            looped = True
        op = parent
    return looped if before else None


def unsynchronized_stamps(
    sites: Sequence[StampSite], root: Callable[[SSAValue], SSAValue]
) -> dict[tuple[IterateOp, int], bool]:
    """The (Iterate, parameter position) pairs whose round stamp needs no
    synchronization after each round (see the module docstring), each with
    whether it needs one after each run of the Iterate instead (loops
    enclose it)."""
    found: dict[tuple[IterateOp, int], bool] = {}
    for site in sites:
        if not isinstance(site.op, IterateOp):
            continue
        for position, value in enumerate(site.args):
            counter = stamp_counter(site.kernel, position)
            if counter is None or position in site.op.carried_positions:
                continue
            start = _counter_start(site.op, site.args[counter])
            array = root(value)
            if start is None or not isinstance(array.owner, memref.AllocOp):
                continue
            carried = site.args[counter]
            assert isinstance(carried, BlockArgument)  # _counter_start checked
            after = _others_clear(site, array, carried.index, start, sites, root)
            if after is not None:
                found[(site.op, position)] = after
    return found


def _others_clear(
    stamp_site: StampSite,
    array: SSAValue,
    counter: int,
    start: int,
    sites: Sequence[StampSite],
    root: Callable[[SSAValue], SSAValue],
) -> bool | None:
    clears: list[InvokeOp] = []
    for other in sites:
        positions = [p for p, v in enumerate(other.args) if root(v) is array]
        if other is stamp_site:
            if len(positions) != 1:
                return None
            continue
        for position in positions:
            value = clear_value(other.kernel, position)
            if value is None or value >= start or not isinstance(other.op, InvokeOp):
                return None
        if positions:
            clears.append(other.op)  # pyright: ignore[reportArgumentType]
    assert isinstance(stamp_site.op, IterateOp)
    return _clear_rule(stamp_site.op, clears, counter, start)
