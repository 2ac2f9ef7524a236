"""convert-irgl-kernels: kernels become functions.

- plain `irgl.kernel` → `gpu.func ... kernel` in `gpu.module @irgl_kernels`,
  with the runtime arguments it needs appended: the `in`, `out` and `retry`
  worklists when it uses the worklist, a reduction cell when it uses
  ReduceAndReturn. Attributes record where they are and how the kernel must
  be launched (block size, launch bounds, grid barrier) in one
  `#irgl_rt.launch<...>` attribute.
- device `irgl.kernel` → `func.func` in the `gpu.module` (a `__device__`
  function);
- host `irgl.kernel` → top-level `func.func`;
- `irgl.call` of a device kernel → `func.call` of its `__device__` function;
- `func.func` helpers that plain or device kernels call (transitively) →
  cloned into the `gpu.module` (`__device__` functions). A helper stays at
  the top level too where host code calls it or it is public (an entry
  point); a private helper that only device code calls is moved.

Kernel bodies are moved unchanged; later passes lower the constructs in them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgl_dialect.attributes import KernelKind
from irgl_dialect.kernels import CallOp, KernelOp, ReturnOp
from irgl_dialect.placement import (
    kernel_reduces,
    kernel_uses_grid_sync,
    kernel_uses_retry,
    kernel_uses_worklist,
)
from irgl_dialect.runtime import CellType, LaunchAttr, WorklistType
from lowering.block_size import check_block_size_option, choose_block_size
from lowering.runtime_calls import kernel_module


def _lower_plain(kernel: KernelOp, container: gpu.ModuleOp, default_block: int) -> None:
    uses_worklist = kernel_uses_worklist(kernel)
    reduces = kernel_reduces(kernel)
    body = kernel.body.clone()
    block = body.block
    inputs: list[Attribute] = list(kernel.function_type.inputs.data)
    worklist_arg = cell_arg = None
    if uses_worklist:
        worklist_arg = len(inputs)
        for _ in range(3):
            block.insert_arg(WorklistType(), len(block.args))
            inputs.append(WorklistType())
    if reduces:
        cell_arg = len(inputs)
        block.insert_arg(CellType(), len(block.args))
        inputs.append(CellType())
    for op in list(block.walk()):
        if isinstance(op, ReturnOp):
            Rewriter.replace_op(op, gpu.ReturnOp([]))
    lowered = gpu.FuncOp(kernel.sym_name.data, (inputs, []), body, kernel=True)
    bounds = None
    if kernel.launch_bounds is not None:
        bounds = tuple(int(v) for v in kernel.launch_bounds.get_values())
    LaunchAttr(
        choose_block_size(bounds, default_block),
        worklist_arg=worklist_arg,
        cell_arg=cell_arg,
        launch_bounds=bounds or (),
        grid_sync=kernel_uses_grid_sync(kernel),
        uses_retry=kernel_uses_retry(kernel),
    ).attach(lowered)
    container.body.block.add_op(lowered)
    Rewriter.erase_op(kernel)


def _lower_function(kernel: KernelOp, container: gpu.ModuleOp | None) -> None:
    body = kernel.body.clone()
    for op in list(body.walk()):
        if isinstance(op, ReturnOp):
            Rewriter.replace_op(op, func.ReturnOp(*op.values))
    function = func.FuncOp(
        kernel.sym_name.data,
        (
            list(kernel.function_type.inputs.data),
            list(kernel.function_type.outputs.data),
        ),
        body,
    )
    if container is None:
        Rewriter.replace_op(kernel, function)
    else:
        container.body.block.add_op(function)
        Rewriter.erase_op(kernel)


def _called_helpers(module: ModuleOp, roots: Iterable[Operation]) -> list[func.FuncOp]:
    """The top-level `func.func`s with a body that `roots` call, directly or
    through each other, in module order."""
    helpers = {
        f.sym_name.data: f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp) and not f.is_declaration
    }
    found: set[str] = set()
    work = list(roots)
    while work:
        for op in work.pop().walk():
            if not isinstance(op, func.CallOp):
                continue
            name = op.callee.root_reference.data
            if name in helpers and name not in found:
                found.add(name)
                work.append(helpers[name])
    return [f for f in helpers.values() if f.sym_name.data in found]


def _is_public(function: func.FuncOp) -> bool:
    """Public top-level functions are entry points of the host code."""
    visibility = function.sym_visibility
    return visibility is None or visibility.data != "private"


def _move_helpers(
    module: ModuleOp, kernels: list[KernelOp], container: gpu.ModuleOp
) -> None:
    """Give device code the `func.func` helpers it calls (see the module
    docstring)."""
    device = [k for k in kernels if k.kernel_kind != KernelKind.HOST]
    on_device = _called_helpers(module, device)
    if not on_device:
        return
    host_roots: list[Operation] = [
        k for k in kernels if k.kernel_kind == KernelKind.HOST
    ]
    host_roots += [
        f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp) and not f.is_declaration and _is_public(f)
    ]
    on_host = set(_called_helpers(module, host_roots)) | set(host_roots)
    for helper in on_device:
        container.body.block.add_op(helper.clone())
        if helper not in on_host:
            Rewriter.erase_op(helper)


def _lower_device_calls(container: gpu.ModuleOp) -> None:
    """`irgl.call` of a device kernel → `func.call` of its device function."""
    for op in list(container.walk()):
        if isinstance(op, CallOp):
            Rewriter.replace_op(op, func.CallOp(op.callee, op.arguments, op.res.types))


@dataclass(frozen=True)
class ConvertIrglKernels(ModulePass):
    """Lower irgl.kernel ops to gpu.func kernels, device functions and host
    functions (see the module docstring).

    Option: `block_size` (int, 256): block size of kernels without launch
    bounds, a power of two from 32 to 1024
    (`-p 'convert-irgl-kernels{block_size=128}'`).
    """

    name = "convert-irgl-kernels"

    block_size: int = 256
    """Block size of kernels without constraints (ElasticBlock kernels)."""

    def __post_init__(self) -> None:
        check_block_size_option(self.block_size, "convert-irgl-kernels")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.body.block.ops if isinstance(k, KernelOp)]
        if not kernels:
            return
        container = kernel_module(op)
        _move_helpers(op, kernels, container)
        for kernel in kernels:
            kind = kernel.kernel_kind
            if kind == KernelKind.PLAIN:
                _lower_plain(kernel, container, self.block_size)
            elif kind == KernelKind.DEVICE:
                _lower_function(kernel, container)
            else:
                _lower_function(kernel, None)
        _lower_device_calls(container)
