"""irgl-nested-parallelism: schedule a kernel's edge loops across the threads
of a block, of a warp, or one thread (spec: nested parallelism).

A thread of the outermost ForAll that meets a high-degree node would walk its
edges alone while its neighbours idle; on power-law graphs the whole kernel
then waits for that one thread. This pass marks every inner
`irgl.forall %e in edges(%g, %n)` that lies directly in the body of a plain
kernel's outermost ForAll with `#irgl_rt.nested_edges`. convert-irgl-loops
then lowers that outermost ForAll so that every thread runs the same number
of rounds (idle threads included, so they can help) and lowers each marked
loop, with `lower_scheduled_edges`, into three phases:

1. block phase: nodes with at least `block_threshold` edges (the kernel's
   block size): the block elects one such node at a time (`irgl_block_elect`)
   and all its threads share the node's edges;
2. warp phase: nodes with at least 32 edges: the lanes of each warp elect one
   by ballot (`irgl_warp_ballot`, over the mask taken once with
   `irgl_warp_active`) and share its edges;
3. thread phase: every thread walks its own small node.

The elected node's edge range and the per-thread values that the loop body
uses are broadcast (`irgl_block_bcast_*`, `irgl_warp_shfl_*`); the body is
cloned into each phase. Loops whose body needs a per-thread value that cannot
be broadcast (e.g. a memref made inside the ForAll), and kernels that
synchronize the grid, are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ModuleOp,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.loops import ForAllOp
from irgl_dialect.placement import kernel_uses_grid_sync
from irgl_dialect.runtime import LaunchAttr, NestedEdgesAttr
from lowering.edge_sharing import per_thread_values
from lowering.kernel_context import enclosing_foralls, is_kernel_like, kernel_kind_of


def is_scheduled(op: Operation) -> bool:
    """Is `op` an edge loop marked for nested scheduling?"""
    return isinstance(op, ForAllOp) and NestedEdgesAttr.of(op) is not None


def _in_region_of(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    parent = owner if isinstance(owner, Operation) else owner.parent_op()
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op()
    return False


def _kernel_of(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not is_kernel_like(parent):
        parent = parent.parent_op()
    return parent


def _synchronizes_grid(op: Operation) -> bool:
    from irgl_dialect.kernels import KernelOp

    kernel = _kernel_of(op)
    if isinstance(kernel, KernelOp):
        return kernel_uses_grid_sync(kernel)
    launch = LaunchAttr.of(kernel)
    return launch is not None and launch.cooperative


def _eligible(loop: ForAllOp) -> bool:
    if loop.iterator.data != IteratorKind.EDGES or kernel_kind_of(loop) != "plain":
        return False
    foralls = enclosing_foralls(loop)
    if len(foralls) != 1 or loop.parent_op() is not foralls[0]:
        return False
    outer = foralls[0]
    if _synchronizes_grid(outer):
        return False
    varies = lambda v: _in_region_of(v, outer) and not _in_region_of(v, loop)  # noqa: E731
    return per_thread_values(loop, varies) is not None


@dataclass(frozen=True)
class IrglNestedParallelism(ModulePass):
    """Mark edge loops for block/warp/thread scheduling (see the module
    docstring); convert-irgl-loops lowers them."""

    name = "irgl-nested-parallelism"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, ForAllOp)]:
            if _eligible(loop):
                NestedEdgesAttr().attach(loop)
