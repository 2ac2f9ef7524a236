"""Calls into the CUDA runtime, and the lowered-kernel conventions.

Patterns emit `func.call @irgl_*` to functions of the runtime library
(`irgl_dialect/runtime_library.py`, the one table of their names and
signatures) and this module adds the matching external `func.func`
declaration once, in the symbol table where the call lives (the
`gpu.module` for device code, the top-level module for host code), in the
manner of xDSL's `lower-mpi`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from xdsl.builder import Builder
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import (
    FileLineColLoc,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnrankedMemRefType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

from irgl_dialect.attributes import GraphType
from irgl_dialect.runtime import GraphHandleType, LaunchAttr
from irgl_dialect.runtime_library import RuntimeFunction

#: Name of the gpu.module that holds all lowered kernels.
KERNEL_MODULE = "irgl_kernels"


def location_prefix(op: Operation) -> str:
    """`file:line:col: ` of `op`, for a remark about it; empty where it has
    no file location."""
    loc = op.location
    if not isinstance(loc, FileLineColLoc):
        return ""
    return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "


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


def declare(table: Operation, fn: RuntimeFunction) -> None:
    """Add `func.func private @fn(...)` from the runtime table to `table` once."""
    block = table.regions[0].block
    for existing in block.ops:
        if isinstance(existing, func.FuncOp) and existing.sym_name.data == fn.name:
            if existing.function_type != fn.function_type:
                existing.emit_error(
                    f"runtime function @{fn.name} is declared as "
                    f"{existing.function_type}, but the runtime library has "
                    f"{fn.function_type}",
                    PassFailedException(f"bad declaration of @{fn.name}"),
                )
            return
    block.add_op(func.FuncOp.external(fn.name, list(fn.inputs), list(fn.outputs)))


def _adapt(value: SSAValue, want: Attribute, builder: Builder, fn: str) -> SSAValue:
    """`value` as an argument of type `want`: a static-shaped array becomes
    `memref<?xT>` (`memref.cast`; a rank-0 one through `memref<*xT>`, as
    ranked-to-ranked casts keep the rank), an `!irgl.graph` its runtime
    handle (an `unrealized_conversion_cast` that convert-irgl-graph folds
    away)."""
    have = value.type
    if have == want:
        return value
    if (
        isinstance(have, MemRefType)
        and isinstance(want, MemRefType)
        and have.element_type == want.element_type
        and len(have.get_shape()) <= 1
    ):
        if not have.get_shape():
            unranked = UnrankedMemRefType.from_type(have.element_type)
            value = builder.insert(memref.CastOp.get(value, unranked)).dest
        return builder.insert(memref.CastOp.get(value, want)).dest
    if isinstance(want, GraphHandleType) and isinstance(have, GraphType):
        cast = UnrealizedConversionCastOp.get([value], [want])
        return builder.insert(cast).results[0]
    raise DiagnosticException(
        f"runtime function @{fn} takes {want}, but is called with {have}"
    )


def call(
    fn: RuntimeFunction,
    args: Sequence[SSAValue],
    builder: Builder,
    table: Operation | None = None,
) -> func.CallOp:
    """Insert `func.call @fn(args)` with `builder` and declare `@fn` from the
    runtime table in `table` (by default the symbol table the call ends up
    in; pass it when building IR that is not attached yet)."""
    if len(args) != len(fn.inputs):
        raise DiagnosticException(
            f"runtime function @{fn.name} takes {len(fn.inputs)} argument(s), "
            f"got {len(args)}"
        )
    operands = [
        _adapt(a, t, builder, fn.name) for a, t in zip(args, fn.inputs, strict=True)
    ]
    op = builder.insert(func.CallOp(fn.name, operands, list(fn.outputs)))
    declare(table or symbol_table_of(op), fn)
    return op


def call_at(
    fn: RuntimeFunction, args: Sequence[SSAValue], at: InsertPoint
) -> func.CallOp:
    """`call` at an insertion point of attached IR."""
    return call(fn, args, Builder(at))


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


def every_thread_reaches_end(kernel: gpu.FuncOp) -> bool:
    """Every `gpu.return` of `kernel` is at the top level of its body, so
    every thread of a block reaches code placed before it (block-wide
    begin/flush calls)."""
    block = kernel.body.block
    return all(
        op.parent_block() is block
        for op in kernel.walk()
        if isinstance(op, gpu.ReturnOp)
    )


def kernel_worklists(op: Operation) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The (in, out, retry) worklist arguments of the kernel around `op`."""
    kernel = enclosing_gpu_func(op)
    launch = LaunchAttr.of(kernel)
    first = None if launch is None else launch.worklist
    if first is None:
        raise DiagnosticException(
            f"kernel @{kernel.sym_name.data} has no worklist arguments"
        )
    args = kernel.body.block.args
    return args[first], args[first + 1], args[first + 2]


def kernel_cell(op: Operation) -> SSAValue:
    """The reduction-cell argument of the kernel around `op`."""
    kernel = enclosing_gpu_func(op)
    launch = LaunchAttr.of(kernel)
    index = None if launch is None else launch.cell
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
