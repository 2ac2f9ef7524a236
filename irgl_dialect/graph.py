"""Accessors of the CSR graph type `!irgl.graph`.

They let the compiler see when a loop walks a node's edges; they lower to
calls of the runtime's `irgl_graph_*` functions.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, i32
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from irgl_dialect.attributes import GraphType
from irgl_dialect.placement import graph_element_access, graph_size_access


class _GraphQuery(IRDLOperation):
    graph = operand_def(GraphType)
    result = result_def(IndexType)
    traits = traits_def(Pure(), graph_size_access())
    assembly_format = "$graph attr-dict"

    def __init__(self, graph: SSAValue):
        super().__init__(operands=[graph], result_types=[IndexType()])


class _GraphElementQuery(IRDLOperation):
    graph = operand_def(GraphType)
    element = operand_def(IndexType)
    result = result_def(IndexType)
    traits = traits_def(Pure(), graph_element_access())
    assembly_format = "$graph `[` $element `]` attr-dict"

    def __init__(self, graph: SSAValue, element: SSAValue):
        super().__init__(operands=[graph, element], result_types=[IndexType()])


@irdl_op_definition
class NumNodesOp(_GraphQuery):
    """Number of nodes: `%n = irgl.graph.num_nodes %g`."""

    name = "irgl.graph.num_nodes"


@irdl_op_definition
class NumEdgesOp(_GraphQuery):
    """Number of (directed) edges: `%m = irgl.graph.num_edges %g`."""

    name = "irgl.graph.num_edges"


@irdl_op_definition
class MaxDegreeOp(_GraphQuery):
    """The largest out-degree of any node (0 without nodes):
    `%d = irgl.graph.max_degree %g`. Known on the host without reading the
    graph (the runtime keeps it with the graph), so a host kernel can pick
    an algorithm by it, e.g. direction-optimizing BFS where one node holds a
    large share of the edges."""

    name = "irgl.graph.max_degree"


@irdl_op_definition
class FirstEdgeOp(_GraphElementQuery):
    """Id of a node's first edge: `%e = irgl.graph.first_edge %g[%n]`."""

    name = "irgl.graph.first_edge"


@irdl_op_definition
class LastEdgeOp(_GraphElementQuery):
    """One past a node's last edge id: `%e = irgl.graph.last_edge %g[%n]`."""

    name = "irgl.graph.last_edge"


@irdl_op_definition
class DegreeOp(_GraphElementQuery):
    """Out-degree of a node: `%d = irgl.graph.degree %g[%n]`."""

    name = "irgl.graph.degree"


@irdl_op_definition
class EdgeDstOp(_GraphElementQuery):
    """Destination node of an edge: `%v = irgl.graph.edge_dst %g[%e]`."""

    name = "irgl.graph.edge_dst"


@irdl_op_definition
class EdgeWeightOp(IRDLOperation):
    """Weight of an edge: `%w = irgl.graph.edge_weight %g[%e] : i32`."""

    name = "irgl.graph.edge_weight"

    graph = operand_def(GraphType)
    edge = operand_def(IndexType)
    result = result_def(i32)
    traits = traits_def(Pure(), graph_element_access())
    assembly_format = "$graph `[` $edge `]` attr-dict `:` type($result)"

    def __init__(self, graph: SSAValue, edge: SSAValue):
        super().__init__(operands=[graph, edge], result_types=[i32])
