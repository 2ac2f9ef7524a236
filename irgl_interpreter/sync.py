"""Interpreter functions of the synchronization constructs: Atomic,
Exclusive, Retry, Respawn, ReduceAndReturn, SyncRunningThreads and
LocalBarrier.

Iterations run one at a time, so an Atomic's body always runs atomically.
The lock word is still set while the body runs: a blocking Atomic on a lock
its own iteration holds (nested Atomics on one lock) is a deadlock and an
error; a non-blocking one runs its Else then, and also when the schedule
injects a failure.

An Exclusive is resolved when all iterations of the ForAll wait at it (see
`irgl_interpreter.loops`), with the race / priority-check / check protocol
of the lowering on the claim array itself: in schedule order every
contender writes its priority (its position in the iteration space, plus
one) into the claim of each element; a contender that lost a claim raises
each of its claims to its priority; a contender whose priority stands on
every element wins. Winners are disjoint and the contender with the highest
priority always wins; with a failure rate, other winners lose on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from irgl_dialect.attributes import ExclusiveForm
from irgl_dialect.sync import (
    AtomicOp,
    ExclusiveOp,
    LocalBarrierOp,
    ReduceAndReturnOp,
    RespawnOp,
    RetryOp,
    SyncRunningThreadsOp,
)
from irgl_interpreter.state import (
    IrglRuntimeError,
    IrglState,
    KernelFrame,
    irgl_state,
    pipe_of,
)


def _frame(interpreter: Interpreter, op: Operation) -> KernelFrame:
    frame = irgl_state(interpreter).frame
    if frame is None:
        raise IrglRuntimeError(op, f"'{op.name}' runs only in an invoked plain kernel")
    return frame


def _where(frame: KernelFrame) -> str:
    return "" if frame.iteration is None else f" (iteration {frame.iteration})"


@register_impls
class SyncFunctions(InterpreterFunctions):
    """Atomic, Exclusive, Retry/Respawn, ReduceAndReturn and the barriers."""

    @impl(AtomicOp)
    def run_atomic(
        self, interpreter: Interpreter, op: AtomicOp, args: PythonValues
    ) -> PythonValues:
        locks, index = args
        frame = _frame(interpreter, op)
        if not 0 <= index < locks.shape[0]:
            raise IrglRuntimeError(
                op, f"lock {index} out of range: there are {locks.shape[0]} locks"
            )
        held = locks[index].item() != 0
        if op.blocking:
            if held:
                raise IrglRuntimeError(
                    op,
                    f"deadlock{_where(frame)}: lock {index} is already held "
                    f"(lock word {locks[index].item()}) and no other iteration "
                    "can release it",
                )
        elif held or irgl_state(interpreter).inject_failure():
            interpreter.run_ssacfg_region(op.else_body, (), "atomic.else")
            return ()
        locks[index] = 1
        try:
            interpreter.run_ssacfg_region(op.body, (), "atomic")
        finally:
            locks[index] = 0
        return ()

    @impl(ExclusiveOp)
    def run_exclusive(
        self, interpreter: Interpreter, op: ExclusiveOp, args: PythonValues
    ) -> PythonValues:
        raise IrglRuntimeError(
            op,
            "'irgl.exclusive' was reached outside the body of an outermost "
            "ForAll, where not all iterations can meet at it",
        )

    @impl(RetryOp)
    def run_retry(
        self, interpreter: Interpreter, op: RetryOp, args: PythonValues
    ) -> PythonValues:
        pipe = pipe_of(op, _frame(interpreter, op))
        pipe.push(op, "out" if op.merge is not None else "retry", args[0])
        return ()

    @impl(RespawnOp)
    def run_respawn(
        self, interpreter: Interpreter, op: RespawnOp, args: PythonValues
    ) -> PythonValues:
        pipe_of(op, _frame(interpreter, op)).push(op, "retry", args[0])
        return ()

    @impl(ReduceAndReturnOp)
    def run_reduce_and_return(
        self, interpreter: Interpreter, op: ReduceAndReturnOp, args: PythonValues
    ) -> PythonValues:
        # The verifier made it the last op on its path: the iteration (or
        # kernel) ends after it without an explicit jump.
        frame = _frame(interpreter, op)
        value = bool(args[0])
        frame.reduced_any = frame.reduced_any or value
        frame.reduced_all = frame.reduced_all and value
        return ()

    @impl(SyncRunningThreadsOp)
    def run_sync_running_threads(
        self, interpreter: Interpreter, op: SyncRunningThreadsOp, args: PythonValues
    ) -> PythonValues:
        _barrier_outside_forall(interpreter, op)
        return ()

    @impl(LocalBarrierOp)
    def run_local_barrier(
        self, interpreter: Interpreter, op: LocalBarrierOp, args: PythonValues
    ) -> PythonValues:
        _barrier_outside_forall(interpreter, op)
        return ()


def _barrier_outside_forall(interpreter: Interpreter, op: Operation) -> None:
    """A barrier in the kernel body: every earlier ForAll has finished, so it
    holds trivially. Inside an iteration it must be met by the task runner."""
    frame = _frame(interpreter, op)
    if frame.forall_depth:
        raise IrglRuntimeError(
            op,
            f"iteration {frame.iteration} reached '{op.name}' nested inside its "
            "ForAll body, where not every iteration reaches it",
        )


def exclusive_elements(op: ExclusiveOp, values: PythonValues) -> list[int]:
    """The elements an Exclusive locks, from its operand values."""
    claims, items, *bounds = values
    if op.form.data == ExclusiveForm.ARRAY:
        (count,) = bounds
        start, end, step = 0, count, 1
    else:
        start, end, step = bounds
    if step <= 0:
        raise IrglRuntimeError(
            op, f"'irgl.exclusive' step must be positive, got {step}"
        )
    if start < 0 or end > items.shape[0]:
        raise IrglRuntimeError(
            op,
            f"'irgl.exclusive' reads items[{start}:{end}] of an array of "
            f"{items.shape[0]}",
        )
    elements = [int(x) for x in items[start:end:step]]
    for e in elements:
        if not 0 <= e < claims.shape[0]:
            raise IrglRuntimeError(
                op,
                f"'irgl.exclusive' element {e} out of range of the claim array "
                f"({claims.shape[0]} cells)",
            )
    return elements


def resolve_exclusive(
    state: IrglState,
    op: ExclusiveOp,
    contenders: Sequence[tuple[int, PythonValues]],
    space: Sequence[int],
) -> dict[int, bool]:
    """Which contenders (by iteration index) win; the claim array is written
    as the lowering's protocol writes it. `contenders` are in schedule order."""
    if not contenders:
        return {}
    claims: np.ndarray = contenders[0][1][0]
    rank = {index: position for position, index in enumerate(sorted(space))}
    sets = {index: exclusive_elements(op, values) for index, values in contenders}
    priority = {index: rank[index] + 1 for index, _ in contenders}
    for index, _ in contenders:  # race
        for e in sets[index]:
            claims[e] = priority[index]
    for index, _ in contenders:  # priority check
        mine = priority[index]
        if any(claims[e] != mine for e in sets[index]):
            for e in sets[index]:
                claims[e] = max(int(claims[e]), mine)
    won = {
        index: all(claims[e] == priority[index] for e in sets[index])
        for index, _ in contenders
    }
    top = max(priority, key=priority.__getitem__)
    for index, _ in contenders:
        if won[index] and index != top and state.inject_failure():
            won[index] = False
    return won
