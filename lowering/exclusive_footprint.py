"""irgl-exclusive-footprint: an Exclusive claims what its body touches, each
element in the mode the body uses it.

An Exclusive's lock set is the program's promise of what its body touches;
two contenders whose sets share an element never both win a round. Greedy
colouring (benchmarks/color) claims each node's closed neighbourhood, so any
two nodes two hops apart conflict: through a hub, every neighbour of the hub
conflicts with every other, and on RMAT's core the Exclusives ran one after
another (174k one-item drain windows on RMAT-18).

Where the compiler can name every element of node arrays the body writes or
reads, it claims those instead, with a mode: an element the body writes
(`write`) conflicts with any other contender on it; an element it only reads
(`read`) conflicts only with a writer. Colour's body writes its own node's
colour and reads its neighbours' colours: it claims its node for writing and
its neighbours for reading, so two contenders conflict only when one is a
neighbour of the other. Two such sections that share no written element
touch disjoint data or only read shared data, so running both in one round
gives what running them one after the other gives: the program cannot tell
the difference, except by how many contenders lose (which the Exclusive
never promised).

The footprint is derived where every access in the body to a node array the
body writes (memref.load, memref.store, memref.atomic_rmw on a rank-1
memref not allocated in the body) has an index that is

- a value defined outside the Exclusive (casts looked through): that value,
  or
- `irgl.graph.edge_dst %g[%e]`, `%e` the induction variable of an `scf.for`
  from `irgl.graph.first_edge %g[%x]` to `irgl.graph.last_edge %g[%x]` with
  `%x` defined outside the Exclusive: the destinations of `%x`'s edges;

and the body calls nothing, holds no C text and uses no array otherwise.
Arrays the body only reads need no claim (the else statements, which run
beside winners' bodies, were never excluded from them either), unless
they have the type of an array it writes: the host may pass one array for
both, so their reads are claimed as reads of the written array's
elements. A kernel
whose footprint is derived gets one more parameter, its *claim cells*: an
i32 array of `2 * N + 2` cells (`N` the number of nodes of the graph whose
edges the footprint names: it names at least one node's edges, all of one
graph, a parameter of the kernel), allocated zero-filled by each host kernel
that invokes it and freed where the host kernel returns; the Exclusive's
object becomes that parameter and the Exclusive is marked `irgl.footprint`.
convert-irgl-exclusive then lowers it with modes
(lowering/footprint_claims.py). A kernel used other than by `irgl.invoke`
from host kernels, or whose graph is not one of its parameters, keeps its
lock set.

`remarks` prints, for each Exclusive, the footprint derived or why none was.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.hints import isa

from irgl_dialect.attributes import KernelKind
from irgl_dialect.c_escape import CBlockOp, CDeclOp, CExprOp
from irgl_dialect.graph import EdgeDstOp, FirstEdgeOp, LastEdgeOp, NumNodesOp
from irgl_dialect.kernels import CallOp, KernelOp, ReturnOp
from irgl_dialect.orchestration import InvokeOp
from irgl_dialect.placement import enclosing_kernel
from irgl_dialect.runtime_library import dynamic_memref
from irgl_dialect.sync import ExclusiveOp
from lowering.runtime_calls import location_prefix

#: Marks an Exclusive whose object is its kernel's claim cells and whose
#: elements convert-irgl-exclusive derives from its body.
FOOTPRINT_ATTR = "irgl.footprint"


@dataclass(frozen=True)
class NodeElement:
    """A value from outside the Exclusive that indexes a written array."""

    value: SSAValue
    writes: bool


@dataclass(frozen=True)
class EdgesElement:
    """The destinations of the edges `first` to `last` (one node's edges) in
    `graph`, each an index into a written array."""

    graph: SSAValue
    first: SSAValue
    last: SSAValue
    writes: bool


Element = NodeElement | EdgesElement


@dataclass(frozen=True)
class Footprint:
    """What an Exclusive's body touches of the arrays it writes."""

    elements: tuple[Element, ...]
    graph: SSAValue
    """The graph whose node count sizes the claim cells."""

    def describe(self) -> str:
        def name(e: Element) -> str:
            mode = "write" if e.writes else "read"
            if isinstance(e, NodeElement):
                return f"{mode} {_value_name(e.value)}"
            node = e.first.owner
            of = (
                f" of {_value_name(node.element)}"
                if isinstance(node, FirstEdgeOp)
                else ""
            )
            return f"{mode} the edges' destinations{of}"

        return ", ".join(name(e) for e in self.elements) or "nothing"


def _value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a value"


def _inside(op: Operation, value: SSAValue) -> bool:
    """Whether `value` is defined inside `op`'s regions."""
    owner = (
        value.owner
        if isinstance(value, OpResult)
        else value.owner.parent_op()
        if isinstance(value.owner, Block)
        else None
    )
    return owner is not None and owner is not op and op.is_ancestor(owner)


def _strip_casts(op: Operation, value: SSAValue) -> SSAValue:
    """`value` with the integer casts made inside `op` looked through."""
    while _inside(op, value) and isinstance(
        value.owner, arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp
    ):
        value = value.owner.input
    return value


def _edge_element(
    op: ExclusiveOp, index: SSAValue, writes: bool, named: bool
) -> EdgesElement | None:
    """The edges element an `edge_dst` index names, if it is one. With
    `named` the loop must run from `first_edge` to `last_edge` of one node
    defined outside the Exclusive; without (once lowering has rewritten
    those bounds), its bounds need only be defined outside."""
    dst = index.owner
    if not isinstance(dst, EdgeDstOp) or _inside(op, dst.graph):
        return None
    edge = dst.element
    if not isinstance(edge, BlockArgument) or edge.index != 0:
        return None
    loop = edge.owner.parent_op()
    if not isinstance(loop, scf.ForOp) or not op.is_ancestor(loop):
        return None
    if _inside(op, loop.lb) or _inside(op, loop.ub):
        return None
    if named:
        first, last = loop.lb.owner, loop.ub.owner
        if not isinstance(first, FirstEdgeOp) or not isinstance(last, LastEdgeOp):
            return None
        if (
            first.graph != dst.graph
            or last.graph != dst.graph
            or first.element != last.element
        ):
            return None
    return EdgesElement(dst.graph, loop.lb, loop.ub, writes)


def _accesses(
    op: ExclusiveOp,
) -> list[tuple[Operation, SSAValue, Sequence[SSAValue], bool]] | str:
    """(op, array, indices, writes) of every array access in the body, or
    why the body's accesses cannot be followed."""
    found: list[tuple[Operation, SSAValue, Sequence[SSAValue], bool]] = []
    for inner in op.body.walk():
        if isinstance(inner, CBlockOp | CExprOp | CDeclOp):
            return "its body holds C text"
        if isinstance(inner, func.CallOp | CallOp):
            return "its body calls a function"
        if isinstance(inner, memref.LoadOp):
            found.append((inner, inner.memref, inner.indices, False))
        elif isinstance(inner, memref.StoreOp):
            found.append((inner, inner.memref, inner.indices, True))
        elif isinstance(inner, memref.AtomicRMWOp):
            found.append((inner, inner.memref, inner.indices, True))
        elif isinstance(inner, memref.AllocaOp | memref.AllocOp):
            continue
        elif any(isa(v.type, MemRefType) for v in inner.operands):
            return f"its body uses an array through '{inner.name}'"
    return found


def derive_footprint(op: ExclusiveOp, named: bool = True) -> Footprint | str:
    """The footprint of `op`'s body (see the module docstring), or why the
    compiler cannot name it. convert-irgl-exclusive derives it again with
    `named` false, once the edge loops' bounds are no longer the graph
    queries they were (`_edge_element`)."""
    accesses = _accesses(op)
    if isinstance(accesses, str):
        return accesses
    # two array arguments of one type may be one array passed twice: reads
    # of an array typed like a written one count as reads of it
    written_types = {
        array.type
        for _, array, _, writes in accesses
        if writes and not _inside(op, array)
    }
    elements: dict[tuple[SSAValue, ...], Element] = {}
    for access, array, indices, writes in accesses:
        if _inside(op, array) or array.type not in written_types:
            continue
        if len(indices) != 1:
            return f"its body writes a memref of rank {len(indices)}"
        index = _strip_casts(op, indices[0])
        element: Element | None
        if not _inside(op, index):
            element = NodeElement(index, writes)
            key: tuple[SSAValue, ...] = (index,)
        else:
            element = _edge_element(op, index, writes, named)
            if element is None:
                return (
                    f"the index of its '{access.name}' is neither a value from "
                    "outside it nor the destination of an edge of such a node"
                )
            key = (element.graph, element.first, element.last)
        old = elements.get(key)
        if old is not None and old.writes:
            continue
        elements[key] = element
    graphs = {e.graph for e in elements.values() if isinstance(e, EdgesElement)}
    if len(graphs) != 1:
        return (
            "its body's written indices name no node's edges (their graph sizes "
            "the claim cells)"
            if not graphs
            else "its body's written indices name edges of two graphs"
        )
    return Footprint(tuple(elements.values()), graphs.pop())


def _remark(out: TextIO | None, op: Operation, text: str) -> None:
    if out is None:
        return
    at = location_prefix(op)
    print(f"remark: {at}irgl.exclusive: {text}", file=out)


def _invokes(
    module: ModuleOp, kernel: KernelOp
) -> list[tuple[InvokeOp, KernelOp]] | str:
    """Every invocation of `kernel` with the host kernel it is in, all from
    host kernels, or why not."""
    name = kernel.sym_name.data
    found: list[tuple[InvokeOp, KernelOp]] = []
    for inner in module.walk():
        if inner is kernel:
            continue
        for attr in inner.properties.values():
            if isinstance(attr, SymbolRefAttr) and attr.string_value() == name:
                host = enclosing_kernel(inner)
                if (
                    not isinstance(inner, InvokeOp)
                    or not isinstance(host, KernelOp)
                    or host.kernel_kind != KernelKind.HOST
                ):
                    return (
                        f"@{name} is used other than by irgl.invoke from host kernels"
                    )
                found.append((inner, host))
    return found


def _graph_param(kernel: KernelOp, graph: SSAValue) -> int | None:
    if isinstance(graph, BlockArgument) and graph.owner is kernel.body.block:
        return graph.index
    return None


class _HostCells:
    """The claim cells each host kernel allocates for a graph value."""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, SSAValue], SSAValue] = {}

    def get(self, host: KernelOp, graph: SSAValue) -> SSAValue:
        key = (id(host), graph)
        if key in self.cells:
            return self.cells[key]
        owner = graph.owner
        point = (
            InsertPoint.after(owner)
            if isinstance(owner, Operation)
            else InsertPoint.at_start(owner)
        )
        nodes = NumNodesOp(graph)
        two = arith.ConstantOp.from_int_and_width(2, IndexType())
        doubled = arith.MuliOp(nodes.result, two.result)
        size = arith.AddiOp(doubled.result, two.result)
        alloc = memref.AllocOp.get(
            i32, shape=[DYNAMIC_INDEX], dynamic_sizes=[size.result]
        )
        Rewriter.insert_op([nodes, two, doubled, size, alloc], point)
        alloc.memref.name_hint = "claim_cells"
        returns = [r for r in host.walk() if isinstance(r, ReturnOp)]
        for ret in returns:
            Rewriter.insert_op(
                memref.DeallocOp.get(alloc.memref), InsertPoint.before(ret)
            )
        if not returns:
            Rewriter.insert_op(
                memref.DeallocOp.get(alloc.memref),
                InsertPoint.at_end(host.body.block),
            )
        self.cells[key] = alloc.memref
        return alloc.memref


@dataclass(frozen=True)
class IrglExclusiveFootprint(ModulePass):
    """Exclusives claim their body's footprint, each element in the mode the
    body uses it, where the compiler can name it (see the module
    docstring); the kernel gets claim cells its host kernels allocate."""

    name = "irgl-exclusive-footprint"

    remarks: bool = False
    """Print, for each Exclusive, the footprint derived or why none was."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        out = sys.stderr if self.remarks else None
        hosts = _HostCells()
        kernels = [k for k in op.walk() if isinstance(k, KernelOp)]
        for kernel in kernels:
            if kernel.kernel_kind != KernelKind.PLAIN:
                continue
            derived: list[tuple[ExclusiveOp, Footprint]] = []
            for exclusive in [e for e in kernel.walk() if isinstance(e, ExclusiveOp)]:
                footprint = derive_footprint(exclusive)
                if isinstance(footprint, str):
                    _remark(out, exclusive, f"claims its lock set: {footprint}")
                    continue
                derived.append((exclusive, footprint))
            if not derived:
                continue
            for exclusive, footprint in derived[1:]:
                if footprint.graph != derived[0][1].graph:
                    _remark(
                        out,
                        exclusive,
                        "claims its lock set: another Exclusive of its kernel "
                        "names edges of another graph",
                    )
            derived = [d for d in derived if d[1].graph == derived[0][1].graph]
            if not derived:
                continue
            invokes = _invokes(op, kernel)
            graph = _graph_param(kernel, derived[0][1].graph)
            if isinstance(invokes, str) or graph is None:
                why = (
                    invokes
                    if isinstance(invokes, str)
                    else ("its graph is not a kernel parameter")
                )
                for exclusive, _ in derived:
                    _remark(out, exclusive, f"claims its lock set: {why}")
                continue
            block = kernel.body.block
            cells = block.insert_arg(dynamic_memref(i32), len(block.args))
            cells.name_hint = "claim_cells"
            kernel.function_type = FunctionType.from_lists(
                list(block.arg_types), list(kernel.function_type.outputs.data)
            )
            for invoke, host in invokes:
                host_cells = hosts.get(host, invoke.args[graph])
                invoke.operands = [*invoke.operands, host_cells]
            for exclusive, footprint in derived:
                exclusive.operands = [cells, *exclusive.operands[1:]]
                exclusive.attributes[FOOTPRINT_ATTR] = UnitAttr()
                _remark(out, exclusive, f"claims its footprint: {footprint.describe()}")
