"""convert-irgl-host-memory: host code reads and writes device arrays
through the runtime.

Arrays that host code holds — memref arguments of a host kernel and
`memref.alloc` results (`irgl_alloc`) — live in GPU memory, so a
`memref.load` or `memref.store` of one of their elements in host code
cannot be a plain pointer access. Each becomes a call that copies the
element:

- `%v = memref.load %a[%i]` → `%v = func.call @irgl_device_load_T(%a, %i)`
- `memref.store %v, %a[%i]` → `func.call @irgl_device_store_T(%a, %i, %v)`

(a rank-0 array is element 0 of a `memref<?xT>` cast of it). The copies run
on the default stream, after the kernels launched before them. Host-local
buffers (`memref.alloca`, and casts of one) are left as they are.

Runs on the top-level `func.func`s (host code) after
irgl-outline-iterations, so that accesses in an Iterate or Pipe body that
moved into a control kernel stay device accesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.runtime_library import overload
from lowering.runtime_calls import call, fail


def is_host_local(array: SSAValue) -> bool:
    """Whether `array` is a host-local buffer (a `memref.alloca`, possibly
    through `memref.cast`s) rather than an array in device memory."""
    while isinstance(owner := array.owner, memref.CastOp):
        array = owner.source
    return isinstance(array.owner, memref.AllocaOp)


def _element_index(
    access: memref.LoadOp | memref.StoreOp, builder: Builder
) -> SSAValue:
    """The one index of a rank-0 or rank-1 element access."""
    if access.indices:
        return access.indices[0]
    return builder.insert(arith.ConstantOp(IntegerAttr.from_index_int_value(0))).result


def _lower_access(access: memref.LoadOp | memref.StoreOp) -> None:
    array = access.memref
    type_ = array.type
    assert isinstance(type_, MemRefType)
    if type_.get_num_dims() > 1:
        return  # the emitter reports arrays of more than one dimension
    prefix = (
        "irgl_device_load" if isinstance(access, memref.LoadOp) else "irgl_device_store"
    )
    fn = overload(prefix, type_.element_type)
    if fn is None:
        fail(
            access,
            f"host code cannot access a device array of {type_.element_type} "
            "elements (supported: i1, i8, i16, i32, i64, index, f32, f64)",
        )
    builder = Builder(InsertPoint.before(access))
    index = _element_index(access, builder)
    if isinstance(access, memref.LoadOp):
        loaded = call(fn, [array, index], builder)
        Rewriter.replace_op(access, [], [loaded.res[0]])
    else:
        call(fn, [array, index, access.value], builder)
        Rewriter.erase_op(access)


@dataclass(frozen=True)
class ConvertIrglHostMemory(ModulePass):
    """Lower host code's `memref.load`/`memref.store` of device arrays to
    `irgl_device_load_T`/`irgl_device_store_T` runtime calls (see the module
    docstring)."""

    name = "convert-irgl-host-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.body.block.ops):
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            for access in list(function.walk()):
                if isinstance(
                    access, memref.LoadOp | memref.StoreOp
                ) and not is_host_local(access.memref):
                    _lower_access(access)
