"""Kernel constructs for synchronization and work management: Atomic,
Exclusive, Retry, Respawn, ReduceAndReturn, SyncRunningThreads, LocalBarrier."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, UnitAttr, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from irgl_dialect.attributes import ExclusiveForm, ExclusiveFormAttr
from irgl_dialect.kernels import IMPLICIT_YIELD
from irgl_dialect.placement import (
    RULE_EXCLUSIVE,
    RULE_REDUCE,
    RULE_RETRY,
    RULE_SYNC,
    KernelInterface,
    ParallelLoopInterface,
    ReducesToKernelResult,
    SynchronizesGrid,
    UsesRetry,
    enclosing_foralls,
    in_irgl_kernel,
    is_directly_under_outermost_forall,
    is_executed_uniformly,
    kernel_construct,
    rule_error,
)
from irgl_dialect.syntax import parse_body, print_body


def _is_int_array(t: Attribute) -> bool:
    return (
        isinstance(t, MemRefType)
        and len(t.get_shape()) == 1
        and isinstance(t.element_type, IntegerType | IndexType)
    )


def _verify_else(op: Operation, region: Region) -> None:
    if len(region.blocks) > 1:
        raise VerifyException(f"'{op.name}' else region has at most one block")


def _parse_else(parser: Parser) -> Region:
    if parser.parse_optional_keyword("else"):
        return parse_body(parser)
    return Region()


def _print_else(printer: Printer, region: Region) -> None:
    if region.blocks:
        printer.print_string(" else")
        print_body(printer, region)


@irdl_op_definition
class AtomicOp(IRDLOperation):
    """Run the body holding `locks[index]` (spec: Atomic).

    Without `else` the lock is acquired in a divergence-safe retry loop
    (blocking; a ticket lock under `lower-irgl{ticket-locks=true}`); with
    `else` it is tried once and the else body runs on failure. Atomics nest.

        irgl.atomic %locks[%c] : memref<?xi32> { ... } else { ... }
    """

    name = "irgl.atomic"

    locks = operand_def(MemRefType)
    index = operand_def(IndexType)
    body = region_def("single_block")
    else_body = region_def()

    traits = traits_def(
        RecursiveMemoryEffect(), IMPLICIT_YIELD, kernel_construct("Atomic")
    )

    def __init__(
        self,
        locks: SSAValue,
        index: SSAValue,
        body: Region | None = None,
        else_body: Region | None = None,
    ):
        super().__init__(
            operands=[locks, index],
            regions=[body or Region(Block()), else_body or Region()],
        )

    @property
    def blocking(self) -> bool:
        return not self.else_body.blocks

    def verify_(self) -> None:
        if not _is_int_array(self.locks.type):
            raise VerifyException(
                "'irgl.atomic' locks must be a rank-1 memref of integers, got "
                f"{self.locks.type}"
            )
        _verify_else(self, self.else_body)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.locks)
        printer.print_string("[")
        printer.print_operand(self.index)
        printer.print_string("] : ")
        printer.print_attribute(self.locks.type)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        print_body(printer, self.body)
        _print_else(printer, self.else_body)

    @classmethod
    def parse(cls, parser: Parser) -> AtomicOp:
        locks = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parser.parse_operand(IndexType())
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        locks_type = parser.parse_type()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parse_body(parser)
        op = cls(
            parser.resolve_operand(locks, locks_type), index, body, _parse_else(parser)
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op


@irdl_op_definition
class ExclusiveOp(IRDLOperation):
    """Try once to lock a set of elements of `object` (spec: Exclusive).

    `object` is the claim array of the locked object, one i32 cell per
    element. The elements come from `items[0:n]` (Array form) or from
    `items[start:end:step]` (ArrayIterator form). Lowered to the three-phase
    race / priority-check / check protocol separated by grid barriers, so at
    least one contender always wins. Allowed only directly under the outermost
    ForAll, never nested.

        irgl.exclusive %claims array(%cavity[%n])
            : memref<?xi32>, memref<16xindex> { ... }
        irgl.exclusive %claims iterator(%arr[%s to %e step %st])
            : memref<?xi32>, memref<?xindex> { ... } else { ... }
    """

    name = "irgl.exclusive"

    object = operand_def(MemRefType)
    items = operand_def(MemRefType)
    range = var_operand_def(IndexType)
    form = prop_def(ExclusiveFormAttr)
    body = region_def("single_block")
    else_body = region_def()

    traits = traits_def(
        RecursiveMemoryEffect(),
        IMPLICIT_YIELD,
        kernel_construct("Exclusive"),
        SynchronizesGrid(),
    )

    def __init__(
        self,
        object: SSAValue,
        form: ExclusiveForm,
        items: SSAValue,
        range: Sequence[SSAValue],
        body: Region | None = None,
        else_body: Region | None = None,
    ):
        super().__init__(
            operands=[object, items, range],
            properties={"form": ExclusiveFormAttr(form)},
            regions=[body or Region(Block()), else_body or Region()],
        )

    def verify_(self) -> None:
        expected = 1 if self.form.data == ExclusiveForm.ARRAY else 3
        if len(self.range) != expected:
            raise VerifyException(
                f"'irgl.exclusive' {self.form.data.value} form takes {expected} "
                f"index operand(s), got {len(self.range)}"
            )
        for what, value in (("object", self.object), ("items", self.items)):
            if not _is_int_array(value.type):
                raise VerifyException(
                    f"'irgl.exclusive' {what} must be a rank-1 memref of integers, "
                    f"got {value.type}"
                )
        _verify_else(self, self.else_body)
        if in_irgl_kernel(self) and not is_directly_under_outermost_forall(self):
            raise rule_error(
                self,
                "must be placed directly in the body of the outermost ForAll "
                "(it synchronizes all running threads, so it cannot be nested)",
                RULE_EXCLUSIVE,
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.object)
        form = self.form.data
        printer.print_string(f" {form.value}(")
        printer.print_operand(self.items)
        printer.print_string("[")
        if form == ExclusiveForm.ARRAY:
            printer.print_operand(self.range[0])
        else:
            start, end, step = self.range
            printer.print_operand(start)
            printer.print_string(" to ")
            printer.print_operand(end)
            printer.print_string(" step ")
            printer.print_operand(step)
        printer.print_string("]) : ")
        printer.print_attribute(self.object.type)
        printer.print_string(", ")
        printer.print_attribute(self.items.type)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        print_body(printer, self.body)
        _print_else(printer, self.else_body)

    @classmethod
    def parse(cls, parser: Parser) -> ExclusiveOp:
        obj = parser.parse_unresolved_operand()
        form = ExclusiveForm(parser.parse_keyword_in(["array", "iterator"]))
        parser.parse_punctuation("(")
        items = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        bounds = [parser.parse_operand(IndexType())]
        if form == ExclusiveForm.ITERATOR:
            parser.parse_keyword("to")
            bounds.append(parser.parse_operand(IndexType()))
            parser.parse_keyword("step")
            bounds.append(parser.parse_operand(IndexType()))
        parser.parse_punctuation("]")
        parser.parse_punctuation(")")
        parser.parse_punctuation(":")
        obj_type = parser.parse_type()
        parser.parse_punctuation(",")
        items_type = parser.parse_type()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parse_body(parser)
        op = cls(
            parser.resolve_operand(obj, obj_type),
            form,
            parser.resolve_operand(items, items_type),
            bounds,
            body,
            _parse_else(parser),
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op


def _require_in_forall(op: Operation) -> None:
    if in_irgl_kernel(op) and not enclosing_foralls(op):
        raise rule_error(op, "must be inside a ForAll", RULE_RETRY)


@irdl_op_definition
class RetryOp(IRDLOperation):
    """Push an item to the retry worklist after a conflict (spec: Retry).

    The kernel is re-invoked on the retried items, swapping `in` and `retry`
    while `out` stays. `merge` merges the retried items into the outgoing
    worklist instead when the kernel finishes.

        irgl.retry %n merge
    """

    name = "irgl.retry"

    item = operand_def(IndexType)
    merge = opt_prop_def(UnitAttr)

    assembly_format = "$item (`merge` $merge^)? attr-dict"

    traits = traits_def(kernel_construct("Retry"), UsesRetry())

    def __init__(self, item: SSAValue, *, merge: bool = False):
        super().__init__(
            operands=[item], properties={"merge": UnitAttr() if merge else None}
        )

    def verify_(self) -> None:
        _require_in_forall(self)


def retries_on_conflict(kernel: Operation) -> bool:
    """Does `kernel` hold an `irgl.retry` without `merge`? Such a kernel is
    re-launched on the items that lost a conflict (retry backoff applies to
    it; a merging Retry or a Respawn does not signal a re-launch round of
    conflicts)."""
    return any(isinstance(op, RetryOp) and op.merge is None for op in kernel.walk())


@irdl_op_definition
class RespawnOp(IRDLOperation):
    """Push an item to the retry worklist without signalling a conflict
    (spec: Respawn).

        irgl.respawn %n
    """

    name = "irgl.respawn"

    item = operand_def(IndexType)

    assembly_format = "$item attr-dict"

    traits = traits_def(kernel_construct("Respawn"), UsesRetry())

    def __init__(self, item: SSAValue):
        super().__init__(operands=[item])

    def verify_(self) -> None:
        _require_in_forall(self)


@irdl_op_definition
class ReduceAndReturnOp(IRDLOperation):
    """Contribute a boolean to the kernel's return value (spec: ReduceAndReturn).

    The invocation chooses Any or All. Inside a ForAll it ends the current
    iteration; elsewhere it ends the kernel. It must therefore be the last
    operation of its block, and only `scf.if`s may stand between it and its
    ForAll (or kernel), each last in its own block.

        irgl.reduce_and_return %changed
    """

    name = "irgl.reduce_and_return"

    value = operand_def(i1)

    assembly_format = "$value attr-dict"

    traits = traits_def(kernel_construct("ReduceAndReturn"), ReducesToKernelResult())

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])

    def verify_(self) -> None:
        if not in_irgl_kernel(self):
            return
        op: Operation = self
        while True:
            block = op.parent_block()
            assert block is not None
            following = op.next_op
            if following is not None and following is not block.last_op:
                raise rule_error(
                    self,
                    "must be the last operation of its block: it ends the "
                    "iteration (inside a ForAll) or the kernel",
                    RULE_REDUCE,
                )
            if following is not None and following is block.last_op:
                from xdsl.traits import IsTerminator

                if not following.has_trait(IsTerminator):
                    raise rule_error(
                        self,
                        "must be the last operation of its block: it ends the "
                        "iteration (inside a ForAll) or the kernel",
                        RULE_REDUCE,
                    )
            parent = op.parent_op()
            if parent is not None and (
                parent.has_trait(ParallelLoopInterface)
                or parent.has_trait(KernelInterface)
            ):
                return
            if not isinstance(parent, scf.IfOp):
                raise rule_error(
                    self,
                    f"may only be nested in scf.if below its ForAll or kernel, "
                    f"not in '{parent.name if parent else '?'}'",
                    RULE_REDUCE,
                )
            op = parent


def _require_uniform(op: Operation) -> None:
    if not in_irgl_kernel(op) or is_executed_uniformly(op):
        return
    raise rule_error(
        op,
        "must be executed by all threads: place it directly in the kernel body, "
        "directly in the outermost ForAll, or in scf.for or irgl.for loops "
        "there whose trip counts are uniform (kernel arguments, constants and "
        "arithmetic of them)",
        RULE_SYNC,
    )


@irdl_op_definition
class SyncRunningThreadsOp(IRDLOperation):
    """A barrier across all running threads of the grid (spec:
    SyncRunningThreads). The kernel is launched cooperatively with no more
    blocks than can be resident at once.

        irgl.sync_running_threads
    """

    name = "irgl.sync_running_threads"

    assembly_format = "attr-dict"

    traits = traits_def(kernel_construct("SyncRunningThreads"), SynchronizesGrid())

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        _require_uniform(self)


@irdl_op_definition
class LocalBarrierOp(IRDLOperation):
    """A barrier across the threads of one block (spec: LocalBarrier,
    `__syncthreads`).

        irgl.local_barrier
    """

    name = "irgl.local_barrier"

    assembly_format = "attr-dict"

    traits = traits_def(kernel_construct("LocalBarrier"))

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        _require_uniform(self)
