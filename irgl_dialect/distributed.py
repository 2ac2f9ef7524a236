"""The `irgl_dist` dialect: synchronization of a program run on P ranks.

A distributed IrGL program runs the same host kernel on every rank (one per
GPU), each on its partition of the graph (`irgl_runner/partition.py`): local
ids, masters first, then mirrors of nodes another rank owns. The pass
`irgl-distribute` (`lowering/distribute.py`) derives from how each kernel
writes node arrays which synchronization the program needs and inserts it as
the ops of this dialect, in the bulk-synchronous style of D-IrGL/Gluon.

The contract, which the CPU interpreter (`irgl_interpreter/distributed.py`)
implements and a CUDA/NCCL lowering must implement:

- the host kernel carries `#irgl_dist.host<POLICY, nodes = [i, ...]>` under
  the name `irgl_dist.host`: the partitioning policy the program was
  distributed for and the positions of its *node array* arguments, which
  hold one entry per local node (the caller scatters them before the run and
  gathers their masters after it); every other argument is replicated;
- `irgl.graph.num_nodes` is the rank's local node count (masters and
  mirrors: what a node array holds); `irgl.forall ... in nodes` runs over the
  rank's masters only; edges are the rank's local edges; worklist items are
  local ids;
- every rank holds the same value of every host value (replicated), and the
  same contents of every array that is not a node array, at each op of this
  dialect;
- the *agreed copy* of an array is its contents after its last
  synchronization (or when the run starts, or when it is allocated); an
  entry is *updated* if it differs from the agreed copy;
- an Iterate or Pipe carrying `#irgl_dist.across_ranks` under the name
  `irgl_dist.termination` goes on while the test goes on *on some rank*: its
  worklist is non-empty on some rank (sizes all-reduced with `add`), its
  Any aggregate is true on some rank (`or`), its All aggregate on every rank
  (`and`); its initial worklist keeps only the rank's own masters (the
  others' items are dropped: `irgl_dist.local_node` gives them no local id)
  and is then synchronized as by `irgl_dist.sync_worklist` (one without
  initial items is empty on every rank: nothing to exchange).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    AnyFloatConstr,
    ArrayAttr,
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from irgl_dialect.attributes import GraphType, KernelKind
from irgl_dialect.placement import (
    KernelInterface,
    PipeContext,
    enclosing_kernel,
    graph_element_access,
    kernel_construct,
    orchestration_construct,
)

#: The name under which a distributed host kernel carries its `HostAttr`.
HOST_ATTR = "irgl_dist.host"
#: The name under which an Iterate or Pipe carries `AcrossRanksAttr`.
TERMINATION_ATTR = "irgl_dist.termination"
#: A unit attribute on a ForAll over nodes: on a rank it runs over the
#: rank's mirrors instead of its masters (a kernel irgl-distribute derived
#: to compute the mirrors' values, see `SyncNodesOp`'s `agreed`).
MIRRORS_ATTR = "irgl_dist.mirrors"


class Policy(StrEnum):
    """The partitioning policy a program was distributed for (see
    `irgl_runner.partition`): outgoing edge-cut or Cartesian vertex-cut."""

    OEC = "oec"
    CVC = "cvc"


class Reduction(StrEnum):
    """How the copies of a value on several ranks combine.

    `min`/`max` signed (or float), `minu`/`maxu` unsigned, `add` (of the
    updates: each rank's change since the agreed copy), `set` (the updated
    copy wins; the pass uses it only where every rank that updates an entry
    writes the same value), `or`/`and` of booleans."""

    MIN = "min"
    MAX = "max"
    MINU = "minu"
    MAXU = "maxu"
    ADD = "add"
    SET = "set"
    OR = "or"
    AND = "and"


#: The reductions of arrays (`sync_nodes`, `allreduce_cells`).
ARRAY_REDUCTIONS = frozenset(
    {
        Reduction.MIN,
        Reduction.MAX,
        Reduction.MINU,
        Reduction.MAXU,
        Reduction.ADD,
        Reduction.SET,
    }
)

#: The reductions `irgl_dist.sync_worklist reduce` takes: a mirror lagging
#: its master (a higher value for min) only repeats work.
REDUCE_ONLY_REDUCTIONS = frozenset(
    {Reduction.MIN, Reduction.MAX, Reduction.MINU, Reduction.MAXU}
)


@irdl_attr_definition
class ReductionAttr(EnumAttribute[Reduction], SpacedOpaqueSyntaxAttribute):
    """A `Reduction`."""

    name = "irgl_dist.reduction"


@irdl_attr_definition
class PolicyAttr(EnumAttribute[Policy], SpacedOpaqueSyntaxAttribute):
    """A `Policy`."""

    name = "irgl_dist.policy"


@irdl_attr_definition
class HostAttr(ParametrizedAttribute):
    """What the caller of a distributed host kernel must know: the policy it
    was distributed for and the positions of its node-array arguments.

        #irgl_dist.host<oec, nodes = [1, 3]>
    """

    name = "irgl_dist.host"

    policy: PolicyAttr
    node_arrays: ArrayAttr[IntAttr]

    def __init__(self, policy: Policy, node_arrays: list[int]):
        super().__init__(
            PolicyAttr(policy), ArrayAttr([IntAttr(i) for i in node_arrays])
        )

    @property
    def node_array_positions(self) -> tuple[int, ...]:
        """The positions of the node-array arguments."""
        return tuple(i.data for i in self.node_arrays)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        policy = Policy(parser.parse_str_enum(Policy))
        parser.parse_punctuation(",")
        parser.parse_keyword("nodes")
        parser.parse_punctuation("=")
        positions = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_integer
        )
        parser.parse_punctuation(">")
        return [PolicyAttr(policy), ArrayAttr([IntAttr(i) for i in positions])]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.policy.data.value}, nodes = [")
        printer.print_list(self.node_array_positions, printer.print_int)
        printer.print_string("]>")

    def verify(self) -> None:
        positions = self.node_array_positions
        if any(p < 0 for p in positions) or len(set(positions)) != len(positions):
            raise VerifyException(
                f"#{self.name}: node-array positions must be distinct and "
                f"non-negative, got {list(positions)}"
            )


@irdl_attr_definition
class AcrossRanksAttr(ParametrizedAttribute):
    """Marks an Iterate or Pipe whose continue test is all-reduced across
    ranks and whose initial worklist is distributed (see the module
    docstring)."""

    name = "irgl_dist.across_ranks"


# --------------------------------------------------------------------------
# helpers of the verifiers
# --------------------------------------------------------------------------


def _distributed_host(op: Operation) -> HostAttr | None:
    """Raise unless `op` is in a host kernel marked `irgl_dist.host`; that
    mark (None where the placement traits report the op instead)."""
    kernel = enclosing_kernel(op)
    if not isinstance(kernel, Operation):
        return None  # placement traits report ops outside any kernel
    interface = kernel.get_trait(KernelInterface)
    assert interface is not None
    if interface.kernel_kind(kernel) != KernelKind.HOST:
        return None  # the placement trait reports it
    host = kernel.attributes.get(HOST_ATTR)
    if not isinstance(host, HostAttr):
        raise VerifyException(
            f"'{op.name}' synchronizes ranks, so its host kernel must be "
            f"distributed: it needs a #{HostAttr.name} attribute named "
            f"'{HOST_ATTR}' (irgl-distribute adds it)"
        )
    return host


def _check_reduction(op: Operation, reduction: Reduction, element: Attribute) -> None:
    """Raise unless `reduction` applies to values of type `element`."""
    if reduction in (Reduction.OR, Reduction.AND):
        if element != IntegerType(1):
            raise VerifyException(
                f"'{op.name}' reduction {reduction.value} combines booleans (i1), "
                f"got {element}"
            )
        return
    if reduction in (Reduction.MINU, Reduction.MAXU) and not isinstance(
        element, IntegerType | IndexType
    ):
        raise VerifyException(
            f"'{op.name}' reduction {reduction.value} is unsigned: it needs "
            f"integers, got {element}"
        )
    if not isinstance(element, IntegerType | IndexType | AnyFloat):
        raise VerifyException(
            f"'{op.name}' reduction {reduction.value} needs integers or floats, "
            f"got {element}"
        )


def _check_one_dimensional(
    op: Operation, array: SSAValue, reduction: Reduction, what: str
) -> None:
    """Raise unless `array` is a one-dimensional memref whose elements
    `reduction` combines (`what`: what the op does to it, for the message)."""
    type_ = array.type
    assert isinstance(type_, MemRefType)
    if len(type_.get_shape()) != 1:
        raise VerifyException(f"'{op.name}' {what}, got {type_}")
    _check_reduction(op, reduction, type_.get_element_type())


class _ArraySync(IRDLOperation):
    """An array synchronized with one of the array reductions."""

    array = operand_def(MemRefType)
    reduction = prop_def(ReductionAttr)

    assembly_format = "$array $reduction attr-dict `:` type($array)"

    def __init__(self, array: SSAValue, reduction: Reduction):
        super().__init__(
            operands=[array], properties={"reduction": ReductionAttr(reduction)}
        )

    def verify_(self) -> None:
        reduction = self.reduction.data
        if reduction not in ARRAY_REDUCTIONS:
            raise VerifyException(
                f"'{self.name}' reduction {reduction.value} combines booleans, not "
                "array entries (expected min, max, minu, maxu, add or set)"
            )
        _check_one_dimensional(
            self, self.array, reduction, "synchronizes a one-dimensional array"
        )
        _distributed_host(self)


@irdl_op_definition
class SyncNodesOp(_ArraySync):
    """Make the copies of a node array agree across ranks (Gluon's
    reduce-then-broadcast).

    Every mirror entry updated on its rank is sent to the node's master and
    combined into it with the reduction (`add`: the master adds each
    mirror's change since the agreed copy); then every master entry that was
    updated, on its rank or by the reduction, is broadcast to all of its
    mirrors. Entries nobody updated move nowhere. Lowers to the runtime's
    exchange over the partition's `mirrors_owned_by` / `masters_mirrored_on`
    lists (NCCL send/recv grouped per peer).

    `masters_only` (with `set`) says that only masters were written (the
    owner computes): there is nothing to reduce, only the broadcast runs
    (`irgl_dist_broadcast_nodes_<T>`); a mirror updated all the same is a
    contract violation.

    `agreed` (with `set`) says that the copies already agree: the mirrors
    were written with the values their masters got (by a kernel over the
    mirrors, `#irgl_dist.mirrors`, that irgl-distribute derived from the
    writer), so nothing moves; the array's agreed copy becomes its
    contents (`irgl_dist_agree_<T>`), as after a broadcast.

        irgl_dist.sync_nodes %level min : memref<?xi32>
        irgl_dist.sync_nodes %rank set masters_only : memref<?xf32>
        irgl_dist.sync_nodes %label set agreed : memref<?xi32>
    """

    name = "irgl_dist.sync_nodes"

    masters_only = opt_prop_def(UnitAttr)
    agreed = opt_prop_def(UnitAttr)

    assembly_format = (
        "$array $reduction (`masters_only` $masters_only^)? (`agreed` $agreed^)? "
        "attr-dict `:` type($array)"
    )

    traits = traits_def(orchestration_construct("sync_nodes"))

    def __init__(
        self,
        array: SSAValue,
        reduction: Reduction,
        masters_only: bool = False,
        agreed: bool = False,
    ):
        super().__init__(array, reduction)
        if masters_only:
            self.masters_only = UnitAttr()
        if agreed:
            self.agreed = UnitAttr()

    def verify_(self) -> None:
        super().verify_()
        if self.masters_only is not None and self.reduction.data != Reduction.SET:
            raise VerifyException(
                f"'{self.name}' masters_only is a broadcast of the owners' "
                f"values: it needs the set reduction, got {self.reduction.data.value}"
            )
        if self.agreed is not None and self.reduction.data != Reduction.SET:
            raise VerifyException(
                f"'{self.name}' agreed says that every copy holds its master's "
                f"value: it needs the set reduction, got {self.reduction.data.value}"
            )
        if self.agreed is not None and self.masters_only is not None:
            raise VerifyException(
                f"'{self.name}' is either masters_only (the masters' values are "
                "broadcast) or agreed (the mirrors already hold them), not both"
            )


@irdl_op_definition
class AllReduceCellsOp(_ArraySync):
    """Make the copies of a replicated array (not indexed by nodes: cells,
    counters) agree across ranks: every entry becomes the reduction of the
    ranks' copies (`add`: the agreed copy plus every rank's change; `set`:
    the updated copy). Lowers to an NCCL all-reduce of the array (for `add`
    and `set`, of the changes).

        irgl_dist.allreduce_cells %win min : memref<?xi32>
    """

    name = "irgl_dist.allreduce_cells"

    traits = traits_def(orchestration_construct("allreduce_cells"))


@irdl_op_definition
class AllReduceOp(IRDLOperation):
    """The reduction of a host value over all ranks (an NCCL all-reduce of
    one element): the termination state of an Any/All invocation, a count.

        %any = irgl_dist.allreduce or %moved : i1
    """

    name = "irgl_dist.allreduce"

    T: ClassVar = VarConstraint(
        "T", base(IntegerType) | base(IndexType) | AnyFloatConstr
    )
    value = operand_def(T)
    reduction = prop_def(ReductionAttr)
    result = result_def(T)

    assembly_format = "$reduction $value attr-dict `:` type($value)"

    traits = traits_def(orchestration_construct("allreduce"))

    def __init__(self, value: SSAValue, reduction: Reduction):
        super().__init__(
            operands=[value],
            result_types=[value.type],
            properties={"reduction": ReductionAttr(reduction)},
        )

    def verify_(self) -> None:
        reduction = self.reduction.data
        if reduction == Reduction.SET:
            raise VerifyException(
                f"'{self.name}' reduction set picks an updated copy of an array "
                "entry; a value has no agreed copy to compare with"
            )
        _check_reduction(self, reduction, self.value.type)
        _distributed_host(self)


@irdl_op_definition
class SyncWorklistOp(IRDLOperation):
    """Make the incoming worklist of the pipe context global (after an
    invocation swapped in and out, `in` holds what it pushed): every item
    that is a mirror is removed and sent to its master's rank, which
    appends it unless it already holds it; under a vertex-cut every master
    item then activates its mirrors that hold edges (appended on their
    ranks). Lowers to an exchange of the worklists' mirror items and
    activations with NCCL.

    With `reduce %array min|max|minu|maxu` it also reduces the node array's
    updated mirrors into their masters, in the same exchange, and broadcasts
    nothing back (Gluon's reduce-only synchronization): each updated mirror
    goes to its master with whether it was pushed, and a pushed mirror
    activates its master only where its value improved the master's.
    Mirrors keep their own rank's value, so irgl-distribute emits it only
    where no kernel reads the array at a mirror except as a filter before
    the array's own atomic (lowering/reduce_only.py). With
    `late_broadcast` the same exchange also carries the masters that changed
    since the rank's previous one to their mirrors, which take them with the
    reduction: a broadcast one round late, with no wait of its own, so
    mirrors lag by a round at most. Lowers to
    `irgl_dist_sync_worklist_reduce_<T>(pipe, array, reduction, late)`.

    With `every_master` the invocation's kernel pushed every node it
    visits, so each rank pushed all its own masters: the mirror items are
    dropped instead of sent, and the worklist is every rank's masters (under
    a vertex-cut with their mirrors that hold edges). Lowers to
    `irgl_dist_sync_worklist_every_master(pipe)`, which exchanges nothing
    towards the masters.

        irgl_dist.sync_worklist
        irgl_dist.sync_worklist every_master
        irgl_dist.sync_worklist reduce %dist min : memref<?xi32>
        irgl_dist.sync_worklist reduce %dist min late_broadcast : memref<?xi32>
    """

    name = "irgl_dist.sync_worklist"

    reduced = opt_operand_def(MemRefType)
    reduction = opt_prop_def(ReductionAttr)
    late_broadcast = opt_prop_def(UnitAttr)
    every_master = opt_prop_def(UnitAttr)

    assembly_format = (
        "(`every_master` $every_master^)? "
        "(`reduce` $reduced^ $reduction (`late_broadcast` $late_broadcast^)? "
        "`:` type($reduced))? attr-dict"
    )

    traits = traits_def(orchestration_construct("sync_worklist"))

    def __init__(
        self,
        reduced: SSAValue | None = None,
        reduction: Reduction | None = None,
        late_broadcast: bool = False,
        every_master: bool = False,
    ):
        properties: dict[str, Attribute] = {}
        if reduction is not None:
            properties["reduction"] = ReductionAttr(reduction)
        if late_broadcast:
            properties["late_broadcast"] = UnitAttr()
        if every_master:
            properties["every_master"] = UnitAttr()
        super().__init__(
            operands=[[reduced] if reduced is not None else []],
            properties=properties,
        )

    def verify_(self) -> None:
        self._verify_reduce()
        parent = self.parent_op()
        while parent is not None and not parent.has_trait(KernelInterface):
            if parent.has_trait(PipeContext):
                host = _distributed_host(self)
                if (
                    self.reduced is not None
                    and host is not None
                    and host.policy.data == Policy.CVC
                ):
                    raise VerifyException(
                        f"'{self.name}' reduce needs an edge-cut (oec): under a "
                        "vertex-cut a popped mirror holds edges and reads its own "
                        "lagging value"
                    )
                return
            parent = parent.parent_op()
        if parent is None:
            return  # placement traits report ops outside any kernel
        raise VerifyException(
            f"'{self.name}' must be inside an irgl.pipe or irgl.iterate: it "
            "synchronizes the worklist of their pipe context"
        )

    def _verify_reduce(self) -> None:
        if (self.reduced is None) != (self.reduction is None):
            raise VerifyException(
                f"'{self.name}' reduce needs both the array and its reduction"
            )
        if self.late_broadcast is not None and self.reduced is None:
            raise VerifyException(
                f"'{self.name}' late_broadcast sends the masters of a reduced "
                "array: it needs reduce"
            )
        if self.every_master is not None and self.reduced is not None:
            raise VerifyException(
                f"'{self.name}' every_master drops the mirror items, and reduce "
                "sends the updated mirrors with them: they do not combine"
            )
        if self.reduced is None or self.reduction is None:
            return
        reduction = self.reduction.data
        if reduction not in REDUCE_ONLY_REDUCTIONS:
            raise VerifyException(
                f"'{self.name}' reduce keeps each rank's mirrors: only min, max, "
                f"minu and maxu tolerate a mirror that lags its master, got "
                f"{reduction.value}"
            )
        _check_one_dimensional(
            self, self.reduced, reduction, "reduces a one-dimensional node array"
        )


@irdl_op_definition
class LocalNodeOp(IRDLOperation):
    """The local id of a global node id (a host argument such as a source):
    on the rank that owns the node its master's local id, on every other rank
    an id of no local node (all ones), which no ForAll index equals and an
    initial worklist drops.

        %s = irgl_dist.local_node %g[%src]
    """

    name = "irgl_dist.local_node"

    graph = operand_def(GraphType)
    node = operand_def(IndexType)
    result = result_def(IndexType)

    assembly_format = "$graph `[` $node `]` attr-dict"

    traits = traits_def(Pure(), orchestration_construct("local_node"))

    def __init__(self, graph: SSAValue, node: SSAValue):
        super().__init__(operands=[graph, node], result_types=[IndexType()])

    def verify_(self) -> None:
        _distributed_host(self)


@irdl_op_definition
class GlobalIdOp(IRDLOperation):
    """The global id of a local node id: what a node id means as data
    (stored into an array, compared by order, cast to an integer), so that
    every rank computes the values a single GPU would.

        %gid = irgl_dist.global_id %g[%n]
    """

    name = "irgl_dist.global_id"

    graph = operand_def(GraphType)
    node = operand_def(IndexType)
    result = result_def(IndexType)

    assembly_format = "$graph `[` $node `]` attr-dict"

    traits = traits_def(Pure(), graph_element_access())

    def __init__(self, graph: SSAValue, node: SSAValue):
        super().__init__(operands=[graph, node], result_types=[IndexType()])


@irdl_op_definition
class IsMasterOp(IRDLOperation):
    """Whether a local node id is one of the rank's masters (local ids below
    the rank's master count; the mirrors follow them):

        %own = irgl_dist.is_master %g[%n]

    Lowers to a comparison with `irgl_dist_num_masters()`."""

    name = "irgl_dist.is_master"

    graph = operand_def(GraphType)
    node = operand_def(IndexType)
    result = result_def(IntegerType(1))

    assembly_format = "$graph `[` $node `]` attr-dict"

    traits = traits_def(Pure(), graph_element_access())

    def __init__(self, graph: SSAValue, node: SSAValue):
        super().__init__(operands=[graph, node], result_types=[IntegerType(1)])


@irdl_op_definition
class PushMirrorOp(IRDLOperation):
    """Pushes a mirror without a worklist slot: sets the pushed bit that the
    next worklist exchange sends to the mirror's master (the bit a push of
    the mirror would set when the exchange marks the worklist's items), so
    the master is activated where the mirror's value improved it. `%n` must
    be a mirror (`irgl_dist.is_master` false); irgl-distribute emits it in
    the round kernel of an Iterate synchronized reduce-only, in place of a
    neighbour's push and of the round stamp's exchange that decides it.

        irgl_dist.push_mirror %g[%n]

    Lowers to `irgl_dist_push_mirror(n)`, a byte store into the rank's
    pushed-mirror flags."""

    name = "irgl_dist.push_mirror"

    graph = operand_def(GraphType)
    node = operand_def(IndexType)

    assembly_format = "$graph `[` $node `]` attr-dict"

    traits = traits_def(kernel_construct("push_mirror"))

    def __init__(self, graph: SSAValue, node: SSAValue):
        super().__init__(operands=[graph, node])


IrglDist = Dialect(
    "irgl_dist",
    [
        SyncNodesOp,
        AllReduceCellsOp,
        AllReduceOp,
        SyncWorklistOp,
        LocalNodeOp,
        GlobalIdOp,
        IsMasterOp,
        PushMirrorOp,
    ],
    [ReductionAttr, PolicyAttr, HostAttr, AcrossRanksAttr],
)
