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
kernel's launch bounds ask for RESIDENT_THREADS threads per SM. An
Iterate/Pipe stays a host loop when the intersection is empty, when its
body holds something that cannot run on the device (C text, calls, memory
operations), when an invoked kernel is pinned to another size by another
control kernel, or when it holds no loop. With `remarks` the pass
prints one line per Iterate/Pipe saying whether it was outlined, or why not.

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
    RuntimeFunction,
    dynamic_memref,
    overload,
    runtime_function,
)
from lowering.block_size import (
    BlockConstraint,
    constraint_of,
    control_block_size,
)
from lowering.builders import LoweringBuilder
from lowering.pipe_context import open_pipe
from lowering.runtime_calls import KERNEL_MODULE, fail, kernel_module

#: Threads per SM the control kernel's launch bounds ask room for (half of
#: what sm_70..sm_90 can hold): at most 64 registers a thread. Measured on an
#: H100 (BFS, MIS, MST): fewer resident warps make each step (grid barrier,
#: loop condition) cheaper, more of them speed up large frontiers; 1024
#: threads (one block of 1024 per SM) was the best trade-off of those tried.
RESIDENT_THREADS = 1024

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


def _plan(op: IterateOp | PipeOp, kernels: dict[str, gpu.FuncOp]) -> _Plan:
    """The plan of an outlinable `op`; raises _NotOutlinable otherwise."""
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
    best = control_block_size(constraints)
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
    ):
        self.plan = plan
        self.bodies = bodies
        self.mapping = mapping
        self.cells = cells
        self.status = status
        self.state = state
        self.sized = sized
        """Kernels whose device body takes the size of `in`."""
        self.retry_backoff = False
        """Count retry rounds in the `in` handle (retry backoff)."""

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

        def run(
            at: LoweringBuilder, worklists: Sequence[SSAValue], size: SSAValue | None
        ) -> None:
            sizes = [size] if size is not None and name in self.sized else []
            at.stmt(
                func.CallOp(
                    self.bodies[name], [*operands, *worklists, *cell_args, *sizes], []
                )
            )
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
            self.state.size = None
            _rt(b, "irgl_ctl_check", [w_out, self.status])
        one = b.index(1)
        self.state.epoch = b.op(arith.AddiOp(epoch, one))
        if aggregation is None or slot is None:
            return None
        return _rt_value(b, "irgl_ctl_cell_value", [slot])

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
        size = _rt_value(cond, "irgl_ctl_size", [before.args[1]])
        live = _positive(cond, size)
        _rt(cond, "irgl_ctl_check", [before.args[1], self.status])
        cond.insert(scf.ConditionOp(live, *before.args, size))
        body = b.nested(InsertPoint.at_end(after))
        old_in, new_in, new_retry, new_size = after.args
        _rt(body, "irgl_ctl_clear", [old_in])
        spare = old_in
        if self.retry_backoff:  # in is one round further; spare back to round 0
            new_in = _rt_value(body, "irgl_wl_next_round", [new_in, old_in])
            spare = _rt_value(body, "irgl_wl_first_round", [old_in])
        run(body, [new_in, w_out, new_retry], new_size)
        body.insert(scf.YieldOp(new_in, new_retry, spare))
        if not self.retry_backoff:
            return loop.results[0], loop.results[1], loop.results[2]
        reset = _rt_value(b, "irgl_wl_first_round", [loop.results[0]])
        return reset, loop.results[1], loop.results[2]

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
                self.iterate(b, op)
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

    def iterate(self, b: LoweringBuilder, op: IterateOp) -> list[SSAValue]:
        name = op.callee.string_value()
        kernel = self.plan.kernels[name]
        uses_worklist = _launch(kernel).worklist is not None
        positions = op.carried_positions
        inits = [self.mapping.get(op.args[p], op.args[p]) for p in positions]
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
        args = list(op.args)
        for position, value in zip(positions, after.args[:ncarried], strict=True):
            args[position] = value
        for old, new in zip(op.body.block.args, after.args[:ncarried], strict=True):
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
        self._boundary(body)
        body.insert(scf.YieldOp(condition, *values, *self.state.values()))
        self.state = _State.of(loop.results[ncarried:], with_wls)
        results: list[SSAValue] = list(loop.results[:ncarried])
        for old, new in zip(op.results_, results, strict=True):
            self.mapping[old] = new
        return results

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
        self.lower_ops(body, ops)
        live = self._has_work(body) if with_wls else _boolean(body, False)
        body.insert(scf.YieldOp(live, *self.state.values()))
        self.state = _State.of(loop.results, with_wls)


class _Outliner:
    """Outlines the Iterate/Pipe ops of one module."""

    def __init__(self, module: ModuleOp, remarks: TextIO | None, size_arg: bool):
        self.module = module
        self.size_arg = size_arg
        self.sized: set[str] = set()
        self.container = kernel_module(module)
        self.kernels = _kernels(module)
        self.remarks = remarks
        self.retry_backoff = False
        """Count retry rounds in control kernels (OutlineIterations option)."""
        self.names = {
            op.sym_name.data
            for table in (module, self.container)
            for op in table.regions[0].block.ops
            if isinstance(op, func.FuncOp | gpu.FuncOp)
        }
        self.bodies: dict[str, str] = {}

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
            plan = _plan(op, self.kernels)
            if isinstance(op, IterateOp):
                for result in op.results_:
                    if result.uses:
                        _device_read(result.type)
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
        self._build(op, plan, control)
        self.remark(
            op,
            where,
            f"outlined into control kernel @{control} (block size {plan.block_size})",
        )
        for inner in nested:
            self.remark(inner, where, f"outlined inside control kernel @{control}")

    def _body_function(self, name: str, kernel: gpu.FuncOp) -> str:
        if name not in self.bodies:
            fname = _unique(self.names, f"{name.rstrip('_')}_device")
            in_size = self.size_arg and _reads_in_size(kernel)
            if in_size:
                self.sized.add(name)
            inputs = list(kernel.function_type.inputs.data)
            decl = func.FuncOp.external(
                fname, [*inputs, *([IndexType()] if in_size else [])], []
            )
            DeviceBodyAttr(name, in_size=in_size).attach(decl)
            self.container.body.block.add_op(decl)
            self.bodies[name] = fname
        return self.bodies[name]

    def _build(self, op: IterateOp | PipeOp, plan: _Plan, name: str) -> None:
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
        outputs: list[tuple[SSAValue, SSAValue, SSAValue]] = []
        if isinstance(op, IterateOp):
            for result in op.results_:
                if result.uses:
                    outputs.append((result, *_device_buffer(host, result.type)))
        status_alloc, status = _device_buffer(host, i32)

        # the control kernel
        operands = [
            *captured,
            *worklists,
            *host_cells,
            *(buffer for _, _, buffer in outputs),
            status,
        ]
        block = Block(arg_types=[v.type for v in operands])
        kernel = gpu.FuncOp(
            name, ([v.type for v in operands], []), Region(block), kernel=True
        )
        LaunchAttr(
            plan.block_size,
            launch_bounds=(
                plan.block_size,
                max(1, RESIDENT_THREADS // plan.block_size),
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
        buffers = args[ncap + nwl + ncell : -1]
        device = LoweringBuilder(InsertPoint.at_end(block), table=self.container)
        state = _State(list(device_wls), None, device.index(0))
        lowering = _DeviceLowering(
            plan, self.bodies, mapping, device_cells, args[-1], state, self.sized
        )
        lowering.retry_backoff = self.retry_backoff
        if isinstance(op, IterateOp):
            results = lowering.iterate(device, op)
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
            value = host.call_value(_device_read(result.type), [buffer])
            result.replace_all_uses_with(value)
            after.insert(memref.DeallocOp.get(alloc))
        after.insert(memref.DeallocOp.get(status_alloc))
        for cell in host_cells:
            _rt(after, "irgl_cell_destroy", [cell])
        if spare is not None:
            _rt(after, "irgl_wl_destroy", [spare])
        if pipe is not None:
            _rt(after, "irgl_pipe_destroy", [pipe])
        Rewriter.erase_op(op, safe_erase=False)


def _reads_in_size(kernel: gpu.FuncOp) -> bool:
    """Does the (not yet lowered) kernel iterate over its `in` worklist?"""
    return _launch(kernel).worklist is not None and any(
        isinstance(op, LoopBase) and op.iterator.data == IteratorKind.WORKLIST
        for op in kernel.walk()
    )


def _device_buffer(b: LoweringBuilder, element: Attribute) -> tuple[SSAValue, SSAValue]:
    """A one-element device buffer: the allocation (`memref<1xT>`, to free)
    and its `memref<?xT>` view that the control kernel and the runtime take."""
    alloc = b.op(memref.AllocOp([], [], MemRefType(element, [1])))
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
    """Count retry rounds in the `in` handle (`irgl_wl_next_round`, reset by
    `irgl_wl_first_round` when it leaves `in`) for kernels lowered with
    convert-irgl-loops `retry_backoff`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(isinstance(o, IterateOp | PipeOp) for o in op.walk()):
            return
        outliner = _Outliner(op, sys.stderr if self.remarks else None, self.size_arg)
        outliner.retry_backoff = self.retry_backoff
        outliner.run()


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
                if list(decl.function_type.inputs.data) != inputs:
                    fail(
                        decl,
                        f"@{decl.sym_name.data} must take the arguments of "
                        f"@{body_of.kernel_name}"
                        + (" and the size of in (index)" if body_of.in_size else ""),
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
