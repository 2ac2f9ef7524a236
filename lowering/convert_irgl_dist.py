"""convert-irgl-dist and convert-irgl-dist-orchestration: the `irgl_dist` ops
(inserted by `irgl-distribute`) become calls of the runtime's NCCL section
(`IRGL_DISTRIBUTED` in `cuda_emitter/runtime/irgl_runtime.cuh`), which
implements the contract of `irgl_dialect/distributed.py` on one process per
GPU.

`convert-irgl-dist-orchestration` replaces convert-irgl-orchestration in a
distributed build (same lowering of Invoke, Iterate and Pipe, plus):

- `irgl_dist.sync_worklist` becomes `irgl_dist_sync_worklist(pipe)` on the
  pipe context it is in (`irgl_dist_sync_worklist_every_master(pipe)` with
  `every_master`, `irgl_dist_sync_worklist_reduce_<T>` with `reduce`);
- an Iterate or Pipe marked `#irgl_dist.across_ranks` distributes its
  initial worklist (`irgl_dist_initial_worklist(pipe)` after the pipe is
  filled: only the rank's own masters stay, then it is synchronized); one
  without initial items starts empty on every rank, and
  `irgl_dist_empty_worklist(pipe)` records that without an exchange;
- every termination test is global: each `irgl_pipe_in_size` of a host
  function (all of them are tests of "is `in` empty" of an Iterate or Pipe)
  becomes `irgl_dist_pipe_in_total(pipe)`, the size summed over the ranks
  (taken with the worklist synchronization just before it, else
  all-reduced), and an
  Iterate's Any/All aggregate read from its cell (`irgl_cell_read`) is
  all-reduced with `or`/`and` (an `irgl.invoke`'s already is, by the
  `irgl_dist.allreduce` that irgl-distribute put after it).

`convert-irgl-dist` (after it) lowers the other ops, anywhere:

- `irgl_dist.sync_nodes %a RED` -> `irgl_dist_sync_nodes_<T>(%a, RED)`;
  `irgl_dist.sync_nodes %a set masters_only` -> `irgl_dist_broadcast_nodes_<T>(%a)`
  (the broadcast alone); `irgl_dist.sync_nodes %a set agreed` ->
  `irgl_dist_agree_nodes_<T>(%a)` (the agreed copy taken, nothing moves);
- a ForAll over nodes runs over the rank's masters, one marked
  `#irgl_dist.mirrors` over its mirrors;
- `irgl_dist.allreduce_cells %a RED` -> `irgl_dist_allreduce_cells_<T>(%a,
  n, RED)` with n the array's static size, the size it was allocated with,
  or -1 (the runtime then takes the size of its agreed copy: the runner
  tracks every array argument);
- `irgl_dist.allreduce RED %v` -> `irgl_dist_allreduce_<T>(%v, RED)`;
- `irgl_dist.local_node` -> `irgl_dist_local_node(%n)` (host);
- `irgl_dist.global_id` -> `irgl_dist_global_id(%n)` (device: the rank's
  local-to-global table);
- every one-dimensional `memref.alloc` of a host function gets
  `irgl_dist_track_<T>(%a, n)` after it: its agreed copy, which `add` and
  `set` synchronizations compare with.

RED is the position of the reduction in `irgl_dialect.distributed.Reduction`
(min 0, max 1, minu 2, maxu 3, add 4, set 5, or 6, and 7), an i32 constant.
Both passes expect convert-irgl-kernels to have run; `lower-irgl{distribute=
oec|cvc}` runs irgl-distribute, convert-irgl-kernels, these two and the rest
of the lowering (without iteration outlining: the rounds are host-driven, as
the collectives are host calls).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i1,
    i32,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.distributed import (
    MIRRORS_ATTR,
    TERMINATION_ATTR,
    AllReduceCellsOp,
    AllReduceOp,
    GlobalIdOp,
    IsMasterOp,
    LocalNodeOp,
    PushMirrorOp,
    Reduction,
    SyncNodesOp,
    SyncWorklistOp,
)
from irgl_dialect.graph import NumNodesOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.orchestration import IterateOp, PipeOp
from irgl_dialect.runtime_library import (
    DIST_ARRAY_TYPES,
    DIST_VALUE_TYPES,
    RuntimeFunction,
    overload,
    runtime_function,
)
from lowering.builders import LoweringBuilder
from lowering.convert_irgl_orchestration import ConvertIrglOrchestration, _Lowering
from lowering.runtime_calls import fail

#: The runtime's code of each reduction (its position in the enum).
REDUCTION_CODES: dict[Reduction, int] = {r: i for i, r in enumerate(Reduction)}

#: The ops of the `irgl_dist` dialect.
DIST_OPS = (
    SyncNodesOp,
    AllReduceCellsOp,
    AllReduceOp,
    SyncWorklistOp,
    LocalNodeOp,
    GlobalIdOp,
    IsMasterOp,
    PushMirrorOp,
)


def _code(b: LoweringBuilder, reduction: Reduction) -> SSAValue:
    """The i32 constant of `reduction`'s runtime code."""
    value = b.const(REDUCTION_CODES[reduction], i32)
    value.name_hint = reduction.value
    return value


def _typed(
    op: Operation, prefix: str, element: object, types: tuple[object, ...]
) -> RuntimeFunction:
    """The overload `<prefix>_<T>` of the runtime for `element` (a located
    diagnostic if the runtime has none)."""
    fn = overload(prefix, element) if element in types else None  # pyright: ignore[reportArgumentType]
    if fn is None:
        names = ", ".join(str(t) for t in types)
        fail(
            op,
            f"'{op.name}' on several GPUs supports elements of type {names}, "
            f"got {element}",
        )
    return fn


# --------------------------------------------------------------------------
# convert-irgl-dist-orchestration
# --------------------------------------------------------------------------


class _DistLowering(_Lowering):
    """convert-irgl-orchestration's lowering of one host function, plus the
    worklist synchronization and the initial worklists across ranks."""

    def lower_op(self, op: Operation, pipe: SSAValue | None) -> None:
        if isinstance(op, SyncWorklistOp):
            if pipe is None:
                fail(op, "'irgl_dist.sync_worklist' is not inside a pipe context")
            b = LoweringBuilder(InsertPoint.before(op))
            if op.reduced is not None and op.reduction is not None:
                type_ = op.reduced.type
                assert isinstance(type_, MemRefType)
                fn = _typed(
                    op,
                    "irgl_dist_sync_worklist_reduce",
                    type_.get_element_type(),
                    DIST_ARRAY_TYPES,
                )
                code = _code(b, op.reduction.data)
                late = b.const(int(op.late_broadcast is not None), i1)
                late.name_hint = "late_broadcast"
                b.call(fn, [pipe, op.reduced, code, late])
            elif op.every_master is not None:
                b.call(runtime_function("irgl_dist_sync_worklist_every_master"), [pipe])
            else:
                b.call(runtime_function("irgl_dist_sync_worklist"), [pipe])
            Rewriter.erase_op(op)
            return
        super().lower_op(op, pipe)

    def open_pipe(self, op: IterateOp | PipeOp, builder: LoweringBuilder) -> SSAValue:
        pipe = super().open_pipe(op, builder)
        if TERMINATION_ATTR in op.attributes:
            starts_empty = not op.initial and op.initial_array is None
            builder.call(
                runtime_function(
                    "irgl_dist_empty_worklist"
                    if starts_empty
                    else "irgl_dist_initial_worklist"
                ),
                [pipe],
            )
        return pipe


def _callee(op: Operation) -> str | None:
    return op.callee.root_reference.data if isinstance(op, func.CallOp) else None


def _cell_is_any(cell: SSAValue) -> bool | None:
    """Whether the cell `cell` was created as Any (True) or All (False), if
    its `irgl_cell_create` can be seen."""
    create = cell.owner
    if not isinstance(create, Operation) or _callee(create) != "irgl_cell_create":
        return None
    flag = create.operands[0].owner
    if isinstance(flag, arith.ConstantOp) and isinstance(flag.value, IntegerAttr):
        return bool(flag.value.value.data)
    return None


def _reduced_already(value: SSAValue) -> bool:
    """Is every use of `value` an all-reduction of it (an irgl.invoke's
    result, reduced by irgl-distribute)?"""
    uses = list(value.uses)
    return bool(uses) and all(isinstance(u.operation, AllReduceOp) for u in uses)


def _replace_other_uses(old: SSAValue, new: SSAValue) -> None:
    """Use `new` in place of `old` everywhere but in `new`'s own op."""
    maker = new.owner
    old.replace_uses_with_if(new, lambda use: use.operation is not maker)


def globalize_termination(function: func.FuncOp) -> None:
    """Make the termination tests of `function` global (see the module
    docstring)."""
    in_total = runtime_function("irgl_dist_pipe_in_total")
    any_all = runtime_function("irgl_dist_allreduce_i1")
    for op in list(function.walk()):
        name = _callee(op)
        if name == "irgl_pipe_in_size":
            b = LoweringBuilder(InsertPoint.before(op))
            total = b.call_value(in_total, list(op.operands))
            total.name_hint = "global_size"
            op.results[0].replace_all_uses_with(total)
            Rewriter.erase_op(op)
        elif name == "irgl_cell_read":
            result = op.results[0]
            if _reduced_already(result):
                continue
            is_any = _cell_is_any(op.operands[0])
            if is_any is None:
                fail(op, "cannot tell whether this aggregate is Any or All")
            b = LoweringBuilder(InsertPoint.after(op))
            reduction = Reduction.OR if is_any else Reduction.AND
            reduced = b.call_value(any_all, [result, _code(b, reduction)])
            reduced.name_hint = "global_result"
            _replace_other_uses(result, reduced)


@dataclass(frozen=True)
class ConvertIrglDistOrchestration(ConvertIrglOrchestration):
    """convert-irgl-orchestration for a distributed program: also lowers
    `irgl_dist.sync_worklist`, distributes initial worklists and makes every
    termination test global (see the module docstring)."""

    name = "convert-irgl-dist-orchestration"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.body.block.ops):
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _DistLowering(op, function, self.retry_backoff).lower_region(
                    function.body, None
                )
                globalize_termination(function)


# --------------------------------------------------------------------------
# convert-irgl-dist
# --------------------------------------------------------------------------


def _array_size(b: LoweringBuilder, array: SSAValue) -> SSAValue:
    """The entry count of a one-dimensional array if the host code knows it
    (static shape, or its allocation's size), else -1."""
    type_ = array.type
    assert isinstance(type_, MemRefType)
    shape = type_.get_shape()
    if shape and shape[0] != DYNAMIC_INDEX:
        return b.index(shape[0])
    owner = array.owner
    if isinstance(owner, memref.AllocOp) and len(owner.dynamic_sizes) == 1:
        return owner.dynamic_sizes[0]
    return b.index(-1)


def _lower(op: Operation) -> None:
    """Replace one irgl_dist op (not sync_worklist) with its runtime call."""
    b = LoweringBuilder(InsertPoint.before(op))
    if isinstance(op, SyncNodesOp | AllReduceCellsOp):
        type_ = op.array.type
        assert isinstance(type_, MemRefType)
        element = type_.get_element_type()
        reduction = op.reduction.data
        if isinstance(op, SyncNodesOp) and op.masters_only is not None:
            fn = _typed(op, "irgl_dist_broadcast_nodes", element, DIST_ARRAY_TYPES)
            b.call(fn, [op.array])
        elif isinstance(op, SyncNodesOp) and op.agreed is not None:
            fn = _typed(op, "irgl_dist_agree_nodes", element, DIST_ARRAY_TYPES)
            b.call(fn, [op.array])
        elif isinstance(op, SyncNodesOp):
            fn = _typed(op, "irgl_dist_sync_nodes", element, DIST_ARRAY_TYPES)
            b.call(fn, [op.array, _code(b, reduction)])
        else:
            fn = _typed(op, "irgl_dist_allreduce_cells", element, DIST_ARRAY_TYPES)
            b.call(fn, [op.array, _array_size(b, op.array), _code(b, reduction)])
        Rewriter.erase_op(op)
    elif isinstance(op, AllReduceOp):
        fn = _typed(op, "irgl_dist_allreduce", op.value.type, DIST_VALUE_TYPES)
        value = b.call_value(fn, [op.value, _code(b, op.reduction.data)])
        value.name_hint = op.result.name_hint
        op.result.replace_all_uses_with(value)
        Rewriter.erase_op(op)
    elif isinstance(op, LocalNodeOp | GlobalIdOp):
        name = (
            "irgl_dist_local_node"
            if isinstance(op, LocalNodeOp)
            else "irgl_dist_global_id"
        )
        value = b.call_value(runtime_function(name), [op.node])
        value.name_hint = op.result.name_hint
        op.result.replace_all_uses_with(value)
        Rewriter.erase_op(op)
    elif isinstance(op, IsMasterOp):
        masters = b.call_value(runtime_function("irgl_dist_num_masters"), [])
        value = b.op(arith.CmpiOp(op.node, masters, "ult"))
        value.name_hint = op.result.name_hint
        op.result.replace_all_uses_with(value)
        Rewriter.erase_op(op)
    elif isinstance(op, PushMirrorOp):
        b.call(runtime_function("irgl_dist_push_mirror"), [op.node])
        Rewriter.erase_op(op)
    elif isinstance(op, SyncWorklistOp):
        fail(
            op,
            "'irgl_dist.sync_worklist' is lowered with its pipe context by "
            "convert-irgl-dist-orchestration, which must run first",
        )


def _track_allocations(function: func.FuncOp) -> None:
    """`irgl_dist_track_<T>` after every one-dimensional allocation."""
    for op in list(function.walk()):
        if not isinstance(op, memref.AllocOp):
            continue
        type_ = op.memref.type
        if len(type_.get_shape()) != 1:
            continue
        element = type_.get_element_type()
        if element not in DIST_ARRAY_TYPES:
            continue
        fn = overload("irgl_dist_track", element)
        assert fn is not None
        b = LoweringBuilder(InsertPoint.after(op))
        b.call(fn, [op.memref, _array_size(b, op.memref)])


def _forall_over_masters(op: ForAllOp) -> None:
    """`irgl.forall %n in nodes(%g)` -> `range(0, irgl_dist_num_masters())`:
    on a rank a ForAll over nodes runs over its masters only (the contract),
    while `irgl.graph.num_nodes`, its bound on one GPU, counts the mirrors.
    One marked `#irgl_dist.mirrors` runs over the mirrors instead:
    `range(irgl_dist_num_masters(), irgl.graph.num_nodes %g)`."""
    b = LoweringBuilder(InsertPoint.before(op))
    masters = b.call_value(runtime_function("irgl_dist_num_masters"), [])
    if MIRRORS_ATTR in op.attributes:
        bounds = [masters, b.op(NumNodesOp(op.bounds[0]))]
    else:
        bounds = [b.index(0), masters]
    body = op.body
    op.detach_region(body)
    init = op.init
    reduce = op.reduce.data if op.reduce is not None else None
    new = ForAllOp(IteratorKind.RANGE, bounds, body, reduce, init)
    Rewriter.replace_op(op, new)


@dataclass(frozen=True)
class ConvertIrglDist(ModulePass):
    """Lower the `irgl_dist` ops but `sync_worklist` to runtime calls and
    track the host functions' allocations (see the module docstring)."""

    name = "convert-irgl-dist"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        found = [inner for inner in op.walk() if isinstance(inner, DIST_OPS)]
        for inner in found:
            _lower(inner)
        distributed = bool(found) or any(
            isinstance(inner, func.FuncOp)
            and inner.sym_name.data.startswith("irgl_dist_")
            for inner in op.walk()
        )
        if not distributed:
            return
        for inner in op.body.block.ops:
            if isinstance(inner, func.FuncOp) and inner.body.blocks:
                _track_allocations(inner)
        for inner in list(op.walk()):
            if (
                isinstance(inner, ForAllOp)
                and inner.iterator.data == IteratorKind.NODES
            ):
                _forall_over_masters(inner)


def is_distributed(module: ModuleOp) -> bool:
    """Does the lowered `module` call the runtime's NCCL section?"""
    for op in module.walk():
        if isinstance(op, func.FuncOp | gpu.FuncOp) and op.sym_name.data.startswith(
            "irgl_dist_"
        ):
            return True
        if isinstance(op, func.CallOp) and op.callee.root_reference.data.startswith(
            "irgl_dist_"
        ):
            return True
    return False


__all__ = [
    "REDUCTION_CODES",
    "ConvertIrglDist",
    "ConvertIrglDistOrchestration",
    "globalize_termination",
    "is_distributed",
]
