"""convert-irgl-c: the C escape hatch moves to the runtime level.

`irgl.cblock`/`irgl.cexpr`/`irgl.cdecl` become `irgl_rt.c_block`/`c_expr`/
`c_decl` (read/write-set annotations, only needed by analyses, are dropped);
module-level `irgl.cblock` and `irgl.cdecl_global` become file-scope
`irgl_rt.c_global` (globals are `__device__` variables); `irgl.names` and
`irgl.nop` vanish.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irgl_dialect import c_escape
from irgl_dialect.runtime import CBlockOp, CDeclOp, CExprOp, CGlobalOp


class LowerCBlock(RewritePattern):
    """`irgl.cblock` → `irgl_rt.c_block` (at module scope `irgl_rt.c_global`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: c_escape.CBlockOp, rewriter: PatternRewriter
    ) -> None:
        if isinstance(op.parent_op(), ModuleOp):
            rewriter.replace(op, CGlobalOp(op.text.data))
        else:
            rewriter.replace(op, CBlockOp(op.text.data, list(op.args)))


class LowerCExpr(RewritePattern):
    """`irgl.cexpr` → `irgl_rt.c_expr`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: c_escape.CExprOp, rewriter: PatternRewriter
    ) -> None:
        rewriter.replace(op, CExprOp(op.text.data, list(op.args), op.result.type))


class LowerCDecl(RewritePattern):
    """`irgl.cdecl` → `irgl_rt.c_decl`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: c_escape.CDeclOp, rewriter: PatternRewriter
    ) -> None:
        init = op.init.data if op.init is not None else None
        rewriter.replace(op, CDeclOp(op.c_type.data, op.var_name.data, init))


class LowerCDeclGlobal(RewritePattern):
    """`irgl.cdecl_global` → a `__device__` `irgl_rt.c_global`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: c_escape.CDeclGlobalOp, rewriter: PatternRewriter
    ) -> None:
        init = f" = {op.init.data}" if op.init is not None else ""
        text = f"{op.c_type.data} {op.var_name.data}{init};"
        rewriter.replace(op, CGlobalOp(text, device=True))


class EraseNamesAndNops(RewritePattern):
    """`irgl.names` and `irgl.nop` vanish."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, c_escape.NamesOp | c_escape.NopOp):
            rewriter.erase(op)


@dataclass(frozen=True)
class ConvertIrglC(ModulePass):
    """Lower the C escape hatch to irgl_rt ops (see the module docstring)."""

    name = "convert-irgl-c"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerCBlock(),
                    LowerCExpr(),
                    LowerCDecl(),
                    LowerCDeclGlobal(),
                    EraseNamesAndNops(),
                ]
            )
        ).rewrite_module(op)
