"""Helpers shared by irgl-nested-parallelism (which marks edge loops) and
convert-irgl-nested-edges (which lowers them): which values of a loop body
differ between threads and can be broadcast."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from irgl_dialect.loops import ForAllOp
from irgl_dialect.runtime_library import BROADCAST_TYPES

#: Nodes with at least this many edges are shared by a warp.
WARP_THRESHOLD = 32


def can_broadcast(t: Attribute) -> bool:
    """Does the runtime have block and warp broadcasts of values of type `t`?"""
    return t in BROADCAST_TYPES


def per_thread_values(
    loop: ForAllOp, varies: Callable[[SSAValue], bool]
) -> list[SSAValue] | None:
    """Values the loop body uses that differ between threads (`varies`);
    None if one of them cannot be broadcast."""
    found: dict[SSAValue, None] = {}
    for op in loop.body.walk():
        for operand in op.operands:
            if not varies(operand) or isinstance(operand.owner, arith.ConstantOp):
                continue
            if not can_broadcast(operand.type):
                return None
            found[operand] = None
    return list(found)
