"""irgl-outline-kernel-bodies: the device-function form of the kernels that
control kernels run.

irgl-outline-iterations declares, for each kernel a control kernel invokes,
a body-less `func.func` with the attribute `#irgl_rt.device_body<@kernel>`;
at the end of `lower-irgl`, once the kernels are fully lowered, this pass
gives each declaration a clone of its kernel's body (`gpu.return` becoming
`func.return`). With `in_size` the body takes the size of `in` as a last
`index` argument, used where the kernel reads `irgl_wl_size(in)`; with
`grid` it takes the calling block and the number of blocks, used instead of
`gpu.block_id x` and `gpu.grid_dim x` (the small-worklist mode runs such a
body on block 0 alone, `lowering/outline_small_worklist.py`). A kernel that
nothing references any more (every invocation outlined into a control
kernel) is then erased: nvcc would compile it for nothing.

With `noinline_ops` = N > 0, a body of at least N operations that a control
kernel calls from two places or more (the grid-wide rounds and the
small-worklist mode's block-0 rounds) is marked `#irgl_rt.noinline`: nvcc
would otherwise compile it once per call site. BFS's two-hop body (about
1,300 operations: three edge phases of four interleaved copies, each
unrolled four times) took cicc and ptxas 7.7 s inlined twice, 5.6 s once,
but ran 3-6% slower as a call on an H200 (grid BFS: 1024x1024 5.96 ->
6.32 ms, 2048x2048 14.33 -> 14.77 ms), so it is off by default; 1000
(`COMPILE_FAST_NOINLINE_OPS`) trades that for compile time
(docs/performance-notes.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    ModuleOp,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irgl_dialect.runtime import NOINLINE_ATTR, DeviceBodyAttr
from irgl_dialect.runtime_library import runtime_function
from lowering.outline_plan import launch_of
from lowering.outline_small_worklist import needs_grid
from lowering.runtime_calls import declare, fail

#: Operations (the body's walk) from which a device body called from two
#: places or more is not inlined, when compile time matters more than the
#: run: BFS's two-hop body has about 1,300 and compiles without spills as a
#: function; its top-down body (about 800) spilled as one, and every other
#: benchmark's body has at most 409.
COMPILE_FAST_NOINLINE_OPS = 1000
#: The default: every body inlined (the call cost BFS on grids 3-6%).
NOINLINE_OPS = 0


@dataclass(frozen=True)
class OutlineKernelBodies(ModulePass):
    """Give the device functions declared by irgl-outline-iterations the
    lowered bodies of their kernels (run after the kernels are lowered).
    With `in_size` the body takes the size of `in` as a last argument and
    uses it where the kernel reads `irgl_wl_size(in)`. Kernels no launch
    refers to any more are erased."""

    name = "irgl-outline-kernel-bodies"

    noinline_ops: int = NOINLINE_OPS
    """Operations from which a body called from two places or more is marked
    `#irgl_rt.noinline` (0: never)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = {
            k.sym_name.data: k
            for m in op.body.block.ops
            if isinstance(m, gpu.ModuleOp)
            for k in m.body.block.ops
            if isinstance(k, gpu.FuncOp)
        }
        outlined: set[str] = set()
        calls = _call_sites(op)
        for module in op.body.block.ops:
            if not isinstance(module, gpu.ModuleOp):
                continue
            for decl in list(module.body.block.ops):
                if not isinstance(decl, func.FuncOp):
                    continue
                body_of = DeviceBodyAttr.of(decl)
                if body_of is None:
                    continue
                kernel = kernels.get(body_of.kernel_name)
                if kernel is None:
                    fail(
                        decl,
                        f"@{decl.sym_name.data} is the body of "
                        f"@{body_of.kernel_name}, which is not a kernel",
                    )
                body = kernel.body.clone()
                for inner in list(body.walk()):
                    if isinstance(inner, gpu.ReturnOp):
                        Rewriter.replace_op(inner, func.ReturnOp())
                inputs = list(kernel.function_type.inputs.data)
                if body_of.in_size:
                    inputs.append(IndexType())
                    _size_from_argument(kernel, decl, body)
                if body_of.grid:
                    inputs += [IndexType(), IndexType()]
                    _grid_from_arguments(decl, body, module)
                if list(decl.function_type.inputs.data) != inputs:
                    extras = [
                        *(["the size of in"] if body_of.in_size else []),
                        *(
                            ["the block and the number of blocks"]
                            if body_of.grid
                            else []
                        ),
                    ]
                    fail(
                        decl,
                        f"@{decl.sym_name.data} must take the arguments of "
                        f"@{body_of.kernel_name}"
                        + (f" and {' and '.join(extras)} (index)" if extras else ""),
                    )
                function = func.FuncOp(
                    decl.sym_name.data, (inputs, []), body, visibility="private"
                )
                if (
                    self.noinline_ops > 0
                    and calls.get(decl.sym_name.data, 0) >= 2
                    and _size(body) >= self.noinline_ops
                ):
                    function.attributes[NOINLINE_ATTR] = UnitAttr()
                Rewriter.replace_op(decl, function)
                outlined.add(body_of.kernel_name)
        _erase_unlaunched(op, [kernels[name] for name in sorted(outlined)])


def _call_sites(op: ModuleOp) -> dict[str, int]:
    """How many `func.call`s of `op` call each function, by name."""
    calls: dict[str, int] = {}
    for inner in op.walk():
        if isinstance(inner, func.CallOp):
            name = inner.callee.root_reference.data
            calls[name] = calls.get(name, 0) + 1
    return calls


def _size(body: Region) -> int:
    """The operations of `body`, nested ones included."""
    return sum(1 for block in body.blocks for top in block.ops for _ in top.walk())


def _referenced_symbols(op: ModuleOp) -> set[str]:
    """The leaf names of every symbol reference in `op`'s attributes and
    properties (launches, grid sizes, calls, ...)."""
    names: set[str] = set()

    def visit(attr: Attribute) -> None:
        if isinstance(attr, SymbolRefAttr):
            names.add((attr.nested_references.data or (attr.root_reference,))[-1].data)
        elif isinstance(attr, ArrayAttr | DictionaryAttr):
            values = (
                attr.data.values() if isinstance(attr, DictionaryAttr) else attr.data
            )
            for value in values:
                visit(value)

    for inner in op.walk():
        for attr in (*inner.attributes.values(), *inner.properties.values()):
            visit(attr)
    return names


def _erase_unlaunched(op: ModuleOp, kernels: list[gpu.FuncOp]) -> None:
    """Erase the kernels every invocation of which a control kernel runs
    through their device bodies: nothing launches them any more, and nvcc
    would compile them for nothing (BFS: three kernels, 2,300 lines)."""
    used = _referenced_symbols(op)
    for kernel in kernels:
        if kernel.sym_name.data not in used:
            Rewriter.erase_op(kernel)


def _size_from_argument(kernel: gpu.FuncOp, decl: func.FuncOp, body: Region) -> None:
    """Append an `index` argument to `body` (a clone of `kernel`'s) and use
    it instead of every `irgl_wl_size(in)` call."""
    first = launch_of(kernel).worklist
    if first is None:
        fail(
            decl,
            f"@{decl.sym_name.data} takes the size of in, but "
            f"@{kernel.sym_name.data} has no worklist",
        )
    block = body.block
    size = block.insert_arg(IndexType(), len(block.args))
    wl_size = runtime_function("irgl_wl_size").name
    for use in list(block.args[first].uses):
        call = use.operation
        if isinstance(call, func.CallOp) and call.callee.string_value() == wl_size:
            Rewriter.replace_op(call, [], [size])


def _grid_from_arguments(decl: func.FuncOp, body: Region, module: gpu.ModuleOp) -> None:
    """Append two `index` arguments to `body` (the calling block and the
    number of blocks) and use them instead of `gpu.block_id x` and
    `gpu.grid_dim x`, so that the caller decides which grid the body maps
    its iterations over, and its grid barriers (an Exclusive's phases,
    SyncRunningThreads) become `irgl_sync_blocks(number of blocks)`: block
    barriers where block 0 runs it alone. Fails on code that would still see
    the launch's whole grid (irgl-outline-iterations only grids bodies
    without it)."""
    functions = {
        op.sym_name.data: op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op is not decl
    }
    block = body.block
    index = block.insert_arg(IndexType(), len(block.args))
    count = block.insert_arg(IndexType(), len(block.args))
    grid_sync = runtime_function("irgl_grid_sync").name
    for op in list(body.walk()):
        if isinstance(op, func.CallOp) and op.callee.string_value() == grid_sync:
            sync = runtime_function("irgl_sync_blocks")
            Rewriter.replace_op(op, func.CallOp(sync.name, [count], []))
            declare(module, sync)
    why = next(
        (w for o in body.block.ops if (w := needs_grid(o, functions, set()))),
        None,
    )
    if why is not None:
        fail(
            decl,
            f"@{decl.sym_name.data} runs in block 0 alone (the small-worklist "
            f"mode, a retry drain) but needs the whole grid: {why}",
        )
    for op in list(body.walk()):
        if not isinstance(op, gpu.BlockIdOp | gpu.GridDimOp):
            continue
        if op.dimension.data != gpu.DimensionEnum.X:
            continue
        Rewriter.replace_op(op, [], [index if isinstance(op, gpu.BlockIdOp) else count])
