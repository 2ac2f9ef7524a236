"""Interpreter functions of kernels and orchestration: kernel bodies, their
return and yield, calls of device kernels, Invoke, Iterate and Pipe with
their worklist initializers (`func.call` of `func.func` helpers is xDSL's).

The semantics are those of the lowering (convert-irgl-orchestration): the
outermost Pipe or Iterate of a worklist kernel creates the pipe context and
nested ones inherit it (so worklists flow to whichever kernel the host code
picks: dynamic piping). An invocation of a worklist kernel pops `in` and
pushes `out`; while it retried items it is re-invoked on them (`in` and
`retry` swapped, `out` kept); then `in` and `out` are swapped. Worklists
hold `capacity` items, by default max(nodes, edges) + 1 of the host
kernel's graph argument as in the runtime (unbounded without one). Any/All
aggregate the ReduceAndReturn values of the invocation (false/true when
there are none). Iterate invokes while `in` is not empty (for worklist
kernels), and While/Until Any/All holds, combined with the extra condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

from irgl_dialect.attributes import Aggregation, ExtraCond, GraphType, TermCond
from irgl_dialect.kernels import CallOp, KernelOp, ReturnOp, YieldOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.placement import kernel_uses_retry, kernel_uses_worklist
from irgl_interpreter.state import (
    IrglRuntimeError,
    IrglState,
    KernelFrame,
    PipeContext,
    irgl_state,
)


def callee(state: IrglState, op: InvokeOp | IterateOp) -> KernelOp:
    """The kernel an Invoke or Iterate calls (looked up once)."""
    key = (op, "callee")
    kernel = state.cache.get(key)
    if kernel is None:
        kernel = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(kernel, KernelOp):
            raise IrglRuntimeError(
                op, f"@{op.callee.string_value()} is not an irgl.kernel"
            )
        state.cache[key] = kernel
    return kernel


def _uses(state: IrglState, kernel: KernelOp) -> tuple[bool, bool]:
    key = (kernel, "uses")
    uses = state.cache.get(key)
    if uses is None:
        uses = (kernel_uses_worklist(kernel), kernel_uses_retry(kernel))
        state.cache[key] = uses
    return uses


def invoke(
    interpreter: Interpreter,
    op: Operation,
    kernel: KernelOp,
    args: PythonValues,
    aggregation: Aggregation | None,
) -> bool:
    """Run one invocation of a plain kernel; its aggregated return value."""
    state = irgl_state(interpreter)
    uses_worklist, uses_retry = _uses(state, kernel)
    pipe = state.pipe if uses_worklist else None
    if uses_worklist and pipe is None:
        raise IrglRuntimeError(
            op,
            f"invokes @{kernel.sym_name.data}, which uses the worklist, outside "
            "any Pipe or Iterate",
        )
    frame = KernelFrame(kernel, pipe)
    state.frames.append(frame)
    visits_before = state.stats.edge_visits
    try:
        _launch(interpreter, state, kernel, args)
        while pipe is not None and uses_retry and pipe.retry:
            pipe.advance_retry()
            _launch(interpreter, state, kernel, args)
    finally:
        state.frames.pop()
        by_kernel = state.stats.edge_visits_by_kernel
        name = kernel.sym_name.data
        by_kernel[name] = (
            by_kernel.get(name, 0) + state.stats.edge_visits - visits_before
        )
    if pipe is not None:
        pipe.advance()
    return frame.aggregate(aggregation)


def _launch(
    interpreter: Interpreter, state: IrglState, kernel: KernelOp, args: PythonValues
) -> None:
    state.stats.invocations += 1
    if state.progress is not None:
        state.progress(state.stats)
    interpreter.run_ssacfg_region(kernel.body, args, kernel.sym_name.data)


def keep_iterating(
    conditions: list[bool],
    extra: ExtraCond | None,
    yielded: Sequence[object],
    carried: int,
) -> bool:
    """Whether an Iterate goes on: all of its `conditions` (worklist not
    empty, the while/until test), combined with the body's extra condition
    (yielded after the `carried` values) by `extra and` / `extra or`."""
    keep_going = all(conditions)
    if extra is None:
        return keep_going
    extra_value = bool(yielded[carried])
    if extra == ExtraCond.AND:
        return keep_going and extra_value
    return keep_going or extra_value


def initial_pipe(interpreter: Interpreter, op: PipeOp | IterateOp) -> PipeContext:
    """The worklists an outermost Pipe or Iterate opens, `in` holding its
    initial items."""

    def value(v: SSAValue | None) -> Any:
        return None if v is None else interpreter.get_values((v,))[0]

    capacity = value(op.capacity)
    if capacity is None:
        capacity = _default_capacity(interpreter, op)
    pipe = PipeContext(capacity=capacity)
    items: list[int] = [int(x) for x in interpreter.get_values(op.initial)]
    array = value(op.initial_array)
    if array is not None:
        count = int(value(op.initial_count))
        if not 0 <= count <= array.shape[0]:
            raise IrglRuntimeError(
                op,
                f"initial worklist of {count} items from an array of {array.shape[0]}",
            )
        items = [int(x) for x in array[:count]]
    if capacity is not None and len(items) > capacity:
        raise IrglRuntimeError(
            op,
            f"worklist overflow: {len(items)} initial items, capacity {capacity}",
        )
    pipe.in_ = items
    return pipe


def _default_capacity(interpreter: Interpreter, op: Operation) -> int | None:
    """The runtime's default worklist capacity, max(nodes, edges) + 1 of the
    host kernel's first graph argument; unbounded without one."""
    kernel = op.parent_op()
    while kernel is not None and not isinstance(kernel, KernelOp):
        kernel = kernel.parent_op()
    if kernel is None:
        return None
    for arg in kernel.body.block.args:
        if isinstance(arg.type, GraphType):
            graph = interpreter.get_values((arg,))[0]
            return max(graph.num_nodes, len(graph.edge_dst)) + 1
    return None


class Rounds:
    """How the rounds of an Iterate or Pipe see the other ranks: alone
    (this class) or across simulated ranks (`irgl_interpreter.distributed`
    overrides each step with its collective)."""

    def open_pipe(
        self, interpreter: Interpreter, op: PipeOp | IterateOp
    ) -> PipeContext:
        """The worklists of an outermost Iterate or Pipe."""
        return initial_pipe(interpreter, op)

    def any_in(self, pipe_in: bool) -> bool:
        """Whether `in` has items (on any rank)."""
        return pipe_in

    def before_invoke(self, args: PythonValues) -> None:
        """Called with an Iterate's arguments before each invocation."""

    def after_round(
        self, pipe_in: bool, result: Any, aggregation: Aggregation | None
    ) -> tuple[bool, Any]:
        """After a round of an Iterate: whether `in` has items and the
        invocation's Any/All result (over the ranks)."""
        return pipe_in, result


def run_pipe(interpreter: Interpreter, op: PipeOp, rounds: Rounds) -> PythonValues:
    """A Pipe: its body until `in` is empty (once with `once`); the
    outermost one opens the pipe context."""
    state = irgl_state(interpreter)
    owned = state.pipe is None
    if owned:
        state.pipe = rounds.open_pipe(interpreter, op)
    pipe = state.pipe
    assert pipe is not None
    try:
        while True:
            interpreter.run_ssacfg_region(op.body, (), "pipe")
            if op.once is not None or not rounds.any_in(bool(pipe.in_)):
                break
    finally:
        if owned:
            state.pipe = None
    return ()


def run_iterate(
    interpreter: Interpreter, op: IterateOp, args: PythonValues, rounds: Rounds
) -> PythonValues:
    """An Iterate: invoke while `in` has items (worklist kernels) and the
    While/Until condition holds, combined with the extra condition."""
    state = irgl_state(interpreter)
    kernel = callee(state, op)
    uses_worklist, _ = _uses(state, kernel)
    owned = uses_worklist and state.pipe is None
    if owned:
        state.pipe = rounds.open_pipe(interpreter, op)
    pipe = state.pipe if uses_worklist else None
    args = args[: len(op.args)]  # the rest are the initializer's operands
    positions = op.carried_positions
    carried = [args[p] for p in positions]
    aggregation = op.aggregation.data if op.aggregation is not None else None
    term = op.term_cond.data if op.term_cond is not None else None
    extra = op.extra.data if op.extra is not None else None
    try:
        keep_going = rounds.any_in(bool(pipe.in_)) if pipe is not None else True
        while keep_going:
            call_args = list(args)
            for p, v in zip(positions, carried, strict=True):
                call_args[p] = v
            rounds.before_invoke(tuple(call_args))
            result = invoke(interpreter, op, kernel, tuple(call_args), aggregation)
            yielded = interpreter.run_ssacfg_region(op.body, tuple(carried), "iterate")
            carried = list(yielded[: len(positions)])
            pipe_in = bool(pipe.in_) if pipe is not None else True
            pipe_in, result = rounds.after_round(pipe_in, result, aggregation)
            conditions: list[bool] = []
            if pipe is not None:
                conditions.append(pipe_in)
            if term is not None:
                conditions.append(result if term == TermCond.WHILE else not result)
            keep_going = keep_iterating(conditions, extra, yielded, len(positions))
    finally:
        if owned:
            state.pipe = None
    return tuple(carried)


@register_impls
class KernelFunctions(InterpreterFunctions):
    """Kernel terminators and the orchestration constructs."""

    @impl_terminator(ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(CallOp)
    def run_call(
        self, interpreter: Interpreter, op: CallOp, args: PythonValues
    ) -> PythonValues:
        """A device kernel runs in the calling thread, as a function."""
        state = irgl_state(interpreter)
        key = (op, "callee")
        kernel = state.cache.get(key)
        if kernel is None:
            kernel = SymbolTable.lookup_symbol(op, op.callee)
            if not isinstance(kernel, KernelOp):
                raise IrglRuntimeError(
                    op, f"@{op.callee.string_value()} is not an irgl.kernel"
                )
            state.cache[key] = kernel
        return interpreter.run_ssacfg_region(kernel.body, args, kernel.sym_name.data)

    @impl(InvokeOp)
    def run_invoke(
        self, interpreter: Interpreter, op: InvokeOp, args: PythonValues
    ) -> PythonValues:
        state = irgl_state(interpreter)
        aggregation = op.aggregation.data if op.aggregation is not None else None
        result = invoke(interpreter, op, callee(state, op), args, aggregation)
        return (result,) if op.result is not None else ()

    @impl(PipeOp)
    def run_pipe(
        self, interpreter: Interpreter, op: PipeOp, args: PythonValues
    ) -> PythonValues:
        return run_pipe(interpreter, op, Rounds())

    @impl(IterateOp)
    def run_iterate(
        self, interpreter: Interpreter, op: IterateOp, args: PythonValues
    ) -> PythonValues:
        return run_iterate(interpreter, op, args, Rounds())
