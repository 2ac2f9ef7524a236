"""Calls into the CUDA runtime, and the lowered-kernel conventions.

Patterns emit `func.call @irgl_*` and this module adds the matching external
`func.func` declaration once, in the symbol table where the call lives (the
`gpu.module` for device code, the top-level module for host code), in the
manner of xDSL's `lower-mpi`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

#: Name of the gpu.module that holds all lowered kernels.
KERNEL_MODULE = "irgl_kernels"

#: gpu.func attribute: index of the `in` worklist argument (then out, retry).
WORKLIST_ARG = "irgl.worklist_arg"
#: gpu.func attribute: index of the reduction cell argument.
CELL_ARG = "irgl.cell_arg"
#: gpu.func attribute: the kernel uses a grid barrier (cooperative launch).
GRID_SYNC = "irgl.grid_sync"
#: gpu.func attribute: the kernel pushes to the retry worklist.
USES_RETRY = "irgl.uses_retry"
#: gpu.func attribute: the block size chosen for the kernel.
BLOCK_SIZE = "irgl.block_size"
#: gpu.func attribute: CUDA __launch_bounds__ values.
LAUNCH_BOUNDS = "irgl.launch_bounds"


def fail(op: Operation, message: str) -> NoReturn:
    """Stop the pass with a diagnostic that shows `op` in its IR."""
    op.emit_error(message, PassFailedException(message))


def symbol_table_of(op: Operation) -> Operation:
    """The gpu.module or builtin.module whose symbol table `op` belongs to."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, gpu.ModuleOp | ModuleOp):
        parent = parent.parent_op()
    if parent is None:
        raise DiagnosticException(f"'{op.name}' is not inside a module")
    return parent


def declare(
    table: Operation,
    name: str,
    inputs: Sequence[Attribute],
    outputs: Sequence[Attribute],
) -> None:
    """Add `func.func private @name(inputs) -> outputs` to `table` once."""
    block = table.regions[0].block
    for existing in block.ops:
        if isinstance(existing, func.FuncOp) and existing.sym_name.data == name:
            want = func.FunctionType.from_lists(inputs, outputs)
            if existing.function_type != want:
                raise DiagnosticException(
                    f"runtime function @{name} used with two signatures: "
                    f"{existing.function_type} and {want}"
                )
            return
    decl = func.FuncOp.external(name, list(inputs), list(outputs))
    block.add_op(decl)


def call(
    name: str,
    args: Sequence[SSAValue],
    results: Sequence[Attribute],
    insert_point: InsertPoint,
    table: Operation | None = None,
) -> func.CallOp:
    """Insert `func.call @name(args)` at `insert_point` and declare `@name`
    in `table` (by default the symbol table the call ends up in; pass it when
    inserting into IR that is not attached yet)."""
    op = func.CallOp(name, list(args), list(results))
    Rewriter.insert_op(op, insert_point)
    declare(table or symbol_table_of(op), name, [a.type for a in args], results)
    return op


def int_attr(op: Operation, name: str) -> int | None:
    """An integer attribute of `op`, or None."""
    attr = op.attributes.get(name)
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return None


def set_int_attr(op: Operation, name: str, value: int) -> None:
    op.attributes[name] = IntegerAttr(value, i64)


def enclosing_gpu_func(op: Operation) -> gpu.FuncOp:
    """The lowered kernel around `op`."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, gpu.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        raise DiagnosticException(
            f"'{op.name}' must be lowered inside a kernel: "
            "run convert-irgl-kernels first"
        )
    return parent


def kernel_worklists(op: Operation) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The (in, out, retry) worklist arguments of the kernel around `op`."""
    kernel = enclosing_gpu_func(op)
    first = int_attr(kernel, WORKLIST_ARG)
    if first is None:
        raise DiagnosticException(
            f"kernel @{kernel.sym_name.data} has no worklist arguments"
        )
    args = kernel.body.block.args
    return args[first], args[first + 1], args[first + 2]


def kernel_cell(op: Operation) -> SSAValue:
    """The reduction-cell argument of the kernel around `op`."""
    kernel = enclosing_gpu_func(op)
    index = int_attr(kernel, CELL_ARG)
    if index is None:
        raise DiagnosticException(
            f"kernel @{kernel.sym_name.data} has no reduction cell argument"
        )
    return kernel.body.block.args[index]


def kernel_module(module: ModuleOp) -> gpu.ModuleOp:
    """The `gpu.module @irgl_kernels` of `module`, created on first use."""
    for op in module.body.block.ops:
        if isinstance(op, gpu.ModuleOp) and op.sym_name.data == KERNEL_MODULE:
            return op
    from xdsl.dialects.builtin import UnitAttr
    from xdsl.ir import Block, Region

    kernels = gpu.ModuleOp.create(
        properties={"sym_name": StringAttr(KERNEL_MODULE)}, regions=[Region(Block())]
    )
    module.body.block.add_op(kernels)
    module.attributes["gpu.container_module"] = UnitAttr()
    return kernels
