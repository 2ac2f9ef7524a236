"""The runtime library: every function of `cuda_emitter/runtime/irgl_runtime.cuh`
that lowered IR calls or that the runner calls through ctypes.

This is the one definition of the contract between the lowering (which
declares and calls these functions: `func.call @irgl_*`), the CUDA emitter
(which prints the calls), the runtime header (checked against this table by
`test/python/test_runtime_library.py`) and the runner (which reads
`HOST_EXPORTS` to set up ctypes).

Overloads by element type are separate entries with their own names
(`irgl_lock_try_i32` / `irgl_lock_try_i64`), so one module may use several.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from irgl_dialect.runtime import CellType, GraphHandleType, PipeType, WorklistType


class Side(Enum):
    """Where a runtime function may be called from."""

    DEVICE = "device"
    HOST = "host"
    BOTH = "host+device"


@dataclass(frozen=True)
class RuntimeFunction:
    """One runtime function: its symbol, MLIR signature and where it runs."""

    name: str
    inputs: tuple[Attribute, ...]
    outputs: tuple[Attribute, ...]
    side: Side

    @property
    def function_type(self) -> FunctionType:
        return FunctionType.from_lists(list(self.inputs), list(self.outputs))

    @property
    def c_params(self) -> tuple[str, ...]:
        """The C++ parameter types the header declares."""
        return tuple(c_type(t) for t in self.inputs)

    @property
    def c_result(self) -> str:
        """The C++ result type the header declares."""
        return c_type(self.outputs[0]) if self.outputs else "void"


def dynamic_memref(element: Attribute) -> MemRefType:
    """`memref<?xT>`: the form in which arrays cross into the runtime."""
    return MemRefType(element, [DYNAMIC_INDEX])


def c_type(type_: Attribute) -> str:
    """The C++ type of a runtime-function parameter or result of `type_`."""
    match type_:
        case IndexType():
            return "irgl_index"
        case IntegerType(width=width) if width.data == 1:
            return "bool"
        case IntegerType(width=width) if width.data in (8, 16, 32, 64):
            return f"int{width.data}_t"
        case Float32Type():
            return "float"
        case Float64Type():
            return "double"
        case MemRefType():
            return c_type(type_.element_type) + "*"
        case GraphHandleType():
            return "irgl::Graph"
        case WorklistType():
            return "irgl::Worklist"
        case PipeType():
            return "irgl::Pipe*"
        case CellType():
            return "irgl::Cell"
        case _:
            raise ValueError(f"type {type_} has no runtime C type")


def _suffix(type_: Attribute) -> str:
    """`index`, `i1`, `i32`, `f64`, ...: the name suffix of an overload."""
    if isinstance(type_, IndexType):
        return "index"
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    if isinstance(type_, Float32Type):
        return "f32"
    assert isinstance(type_, Float64Type)
    return "f64"


_index = IndexType()
_f32, _f64 = Float32Type(), Float64Type()
_graph, _wl, _pipe, _cell = GraphHandleType(), WorklistType(), PipeType(), CellType()

#: Element types of the per-thread broadcasts of nested parallelism.
BROADCAST_TYPES: tuple[Attribute, ...] = (_index, i1, i32, i64, _f32, _f64)
#: Element types of edge-loop reductions (irgl.forall ... reduce).
REDUCE_TYPES: tuple[Attribute, ...] = (_index, i32, i64, _f32, _f64)
#: Kinds of edge-loop reductions (irgl_dialect.loops.REDUCTION_KINDS).
REDUCE_KINDS: tuple[str, ...] = ("add", "min", "max")
#: Bitwise warp reductions (integers only): reduction loops split over a
#: warp (convert-irgl-exclusive `warp_alone`).
BITWISE_KINDS: tuple[str, ...] = ("or", "and", "xor")
#: Element types of the bitwise warp reductions.
BITWISE_TYPES: tuple[Attribute, ...] = (_index, i32, i64)
#: Element types of lock words (`irgl.atomic` locks arrays).
LOCK_TYPES: tuple[Attribute, ...] = (i32, i64)
#: Element types of arrays that can fill a pipe's initial worklist.
INITIAL_ARRAY_TYPES: tuple[Attribute, ...] = (i32, _index)
#: Types of the carried results a control kernel hands back to the host, and
#: of the device-array elements host code loads and stores.
DEVICE_READ_TYPES: tuple[Attribute, ...] = (i1, i8, i16, i32, i64, _index, _f32, _f64)
#: Element types of arrays the irgl_dist ops synchronize on several GPUs.
DIST_ARRAY_TYPES: tuple[Attribute, ...] = (i32, i64, _index, _f32, _f64)
#: Types of host values `irgl_dist.allreduce` combines on several GPUs.
DIST_VALUE_TYPES: tuple[Attribute, ...] = (i1, i32, i64, _index, _f32, _f64)
#: The prefix of every runtime function of the IRGL_DISTRIBUTED section: a
#: module that calls one is compiled with NCCL (cuda target).
DIST_PREFIX = "irgl_dist_"


def _fn(
    name: str,
    inputs: tuple[Attribute, ...],
    outputs: tuple[Attribute, ...] = (),
    side: Side = Side.DEVICE,
) -> RuntimeFunction:
    return RuntimeFunction(name, inputs, outputs, side)


def _functions() -> list[RuntimeFunction]:
    d, h, b = Side.DEVICE, Side.HOST, Side.BOTH
    fns = [
        # graph accessors
        _fn("irgl_graph_num_nodes", (_graph,), (_index,), b),
        _fn("irgl_graph_num_edges", (_graph,), (_index,), b),
        _fn("irgl_graph_first_edge", (_graph, _index), (_index,), d),
        _fn("irgl_graph_last_edge", (_graph, _index), (_index,), d),
        _fn("irgl_graph_degree", (_graph, _index), (_index,), d),
        _fn("irgl_graph_max_degree", (_graph,), (_index,), b),
        _fn("irgl_graph_edge_dst", (_graph, _index), (_index,), d),
        _fn("irgl_graph_edge_weight", (_graph, _index), (i32,), d),
        _fn("irgl_graph_capacity", (_graph,), (_index,), b),
        # worklists (device side)
        _fn("irgl_wl_size", (_wl,), (_index,), d),
        _fn("irgl_wl_item", (_wl, _index), (_index,), d),
        _fn("irgl_wl_push", (_wl, _index), (), d),
        _fn("irgl_wl_block_begin", (i1,), (), d),
        _fn("irgl_wl_push_block", (_wl, _index, i1), (), d),
        _fn("irgl_wl_block_flush", (_wl, i1), (), d),
        # retry backoff (convert-irgl-loops / -orchestration `retry_backoff`)
        _fn("irgl_wl_retry_round", (_wl,), (_index,), b),
        _fn("irgl_backoff_chunk", (_index, _index), (_index,), b),
        _fn("irgl_wl_next_round", (_wl, _wl), (_wl,), b),
        _fn("irgl_wl_first_round", (_wl,), (_wl,), b),
        _fn("irgl_pipe_backoff_grid", (_pipe, _index, _index), (_index,), h),
        # reduction cells
        _fn("irgl_cell_reduce", (_cell, i1), (), d),
        _fn("irgl_cell_block_begin", (_cell,), (), d),
        _fn("irgl_cell_reduce_block", (_cell, i1), (), d),
        _fn("irgl_cell_block_flush", (_cell,), (), d),
        _fn("irgl_cell_create", (i1,), (_cell,), h),
        _fn("irgl_cell_reset", (_cell,), (), h),
        _fn("irgl_cell_read", (_cell,), (i1,), h),
        _fn("irgl_cell_destroy", (_cell,), (), h),
        # locks (Atomic) and claims (Exclusive)
        *(
            f
            for t in LOCK_TYPES
            for f in (
                _fn(f"irgl_lock_try_{_suffix(t)}", (dynamic_memref(t), _index), (i1,)),
                _fn(f"irgl_lock_release_{_suffix(t)}", (dynamic_memref(t), _index)),
                _fn(f"irgl_ticket_acquire_{_suffix(t)}", (dynamic_memref(t), _index)),
                _fn(f"irgl_ticket_release_{_suffix(t)}", (dynamic_memref(t), _index)),
            )
        ),
        _fn("irgl_claim_write", (dynamic_memref(i32), _index, i32)),
        _fn("irgl_claim_raise", (dynamic_memref(i32), _index, i32)),
        _fn("irgl_claim_read", (dynamic_memref(i32), _index), (i32,)),
        # Exclusive with claim locks (conflicts retried in place)
        _fn("irgl_claim_priority", (_index, _index), (i32,), b),
        _fn("irgl_claim_try", (dynamic_memref(i32), _index, i32), (i1,)),
        _fn("irgl_claim_lock", (dynamic_memref(i32), _index, i32), (i1,)),
        _fn("irgl_claim_commit", (dynamic_memref(i32), _index, i32), (i1,)),
        _fn("irgl_claim_unlock", (dynamic_memref(i32), _index, i32)),
        _fn("irgl_retry_pause", (_index,)),
        _fn("irgl_grid_sync", ()),
        _fn("irgl_global_thread_id", (), (_index,)),
        _fn("irgl_global_num_threads", (), (_index,)),
        # warp and block cooperation (nested parallelism)
        _fn("irgl_warp_active", (), (i32,)),
        _fn("irgl_warp_ballot", (i32, i1), (i32,)),
        _fn("irgl_warp_first", (i32,), (i32,)),
        _fn("irgl_warp_is_lane", (i32,), (i1,)),
        _fn("irgl_warp_rank", (i32,), (_index,)),
        _fn("irgl_warp_size", (i32,), (_index,)),
        _fn("irgl_warp_sync", (i32,)),
        *(
            _fn(f"irgl_warp_reduce_{k}_{_suffix(t)}", (i32, t), (t,))
            for k in BITWISE_KINDS
            for t in BITWISE_TYPES
        ),
        *(
            _fn(f"irgl_warp_shfl_{_suffix(t)}", (i32, t, i32), (t,))
            for t in BROADCAST_TYPES
        ),
        _fn("irgl_block_elect", (i1,), (i32,)),
        _fn("irgl_block_sync", ()),
        *(
            _fn(f"irgl_block_reduce_{k}_{_suffix(t)}", (t,), (t,))
            for k in BITWISE_KINDS
            for t in BITWISE_TYPES
        ),
        *(
            _fn(f"irgl_block_bcast_{_suffix(t)}", (t, i32), (t,))
            for t in BROADCAST_TYPES
        ),
        # grid phase of shared edge loops (nested parallelism)
        _fn("irgl_grid_donate", (i32, _index, _index), (i32,)),
        *(
            f
            for t in BROADCAST_TYPES
            for f in (
                _fn(f"irgl_grid_put_{_suffix(t)}", (i32, i32, t)),
                _fn(f"irgl_grid_get_{_suffix(t)}", (i32, i32), (t,)),
            )
        ),
        _fn("irgl_grid_publish", (i32,)),
        _fn("irgl_grid_take", (i32,), (i32,)),
        _fn("irgl_grid_start", (), (_index,)),
        _fn("irgl_grid_end", (), (_index,)),
        _fn("irgl_grid_done", (i32,)),
        _fn("irgl_grid_finish", (i32,)),
        # reductions of shared edge loops (nested parallelism), the grid
        # phase's accumulators included
        *(
            f
            for k in REDUCE_KINDS
            for t in REDUCE_TYPES
            for f in (
                _fn(f"irgl_warp_reduce_{k}_{_suffix(t)}", (i32, t), (t,)),
                _fn(f"irgl_block_reduce_{k}_{_suffix(t)}", (t,), (t,)),
                _fn(f"irgl_grid_combine_{k}_{_suffix(t)}", (i32, t)),
            )
        ),
        *(
            f
            for t in REDUCE_TYPES
            for f in (
                _fn(f"irgl_grid_acc_init_{_suffix(t)}", (i32, t)),
                _fn(f"irgl_grid_finish_{_suffix(t)}", (i32,), (t,)),
            )
        ),
        # warp gather of small edge lists (nested parallelism, warp_gather)
        _fn("irgl_warp_exscan_index", (i32, _index), (_index,)),
        _fn("irgl_warp_owner", (i32, _index, _index), (i32,)),
        *(
            _fn(
                f"irgl_warp_segment_{k}_{_suffix(t)}",
                (i32, t, i32, _index, _index, _index, t),
                (t,),
            )
            for k in REDUCE_KINDS
            for t in REDUCE_TYPES
        ),
        # pipe contexts (host side)
        _fn("irgl_pipe_create", (_index,), (_pipe,), h),
        _fn("irgl_pipe_destroy", (_pipe,), (), h),
        _fn("irgl_pipe_in", (_pipe,), (_wl,), h),
        _fn("irgl_pipe_out", (_pipe,), (_wl,), h),
        _fn("irgl_pipe_retry", (_pipe,), (_wl,), h),
        _fn("irgl_pipe_push_initial", (_pipe, _index), (), h),
        *(
            _fn(
                f"irgl_pipe_init_from_array_{_suffix(t)}",
                (_pipe, dynamic_memref(t), _index),
                (),
                h,
            )
            for t in INITIAL_ARRAY_TYPES
        ),
        _fn("irgl_pipe_advance", (_pipe,), (), h),
        _fn("irgl_pipe_advance_retry", (_pipe,), (), h),
        _fn("irgl_pipe_in_size", (_pipe,), (_index,), h),
        _fn("irgl_pipe_out_size", (_pipe,), (_index,), h),
        _fn("irgl_pipe_retry_size", (_pipe,), (_index,), h),
        # outlined iterations (irgl-outline-iterations): control kernels
        _fn("irgl_is_first_thread", (), (i1,)),
        _fn("irgl_ctl_clear", (_wl,)),
        _fn("irgl_ctl_size", (_wl,), (_index,)),
        _fn("irgl_ctl_cell_slot", (_cell, _index), (_cell,)),
        _fn("irgl_ctl_cell_prepare", (_cell, _index)),
        _fn("irgl_ctl_cell_value", (_cell,), (i1,)),
        _fn("irgl_ctl_size_check", (_wl, dynamic_memref(i32)), (_index,)),
        _fn(
            "irgl_ctl_drain_losers",
            (_wl, dynamic_memref(i32), _index, _index),
            (_index,),
        ),
        _fn("irgl_ctl_clock", (), (i64,)),
        _fn("irgl_ctl_small_quick", (i64, i64, dynamic_memref(i32)), (i1,)),
        _fn("irgl_ctl_small_allowed", (dynamic_memref(i32),), (i1,)),
        _fn("irgl_ctl_small_fits", (_wl, _index, _index, _graph, i64), (i1,)),
        _fn("irgl_sync_blocks", (_index,)),
        _fn("irgl_wl_window", (_wl, _index), (_wl,)),
        _fn("irgl_ctl_drain_storm", (_index, _index), (i1,)),
        _fn("irgl_ctl_drain_window", (_index,), (_index,)),
        _fn("irgl_ctl_drain_next", (_index, _index, _index), (_index,)),
        _fn("irgl_ctl_drain_left", (_index, _index, _index, _index), (_index,)),
        _fn("irgl_ctl_drain_streak", (_index, _index, _index), (_index,)),
        _fn("irgl_ctl_drain_move", (_wl, _wl, _index)),
        _fn("irgl_ctl_drain_team", (_index, _index), (_index,)),
        _fn("irgl_ctl_drain_team_start", (_index, _index), (_index,)),
        _fn("irgl_ctl_drain_member", (_index,), (i1,)),
        _fn("irgl_ctl_team_size_check", (_wl, dynamic_memref(i32), _index), (_index,)),
        _fn(
            "irgl_ctl_team_drain_losers",
            (_wl, dynamic_memref(i32), _index, _index, _index),
            (_index,),
        ),
        _fn("irgl_ctl_team_drain_move", (_wl, _wl, _index, _index)),
        _fn("irgl_wl_create", (_index,), (_wl,), h),
        _fn("irgl_wl_destroy", (_wl,), (), h),
        _fn("irgl_cell_create_slots", (i1,), (_cell,), h),
        _fn("irgl_outline_status", (), (dynamic_memref(i32),), h),
        _fn("irgl_outline_status_release", (dynamic_memref(i32),), (), h),
        _fn("irgl_outline_finish", (dynamic_memref(i32),), (), h),
        *(
            _fn(f"irgl_device_read_{_suffix(t)}", (dynamic_memref(t),), (t,), h)
            for t in DEVICE_READ_TYPES
        ),
        *(
            _fn(
                f"irgl_device_load_{_suffix(t)}",
                (dynamic_memref(t), _index),
                (t,),
                h,
            )
            for t in DEVICE_READ_TYPES
        ),
        *(
            _fn(
                f"irgl_device_store_{_suffix(t)}", (dynamic_memref(t), _index, t), (), h
            )
            for t in DEVICE_READ_TYPES
        ),
        # several GPUs (convert-irgl-dist; the IRGL_DISTRIBUTED section)
        _fn("irgl_dist_local_node", (_index,), (_index,), h),
        _fn("irgl_dist_global_id", (_index,), (_index,), d),
        _fn("irgl_dist_num_masters", (), (_index,), b),
        _fn("irgl_dist_push_mirror", (_index,), (), d),
        _fn("irgl_dist_sync_worklist", (_pipe,), (), h),
        _fn("irgl_dist_sync_worklist_every_master", (_pipe,), (), h),
        _fn("irgl_dist_initial_worklist", (_pipe,), (), h),
        _fn("irgl_dist_empty_worklist", (_pipe,), (), h),
        _fn("irgl_dist_pipe_in_total", (_pipe,), (_index,), h),
        *(
            f
            for t in DIST_ARRAY_TYPES
            for f in (
                _fn(
                    f"irgl_dist_sync_nodes_{_suffix(t)}",
                    (dynamic_memref(t), i32),
                    (),
                    h,
                ),
                _fn(
                    f"irgl_dist_sync_worklist_reduce_{_suffix(t)}",
                    (_pipe, dynamic_memref(t), i32, i1),
                    (),
                    h,
                ),
                _fn(
                    f"irgl_dist_broadcast_nodes_{_suffix(t)}",
                    (dynamic_memref(t),),
                    (),
                    h,
                ),
                _fn(
                    f"irgl_dist_agree_nodes_{_suffix(t)}",
                    (dynamic_memref(t),),
                    (),
                    h,
                ),
                _fn(
                    f"irgl_dist_allreduce_cells_{_suffix(t)}",
                    (dynamic_memref(t), _index, i32),
                    (),
                    h,
                ),
                _fn(
                    f"irgl_dist_track_{_suffix(t)}", (dynamic_memref(t), _index), (), h
                ),
            )
        ),
        *(
            _fn(f"irgl_dist_allreduce_{_suffix(t)}", (t, i32), (t,), h)
            for t in DIST_VALUE_TYPES
        ),
    ]
    return fns


#: Every runtime function lowered IR may call, by name.
RUNTIME_FUNCTIONS: Mapping[str, RuntimeFunction] = {f.name: f for f in _functions()}


def runtime_function(name: str) -> RuntimeFunction:
    """The table entry named `name` (a KeyError names a lowering bug)."""
    return RUNTIME_FUNCTIONS[name]


def overload(prefix: str, element: Attribute) -> RuntimeFunction | None:
    """The entry `<prefix>_<suffix of element>`, or None if the runtime has no
    such overload (e.g. `overload("irgl_lock_try", i16)`)."""
    try:
        suffix = _suffix(element)
    except AssertionError:
        return None
    return RUNTIME_FUNCTIONS.get(f"{prefix}_{suffix}")


@dataclass(frozen=True)
class HostExport:
    """One `extern "C"` function of the runtime that the runner calls through
    ctypes (not from lowered IR): C result and parameter types."""

    name: str
    c_result: str
    c_params: tuple[str, ...]


#: The runtime's exported C API (`IRGL_EXPORT` in the header), by name.
HOST_EXPORTS: Mapping[str, HostExport] = {
    e.name: e
    for e in (
        HostExport("irgl_last_error", "const char*", ()),
        HostExport(
            "irgl_graph_create",
            "void*",
            (
                "int64_t",
                "int64_t",
                "const int64_t*",
                "const int64_t*",
                "const int32_t*",
            ),
        ),
        HostExport("irgl_graph_destroy", "void", ("void*",)),
        HostExport("irgl_device_alloc", "void*", ("int64_t",)),
        HostExport("irgl_device_free", "void", ("void*",)),
        HostExport("irgl_copy_to_device", "int", ("void*", "const void*", "int64_t")),
        HostExport("irgl_copy_to_host", "int", ("void*", "const void*", "int64_t")),
        HostExport("irgl_device_synchronize", "int", ()),
        HostExport("irgl_device_name", "const char*", ()),
        HostExport("irgl_device_memory", "int", ("int64_t*",)),
        HostExport("irgl_warm_up", "int", ()),
    )
}

#: The extern "C" functions of the runtime's IRGL_DISTRIBUTED section, which
#: the per-rank driver (`irgl_runner.distributed`) calls through ctypes; only
#: a library built for several GPUs has them.
DIST_EXPORTS: Mapping[str, HostExport] = {
    e.name: e
    for e in (
        HostExport("irgl_dist_get_unique_id", "int", ("char*",)),
        HostExport(
            "irgl_dist_init", "int", ("int", "int", "int", "const char*", "double")
        ),
        HostExport(
            "irgl_dist_setup",
            "int",
            (
                "int64_t",
                "int64_t",
                "int64_t",
                "const int64_t*",
                "const int64_t*",
                "const int64_t*",
                "const int64_t*",
                "const int64_t*",
                "const unsigned char*",
                "int",
            ),
        ),
        HostExport("irgl_dist_fold", "int", ("int64_t", "const int64_t*")),
        HostExport("irgl_dist_hot", "int", ("int64_t", "const int64_t*", "int64_t")),
        HostExport("irgl_dist_track", "int", ("const void*", "int64_t")),
        HostExport(
            "irgl_dist_allgather_masters",
            "int",
            ("const void*", "void*", "int64_t", "const int64_t*", "const int64_t*"),
        ),
        HostExport("irgl_dist_barrier", "int", ()),
        HostExport("irgl_dist_max_int64", "int", ("int64_t", "int64_t*")),
        HostExport("irgl_dist_stats", "int", ("double*",)),
        HostExport("irgl_dist_finalize", "int", ()),
    )
}
