"""Interpreter functions of the graph accessors (`irgl.graph.*`) on a
:class:`~irgl_interpreter.state.Graph`."""

from __future__ import annotations

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from irgl_dialect import graph as g
from irgl_interpreter.state import (
    PROGRESS_EDGES,
    Graph,
    IrglRuntimeError,
    irgl_state,
)


def _node(op: Operation, graph: Graph, n: int) -> int:
    if not 0 <= n < graph.num_nodes:
        raise IrglRuntimeError(
            op, f"node {n} out of range: the graph has {graph.num_nodes} nodes"
        )
    return n


def _edge(op: Operation, graph: Graph, e: int) -> int:
    if not 0 <= e < len(graph.edge_dst):
        raise IrglRuntimeError(
            op, f"edge {e} out of range: the graph has {len(graph.edge_dst)} edges"
        )
    return e


@register_impls
class GraphFunctions(InterpreterFunctions):
    """Node count, edge ranges, degree, edge destination and weight."""

    @impl(g.NumNodesOp)
    def run_num_nodes(
        self, interpreter: Interpreter, op: g.NumNodesOp, args: PythonValues
    ) -> PythonValues:
        return (args[0].num_nodes,)

    @impl(g.NumEdgesOp)
    def run_num_edges(
        self, interpreter: Interpreter, op: g.NumEdgesOp, args: PythonValues
    ) -> PythonValues:
        return (len(args[0].edge_dst),)

    @impl(g.MaxDegreeOp)
    def run_max_degree(
        self, interpreter: Interpreter, op: g.MaxDegreeOp, args: PythonValues
    ) -> PythonValues:
        return (args[0].max_degree,)

    @impl(g.FirstEdgeOp)
    def run_first_edge(
        self, interpreter: Interpreter, op: g.FirstEdgeOp, args: PythonValues
    ) -> PythonValues:
        graph, n = args
        return (graph.row_start[_node(op, graph, n)],)

    @impl(g.LastEdgeOp)
    def run_last_edge(
        self, interpreter: Interpreter, op: g.LastEdgeOp, args: PythonValues
    ) -> PythonValues:
        graph, n = args
        return (graph.row_start[_node(op, graph, n) + 1],)

    @impl(g.DegreeOp)
    def run_degree(
        self, interpreter: Interpreter, op: g.DegreeOp, args: PythonValues
    ) -> PythonValues:
        graph, n = args
        n = _node(op, graph, n)
        return (graph.row_start[n + 1] - graph.row_start[n],)

    @impl(g.EdgeDstOp)
    def run_edge_dst(
        self, interpreter: Interpreter, op: g.EdgeDstOp, args: PythonValues
    ) -> PythonValues:
        graph, e = args
        state = irgl_state(interpreter)
        stats = state.stats
        stats.edge_visits += 1
        if state.progress is not None and not stats.edge_visits % PROGRESS_EDGES:
            state.progress(stats)
        return (graph.edge_dst[_edge(op, graph, e)],)

    @impl(g.EdgeWeightOp)
    def run_edge_weight(
        self, interpreter: Interpreter, op: g.EdgeWeightOp, args: PythonValues
    ) -> PythonValues:
        graph, e = args
        e = _edge(op, graph, e)
        return (1 if graph.weights is None else graph.weights[e],)
