"""The `irgl_rt` dialect: the runtime level that `lower-irgl` produces.

After lowering, IrGL programs are made of `gpu`, `func`, `scf`, `arith` and
`memref` operations plus `func.call`s to functions of the CUDA runtime
(`cuda_emitter/runtime/irgl_runtime.cuh`). This small dialect holds what those
dialects cannot express:

- the opaque runtime handle types (a CSR graph, a worklist, a pipe context, an
  Any/All reduction cell), printed by the emitter as the runtime's C++ structs;
- `irgl_rt.grid_size`, the occupancy-derived grid size of one kernel;
- the typed launch information of a lowered kernel (`#irgl_rt.launch<...>`)
  and the markers of lowered loops (`#irgl_rt.forall<...>`,
  `#irgl_rt.nested_edges`), each stored on its op under its own name;
- the C escape hatch (`irgl_rt.c_block`, `irgl_rt.c_expr`, `irgl_rt.c_decl`,
  `irgl_rt.c_global`), which carries C text through to the emitter.

Runtime calls are plain `func.call`s to external `func.func` declarations whose
names start with `irgl_`, all listed with their signatures in
`irgl_dialect/runtime_library.py`; the emitter prints them as C++ calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntAttr,
    IntegerType,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

#: Discardable attribute on an `scf.for`: unroll it this many times (the
#: cuda target prints `#pragma unroll N`); set by convert-irgl-nested-edges.
UNROLL_ATTR = "irgl_rt.unroll"

#: Discardable unit attribute on a `memref.load`: read the element where
#: atomics update it (the L2 cache; the cuda target prints `__ldcg`), not a
#: line this multiprocessor's L1 may still hold from an earlier round of a
#: persistent kernel; set by irgl-stamp-test.
COHERENT_LOAD_ATTR = "irgl_rt.coherent"

#: Discardable unit attribute on a device `func.func`: not inlined into its
#: callers (the cuda target prints `IRGL_NOINLINE_BODY`, `__noinline__`
#: unless the build defines it otherwise); set by irgl-outline-kernel-bodies.
NOINLINE_ATTR = "irgl_rt.noinline"


@irdl_attr_definition
class GraphHandleType(ParametrizedAttribute, TypeAttribute):
    """A CSR graph resident on the device (`irgl::Graph`, passed by value)."""

    name = "irgl_rt.graph"


@irdl_attr_definition
class WorklistType(ParametrizedAttribute, TypeAttribute):
    """One device worklist (`irgl::Worklist`: items, atomic tail, capacity)."""

    name = "irgl_rt.worklist"


@irdl_attr_definition
class PipeType(ParametrizedAttribute, TypeAttribute):
    """A host-side pipe context holding the in, out and retry worklists."""

    name = "irgl_rt.pipe"


@irdl_attr_definition
class CellType(ParametrizedAttribute, TypeAttribute):
    """A device cell in which a kernel's ReduceAndReturn values are reduced."""

    name = "irgl_rt.cell"


MAX_BLOCK_SIZE = 1024
"""The largest CUDA thread block."""


class _OpAttribute(ParametrizedAttribute):
    """An attribute stored on an operation under its own name (`name`)."""

    @classmethod
    def of(cls, op: Operation | None):
        """The attribute on `op`, or None."""
        if op is None:
            return None
        attr = op.attributes.get(cls.name)
        return attr if isinstance(attr, cls) else None

    def attach(self, op: Operation) -> None:
        """Store this attribute on `op` (under its name)."""
        op.attributes[self.name] = self


def _positive(value: int, what: str) -> None:
    if not 1 <= value <= MAX_BLOCK_SIZE:
        raise VerifyException(
            f"#irgl_rt.launch {what} must be in 1..{MAX_BLOCK_SIZE}, got {value}"
        )


@irdl_attr_definition
class LaunchAttr(_OpAttribute):
    """How a lowered kernel (`gpu.func ... kernel`) is launched; set by
    convert-irgl-kernels, read by convert-irgl-orchestration and the emitter.

        #irgl_rt.launch<block = 128, worklist = 1, cell = 4, bounds = [128, 4],
                        grid_sync, retry, pinned>

    - `block`: the block size the lowering chose;
    - `worklist`: index of the `in` worklist argument (`out`, `retry` follow);
    - `cell`: index of the reduction-cell argument;
    - `bounds`: CUDA `__launch_bounds__` (max threads, optional min blocks);
    - `grid_sync`: the kernel uses a grid barrier (cooperative launch);
    - `retry`: the kernel pushes to the retry worklist (needs `worklist`);
    - `control`: a control kernel of an outlined Iterate/Pipe
      (irgl-outline-iterations; needs `grid_sync`);
    - `pinned`: a control kernel runs this kernel's body with `block`
      threads, so no other block size may be chosen for it (a control
      kernel of another size runs a copy, `@<kernel>_b<size>`).
    """

    name = "irgl_rt.launch"

    block_size: IntAttr
    worklist_arg: IntAttr | NoneAttr
    cell_arg: IntAttr | NoneAttr
    launch_bounds: ArrayAttr[IntAttr]
    grid_sync: UnitAttr | NoneAttr
    uses_retry: UnitAttr | NoneAttr
    control_kernel: UnitAttr | NoneAttr
    pinned_block: UnitAttr | NoneAttr

    #: The flags, in printed order, by keyword.
    FLAGS: ClassVar[tuple[str, ...]] = ("grid_sync", "retry", "control", "pinned")

    def __init__(
        self,
        block_size: int,
        *,
        worklist_arg: int | None = None,
        cell_arg: int | None = None,
        launch_bounds: Sequence[int] = (),
        grid_sync: bool = False,
        uses_retry: bool = False,
        control: bool = False,
        pinned: bool = False,
    ):
        def flag(value: bool) -> UnitAttr | NoneAttr:
            return UnitAttr() if value else NoneAttr()

        super().__init__(
            IntAttr(block_size),
            NoneAttr() if worklist_arg is None else IntAttr(worklist_arg),
            NoneAttr() if cell_arg is None else IntAttr(cell_arg),
            ArrayAttr(IntAttr(v) for v in launch_bounds),
            flag(grid_sync),
            flag(uses_retry),
            flag(control),
            flag(pinned),
        )

    def pinned_to(self, block_size: int) -> LaunchAttr:
        """This launch information with the block size pinned to
        `block_size` (by a control kernel that runs the kernel's body)."""
        return LaunchAttr(
            block_size,
            worklist_arg=self.worklist,
            cell_arg=self.cell,
            launch_bounds=self.bounds,
            grid_sync=self.cooperative,
            uses_retry=self.retries,
            control=self.control,
            pinned=True,
        )

    @property
    def block(self) -> int:
        return self.block_size.data

    @property
    def worklist(self) -> int | None:
        arg = self.worklist_arg
        return arg.data if isinstance(arg, IntAttr) else None

    @property
    def cell(self) -> int | None:
        arg = self.cell_arg
        return arg.data if isinstance(arg, IntAttr) else None

    @property
    def bounds(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.launch_bounds.data)

    @property
    def cooperative(self) -> bool:
        return isinstance(self.grid_sync, UnitAttr)

    @property
    def retries(self) -> bool:
        return isinstance(self.uses_retry, UnitAttr)

    @property
    def control(self) -> bool:
        return isinstance(self.control_kernel, UnitAttr)

    @property
    def pinned(self) -> bool:
        return isinstance(self.pinned_block, UnitAttr)

    def verify(self) -> None:
        _positive(self.block, "block size")
        for what, arg in (("worklist", self.worklist), ("cell", self.cell)):
            if arg is not None and arg < 0:
                raise VerifyException(
                    f"#irgl_rt.launch {what} argument index must be >= 0, got {arg}"
                )
        bounds = self.bounds
        if len(bounds) > 2:
            raise VerifyException(
                f"#irgl_rt.launch bounds must have one or two values, got {len(bounds)}"
            )
        if bounds:
            _positive(bounds[0], "bounds (max threads per block)")
            if self.block > bounds[0]:
                raise VerifyException(
                    f"#irgl_rt.launch block size {self.block} exceeds its launch "
                    f"bounds ({bounds[0]})"
                )
        if len(bounds) == 2 and bounds[1] < 1:
            raise VerifyException(
                f"#irgl_rt.launch min blocks must be >= 1, got {bounds[1]}"
            )
        if self.retries and self.worklist is None:
            raise VerifyException("#irgl_rt.launch retry needs worklist arguments")
        if self.control and not self.cooperative:
            raise VerifyException("#irgl_rt.launch control needs grid_sync")

    def print_parameters(self, printer: Printer) -> None:
        items = [f"block = {self.block}"]
        if self.worklist is not None:
            items.append(f"worklist = {self.worklist}")
        if self.cell is not None:
            items.append(f"cell = {self.cell}")
        if self.bounds:
            items.append(f"bounds = [{', '.join(str(v) for v in self.bounds)}]")
        flags = (self.cooperative, self.retries, self.control, self.pinned)
        items += [key for key, on in zip(self.FLAGS, flags, strict=True) if on]
        printer.print_string(f"<{', '.join(items)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, int | list[int] | bool] = {}

        def parse_item() -> None:
            pos = parser.pos
            key = parser.parse_identifier(" in #irgl_rt.launch")
            if key in values:
                parser.raise_error(f"#irgl_rt.launch: '{key}' given twice", pos)
            if key in cls.FLAGS:
                values[key] = True
            elif key in ("block", "worklist", "cell"):
                parser.parse_punctuation("=")
                values[key] = parser.parse_integer(allow_boolean=False)
            elif key == "bounds":
                parser.parse_punctuation("=")
                values[key] = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE,
                    lambda: parser.parse_integer(allow_boolean=False),
                )
            else:
                parser.raise_error(
                    f"#irgl_rt.launch: unknown entry '{key}' (expected block, "
                    "worklist, cell, bounds, grid_sync, retry, control or pinned)",
                    pos,
                )

        pos = parser.pos
        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_item)
        if "block" not in values:
            parser.raise_error("#irgl_rt.launch needs `block = <size>`", pos)

        def opt_int(key: str) -> Attribute:
            value = values.get(key)
            return IntAttr(value) if isinstance(value, int) else NoneAttr()

        def flag(key: str) -> Attribute:
            return UnitAttr() if values.get(key) else NoneAttr()

        bounds = values.get("bounds", [])
        assert isinstance(bounds, list)
        params = (
            opt_int("block"),
            opt_int("worklist"),
            opt_int("cell"),
            ArrayAttr(IntAttr(v) for v in bounds),
            *(flag(key) for key in cls.FLAGS),
        )
        try:
            cls.new(params).verify()
        except VerifyException as error:
            parser.raise_error(str(error), pos, parser.pos)
        return params


@irdl_attr_definition
class ForAllAttr(_OpAttribute):
    """Marks the `scf.for` that convert-irgl-loops made of a kernel's
    outermost ForAll, with how its iterations are spread over threads:

    - `#irgl_rt.forall<grid_stride>`: iteration `lb + (tid + k*nthreads)*step`
      on thread `tid`, until the bound (threads run different round counts);
    - `#irgl_rt.forall<uniform>`: every thread runs the same number of rounds
      and the work of a round is guarded by "this round has an iteration for
      me", so collective operations (barriers, nested edge loops) are reached
      by every thread;
    - `, retry_blocked` (after either, retry backoff): in a retry round of
      the kernel (`irgl_wl_retry_round(in) > 0`) thread `tid` runs the
      contiguous block of iterations `tid*chunk .. (tid+1)*chunk - 1` instead,
      `chunk = irgl_backoff_chunk(round, ceil(count / nthreads))` (uniform:
      in `min(chunk, count)` rounds); on a first invocation the mapping above.
    """

    name = "irgl_rt.forall"

    GRID_STRIDE: ClassVar[str] = "grid_stride"
    UNIFORM: ClassVar[str] = "uniform"
    RETRY_BLOCKED: ClassVar[str] = "retry_blocked"

    rounds: StringAttr
    blocked_in_retry: UnitAttr | NoneAttr

    def __init__(self, rounds: str, *, retry_blocked: bool = False):
        super().__init__(
            StringAttr(rounds), UnitAttr() if retry_blocked else NoneAttr()
        )

    @property
    def uniform(self) -> bool:
        return self.rounds.data == self.UNIFORM

    @property
    def retry_blocked(self) -> bool:
        return isinstance(self.blocked_in_retry, UnitAttr)

    def verify(self) -> None:
        if self.rounds.data not in (self.GRID_STRIDE, self.UNIFORM):
            raise VerifyException(
                f"#irgl_rt.forall must be <{self.GRID_STRIDE}> or <{self.UNIFORM}>, "
                f"got <{self.rounds.data}>"
            )

    def print_parameters(self, printer: Printer) -> None:
        blocked = f", {self.RETRY_BLOCKED}" if self.retry_blocked else ""
        printer.print_string(f"<{self.rounds.data}{blocked}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        pos = parser.pos
        with parser.in_angle_brackets():
            rounds = parser.parse_identifier(" in #irgl_rt.forall")
            blocked = False
            if parser.parse_optional_punctuation(","):
                at = parser.pos
                if parser.parse_identifier(" in #irgl_rt.forall") != cls.RETRY_BLOCKED:
                    parser.raise_error(
                        f"#irgl_rt.forall: expected `{cls.RETRY_BLOCKED}`",
                        at,
                        parser.pos,
                    )
                blocked = True
        if rounds not in (cls.GRID_STRIDE, cls.UNIFORM):
            parser.raise_error(
                f"#irgl_rt.forall must be <{cls.GRID_STRIDE}> or <{cls.UNIFORM}>, "
                f"got <{rounds}>",
                pos,
                parser.pos,
            )
        return (StringAttr(rounds), UnitAttr() if blocked else NoneAttr())


@irdl_attr_definition
class NestedEdgesAttr(_OpAttribute):
    """Marks an `irgl.forall %e in edges(...)` directly in a kernel's outermost
    ForAll whose edges are shared across the block, the warp or one thread
    (set by irgl-nested-parallelism, lowered by convert-irgl-loops)."""

    name = "irgl_rt.nested_edges"


@irdl_attr_definition
class DeviceBodyAttr(_OpAttribute):
    """Marks a body-less `func.func` in the `gpu.module` as the device-function
    form of a kernel, `#irgl_rt.device_body<@kernel>`: a control kernel calls
    it (irgl-outline-iterations), and irgl-outline-kernel-bodies gives it the
    kernel's lowered body. With `in_size` (`#irgl_rt.device_body<@kernel,
    in_size>`) it takes one more argument: the size of the `in` worklist,
    which the body uses instead of reading the worklist's tail. With `grid`
    it takes two more, last `index` arguments: the index of the calling
    block and the number of blocks that run the body (the grid it maps its
    iterations over: the launch's, or block 0 alone in a control kernel's
    small-worklist mode), used instead of `gpu.block_id x` and
    `gpu.grid_dim x`."""

    name = "irgl_rt.device_body"

    kernel: SymbolRefAttr
    size_argument: UnitAttr | NoneAttr
    grid_arguments: UnitAttr | NoneAttr

    def __init__(self, kernel: str, *, in_size: bool = False, grid: bool = False):
        super().__init__(
            SymbolRefAttr(kernel),
            UnitAttr() if in_size else NoneAttr(),
            UnitAttr() if grid else NoneAttr(),
        )

    @property
    def kernel_name(self) -> str:
        return self.kernel.root_reference.data

    @property
    def in_size(self) -> bool:
        return isinstance(self.size_argument, UnitAttr)

    @property
    def grid(self) -> bool:
        return isinstance(self.grid_arguments, UnitAttr)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.kernel)
        if self.in_size:
            printer.print_string(", in_size")
        if self.grid:
            printer.print_string(", grid")
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        flags: list[str] = []
        with parser.in_angle_brackets():
            kernel = parser.parse_attribute()
            while parser.parse_optional_punctuation(","):
                pos = parser.pos
                flag = parser.parse_identifier(" in #irgl_rt.device_body")
                order = ("in_size", "grid")
                expected = list(order[order.index(flags[-1]) + 1 :] if flags else order)
                if flag not in expected:
                    parser.raise_error(
                        "#irgl_rt.device_body: expected "
                        + (" or ".join(f"`{f}`" for f in expected) or "`>`"),
                        pos,
                        parser.pos,
                    )
                flags.append(flag)
        if not isinstance(kernel, SymbolRefAttr):
            parser.raise_error("#irgl_rt.device_body needs a kernel symbol (@name)")
        return (
            kernel,
            UnitAttr() if "in_size" in flags else NoneAttr(),
            UnitAttr() if "grid" in flags else NoneAttr(),
        )

    def verify(self) -> None:
        if self.kernel.nested_references.data:
            raise VerifyException(
                f"#irgl_rt.device_body names a kernel of the same gpu.module, "
                f"got {self.kernel}"
            )


@irdl_op_definition
class GridSizeOp(IRDLOperation):
    """The number of blocks to launch `kernel` with `block` threads per block.

    Without `resident` the emitter asks the occupancy API for the number of
    blocks that fit on the GPU at once and launches that many (a full wave).
    With `resident` the kernel uses a grid barrier: the same number is used and
    the launch is cooperative, so every block is co-resident.
    """

    name = "irgl_rt.grid_size"

    kernel = prop_def(SymbolRefAttr)
    block = operand_def(IndexType)
    resident = opt_prop_def(UnitAttr)
    result = result_def(IndexType)

    assembly_format = "$kernel `,` $block (`resident` $resident^)? attr-dict"

    def __init__(
        self, kernel: SymbolRefAttr, block: SSAValue, *, resident: bool = False
    ):
        super().__init__(
            operands=[block],
            properties={
                "kernel": kernel,
                "resident": UnitAttr() if resident else None,
            },
            result_types=[IndexType()],
        )


@irdl_op_definition
class CollectiveOp(IRDLOperation):
    """One operation that every thread of the grid reaches together, inside
    a round of a uniform ForAll (`#irgl_rt.forall<uniform>`).

        irgl_rt.collective active(%active) rank(%tid) {
          irgl.exclusive ...   // or an edge loop marked #irgl_rt.nested_edges
        }

    `active` says whether this thread has an iteration in this round; `rank`
    is the thread's global rank (unique in the grid); the optional `alone`
    (`alone(%one)`) is true where the ForAll has a single iteration in all,
    so that no other thread of the launch reaches the operation
    (convert-irgl-exclusive lets such a contender win without claiming its
    elements). convert-irgl-loops
    makes it; convert-irgl-exclusive and convert-irgl-nested-edges lower the
    operation inside and remove it. Its results, if any, are those of the
    operation inside (a reducing edge loop's result), for uses after it, or
    none.
    """

    name = "irgl_rt.collective"

    active = operand_def(IntegerType(1))
    rank = operand_def(IndexType)
    alone = opt_operand_def(IntegerType(1))
    outs = var_result_def()
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    assembly_format = (
        "`active` `(` $active `)` `rank` `(` $rank `)` (`alone` `(` $alone^ `)`)? "
        "(`->` type($outs)^)? $body attr-dict"
    )

    def __init__(
        self,
        active: SSAValue,
        rank: SSAValue,
        body: Region,
        result_types: Sequence[Attribute] = (),
        alone: SSAValue | None = None,
    ):
        super().__init__(
            operands=[active, rank, [alone] if alone is not None else []],
            result_types=[list(result_types)],
            regions=[body],
        )

    @property
    def inner(self) -> Operation:
        """The one operation inside."""
        op = self.body.block.first_op
        assert op is not None
        return op

    def verify_(self) -> None:
        ops = list(self.body.block.ops)
        if len(ops) != 1:
            raise VerifyException(
                f"'{self.name}' must hold exactly one operation, got {len(ops)}"
            )
        if self.outs and [r.type for r in self.outs] != [
            r.type for r in ops[0].results
        ]:
            raise VerifyException(
                f"'{self.name}' results must be those of the operation inside (or none)"
            )


def check_placeholders(text: str, count: int, op_name: str) -> None:
    """`$0` .. `$<count-1>` each appear in `text`, and no other `$N` does."""
    used = {int(n) for n in re.findall(r"\$(\d+)", text)}
    for index in range(count):
        if index not in used:
            raise VerifyException(
                f"'{op_name}' operand {index} is never used: the C text has no ${index}"
            )
    extra = sorted(n for n in used if n >= count)
    if extra:
        raise VerifyException(
            f"'{op_name}' C text names ${extra[0]}, but the op has only {count} "
            "operand(s)"
        )


@irdl_op_definition
class CBlockOp(IRDLOperation):
    """C statements copied verbatim; `$0`, `$1`, ... name the operands."""

    name = "irgl_rt.c_block"

    text = prop_def(StringAttr)
    args = var_operand_def()

    assembly_format = "$text (`(` $args^ `:` type($args) `)`)? attr-dict"

    def __init__(self, text: str, args: Sequence[SSAValue] = ()):
        super().__init__(operands=[args], properties={"text": StringAttr(text)})

    def verify_(self) -> None:
        check_placeholders(self.text.data, len(self.args), self.name)


class CExprBase(IRDLOperation):
    """A C expression of the result type; `$0`, `$1`, ... name the operands
    (shared by `irgl.cexpr` and `irgl_rt.c_expr`)."""

    text = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()

    assembly_format = (
        "$text (`(` $args^ `:` type($args) `)`)? attr-dict `:` type($result)"
    )

    def __init__(self, text: str, args: Sequence[SSAValue], result_type: Attribute):
        super().__init__(
            operands=[args],
            properties={"text": StringAttr(text)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        check_placeholders(self.text.data, len(self.args), self.name)


@irdl_op_definition
class CExprOp(CExprBase):
    """A C expression of the result type; `$0`, `$1`, ... name the operands."""

    name = "irgl_rt.c_expr"


@irdl_op_definition
class CDeclOp(IRDLOperation):
    """A C variable declaration `type name [= init];` at this point of a body."""

    name = "irgl_rt.c_decl"

    c_type = prop_def(StringAttr)
    var_name = prop_def(StringAttr)
    init = opt_prop_def(StringAttr)

    assembly_format = "$c_type $var_name (`=` $init^)? attr-dict"

    def __init__(self, c_type: str, var_name: str, init: str | None = None):
        super().__init__(
            properties={
                "c_type": StringAttr(c_type),
                "var_name": StringAttr(var_name),
                "init": StringAttr(init) if init is not None else None,
            }
        )


@irdl_op_definition
class CGlobalOp(IRDLOperation):
    """C text placed at file scope of the emitted CUDA file, before kernels.

    `device` makes declared variables `__device__` globals.
    """

    name = "irgl_rt.c_global"

    text = prop_def(StringAttr)
    device = opt_prop_def(UnitAttr)

    assembly_format = "(`device` $device^)? $text attr-dict"

    def __init__(self, text: str, *, device: bool = False):
        super().__init__(
            properties={
                "text": StringAttr(text),
                "device": UnitAttr() if device else None,
            }
        )


IrglRuntime = Dialect(
    "irgl_rt",
    [GridSizeOp, CollectiveOp, CBlockOp, CExprOp, CDeclOp, CGlobalOp],
    [
        GraphHandleType,
        WorklistType,
        PipeType,
        CellType,
        LaunchAttr,
        ForAllAttr,
        NestedEdgesAttr,
        DeviceBodyAttr,
    ],
)
