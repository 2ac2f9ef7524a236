"""Where an irgl op sits in partially lowered IR, for the lowering passes.

The dialect's placement rules look only inside `irgl.kernel` ops. The passes
run on IR in which a kernel may already be a `gpu.func` kernel (plain), a
`func.func` in a `gpu.module` (device) or a top-level `func.func` (host), and
an outermost ForAll an `scf.for` marked `#irgl_rt.forall`; these queries know
those lowered forms.
"""

from __future__ import annotations

from xdsl.dialects import func, gpu
from xdsl.ir import Operation

from irgl_dialect.kernels import KernelOp
from irgl_dialect.loops import ForAllOp


def is_kernel_like(op: Operation | None) -> bool:
    """An irgl.kernel or the function that a kernel became."""
    return isinstance(op, KernelOp | gpu.FuncOp | func.FuncOp)


def enclosing_foralls(op: Operation) -> list[ForAllOp]:
    """The irgl.forall ops around `op`, innermost first, up to its kernel."""
    result: list[ForAllOp] = []
    parent = op.parent_op()
    while parent is not None and not is_kernel_like(parent):
        if isinstance(parent, ForAllOp):
            result.append(parent)
        parent = parent.parent_op()
    return result


def kernel_kind_of(op: Operation) -> str | None:
    """'plain', 'host' or 'device' for the (possibly lowered) kernel around
    `op`; None if there is none."""
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
