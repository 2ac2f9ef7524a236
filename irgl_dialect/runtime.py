"""The `irgl_rt` dialect: the runtime level that `lower-irgl` produces.

After lowering, IrGL programs are made of `gpu`, `func`, `scf`, `arith` and
`memref` operations plus `func.call`s to functions of the CUDA runtime
(`cuda_emitter/runtime/irgl_runtime.cuh`). This small dialect holds what those
dialects cannot express:

- the opaque runtime handle types (a CSR graph, a worklist, a pipe context, an
  Any/All reduction cell), printed by the emitter as the runtime's C++ structs;
- `irgl_rt.grid_size`, the occupancy-derived grid size of one kernel;
- the C escape hatch (`irgl_rt.c_block`, `irgl_rt.c_expr`, `irgl_rt.c_decl`,
  `irgl_rt.c_global`), which carries C text through to the emitter.

Runtime calls are plain `func.call`s to external `func.func` declarations whose
names start with `irgl_`; the emitter prints them as C++ calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    IndexType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class GraphHandleType(ParametrizedAttribute, TypeAttribute):
    """A CSR graph resident on the device (`irgl::Graph`, passed by value)."""

    name = "irgl_rt.graph"


@irdl_attr_definition
class WorklistType(ParametrizedAttribute, TypeAttribute):
    """One device worklist (`irgl::Worklist`: items, atomic tail, capacity)."""

    name = "irgl_rt.worklist"


@irdl_attr_definition
class PipeType(ParametrizedAttribute, TypeAttribute):
    """A host-side pipe context holding the in, out and retry worklists."""

    name = "irgl_rt.pipe"


@irdl_attr_definition
class CellType(ParametrizedAttribute, TypeAttribute):
    """A device cell in which a kernel's ReduceAndReturn values are reduced."""

    name = "irgl_rt.cell"


@irdl_op_definition
class GridSizeOp(IRDLOperation):
    """The number of blocks to launch `kernel` with `block` threads per block.

    Without `resident` the emitter asks the occupancy API for the number of
    blocks that fit on the GPU at once and launches that many (a full wave).
    With `resident` the kernel uses a grid barrier: the same number is used and
    the launch is cooperative, so every block is co-resident.
    """

    name = "irgl_rt.grid_size"

    kernel = prop_def(SymbolRefAttr)
    block = operand_def(IndexType)
    resident = opt_prop_def(UnitAttr)
    result = result_def(IndexType)

    assembly_format = "$kernel `,` $block (`resident` $resident^)? attr-dict"

    def __init__(
        self, kernel: SymbolRefAttr, block: SSAValue, *, resident: bool = False
    ):
        super().__init__(
            operands=[block],
            properties={
                "kernel": kernel,
                "resident": UnitAttr() if resident else None,
            },
            result_types=[IndexType()],
        )


def check_placeholders(text: str, count: int, op_name: str) -> None:
    """`$0` .. `$<count-1>` each appear in `text`, and no other `$N` does."""
    used = {int(n) for n in re.findall(r"\$(\d+)", text)}
    for index in range(count):
        if index not in used:
            raise VerifyException(
                f"'{op_name}' operand {index} is never used: the C text has no ${index}"
            )
    extra = sorted(n for n in used if n >= count)
    if extra:
        raise VerifyException(
            f"'{op_name}' C text names ${extra[0]}, but the op has only {count} "
            "operand(s)"
        )


@irdl_op_definition
class CBlockOp(IRDLOperation):
    """C statements copied verbatim; `$0`, `$1`, ... name the operands."""

    name = "irgl_rt.c_block"

    text = prop_def(StringAttr)
    args = var_operand_def()

    assembly_format = "$text (`(` $args^ `:` type($args) `)`)? attr-dict"

    def __init__(self, text: str, args: Sequence[SSAValue] = ()):
        super().__init__(operands=[args], properties={"text": StringAttr(text)})

    def verify_(self) -> None:
        check_placeholders(self.text.data, len(self.args), self.name)


class CExprBase(IRDLOperation):
    """A C expression of the result type; `$0`, `$1`, ... name the operands
    (shared by `irgl.cexpr` and `irgl_rt.c_expr`)."""

    text = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()

    assembly_format = (
        "$text (`(` $args^ `:` type($args) `)`)? attr-dict `:` type($result)"
    )

    def __init__(self, text: str, args: Sequence[SSAValue], result_type: Attribute):
        super().__init__(
            operands=[args],
            properties={"text": StringAttr(text)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        check_placeholders(self.text.data, len(self.args), self.name)


@irdl_op_definition
class CExprOp(CExprBase):
    """A C expression of the result type; `$0`, `$1`, ... name the operands."""

    name = "irgl_rt.c_expr"


@irdl_op_definition
class CDeclOp(IRDLOperation):
    """A C variable declaration `type name [= init];` at this point of a body."""

    name = "irgl_rt.c_decl"

    c_type = prop_def(StringAttr)
    var_name = prop_def(StringAttr)
    init = opt_prop_def(StringAttr)

    assembly_format = "$c_type $var_name (`=` $init^)? attr-dict"

    def __init__(self, c_type: str, var_name: str, init: str | None = None):
        super().__init__(
            properties={
                "c_type": StringAttr(c_type),
                "var_name": StringAttr(var_name),
                "init": StringAttr(init) if init is not None else None,
            }
        )


@irdl_op_definition
class CGlobalOp(IRDLOperation):
    """C text placed at file scope of the emitted CUDA file, before kernels.

    `device` makes declared variables `__device__` globals.
    """

    name = "irgl_rt.c_global"

    text = prop_def(StringAttr)
    device = opt_prop_def(UnitAttr)

    assembly_format = "(`device` $device^)? $text attr-dict"

    def __init__(self, text: str, *, device: bool = False):
        super().__init__(
            properties={
                "text": StringAttr(text),
                "device": UnitAttr() if device else None,
            }
        )


IrglRuntime = Dialect(
    "irgl_rt",
    [GridSizeOp, CBlockOp, CExprOp, CDeclOp, CGlobalOp],
    [GraphHandleType, WorklistType, PipeType, CellType],
)
