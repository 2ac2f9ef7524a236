"""ForAll and For over an iterator: an integer range, the nodes of a graph,
the edges of a node, or the kernel's worklist."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from irgl_dialect.attributes import (
    GraphType,
    IteratorKind,
    IteratorKindAttr,
    KernelKind,
)
from irgl_dialect.kernels import IMPLICIT_YIELD
from irgl_dialect.placement import (
    RULE_FORALL_PLACEMENT,
    RULE_GRAPH_ACCESS,
    RULE_WORKLIST_ITERATION,
    AllowedIn,
    IteratesWorklist,
    ParallelLoopInterface,
    UniformLoopInterface,
    ancestors,
    enclosing_foralls,
    kernel_kind_of,
    rule_error,
)
from irgl_dialect.syntax import parse_body, print_body


def iterator_of(op: Operation) -> IteratorKind | None:
    """The iterator of a loop op, None while its property is missing (the
    op's own verifier reports that)."""
    attr = op.properties.get("iterator")
    return attr.data if isinstance(attr, IteratorKindAttr) else None


class ForAllInterface(ParallelLoopInterface):
    """irgl.forall as IrGL's parallel loop."""

    def iterates_worklist(self, op: Operation) -> bool:
        return iterator_of(op) == IteratorKind.WORKLIST

    def index(self, op: Operation) -> SSAValue | None:
        blocks = op.regions[0].blocks if op.regions else ()
        return blocks[0].args[0] if blocks and blocks[0].args else None


class ForInterface(UniformLoopInterface):
    """irgl.for runs its body uniformly when its bounds are uniform."""

    def trip_count_operands(self, op: Operation) -> tuple[SSAValue, ...]:
        return tuple(op.operands)


_ITERATOR_ARITY = {
    IteratorKind.RANGE: (2, 3),
    IteratorKind.NODES: (1,),
    IteratorKind.EDGES: (2,),
    IteratorKind.WORKLIST: (0,),
}


class LoopBase(IRDLOperation):
    """Shared structure of ForAll and For: an iterator and a one-index body."""

    iterator = prop_def(IteratorKindAttr)
    bounds = var_operand_def()
    body = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect(), IMPLICIT_YIELD)

    def __init__(
        self,
        iterator: IteratorKind,
        bounds: Sequence[SSAValue],
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()]))
        super().__init__(
            operands=[bounds],
            properties={"iterator": IteratorKindAttr(iterator)},
            regions=[body],
        )

    @property
    def index(self) -> SSAValue:
        """The iteration's index: a number, node id, edge id or worklist slot."""
        return self.body.block.args[0]

    def verify_(self) -> None:
        kind = self.iterator.data
        counts = _ITERATOR_ARITY[kind]
        if len(self.bounds) not in counts:
            raise VerifyException(
                f"'{self.name}' over {kind.value} takes "
                f"{' or '.join(map(str, counts))} operands, got {len(self.bounds)}"
            )
        types = [b.type for b in self.bounds]
        if kind == IteratorKind.RANGE and any(t != IndexType() for t in types):
            raise VerifyException(f"'{self.name}' range bounds must be index values")
        if kind in (IteratorKind.NODES, IteratorKind.EDGES) and not isinstance(
            types[0], GraphType
        ):
            raise VerifyException(
                f"'{self.name}' over {kind.value} iterates a !irgl.graph, "
                f"got {types[0]}"
            )
        if kind == IteratorKind.EDGES and types[1] != IndexType():
            raise VerifyException(f"'{self.name}' edges(%g, %n) needs an index node")
        block = self.body.block
        if len(block.args) != 1 or block.args[0].type != IndexType():
            raise VerifyException(f"'{self.name}' body takes one index argument")
        if kind == IteratorKind.EDGES and kernel_kind_of(self) == KernelKind.HOST:
            raise rule_error(
                self,
                "over edges may not appear in a host kernel: the graph's edges "
                "live in GPU memory, so edge traversals need device code (a "
                "plain kernel)",
                RULE_GRAPH_ACCESS,
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.index)
        printer.print_string(" in ")
        kind = self.iterator.data
        printer.print_string(kind.value)
        if kind != IteratorKind.WORKLIST:
            printer.print_string("(")
            printer.print_list(self.bounds, printer.print_operand)
            printer.print_string(")")
        self.print_reduction(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        print_body(printer, self.body, terminator=bool(self.results))

    def print_reduction(self, printer: Printer) -> None:
        """Print the loop's reduction clause (ForAll only)."""

    @classmethod
    def parse_reduction(cls, parser: Parser) -> tuple[()] | tuple[str, SSAValue]:
        """Parse the loop's reduction clause (ForAll only)."""
        return ()

    @classmethod
    def parse(cls, parser: Parser):
        argument = parser.parse_argument(expect_type=False)
        index = argument.resolve(IndexType())
        parser.parse_keyword("in")
        kind = IteratorKind(parser.parse_keyword_in([k.value for k in IteratorKind]))
        bounds: list[SSAValue] = []
        if kind != IteratorKind.WORKLIST:
            unresolved = parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            for operand in unresolved:
                if operand.span.text == argument.name.text:
                    parser.raise_error(
                        f"the loop's index {argument.name.text} cannot be one of "
                        "its own bounds (it is defined by the loop)",
                        operand.span,
                    )
            types: list = [IndexType()] * len(unresolved)
            if kind in (IteratorKind.NODES, IteratorKind.EDGES) and unresolved:
                types[0] = GraphType()
            bounds = [
                parser.resolve_operand(u, t)
                for u, t in zip(unresolved, types, strict=True)
            ]
        reduction = cls.parse_reduction(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(kind, bounds, parse_body(parser, [index]), *reduction)
        if attrs is not None:
            op.attributes |= attrs.data
        return op


#: Combining operations of a ForAll reduction.
REDUCTION_KINDS = ("add", "min", "max")


def is_reducible_type(type_: Attribute) -> bool:
    """Can a ForAll reduce values of `type_` (index, integers, floats)?"""
    return isinstance(type_, IndexType | IntegerType | AnyFloat) and not (
        isinstance(type_, IntegerType) and type_.width.data == 1
    )


@irdl_op_definition
class ForAllOp(LoopBase):
    """Traverse the iterator in parallel (spec: ForAll).

    The outermost ForAll of a plain kernel lowers to a grid-stride loop
    (consecutive iterations on consecutive threads); inner ones and those of
    host kernels are sequential loops.

    An inner ForAll may reduce the values its iterations yield with `add`,
    `min` or `max`, starting from `init`: the result combines `init` with
    every iteration's value, in any order, without atomics (lowered to a
    loop-carried value, or to warp/block reductions when the edges of a node
    are shared across threads).

        irgl.forall %i in worklist { ... }
        irgl.forall %e in edges(%g, %n) { ... }
        %s = irgl.forall %e in edges(%g, %n) reduce(add, %zero : f64) {
          ...
          irgl.yield %v : f64
        }
    """

    name = "irgl.forall"

    reduce = opt_prop_def(StringAttr)
    bounds = var_operand_def()  # restated: the reduction's init comes after
    init = opt_operand_def()
    result = opt_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        iterator: IteratorKind,
        bounds: Sequence[SSAValue],
        body: Region | None = None,
        reduce: str | None = None,
        init: SSAValue | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()]))
        inits: list[SSAValue] = [] if init is None else [init]
        properties: dict[str, Attribute] = {"iterator": IteratorKindAttr(iterator)}
        if reduce is not None:
            properties["reduce"] = StringAttr(reduce)
        IRDLOperation.__init__(
            self,
            operands=[list(bounds), inits],
            result_types=[[v.type for v in inits]],
            properties=properties,
            regions=[body],
        )

    def print_reduction(self, printer: Printer) -> None:
        if self.reduce is not None and self.init is not None:
            printer.print_string(f" reduce({self.reduce.data}, ")
            printer.print_operand(self.init)
            printer.print_string(" : ")
            printer.print_attribute(self.init.type)
            printer.print_string(")")

    @classmethod
    def parse_reduction(cls, parser: Parser) -> tuple[()] | tuple[str, SSAValue]:
        if not parser.parse_optional_keyword("reduce"):
            return ()
        parser.parse_punctuation("(")
        kind = parser.parse_keyword_in(list(REDUCTION_KINDS))
        parser.parse_punctuation(",")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        init = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_punctuation(")")
        return kind, init

    traits = traits_def(
        RecursiveMemoryEffect(),
        IMPLICIT_YIELD,
        ForAllInterface(),
        IteratesWorklist(),
        AllowedIn(
            frozenset({KernelKind.PLAIN, KernelKind.HOST}),
            "",
            "plain or host kernels",
            RULE_FORALL_PLACEMENT,
        ),
    )

    def verify_(self) -> None:
        super().verify_()
        kind = kernel_kind_of(self)
        if self.iterator.data == IteratorKind.WORKLIST and isinstance(kind, KernelKind):
            if kind != KernelKind.PLAIN or enclosing_foralls(self):
                raise rule_error(
                    self,
                    "over the worklist must be the outermost ForAll of a plain kernel",
                    RULE_WORKLIST_ITERATION,
                )
        self._verify_reduction()

    def _verify_reduction(self) -> None:
        from irgl_dialect.kernels import YieldOp

        last = self.body.block.last_op
        yielded = list(last.operands) if isinstance(last, YieldOp) else []
        if self.reduce is None:
            if self.init is not None or self.results:
                raise VerifyException(
                    f"'{self.name}' has an initial value or a result but no reduce kind"
                )
            if yielded:
                raise VerifyException(
                    f"'{self.name}' without reduce(...) yields no values"
                )
            return
        if self.reduce.data not in REDUCTION_KINDS:
            raise VerifyException(
                f"'{self.name}' reduce kind must be one of "
                f"{', '.join(REDUCTION_KINDS)}, got '{self.reduce.data}'"
            )
        if self.init is None or self.result is None:
            raise VerifyException(
                f"'{self.name}' reduce({self.reduce.data}) needs an initial value "
                "and one result"
            )
        t = self.init.type
        if not is_reducible_type(t):
            raise VerifyException(
                f"'{self.name}' reduces index, integer or float values, got {t}"
            )
        if self.result.type != t:
            raise VerifyException(
                f"'{self.name}' result type {self.result.type} differs from the "
                f"initial value's type {t}"
            )
        if [v.type for v in yielded] != [t]:
            got = ", ".join(str(v.type) for v in yielded) or "nothing"
            raise VerifyException(
                f"'{self.name}' reduce({self.reduce.data}) body must yield one {t} "
                f"value, got {got}"
            )
        if not _inside_parallel_loop(self):
            raise VerifyException(
                f"'{self.name}' with reduce(...) must be an inner ForAll: the "
                "outermost ForAll of a kernel cannot reduce"
            )


def _inside_parallel_loop(op: ForAllOp) -> bool:
    """Is `op` inside another ForAll, or inside the `scf.for` that
    convert-irgl-loops made of one (marked `irgl_rt.forall`; named here, as
    the runtime dialect's module sits above this one)?"""
    return bool(enclosing_foralls(op)) or any(
        "irgl_rt.forall" in parent.attributes for parent in ancestors(op)
    )


@irdl_op_definition
class ForOp(LoopBase):
    """Traverse the iterator sequentially (spec: For).

    irgl.for %i in range(%c0, %n) { ... }
    """

    name = "irgl.for"

    traits = traits_def(RecursiveMemoryEffect(), IMPLICIT_YIELD, ForInterface())

    def verify_(self) -> None:
        super().verify_()
        if self.iterator.data == IteratorKind.WORKLIST:
            raise rule_error(
                self,
                "cannot iterate the worklist: use irgl.forall",
                RULE_WORKLIST_ITERATION,
            )
