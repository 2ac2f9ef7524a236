"""The specification's placement rules, shared by the verifiers of irgl ops.

Each rule has a short name that appears in its diagnostic, so that a user can
look it up in the README's dialect reference ("rule: ...").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

if TYPE_CHECKING:
    from irgl_dialect.kernels import KernelOp
    from irgl_dialect.loops import ForAllOp

RULE_KERNEL_CONSTRUCT = "kernel constructs only in plain kernels"
RULE_ORCHESTRATION = "orchestration only in host kernels"
RULE_FORALL_PLACEMENT = "ForAll only in plain and host kernels"
RULE_WORKLIST_ITERATION = "worklist ForAll is the outermost ForAll of a plain kernel"
RULE_POP = "pop only the index of a worklist ForAll"
RULE_EXCLUSIVE = "Exclusive directly under the outermost ForAll, never nested"
RULE_SYNC = "SyncRunningThreads executed uniformly"
RULE_RETRY = "Retry and Respawn inside a ForAll"
RULE_REDUCE = "ReduceAndReturn ends the iteration or kernel"
RULE_CALLEE = "invoked kernels exist and are plain kernels"
RULE_ARGUMENTS = "invocation arguments match the kernel"
RULE_WORKLIST_CONTEXT = "worklist kernels are invoked inside a Pipe or Iterate"
RULE_INITIALIZER = "only the outermost Pipe or Iterate establishes worklists"
RULE_TERMINATION = "Iterate terminates"
RULE_AGGREGATION = "Any and All aggregate ReduceAndReturn values"
RULE_KERNEL_SIGNATURE = "kernel signatures"


def rule_error(op: Operation, message: str, rule: str) -> VerifyException:
    """A verifier error for `op` that names the violated rule."""
    return VerifyException(f"'{op.name}' {message} (rule: {rule})")


def enclosing_kernel(op: Operation) -> KernelOp | None:
    """The irgl.kernel that contains `op`, if any."""
    from irgl_dialect.kernels import KernelOp

    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


def enclosing_foralls(op: Operation) -> list[ForAllOp]:
    """The irgl.forall ops around `op`, innermost first, up to its kernel."""
    from xdsl.dialects import func, gpu

    from irgl_dialect.kernels import KernelOp
    from irgl_dialect.loops import ForAllOp

    result: list[ForAllOp] = []
    parent = op.parent_op()
    while parent is not None and not isinstance(
        parent, KernelOp | gpu.FuncOp | func.FuncOp
    ):
        if isinstance(parent, ForAllOp):
            result.append(parent)
        parent = parent.parent_op()
    return result


def kernel_kind_of(op: Operation) -> str | None:
    """'plain', 'host' or 'device' for the kernel around `op` (None if none).

    In partially lowered IR the kernel may already be a `gpu.func` kernel
    (plain), a `func.func` in a `gpu.module` (device) or a top-level
    `func.func` (host); constructs keep their meaning there.
    """
    from xdsl.dialects import func, gpu

    from irgl_dialect.kernels import KernelOp

    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, KernelOp):
            return parent.kind.data.value
        if isinstance(parent, gpu.FuncOp):
            return "plain" if parent.kernel is not None else "device"
        if isinstance(parent, func.FuncOp):
            container = parent.parent_op()
            return "device" if isinstance(container, gpu.ModuleOp) else "host"
        parent = parent.parent_op()
    return None


def require_plain_kernel(op: Operation, construct: str) -> None:
    """Kernel constructs (Atomic, Exclusive, Retry, ...) live in plain kernels."""
    kind = kernel_kind_of(op)
    if kind == "plain":
        return
    where = "outside any kernel" if kind is None else f"in a {kind} kernel"
    raise rule_error(
        op,
        f"({construct}) is a kernel construct and may only appear in a plain "
        f"kernel, but it is {where}",
        RULE_KERNEL_CONSTRUCT,
    )


def require_host_kernel(op: Operation, construct: str) -> None:
    """Orchestration constructs (Invoke, Iterate, Pipe) live in host kernels."""
    kind = kernel_kind_of(op)
    if kind == "host":
        return
    where = "outside any kernel" if kind is None else f"in a {kind} kernel"
    raise rule_error(
        op,
        f"({construct}) is an orchestration construct and may only appear in a "
        f"host kernel, but it is {where}",
        RULE_ORCHESTRATION,
    )


def is_forall_like(op: Operation | None) -> bool:
    """An irgl.forall, or the scf.for that an outermost ForAll became."""
    from irgl_dialect.loops import ForAllOp
    from irgl_dialect.runtime import ForAllAttr

    return isinstance(op, ForAllOp) or ForAllAttr.of(op) is not None


def is_kernel_like(op: Operation | None) -> bool:
    """An irgl.kernel or the function that a kernel became."""
    from xdsl.dialects import func, gpu

    from irgl_dialect.kernels import KernelOp

    return isinstance(op, KernelOp | gpu.FuncOp | func.FuncOp)


def is_directly_under_outermost_forall(op: Operation) -> bool:
    """True when `op`'s parent is a ForAll that has no ForAll around it (an
    `irgl_rt.collective` between them, made by the lowering, is transparent)."""
    from irgl_dialect.runtime import CollectiveOp

    parent = op.parent_op()
    if isinstance(parent, CollectiveOp):
        parent = parent.parent_op()
    return is_forall_like(parent) and not enclosing_foralls(parent)  # type: ignore[arg-type]


def kernel_uses_worklist(kernel: KernelOp) -> bool:
    """Does the kernel pop, push, iterate over or retry into the worklist?"""
    from irgl_dialect.loops import ForAllOp
    from irgl_dialect.sync import RespawnOp, RetryOp
    from irgl_dialect.worklist import PopOp, PushOp

    for op in kernel.walk():
        if isinstance(op, PopOp | PushOp | RetryOp | RespawnOp):
            return True
        if isinstance(op, ForAllOp) and op.iterator.data.value == "worklist":
            return True
    return False


def kernel_uses_retry(kernel: KernelOp) -> bool:
    """Does the kernel push items to the retry worklist?"""
    from irgl_dialect.sync import RespawnOp, RetryOp

    return any(isinstance(op, RetryOp | RespawnOp) for op in kernel.walk())


def kernel_reduces(kernel: KernelOp) -> bool:
    """Does the kernel produce a return value with ReduceAndReturn?"""
    from irgl_dialect.sync import ReduceAndReturnOp

    return any(isinstance(op, ReduceAndReturnOp) for op in kernel.walk())


def kernel_uses_grid_sync(kernel: KernelOp) -> bool:
    """Does the kernel need a grid barrier (SyncRunningThreads or Exclusive)?"""
    from irgl_dialect.sync import ExclusiveOp, SyncRunningThreadsOp

    return any(
        isinstance(op, SyncRunningThreadsOp | ExclusiveOp) for op in kernel.walk()
    )
