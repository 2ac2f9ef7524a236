"""Worklist methods (spec: MethodInvocation on WL): pop and push.

Pops read the `in` worklist of the current pipe context and pushes append to
its `out` worklist; items pushed in one invocation are popped in the next.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)

from irgl_dialect.placement import (
    RULE_POP,
    ParallelLoopInterface,
    UsesWorklist,
    in_irgl_kernel,
    kernel_construct,
    rule_error,
)


@irdl_op_definition
class PopOp(IRDLOperation):
    """The work item at a slot of the incoming worklist (spec: `wl.pop(i)`).

    %n = irgl.wl.pop %i
    """

    name = "irgl.wl.pop"

    slot = operand_def(IndexType)
    item = result_def(IndexType)

    assembly_format = "$slot attr-dict"

    traits = traits_def(kernel_construct("wl.pop"), UsesWorklist())

    def __init__(self, slot: SSAValue):
        super().__init__(operands=[slot], result_types=[IndexType()])

    def verify_(self) -> None:
        if not in_irgl_kernel(self):
            return
        owner = self.slot.owner
        loop = owner.parent_op() if isinstance(owner, Block) else None
        interface = None if loop is None else loop.get_trait(ParallelLoopInterface)
        if not (
            loop is not None
            and interface is not None
            and interface.iterates_worklist(loop)
            and self.slot is interface.index(loop)
        ):
            raise rule_error(
                self,
                "pops only the index of an enclosing `irgl.forall ... in worklist`",
                RULE_POP,
            )


@irdl_op_definition
class PushOp(IRDLOperation):
    """Append a work item to the outgoing worklist (spec: `wl.push(x)`).

    irgl.wl.push %dst
    """

    name = "irgl.wl.push"

    item = operand_def(IndexType)

    assembly_format = "$item attr-dict"

    traits = traits_def(kernel_construct("wl.push"), UsesWorklist())

    def __init__(self, item: SSAValue):
        super().__init__(operands=[item])
