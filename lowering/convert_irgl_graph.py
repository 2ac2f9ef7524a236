"""convert-irgl-graph: graph accessors become runtime calls and
`!irgl.graph` becomes the runtime handle `!irgl_rt.graph`.

    %d = irgl.graph.edge_dst %g[%e]
      →  %d = func.call @irgl_graph_edge_dst(%g, %e) : (!irgl_rt.graph, index) -> index
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import FunctionType, ModuleOp, UnrealizedConversionCastOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)

from irgl_dialect.attributes import GraphType
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
from irgl_dialect.runtime import GraphHandleType
from irgl_dialect.runtime_library import RuntimeFunction, runtime_function
from lowering.runtime_calls import call

_RUNTIME_FUNCTIONS: dict[type[Operation], RuntimeFunction] = {
    NumNodesOp: runtime_function("irgl_graph_num_nodes"),
    NumEdgesOp: runtime_function("irgl_graph_num_edges"),
    MaxDegreeOp: runtime_function("irgl_graph_max_degree"),
    FirstEdgeOp: runtime_function("irgl_graph_first_edge"),
    LastEdgeOp: runtime_function("irgl_graph_last_edge"),
    DegreeOp: runtime_function("irgl_graph_degree"),
    EdgeDstOp: runtime_function("irgl_graph_edge_dst"),
    EdgeWeightOp: runtime_function("irgl_graph_edge_weight"),
}


class LowerGraphAccessor(RewritePattern):
    """One graph accessor → `func.call @irgl_graph_<accessor>`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        fn = _RUNTIME_FUNCTIONS.get(type(op))
        if fn is None:
            return
        lowered = call(fn, list(op.operands), rewriter)
        rewriter.replace_all_uses_with(op.results[0], lowered.res[0])
        rewriter.erase(op)


class FoldHandleCast(RewritePattern):
    """Drop the `unrealized_conversion_cast`s from `!irgl.graph` to its handle
    that runtime calls got before the graph type was converted."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter
    ) -> None:
        if (
            len(op.inputs) == 1
            and len(op.outputs) == 1
            and op.inputs[0].type == op.outputs[0].type == GraphHandleType()
        ):
            rewriter.replace_all_uses_with(op.outputs[0], op.inputs[0])
            rewriter.erase(op)


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
        # one walk converts every op (a type conversion does not create
        # ops that need another): no second walk to find nothing left
        PatternRewriteWalker(
            GreedyRewritePatternApplier([GraphToHandle()]), apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(FoldHandleCast()).rewrite_module(op)
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
