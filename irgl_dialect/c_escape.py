"""The C escape hatch (spec: CBlock, CDecl, CDeclGlobal, CExpr, Names, NOP).

C text is opaque to the compiler and copied into the emitted CUDA; `$0`,
`$1`, ... in it name the op's `args`. Optional `reads(...)`/`writes(...)`
annotations state the read and write sets that the compiler cannot infer
from the text (the spec's annotations for unparsed C). `irgl.cinclude`
names a C/CUDA header shipped beside the program whose text is inlined at
file scope, so that longer C (helpers, geometry) can be written as C.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent
from xdsl.utils.exceptions import VerifyException

from irgl_dialect.runtime import CExprBase, check_placeholders


@irdl_op_definition
class CBlockOp(IRDLOperation):
    """C statements (spec: CBlock); at module level they go to file scope.

    irgl.cblock "printf(\\"bad: %d\\\\n\\", $0);" (%n : i32)
        reads(%mesh : memref<?xi32>)
    """

    name = "irgl.cblock"

    text = prop_def(StringAttr)
    args = var_operand_def()
    reads = var_operand_def()
    writes = var_operand_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$text (`(` $args^ `:` type($args) `)`)?"
        " (`reads` `(` $reads^ `:` type($reads) `)`)?"
        " (`writes` `(` $writes^ `:` type($writes) `)`)? attr-dict"
    )

    def __init__(
        self,
        text: str,
        args: Sequence[SSAValue] = (),
        *,
        reads: Sequence[SSAValue] = (),
        writes: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[args, reads, writes], properties={"text": StringAttr(text)}
        )

    def verify_(self) -> None:
        check_placeholders(self.text.data, len(self.args), self.name)
        if isinstance(self.parent_op(), ModuleOp) and (
            self.args or self.reads or self.writes
        ):
            raise VerifyException(
                "'irgl.cblock' at module level cannot take SSA operands"
            )


@irdl_op_definition
class CIncludeOp(IRDLOperation):
    """Inline a C/CUDA header at file scope (module level only).

    irgl.cinclude "dmr_mesh.cuh"

    The path is relative, without `..` components; convert-irgl-c looks it
    up in its include directories (`irgl-opt` adds the input file's
    directory, the runner the program's) and copies the header's text into
    the emitted CUDA, which therefore compiles on its own. `#include`s
    inside the header are copied as they are, not inlined: a header that
    ships beside the program must not `#include "..."` other local files.
    """

    name = "irgl.cinclude"

    path = prop_def(StringAttr)

    traits = traits_def(HasParent(ModuleOp))

    assembly_format = "$path attr-dict"

    def __init__(self, path: str):
        super().__init__(properties={"path": StringAttr(path)})

    def verify_(self) -> None:
        check_include_path(self.path.data)


def check_include_path(path: str) -> None:
    """Raise a VerifyException unless `path` is a relative path of plain
    components (no `..`, no absolute path, no empty or odd characters)."""
    where = f"'irgl.cinclude' path {path!r}"
    if not path:
        raise VerifyException(f"{where} is empty")
    if any(ch in path for ch in '"\\\n\r\t\0<>'):
        raise VerifyException(
            f"{where} has a character that a C include path cannot hold"
        )
    if path.startswith("/"):
        raise VerifyException(f"{where} must be relative, not absolute")
    parts = path.split("/")
    if ".." in parts:
        raise VerifyException(f"{where} must not have '..' components")
    if any(part in ("", ".") for part in parts):
        raise VerifyException(f"{where} has an empty or '.' component")


@irdl_op_definition
class CExprOp(CExprBase):
    """A C expression with a typed result (spec: CExpr).

    %inf = irgl.cexpr "INF" : i32
    %m = irgl.cexpr "max($0, $1)" (%a, %b : i32, i32) : i32
    """

    name = "irgl.cexpr"


class _CDeclBase(IRDLOperation):
    c_type = prop_def(StringAttr)
    var_name = prop_def(StringAttr)
    init = opt_prop_def(StringAttr)
    dont_move = opt_prop_def(UnitAttr)

    assembly_format = (
        "$c_type $var_name (`=` $init^)? (`dont_move` $dont_move^)? attr-dict"
    )

    def __init__(
        self,
        c_type: str,
        var_name: str,
        init: str | None = None,
        *,
        dont_move: bool = False,
    ):
        super().__init__(
            properties={
                "c_type": StringAttr(c_type),
                "var_name": StringAttr(var_name),
                "init": None if init is None else StringAttr(init),
                "dont_move": UnitAttr() if dont_move else None,
            }
        )

    def verify_(self) -> None:
        name = self.var_name.data
        if not name.isidentifier():
            raise VerifyException(f"'{self.name}' '{name}' is not a C identifier")


@irdl_op_definition
class CDeclOp(_CDeclBase):
    """A C variable declared in a kernel body (spec: CDecl).

    irgl.cdecl "int" "count" = "0"
    """

    name = "irgl.cdecl"


@irdl_op_definition
class CDeclGlobalOp(_CDeclBase):
    """A C variable at file scope (spec: CDeclGlobal); `dont_move` keeps it
    where it is written instead of hoisting it.

        irgl.cdecl_global "int" "nbad" = "0"
    """

    name = "irgl.cdecl_global"

    traits = traits_def(HasParent(ModuleOp))


@irdl_op_definition
class NamesOp(IRDLOperation):
    """Import C names (e.g. `#define`d constants) for use in C text (spec: Names).

    irgl.names ["INF", "MAXDEG"]
    """

    name = "irgl.names"

    names = prop_def(ArrayAttr[StringAttr])

    traits = traits_def(HasParent(ModuleOp))

    assembly_format = "$names attr-dict"

    def __init__(self, names: Sequence[str]):
        super().__init__(
            properties={"names": ArrayAttr([StringAttr(n) for n in names])}
        )

    def verify_(self) -> None:
        for name in self.names.data:
            if not name.data.isidentifier():
                raise VerifyException(
                    f"'irgl.names' '{name.data}' is not a C identifier"
                )


@irdl_op_definition
class NopOp(IRDLOperation):
    """Does nothing (spec: NOP).

    irgl.nop
    """

    name = "irgl.nop"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()
