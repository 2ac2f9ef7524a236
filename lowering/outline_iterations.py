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
min_blocks blocks of the control block size. An invoked
kernel already pinned to another size by another control kernel runs as a
copy pinned to this one's (`@<kernel>_b<size>`). An Iterate/Pipe stays a
host loop when the intersection is empty, when its body holds something
that cannot run on the device (C text, calls, memory operations), or when
it holds no loop. With `remarks` the pass
prints one line per Iterate/Pipe saying whether it was outlined, or why not.

Small-worklist mode (`small_worklist=N`, N > 0; time limit
`small_worklist_us`): while `in` holds at most N items at a round boundary,
block 0 alone runs the rounds of a loop that admits it, with block barriers
instead of grid barriers, and hands the loop's state to every block through
a device mailbox when it leaves the mode. With `remarks`, one line per loop
says whether it has the mode or why not.

The device functions are declared here (body-less, with the attribute
`#irgl_rt.device_body<@kernel>`) and given the kernel's fully lowered body
by `irgl-outline-kernel-bodies` at the end of `lower-irgl`. The control
kernel's `#irgl_rt.launch` has `control`; each kernel it runs has `pinned`.
Runtime functions come from the runtime library
(`irgl_dialect/runtime_library.py`), IR is built with `LoweringBuilder`.

This module drives the pass and builds the host side and the control
kernel's frame; the parts live beside it:

- `lowering/outline_plan.py`: which Iterates/Pipes are outlined (legality,
  the plan, the launch bounds) and the remarks;
- `lowering/outline_control.py`: the device form of orchestration (the
  control kernel's body);
- `lowering/outline_small_worklist.py`: the small-worklist mode;
- `lowering/outline_kernel_bodies.py`: irgl-outline-kernel-bodies, the
  device-function form of the kernels.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import Aggregation, GraphType
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import DeviceBodyAttr, GridSizeOp, LaunchAttr
from irgl_dialect.runtime_library import dynamic_memref
from lowering.builders import LoweringBuilder, unique_name
from lowering.outline_control import (
    ControlLowering,
    ControlState,
    boolean,
    rt_call,
    rt_value,
)
from lowering.outline_plan import (
    NotOutlinable,
    PinnedElsewhere,
    Plan,
    captured_values,
    check_control_block_option,
    check_control_resident_option,
    check_retry_drain_blocks_option,
    device_read,
    launch_of,
    lowered_kernels,
    memref_candidates,
    outermost,
    plan_outline,
    read_back_check,
    reads_in_size,
    remark,
    resident_threads,
)
from lowering.outline_small_worklist import (
    SMALL_WORKLIST,
    SMALL_WORKLIST_EDGES,
    Mailbox,
    SmallWorklistLowering,
    check_small_worklist_edges_option,
    check_small_worklist_option,
    check_small_worklist_us_option,
    drain_reason,
    retries_only_lost_exclusives,
    small_mode_of,
    small_mode_reasons,
)
from lowering.pipe_context import open_pipe
from lowering.runtime_calls import KERNEL_MODULE, fail, kernel_module


def _select_candidate(
    b: LoweringBuilder, candidates: Sequence[SSAValue], buffer: SSAValue
) -> SSAValue:
    """The candidate memref whose index the control kernel left in `buffer`."""
    index = b.call_value(device_read(i32), [buffer])
    value = candidates[0]
    for k, candidate in enumerate(candidates[1:], start=1):
        hit = b.op(arith.CmpiOp(index, b.const(k, i32), "eq"))
        value = b.op(arith.SelectOp(hit, candidate, value))
    return value


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
        small_worklist_merged: bool = False,
    ):
        self.module = module
        self.small_worklist_us = small_worklist_us
        self.small_worklist_merged = small_worklist_merged
        self.size_arg = size_arg
        self.control_block = control_block
        self.control_resident = control_resident
        self.sized: set[str] = set()
        self.small_worklist = small_worklist
        self.gridded: set[str] = set()
        """Kernels whose device body takes the calling block and the number
        of blocks (those block 0 alone can run)."""
        self.container = kernel_module(module)
        self.kernels = lowered_kernels(module)
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
        self.retry_drain = True
        """Block 0 drains the retry storms of the kernels that can run in one
        block but for their grid barriers (OutlineIterations option
        `retry_drain`)."""
        self.retry_merged = False
        """An invocation's first attempt and retry rounds from one call of
        its body (OutlineIterations option `retry_merged`)."""
        self.drained: set[str] = set()
        """Kernels whose retry storms block 0 drains."""
        self.lone_wins: set[str] = set()
        """Drained kernels that retry only their lost Exclusives."""
        self.retry_drain_lone = True
        """One-item drain windows of such kernels read no losers back
        (OutlineIterations option `retry_drain_lone`)."""
        self.retry_drain_solo = True
        """A drain runs streaks of one-item windows where its items contend
        (OutlineIterations option `retry_drain_solo`)."""
        self.retry_drain_blocks = 1
        """The blocks of a drain's team (OutlineIterations option
        `retry_drain_blocks`)."""
        self.small_worklist_edges = 0
        """Edge bound of the small-worklist mode per control-block thread
        (OutlineIterations option `small_worklist_edges`; 0: items only)."""
        self.conditional = False
        """Invocations inside an `scf.if` of an Iterate/Pipe body are
        outlined (OutlineIterations option `conditional`)."""
        self.names = {
            op.sym_name.data
            for table in (module, self.container)
            for op in table.regions[0].block.ops
            if isinstance(op, func.FuncOp | gpu.FuncOp)
        }
        self.bodies: dict[str, str] = {}
        self.copies: dict[tuple[str, int], str] = {}
        """Copies of pinned kernels for control kernels of another block
        size, by kernel and size."""

    def run(self) -> None:
        for function in list(self.module.body.block.ops):
            if isinstance(function, func.FuncOp) and function.body.blocks:
                name = function.sym_name.data
                for op in list(outermost(function.body)):
                    self.outline(op, name)

    def outline(self, op: IterateOp | PipeOp, where: str) -> None:
        try:
            plan = self._plan(op, where)
            if self.retry_backoff and any(
                launch_of(k).retries for k in plan.kernels.values()
            ):
                # measured on an H100 (color, rmat:16): the outlined retry
                # rounds with the blocked mapping faulted, while host
                # re-launches with backoff took 1.9 s against 3.3 s outlined
                # without it; backoff's shrinking grid needs the host loop
                raise NotOutlinable(
                    "retry backoff re-launches its retry rounds on a shrinking "
                    "grid, which needs the host loop"
                )
            if isinstance(op, IterateOp):
                read_back_check(op)
        except NotOutlinable as why:
            remark(self.remarks, op, where, f"not outlined: {why}")
            for inner in op.body.walk():
                if isinstance(inner, IterateOp | PipeOp):
                    remark(
                        self.remarks,
                        inner,
                        where,
                        f"not outlined: its enclosing {op.name} stays on the host",
                    )
            return
        nested = [o for o in op.body.walk() if isinstance(o, IterateOp | PipeOp)]
        control = unique_name(self.names, f"{where.rstrip('_')}_control")
        small = (
            small_mode_reasons(op, plan, self.single_block, self.functions)
            if self.small_worklist > 0
            else []
        )
        self._build(op, plan, control, [loop for loop, why in small if why is None])
        remark(
            self.remarks,
            op,
            where,
            f"outlined into control kernel @{control} (block size {plan.block_size})",
        )
        for inner in nested:
            remark(
                self.remarks, inner, where, f"outlined inside control kernel @{control}"
            )
        for kname in plan.kernels:
            if kname in self.drained:
                remark(
                    self.remarks,
                    op,
                    where,
                    f"@{kname}'s retry storms are drained by block 0 (retry_drain)"
                    + (
                        f" and a team of up to {self.retry_drain_blocks} blocks"
                        " (retry_drain_blocks)"
                        if self.retry_drain_blocks > 1
                        else ""
                    ),
                )
        for loop, why in small:
            if why is None:
                text = (
                    "small-worklist mode (block 0 alone while in holds at "
                    f"most {self.small_worklist} items"
                    + (
                        f" of at most {self.small_worklist_edges * plan.block_size}"
                        " edges where its kernels take a graph)"
                        if self.small_worklist_edges > 0
                        else ")"
                    )
                )
            else:
                text = f"no small-worklist mode: {why}"
            remark(self.remarks, loop, where, text)

    def _plan(self, op: IterateOp | PipeOp, where: str) -> Plan:
        """`plan_outline`, where a kernel another control kernel pinned to
        another block size is run as a copy pinned to this one's (one copy
        per kernel and size, named after both)."""
        try:
            return plan_outline(op, self.kernels, self.control_block, self.conditional)
        except PinnedElsewhere as pinned:
            size = pinned.plan.block_size
            for name in pinned.names:
                copy = self.copies.get((name, size))
                if copy is None:
                    kernel = self.kernels[name]
                    clone = kernel.clone()
                    copy = unique_name(self.names, f"{name.rstrip('_')}_b{size}")
                    clone.sym_name = StringAttr(copy)
                    launch_of(clone).pinned_to(size).attach(clone)
                    self.container.body.block.insert_op_after(clone, kernel)
                    self.kernels[copy] = clone
                    self.copies[(name, size)] = copy
                    remark(
                        self.remarks,
                        op,
                        where,
                        f"@{name} runs in a control kernel of block size "
                        f"{launch_of(kernel).block}: this one runs a copy, @{copy}",
                    )
                for inner in op.walk():
                    if (
                        isinstance(inner, InvokeOp | IterateOp)
                        and inner.callee.string_value() == name
                    ):
                        inner.callee = SymbolRefAttr(copy)
            return plan_outline(op, self.kernels, self.control_block, self.conditional)

    def _body_function(self, name: str, kernel: gpu.FuncOp) -> str:
        if name not in self.bodies:
            fname = unique_name(self.names, f"{name.rstrip('_')}_device")
            in_size = self.size_arg and reads_in_size(kernel)
            if in_size:
                self.sized.add(name)
            grid = (
                self.small_worklist > 0
                and name in self.single_block
                and self.single_block[name] is None
            )
            if (
                in_size
                and self.retry_drain
                and drain_reason(kernel, self.functions) is None
            ):
                self.drained.add(name)
                if self.retry_drain_lone and retries_only_lost_exclusives(kernel):
                    self.lone_wins.add(name)
                grid = True
            if grid:
                self.gridded.add(name)
            inputs = list(kernel.function_type.inputs.data)
            extra = [IndexType()] * (int(in_size) + 2 * int(grid))
            decl = func.FuncOp.external(fname, [*inputs, *extra], [])
            DeviceBodyAttr(name, in_size=in_size, grid=grid).attach(decl)
            self.container.body.block.add_op(decl)
            self.bodies[name] = fname
        return self.bodies[name]

    def _build(
        self,
        op: IterateOp | PipeOp,
        plan: Plan,
        name: str,
        small_loops: Sequence[IterateOp | PipeOp] = (),
    ) -> None:
        for kname, kernel in plan.kernels.items():
            launch_of(kernel).pinned_to(plan.block_size).attach(kernel)
            self._body_function(kname, kernel)
        host = LoweringBuilder(InsertPoint.before(op), table=self.module)
        after = LoweringBuilder(InsertPoint.after(op), table=self.module)
        captured = captured_values(op)

        # host: pipe context, spare worklist, cells, result buffers, status
        worklists: list[SSAValue] = []
        pipe = spare = None
        if plan.uses_worklist:
            pipe, capacity = open_pipe(host, op, lambda: _graph_argument(op))
            for which in ("irgl_pipe_in", "irgl_pipe_out", "irgl_pipe_retry"):
                worklists.append(rt_value(host, which, [pipe]))
            if plan.uses_retry:
                spare = rt_value(host, "irgl_wl_create", [capacity])
                worklists.append(spare)
            else:
                # nothing pushes to retry: its worklist serves as the spare
                worklists.append(worklists[2])
        host_cells = [
            rt_value(
                host,
                "irgl_cell_create_slots",
                [boolean(host, aggr == Aggregation.ANY)],
            )
            for _, aggr in plan.cells
        ]
        # per used result: (result, allocation, buffer); a memref result's
        # buffer holds its index into `candidates`
        outputs: list[tuple[SSAValue, SSAValue, SSAValue]] = []
        candidates: list[SSAValue] = []
        if isinstance(op, IterateOp):
            if any(r.uses and isinstance(r.type, MemRefType) for r in op.results_):
                candidates = memref_candidates(op)
            for result in op.results_:
                if result.uses:
                    element = (
                        i32 if isinstance(result.type, MemRefType) else result.type
                    )
                    outputs.append((result, *_device_array(host, element, 1)))
        # status[0]: a worklist overflowed; status[1]: the small-worklist
        # mode's time limit was hit (only with a limit). One word is the
        # runtime's mapped host word (read without a copy); two are device
        # memory, since every block reads status[1].
        timed = bool(small_loops) and self.small_worklist_us > 0
        if timed:
            status_alloc, status = _device_array(host, i32, 2)
        else:
            status_alloc, status = None, rt_value(host, "irgl_outline_status", [])
        mail_sizes = Mailbox.sizes(small_loops)
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
                max(
                    1, resident_threads(plan, self.control_resident) // plan.block_size
                ),
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
        state = ControlState(list(device_wls), None, device.index(0))
        mailbox: dict[Attribute, SSAValue] = dict(
            zip(mail_sizes, args[len(args) - nmail :], strict=True)
        )
        geometry, small = small_mode_of(
            device,
            plan,
            self.gridded,
            small_loops,
            mailbox,
            self.small_worklist,
            self.small_worklist_us,
            self.small_worklist_merged,
            self.small_worklist_edges,
        )
        common = (
            plan,
            self.bodies,
            mapping,
            device_cells,
            status_arg,
            state,
            self.sized,
            self.gridded,
            geometry,
        )
        lowering = (
            ControlLowering(*common)
            if small is None
            else SmallWorklistLowering(*common, small)
        )
        lowering.drained = self.drained
        lowering.lone_wins = self.lone_wins
        lowering.drain_solo = self.retry_drain_solo
        lowering.drain_blocks = self.retry_drain_blocks
        lowering.retry_merged = self.retry_merged
        if isinstance(op, IterateOp):
            results, identities = lowering.iterate(device, op, candidates)
            for slot, identity in identities.items():
                results[slot] = identity
            if buffers:
                first = rt_value(device, "irgl_is_first_thread", [])
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
        rt_call(host, "irgl_outline_finish", [status])
        for result, alloc, buffer in outputs:
            if isinstance(result.type, MemRefType):
                value = _select_candidate(host, candidates, buffer)
            else:
                value = host.call_value(device_read(result.type), [buffer])
            result.replace_all_uses_with(value)
            after.insert(memref.DeallocOp.get(alloc))
        if status_alloc is not None:
            after.insert(memref.DeallocOp.get(status_alloc))
        else:
            rt_call(after, "irgl_outline_status_release", [status])
        for alloc, _ in mail:
            after.insert(memref.DeallocOp.get(alloc))
        for cell in host_cells:
            rt_call(after, "irgl_cell_destroy", [cell])
        if spare is not None:
            rt_call(after, "irgl_wl_destroy", [spare])
        if pipe is not None:
            rt_call(after, "irgl_pipe_destroy", [pipe])
        Rewriter.erase_op(op, safe_erase=False)


def _device_array(
    b: LoweringBuilder, element: Attribute, size: int
) -> tuple[SSAValue, SSAValue]:
    """A device array of `size` elements: the allocation (to free) and its
    `memref<?xT>` view that the control kernel and the runtime take (a
    result or status buffer, the mailbox for type `element`)."""
    alloc = b.op(memref.AllocOp([], [], MemRefType(element, [size])))
    return alloc, b.op(memref.CastOp.get(alloc, dynamic_memref(element)))


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

    retry_merged: bool = True
    """An invocation that retries runs its first attempt and its retry rounds
    from one call of its body (do { run; read the retry list's size } while
    it holds items) instead of a call before the retry loop and one in it:
    its device body is inlined once (DMR's refinement body was two copies,
    a quarter of its nvcc time)."""

    retry_drain: bool = True
    """A kernel that retries its lost conflicts (`irgl.retry` without
    merge), reads its worklist's size and needs the whole grid only for its
    barriers (Exclusive, SyncRunningThreads) takes its grid: once at most
    one in 16 items attempted in a retry round won (and at most 256), block
    0 alone attempts the retried items in windows of twice the last
    window's winners (block barriers between the Exclusive's phases), so
    that contenders for one element (a hub's neighbourhood) cost a window
    each instead of a grid round each with every contender attempting
    again."""

    retry_drain_solo: bool = True
    """A drain whose window of several items let at most one win runs the
    next items alone, one window of one item each (its only contender
    claims nothing: convert-irgl-exclusive `alone_wins`), in streaks that
    double while the items keep contending (a hub's neighbours), until a
    window of two lets both win; false: every window holds twice the last
    one's winners."""

    retry_drain_lone: bool = True
    """With `retry_drain_solo`, a drained kernel whose only Retry is in an
    Exclusive's Else reads no losers back after a one-item window (its lone
    contender won: `irgl_ctl_drain_losers`); false: every window reads the
    retry list's size."""

    retry_drain_blocks: int = 1
    """The first N blocks of the grid (at most the grid's) take a drain's
    windows as a team, with team barriers between the Exclusive's phases
    (with `-DIRGL_DRAIN_TEAM_ITEMS=M`, while windows hold at least M items;
    block 0 alone from the first smaller one). 1: block 0 alone. One
    block's SM limits the claims' memory requests of a window of many
    contenders (colour on RMAT)."""

    small_worklist: int = SMALL_WORKLIST
    """Item threshold of the small-worklist mode (0: off): while `in` holds
    at most this many items at a round boundary, block 0 alone runs the
    rounds of a loop, with block barriers instead of grid barriers."""

    small_worklist_us: int = 0
    """Time limit of a small-worklist step in microseconds (0: none): a
    step of block 0 that takes longer ends the mode for the rest of the
    control kernel."""

    small_worklist_edges: int = SMALL_WORKLIST_EDGES
    """Edge bound of the small-worklist mode, per thread of the control
    block (0: items only): where a loop's kernels take a graph, block 0
    alone runs a round only while the out-degrees of `in`'s items add up to
    at most this times the control block size (`irgl_ctl_small_fits`)."""

    small_worklist_merged: bool = False
    """Build a small-worklist loop's round once, for the grid and for block
    0 alone (geometry and barriers chosen at run time), instead of a grid
    round and a copy for block 0: each device body is inlined once (BFS's
    two-hop body is about a third of its device code)."""

    control_block: int = 0
    """Largest control block size to pick from the sizes the kernels admit
    (0: the largest they admit), a power of two from 32 to 1024."""

    conditional: bool = True
    """An `scf.if` directly in an Iterate or Pipe body may invoke kernels
    (the default): the control kernel takes the branch every thread
    computes alike, the steps' state carried out of it; false: such an
    Iterate/Pipe stays a host loop."""

    control_resident: int = 0
    """Threads per SM the control kernel's launch bounds ask for (the
    minimum blocks per SM is this over the block size, at least 1; fewer
    leave the registers to the compiler). 0: the largest min_blocks an
    invoked kernel's launch_bounds declare times the block size, else 1024
    when it runs worklists and 2048 when it runs none."""

    def __post_init__(self) -> None:
        check_small_worklist_option(self.small_worklist, self.name)
        check_small_worklist_us_option(self.small_worklist_us, self.name)
        check_small_worklist_edges_option(self.small_worklist_edges, self.name)
        check_control_block_option(self.control_block, self.name)
        check_control_resident_option(self.control_resident, self.name)
        check_retry_drain_blocks_option(self.retry_drain_blocks, self.name)

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
            self.small_worklist_merged,
        )
        outliner.retry_backoff = self.retry_backoff
        outliner.retry_drain = self.retry_drain
        outliner.retry_drain_solo = self.retry_drain_solo
        outliner.retry_drain_lone = self.retry_drain_lone
        outliner.retry_drain_blocks = self.retry_drain_blocks
        outliner.retry_merged = self.retry_merged
        outliner.small_worklist_edges = self.small_worklist_edges
        outliner.conditional = self.conditional
        outliner.run()
