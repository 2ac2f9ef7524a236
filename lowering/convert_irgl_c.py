"""convert-irgl-c: the C escape hatch moves to the runtime level.

`irgl.cblock`/`irgl.cexpr`/`irgl.cdecl` become `irgl_rt.c_block`/`c_expr`/
`c_decl` (read/write-set annotations, only needed by analyses, are dropped);
module-level `irgl.cblock` and `irgl.cdecl_global` become file-scope
`irgl_rt.c_global` (globals are `__device__` variables); `irgl.names` and
`irgl.nop` vanish. `irgl.cinclude "h.cuh"` becomes a file-scope
`irgl_rt.c_global` holding the header's text, found in the first of the
`include_dirs` that has it (`-p 'convert-irgl-c{include_dirs="a","b"}'`);
a header found nowhere is a diagnostic at the op that names the path and
the directories searched. `#include`s inside the header are not followed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irgl_dialect import c_escape
from irgl_dialect.runtime import CBlockOp, CDeclOp, CExprOp, CGlobalOp
from lowering.runtime_calls import fail


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


def find_header(path: str, include_dirs: Sequence[str]) -> Path | None:
    """The first `dir/path` of `include_dirs` that is a file, or None."""
    for directory in include_dirs:
        candidate = Path(directory) / path
        if candidate.is_file():
            return candidate
    return None


def _not_found(op: c_escape.CIncludeOp, include_dirs: Sequence[str]) -> NoReturn:
    searched = ", ".join(repr(d) for d in include_dirs) or "none"
    fail(
        op,
        f"'irgl.cinclude' cannot find {op.path.data!r} "
        f"(include directories searched: {searched})",
    )


def header_text(op: c_escape.CIncludeOp, include_dirs: Sequence[str]) -> str:
    """The text of the header that `op` includes, from the first of
    `include_dirs` that has it; a located diagnostic when none has it or it
    cannot be read."""
    header = find_header(op.path.data, include_dirs)
    if header is None:
        _not_found(op, include_dirs)
    try:
        return header.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        fail(op, f"'irgl.cinclude' cannot read {str(header)!r}: {error}")


@dataclass
class LowerCInclude(RewritePattern):
    """`irgl.cinclude` → `irgl_rt.c_global` with the header's text."""

    include_dirs: tuple[str, ...]

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: c_escape.CIncludeOp, rewriter: PatternRewriter
    ) -> None:
        text = header_text(op, self.include_dirs)
        banner = f'// irgl.cinclude "{op.path.data}"'
        rewriter.replace(op, CGlobalOp(banner + "\n" + text.rstrip()))


def file_scope_c(module: ModuleOp, include_dirs: Sequence[str]) -> list[str]:
    """The C text of the module-level `irgl.cblock`s and `irgl.cinclude`d
    headers of `module`, in order (what convert-irgl-c puts at file scope,
    less the `irgl.cdecl_global`s); raises a DiagnosticException at an
    `irgl.cinclude` whose header is in none of `include_dirs`."""
    texts: list[str] = []
    for op in module.ops:
        if isinstance(op, c_escape.CBlockOp):
            texts.append(op.text.data)
        elif isinstance(op, c_escape.CIncludeOp):
            texts.append(header_text(op, include_dirs))
    return texts


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

    include_dirs: tuple[str, ...] = ()
    """Where `irgl.cinclude` headers are looked up, in order."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerCInclude(tuple(self.include_dirs)),
                    LowerCBlock(),
                    LowerCExpr(),
                    LowerCDecl(),
                    LowerCDeclGlobal(),
                    EraseNamesAndNops(),
                ]
            )
        ).rewrite_module(op)


def add_include_dir(pipeline: PassPipeline, directory: str) -> PassPipeline:
    """`pipeline` with `directory` appended to the `include_dirs` option of
    each of its passes that has one (convert-irgl-c, lower-irgl), unless it
    is there already."""

    def widen(one: ModulePass) -> ModulePass:
        dirs = getattr(one, "include_dirs", None)
        if not dataclasses.is_dataclass(one) or not isinstance(dirs, tuple):
            return one
        if directory in dirs:
            return one
        return dataclasses.replace(one, include_dirs=(*dirs, directory))

    return dataclasses.replace(
        pipeline, passes=tuple(widen(one) for one in pipeline.passes)
    )
