"""ForAll and For over an iterator: an integer range, the nodes of a graph,
the edges of a node, or the kernel's worklist."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
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
        printer.print_op_attributes(self.attributes, print_keyword=True)
        print_body(printer, self.body)

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
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(kind, bounds, parse_body(parser, [index]))
        if attrs is not None:
            op.attributes |= attrs.data
        return op


@irdl_op_definition
class ForAllOp(LoopBase):
    """Traverse the iterator in parallel (spec: ForAll).

    The outermost ForAll of a plain kernel lowers to a grid-stride loop
    (consecutive iterations on consecutive threads); inner ones and those of
    host kernels are sequential loops.

        irgl.forall %i in worklist { ... }
        irgl.forall %e in edges(%g, %n) { ... }
    """

    name = "irgl.forall"

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
