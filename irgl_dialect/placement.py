"""The specification's placement rules as op traits, shared by the irgl ops.

Ops state where they may appear and what they need with traits; the rules
ask `has_trait`/`get_trait` and never test op classes, so this module imports
nothing of the dialect but its attributes. Each rule has a short name that
appears in its diagnostic, so that a user can look it up in the README's
dialect reference ("rule: ...").

The rules apply inside `irgl.kernel` ops only. An irgl op that sits in some
other function-like op (one that is isolated from above but is no symbol
table: the `gpu.func` or `func.func` a kernel became in partially lowered IR)
was checked before lowering and is left alone; an irgl op in no function at
all (directly in a module) is "outside any kernel".
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum, auto

from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import (
    ConstantLike,
    IsolatedFromAbove,
    NoMemoryEffect,
    OpTrait,
    SymbolTable,
)
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from irgl_dialect.attributes import KernelKind

RULE_KERNEL_CONSTRUCT = "kernel constructs only in plain kernels"
RULE_ORCHESTRATION = "orchestration only in host kernels"
RULE_FORALL_PLACEMENT = "ForAll only in plain and host kernels"
RULE_GRAPH_ACCESS = "graph accesses only in device code"
RULE_WORKLIST_ITERATION = "worklist ForAll is the outermost ForAll of a plain kernel"
RULE_POP = "pop only the index of a worklist ForAll"
RULE_EXCLUSIVE = "Exclusive directly under the outermost ForAll, never nested"
RULE_SYNC = "SyncRunningThreads executed uniformly"
RULE_RETRY = "Retry and Respawn inside a ForAll"
RULE_REDUCE = "ReduceAndReturn ends the iteration or kernel"
RULE_CALLEE = "invoked kernels exist and are plain kernels"
RULE_ARGUMENTS = "invocation arguments match the kernel"
RULE_WORKLIST_CONTEXT = "worklist kernels are invoked inside a Pipe or Iterate"
RULE_INITIALIZER = "only the outermost Pipe or Iterate establishes worklists"
RULE_TERMINATION = "Iterate terminates"
RULE_AGGREGATION = "Any and All aggregate ReduceAndReturn values"
RULE_KERNEL_SIGNATURE = "kernel signatures"
RULE_RESERVED_NAME = "kernel names do not collide with generated names"
RULE_DOMINANCE = "values are defined before their uses"
RULE_CALL = "kernels call device kernels and defined func.func helpers"
RULE_CALL_ARGUMENTS = "call arguments match the callee"
RULE_HELPER_BODY = "func.func helpers called from kernels hold no irgl ops"
RULE_RECURSION = "device code does not recurse"


def rule_error(op: Operation, message: str, rule: str) -> VerifyException:
    """A verifier error for `op` that names the violated rule."""
    return VerifyException(f"'{op.name}' {message} (rule: {rule})")


# --------------------------------------------------------------------------
# Traits that identify the structure ops
# --------------------------------------------------------------------------


class KernelInterface(OpTrait, abc.ABC):
    """Implemented by the op that defines an IrGL kernel (`irgl.kernel`)."""

    @abc.abstractmethod
    def kernel_kind(self, op: Operation) -> KernelKind:
        """Where the kernel `op` runs."""
        raise NotImplementedError()


class ParallelLoopInterface(OpTrait, abc.ABC):
    """Implemented by IrGL's parallel loop (`irgl.forall`)."""

    @abc.abstractmethod
    def iterates_worklist(self, op: Operation) -> bool:
        """Does the loop `op` traverse the kernel's worklist?"""
        raise NotImplementedError()

    @abc.abstractmethod
    def index(self, op: Operation) -> SSAValue | None:
        """The loop's index (its body's argument; None in a malformed loop)."""
        raise NotImplementedError()


class UniformLoopInterface(OpTrait, abc.ABC):
    """A sequential loop whose trip count decides whether its body is executed
    uniformly (`irgl.for`; `scf.for` is recognized by its operands)."""

    @abc.abstractmethod
    def trip_count_operands(self, op: Operation) -> tuple[SSAValue, ...]:
        """The operands that determine how often the body runs."""
        raise NotImplementedError()


class PipeContext(OpTrait):
    """The op establishes (or inherits) a pipe context: Pipe and Iterate."""


# --------------------------------------------------------------------------
# Marker traits that the lowering asks about a kernel
# --------------------------------------------------------------------------


class UsesWorklist(OpTrait):
    """The op pops from or pushes to the worklist of its kernel."""

    def applies(self, op: Operation) -> bool:
        """Whether this instance of the op uses the worklist."""
        return True


class IteratesWorklist(UsesWorklist):
    """A parallel loop that uses the worklist when it traverses it."""

    def applies(self, op: Operation) -> bool:
        loop = op.get_trait(ParallelLoopInterface)
        return loop is not None and loop.iterates_worklist(op)


class UsesRetry(UsesWorklist):
    """The op pushes to the retry worklist (Retry, Respawn)."""


class SynchronizesGrid(OpTrait):
    """The op needs a grid barrier, so its kernel is launched cooperatively."""


class ReducesToKernelResult(OpTrait):
    """The op contributes to the kernel's aggregated return value."""


def _kernel_has(kernel: Operation, trait: type[OpTrait]) -> bool:
    for op in kernel.walk():
        found = op.get_trait(trait)
        if found is None:
            continue
        if not isinstance(found, UsesWorklist) or found.applies(op):
            return True
    return False


def kernel_uses_worklist(kernel: Operation) -> bool:
    """Does the kernel pop, push, iterate over or retry into the worklist?"""
    return _kernel_has(kernel, UsesWorklist)


def kernel_uses_retry(kernel: Operation) -> bool:
    """Does the kernel push items to the retry worklist?"""
    return _kernel_has(kernel, UsesRetry)


def kernel_reduces(kernel: Operation) -> bool:
    """Does the kernel produce a return value with ReduceAndReturn?"""
    return _kernel_has(kernel, ReducesToKernelResult)


def kernel_uses_grid_sync(kernel: Operation) -> bool:
    """Does the kernel need a grid barrier (SyncRunningThreads or Exclusive)?"""
    return _kernel_has(kernel, SynchronizesGrid)


# --------------------------------------------------------------------------
# Where an op is
# --------------------------------------------------------------------------


class Context(Enum):
    """Where an op stands with respect to kernels."""

    #: In no function-like op at all (e.g. directly in a module).
    OUTSIDE = auto()
    #: In a function-like op that is no irgl.kernel (partially lowered IR).
    LOWERED = auto()


def _is_function_like(op: Operation) -> bool:
    return op.has_trait(IsolatedFromAbove) and not op.has_trait(SymbolTable)


def enclosing_kernel(op: Operation) -> Operation | Context:
    """The irgl.kernel around `op`, or why there is none."""
    parent = op.parent_op()
    while parent is not None:
        if parent.has_trait(KernelInterface):
            return parent
        if _is_function_like(parent):
            return Context.LOWERED
        parent = parent.parent_op()
    return Context.OUTSIDE


def kernel_kind_of(op: Operation) -> KernelKind | Context:
    """The kind of the kernel around `op`, or why there is none."""
    kernel = enclosing_kernel(op)
    if isinstance(kernel, Context):
        return kernel
    interface = kernel.get_trait(KernelInterface)
    assert interface is not None
    return interface.kernel_kind(kernel)


def ancestors(op: Operation) -> list[Operation]:
    """The operations around `op`, innermost first."""
    found: list[Operation] = []
    parent = op.parent_op()
    while parent is not None:
        found.append(parent)
        parent = parent.parent_op()
    return found


def enclosing_foralls(op: Operation) -> list[Operation]:
    """The parallel loops around `op`, innermost first, up to its kernel."""
    result: list[Operation] = []
    parent = op.parent_op()
    while parent is not None and not _is_function_like(parent):
        if parent.has_trait(ParallelLoopInterface):
            result.append(parent)
        parent = parent.parent_op()
    return result


def is_directly_under_outermost_forall(op: Operation) -> bool:
    """True when `op`'s parent is a ForAll that has no ForAll around it."""
    parent = op.parent_op()
    return (
        parent is not None
        and parent.has_trait(ParallelLoopInterface)
        and not enclosing_foralls(parent)
    )


def _where(kind: KernelKind | Context) -> str:
    if kind == Context.OUTSIDE:
        return "outside any kernel"
    assert isinstance(kind, KernelKind)
    return f"in a {kind.value} kernel"


@dataclass(frozen=True)
class AllowedIn(OpTrait):
    """The op may only appear in kernels of the given kinds.

    `prefix` starts the message (after the op name), `allowed` names the
    kernels in words; `hint` ends it.
    """

    kinds: frozenset[KernelKind]
    prefix: str
    allowed: str
    rule: str
    hint: str = ""

    def verify(self, op: Operation) -> None:
        kind = kernel_kind_of(op)
        if kind == Context.LOWERED or kind in self.kinds:
            return
        raise rule_error(
            op,
            f"{self.prefix}may only appear in {self.allowed}, but it is "
            f"{_where(kind)}{self.hint}",
            self.rule,
        )


def kernel_construct(construct: str) -> AllowedIn:
    """Kernel constructs (Atomic, Exclusive, Retry, ...) live in plain kernels."""
    return AllowedIn(
        frozenset({KernelKind.PLAIN}),
        f"({construct}) is a kernel construct and ",
        "a plain kernel",
        RULE_KERNEL_CONSTRUCT,
    )


def orchestration_construct(construct: str) -> AllowedIn:
    """Orchestration constructs (Invoke, Iterate, Pipe) live in host kernels."""
    return AllowedIn(
        frozenset({KernelKind.HOST}),
        f"({construct}) is an orchestration construct and ",
        "a host kernel",
        RULE_ORCHESTRATION,
    )


def graph_size_access() -> AllowedIn:
    """Node and edge counts are kept on the host too: any kernel."""
    return AllowedIn(
        frozenset(KernelKind),
        "(graph access) ",
        "kernels",
        RULE_GRAPH_ACCESS,
    )


def graph_element_access() -> AllowedIn:
    """Per-node and per-edge accessors read device memory: only plain and
    device kernels."""
    return AllowedIn(
        frozenset({KernelKind.PLAIN, KernelKind.DEVICE}),
        "(graph access) ",
        "plain or device kernels",
        RULE_GRAPH_ACCESS,
        ": the graph's edges live in GPU memory, so graph accessors need device code",
    )


def in_irgl_kernel(op: Operation) -> bool:
    """Is `op` inside an irgl.kernel (so that the kernel rules apply)?"""
    return not isinstance(enclosing_kernel(op), Context)


# --------------------------------------------------------------------------
# Uniformity: is a value the same in every thread of a plain kernel?
# --------------------------------------------------------------------------


def is_uniform(value: SSAValue) -> bool:
    """Conservatively: is `value` the same in every thread of the kernel?

    Uniform are the kernel's arguments, constants, the index of a sequential
    loop with a uniform trip count, and the results of side-effect free
    region-less ops (arithmetic, graph sizes) of uniform values. A ForAll's
    index, loaded values and C expressions are not.
    """
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        if owner is None:
            return False
        if owner.has_trait(KernelInterface):
            return True
        trip = uniform_loop_trip_operands(owner)
        return (
            trip is not None
            and value.index == 0
            and all(is_uniform(v) for v in trip)
            and is_executed_uniformly(owner)
        )
    if isinstance(value, OpResult):
        op = value.op
        if op.has_trait(ConstantLike):
            return True
        return (
            op.has_trait(NoMemoryEffect)
            and not op.regions
            and all(is_uniform(v) for v in op.operands)
        )
    return False


def uniform_loop_trip_operands(op: Operation) -> tuple[SSAValue, ...] | None:
    """The trip-count operands of a sequential loop (irgl.for or scf.for)."""
    interface = op.get_trait(UniformLoopInterface)
    if interface is not None:
        return interface.trip_count_operands(op)
    if op.name == "scf.for":
        return tuple(op.operands[:3])
    return None


def is_executed_uniformly(op: Operation, *, in_forall: bool = True) -> bool:
    """Do all threads of the plain kernel execute `op` (equally often)?

    Directly in the kernel body; directly in the outermost ForAll (which is
    lowered in uniform rounds) when `in_forall`; or in a sequential loop with
    a uniform trip count that is itself, through such loops only, in the
    kernel body or (when `in_forall`) directly in the outermost ForAll: the
    uniform-round lowering runs such loops on every thread and guards only
    the work inside them.
    """
    parent = op.parent_op()
    if parent is None:
        return False
    if parent.has_trait(KernelInterface):
        return True
    if in_forall and is_directly_under_outermost_forall(op):
        return True
    trip = uniform_loop_trip_operands(parent)
    if trip is None:
        return False
    return all(is_uniform(v) for v in trip) and is_executed_uniformly(
        parent, in_forall=in_forall
    )


# --------------------------------------------------------------------------
# Dominance inside a kernel (xDSL does not check it)
# --------------------------------------------------------------------------


def _ancestor_in(block: Block, op: Operation) -> Operation | None:
    """The ancestor of `op` (or `op` itself) that lies directly in `block`."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def dominance_violations(root: Operation) -> Iterator[tuple[Operation, SSAValue]]:
    """(user, value) pairs below `root` whose value is not defined before use.

    Block arguments must belong to a block around the user; results must be
    defined by an op before the user (or before the user's ancestor) in the
    same block. Multi-block regions are left to their own CFG rules.
    """
    for user in root.walk():
        if user is root:
            continue
        for value in user.operands:
            if isinstance(value, BlockArgument):
                if _ancestor_in(value.block, user) is None:
                    yield user, value
            elif isinstance(value, OpResult):
                block = value.op.parent_block()
                if block is None:
                    continue
                region = block.parent
                if region is not None and len(region.blocks) > 1:
                    continue
                anchor = _ancestor_in(block, user)
                if anchor is None or anchor is value.op:
                    yield user, value
                elif not value.op.is_before_in_block(anchor):
                    yield user, value


def located_error(
    op: Operation, message: str, error: DiagnosticException
) -> DiagnosticException:
    """`error` with the module printed as a note, `op` underlined."""
    diagnostic = Diagnostic()
    diagnostic.add_message(op, f"Operation does not verify: {message}")
    try:
        diagnostic.raise_exception(op, error)
    except DiagnosticException as raised:
        return raised
    return error  # not reached: raise_exception always raises


def verify_dominance(root: Operation) -> None:
    """Raise a diagnostic at the first op below `root` that uses a value
    before (or outside) its definition.

    It is a DiagnosticException rather than a VerifyException so that it
    leaves the enclosing verifier with the user op underlined (xDSL would
    otherwise report it at `root`).
    """
    for user, value in dominance_violations(root):
        name = f"%{value.name_hint}" if value.name_hint else "a value"
        message = (
            f"'{user.name}' uses {name} before (or outside) its definition "
            f"(rule: {RULE_DOMINANCE})"
        )
        raise located_error(user, message, DiagnosticException(message))
