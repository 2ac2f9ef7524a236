"""irgl-outline-iterations: an Iterate or a Pipe becomes one control kernel.

Runs after convert-irgl-kernels and before convert-irgl-orchestration (spec:
"Compiling Kernel Invocations", control kernels; "Compiling Pipe"). Every
outermost `irgl.iterate` or `irgl.pipe` of a host function that holds a loop
(an Iterate or a looping Pipe) and can run on the device becomes:

- a cooperative `gpu.func` kernel, the *control kernel*, whose threads all
  run the orchestration: each invocation is a `func.call` of the invoked
  kernel's body as a device function followed by `irgl_grid_sync()`;
  worklist sizes, overflow flags and Any/All cells are read on the device
  (once per block, broadcast through shared memory); in/out and in/retry
  are swapped there (the handles are SSA values every thread holds alike,
  rotated through a fourth, spare worklist that global thread 0 empties one
  step ahead, so one grid barrier per invocation suffices; the retry
  worklist is the spare when no kernel retries; each Any/All cell has three
  slots, one per step, reset two steps ahead); the termination condition
  and the Iterate body (carried values, the extra And/Or condition) are
  evaluated there;
- on the host: the pipe context and its initial items as before, one
  cooperative launch (`irgl_rt.grid_size ... resident`: the co-resident grid
  from the occupancy API, the same for every kernel in it), one
  synchronization (`irgl_outline_finish`, which also reports a worklist
  overflow), and copies of the carried results back.

The control kernel's block size follows the intersection rule
(`lowering/block_size.py`, `control_block_size`): the largest size every
invoked kernel admits; each invoked kernel is pinned to it, and the control
kernel's launch bounds ask for RESIDENT_THREADS threads per SM
(RESIDENT_THREADS_TOPOLOGY when it runs no worklist), or, when an invoked
kernel declares `launch_bounds(max_threads, min_blocks)`, for the largest
min_blocks blocks of the control block size. An
Iterate/Pipe stays a host loop when the intersection is empty, when its
body holds something that cannot run on the device (C text, calls, memory
operations), when an invoked kernel is pinned to another size by another
control kernel, or when it holds no loop. With `remarks` the pass
prints one line per Iterate/Pipe saying whether it was outlined, or why not.

Small-worklist mode (`small_worklist=N`, N > 0): a loop of the control
kernel (an Iterate, or a looping Pipe) whose round holds no nested loop and
only invocations that one block can run (each iterates its `in` worklist,
nothing in it needs the whole grid: no SyncRunningThreads, no Exclusive, no
C text) checks at each round boundary whether `in` holds at most N items.
If so, block 0 alone runs the following rounds, each step ending in
`irgl_ctl_size_check` (a `__syncthreads`, then the size of `out` read once
and broadcast) instead of a grid barrier, and the
device bodies mapping their iterations over block 0's threads (the bodies
take the index of the calling block and the number of blocks:
`#irgl_rt.device_body<@k, in_size, grid>`), while every other block waits
at one grid barrier. Block 0 leaves the mode after the first round whose
`in` holds more than N items or whose loop condition is false; its thread 0
stores the loop state (condition, carried values, worklist handles, size of
`in`, step counter) in a device mailbox (one `memref<?xT>` per type, kernel
arguments after the status word), all blocks meet at the grid barrier
and every thread loads the state. Block 0 starts only after a first grid
barrier: every block is then done with the results of the last grid step
(the size of `in`, cell slots), which block 0's second step would reset,
and with the mailbox of the previous exit. Every block arrives at every
grid barrier equally often: the mode's decision depends only on values
every block holds alike. With `remarks`, one line per loop
says whether it has the mode or why not.

A time limit (`small_worklist_us=T`, T > 0) ends the mode for the rest of
the control kernel once one of block 0's steps took more than T
microseconds (its thread 0 reads `%globaltimer` before and after the step,
`irgl_ctl_clock` / `irgl_ctl_small_quick`): a step that slow holds heavy
items (hub nodes, say), which the grid would spread over its blocks
instead of walking them one after another. The slow step's thread 0 sets
status[1] (the status buffer then has two words); every block reads it
after the exit's grid barrier, at each round boundary, before it decides
on the mode (`irgl_ctl_small_allowed`), so the decision stays the same in
every block.

The device functions are declared here (body-less, with the attribute
`#irgl_rt.device_body<@kernel>`) and given the kernel's fully lowered body
by `irgl-outline-kernel-bodies` at the end of `lower-irgl`. The control
kernel's `#irgl_rt.launch` has `control`; each kernel it runs has `pinned`.
Runtime functions come from the runtime library
(`irgl_dialect/runtime_library.py`), IR is built with `LoweringBuilder`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IndexType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import (
    Aggregation,
    ExtraCond,
    GraphType,
    IteratorKind,
    TermCond,
)
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import LoopBase
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import DeviceBodyAttr, GridSizeOp, LaunchAttr, WorklistType
from irgl_dialect.runtime_library import (
    DEVICE_READ_TYPES,
    RuntimeFunction,
    dynamic_memref,
    overload,
    runtime_function,
)
from irgl_dialect.sync import ExclusiveOp, SyncRunningThreadsOp
from lowering.block_size import (
    BlockConstraint,
    constraint_of,
    control_block_size,
)
from lowering.builders import LoweringBuilder
from lowering.pipe_context import open_pipe
from lowering.runtime_calls import KERNEL_MODULE, fail, kernel_module

#: Threads per SM the launch bounds of a data-driven control kernel (one
#: that runs worklists) ask room for (half of what sm_70..sm_90 can hold): at
#: most 64 registers a thread. Measured on an H100 (BFS, MIS, MST): fewer
#: resident warps make each step (grid barrier, loop condition) cheaper,
#: more of them speed up large frontiers; 1024 threads (one block of 1024 per
#: SM) was the best trade-off of those tried (2048 made grid BFS 10% slower).
RESIDENT_THREADS = 1024

#: The most threads an SM holds (sm_70 to sm_90).
SM_THREADS = 2048

#: The same for a topology-driven control kernel (no worklist: every step
#: runs over all nodes), which is bound by memory latency rather than by its
#: barriers: a full SM (at most 32 registers a thread). Measured on an H100,
#: pull PageRank on RMAT 18/20: 3.48/13.9 ms at 1024, 3.05/10.9 ms at 2048.
RESIDENT_THREADS_TOPOLOGY = SM_THREADS

#: Default item threshold of the small-worklist mode: two items per thread of
#: a 1024-thread control block (the size RESIDENT_THREADS and the benchmarks'
#: control kernels use). A grid step costs a grid barrier and the dependent
#: loads after it (about 9 us on an H100); a step of block 0 costs a block
#: barrier and one pass of the same dependent loads per item a thread holds,
#: so up to a few items per thread one block is faster than the whole grid.
SMALL_WORKLIST = 2048

_Orchestration = InvokeOp | IterateOp | PipeOp


class _NotOutlinable(Exception):
    """Why an Iterate/Pipe stays a host loop."""


def _kernels(module: ModuleOp) -> dict[str, gpu.FuncOp]:
    container = kernel_module(module)
    return {
        op.sym_name.data: op
        for op in container.body.block.ops
        if isinstance(op, gpu.FuncOp) and op.kernel is not None
    }


def _launch(kernel: gpu.FuncOp) -> LaunchAttr:
    """The `#irgl_rt.launch` of a lowered kernel."""
    launch = LaunchAttr.of(kernel)
    if launch is None:
        fail(kernel, f"kernel @{kernel.sym_name.data} has no #irgl_rt.launch")
    return launch


def _constraint(kernel: gpu.FuncOp) -> BlockConstraint:
    return constraint_of(_launch(kernel).bounds or None)


def _rt(b: LoweringBuilder, name: str, args: Sequence[SSAValue]) -> list[SSAValue]:
    """Call the runtime function `name` (from the runtime library)."""
    return b.call(runtime_function(name), args)


def _rt_value(b: LoweringBuilder, name: str, args: Sequence[SSAValue]) -> SSAValue:
    """A runtime call with one result."""
    return b.call_value(runtime_function(name), args)


def _has_loop(op: IterateOp | PipeOp) -> bool:
    if isinstance(op, IterateOp) or op.once is None:
        return True
    return any(
        isinstance(inner, IterateOp) or (isinstance(inner, PipeOp) and _has_loop(inner))
        for inner in op.body.walk()
    )


@dataclass
class _Plan:
    """What an outlinable Iterate/Pipe invokes, and the control block size."""

    kernels: dict[str, gpu.FuncOp] = field(default_factory=dict)
    cells: list[tuple[str, Aggregation]] = field(default_factory=list)
    block_size: int = 0

    @property
    def uses_worklist(self) -> bool:
        return any(_launch(k).worklist is not None for k in self.kernels.values())

    @property
    def uses_retry(self) -> bool:
        return any(_launch(k).retries for k in self.kernels.values())

    @property
    def min_blocks(self) -> int:
        """The largest `min_blocks` the kernels' launch bounds declare (0 when
        none declares one)."""
        return max(
            (b[1] for k in self.kernels.values() if len(b := _launch(k).bounds) == 2),
            default=0,
        )


def _check_device_op(op: Operation) -> None:
    """`op` (in an Iterate/Pipe body, not orchestration) must run on the device."""
    if op.dialect_name() == "arith" or isinstance(op, scf.YieldOp):
        return
    if isinstance(op, scf.IfOp | scf.ForOp):
        for inner in op.walk():
            if inner is not op:
                if isinstance(inner, _Orchestration):
                    raise _NotOutlinable(
                        f"'{inner.name}' inside '{op.name}' (only directly in an "
                        "Iterate or Pipe body)"
                    )
                _check_device_op(inner)
        return
    raise _NotOutlinable(f"'{op.name}' in its body cannot run on the device")


def _plan(
    op: IterateOp | PipeOp, kernels: dict[str, gpu.FuncOp], control_block: int = 0
) -> _Plan:
    """The plan of an outlinable `op` (its control block size the largest
    the kernels admit, up to `control_block` when that is set); raises
    _NotOutlinable otherwise."""
    if not _has_loop(op):
        raise _NotOutlinable("it holds no loop (a Pipe once of invocations only)")
    plan = _Plan()

    def visit(inner: Operation) -> None:
        if isinstance(inner, InvokeOp | IterateOp):
            name = inner.callee.string_value()
            if name not in kernels:
                fail(
                    inner,
                    f"kernel @{name} has not been lowered: run "
                    "convert-irgl-kernels first",
                )
            plan.kernels[name] = kernels[name]
            if _launch(kernels[name]).cell is not None:
                aggr = inner.aggregation.data if inner.aggregation else Aggregation.ANY
                if (name, aggr) not in plan.cells:
                    plan.cells.append((name, aggr))
        if isinstance(inner, IterateOp | PipeOp):
            for body_op in inner.body.block.ops:
                visit(body_op)
        elif isinstance(inner, InvokeOp | YieldOp):
            return
        else:
            _check_device_op(inner)

    visit(op)
    constraints = [_constraint(k) for k in plan.kernels.values()]
    best = control_block_size(constraints, control_block)
    if best is None:
        raise _NotOutlinable(
            "the block sizes its kernels admit do not intersect ("
            + ", ".join(
                f"@{n}: {c.category.value} {c.size}"
                for n, c in zip(plan.kernels, constraints, strict=True)
            )
            + ")"
        )
    plan.block_size = best
    for name, kernel in plan.kernels.items():
        launch = _launch(kernel)
        if launch.pinned and launch.block != plan.block_size:
            raise _NotOutlinable(
                f"@{name} already runs in a control kernel of block size "
                f"{launch.block}, this one needs {plan.block_size}"
            )
    return plan


def _captured(op: IterateOp | PipeOp) -> list[SSAValue]:
    """Values the device part of `op` uses that are defined outside it, in
    order of first use (initializers and capacities stay on the host)."""
    seen: dict[SSAValue, None] = {}

    def inside(value: SSAValue) -> bool:
        owner = value.owner
        if isinstance(owner, Block):
            owner = owner.parent_op()
        return owner is not None and (owner is op or op.is_ancestor(owner))

    def visit(inner: Operation) -> None:
        if isinstance(inner, IterateOp):
            operands: Sequence[SSAValue] = inner.args
        elif isinstance(inner, PipeOp):
            operands = ()
        else:
            operands = inner.operands
        for value in operands:
            if not inside(value):
                seen.setdefault(value, None)
        for region in inner.regions:
            for block in region.blocks:
                for child in block.ops:
                    visit(child)

    visit(op)
    return list(seen)


def _device_read(t: Attribute) -> RuntimeFunction:
    """The runtime function that copies a carried result of type `t` back."""
    fn = overload("irgl_device_read", t)
    if fn is None:
        raise _NotOutlinable(f"a carried value of type {t} cannot be read back")
    return fn


def _memref_candidates(op: IterateOp) -> list[SSAValue]:
    """The host memrefs the carried memref slots of an outermost Iterate can
    hold when it ends: their initial values and any value from outside the
    Iterate that its body yields into them. A slot's final memref is read
    back as an index into this list (the control kernel carries one i32 per
    memref slot beside it), so the body may only pass memrefs between slots
    or yield outside ones; anything else keeps the host loop."""
    terminator = op.body.block.last_op
    assert isinstance(terminator, YieldOp)
    candidates: list[SSAValue] = []
    for position, value in zip(op.carried_positions, terminator.values, strict=True):
        if not isinstance(value.type, MemRefType):
            continue
        for source in (op.args[position], value):
            if source in op.body.block.args:
                continue
            if op.is_ancestor(source.owner):
                raise _NotOutlinable(
                    f"a carried value of type {value.type} is computed in the "
                    "body and cannot be read back"
                )
            if source not in candidates:
                candidates.append(source)
    return candidates


def _select_candidate(
    b: LoweringBuilder, candidates: Sequence[SSAValue], buffer: SSAValue
) -> SSAValue:
    """The candidate memref whose index the control kernel left in `buffer`."""
    index = b.call_value(_device_read(i32), [buffer])
    value = candidates[0]
    for k, candidate in enumerate(candidates[1:], start=1):
        hit = b.op(arith.CmpiOp(index, b.const(k, i32), "eq"))
        value = b.op(arith.SelectOp(hit, candidate, value))
    return value


def _read_back_check(op: IterateOp) -> None:
    """Raise if a used result of the outermost Iterate cannot be read back."""
    for result in op.results_:
        if result.uses and not isinstance(result.type, MemRefType):
            _device_read(result.type)
    if any(r.uses and isinstance(r.type, MemRefType) for r in op.results_):
        _memref_candidates(op)


def _unique(taken: set[str], base: str) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def _boolean(b: LoweringBuilder, value: bool) -> SSAValue:
    return b.const(int(value), i1)


def _positive(b: LoweringBuilder, size: SSAValue) -> SSAValue:
    """`size > 0`."""
    return b.op(arith.CmpiOp(size, b.index(0), "sgt"))


# -- small-worklist mode: legality and the mailbox ----------------------------

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


def _needs_grid(
    op: Operation,
    functions: dict[str, func.FuncOp],
    seen: set[str],
    *,
    callee: bool = False,
) -> str | None:
    """Why the code of `op` (a kernel, or a device function it calls) needs
    the whole grid, or None if block 0 alone can run it with a grid of one
    block. Device functions get no grid arguments, so they must not use the
    launch's geometry at all."""
    for inner in op.walk():
        for kind, why in _GRID_WIDE:
            if isinstance(inner, kind):
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
        if name in _GRID_FUNCTIONS:
            return f"a call of {name}"
        target = functions.get(name)
        if target is not None and name not in seen:
            seen.add(name)
            why = _needs_grid(target, functions, seen, callee=True)
            if why is not None:
                return f"{why} in @{name}"
    return None


def _single_block_reason(
    name: str, kernel: gpu.FuncOp, functions: dict[str, func.FuncOp]
) -> str | None:
    """Why block 0 alone cannot run kernel `name` in the small-worklist
    mode, or None."""
    if _launch(kernel).worklist is None:
        return f"@{name} has no worklist"
    if not _reads_in_size(kernel):
        return f"@{name} does not iterate over its worklist"
    why = _needs_grid(kernel, functions, set())
    if why is not None:
        return f"@{name} needs the whole grid: {why}"
    return None


def _is_loop(op: Operation) -> bool:
    return isinstance(op, IterateOp) or (isinstance(op, PipeOp) and op.once is None)


def _loops(op: IterateOp | PipeOp) -> list[IterateOp | PipeOp]:
    """The loops of an outlined Iterate/Pipe (itself included), outermost
    first."""
    return [o for o in op.walk() if isinstance(o, IterateOp | PipeOp) and _is_loop(o)]


def _small_loop_reason(
    loop: IterateOp | PipeOp, kernels: dict[str, str | None]
) -> str | None:
    """Why `loop` gets no small-worklist mode (None if it gets it);
    `kernels` says why each invoked kernel cannot run in one block."""
    if any(_is_loop(inner) for inner in loop.body.walk()):
        return "its round holds a nested loop"
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
    condition, the carried values and the state (`_State.types()`)."""
    return [i1, *_carried_types(loop), *[WorklistType()] * 4, IndexType(), IndexType()]


class _Mailbox:
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
        first = _rt_value(b, "irgl_is_first_thread", [])
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
class _SmallMode:
    """The small-worklist mode of one control kernel."""

    threshold: int
    loops: set[Operation]
    """The loops (IterateOp/PipeOp) that have the mode."""
    mailbox: _Mailbox
    block: SSAValue
    """`gpu.block_id x` of the control kernel."""
    limit_us: int = 0
    """A step of block 0 longer than this ends the mode (0: no limit)."""


_Round = Callable[[LoweringBuilder, list[SSAValue]], tuple[SSAValue, list[SSAValue]]]
"""Builds one round of a loop from its carried values; returns the loop
condition and the next carried values."""


@dataclass
class _State:
    """The worklist handles every thread of a control kernel holds, the size
    of `in` once read after the last grid barrier, and the step counter that
    selects cell slots."""

    worklists: list[SSAValue]
    """[in, out, retry, spare], or [] without worklists."""
    size: SSAValue | None
    """`irgl_ctl_size(in)` (index), or None until it is read; loop-carried
    (so always read at loop boundaries) when there are worklists."""
    epoch: SSAValue

    def values(self) -> list[SSAValue]:
        if not self.worklists:
            return [self.epoch]
        assert self.size is not None, "read the in size before a loop boundary"
        return [*self.worklists, self.size, self.epoch]

    def types(self) -> list[Attribute]:
        return [v.type for v in self.values()]

    @staticmethod
    def of(values: Sequence[SSAValue], with_worklists: bool) -> _State:
        values = list(values)
        if not with_worklists:
            return _State([], None, values[-1])
        return _State(values[:4], values[4], values[-1])


class _DeviceLowering:
    """Builds the body of one control kernel from an Iterate/Pipe."""

    def __init__(
        self,
        plan: _Plan,
        bodies: dict[str, str],
        mapping: dict[SSAValue, SSAValue],
        cells: dict[tuple[str, Aggregation], SSAValue],
        status: SSAValue,
        state: _State,
        sized: set[str],
        gridded: set[str],
        geometry: tuple[SSAValue, SSAValue] | None,
        small: _SmallMode | None,
    ):
        self.plan = plan
        self.bodies = bodies
        self.mapping = mapping
        self.cells = cells
        self.status = status
        self.state = state
        self.sized = sized
        """Kernels whose device body takes the size of `in`."""
        self.gridded = gridded
        """Kernels whose device body takes the calling block and the number
        of blocks."""
        self.geometry = geometry
        """`gpu.block_id x` and `gpu.grid_dim x` (when some body is gridded)."""
        self.small = small
        self.block_mode = False
        """Building code that block 0 alone runs (small-worklist mode)."""

    # -- steps ---------------------------------------------------------

    def invoke(
        self,
        b: LoweringBuilder,
        name: str,
        args: Sequence[SSAValue],
        aggregation: Aggregation | None,
    ) -> SSAValue | None:
        """One invocation: run the body, barrier, retry rounds, advance."""
        kernel = self.plan.kernels[name]
        launch = _launch(kernel)
        uses_worklist = launch.worklist is not None
        operands = [self.mapping.get(a, a) for a in args]
        epoch = self.state.epoch
        self._prologue(b)
        slot = None
        if launch.cell is not None:
            cell = self.cells[(name, aggregation or Aggregation.ANY)]
            slot = _rt_value(b, "irgl_ctl_cell_slot", [cell, epoch])
        cell_args = [slot] if slot is not None else []
        grid_args = self._grid_arguments(b) if name in self.gridded else []
        # in the small-worklist mode (worklist kernels only) every run is
        # followed by irgl_ctl_size_check, whose first barrier is the step's
        assert uses_worklist or not self.block_mode

        def run(
            at: LoweringBuilder, worklists: Sequence[SSAValue], size: SSAValue | None
        ) -> None:
            sizes = [size] if size is not None and name in self.sized else []
            at.stmt(
                func.CallOp(
                    self.bodies[name],
                    [*operands, *worklists, *cell_args, *sizes, *grid_args],
                    [],
                )
            )
            if not self.block_mode:
                _rt(at, "irgl_grid_sync", [])

        if not uses_worklist:
            run(b, [], None)
        else:
            size = self._in_size(b) if name in self.sized else None
            w_in, w_out, w_retry, w_spare = self.state.worklists
            run(b, [w_in, w_out, w_retry if self.plan.uses_retry else w_spare], size)
            if launch.retries:
                w_in, w_retry, w_spare = self._retry_rounds(
                    b, run, w_in, w_out, w_retry, w_spare
                )
            # in := out, out := spare (emptied before the barrier), spare := in
            self.state.worklists = [w_out, w_spare, w_retry, w_in]
            # the new in's size and overflow check in one read (thread 0 of
            # each block), right after the step's barrier
            self.state.size = _rt_value(b, "irgl_ctl_size_check", [w_out, self.status])
        one = b.index(1)
        self.state.epoch = b.op(arith.AddiOp(epoch, one))
        if aggregation is None or slot is None:
            return None
        return _rt_value(b, "irgl_ctl_cell_value", [slot])

    def _grid_arguments(self, b: LoweringBuilder) -> list[SSAValue]:
        """The calling block and the number of blocks a gridded device body
        maps its iterations over: block 0 of 1 in the small-worklist mode."""
        if self.block_mode:
            return [b.index(0), b.index(1)]
        assert self.geometry is not None, "gridded bodies need the geometry"
        return list(self.geometry)

    def _prologue(self, b: LoweringBuilder) -> None:
        """Thread 0 empties the spare worklist and resets the next cell slots
        (visible after the barrier that ends this step)."""
        if self.state.worklists:
            _rt(b, "irgl_ctl_clear", [self.state.worklists[3]])
        for cell in self.cells.values():
            _rt(b, "irgl_ctl_cell_prepare", [cell, self.state.epoch])

    def _retry_rounds(
        self,
        b: LoweringBuilder,
        run: Callable[[LoweringBuilder, Sequence[SSAValue], SSAValue | None], None],
        w_in: SSAValue,
        w_out: SSAValue,
        w_retry: SSAValue,
        w_spare: SSAValue,
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """while (retry has work) { in, retry, spare := retry, spare, in; run }
        (the size of retry read by the condition goes on to the body)"""
        types = [WorklistType()] * 3
        before = Block(arg_types=types)
        after = Block(arg_types=[*types, IndexType()])
        loop = scf.WhileOp(
            [w_in, w_retry, w_spare], [*types, IndexType()], [before], [after]
        )
        b.insert(loop)
        cond = b.nested(InsertPoint.at_end(before))
        size = _rt_value(cond, "irgl_ctl_size_check", [before.args[1], self.status])
        live = _positive(cond, size)
        cond.insert(scf.ConditionOp(live, *before.args, size))
        body = b.nested(InsertPoint.at_end(after))
        old_in, new_in, new_retry, new_size = after.args
        _rt(body, "irgl_ctl_clear", [old_in])
        run(body, [new_in, w_out, new_retry], new_size)
        body.insert(scf.YieldOp(new_in, new_retry, old_in))
        return loop.results[0], loop.results[1], loop.results[2]

    # -- structure -----------------------------------------------------

    def lower_ops(self, b: LoweringBuilder, ops: Sequence[Operation]) -> None:
        for op in ops:
            if isinstance(op, InvokeOp):
                aggr = op.aggregation.data if op.aggregation else None
                result = self.invoke(b, op.callee.string_value(), op.args, aggr)
                if op.result is not None:
                    assert result is not None
                    self.mapping[op.result] = result
            elif isinstance(op, IterateOp):
                self.iterate(b, op)  # results mapped; no read-back inside
            elif isinstance(op, PipeOp):
                self.pipe(b, op)
            elif not isinstance(op, YieldOp):
                clone = op.clone(value_mapper=self.mapping)
                b.insert(clone)
                for old, new in zip(op.results, clone.results, strict=True):
                    self.mapping[old] = new

    def _in_size(self, b: LoweringBuilder) -> SSAValue:
        """The size of `in` (read once after each barrier that changes it)."""
        if self.state.size is None:
            in_ = self.state.worklists[0]
            self.state.size = _rt_value(b, "irgl_ctl_size", [in_])
        return self.state.size

    def _has_work(self, b: LoweringBuilder) -> SSAValue:
        return _positive(b, self._in_size(b))

    def _boundary(self, b: LoweringBuilder) -> None:
        """Read what loop-carried state needs before a loop boundary."""
        if self.state.worklists:
            self._in_size(b)

    def iterate(
        self,
        b: LoweringBuilder,
        op: IterateOp,
        candidates: Sequence[SSAValue] = (),
    ) -> tuple[list[SSAValue], dict[int, SSAValue]]:
        """The Iterate as an `scf.while`; its results, and with `candidates`
        (see `_memref_candidates`) the i32 index into them of each carried
        memref slot's final value, by slot."""
        name = op.callee.string_value()
        kernel = self.plan.kernels[name]
        uses_worklist = _launch(kernel).worklist is not None
        positions = op.carried_positions
        tracked = [
            j
            for j, p in enumerate(positions)
            if candidates and isinstance(op.args[p].type, MemRefType)
        ]
        inits = [self.mapping.get(op.args[p], op.args[p]) for p in positions]
        inits += [
            b.const(candidates.index(op.args[positions[j]]), i32) for j in tracked
        ]
        carried_types = [v.type for v in inits]
        first = self._has_work(b) if uses_worklist else _boolean(b, True)
        self._boundary(b)
        state_types = self.state.types()
        with_wls = bool(self.state.worklists)
        before = Block(arg_types=[i1, *carried_types, *state_types])
        before.add_op(scf.ConditionOp(before.args[0], *before.args[1:]))
        after = Block(arg_types=[*carried_types, *state_types])
        loop = scf.WhileOp(
            [first, *inits, *self.state.values()],
            [*carried_types, *state_types],
            [before],
            [after],
        )
        b.insert(loop)
        body = b.nested(InsertPoint.at_end(after))
        ncarried = len(carried_types)
        self.state = _State.of(after.args[ncarried:], with_wls)
        outs = self._round(
            body,
            op,
            list(after.args[:ncarried]),
            lambda at, carried: self._iterate_round(
                at, op, carried, tracked, candidates
            ),
        )
        body.insert(scf.YieldOp(*outs))
        self.state = _State.of(loop.results[ncarried:], with_wls)
        nvalues = len(positions)
        results: list[SSAValue] = list(loop.results[:nvalues])
        for old, new in zip(op.results_, results, strict=True):
            self.mapping[old] = new
        identities: dict[int, SSAValue] = {
            j: loop.results[nvalues + i] for i, j in enumerate(tracked)
        }
        return results, identities

    def _iterate_round(
        self,
        body: LoweringBuilder,
        op: IterateOp,
        carried: list[SSAValue],
        tracked: Sequence[int] = (),
        candidates: Sequence[SSAValue] = (),
    ) -> tuple[SSAValue, list[SSAValue]]:
        """One round of an Iterate: the invocation and the body; returns the
        loop condition and the next carried values (after the Iterate's own,
        the i32 names of its `tracked` memref slots, see `iterate`)."""
        name = op.callee.string_value()
        uses_worklist = _launch(self.plan.kernels[name]).worklist is not None
        args = list(op.args)
        nvalues = len(op.carried_positions)
        values_in, names_in = carried[:nvalues], carried[nvalues:]
        for position, value in zip(op.carried_positions, values_in, strict=True):
            args[position] = value
        for old, new in zip(op.body.block.args, values_in, strict=True):
            self.mapping[old] = new
        aggr = op.aggregation.data if op.aggregation else None
        result = self.invoke(body, name, args, aggr)
        terminator = op.body.block.last_op
        assert isinstance(terminator, YieldOp)
        self.lower_ops(body, [o for o in op.body.block.ops if o is not terminator])
        conditions: list[SSAValue] = []
        if uses_worklist:
            conditions.append(self._has_work(body))
        if op.term_cond is not None and result is not None:
            value = result
            if op.term_cond.data == TermCond.UNTIL:
                value = body.op(arith.XOrIOp(result, _boolean(body, True)))
            conditions.append(value)
        condition = conditions[0] if conditions else _boolean(body, True)
        for other in conditions[1:]:
            condition = body.op(arith.AndIOp(condition, other))
        if op.extra is not None and terminator.extra is not None:
            combine = arith.AndIOp if op.extra.data == ExtraCond.AND else arith.OrIOp
            extra = self.mapping.get(terminator.extra, terminator.extra)
            condition = body.op(combine(condition, extra))
        values = [self.mapping.get(v, v) for v in terminator.values]
        block_args: list[SSAValue] = list(op.body.block.args)
        for j in tracked:
            source = terminator.values[j]
            if source in block_args:
                k = block_args.index(source)
                values.append(names_in[tracked.index(k)])
            else:
                values.append(body.const(candidates.index(source), i32))
        self._boundary(body)
        return condition, values

    def pipe(self, b: LoweringBuilder, op: PipeOp) -> None:
        ops = [o for o in op.body.block.ops if not isinstance(o, YieldOp)]
        if op.once is not None:
            self.lower_ops(b, ops)
            return
        with_wls = bool(self.state.worklists)
        self._boundary(b)
        state_types = self.state.types()
        before = Block(arg_types=[i1, *state_types])
        before.add_op(scf.ConditionOp(before.args[0], *before.args[1:]))
        after = Block(arg_types=state_types)
        loop = scf.WhileOp(
            [_boolean(b, True), *self.state.values()], state_types, [before], [after]
        )
        b.insert(loop)
        body = b.nested(InsertPoint.at_end(after))
        self.state = _State.of(after.args, with_wls)
        outs = self._round(body, op, [], lambda at, _: self._pipe_round(at, ops))
        body.insert(scf.YieldOp(*outs))
        self.state = _State.of(loop.results, with_wls)

    def _pipe_round(
        self, body: LoweringBuilder, ops: Sequence[Operation]
    ) -> tuple[SSAValue, list[SSAValue]]:
        """One round of a looping Pipe; it goes on while `in` has work."""
        self.lower_ops(body, ops)
        if not self.state.worklists:
            return _boolean(body, False), []
        return self._has_work(body), []

    # -- small-worklist mode ---------------------------------------------

    def _round(
        self,
        b: LoweringBuilder,
        loop: IterateOp | PipeOp,
        carried: list[SSAValue],
        build: _Round,
    ) -> list[SSAValue]:
        """One round of `loop` at `b`, or, where `loop` has the small-worklist
        mode, the switch between a grid round and block 0's rounds; returns
        what the loop's after region yields (condition, carried values,
        state)."""
        small = self.small
        if small is None or self.block_mode or loop not in small.loops:
            condition, values = build(b, carried)
            return [condition, *values, *self.state.values()]
        entry = self.state
        assert entry.size is not None, "the loop carries the size of in"
        threshold = b.index(small.threshold)
        fits = b.op(arith.CmpiOp(entry.size, threshold, "sle"))
        if small.limit_us > 0:
            allowed = _rt_value(b, "irgl_ctl_small_allowed", [self.status])
            fits = b.op(arith.AndIOp(fits, allowed))
        types = [i1, *(v.type for v in carried), *entry.types()]
        switch = scf.IfOp(fits, types, Region(Block()), Region(Block()))
        b.insert(switch)

        # grid mode: one round of the whole grid
        grid = b.nested(InsertPoint.at_end(switch.false_region.block))
        self.state = _State.of(entry.values(), True)
        condition, values = build(grid, carried)
        grid.insert(scf.YieldOp(condition, *values, *self.state.values()))

        # small mode: once every block is done with the last grid step (the
        # size of in, cell values: block 0's second step would reset them),
        # block 0 runs rounds while every other block waits at the grid
        # barrier; then every block loads the state block 0 left (the next
        # entry's barrier keeps the next exit from overwriting it too early)
        alone = b.nested(InsertPoint.at_end(switch.true_region.block))
        self.state = _State.of(entry.values(), True)
        _rt(alone, "irgl_grid_sync", [])
        zero = alone.index(0)
        is_first = alone.op(arith.CmpiOp(small.block, zero, "eq"))
        only = scf.IfOp(is_first, [], Region(Block()))
        alone.insert(only)
        first = alone.nested(InsertPoint.at_end(only.true_region.block))
        small.mailbox.post(first, self._block_rounds(first, carried, build))
        first.insert(scf.YieldOp())
        _rt(alone, "irgl_grid_sync", [])
        alone.insert(scf.YieldOp(*small.mailbox.fetch(alone, types)))

        results: list[SSAValue] = list(switch.results)
        self.state = _State.of(results[1 + len(carried) :], True)
        return results

    def _block_rounds(
        self, b: LoweringBuilder, carried: list[SSAValue], build: _Round
    ) -> list[SSAValue]:
        """Block 0's rounds: do { round } while (condition and in holds at
        most `threshold` items); returns the condition, the carried values
        and the state after the last round."""
        assert self.small is not None
        self.block_mode = True
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
        self.state = _State.of(before.args[ncarried:], True)
        limit_us = self.small.limit_us
        start = _rt_value(body, "irgl_ctl_clock", []) if limit_us > 0 else None
        condition, values = build(body, list(before.args[:ncarried]))
        size = self.state.size
        assert size is not None
        fits = body.op(arith.CmpiOp(size, body.index(self.small.threshold), "sle"))
        if start is not None:
            limit = body.const(1000 * limit_us, i64)
            quick = _rt_value(body, "irgl_ctl_small_quick", [start, limit, self.status])
            fits = body.op(arith.AndIOp(fits, quick))
        stay = body.op(arith.AndIOp(condition, fits))
        body.insert(scf.ConditionOp(stay, condition, *values, *self.state.values()))
        after.add_op(scf.YieldOp(*after.args[1:]))
        self.block_mode = False
        return list(loop.results)


class _Outliner:
    """Outlines the Iterate/Pipe ops of one module."""

    def __init__(
        self,
        module: ModuleOp,
        remarks: TextIO | None,
        size_arg: bool,
        small_worklist: int = 0,
        control_block: int = 0,
        control_resident: int = 0,
        small_worklist_us: int = 0,
    ):
        self.module = module
        self.small_worklist_us = small_worklist_us
        self.size_arg = size_arg
        self.control_block = control_block
        self.control_resident = control_resident
        self.sized: set[str] = set()
        self.small_worklist = small_worklist
        self.gridded: set[str] = set()
        """Kernels whose device body takes the calling block and the number
        of blocks (those block 0 alone can run)."""
        self.container = kernel_module(module)
        self.kernels = _kernels(module)
        self.functions = {
            op.sym_name.data: op
            for op in self.container.body.block.ops
            if isinstance(op, func.FuncOp)
        }
        self.single_block: dict[str, str | None] = {}
        """Why block 0 alone cannot run a kernel (None: it can)."""
        self.remarks = remarks
        self.retry_backoff = False
        """Keep Pipes with retry re-launches on the host (OutlineIterations
        option `retry_backoff`)."""
        self.names = {
            op.sym_name.data
            for table in (module, self.container)
            for op in table.regions[0].block.ops
            if isinstance(op, func.FuncOp | gpu.FuncOp)
        }
        self.bodies: dict[str, str] = {}

    def _resident_threads(self, plan: _Plan) -> int:
        """Threads per SM the control kernel's launch bounds ask for: the
        `control_resident` option; else, when a kernel it runs declares
        `launch_bounds(max_threads, min_blocks)`, min_blocks blocks of the
        control block size (the largest min_blocks: every kernel keeps at
        least as many of its blocks per SM as it asks for, and the register
        budget a thread gets is the one those bounds give a plain launch);
        else RESIDENT_THREADS with worklists and RESIDENT_THREADS_TOPOLOGY
        without. At most SM_THREADS."""
        if self.control_resident > 0:
            return self.control_resident
        if plan.min_blocks > 0:
            return min(plan.min_blocks * plan.block_size, SM_THREADS)
        return RESIDENT_THREADS if plan.uses_worklist else RESIDENT_THREADS_TOPOLOGY

    def remark(self, op: Operation, where: str, text: str) -> None:
        if self.remarks is None:
            return
        loc = op.location
        at = (
            f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
            if isinstance(loc, FileLineColLoc)
            else ""
        )
        callee = f" @{op.callee.string_value()}" if isinstance(op, IterateOp) else ""
        print(f"remark: {at}{op.name}{callee} in @{where}: {text}", file=self.remarks)

    def run(self) -> None:
        for function in list(self.module.body.block.ops):
            if isinstance(function, func.FuncOp) and function.body.blocks:
                name = function.sym_name.data
                for op in list(_outermost(function.body)):
                    self.outline(op, name)

    def outline(self, op: IterateOp | PipeOp, where: str) -> None:
        try:
            plan = _plan(op, self.kernels, self.control_block)
            if self.retry_backoff and any(
                _launch(k).retries for k in plan.kernels.values()
            ):
                # measured on an H100 (color, rmat:16): the outlined retry
                # rounds with the blocked mapping faulted, while host
                # re-launches with backoff took 1.9 s against 3.3 s outlined
                # without it; backoff's shrinking grid needs the host loop
                raise _NotOutlinable(
                    "retry backoff re-launches its retry rounds on a shrinking "
                    "grid, which needs the host loop"
                )
            if isinstance(op, IterateOp):
                _read_back_check(op)
        except _NotOutlinable as why:
            self.remark(op, where, f"not outlined: {why}")
            for inner in op.body.walk():
                if isinstance(inner, IterateOp | PipeOp):
                    self.remark(
                        inner,
                        where,
                        f"not outlined: its enclosing {op.name} stays on the host",
                    )
            return
        nested = [o for o in op.body.walk() if isinstance(o, IterateOp | PipeOp)]
        control = _unique(self.names, f"{where.rstrip('_')}_control")
        small = self._small_loops(op, plan)
        self._build(op, plan, control, [loop for loop, why in small if why is None])
        self.remark(
            op,
            where,
            f"outlined into control kernel @{control} (block size {plan.block_size})",
        )
        for inner in nested:
            self.remark(inner, where, f"outlined inside control kernel @{control}")
        for loop, why in small:
            if why is None:
                text = (
                    "small-worklist mode (block 0 alone while in holds at "
                    f"most {self.small_worklist} items)"
                )
            else:
                text = f"no small-worklist mode: {why}"
            self.remark(loop, where, text)

    def _small_loops(
        self, op: IterateOp | PipeOp, plan: _Plan
    ) -> list[tuple[IterateOp | PipeOp, str | None]]:
        """Each loop of `op` with why it gets no small-worklist mode (None
        when it gets it); nothing when the mode is off."""
        if self.small_worklist <= 0:
            return []
        for name, kernel in plan.kernels.items():
            if name not in self.single_block:
                self.single_block[name] = _single_block_reason(
                    name, kernel, self.functions
                )
        return [
            (loop, _small_loop_reason(loop, self.single_block)) for loop in _loops(op)
        ]

    def _body_function(self, name: str, kernel: gpu.FuncOp) -> str:
        if name not in self.bodies:
            fname = _unique(self.names, f"{name.rstrip('_')}_device")
            in_size = self.size_arg and _reads_in_size(kernel)
            if in_size:
                self.sized.add(name)
            grid = (
                self.small_worklist > 0
                and name in self.single_block
                and self.single_block[name] is None
            )
            if grid:
                self.gridded.add(name)
            inputs = list(kernel.function_type.inputs.data)
            extra = [IndexType()] * (int(in_size) + 2 * int(grid))
            decl = func.FuncOp.external(fname, [*inputs, *extra], [])
            DeviceBodyAttr(name, in_size=in_size, grid=grid).attach(decl)
            self.container.body.block.add_op(decl)
            self.bodies[name] = fname
        return self.bodies[name]

    def _small_mode(
        self,
        device: LoweringBuilder,
        plan: _Plan,
        small_loops: Sequence[IterateOp | PipeOp],
        mailbox: dict[Attribute, SSAValue],
    ) -> tuple[tuple[SSAValue, SSAValue] | None, _SmallMode | None]:
        """The launch geometry the gridded device bodies take (read at the
        top of the control kernel) and the small-worklist mode, if any."""
        if not any(k in self.gridded for k in plan.kernels) and not small_loops:
            return None, None
        x = gpu.DimensionAttr(gpu.DimensionEnum.X)
        block = device.op(gpu.BlockIdOp(x))
        blocks = device.op(gpu.GridDimOp(x))
        if not small_loops:
            return (block, blocks), None
        mode = _SmallMode(
            self.small_worklist,
            set(small_loops),
            _Mailbox(mailbox),
            block,
            self.small_worklist_us,
        )
        return (block, blocks), mode

    def _build(
        self,
        op: IterateOp | PipeOp,
        plan: _Plan,
        name: str,
        small_loops: Sequence[IterateOp | PipeOp] = (),
    ) -> None:
        for kname, kernel in plan.kernels.items():
            _launch(kernel).pinned_to(plan.block_size).attach(kernel)
            self._body_function(kname, kernel)
        host = LoweringBuilder(InsertPoint.before(op), table=self.module)
        after = LoweringBuilder(InsertPoint.after(op), table=self.module)
        captured = _captured(op)

        # host: pipe context, spare worklist, cells, result buffers, status
        worklists: list[SSAValue] = []
        pipe = spare = None
        if plan.uses_worklist:
            pipe, capacity = open_pipe(host, op, lambda: _graph_argument(op))
            for which in ("irgl_pipe_in", "irgl_pipe_out", "irgl_pipe_retry"):
                worklists.append(_rt_value(host, which, [pipe]))
            if plan.uses_retry:
                spare = _rt_value(host, "irgl_wl_create", [capacity])
                worklists.append(spare)
            else:
                # nothing pushes to retry: its worklist serves as the spare
                worklists.append(worklists[2])
        host_cells = [
            _rt_value(
                host,
                "irgl_cell_create_slots",
                [_boolean(host, aggr == Aggregation.ANY)],
            )
            for _, aggr in plan.cells
        ]
        # per used result: (result, allocation, buffer); a memref result's
        # buffer holds its index into `candidates`
        outputs: list[tuple[SSAValue, SSAValue, SSAValue]] = []
        candidates: list[SSAValue] = []
        if isinstance(op, IterateOp):
            if any(r.uses and isinstance(r.type, MemRefType) for r in op.results_):
                candidates = _memref_candidates(op)
            for result in op.results_:
                if result.uses:
                    element = (
                        i32 if isinstance(result.type, MemRefType) else result.type
                    )
                    outputs.append((result, *_device_array(host, element, 1)))
        # status[0]: a worklist overflowed; status[1]: the small-worklist
        # mode's time limit was hit (only with a limit)
        timed = bool(small_loops) and self.small_worklist_us > 0
        status_alloc, status = _device_array(host, i32, 2 if timed else 1)
        mail_sizes = _Mailbox.sizes(small_loops)
        mail = [_device_array(host, t, n) for t, n in mail_sizes.items()]

        # the control kernel
        operands = [
            *captured,
            *worklists,
            *host_cells,
            *(buffer for _, _, buffer in outputs),
            status,
            *(buffer for _, buffer in mail),
        ]
        block = Block(arg_types=[v.type for v in operands])
        kernel = gpu.FuncOp(
            name, ([v.type for v in operands], []), Region(block), kernel=True
        )
        LaunchAttr(
            plan.block_size,
            launch_bounds=(
                plan.block_size,
                max(1, self._resident_threads(plan) // plan.block_size),
            ),
            grid_sync=True,
            control=True,
        ).attach(kernel)
        self.container.body.block.add_op(kernel)
        args = list(block.args)
        ncap, nwl, ncell = len(captured), len(worklists), len(host_cells)
        mapping: dict[SSAValue, SSAValue] = dict(
            zip(captured, args[:ncap], strict=True)
        )
        device_wls = args[ncap : ncap + nwl]
        device_cells: dict[tuple[str, Aggregation], SSAValue] = dict(
            zip(plan.cells, args[ncap + nwl : ncap + nwl + ncell], strict=True)
        )
        nmail = len(mail)
        buffers = args[ncap + nwl + ncell : len(args) - nmail - 1]
        status_arg = args[len(args) - nmail - 1]
        device = LoweringBuilder(InsertPoint.at_end(block), table=self.container)
        state = _State(list(device_wls), None, device.index(0))
        mailbox: dict[Attribute, SSAValue] = dict(
            zip(mail_sizes, args[len(args) - nmail :], strict=True)
        )
        geometry, small = self._small_mode(device, plan, small_loops, mailbox)
        lowering = _DeviceLowering(
            plan,
            self.bodies,
            mapping,
            device_cells,
            status_arg,
            state,
            self.sized,
            self.gridded,
            geometry,
            small,
        )
        if isinstance(op, IterateOp):
            results, identities = lowering.iterate(device, op, candidates)
            for slot, identity in identities.items():
                results[slot] = identity
            if buffers:
                first = _rt_value(device, "irgl_is_first_thread", [])
                store = scf.IfOp(first, [], Region(Block()))
                device.insert(store)
                inner = device.nested(InsertPoint.at_end(store.true_region.block))
                zero = inner.index(0)
                by_result: dict[SSAValue, SSAValue] = dict(
                    zip(op.results_, results, strict=True)
                )
                for (result, _, _), buffer in zip(outputs, buffers, strict=True):
                    inner.insert(memref.StoreOp.get(by_result[result], buffer, [zero]))
                inner.insert(scf.YieldOp())
        else:
            lowering.pipe(device, op)
        device.insert(gpu.ReturnOp([]))

        # host: one cooperative launch, one synchronization
        symbol = SymbolRefAttr(KERNEL_MODULE, [name])
        threads = host.index(plan.block_size)
        grid = host.op(GridSizeOp(symbol, threads, resident=True))
        one = host.index(1)
        host.insert(
            gpu.LaunchFuncOp(
                symbol, [grid, one, one], [threads, one, one], None, operands
            )
        )
        _rt(host, "irgl_outline_finish", [status])
        for result, alloc, buffer in outputs:
            if isinstance(result.type, MemRefType):
                value = _select_candidate(host, candidates, buffer)
            else:
                value = host.call_value(_device_read(result.type), [buffer])
            result.replace_all_uses_with(value)
            after.insert(memref.DeallocOp.get(alloc))
        after.insert(memref.DeallocOp.get(status_alloc))
        for alloc, _ in mail:
            after.insert(memref.DeallocOp.get(alloc))
        for cell in host_cells:
            _rt(after, "irgl_cell_destroy", [cell])
        if spare is not None:
            _rt(after, "irgl_wl_destroy", [spare])
        if pipe is not None:
            _rt(after, "irgl_pipe_destroy", [pipe])
        Rewriter.erase_op(op, safe_erase=False)


def _device_array(
    b: LoweringBuilder, element: Attribute, size: int
) -> tuple[SSAValue, SSAValue]:
    """A device array of `size` elements: the allocation (to free) and its
    `memref<?xT>` view that the control kernel and the runtime take (a
    result or status buffer, the mailbox for type `element`)."""
    alloc = b.op(memref.AllocOp([], [], MemRefType(element, [size])))
    return alloc, b.op(memref.CastOp.get(alloc, dynamic_memref(element)))


def _reads_in_size(kernel: gpu.FuncOp) -> bool:
    """Does the (not yet lowered) kernel iterate over its `in` worklist?"""
    return _launch(kernel).worklist is not None and any(
        isinstance(op, LoopBase) and op.iterator.data == IteratorKind.WORKLIST
        for op in kernel.walk()
    )


def _graph_argument(op: Operation) -> SSAValue:
    function = op.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    if function is not None:
        for arg in function.body.block.args:
            if isinstance(arg.type, GraphType):
                return arg
    fail(
        op,
        f"'{op.name}' needs `capacity %n`: its host kernel has no "
        "!irgl.graph argument to size the worklists by",
    )


def _outermost(region: Region) -> Iterator[IterateOp | PipeOp]:
    for block in region.blocks:
        for op in block.ops:
            if isinstance(op, IterateOp | PipeOp):
                yield op
            else:
                for inner in op.regions:
                    yield from _outermost(inner)


@dataclass(frozen=True)
class OutlineIterations(ModulePass):
    """Turn every outermost Iterate/Pipe that holds a loop and can run on the
    device into one cooperative control kernel launched once (see the module
    docstring); the rest stay host loops."""

    name = "irgl-outline-iterations"

    remarks: bool = False
    """Print one line per Iterate/Pipe (stderr): outlined, or why not."""

    size_arg: bool = True
    """The control kernel reads the size of `in` once per block after each
    barrier and passes it to the device body of a worklist kernel as a last
    `index` argument (`#irgl_rt.device_body<@k, in_size>`), instead of every
    thread loading the worklist tail at the start of the body."""

    retry_backoff: bool = False
    """Retry backoff is on (convert-irgl-loops / -orchestration
    `retry_backoff`): an Iterate/Pipe whose kernel re-launches retry rounds
    keeps the host loop, whose re-launches shrink the grid."""

    small_worklist: int = SMALL_WORKLIST
    """Item threshold of the small-worklist mode (0: off): while `in` holds
    at most this many items at a round boundary, block 0 alone runs the
    rounds of a loop, with block barriers instead of grid barriers."""

    small_worklist_us: int = 0
    """Time limit of a small-worklist step in microseconds (0: none): a
    step of block 0 that takes longer ends the mode for the rest of the
    control kernel."""

    control_block: int = 0
    """Largest control block size to pick from the sizes the kernels admit
    (0: the largest they admit), a power of two from 32 to 1024."""

    control_resident: int = 0
    """Threads per SM the control kernel's launch bounds ask for (the
    minimum blocks per SM is this over the block size, at least 1; fewer
    leave the registers to the compiler). 0: the largest min_blocks an
    invoked kernel's launch_bounds declare times the block size, else 1024
    when it runs worklists and 2048 when it runs none."""

    def __post_init__(self) -> None:
        check_small_worklist_option(self.small_worklist, self.name)
        check_small_worklist_us_option(self.small_worklist_us, self.name)
        check_control_block_option(self.control_block, self.name)
        check_control_resident_option(self.control_resident, self.name)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(isinstance(o, IterateOp | PipeOp) for o in op.walk()):
            return
        outliner = _Outliner(
            op,
            sys.stderr if self.remarks else None,
            self.size_arg,
            self.small_worklist,
            self.control_block,
            self.control_resident,
            self.small_worklist_us,
        )
        outliner.retry_backoff = self.retry_backoff
        outliner.run()


def check_small_worklist_option(value: int, owner: str) -> None:
    """A `small_worklist` option is an item count (0: off); raise a
    ValueError naming `owner` for a negative one."""
    if value < 0:
        raise ValueError(
            f"{owner}: small_worklist must be an item count (0: off), got {value}"
        )


def check_small_worklist_us_option(value: int, owner: str) -> None:
    """A `small_worklist_us` option is a time in microseconds (0: no
    limit); raise a ValueError naming `owner` for a negative one."""
    if value < 0:
        raise ValueError(
            f"{owner}: small_worklist_us must be microseconds (0: no limit), "
            f"got {value}"
        )


@dataclass(frozen=True)
class OutlineKernelBodies(ModulePass):
    """Give the device functions declared by irgl-outline-iterations the
    lowered bodies of their kernels (run after the kernels are lowered).
    With `in_size` the body takes the size of `in` as a last argument and
    uses it where the kernel reads `irgl_wl_size(in)`."""

    name = "irgl-outline-kernel-bodies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = {
            k.sym_name.data: k
            for m in op.body.block.ops
            if isinstance(m, gpu.ModuleOp)
            for k in m.body.block.ops
            if isinstance(k, gpu.FuncOp)
        }
        for module in op.body.block.ops:
            if not isinstance(module, gpu.ModuleOp):
                continue
            for decl in list(module.body.block.ops):
                if not isinstance(decl, func.FuncOp):
                    continue
                body_of = DeviceBodyAttr.of(decl)
                if body_of is None:
                    continue
                kernel = kernels.get(body_of.kernel_name)
                if kernel is None:
                    fail(
                        decl,
                        f"@{decl.sym_name.data} is the body of "
                        f"@{body_of.kernel_name}, which is not a kernel",
                    )
                body = kernel.body.clone()
                for inner in list(body.walk()):
                    if isinstance(inner, gpu.ReturnOp):
                        Rewriter.replace_op(inner, func.ReturnOp())
                inputs = list(kernel.function_type.inputs.data)
                if body_of.in_size:
                    inputs.append(IndexType())
                    _size_from_argument(kernel, decl, body)
                if body_of.grid:
                    inputs += [IndexType(), IndexType()]
                    _grid_from_arguments(decl, body, module)
                if list(decl.function_type.inputs.data) != inputs:
                    extras = [
                        *(["the size of in"] if body_of.in_size else []),
                        *(
                            ["the block and the number of blocks"]
                            if body_of.grid
                            else []
                        ),
                    ]
                    fail(
                        decl,
                        f"@{decl.sym_name.data} must take the arguments of "
                        f"@{body_of.kernel_name}"
                        + (f" and {' and '.join(extras)} (index)" if extras else ""),
                    )
                function = func.FuncOp(
                    decl.sym_name.data, (inputs, []), body, visibility="private"
                )
                Rewriter.replace_op(decl, function)


def _size_from_argument(kernel: gpu.FuncOp, decl: func.FuncOp, body: Region) -> None:
    """Append an `index` argument to `body` (a clone of `kernel`'s) and use
    it instead of every `irgl_wl_size(in)` call."""
    first = _launch(kernel).worklist
    if first is None:
        fail(
            decl,
            f"@{decl.sym_name.data} takes the size of in, but "
            f"@{kernel.sym_name.data} has no worklist",
        )
    block = body.block
    size = block.insert_arg(IndexType(), len(block.args))
    wl_size = runtime_function("irgl_wl_size").name
    for use in list(block.args[first].uses):
        call = use.operation
        if isinstance(call, func.CallOp) and call.callee.string_value() == wl_size:
            Rewriter.replace_op(call, [], [size])


def _grid_from_arguments(decl: func.FuncOp, body: Region, module: gpu.ModuleOp) -> None:
    """Append two `index` arguments to `body` (the calling block and the
    number of blocks) and use them instead of `gpu.block_id x` and
    `gpu.grid_dim x`, so that the caller decides which grid the body maps
    its iterations over. Fails on code that would still see the launch's
    whole grid (irgl-outline-iterations only grids bodies without it)."""
    functions = {
        op.sym_name.data: op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op is not decl
    }
    why = next(
        (w for o in body.block.ops if (w := _needs_grid(o, functions, set()))),
        None,
    )
    if why is not None:
        fail(
            decl,
            f"@{decl.sym_name.data} runs in a small-worklist mode (one block) "
            f"but needs the whole grid: {why}",
        )
    block = body.block
    index = block.insert_arg(IndexType(), len(block.args))
    count = block.insert_arg(IndexType(), len(block.args))
    for op in list(body.walk()):
        if not isinstance(op, gpu.BlockIdOp | gpu.GridDimOp):
            continue
        if op.dimension.data != gpu.DimensionEnum.X:
            continue
        Rewriter.replace_op(op, [], [index if isinstance(op, gpu.BlockIdOp) else count])


def check_control_block_option(value: int, owner: str) -> None:
    """A `control_block` option is 0 (the largest admitted size) or a block
    size (a power of two from 32 to 1024); raise a ValueError naming
    `owner` otherwise."""
    if value != 0 and not (32 <= value <= 1024 and value & (value - 1) == 0):
        raise ValueError(
            f"{owner}: control_block must be 0 or a power of two from 32 to "
            f"1024, got {value}"
        )


def check_control_resident_option(value: int, owner: str) -> None:
    """A `control_resident` option is a thread count from 0 (by kind) to
    SM_THREADS (an SM's most); raise a ValueError naming `owner` otherwise."""
    if not 0 <= value <= SM_THREADS:
        raise ValueError(
            f"{owner}: control_resident must be a thread count from 0 to "
            f"{SM_THREADS}, got {value}"
        )
