"""The small-worklist mode of irgl-outline-iterations (`small_worklist=N`,
N > 0).

A loop of the control kernel (an Iterate, or a looping Pipe) whose round
holds no nested loop and only invocations that one block can run (each
iterates its `in` worklist, nothing in it needs the whole grid: no
SyncRunningThreads, no Exclusive, no C text) checks at each round boundary
whether `in` holds at most N items. If so, block 0 alone runs the following
rounds, each step ending in `irgl_ctl_size_check` (a `__syncthreads`, then
the size of `out` read once and broadcast) instead of a grid barrier, and
the device bodies mapping their iterations over block 0's threads (the
bodies take the index of the calling block and the number of blocks:
`#irgl_rt.device_body<@k, in_size, grid>`), while every other block waits
at one grid barrier. Block 0 leaves the mode after the first round whose
`in` holds more than N items or whose loop condition is false; its thread 0
stores the loop state (condition, carried values, worklist handles, size of
`in`, step counter) in a device mailbox (one `memref<?xT>` per type, kernel
arguments after the status word), all blocks meet at the grid barrier and
every thread loads the state. Block 0 starts only after a first grid
barrier: every block is then done with the results of the last grid step
(the size of `in`, cell slots), which block 0's second step would reset,
and with the mailbox of the previous exit. Every block arrives at every
grid barrier equally often: the mode's decision depends only on values
every block holds alike.

A time limit (`small_worklist_us=T`, T > 0) ends the mode for the rest of
the control kernel once one of block 0's steps took more than T
microseconds (its thread 0 reads `%globaltimer` before and after the step,
`irgl_ctl_clock` / `irgl_ctl_small_quick`): a step that slow holds heavy
items (hub nodes, say), which the grid would spread over its blocks instead
of walking them one after another. The slow step's thread 0 sets status[1]
(the status buffer then has two words); every block reads it after the
exit's grid barrier, at each round boundary, before it decides on the mode
(`irgl_ctl_small_allowed`), so the decision stays the same in every block.

Here: which loops get the mode and why not (`small_mode_reasons`, for the
remarks), which code needs the whole grid (`needs_grid`, also checked by
irgl-outline-kernel-bodies), the mailbox, and the rounds of a loop with the
mode (`SmallWorklistLowering`, on top of `ControlLowering`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, i1, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irgl_dialect.attributes import Aggregation, GraphType
from irgl_dialect.c_escape import CBlockOp
from irgl_dialect.kernels import CallOp as KernelCallOp
from irgl_dialect.loops import LoopBase
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import CBlockOp as RuntimeCBlockOp
from irgl_dialect.runtime import WorklistType
from irgl_dialect.runtime_library import DEVICE_READ_TYPES
from irgl_dialect.sync import ExclusiveOp, RetryOp, SyncRunningThreadsOp
from lowering.builders import LoweringBuilder
from lowering.outline_control import (
    ControlLowering,
    ControlState,
    RoundBuilder,
    if_then,
    rt_call,
    rt_value,
)
from lowering.outline_plan import Plan, holds_invocation, launch_of, reads_in_size

#: Default item threshold of the small-worklist mode: two items per thread of
#: a 1024-thread control block (the size RESIDENT_THREADS and the benchmarks'
#: control kernels use). A grid step costs a grid barrier and the dependent
#: loads after it (about 9 us on an H100); a step of block 0 costs a block
#: barrier and one pass of the same dependent loads per item a thread holds,
#: so up to a few items per thread one block is faster than the whole grid.
SMALL_WORKLIST = 2048

#: Default edge bound of the small-worklist mode, per thread of the control
#: block: where a loop's kernels take a graph, block 0 alone runs a round
#: only while its items' out-degrees add up to at most this many edges a
#: thread (a grid's or a chain's frontier has 2-4 a thread; from a leaf of
#: an RMAT graph the second or third level holds a few hubs, which one
#: block would walk while the grid waits: SSSP on rmat:18 from such a
#: source 1.45 ms with the items' count alone, 0.77 ms without the mode).
SMALL_WORKLIST_EDGES = 16


#: irgl operations whose lowering synchronizes the whole grid.
_GRID_WIDE: tuple[tuple[type[Operation], str], ...] = (
    (SyncRunningThreadsOp, "a grid barrier"),
    (ExclusiveOp, "phases separated by grid barriers"),
)
#: C text, which may use the launch's geometry (blockIdx, gridDim).
_C_TEXT = (
    "irgl.cblock",
    "irgl.cexpr",
    "irgl.cdecl",
    "irgl_rt.c_block",
    "irgl_rt.c_expr",
    "irgl_rt.c_decl",
)
#: Runtime functions that depend on the whole grid.
_GRID_FUNCTIONS = (
    "irgl_grid_sync",
    "irgl_global_thread_id",
    "irgl_global_num_threads",
    "irgl_is_first_thread",
)


def needs_grid(
    op: Operation,
    functions: dict[str, func.FuncOp],
    seen: set[str],
    *,
    callee: bool = False,
    barriers: bool = False,
) -> str | None:
    """Why the code of `op` (a kernel, or a device function it calls) needs
    the whole grid, or None if block 0 alone can run it with a grid of one
    block. Device functions get no grid arguments, so they must not use the
    launch's geometry at all. With `barriers`, grid barriers in `op` itself
    (SyncRunningThreads, an Exclusive's phases; `irgl_grid_sync` once
    lowered) are allowed: the body then takes its grid and synchronizes
    only block 0 where block 0 runs it alone (`irgl_sync_blocks`)."""
    for inner in op.walk():
        for kind, why in _GRID_WIDE:
            if isinstance(inner, kind) and not (barriers and not callee):
                return f"'{inner.name}' ({why})"
        if inner.name in _C_TEXT:
            return f"'{inner.name}' (C text may use the launch's geometry)"
        geometry = (gpu.GlobalIdOp, gpu.BlockIdOp, gpu.GridDimOp, LoopBase)
        if isinstance(inner, gpu.GlobalIdOp) or (
            callee and isinstance(inner, geometry)
        ):
            return f"'{inner.name}' (uses the launch's geometry)"
        if not isinstance(inner, func.CallOp):
            continue
        name = inner.callee.string_value()
        if name == "irgl_grid_sync" and barriers and not callee:
            continue
        if name in _GRID_FUNCTIONS:
            return f"a call of {name}"
        target = functions.get(name)
        if target is not None and name not in seen:
            seen.add(name)
            why = needs_grid(target, functions, seen, callee=True)
            if why is not None:
                return f"{why} in @{name}"
    return None


def single_block_reason(
    name: str, kernel: gpu.FuncOp, functions: dict[str, func.FuncOp]
) -> str | None:
    """Why block 0 alone cannot run kernel `name` in the small-worklist
    mode, or None."""
    if launch_of(kernel).worklist is None:
        return f"@{name} has no worklist"
    if not reads_in_size(kernel):
        return f"@{name} does not iterate over its worklist"
    why = needs_grid(kernel, functions, set())
    if why is not None:
        return f"@{name} needs the whole grid: {why}"
    return None


def drain_reason(kernel: gpu.FuncOp, functions: dict[str, func.FuncOp]) -> str | None:
    """Why block 0 cannot drain the retry storms of `kernel` (None: it can;
    `retry_drain` of irgl-outline-iterations): it must retry its lost
    conflicts and otherwise need the whole grid only for its barriers."""
    launch = launch_of(kernel)
    if not launch.retries:
        return "it retries nothing"
    if launch.worklist is None or not reads_in_size(kernel):
        return "it does not iterate over its worklist"
    return needs_grid(kernel, functions, set(), barriers=True)


def retries_only_lost_exclusives(kernel: gpu.FuncOp) -> bool:
    """Whether every Retry of `kernel` is in the Else of an Exclusive and
    nothing else in it can retry (no calls, no C text): a contender alone in
    its launch, which claims nothing and wins, then retries nothing (the
    drain's one-item windows read no losers back: `_Drain.lone_wins`)."""
    for op in kernel.walk():
        if isinstance(op, func.CallOp | KernelCallOp | CBlockOp | RuntimeCBlockOp):
            return False
        if isinstance(op, RetryOp) and not _in_else(op):
            return False
    return True


def _in_else(op: Operation) -> bool:
    """Is `op` inside the Else region of an Exclusive?"""
    region = op.parent_region()
    while region is not None:
        parent = region.parent_op()
        if isinstance(parent, ExclusiveOp) and region is parent.else_body:
            return True
        region = parent.parent_region() if parent is not None else None
    return False


def _is_loop(op: Operation) -> bool:
    return isinstance(op, IterateOp) or (isinstance(op, PipeOp) and op.once is None)


def _loops(op: IterateOp | PipeOp) -> list[IterateOp | PipeOp]:
    """The loops of an outlined Iterate/Pipe (itself included), outermost
    first."""
    return [o for o in op.walk() if isinstance(o, IterateOp | PipeOp) and _is_loop(o)]


def small_loop_reason(
    loop: IterateOp | PipeOp, kernels: dict[str, str | None]
) -> str | None:
    """Why `loop` gets no small-worklist mode (None if it gets it);
    `kernels` says why each invoked kernel cannot run in one block."""
    if any(_is_loop(inner) for inner in loop.body.walk()):
        return "its round holds a nested loop"
    if any(holds_invocation(inner) for inner in loop.body.walk()):
        return "its round invokes a kernel inside scf.if"
    for inner in loop.walk():
        if isinstance(inner, InvokeOp | IterateOp):
            why = kernels[inner.callee.string_value()]
            if why is not None:
                return why
    for t in _carried_types(loop):
        if t not in DEVICE_READ_TYPES:
            return f"a carried value of type {t} cannot be handed over"
    return None


def _carried_types(loop: IterateOp | PipeOp) -> list[Attribute]:
    if isinstance(loop, PipeOp):
        return []
    return [loop.args[p].type for p in loop.carried_positions]


def _handover_types(loop: IterateOp | PipeOp) -> list[Attribute]:
    """What block 0 hands over when it leaves the mode of `loop`: the loop
    condition, the carried values and the state (`ControlState.types()`)."""
    return [i1, *_carried_types(loop), *[WorklistType()] * 4, IndexType(), IndexType()]


class Mailbox:
    """Device buffers (`memref<?xT>` arguments of the control kernel, one per
    type) through which thread 0 of block 0 hands a loop's state to every
    block when it leaves the small-worklist mode."""

    def __init__(self, buffers: dict[Attribute, SSAValue]):
        self.buffers = buffers

    @staticmethod
    def sizes(loops: Sequence[IterateOp | PipeOp]) -> dict[Attribute, int]:
        """Slots per type: enough for the largest handover of each type
        (loops share the slots: a handover ends with a grid barrier after
        every block has read it)."""
        sizes: dict[Attribute, int] = {}
        for loop in loops:
            counts: dict[Attribute, int] = {}
            for t in _handover_types(loop):
                counts[t] = counts.get(t, 0) + 1
            for t, n in counts.items():
                sizes[t] = max(sizes.get(t, 0), n)
        return sizes

    def _slots(self, types: Sequence[Attribute]) -> list[tuple[SSAValue, int]]:
        taken: dict[Attribute, int] = {}
        slots: list[tuple[SSAValue, int]] = []
        for t in types:
            slots.append((self.buffers[t], taken.get(t, 0)))
            taken[t] = taken.get(t, 0) + 1
        return slots

    def post(self, b: LoweringBuilder, values: Sequence[SSAValue]) -> None:
        """Thread 0 stores `values` (before the grid barrier that publishes
        them)."""
        first = rt_value(b, "irgl_is_first_thread", [])
        store = scf.IfOp(first, [], Region(Block()))
        b.insert(store)
        inner = b.nested(InsertPoint.at_end(store.true_region.block))
        slots = self._slots([v.type for v in values])
        for value, (buffer, slot) in zip(values, slots, strict=True):
            inner.insert(memref.StoreOp.get(value, buffer, [inner.index(slot)]))
        inner.insert(scf.YieldOp())

    def fetch(self, b: LoweringBuilder, types: Sequence[Attribute]) -> list[SSAValue]:
        """Every thread loads the values (after that grid barrier)."""
        return [
            b.op(memref.LoadOp.get(buffer, [b.index(slot)]))
            for buffer, slot in self._slots(types)
        ]


@dataclass
class SmallMode:
    """The small-worklist mode of one control kernel."""

    threshold: int
    loops: set[Operation]
    """The loops (IterateOp/PipeOp) that have the mode."""
    mailbox: Mailbox
    block: SSAValue
    """`gpu.block_id x` of the control kernel."""
    limit_us: int = 0
    """A step of block 0 longer than this ends the mode (0: no limit)."""
    merged: bool = False
    """Build a loop's round once, for the grid and for block 0 alone (the
    geometry and the grid barriers chosen at run time), instead of a grid
    round and a copy of it for block 0: each device body is inlined once."""
    max_edges: int = 0
    """Where a loop's kernels take a graph: block 0 alone only while the
    out-degrees of `in`'s items add up to at most this (0: no bound)."""


def check_small_worklist_option(value: int, owner: str) -> None:
    """A `small_worklist` option is an item count (0: off); raise a
    ValueError naming `owner` for a negative one."""
    if value < 0:
        raise ValueError(
            f"{owner}: small_worklist must be an item count (0: off), got {value}"
        )


def check_small_worklist_edges_option(value: int, owner: str) -> None:
    """A `small_worklist_edges` option is a count of edges per thread of the
    control block (0: no edge bound); raise a ValueError naming `owner` for
    a negative one."""
    if value < 0:
        raise ValueError(
            f"{owner}: small_worklist_edges must be edges per thread of the "
            f"control block (0: no bound), got {value}"
        )


def check_small_worklist_us_option(value: int, owner: str) -> None:
    """A `small_worklist_us` option is a time in microseconds (0: no
    limit); raise a ValueError naming `owner` for a negative one."""
    if value < 0:
        raise ValueError(
            f"{owner}: small_worklist_us must be microseconds (0: no limit), "
            f"got {value}"
        )


def small_mode_reasons(
    op: IterateOp | PipeOp,
    plan: Plan,
    single_block: dict[str, str | None],
    functions: dict[str, func.FuncOp],
) -> list[tuple[IterateOp | PipeOp, str | None]]:
    """Each loop of `op` with why it gets no small-worklist mode (None when
    it gets it). `single_block` caches, per kernel, why block 0 alone cannot
    run it (None: it can); it gets an entry for every kernel of `plan`."""
    for name, kernel in plan.kernels.items():
        if name not in single_block:
            single_block[name] = single_block_reason(name, kernel, functions)
    return [(loop, small_loop_reason(loop, single_block)) for loop in _loops(op)]


def small_mode_of(
    device: LoweringBuilder,
    plan: Plan,
    gridded: set[str],
    loops: Sequence[IterateOp | PipeOp],
    mailbox: dict[Attribute, SSAValue],
    threshold: int,
    limit_us: int,
    merged: bool = False,
    edges_per_thread: int = 0,
) -> tuple[tuple[SSAValue, SSAValue] | None, SmallMode | None]:
    """The launch geometry the gridded device bodies take (read at the top
    of the control kernel, at `device`) and the small-worklist mode of
    `loops`, if any (its edge bound: `edges_per_thread` edges per thread of
    the control block)."""
    if not any(k in gridded for k in plan.kernels) and not loops:
        return None, None
    x = gpu.DimensionAttr(gpu.DimensionEnum.X)
    block = device.op(gpu.BlockIdOp(x))
    blocks = device.op(gpu.GridDimOp(x))
    if not loops:
        return (block, blocks), None
    mode = SmallMode(
        threshold,
        set(loops),
        Mailbox(mailbox),
        block,
        limit_us,
        merged,
        edges_per_thread * plan.block_size,
    )
    return (block, blocks), mode


class SmallWorklistLowering(ControlLowering):
    """A control kernel's body with the small-worklist mode for the loops
    of `small`."""

    def __init__(
        self,
        plan: Plan,
        bodies: dict[str, str],
        mapping: dict[SSAValue, SSAValue],
        cells: dict[tuple[str, Aggregation], SSAValue],
        status: SSAValue,
        state: ControlState,
        sized: set[str],
        gridded: set[str],
        geometry: tuple[SSAValue, SSAValue] | None,
        small: SmallMode,
    ):
        super().__init__(
            plan, bodies, mapping, cells, status, state, sized, gridded, geometry
        )
        self.small = small
        self.graph: SSAValue | None = None
        """The graph of the loop being built whose edges bound the mode."""

    def _round(
        self,
        b: LoweringBuilder,
        loop: IterateOp | PipeOp,
        carried: list[SSAValue],
        build: RoundBuilder,
    ) -> list[SSAValue]:
        """One round of `loop` at `b`, or, where `loop` has the small-worklist
        mode, the switch between a grid round and block 0's rounds; returns
        what the loop's after region yields (condition, carried values,
        state)."""
        small = self.small
        if self.block_mode or loop not in small.loops:
            return super()._round(b, loop, carried, build)
        self.graph = self._graph_of(loop)
        if small.merged:
            return self._merged_round(b, carried, build)
        entry = self.state
        fits = self._fits(b)
        types = [i1, *(v.type for v in carried), *entry.types()]
        switch = scf.IfOp(fits, types, Region(Block()), Region(Block()))
        b.insert(switch)

        # grid mode: one round of the whole grid
        grid = b.nested(InsertPoint.at_end(switch.false_region.block))
        self.state = ControlState.of(entry.values(), True)
        condition, values = build(grid, carried)
        grid.insert(scf.YieldOp(condition, *values, *self.state.values()))

        # small mode: once every block is done with the last grid step (the
        # size of in, cell values: block 0's second step would reset them),
        # block 0 runs rounds while every other block waits at the grid
        # barrier; then every block loads the state block 0 left (the next
        # entry's barrier keeps the next exit from overwriting it too early)
        alone = b.nested(InsertPoint.at_end(switch.true_region.block))
        self.state = ControlState.of(entry.values(), True)
        rt_call(alone, "irgl_grid_sync", [])
        zero = alone.index(0)
        is_first = alone.op(arith.CmpiOp(small.block, zero, "eq"))
        only = scf.IfOp(is_first, [], Region(Block()))
        alone.insert(only)
        first = alone.nested(InsertPoint.at_end(only.true_region.block))
        small.mailbox.post(first, self._block_rounds(first, carried, build))
        first.insert(scf.YieldOp())
        rt_call(alone, "irgl_grid_sync", [])
        alone.insert(scf.YieldOp(*small.mailbox.fetch(alone, types)))

        results: list[SSAValue] = list(switch.results)
        self.state = ControlState.of(results[1 + len(carried) :], True)
        return results

    def _graph_of(self, loop: IterateOp | PipeOp) -> SSAValue | None:
        """The control kernel's value of the graph that `loop`'s kernels
        take (the first graph argument of its invocations), where the mode
        bounds the edges of `in`'s items; None: items only."""
        if self.small.max_edges <= 0:
            return None
        for inner in loop.walk():
            if isinstance(inner, InvokeOp | IterateOp):
                for arg in inner.args:
                    if isinstance(arg.type, GraphType) and arg in self.mapping:
                        return self.mapping[arg]
        return None

    def _small_enough(self, b: LoweringBuilder) -> SSAValue:
        """Whether `in` (the state's) holds at most `threshold` items and,
        with a graph, at most `max_edges` edges of theirs."""
        size = self.state.size
        assert size is not None, "the loop carries the size of in"
        if self.graph is None:
            return b.op(arith.CmpiOp(size, b.index(self.small.threshold), "sle"))
        return rt_value(
            b,
            "irgl_ctl_small_fits",
            [
                self.state.worklists[0],
                size,
                b.index(self.small.threshold),
                self.graph,
                b.const(self.small.max_edges, i64),
            ],
        )

    def _fits(self, b: LoweringBuilder) -> SSAValue:
        """Whether `in` is small enough for block 0 alone (and the mode not
        ended by its time limit)."""
        fits = self._small_enough(b)
        if self.small.limit_us > 0:
            allowed = rt_value(b, "irgl_ctl_small_allowed", [self.status])
            fits = b.op(arith.AndIOp(fits, allowed))
        return fits

    def _merged_round(
        self, b: LoweringBuilder, carried: list[SSAValue], build: RoundBuilder
    ) -> list[SSAValue]:
        """The `merged` form of `_round`: the same switch between the grid
        and block 0, with one copy of the round. `small` = whether `in` fits;
        if small, a grid barrier (every block done with the last grid step);
        the grid (not small) or block 0 (small) runs rounds, the grid one,
        block 0 while they stay small, the round choosing its geometry and
        barriers by `small`; if small, block 0 posts the state and every
        block loads it after a grid barrier."""
        small = self.small
        entry = self.state
        fits = self._fits(b)
        types = [i1, *(v.type for v in carried), *entry.types()]
        if_then(b, fits, lambda at: rt_call(at, "irgl_grid_sync", []))
        runs = b.op(
            arith.OrIOp(
                b.negate(fits), b.op(arith.CmpiOp(small.block, b.index(0), "eq"))
            )
        )
        active = scf.IfOp(runs, types, Region(Block()), Region(Block()))
        b.insert(active)
        at = b.nested(InsertPoint.at_end(active.true_region.block))
        self.small_flag = fits
        ran = self._rounds_while(at, carried, build, fits)
        self.small_flag = None
        if_then(at, fits, lambda inner: small.mailbox.post(inner, ran))
        at.insert(scf.YieldOp(*ran))
        idle = b.nested(InsertPoint.at_end(active.false_region.block))
        # (blocks other than 0 in the small mode: replaced by the mailbox)
        idle.insert(scf.YieldOp(idle.const(0, i1), *carried, *entry.values()))
        handover = scf.IfOp(fits, types, Region(Block()), Region(Block()))
        b.insert(handover)
        alone = b.nested(InsertPoint.at_end(handover.true_region.block))
        rt_call(alone, "irgl_grid_sync", [])
        alone.insert(scf.YieldOp(*small.mailbox.fetch(alone, types)))
        grid = b.nested(InsertPoint.at_end(handover.false_region.block))
        grid.insert(scf.YieldOp(*active.results))
        results: list[SSAValue] = list(handover.results)
        self.state = ControlState.of(results[1 + len(carried) :], True)
        return results

    def _rounds_while(
        self,
        b: LoweringBuilder,
        carried: list[SSAValue],
        build: RoundBuilder,
        small: SSAValue | None,
    ) -> list[SSAValue]:
        """do { round } while (condition and in holds at most `threshold`
        items [and, with `small`, small]); returns the condition, the carried
        values and the state after the last round. Block 0's rounds
        (`small` None: built in block mode), or the merged rounds: one round
        of the grid when `small` is false."""
        carried_types = [v.type for v in carried]
        state_types = self.state.types()
        before = Block(arg_types=[*carried_types, *state_types])
        after = Block(arg_types=[i1, *carried_types, *state_types])
        loop = scf.WhileOp(
            [*carried, *self.state.values()],
            [i1, *carried_types, *state_types],
            [before],
            [after],
        )
        b.insert(loop)
        body = b.nested(InsertPoint.at_end(before))
        ncarried = len(carried)
        self.state = ControlState.of(before.args[ncarried:], True)
        limit_us = self.small.limit_us
        start = rt_value(body, "irgl_ctl_clock", []) if limit_us > 0 else None
        condition, values = build(body, list(before.args[:ncarried]))
        fits = self._small_enough(body)
        if start is not None:
            limit = body.const(1000 * limit_us, i64)
            if small is None:
                quick = rt_value(
                    body, "irgl_ctl_small_quick", [start, limit, self.status]
                )
            else:  # a grid round's time says nothing about block 0's
                check = scf.IfOp(small, [i1], Region(Block()), Region(Block()))
                body.insert(check)
                timed = body.nested(InsertPoint.at_end(check.true_region.block))
                timed.insert(
                    scf.YieldOp(
                        rt_value(
                            timed, "irgl_ctl_small_quick", [start, limit, self.status]
                        )
                    )
                )
                untimed = body.nested(InsertPoint.at_end(check.false_region.block))
                untimed.insert(scf.YieldOp(untimed.const(1, i1)))
                quick = check.results[0]
            fits = body.op(arith.AndIOp(fits, quick))
        if small is not None:
            fits = body.op(arith.AndIOp(fits, small))
        stay = body.op(arith.AndIOp(condition, fits))
        body.insert(scf.ConditionOp(stay, condition, *values, *self.state.values()))
        after.add_op(scf.YieldOp(*after.args[1:]))
        results: list[SSAValue] = list(loop.results)
        return results

    def _block_rounds(
        self, b: LoweringBuilder, carried: list[SSAValue], build: RoundBuilder
    ) -> list[SSAValue]:
        """Block 0's rounds: do { round } while (condition and in holds at
        most `threshold` items); returns the condition, the carried values
        and the state after the last round."""
        self.block_mode = True
        results = self._rounds_while(b, carried, build, None)
        self.block_mode = False
        return results
