"""convert-irgl-graph: graph accessors become runtime calls and
`!irgl.graph` becomes the runtime handle `!irgl_rt.graph`.

    %d = irgl.graph.edge_dst %g[%e]
      →  %d = func.call @irgl_graph_edge_dst(%g, %e) : (!irgl_rt.graph, index) -> index
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import FunctionType, IndexType, ModuleOp, i32
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irgl_dialect.attributes import GraphType
from irgl_dialect.graph import (
    DegreeOp,
    EdgeDstOp,
    EdgeWeightOp,
    FirstEdgeOp,
    LastEdgeOp,
    NumEdgesOp,
    NumNodesOp,
)
from irgl_dialect.runtime import GraphHandleType
from lowering.runtime_calls import call

_RUNTIME_NAMES: dict[type, str] = {
    NumNodesOp: "irgl_graph_num_nodes",
    NumEdgesOp: "irgl_graph_num_edges",
    FirstEdgeOp: "irgl_graph_first_edge",
    LastEdgeOp: "irgl_graph_last_edge",
    DegreeOp: "irgl_graph_degree",
    EdgeDstOp: "irgl_graph_edge_dst",
    EdgeWeightOp: "irgl_graph_edge_weight",
}


class LowerGraphAccessor(RewritePattern):
    """One graph accessor → `func.call @irgl_graph_<accessor>`."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[override]
        name = _RUNTIME_NAMES.get(type(op))
        if name is None:
            return
        result_type = i32 if isinstance(op, EdgeWeightOp) else IndexType()
        lowered = call(name, list(op.operands), [result_type], InsertPoint.before(op))
        rewriter.replace_op(op, [], list(lowered.results))


class GraphToHandle(TypeConversionPattern):
    """`!irgl.graph` → `!irgl_rt.graph` in values, signatures and declarations."""

    recursive = True

    @attr_type_rewrite_pattern
    def convert_type(self, typ: GraphType) -> Attribute:
        return GraphHandleType()


@dataclass(frozen=True)
class ConvertIrglGraph(ModulePass):
    """Lower graph accessors to runtime calls and the graph type to its handle."""

    name = "convert-irgl-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            LowerGraphAccessor(), apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([GraphToHandle()])
        ).rewrite_module(op)
        for inner in op.walk():
            if isinstance(inner, func.FuncOp | gpu.FuncOp):
                inner.function_type = _convert_signature(inner.function_type)


def _convert_signature(signature: FunctionType) -> FunctionType:
    """The function type with every `!irgl.graph` replaced by its handle."""

    def convert(t: Attribute) -> Attribute:
        return GraphHandleType() if isinstance(t, GraphType) else t

    return FunctionType.from_lists(
        [convert(t) for t in signature.inputs.data],
        [convert(t) for t in signature.outputs.data],
    )
