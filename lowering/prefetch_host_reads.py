"""irgl-prefetch-host-reads: a run of host reads of device memory waits once.

Host code reads device memory through runtime calls that each copy and
then synchronize the default stream: `irgl_outline_finish` (a control
kernel's status word), `irgl_device_read_T` (a carried result) and
`irgl_device_load_T` (an element access, convert-irgl-host-memory). Each
costs a round trip to the GPU, about 8 us on an H100 even when the kernels
before it are long done, so the three reads after BFS's control kernel
took a third of a search that reaches nothing.

Where such reads follow one another in a block with nothing in between
that could write device memory (only side-effect-free operations, the
deallocation of arrays, and destroying cells, pipes and worklists), this
pass issues the copies of the second and later reads before the first one,
as `irgl_device_prefetch_T(array, index)` calls: the first read's
synchronization then covers them all, and each later read takes its
value from the page-locked buffer (the runtime's `read_device`). A read
whose array or index is computed after the first read is left as it is.
Reads keep their order and their values: no device work runs between a
prefetch and its read.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

from irgl_dialect.runtime_library import overload
from lowering.runtime_calls import call

#: Runtime calls that read device memory and wait for it.
_READ_PREFIXES = ("irgl_device_read_", "irgl_device_load_")
_FINISH = "irgl_outline_finish"

#: Runtime calls that free host-side handles or stream-ordered memory and
#: write no device memory that a later read could see.
_NEUTRAL_CALLS = frozenset(
    {"irgl_cell_destroy", "irgl_pipe_destroy", "irgl_wl_destroy"}
)


def _read_target(op: Operation) -> tuple[SSAValue, SSAValue | None] | None:
    """The (array, index) a host read copies (index None: element 0), or
    None if `op` is not such a read."""
    if not isinstance(op, func.CallOp):
        return None
    callee = op.callee.root_reference.data
    if callee == _FINISH:
        return op.arguments[0], None
    if callee.startswith(_READ_PREFIXES[0]):
        return op.arguments[0], None
    if callee.startswith(_READ_PREFIXES[1]):
        return op.arguments[0], op.arguments[1]
    return None


def _neutral(op: Operation) -> bool:
    """Whether `op` may sit between a prefetch and its read: it writes no
    device memory."""
    if isinstance(op, func.CallOp):
        return op.callee.root_reference.data in _NEUTRAL_CALLS
    if isinstance(op, memref.DeallocOp | memref.CastOp):
        return True
    # (every arith op computes a value only; not all declare it in xDSL)
    return not op.regions and (op.dialect_name() == "arith" or is_side_effect_free(op))


def _available_at(value: SSAValue, first: Operation) -> bool:
    """Whether `value` is defined before `first` (in its block or around it)."""
    if isinstance(value, BlockArgument):
        return True  # an argument of `first`'s block or of one around it
    owner = value.owner
    assert isinstance(owner, Operation)
    block = first.parent_block()
    if owner.parent_block() is not block:
        return True  # defined in a block around `first`'s (the IR dominates)
    assert block is not None
    return block.get_operation_index(owner) < block.get_operation_index(first)


def _prefetch_block(block: Block) -> None:
    """Prefetch the later reads of each run of reads in `block`."""
    ops = list(block.ops)
    i = 0
    while i < len(ops):
        if _read_target(ops[i]) is None:
            i += 1
            continue
        first = ops[i]
        later: list[tuple[SSAValue, SSAValue | None]] = []
        j = i + 1
        while j < len(ops):
            target = _read_target(ops[j])
            if target is None and not _neutral(ops[j]):
                break
            if target is not None and all(
                _available_at(v, first) for v in target if v is not None
            ):
                later.append(target)
            j += 1
        if later:
            _insert_prefetches(first, later)
        i = j


def _insert_prefetches(
    first: Operation, targets: list[tuple[SSAValue, SSAValue | None]]
) -> None:
    builder = Builder(InsertPoint.before(first))
    zero: SSAValue | None = None
    for array, index in targets:
        type_ = array.type
        assert isinstance(type_, MemRefType)
        fn = overload("irgl_device_prefetch", type_.element_type)
        assert fn is not None  # the read's own overload exists for this type
        if index is None:
            if zero is None:
                zero = builder.insert(
                    arith.ConstantOp.from_int_and_width(0, IndexType())
                ).result
            index = zero
        call(fn, [array, index], builder)


@dataclass(frozen=True)
class PrefetchHostReads(ModulePass):
    """Issue the copies of a run of host reads of device memory before its
    first read, so that the run synchronizes once (see the module
    docstring); runs on the top-level `func.func`s after
    convert-irgl-host-memory."""

    name = "irgl-prefetch-host-reads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.body.block.ops:
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            blocks = [
                block
                for inner in function.walk()
                for region in inner.regions
                for block in region.blocks
            ]
            for block in blocks:
                _prefetch_block(block)
