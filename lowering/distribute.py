"""`irgl-distribute`: derive and insert the synchronization of a program run on
P ranks (D-IrGL/Gluon style), as ops of the `irgl_dist` dialect.

For every plain kernel the pass finds the *node arrays* (memrefs indexed by
node ids: a ForAll's node, a popped item, an edge's destination) and the
*cell arrays* (indexed by values the same in every thread), and how each is
written in the kernel's distributed ForAll (over nodes or the worklist):

- atomic min/max (signed, unsigned, float) and add (`memref.atomic_rmw`)
  give that reduction;
- a plain store at the ForAll's own node, or (edge-cut) at the popped node,
  is the owner's: `set`;
- a store, or an atomic exchange, of a value the same in every thread (such
  as the round's level) is `set` wherever it lands: every rank that updates
  the entry writes the same value.

After each invocation of such a kernel (`irgl.invoke`, or each round of an
`irgl.iterate`, at the start of its body) it inserts `irgl_dist.sync_nodes`
for each node array written (reduce mirrors into masters, broadcast the
updated masters), `irgl_dist.allreduce_cells` for each cell array written,
and `irgl_dist.sync_worklist` if the kernel pushes (mirror items go to their
owner's next worklist; under a vertex-cut, masters activate their mirrors).
The Any/All result of an `irgl.invoke` is all-reduced (`irgl_dist.allreduce`);
every Iterate and Pipe gets `#irgl_dist.across_ranks` (termination tested
across ranks, initial worklist distributed). Host node ids that kernels
compare with nodes or that fill initial worklists are translated with
`irgl_dist.local_node`; a node id used as data in a kernel (stored, cast,
compared by order) becomes its global id (`irgl_dist.global_id`). The host
kernel gets `#irgl_dist.host<policy, nodes = [...]>`. A node array written only
at its masters and never read at another node is left alone (its masters
are all that is gathered).

A node array that an `irgl.invoke`d kernel writes only with plain stores at
its ForAll's node, of values computed from the node's global id, constants,
scalar arguments and the node's eq/ne comparisons with node-id arguments
(CC's `label[n] = n`, a stamp's `0`, BFS's `n == src ? 0 : inf`: on the
mirrors' copy the comparison is of global ids, the argument passed
untranslated), is not broadcast:
a kernel over the rank's mirrors (`@<kernel>_mirrors`, its ForAll marked
`#irgl_dist.mirrors`) computes the mirrors' values the same way, invoked
right after the writer, and `irgl_dist.sync_nodes ... set agreed` only
records that the copies agree.

Under a vertex-cut (cvc) a rank's degree of a node is its share of the
node's edges; a degree test that only decides whether the node is pushed
(`scf.if (degree != 0) { push node }`, SSSP's source) becomes `true` (the
node is pushed whatever its degree); any other degree read is refused.

Where a program cannot be distributed the pass stops with a located
diagnostic that says why: Exclusive or Atomic (locks do not span ranks), C
text touching arrays, a node array indexed by a value loaded from memory (a
pointer chase: the node may be on another rank), a neighbour's edges or
degree, a store of a per-thread value into another node's entry, arrays
used both ways, node arrays on the host, node counts used for anything but
sizing a node array.

Options: `policy` (`oec`, the default, or `cvc`: what the partitions look
like, see `irgl_runner.partition`), `remarks` (print what is synchronized
and how, one line per array and invocation, to stderr).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import NoReturn, TextIO

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException

from irgl_dialect.attributes import Aggregation, GraphType, IteratorKind, KernelKind
from irgl_dialect.c_escape import CBlockOp, CExprOp
from irgl_dialect.distributed import (
    HOST_ATTR,
    MIRRORS_ATTR,
    TERMINATION_ATTR,
    AcrossRanksAttr,
    AllReduceCellsOp,
    AllReduceOp,
    GlobalIdOp,
    HostAttr,
    LocalNodeOp,
    Policy,
    Reduction,
    SyncNodesOp,
    SyncWorklistOp,
)
from irgl_dialect.graph import (
    DegreeOp,
    EdgeDstOp,
    EdgeWeightOp,
    FirstEdgeOp,
    LastEdgeOp,
    MaxDegreeOp,
    NumEdgesOp,
    NumNodesOp,
)
from irgl_dialect.kernels import KernelOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.placement import is_uniform
from irgl_dialect.sync import AtomicOp, ExclusiveOp
from irgl_dialect.worklist import PopOp, PushOp
from lowering.builders import unique_name
from lowering.mirror_pushes import push_mirrors
from lowering.reduce_only import KernelNodes, RoundSite, reduce_only_arrays
from lowering.round_stamps import (
    StampSite,
    decides_only_pushes,
    int_constant,
    kernel_param,
    unsynchronized_stamps,
)
from lowering.runtime_calls import location_prefix

#: How a plain store at the ForAll's own node, and at the popped node, is
#: described (Write.how).
_OWN_STORE = "stores at the ForAll's node"
_POPPED_STORE = "stores at the popped node"

#: The writes that land on the writing rank's masters only, per policy: a
#: ForAll over nodes runs over masters; popped items are masters under an
#: edge-cut (under a vertex-cut a mirror may be popped too).
_MASTER_STORES: dict[Policy, frozenset[str]] = {
    Policy.OEC: frozenset({_OWN_STORE, _POPPED_STORE}),
    Policy.CVC: frozenset({_OWN_STORE}),
}


def fail(op: Operation, message: str) -> NoReturn:
    """Stop the pass with a diagnostic that shows `op` in its IR."""
    text = f"cannot distribute: {message}"
    op.emit_error(text, PassFailedException(text))


def _name(value: SSAValue) -> str:
    """`%name` of a value for diagnostics (or its type when unnamed)."""
    return f"%{value.name_hint}" if value.name_hint else f"a {value.type} value"


class NodeKind(Enum):
    """Where a node id comes from, in a plain kernel."""

    #: the index of a ForAll over nodes: one of the rank's masters
    OWN = "the ForAll's node"
    #: a popped worklist item: a master, or under a vertex-cut a mirror
    POPPED = "the popped node"
    #: an edge's destination: a master or a mirror
    NEIGHBOUR = "a neighbour"
    #: a kernel argument the host passes as a node id (a source)
    ARG = "a node id argument"


#: memref.atomic_rmw kinds (MLIR's AtomicRMWKind) and their reductions.
_ATOMIC_REDUCTIONS: dict[int, tuple[Reduction, str]] = {
    0: (Reduction.ADD, "atomic addf"),
    1: (Reduction.ADD, "atomic addi"),
    3: (Reduction.MAX, "atomic maximumf"),
    4: (Reduction.MAX, "atomic maxs"),
    5: (Reduction.MAXU, "atomic maxu"),
    6: (Reduction.MIN, "atomic minimumf"),
    7: (Reduction.MIN, "atomic mins"),
    8: (Reduction.MINU, "atomic minu"),
    13: (Reduction.MAX, "atomic maxnumf"),
    14: (Reduction.MIN, "atomic minnumf"),
}
_ATOMIC_ASSIGN = 2


@dataclass
class Write:
    """One way a kernel writes an array: its reduction and a description."""

    reduction: Reduction
    how: str
    op: Operation


@dataclass
class KernelSummary:
    """What `irgl-distribute` learned about one plain kernel (by parameter)."""

    kernel: KernelOp
    node_params: set[int] = field(default_factory=set[int])
    cell_params: set[int] = field(default_factory=set[int])
    node_writes: dict[int, list[Write]] = field(default_factory=dict[int, list[Write]])
    cell_writes: dict[int, list[Write]] = field(default_factory=dict[int, list[Write]])
    #: node arrays read (or written) at an index other than the ForAll's node
    read_elsewhere: set[int] = field(default_factory=set[int])
    node_id_params: set[int] = field(default_factory=set[int])
    pushes: bool = False
    #: a ForAll over the nodes at the kernel's top level pushes its node
    #: unconditionally: every rank pushes all its own masters
    pushes_every_node: bool = False
    #: node ids that are masters (the ForAll's node; under an edge-cut the
    #: popped node) and edge destinations
    masters: set[SSAValue] = field(default_factory=set[SSAValue])
    neighbours: set[SSAValue] = field(default_factory=set[SSAValue])

    def reduction(self, writes: list[Write]) -> Reduction:
        """The one reduction of `writes` (a diagnostic if they disagree)."""
        first = writes[0]
        for other in writes[1:]:
            if other.reduction != first.reduction:
                fail(
                    other.op,
                    f"@{self.kernel.sym_name.data} writes the same array with "
                    f"{first.how} ({first.reduction.value}) and {other.how} "
                    f"({other.reduction.value}): one reduction must combine the "
                    "copies of an entry on several ranks",
                )
        return first.reduction


def _outermost_forall(op: Operation) -> ForAllOp | None:
    outermost: ForAllOp | None = None
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        if isinstance(parent, ForAllOp):
            outermost = parent
        parent = parent.parent_op()
    return outermost


def _pushes_its_node(push: PushOp, kernel: KernelOp) -> bool:
    """Does `push` push the node of a ForAll over the nodes, in the ForAll's
    body itself (not under a condition or a loop), with the ForAll at the
    top level of `kernel`'s body (so every invocation visits every node)?"""
    loop = push.parent_op()
    return (
        isinstance(loop, ForAllOp)
        and loop.iterator.data == IteratorKind.NODES
        and push.item is loop.index
        and loop.parent_op() is kernel
    )


def _distributed(op: Operation) -> bool:
    """Is `op` in a ForAll over nodes or the worklist (split over ranks), as
    opposed to a range ForAll or the kernel's top level (every rank runs all
    of it: replicated)?"""
    loop = _outermost_forall(op)
    return loop is not None and loop.iterator.data in (
        IteratorKind.NODES,
        IteratorKind.WORKLIST,
    )


class _KernelAnalysis:
    """Walks one plain kernel; fills a `KernelSummary` and collects the node
    ids used as data."""

    def __init__(self, kernel: KernelOp, policy: Policy):
        self.kernel = kernel
        self.policy = policy
        self.summary = KernelSummary(kernel)
        self.nodes: dict[SSAValue, NodeKind] = {}
        #: (user, operand index): node ids used as data
        self.data_uses: list[tuple[Operation, int]] = []
        #: (cvc) degree tests that only decide whether a node is pushed
        self.push_guards: list[arith.CmpiOp] = []
        graphs = [a for a in kernel.body.block.args if isinstance(a.type, GraphType)]
        self.graph: SSAValue | None = graphs[0] if graphs else None

    @property
    def where(self) -> str:
        return f"@{self.kernel.sym_name.data}"

    def run(self) -> KernelSummary:
        for arg in self.kernel.body.block.args:
            if isinstance(arg.type, IndexType) and self._compared_with_node(arg):
                self.nodes[arg] = NodeKind.ARG
                self.summary.node_id_params.add(arg.index)
        for op in self.kernel.body.walk():
            self._visit(op)
        for value, kind in self.nodes.items():
            self._check_uses(value, kind)
            if kind == NodeKind.NEIGHBOUR:
                self.summary.neighbours.add(value)
            elif kind == NodeKind.OWN or (
                kind == NodeKind.POPPED and self.policy == Policy.OEC
            ):
                self.summary.masters.add(value)
        return self.summary

    def _compared_with_node(self, arg: BlockArgument) -> bool:
        """Is a kernel index parameter compared (eq/ne) with a node id?"""
        for use in arg.uses:
            user = use.operation
            if isinstance(user, arith.CmpiOp) and user.predicate.value.data in (0, 1):
                other = user.operands[1 - use.index]
                if self._node_source(other):
                    return True
        return False

    @staticmethod
    def _node_source(value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            loop = value.block.parent_op()
            return (
                isinstance(loop, ForAllOp) and loop.iterator.data == IteratorKind.NODES
            )
        return isinstance(value.owner, PopOp | EdgeDstOp)

    # -- ops ---------------------------------------------------------------

    def _visit(self, op: Operation) -> None:
        if isinstance(op, ForAllOp):
            kind = op.iterator.data
            if kind == IteratorKind.NODES:
                self.nodes[op.index] = NodeKind.OWN
            elif kind == IteratorKind.EDGES:
                self._structure(op, op.bounds[1], "walks the edges of")
        elif isinstance(op, PopOp):
            self.nodes[op.item] = NodeKind.POPPED
        elif isinstance(op, EdgeDstOp):
            self.nodes[op.result] = NodeKind.NEIGHBOUR
        elif isinstance(op, FirstEdgeOp | LastEdgeOp):
            self._structure(op, op.element, "reads the edge range of")
        elif isinstance(op, DegreeOp):
            self._structure(op, op.element, "reads the degree of")
        elif isinstance(op, NumNodesOp | NumEdgesOp | MaxDegreeOp):
            fail(
                op,
                f"{self.where} reads the graph's size, which is the rank's "
                "local count on a partition, not the graph's",
            )
        elif isinstance(op, ExclusiveOp):
            fail(
                op,
                f"{self.where}: an Exclusive locks nodes that other ranks "
                "update too, and mutual exclusion does not span ranks",
            )
        elif isinstance(op, AtomicOp):
            fail(
                op,
                f"{self.where}: an Atomic section's lock holds on one rank "
                "only; the nodes it protects have copies on other ranks",
            )
        elif isinstance(op, CBlockOp | CExprOp):
            arrays = [v for v in op.operands if isinstance(v.type, MemRefType)]
            if arrays:
                fail(
                    op,
                    f"{self.where}: C text reads or writes {_name(arrays[0])}, "
                    "and the pass cannot see which entries or how, so it "
                    "cannot synchronize them",
                )
        elif isinstance(op, PushOp):
            self.summary.pushes = True
            if _pushes_its_node(op, self.summary.kernel):
                self.summary.pushes_every_node = True
            kind = self.nodes.get(op.item)
            if kind is None or kind == NodeKind.ARG:
                fail(
                    op,
                    f"{self.where} pushes {_name(op.item)}, which is not a node "
                    "id the pass can follow (a ForAll's node, a popped item or "
                    "an edge's destination)",
                )
            if not _distributed(op):
                fail(
                    op,
                    f"{self.where} pushes outside a ForAll over nodes or the worklist",
                )
        elif isinstance(op, memref.LoadOp):
            self._access(op, op.memref, op.indices, None)
        elif isinstance(op, memref.StoreOp):
            self._access(op, op.memref, op.indices, op.value)
        elif isinstance(op, memref.AtomicRMWOp):
            self._access(op, op.memref, op.indices, op.value)
        elif not isinstance(op, memref.DimOp | memref.DeallocOp):
            arrays = [v for v in op.operands if isinstance(v.type, MemRefType)]
            if arrays:
                fail(
                    op,
                    f"{self.where} passes {_name(arrays[0])} to '{op.name}', "
                    "which the pass cannot see into to learn how it is written",
                )

    def _structure(self, op: Operation, node: SSAValue, what: str) -> None:
        """Check a read of a node's edges or degree."""
        kind = self.nodes.get(node)
        if kind in (NodeKind.NEIGHBOUR, NodeKind.ARG, None):
            fail(
                op,
                f"{self.where} {what} {_name(node)}, "
                + (
                    "a neighbour"
                    if kind == NodeKind.NEIGHBOUR
                    else "a node the pass cannot follow"
                )
                + ": only the ranks that hold its edges know them (under an "
                "edge-cut a mirror has none)",
            )
        if self.policy == Policy.CVC and isinstance(op, DegreeOp):
            guard = _push_guard(op, node)
            if guard is not None:
                self.push_guards.append(guard)
                return
            fail(
                op,
                f"{self.where} reads the degree of {_name(node)}: under a "
                "vertex-cut (cvc) a node's edges are split over the ranks of its "
                "grid row, so a rank's degree is not the node's; distribute with "
                "policy=oec",
            )
        partial = isinstance(op, FirstEdgeOp | LastEdgeOp) or (
            isinstance(op, ForAllOp) and op.result is not None
        )
        if self.policy == Policy.CVC and kind == NodeKind.POPPED and partial:
            fail(
                op,
                f"{self.where} {what} {_name(node)}, the popped node, to "
                f"{'reduce over them' if isinstance(op, ForAllOp) else 'search them'}"
                ": under a vertex-cut (cvc) each rank of the node's grid row "
                "holds part of its edges, so the result would be partial; "
                "distribute with policy=oec",
            )
        if self.policy == Policy.CVC and kind == NodeKind.OWN:
            fail(
                op,
                f"{self.where} {what} {_name(node)}, the node of a ForAll over "
                "nodes: under a vertex-cut (cvc) its edges are split over the "
                "ranks of its grid row, but a ForAll over nodes runs on masters "
                "only; distribute with policy=oec",
            )

    def _access(
        self,
        op: Operation,
        array: SSAValue,
        indices: Sequence[SSAValue],
        value: SSAValue | None,
    ) -> None:
        """Classify a load, store or atomic of a kernel's array parameter."""
        position = kernel_param(self.kernel, array)
        if position is None or len(indices) != 1:
            return  # a kernel-local array: private to the thread or block
        index = indices[0]
        kind = self.nodes.get(index)
        distributed = _distributed(op)
        summary = self.summary
        if kind is not None:
            if not distributed:
                fail(
                    op,
                    f"{self.where} accesses node array {_name(array)} outside a "
                    "ForAll over nodes or the worklist: every rank would run "
                    "it, each with its own nodes",
                )
            if kind == NodeKind.ARG:
                fail(
                    op,
                    f"{self.where} indexes node array {_name(array)} with a node "
                    "id argument: only the node's owner holds it",
                )
            if position in summary.cell_params:
                self._both_ways(op, array)
            summary.node_params.add(position)
            if kind != NodeKind.OWN:
                summary.read_elsewhere.add(position)
            if value is not None:
                write = self._node_write(op, array, kind, value)
                summary.node_writes.setdefault(position, []).append(write)
            return
        if distributed and not is_uniform(index):
            fail(
                op,
                f"{self.where} indexes {_name(array)} with {_name(index)}, which "
                "is neither a node id the pass can follow (a ForAll's node, a "
                "popped item, an edge's destination) nor the same in every "
                "thread: if it is a node (say, loaded from memory) it may live "
                "on another rank",
            )
        if position in summary.node_params:
            self._both_ways(op, array)
        summary.cell_params.add(position)
        if value is not None and distributed:
            write = self._cell_write(op, array, value)
            summary.cell_writes.setdefault(position, []).append(write)

    def _both_ways(self, op: Operation, array: SSAValue) -> NoReturn:
        fail(
            op,
            f"{self.where} indexes {_name(array)} both by node ids and by other "
            "values: it must be either a node array (one entry per node) or "
            "a replicated array",
        )

    def _atomic(self, op: memref.AtomicRMWOp, array: SSAValue) -> Write | None:
        kind = op.kind.value.data
        if kind == _ATOMIC_ASSIGN:
            return None
        found = _ATOMIC_REDUCTIONS.get(kind)
        if found is None:
            fail(
                op,
                f"{self.where} updates {_name(array)} with atomic_rmw kind "
                f"{kind}, which has no reduction across ranks (min, max, add)",
            )
        if found[0] == Reduction.ADD and op.result.uses:
            fail(
                op,
                f"{self.where} uses the value an atomic add on {_name(array)} "
                "returns: on one rank it holds only that rank's additions, not "
                "the sum a single GPU would see (the value a min or max returns "
                "may be used: a rank's copy only errs on the side of repeating "
                "work)",
            )
        return Write(found[0], found[1], op)

    def _node_write(
        self, op: Operation, array: SSAValue, kind: NodeKind, value: SSAValue
    ) -> Write:
        where = kind.value
        if isinstance(op, memref.AtomicRMWOp):
            write = self._atomic(op, array)
            if write is not None:
                return Write(write.reduction, f"{write.how} at {where}", op)
        if kind == NodeKind.OWN:
            return Write(Reduction.SET, _OWN_STORE, op)
        if kind == NodeKind.POPPED and self.policy == Policy.OEC:
            return Write(Reduction.SET, _POPPED_STORE, op)
        if is_uniform(value):
            return Write(Reduction.SET, f"stores one value for all at {where}", op)
        fail(
            op,
            f"{self.where} stores {_name(value)}, which differs between threads, "
            f"into {where}'s entry of {_name(array)}"
            + (
                " (under a vertex-cut a popped node may be a mirror)"
                if kind == NodeKind.POPPED
                else ""
            )
            + ": with copies on several ranks no reduction says which store "
            "wins; use an atomic min, max or add",
        )

    def _cell_write(self, op: Operation, array: SSAValue, value: SSAValue) -> Write:
        if isinstance(op, memref.AtomicRMWOp):
            write = self._atomic(op, array)
            if write is not None:
                return write
        if is_uniform(value):
            return Write(Reduction.SET, "stores one value for all", op)
        fail(
            op,
            f"{self.where} stores {_name(value)}, which differs between threads, "
            f"into the replicated array {_name(array)}: the ranks' copies would "
            "disagree with no reduction to reconcile them",
        )

    # -- node ids as data ----------------------------------------------------

    def _check_uses(self, value: SSAValue, kind: NodeKind) -> None:
        for use in list(value.uses):
            user = use.operation
            if self._as_node(user, use.index):
                continue
            if kind == NodeKind.ARG:
                fail(
                    user,
                    f"{self.where} uses node id argument {_name(value)} other "
                    "than to compare it with nodes (eq, ne): its value is the "
                    "node's local id on its owner",
                )
            self.data_uses.append((user, use.index))

    def _as_node(self, user: Operation, index: int) -> bool:
        """Does `user` use its operand `index` as a node id (not as data)?"""
        if isinstance(user, memref.LoadOp | memref.StoreOp | memref.AtomicRMWOp):
            return index >= (
                2 if isinstance(user, memref.StoreOp | memref.AtomicRMWOp) else 1
            )
        if isinstance(
            user,
            PushOp | FirstEdgeOp | LastEdgeOp | DegreeOp | GlobalIdOp | EdgeWeightOp,
        ):
            return True
        if isinstance(user, ForAllOp):
            return True
        if isinstance(user, arith.CmpiOp) and user.predicate.value.data in (0, 1):
            return user.operands[1 - index] in self.nodes
        return False

    def rewrite_push_guards(self, rewriter: Rewriter) -> None:
        """(cvc) A node whose degree decides only whether it is pushed is
        pushed whatever its degree: a rank's degree is the node's edges on
        that rank, and pushing a node without edges costs a round."""
        for test in self.push_guards:
            degrees = [v.owner for v in test.operands if isinstance(v.owner, DegreeOp)]
            rewriter.replace_op(test, arith.ConstantOp.from_int_and_width(1, 1))
            for degree in degrees:
                if not degree.result.uses:
                    rewriter.erase_op(degree)

    def rewrite_data_uses(self, rewriter: Rewriter) -> None:
        """Replace each node id used as data with its global id."""
        for user, index in self.data_uses:
            if self.graph is None:
                fail(
                    user,
                    f"{self.where} uses a node id as data but has no graph "
                    "argument to translate it to a global id",
                )
            value = user.operands[index]
            global_id = GlobalIdOp(self.graph, value)
            global_id.result.name_hint = (value.name_hint or "node") + "_global"
            rewriter.insert_op(global_id, InsertPoint.before(user))
            user.operands[index] = global_id.result


# --------------------------------------------------------------------------
# the host side
# --------------------------------------------------------------------------


def _push_guard(degree: DegreeOp, node: SSAValue) -> arith.CmpiOp | None:
    """The test `degree != 0` (or `degree > 0`) of `node`'s degree, where it
    is all the degree is read for and its only use is to decide whether
    `node` is pushed (`scf.if` with no results, no else and only pushes of
    `node` in it); else None."""
    uses = list(degree.result.uses)
    if len(uses) != 1 or not isinstance(test := uses[0].operation, arith.CmpiOp):
        return None
    predicate = test.predicate.value.data
    if predicate == 1:  # ne, either side
        other = test.rhs if test.lhs is degree.result else test.lhs
    elif predicate in (4, 8) and test.lhs is degree.result:  # sgt, ugt
        other = test.rhs
    else:
        return None
    if int_constant(other) != 0 or not test.result.uses:
        return None
    return test if decides_only_pushes(test.result, node) else None


class _Roots:
    """Union-find over host memref values (an Iterate's carried arrays are
    one array seen under several names)."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, value: SSAValue) -> SSAValue:
        while (up := self.parent.get(value, value)) is not value:
            value = up
        return value

    def union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


@dataclass
class _Site:
    """An invocation on the host: its op, kernel summary and the host values
    of the kernel's parameters (inside an Iterate's body: the carried ones as
    body arguments)."""

    op: InvokeOp | IterateOp
    summary: KernelSummary
    args: list[SSAValue]


def _remark(out: TextIO | None, op: Operation, where: str, text: str) -> None:
    if out is None:
        return
    at = location_prefix(op)
    print(f"remark: {at}{op.name} in @{where}: {text}", file=out)


class _HostDistribution:
    """Distributes one host kernel given the summaries of the plain kernels."""

    def __init__(
        self,
        host: KernelOp,
        summaries: dict[str, KernelSummary],
        policy: Policy,
        remarks: TextIO | None,
        mirrors: bool = True,
        reduce_only: bool = True,
        late_broadcast: bool = False,
    ):
        self.host = host
        self.late_broadcast = late_broadcast
        self.mirrors = mirrors
        self.allow_reduce_only = reduce_only and policy == Policy.OEC
        #: Iterate -> (position, reduction) of the node array its round
        #: kernel's writes synchronize reduce-only (lowering/reduce_only.py)
        self.reduce_only: dict[IterateOp, tuple[int, Reduction]] = {}
        self.summaries = summaries
        self.policy = policy
        self.remarks = remarks
        self.roots = _Roots()
        self.sites: list[_Site] = []
        self.node_arrays: dict[SSAValue, Operation] = {}
        self.cell_arrays: dict[SSAValue, Operation] = {}
        self.read_elsewhere: set[SSAValue] = set()
        self.node_ids: list[tuple[Operation, int]] = []
        #: (Iterate, position) -> synchronized after each run instead: round
        #: stamps left unsynchronized after each round
        self.stamps: dict[tuple[IterateOp, int], bool] = {}
        #: (Invoke, its kernel, node-array positions) whose mirrors a kernel
        #: over the mirrors computes (`finish_mirrors`)
        self.mirror_fills: list[tuple[InvokeOp, KernelSummary, list[int]]] = []

    @property
    def where(self) -> str:
        return self.host.sym_name.data

    def run(self, rewriter: Rewriter) -> None:
        for op in self.host.body.walk():
            if isinstance(op, InvokeOp | IterateOp):
                self._site(op)
            elif isinstance(op, PipeOp):
                self._initial(op, op.initial, op.initial_array, 0)
        for site in self.sites:
            self._roles(site)
        self._host_accesses()
        self.stamps = unsynchronized_stamps(
            [StampSite(s.op, s.summary.kernel, s.args) for s in self.sites],
            self.roots.find,
        )
        if self.allow_reduce_only:
            self.reduce_only = self._reduce_only()
        self._translate_node_ids(rewriter)
        for site in self.sites:
            self._insert_syncs(site, rewriter)
        for op in self.host.body.walk():
            if isinstance(op, IterateOp | PipeOp):
                op.attributes[TERMINATION_ATTR] = AcrossRanksAttr()
        args = self.host.body.block.args
        positions = [
            a.index
            for a in args
            if isinstance(a.type, MemRefType) and self.roots.find(a) in self.node_arrays
        ]
        self.host.attributes[HOST_ATTR] = HostAttr(self.policy, positions)
        names = ", ".join(_name(args[p]) for p in positions) or "none"
        _remark(self.remarks, self.host, self.where, f"node-array arguments: {names}")

    def _reduce_only(self) -> dict[IterateOp, tuple[int, Reduction]]:
        """The Iterates whose round's node array is synchronized reduce-only
        (see lowering/reduce_only.py)."""

        def nodes(summary: KernelSummary) -> KernelNodes:
            return KernelNodes(summary.kernel, summary.masters, summary.neighbours)

        rounds = [
            RoundSite(
                site.op,
                nodes(site.summary),
                site.args,
                {
                    position: site.summary.reduction(writes)
                    for position, writes in site.summary.node_writes.items()
                    if (site.op, position) not in self.stamps
                },
                site.summary.pushes,
            )
            for site in self.sites
            if isinstance(site.op, IterateOp)
        ]

        def users(array: SSAValue) -> list[tuple[KernelNodes, set[int]]]:
            root = self.roots.find(array)
            found: list[tuple[KernelNodes, set[int]]] = []
            for site in self.sites:
                positions = {
                    p for p, a in enumerate(site.args) if self.roots.find(a) is root
                }
                if positions:
                    found.append((nodes(site.summary), positions))
            return found

        return reduce_only_arrays(rounds, users)

    def _site(self, op: InvokeOp | IterateOp) -> None:
        name = op.callee.string_value()
        summary = self.summaries.get(name)
        if summary is None:
            return  # not a plain kernel: the verifier reports it
        args = list(op.args)
        if isinstance(op, IterateOp):
            positions = op.carried_positions
            for carried, result, position in zip(
                op.body.block.args, op.results, positions, strict=True
            ):
                if isinstance(carried.type, MemRefType):
                    self.roots.union(carried, args[position])
                    self.roots.union(result, args[position])
                args[position] = carried
            terminator = op.body.block.last_op
            if terminator is not None:
                for carried, yielded in zip(
                    op.body.block.args, terminator.operands, strict=False
                ):
                    if isinstance(carried.type, MemRefType):
                        self.roots.union(yielded, carried)
            self._initial(op, op.initial, op.initial_array, len(op.args))
        for position in summary.node_id_params:
            self.node_ids.append((op, position))
        self.sites.append(_Site(op, summary, args))

    def _initial(
        self,
        op: Operation,
        initial: Sequence[SSAValue],
        initial_array: SSAValue | None,
        start: int,
    ) -> None:
        if initial_array is not None:
            fail(
                op,
                f"the initial worklist comes from array {_name(initial_array)}, "
                "whose node ids the pass cannot tell apart from other data "
                "(give the items as values, or push them in a kernel)",
            )
        for offset in range(len(initial)):
            self.node_ids.append((op, start + offset))

    def _roles(self, site: _Site) -> None:
        summary = site.summary
        for position in summary.node_params | summary.cell_params:
            root = self.roots.find(site.args[position])
            mine, other = (
                (self.node_arrays, self.cell_arrays)
                if position in summary.node_params
                else (self.cell_arrays, self.node_arrays)
            )
            if root in other:
                fail(
                    site.op,
                    f"{_name(site.args[position])} is a node array in one kernel "
                    "and a replicated array (indexed by other values) in "
                    f"another (see {other[root].name} earlier); it must be one "
                    "or the other",
                )
            mine.setdefault(root, site.op)
            if position in summary.read_elsewhere:
                self.read_elsewhere.add(root)

    def _host_accesses(self) -> None:
        for op in self.host.body.walk():
            if isinstance(op, memref.LoadOp | memref.StoreOp | memref.AtomicRMWOp):
                if self.roots.find(op.memref) in self.node_arrays:
                    fail(
                        op,
                        f"the host accesses node array {_name(op.memref)}: each "
                        "rank holds only its own nodes' entries",
                    )
            elif isinstance(op, NumNodesOp):
                for use in op.result.uses:
                    user = use.operation
                    if not isinstance(user, memref.AllocOp):
                        fail(
                            user,
                            "the node count is the rank's local count on a "
                            "partition; it may only size node arrays",
                        )
            elif isinstance(op, NumEdgesOp):
                fail(op, "the edge count is the rank's local count on a partition")
            elif isinstance(op, MaxDegreeOp):
                fail(op, "the largest degree is the rank's own on a partition")
            elif isinstance(op, CBlockOp | CExprOp):
                fail(op, "C text on the host would run on every rank with its own data")
        for root, _ in self.node_arrays.items():
            owner = root.owner
            if isinstance(owner, memref.AllocOp) and not (
                len(owner.dynamic_sizes) == 1
                and isinstance(owner.dynamic_sizes[0].owner, NumNodesOp)
            ):
                fail(
                    owner,
                    f"node array {_name(root)} is not allocated with the graph's "
                    "node count (irgl.graph.num_nodes), the size of a node array "
                    "on every rank",
                )

    def _translate_node_ids(self, rewriter: Rewriter) -> None:
        graphs = [a for a in self.host.body.block.args if isinstance(a.type, GraphType)]
        local: dict[SSAValue, SSAValue] = {}
        for op, position in self.node_ids:
            value = op.operands[position]
            if not graphs:
                fail(op, "a node id needs the host kernel's graph to translate it")
            if value not in local:
                translated = LocalNodeOp(graphs[0], value)
                translated.result.name_hint = (value.name_hint or "node") + "_local"
                if isinstance(value, BlockArgument):
                    block: Block = value.block
                    rewriter.insert_op(translated, InsertPoint.at_start(block))
                else:
                    rewriter.insert_op(translated, InsertPoint.after(value.owner))  # pyright: ignore[reportArgumentType]
                local[value] = translated.result
                _remark(
                    self.remarks,
                    op,
                    self.where,
                    f"{_name(value)} is a node id: its owner's local id on each rank",
                )
            op.operands[position] = local[value]

    def _insert_syncs(self, site: _Site, rewriter: Rewriter) -> None:
        summary = site.summary
        callee = f"@{summary.kernel.sym_name.data}"
        ops: list[Operation] = []
        after_runs: list[Operation] = []
        computed: list[int] = []  # node arrays whose mirrors a kernel computes
        reduced = (
            self.reduce_only.get(site.op) if isinstance(site.op, IterateOp) else None
        )
        for position, writes in sorted(summary.node_writes.items()):
            reduction = summary.reduction(writes)
            array = site.args[position]
            root = self.roots.find(array)
            hows = ", ".join(sorted({w.how for w in writes}))
            if reduced is not None and reduced[0] == position:
                _remark(
                    self.remarks,
                    site.op,
                    self.where,
                    f"after {callee}: {_name(array)} reduced by sync_worklist, "
                    f"reduce-only ({hows}; mirrors are read only as filters "
                    "before the atomic, so masters are not broadcast back, and "
                    "a pushed mirror activates its master only where it "
                    "improved it)",
                )
                continue
            if (
                reduction == Reduction.SET
                and all(w.how == _OWN_STORE for w in writes)
                and root not in self.read_elsewhere
            ):
                _remark(
                    self.remarks,
                    site.op,
                    self.where,
                    f"after {callee}: {_name(array)} not synchronized ({hows}; "
                    "no kernel reads it at another node)",
                )
                continue
            stamp = (site.op, position) if isinstance(site.op, IterateOp) else None
            if stamp is not None and stamp in self.stamps:
                if self.stamps[stamp] and self._clears_computed(site, root):
                    once = (
                        "; every clear is computed on the mirrors too, so the "
                        "copies agree after each clear"
                    )
                elif self.stamps[stamp]:
                    outer = site.op.args[position]
                    after_runs.append(SyncNodesOp(outer, Reduction.SET))
                    once = (
                        "; sync_nodes set after each run of the irgl.iterate, "
                        "so that the copies agree before the next clear"
                    )
                else:
                    once = ""
                _remark(
                    self.remarks,
                    site.op,
                    self.where,
                    f"after {callee}: {_name(array)} not synchronized after a "
                    "round (a round stamp: it only decides pushes, and every "
                    "copy holds an earlier round or a clear, so each rank's own "
                    f"copy decides as a synchronized one would){once}",
                )
                continue
            # stores at the writer's own masters: only the broadcast is needed
            owners = reduction == Reduction.SET and all(
                w.how in _MASTER_STORES[self.policy] for w in writes
            )
            if self._computed_on_mirrors(site, position):
                computed.append(position)
                ops.append(SyncNodesOp(array, reduction, agreed=True))
                _remark(
                    self.remarks,
                    site.op,
                    self.where,
                    f"after {callee}: {_name(array)} computed on the mirrors too "
                    f"({hows} of values from the node's global id, constants, "
                    "scalar arguments and the node's comparisons with node-id "
                    "arguments): sync_nodes set agreed, no broadcast",
                )
                continue
            ops.append(SyncNodesOp(array, reduction, masters_only=owners))
            how = f"{reduction.value} masters_only" if owners else reduction.value
            _remark(
                self.remarks,
                site.op,
                self.where,
                f"after {callee}: sync_nodes {_name(array)} {how} ({hows})",
            )
        for position, writes in sorted(summary.cell_writes.items()):
            reduction = summary.reduction(writes)
            array = site.args[position]
            ops.append(AllReduceCellsOp(array, reduction))
            hows = ", ".join(sorted({w.how for w in writes}))
            _remark(
                self.remarks,
                site.op,
                self.where,
                f"after {callee}: allreduce_cells {_name(array)} "
                f"{reduction.value} ({hows})",
            )
        if summary.pushes:
            every_master = reduced is None and summary.pushes_every_node
            ops.append(
                SyncWorklistOp(site.args[reduced[0]], reduced[1], self.late_broadcast)
                if reduced is not None
                else SyncWorklistOp(every_master=every_master)
            )
            _remark(
                self.remarks,
                site.op,
                self.where,
                f"after {callee}: sync_worklist"
                + (
                    f" reduce {_name(site.args[reduced[0]])} {reduced[1].value}"
                    + (" late_broadcast" if self.late_broadcast else "")
                    if reduced is not None
                    else ""
                )
                + (
                    " every_master (the kernel pushes every node it visits, so "
                    "each rank pushed all its masters: mirror items dropped, "
                    "nothing sent to the owners"
                    if every_master
                    else " (pushed mirrors to their owners"
                )
                + (
                    ", masters activate their mirrors"
                    if self.policy == Policy.CVC
                    else ""
                )
                + ")",
            )
        op = site.op
        if computed:
            assert isinstance(op, InvokeOp)
            self.mirror_fills.append((op, summary, computed))
        if isinstance(op, IterateOp):
            if ops:
                rewriter.insert_op(ops, InsertPoint.at_start(op.body.block))
            if after_runs:
                rewriter.insert_op(after_runs, InsertPoint.after(op))
            return
        rewriter.insert_op(ops, InsertPoint.after(op))
        if op.result is not None and op.aggregation is not None:
            aggregation = op.aggregation.data
            reduction = (
                Reduction.OR if aggregation == Aggregation.ANY else Reduction.AND
            )
            reduced = AllReduceOp(op.result, reduction)
            reduced.result.name_hint = (op.result.name_hint or "result") + "_all"
            op.result.replace_uses_with_if(
                reduced.result, lambda use: use.operation is not reduced
            )
            rewriter.insert_op(reduced, InsertPoint.after(ops[-1] if ops else op))
            _remark(
                self.remarks,
                op,
                self.where,
                f"after {callee}: allreduce {reduction.value} of its "
                f"{aggregation.value} result",
            )

    def _computed_on_mirrors(self, site: _Site, position: int) -> bool:
        """Whether the node array at `position` of `site` is computed on the
        mirrors (`mirrors`: see `_computable_on_mirrors`), not broadcast."""
        summary = site.summary
        writes = summary.node_writes.get(position)
        return (
            self.mirrors
            and writes is not None
            and isinstance(site.op, InvokeOp)
            and site.op.aggregation is None
            and summary.reduction(writes) == Reduction.SET
            and all(w.how in _MASTER_STORES[self.policy] for w in writes)
            and _computable_on_mirrors(summary, writes)
        )

    def _clears_computed(self, iterate: _Site, root: SSAValue) -> bool:
        """Whether every other invocation passed the round stamp `root` (its
        clears) computes it on the mirrors too: then every copy holds the
        clear's value after each clear, and the stamp needs no sync after
        each run of the Iterate either."""
        return all(
            self._computed_on_mirrors(other, position)
            for other in self.sites
            if other is not iterate
            for position, value in enumerate(other.args)
            if self.roots.find(value) is root
        )

    def finish_mirrors(
        self, module: ModuleOp, made: dict[tuple[str, tuple[int, ...]], str]
    ) -> None:
        """After the kernels' node ids used as data became global ids: invoke
        a kernel over the mirrors right after each writer whose node arrays
        are computed on the mirrors (`made`: such kernels by writer and
        arrays, shared between host kernels)."""
        for invoke, summary, positions in self.mirror_fills:
            key = (summary.kernel.sym_name.data, tuple(positions))
            if key not in made:
                made[key] = _mirror_kernel(module, summary, positions)
            # the mirrors' copy compares global ids: node ids untranslated
            args = [
                a.owner.node
                if p in summary.node_id_params and isinstance(a.owner, LocalNodeOp)
                else a
                for p, a in enumerate(invoke.args)
            ]
            invoke.parent_block().insert_op_after(  # pyright: ignore[reportOptionalMemberAccess]
                InvokeOp(made[key], args), invoke
            )


_SCALAR_TYPES = (IndexType, IntegerType, AnyFloat)


def _node_comparison(op: Operation, node: SSAValue, summary: KernelSummary) -> bool:
    """Is `op` an eq/ne comparison of `node` with a node-id argument of the
    kernel (BFS's `%n == %src`)? On the mirrors' copy it compares global
    ids (`_mirror_kernel`)."""
    if not isinstance(op, arith.CmpiOp) or op.predicate.value.data not in (0, 1):
        return False
    kernel_block = summary.kernel.body.block
    for mine, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if (
            mine is node
            and isinstance(other, BlockArgument)
            and other.block is kernel_block
            and other.index in summary.node_id_params
        ):
            return True
    return False


def _computable_on_mirrors(summary: KernelSummary, writes: list[Write]) -> bool:
    """Whether every write is a plain store, at the node of the kernel's one
    ForAll over nodes and directly in its body, of a value computed from the
    node (as data: its global id; or compared with a node-id argument),
    constants and scalar arguments that are not node ids; and the kernel has
    nothing but constants besides that ForAll (so a copy of it restricted to
    those stores can run on the mirrors)."""
    kernel = summary.kernel
    top = [op for op in kernel.body.block.ops if not op.has_trait(IsTerminator)]
    loops = [op for op in top if isinstance(op, ForAllOp)]
    if len(loops) != 1 or not all(
        op is loops[0] or isinstance(op, arith.ConstantOp) for op in top
    ):
        return False
    loop = loops[0]
    if loop.iterator.data != IteratorKind.NODES or loop.reduce is not None:
        return False
    node = loop.body.block.args[0]

    def computable(value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            if value is node:
                return True
            return (
                value.block is kernel.body.block
                and value.index not in summary.node_id_params
                and isinstance(value.type, _SCALAR_TYPES)
            )
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return True
        if isinstance(owner, Operation) and _node_comparison(owner, node, summary):
            return True
        return (
            isinstance(owner, Operation)
            and not owner.regions
            and owner.name.split(".", 1)[0] in ("arith", "math")
            and all(computable(v) for v in owner.operands)
        )

    return all(
        isinstance(w.op, memref.StoreOp)
        and w.op.parent_block() is loop.body.block
        and len(w.op.indices) == 1
        and w.op.indices[0] is node
        and computable(w.op.value)
        for w in writes
    )


def _mirror_kernel(
    module: ModuleOp, summary: KernelSummary, positions: list[int]
) -> str:
    """A copy of the summary's kernel whose ForAll runs over the mirrors
    (`#irgl_dist.mirrors`) and keeps only the stores into the node arrays
    of `positions` and what they compute from, its comparisons of the node
    with node-id arguments made on global ids (the invocation passes those
    untranslated); inserted after the kernel. Returns its name."""
    kernel = summary.kernel
    names = {op.sym_name.data for op in module.ops if isinstance(op, KernelOp)}
    name = unique_name(names, f"{kernel.sym_name.data}_mirrors")
    copy = kernel.clone()
    copy.properties["sym_name"] = StringAttr(name)
    loop = next(op for op in copy.body.block.ops if isinstance(op, ForAllOp))
    loop.attributes[MIRRORS_ATTR] = UnitAttr()
    arrays = {copy.body.block.args[p] for p in positions}
    node = loop.body.block.args[0]
    body = loop.body.block
    needed: set[Operation] = {
        op
        for op in body.ops
        if isinstance(op, memref.StoreOp)
        and op.memref in arrays
        and op.indices[0] is node
    }
    stack = list(needed)
    while stack:
        for operand in stack.pop().operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner.parent_block() is body:
                if owner not in needed:
                    needed.add(owner)
                    stack.append(owner)
    for block in (body, copy.body.block):
        for op in reversed(list(block.ops)):
            if op is loop or op.has_trait(IsTerminator) or op in needed:
                continue
            if block is body or not any(r.uses for r in op.results):
                Rewriter.erase_op(op)
    compared = replace(summary, kernel=copy)
    comparisons = [op for op in body.ops if _node_comparison(op, node, compared)]
    if comparisons:
        # the node's global id first in the body, before every comparison
        known = [
            op for op in body.ops if isinstance(op, GlobalIdOp) and op.node is node
        ]
        if known:
            global_id = known[0]
            global_id.detach()
        else:
            global_id = GlobalIdOp(loop.bounds[0], node)
            global_id.result.name_hint = (node.name_hint or "node") + "_global"
        body.insert_op_before(global_id, body.first_op)  # pyright: ignore[reportArgumentType]
        for op in comparisons:
            op.operands[0 if op.operands[0] is node else 1] = global_id.result
    module.body.block.insert_op_after(copy, kernel)
    return name


def _push_mirrors(
    distributions: Sequence[_HostDistribution],
    summaries: dict[str, KernelSummary],
    remarks: TextIO | None,
) -> None:
    """Split the neighbours' pushes of each kernel that only reduce-only
    Iterates invoke (lowering/mirror_pushes.py), moving the round stamps that
    every one of its invocations leaves to each rank into the masters'
    branch."""
    eligible: dict[str, bool] = {}
    stamps: dict[str, set[int]] = {}
    where: dict[str, tuple[Operation, str]] = {}
    for distribution in distributions:
        for site in distribution.sites:
            name = site.summary.kernel.sym_name.data
            op = site.op
            reduced = isinstance(op, IterateOp) and op in distribution.reduce_only
            eligible[name] = eligible.get(name, True) and reduced
            mine = {p for (it, p) in distribution.stamps if it is op}
            stamps[name] = stamps[name] & mine if name in stamps else mine
            where.setdefault(name, (op, distribution.where))
    for name, ok in eligible.items():
        if not ok:
            continue
        summary = summaries[name]
        nodes = KernelNodes(summary.kernel, summary.masters, summary.neighbours)
        split = push_mirrors(nodes, stamps[name])
        if split:
            op, host = where[name]
            _remark(
                remarks,
                op,
                host,
                f"@{name}: {split} push(es) of a neighbour split on the master "
                "bound: a mirror is pushed by irgl_dist.push_mirror (its pushed "
                "bit for the exchange, no worklist slot or round-stamp exchange)",
            )


def _kernels(module: ModuleOp, kind: KernelKind) -> Iterable[KernelOp]:
    return (
        op for op in module.ops if isinstance(op, KernelOp) and op.kernel_kind == kind
    )


@dataclass(frozen=True)
class IrglDistribute(ModulePass):
    """Insert the synchronization of a P-rank run (see the module docstring):
    `irgl_dist` ops after each invocation, termination across ranks, node-id
    translation; a located diagnostic where the program cannot be
    distributed."""

    name = "irgl-distribute"

    policy: str = "oec"
    remarks: bool = False
    mirrors: bool = True
    """Node arrays an invoked kernel fills with values computable on every
    copy are computed on the mirrors too (`@<kernel>_mirrors`, `sync_nodes
    ... set agreed`) instead of being broadcast."""
    reduce_only: bool = True
    """(oec) A round's min/max node array whose mirrors are read only as
    filters before its atomic is reduced by the worklist's exchange and not
    broadcast back (`sync_worklist reduce`, lowering/reduce_only.py)."""
    late_broadcast: bool = False
    """With `reduce_only`: the same exchange also carries the masters changed
    since the rank's previous one to their mirrors (`sync_worklist reduce ...
    late_broadcast`), so a mirror lags by a round at most."""
    mirror_pushes: bool = True
    """With `reduce_only`: the round kernel of a reduce-only Iterate pushes a
    neighbour that is a mirror with `irgl_dist.push_mirror` (its pushed bit,
    no worklist slot, no round-stamp exchange; lowering/mirror_pushes.py)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            policy = Policy(self.policy)
        except ValueError:
            raise PassFailedException(
                f"irgl-distribute: unknown policy {self.policy!r} (expected oec or cvc)"
            ) from None
        remarks = sys.stderr if self.remarks else None
        summaries: dict[str, KernelSummary] = {}
        analyses: list[_KernelAnalysis] = []
        for kernel in _kernels(op, KernelKind.PLAIN):
            analysis = _KernelAnalysis(kernel, policy)
            summaries[kernel.sym_name.data] = analysis.run()
            analyses.append(analysis)
        rewriter = Rewriter()
        hosts = list(_kernels(op, KernelKind.HOST))
        distributions = [
            _HostDistribution(
                host,
                summaries,
                policy,
                remarks,
                self.mirrors,
                self.reduce_only,
                self.late_broadcast,
            )
            for host in hosts
        ]
        for distribution in distributions:
            distribution.run(rewriter)
        for analysis in analyses:
            analysis.rewrite_push_guards(rewriter)
            analysis.rewrite_data_uses(rewriter)
        if self.mirror_pushes:
            _push_mirrors(distributions, summaries, remarks)
        made: dict[tuple[str, tuple[int, ...]], str] = {}
        for distribution in distributions:
            distribution.finish_mirrors(op, made)
