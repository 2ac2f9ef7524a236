"""Interpreter functions of ForAll and For, and of the worklist (pop, push).

The outermost ForAll of a plain kernel runs its iterations in the order of
the schedule. When its body holds a barrier (SyncRunningThreads,
LocalBarrier) or an Exclusive, every iteration is a resumable task (a Python
generator) that runs up to the barrier and waits there; once every iteration
waits at the same barrier they all go on (an Exclusive is resolved across
all of them first). An iteration that finishes while others wait at a
barrier makes the program wrong, and the error names it. Inner ForAlls,
ForAlls of host kernels and For run sequentially.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Block, Operation
from xdsl.utils.scoped_dict import ScopedDict

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp, ForOp, LoopBase
from irgl_dialect.sync import ExclusiveOp, LocalBarrierOp, SyncRunningThreadsOp
from irgl_dialect.worklist import PopOp, PushOp
from irgl_interpreter.state import (
    IrglRuntimeError,
    IrglState,
    KernelFrame,
    irgl_state,
    pipe_of,
)
from irgl_interpreter.sync import resolve_exclusive

#: Operations at which all iterations of the outermost ForAll meet.
BARRIERS = (SyncRunningThreadsOp, LocalBarrierOp, ExclusiveOp)

#: What a task yields at a barrier: the op and its operand values.
_Stop = tuple[Operation, PythonValues]


@dataclass(frozen=True)
class NodeSpan:
    """What a ForAll over nodes runs over where that is not its whole graph
    (on a simulated rank: the rank's masters, or its mirrors)."""

    start: int
    stop: int


def _space(op: LoopBase, args: PythonValues, frame: KernelFrame | None) -> range:
    kind = op.iterator.data
    if kind == IteratorKind.RANGE:
        if len(args) == 3 and args[2] <= 0:
            raise IrglRuntimeError(op, f"range step must be positive, got {args[2]}")
        return range(*args)
    if kind == IteratorKind.NODES:
        if isinstance(args[0], NodeSpan):
            return range(args[0].start, args[0].stop)
        return range(args[0].num_nodes)
    if kind == IteratorKind.EDGES:
        graph, n = args
        if not 0 <= n < graph.num_nodes:
            raise IrglRuntimeError(
                op, f"node {n} out of range: the graph has {graph.num_nodes} nodes"
            )
        return range(graph.row_start[n], graph.row_start[n + 1])
    return range(len(pipe_of(op, frame).in_))


def _has_barrier(state: IrglState, op: ForAllOp) -> bool:
    cached = state.cache.get(op)
    if cached is None:
        cached = any(
            isinstance(inner, BARRIERS) or _holds_barrier(inner)
            for inner in op.body.block.ops
        )
        state.cache[op] = cached
    return cached


@register_impls
class LoopFunctions(InterpreterFunctions):
    """ForAll (scheduled, with barriers), For, and worklist pop/push."""

    @impl(ForAllOp)
    def run_forall(
        self, interpreter: Interpreter, op: ForAllOp, args: PythonValues
    ) -> PythonValues:
        state = irgl_state(interpreter)
        frame = state.frame
        space = _space(op, args[: len(op.bounds)], frame)
        if frame is None:  # a host ForAll is a For
            yielded = _sequential(interpreter, op, space, None)
            return _reduce(op, args, yielded)
        indices = [space[p] for p in state.order(len(space))]
        if op.reduce is not None:  # never the outermost ForAll (verifier)
            yielded = _sequential(interpreter, op, indices, frame)
            return _reduce(op, args, yielded)
        if frame.forall_depth == 0 and _has_barrier(state, op):
            _run_tasks(interpreter, state, op, indices, frame)
        else:
            _sequential(interpreter, op, indices, frame)
        return ()

    @impl(ForOp)
    def run_for(
        self, interpreter: Interpreter, op: ForOp, args: PythonValues
    ) -> PythonValues:
        state = irgl_state(interpreter)
        _sequential(interpreter, op, _space(op, args, state.frame), state.frame)
        return ()

    @impl(PopOp)
    def run_pop(
        self, interpreter: Interpreter, op: PopOp, args: PythonValues
    ) -> PythonValues:
        items = pipe_of(op, irgl_state(interpreter).frame).in_
        (slot,) = args
        if not 0 <= slot < len(items):
            raise IrglRuntimeError(
                op, f"slot {slot} out of range: the worklist holds {len(items)} items"
            )
        return (items[slot],)

    @impl(PushOp)
    def run_push(
        self, interpreter: Interpreter, op: PushOp, args: PythonValues
    ) -> PythonValues:
        state = irgl_state(interpreter)
        state.stats.pushes += 1
        pipe_of(op, state.frame).push(op, "out", args[0])
        return ()


def _reduce(
    op: ForAllOp, args: PythonValues, yielded: list[PythonValues]
) -> PythonValues:
    """The result of a reducing ForAll: its initial value combined with each
    iteration's yielded value, in iteration order (none without reduce)."""
    if op.reduce is None or op.init is None:
        return ()
    kind = op.reduce.data
    total = args[len(op.bounds)]
    for (value,) in yielded:
        if kind == "add":
            total = total + value
        elif kind == "min":
            total = value if _less(value, total) else total
        else:
            total = value if _less(total, value) else total
    type_ = op.init.type
    if isinstance(type_, IntegerType):  # two's complement wrap-around
        width = type_.width.data
        total = (total + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
    return (total,)


def _less(a: Any, b: Any) -> bool:
    """`a < b`, where a NaN never wins (fmin/fmax keep the other operand)."""
    return not (isinstance(a, float) and math.isnan(a)) and (
        (isinstance(b, float) and math.isnan(b)) or a < b
    )


def _sequential(
    interpreter: Interpreter,
    op: LoopBase,
    indices: Sequence[int],
    frame: KernelFrame | None,
) -> list[PythonValues]:
    """Run the body for each index in order; what each iteration yielded."""
    body = op.body
    if frame is None or not isinstance(op, ForAllOp):
        # a host loop, or a For (which runs in the current iteration)
        return [
            interpreter.run_ssacfg_region(body, (index,), op.name) for index in indices
        ]
    yielded: list[PythonValues] = []
    outermost = frame.forall_depth == 0
    frame.forall_depth += 1
    try:
        for index in indices:
            if outermost:
                frame.iteration = index
            yielded.append(interpreter.run_ssacfg_region(body, (index,), op.name))
    except IrglRuntimeError as error:
        if error.iteration is None:
            error.iteration = frame.iteration
        raise
    finally:
        frame.forall_depth -= 1
        if outermost:
            frame.iteration = None
    return yielded


def _task(
    interpreter: Interpreter, block: Block, index: int, outer: ScopedDict[Any, Any]
) -> Generator[_Stop, bool | None, None]:
    """One iteration of the outermost ForAll, suspended at every barrier."""
    scope = ScopedDict[Any, Any](outer, name="forall")
    scope[id(block.args[0])] = index  # IrglInterpreter's scopes: keyed by id
    yield from _steps(interpreter, block, scope)


def _holds_barrier(op: Operation) -> bool:
    """A sequential loop (uniform trip count: the dialect's rule) with a
    barrier inside: its iterations are stepped here, barrier by barrier."""
    return isinstance(op, scf.ForOp | ForOp) and any(
        isinstance(inner, BARRIERS) for inner in op.walk() if inner is not op
    )


def _steps(
    interpreter: Interpreter, block: Block, scope: ScopedDict[Any, Any]
) -> Generator[_Stop, bool | None, None]:
    """Run `block`'s ops in `scope`, suspending at barriers (also at those in
    uniform loops nested in it)."""
    op = block.first_op
    while op is not None and not isinstance(op, YieldOp | scf.YieldOp):
        interpreter._ctx = scope  # pyright: ignore[reportPrivateUsage]
        values = interpreter.get_values(op.operands)
        if isinstance(op, BARRIERS):
            won = yield (op, values)
            if isinstance(op, ExclusiveOp):
                interpreter._ctx = scope  # pyright: ignore[reportPrivateUsage]
                region = op.body if won else op.else_body
                interpreter.run_ssacfg_region(region, (), "exclusive")
        elif _holds_barrier(op):
            if isinstance(op, scf.ForOp):
                if op.iter_args:
                    raise IrglRuntimeError(
                        op, "a loop around a barrier cannot carry values (iter_args)"
                    )
                space = range(values[0], values[1], values[2])
            else:
                assert isinstance(op, ForOp)
                space = _space(op, values, irgl_state(interpreter).frame)
            body = op.regions[0].block
            for i in space:
                inner = ScopedDict[Any, Any](scope, name="for")
                inner[id(body.args[0])] = i
                yield from _steps(interpreter, body, inner)
        else:
            results = interpreter.run_op(op, values)
            interpreter.set_values(zip(op.results, results, strict=True))
        op = op.next_op


def _run_tasks(
    interpreter: Interpreter,
    state: IrglState,
    op: ForAllOp,
    indices: Sequence[int],
    frame: KernelFrame,
) -> None:
    outer = interpreter._ctx  # pyright: ignore[reportPrivateUsage]
    block = op.body.block
    pending = [(i, _task(interpreter, block, i, outer)) for i in indices]
    replies: dict[int, bool] = {}
    frame.forall_depth += 1
    try:
        while pending:
            waiting: list[tuple[int, Generator[_Stop, bool | None, None], _Stop]] = []
            finished: list[int] = []
            for index, task in pending:
                frame.iteration = index
                try:
                    stop = task.send(replies.get(index))
                except StopIteration:
                    finished.append(index)
                    continue
                waiting.append((index, task, stop))
            if not waiting:
                return
            barrier = waiting[0][2][0]
            if finished:
                raise IrglRuntimeError(
                    barrier,
                    f"iteration {finished[0]} of the ForAll finished without "
                    f"reaching this '{barrier.name}', where the other iterations "
                    "wait: every iteration must reach it",
                )
            for index, _, (other, _) in waiting:
                if other is not barrier:
                    raise IrglRuntimeError(
                        other,
                        f"iteration {index} of the ForAll waits at this "
                        f"'{other.name}' while others wait at another barrier",
                    )
            replies = {}
            if isinstance(barrier, ExclusiveOp):
                contenders = [(index, values) for index, _, (_, values) in waiting]
                replies = resolve_exclusive(state, barrier, contenders, indices)
            pending = [(index, task) for index, task, _ in waiting]
    except IrglRuntimeError as error:
        if error.iteration is None:
            error.iteration = frame.iteration
        raise
    finally:
        frame.forall_depth -= 1
        frame.iteration = None
        interpreter._ctx = outer  # pyright: ignore[reportPrivateUsage]
