"""Orchestration constructs of host kernels: Invoke, Iterate and Pipe, with
their worklist initializers (spec: WorklistInitializer and
WorklistInitializerFromArray)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FlatSymbolRefAttrConstr,
    IndexType,
    IntegerType,
    MemRefType,
    SymbolRefAttr,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
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
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect, SymbolTable, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException

from irgl_dialect.attributes import (
    Aggregation,
    AggregationAttr,
    ExtraCond,
    ExtraCondAttr,
    KernelKind,
    TermCond,
    TermCondAttr,
)
from irgl_dialect.kernels import IMPLICIT_YIELD, KernelOp, YieldOp, yield_only_body
from irgl_dialect.placement import (
    RULE_AGGREGATION,
    RULE_ARGUMENTS,
    RULE_CALLEE,
    RULE_INITIALIZER,
    RULE_TERMINATION,
    RULE_WORKLIST_CONTEXT,
    KernelInterface,
    PipeContext,
    in_irgl_kernel,
    kernel_reduces,
    kernel_uses_worklist,
    orchestration_construct,
    rule_error,
)
from irgl_dialect.syntax import parse_body, print_body


def enclosing_pipe_context(op: Operation) -> Operation | None:
    """The innermost Pipe or Iterate around `op` (its pipe context), if any."""
    parent = op.parent_op()
    while parent is not None and not parent.has_trait(KernelInterface):
        if parent.has_trait(PipeContext):
            return parent
        parent = parent.parent_op()
    return None


def lookup_kernel(op: Operation, callee: SymbolRefAttr) -> KernelOp:
    """Resolve an invoked kernel symbol, checking that it is a plain kernel."""
    target = SymbolTable.lookup_symbol(op, callee)
    if target is None:
        raise rule_error(
            op, f"invokes @{callee.string_value()}, which does not exist", RULE_CALLEE
        )
    if not isinstance(target, KernelOp):
        raise rule_error(
            op,
            f"invokes @{callee.string_value()}, which is not an irgl.kernel",
            RULE_CALLEE,
        )
    if target.kernel_kind != KernelKind.PLAIN:
        raise rule_error(
            op,
            f"invokes @{callee.string_value()}, a {target.kernel_kind.value} kernel; "
            "only plain kernels can be invoked",
            RULE_CALLEE,
        )
    return target


def verify_arguments(op: Operation, kernel: KernelOp, args: Sequence[SSAValue]) -> None:
    """The invocation passes as many arguments as the kernel takes, typed alike."""
    expected = kernel.function_type.inputs.data
    if len(args) != len(expected):
        raise rule_error(
            op,
            f"passes {len(args)} argument(s) to @{kernel.sym_name.data}, which "
            f"takes {len(expected)}",
            RULE_ARGUMENTS,
        )
    for index, (arg, want) in enumerate(zip(args, expected, strict=True)):
        if arg.type != want:
            raise rule_error(
                op,
                f"argument {index} of @{kernel.sym_name.data} has type {arg.type}, "
                f"expected {want}",
                RULE_ARGUMENTS,
            )


class KernelCallSymbolUser(SymbolUserOpInterface):
    """Invoke and Iterate name a plain kernel: it must exist, take the passed
    arguments, reduce when aggregated, and get worklists when it uses them.

    Checked only in host kernels: in partially lowered IR the callee may
    already be a `gpu.func`, with runtime arguments of its own.
    """

    def verify(self, op: Operation) -> None:
        # The op's own structure first: the callee checks rely on it.
        assert isinstance(op, InvokeOp | IterateOp)
        op.verify_structure()
        if not in_irgl_kernel(op):
            return
        callee = op.properties.get("callee")
        if not isinstance(callee, SymbolRefAttr):
            return
        kernel = lookup_kernel(op, callee)
        verify_arguments(op, kernel, op.operands[: _argument_count(op)])
        aggregation = op.properties.get("aggregation")
        if aggregation is not None and not kernel_reduces(kernel):
            raise rule_error(
                op,
                f"aggregates the return value of @{kernel.sym_name.data}, which "
                "has no irgl.reduce_and_return",
                RULE_AGGREGATION,
            )
        uses_worklist = kernel_uses_worklist(kernel)
        if op.name == "irgl.invoke":
            if uses_worklist and enclosing_pipe_context(op) is None:
                raise rule_error(
                    op,
                    f"invokes @{kernel.sym_name.data}, which uses the worklist, "
                    "outside any Pipe or Iterate (no worklist is established)",
                    RULE_WORKLIST_CONTEXT,
                )
        elif (
            not uses_worklist
            and op.properties.get("term_cond") is None
            and op.properties.get("extra") is None
        ):
            raise rule_error(
                op,
                f"iterates @{kernel.sym_name.data}, which does not use the "
                "worklist, without a termination condition: add `while any|all` "
                "or `until any|all` (or an extra condition)",
                RULE_TERMINATION,
            )


def _argument_count(op: Operation) -> int:
    """How many leading operands of Invoke or Iterate are kernel arguments."""
    sizes = op.properties.get("operandSegmentSizes")
    if isinstance(sizes, DenseArrayBase):
        return int(sizes.get_values()[0])
    return len(op.operands)


# --------------------------------------------------------------------------
# Worklist initializers
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class WorklistInitializer:
    """The `initial ... capacity ...` clause shared by Pipe and Iterate: one
    custom directive (parse, print, verify) over the ops' `initial`,
    `initial_array`, `initial_count` and `capacity` operand groups.

        initial [%a, %b]                  (scalars)
        initial %arr[%n] : memref<?xi32>  (an array and its element count)
        capacity %cap
    """

    scalars: tuple[SSAValue, ...] = ()
    array: SSAValue | None = None
    count: SSAValue | None = None
    capacity: SSAValue | None = None

    @classmethod
    def of(cls, op: PipeOp | IterateOp) -> WorklistInitializer:
        """The clause of an existing op."""
        return cls(tuple(op.initial), op.initial_array, op.initial_count, op.capacity)

    def operands(self) -> dict[str, Any]:
        """The clause as keyword arguments of the Pipe and Iterate builders."""
        return {
            "initial": self.scalars,
            "initial_array": self.array,
            "initial_count": self.count,
            "capacity": self.capacity,
        }

    @classmethod
    def parse(cls, parser: Parser) -> WorklistInitializer:
        scalars: list[SSAValue] = []
        array: SSAValue | None = None
        count: SSAValue | None = None
        if parser.parse_optional_keyword("initial"):
            if parser.parse_optional_punctuation("["):
                if not parser.parse_optional_punctuation("]"):
                    scalars = [parser.parse_operand(IndexType())]
                    while parser.parse_optional_punctuation(","):
                        scalars.append(parser.parse_operand(IndexType()))
                    parser.parse_punctuation("]")
            else:
                unresolved: UnresolvedOperand = parser.parse_unresolved_operand()
                parser.parse_punctuation("[")
                count = parser.parse_operand(IndexType())
                parser.parse_punctuation("]")
                parser.parse_punctuation(":")
                array = parser.resolve_operand(unresolved, parser.parse_type())
        capacity = None
        if parser.parse_optional_keyword("capacity"):
            capacity = parser.parse_operand(IndexType())
        return cls(tuple(scalars), array, count, capacity)

    def print(self, printer: Printer) -> None:
        if self.array is not None and self.count is not None:
            printer.print_string(" initial ")
            printer.print_operand(self.array)
            printer.print_string("[")
            printer.print_operand(self.count)
            printer.print_string("] : ")
            printer.print_attribute(self.array.type)
        elif self.scalars:
            printer.print_string(" initial [")
            printer.print_list(self.scalars, printer.print_operand)
            printer.print_string("]")
        if self.capacity is not None:
            printer.print_string(" capacity ")
            printer.print_operand(self.capacity)

    def verify(self, op: Operation) -> None:
        if self.scalars and self.array is not None:
            raise VerifyException(
                f"'{op.name}' takes either initial scalars or an initial array, "
                "not both"
            )
        if (self.array is None) != (self.count is None):
            raise VerifyException(f"'{op.name}' initial array needs its element count")
        if self.array is not None:
            t = self.array.type
            if not (
                isinstance(t, MemRefType)
                and len(t.get_shape()) == 1
                and isinstance(t.element_type, IntegerType | IndexType)
            ):
                raise VerifyException(
                    f"'{op.name}' initial array must be a rank-1 memref of "
                    f"integers, got {t}"
                )
        has_init = bool(self.scalars) or self.array is not None
        if has_init and enclosing_pipe_context(op) is not None:
            raise rule_error(
                op,
                "is nested in a Pipe or Iterate and inherits its worklists, so it "
                "cannot have a worklist initializer",
                RULE_INITIALIZER,
            )


# --------------------------------------------------------------------------
# Invoke
# --------------------------------------------------------------------------


def _parse_aggregation(parser: Parser) -> Aggregation | None:
    name = parser.parse_optional_keyword_in(("any", "all"))
    return Aggregation(name) if name else None


def _parse_call(
    parser: Parser,
) -> tuple[
    SymbolRefAttr, list[tuple[UnresolvedOperand, Parser.UnresolvedArgument | None]]
]:
    """Parse `@k(%a, %b = %init, ...)`; `%b = %init` declares a carried arg."""
    callee = SymbolRefAttr(parser.parse_symbol_name())

    def parse_arg() -> tuple[UnresolvedOperand, Parser.UnresolvedArgument | None]:
        first = parser.parse_unresolved_operand()
        if parser.parse_optional_punctuation("="):
            carried = Parser.UnresolvedArgument(first.span)
            return parser.parse_unresolved_operand(), carried
        return first, None

    args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parse_arg)
    return callee, args


@irdl_op_definition
class InvokeOp(IRDLOperation):
    """Launch a plain kernel once (spec: Invoke).

    Inside a Pipe or Iterate the kernel gets the pipe context's worklists and
    `in`/`out` are swapped afterwards. With `any`/`all` the kernel's
    ReduceAndReturn values are aggregated into the i1 result.

        irgl.invoke @init(%g, %dist) : (!irgl.graph, memref<?xi32>)
        %changed = irgl.invoke any @relax(%g) : (!irgl.graph)
    """

    name = "irgl.invoke"

    callee = prop_def(FlatSymbolRefAttrConstr)
    aggregation = opt_prop_def(AggregationAttr)
    args = var_operand_def()
    result = opt_result_def(i1)

    traits = traits_def(orchestration_construct("Invoke"), KernelCallSymbolUser())

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue],
        aggregation: Aggregation | None = None,
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(
            operands=[args],
            properties={
                "callee": callee,
                "aggregation": None
                if aggregation is None
                else AggregationAttr(aggregation),
            },
            result_types=[[i1] if aggregation is not None else []],
        )

    def verify_structure(self) -> None:
        """Checks that do not look at the callee (run before those that do)."""
        if (self.aggregation is None) != (self.result is None):
            raise VerifyException(
                "'irgl.invoke' has an i1 result exactly when it aggregates (any/all)"
            )

    def print(self, printer: Printer) -> None:
        if self.aggregation is not None:
            printer.print_string(f" {self.aggregation.data.value}")
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(") : (")
        printer.print_list([a.type for a in self.args], printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> InvokeOp:
        aggregation = _parse_aggregation(parser)
        pos = parser.pos
        callee, args = _parse_call(parser)
        if any(carried is not None for _, carried in args):
            parser.raise_error("irgl.invoke arguments cannot be loop-carried", pos)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_type
        )
        operands = parser.resolve_operands([a for a, _ in args], types, pos)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(callee, operands, aggregation)
        if attrs is not None:
            op.attributes |= attrs.data
        return op


# --------------------------------------------------------------------------
# Iterate
# --------------------------------------------------------------------------


@irdl_op_definition
class IterateOp(IRDLOperation):
    """Invoke a kernel repeatedly (spec: Iterate).

    A kernel that uses the worklist is invoked while its incoming worklist is
    not empty; standalone, Iterate establishes fresh worklists filled by its
    initializer, nested it uses the pipe context's. `while`/`until` `any`/`all`
    adds (or, for kernels without worklists, is) the condition on the kernel's
    aggregated return value. After each invocation the body runs: it yields
    the loop-carried kernel arguments (`%x = %init` in the argument list) for
    the next invocation and, with `extra and|or`, an extra condition combined
    with the default one. The results are the final carried values.

        %l = irgl.iterate @bfs(%g, %level, %lvl = %c1)
               : (!irgl.graph, memref<?xi32>, i32) initial [%src] {
          %next = arith.addi %lvl, %c1 : i32
          irgl.yield %next : i32
        }
    """

    name = "irgl.iterate"

    callee = prop_def(FlatSymbolRefAttrConstr)
    term_cond = opt_prop_def(TermCondAttr)
    aggregation = opt_prop_def(AggregationAttr)
    extra = opt_prop_def(ExtraCondAttr)
    carried = prop_def(DenseArrayBase.constr(i64))

    args = var_operand_def()
    initial = var_operand_def(IndexType)
    initial_array = opt_operand_def(MemRefType)
    initial_count = opt_operand_def(IndexType)
    capacity = opt_operand_def(IndexType)

    results_ = var_result_def()
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        RecursiveMemoryEffect(),
        IMPLICIT_YIELD,
        PipeContext(),
        orchestration_construct("Iterate"),
        KernelCallSymbolUser(),
    )

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue],
        *,
        carried: Sequence[int] = (),
        term_cond: TermCond | None = None,
        aggregation: Aggregation | None = None,
        extra: ExtraCond | None = None,
        initial: Sequence[SSAValue] = (),
        initial_array: SSAValue | None = None,
        initial_count: SSAValue | None = None,
        capacity: SSAValue | None = None,
        body: Region | None = None,
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        carried_types = [args[i].type for i in carried]
        if body is None:
            body = yield_only_body(carried_types)
        super().__init__(
            operands=[
                args,
                initial,
                [] if initial_array is None else [initial_array],
                [] if initial_count is None else [initial_count],
                [] if capacity is None else [capacity],
            ],
            properties={
                "callee": callee,
                "carried": DenseArrayBase.from_list(i64, carried),
                "term_cond": None if term_cond is None else TermCondAttr(term_cond),
                "aggregation": None
                if aggregation is None
                else AggregationAttr(aggregation),
                "extra": None if extra is None else ExtraCondAttr(extra),
            },
            result_types=[carried_types],
            regions=[body],
        )

    @property
    def carried_positions(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.carried.get_values())

    def verify_structure(self) -> None:
        """Checks that do not look at the callee (run before those that do)."""
        positions = self.carried_positions
        if len(set(positions)) != len(positions) or any(
            not 0 <= p < len(self.args) for p in positions
        ):
            raise VerifyException(
                f"'irgl.iterate' carried argument positions {list(positions)} are "
                "invalid"
            )
        carried_types = [self.args[p].type for p in positions]
        if list(self.body.block.arg_types) != carried_types:
            raise VerifyException(
                "'irgl.iterate' body arguments must match the carried arguments"
            )
        if [r.type for r in self.results_] != carried_types:
            raise VerifyException(
                "'irgl.iterate' results must match the carried arguments"
            )
        if (self.term_cond is None) != (self.aggregation is None):
            raise VerifyException(
                "'irgl.iterate' while/until goes with any/all (e.g. `while any`)"
            )
        self._verify_yield(carried_types)
        WorklistInitializer.of(self).verify(self)

    def _verify_yield(self, carried_types: list[Attribute]) -> None:
        terminator = self.body.block.last_op
        if not isinstance(terminator, YieldOp):
            # The words of SingleBlockImplicitTerminator, which may run first
            # (xDSL keeps an op's traits in a set).
            found = "nothing" if terminator is None else terminator.name
            raise VerifyException(
                f"'irgl.iterate' terminates with operation {found} instead of "
                "irgl.yield"
            )
        if [v.type for v in terminator.values] != carried_types:
            raise VerifyException(
                "'irgl.iterate' body must yield the next value of each carried "
                f"argument ({', '.join(map(str, carried_types))})"
            )
        if (self.extra is None) != (terminator.extra is None):
            raise VerifyException(
                "'irgl.iterate' with `extra and|or` yields `extra %cond` (and only "
                "then)"
            )
        if terminator.extra is not None and terminator.extra.type != i1:
            raise VerifyException("'irgl.iterate' extra condition must be i1")

    def print(self, printer: Printer) -> None:
        if self.term_cond is not None and self.aggregation is not None:
            printer.print_string(
                f" {self.term_cond.data.value} {self.aggregation.data.value}"
            )
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        carried = dict(zip(self.carried_positions, self.body.block.args, strict=False))

        def print_arg(index_and_value: tuple[int, SSAValue]) -> None:
            index, value = index_and_value
            if index in carried:
                printer.print_ssa_value(carried[index])
                printer.print_string(" = ")
            printer.print_operand(value)

        printer.print_list(list(enumerate(self.args)), print_arg)
        printer.print_string(") : (")
        printer.print_list([a.type for a in self.args], printer.print_attribute)
        printer.print_string(")")
        WorklistInitializer.of(self).print(printer)
        if self.extra is not None:
            printer.print_string(f" extra {self.extra.data.value}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        print_body(
            printer, self.body, terminator=bool(carried) or self.extra is not None
        )

    @classmethod
    def parse(cls, parser: Parser) -> IterateOp:
        term_cond: TermCond | None = None
        aggregation: Aggregation | None = None
        if name := parser.parse_optional_keyword_in(("while", "until")):
            term_cond = TermCond(name)
            aggregation = Aggregation(parser.parse_keyword_in(("any", "all")))
        pos = parser.pos
        callee, args = _parse_call(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_type
        )
        operands = parser.resolve_operands([a for a, _ in args], types, pos)
        carried_positions = [i for i, (_, c) in enumerate(args) if c is not None]
        block_args = [
            c.resolve(types[i]) for i, (_, c) in enumerate(args) if c is not None
        ]
        init = WorklistInitializer.parse(parser)
        extra: ExtraCond | None = None
        if parser.parse_optional_keyword("extra"):
            extra = ExtraCond(parser.parse_keyword_in(("and", "or")))
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parse_body(parser, block_args)
        op = cls(
            callee,
            operands,
            carried=carried_positions,
            term_cond=term_cond,
            aggregation=aggregation,
            extra=extra,
            **init.operands(),
            body=body,
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op


# --------------------------------------------------------------------------
# Pipe
# --------------------------------------------------------------------------


@irdl_op_definition
class PipeOp(IRDLOperation):
    """Establish worklists shared by the invocations in the body (spec: Pipe).

    The outermost Pipe (or Iterate) creates the pipe context (in, out and
    retry worklists), filled by its initializer; nested ones inherit it.
    Without `once` the body repeats until the incoming worklist is empty.

        irgl.pipe once { irgl.invoke @a() : ()  scf.if %c { ... } }
        irgl.pipe initial %bad[%n] : memref<?xi32> capacity %cap { ... }
    """

    name = "irgl.pipe"

    once = opt_prop_def(UnitAttr)
    initial = var_operand_def(IndexType)
    initial_array = opt_operand_def(MemRefType)
    initial_count = opt_operand_def(IndexType)
    capacity = opt_operand_def(IndexType)
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        RecursiveMemoryEffect(),
        IMPLICIT_YIELD,
        PipeContext(),
        orchestration_construct("Pipe"),
    )

    def __init__(
        self,
        *,
        once: bool = False,
        initial: Sequence[SSAValue] = (),
        initial_array: SSAValue | None = None,
        initial_count: SSAValue | None = None,
        capacity: SSAValue | None = None,
        body: Region | None = None,
    ):
        super().__init__(
            operands=[
                initial,
                [] if initial_array is None else [initial_array],
                [] if initial_count is None else [initial_count],
                [] if capacity is None else [capacity],
            ],
            properties={"once": UnitAttr() if once else None},
            regions=[body or yield_only_body()],
        )

    def verify_(self) -> None:
        WorklistInitializer.of(self).verify(self)
        if self.capacity is not None and enclosing_pipe_context(self) is not None:
            raise rule_error(
                self,
                "is nested in a Pipe or Iterate and inherits its worklists, so it "
                "cannot set their capacity",
                RULE_INITIALIZER,
            )

    def print(self, printer: Printer) -> None:
        if self.once is not None:
            printer.print_string(" once")
        WorklistInitializer.of(self).print(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        print_body(printer, self.body)

    @classmethod
    def parse(cls, parser: Parser) -> PipeOp:
        once = parser.parse_optional_keyword("once") is not None
        init = WorklistInitializer.parse(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(
            once=once,
            **init.operands(),
            body=parse_body(parser),
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op
