"""Kernels (plain, host, device), their return, and the region terminator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FlatSymbolRefAttrConstr,
    FunctionType,
    ModuleOp,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    SingleBlockImplicitTerminator,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from irgl_dialect.attributes import KernelKind, KernelKindAttr
from irgl_dialect.placement import (
    RULE_CALL,
    RULE_CALL_ARGUMENTS,
    RULE_HELPER_BODY,
    RULE_KERNEL_SIGNATURE,
    RULE_RECURSION,
    RULE_RESERVED_NAME,
    AllowedIn,
    KernelInterface,
    in_irgl_kernel,
    located_error,
    rule_error,
    verify_dominance,
)
from irgl_dialect.upstream_checks import verify_if_yields, verify_predicates

MAX_BLOCK_SIZE = 1024

#: Symbol names that the lowering creates: the device module, host and entry
#: functions, and the runtime's `irgl_*` functions. Kernels may not use them.
RESERVED_PREFIX = "irgl_"


class KernelOpInterface(KernelInterface):
    """`irgl.kernel` reads its kind from its `kind` property."""

    def kernel_kind(self, op: Operation) -> KernelKind:
        assert isinstance(op, KernelOp)
        return op.kind.data


@irdl_op_definition
class KernelOp(IRDLOperation):
    """An IrGL kernel (spec: Kernel).

    `plain` kernels run on the GPU and lower to `gpu.func` kernels; `host`
    kernels run on the CPU, orchestrate the others and lower to `func.func`;
    `device` kernels are CUDA `__device__` functions, called from plain and
    device kernels with `irgl.call` (or from C text).

        irgl.kernel @bfs(%g: !irgl.graph, %lvl: i32) launch_bounds(256) { ... }
        irgl.kernel host @main(%g: !irgl.graph) { ... }
        irgl.kernel device @f(%x: i32) -> i32 { ...  irgl.return %y : i32 }
    """

    name = "irgl.kernel"

    sym_name = prop_def(SymbolNameConstraint())
    kind = prop_def(KernelKindAttr)
    function_type = prop_def(FunctionType)
    launch_bounds = opt_prop_def(DenseArrayBase.constr(i32))
    body = region_def("single_block")

    traits = traits_def(
        IsolatedFromAbove(),
        SymbolOpInterface(),
        HasParent(ModuleOp),
        KernelOpInterface(),
    )

    def __init__(
        self,
        sym_name: str,
        inputs: Sequence[Attribute],
        *,
        kind: KernelKind = KernelKind.PLAIN,
        outputs: Sequence[Attribute] = (),
        launch_bounds: Sequence[int] | None = None,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=inputs))
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "kind": KernelKindAttr(kind),
                "function_type": FunctionType.from_lists(inputs, outputs),
                "launch_bounds": None
                if launch_bounds is None
                else DenseArrayBase.from_list(i32, launch_bounds),
            },
            regions=[body],
        )

    @property
    def kernel_kind(self) -> KernelKind:
        return self.kind.data

    def verify_(self) -> None:
        if self.sym_name.data.startswith(RESERVED_PREFIX):
            raise rule_error(
                self,
                f"@{self.sym_name.data}: names starting with '{RESERVED_PREFIX}' "
                "are reserved for the symbols that the lowering creates (the "
                "kernel module, host and entry functions, runtime functions)",
                RULE_RESERVED_NAME,
            )
        verify_dominance(self)
        verify_if_yields(self)
        verify_predicates(self)
        verify_kernel_calls(self, device=self.kernel_kind != KernelKind.HOST)
        inputs = self.function_type.inputs.data
        if tuple(self.body.block.arg_types) != tuple(inputs):
            raise rule_error(
                self,
                "body arguments must have the kernel's parameter types",
                RULE_KERNEL_SIGNATURE,
            )
        if self.function_type.outputs.data and self.kernel_kind == KernelKind.PLAIN:
            raise rule_error(
                self,
                "a plain kernel has no declared return type: its return value is "
                "built with irgl.reduce_and_return and aggregated by the invocation",
                RULE_KERNEL_SIGNATURE,
            )
        if len(self.function_type.outputs.data) > 1:
            raise rule_error(
                self, "a kernel returns at most one value", RULE_KERNEL_SIGNATURE
            )
        if self.launch_bounds is not None:
            self._verify_launch_bounds()

    def _verify_launch_bounds(self) -> None:
        bounds = cast(tuple[int, ...], self.launch_bounds.get_values())  # type: ignore[union-attr]
        if self.kernel_kind != KernelKind.PLAIN:
            raise rule_error(
                self,
                "launch_bounds apply only to plain kernels",
                RULE_KERNEL_SIGNATURE,
            )
        if not 1 <= len(bounds) <= 2:
            raise rule_error(
                self,
                "launch_bounds takes (max_threads_per_block[, min_blocks])",
                RULE_KERNEL_SIGNATURE,
            )
        if not 1 <= bounds[0] <= MAX_BLOCK_SIZE:
            raise rule_error(
                self,
                f"launch_bounds max_threads_per_block must be in [1, "
                f"{MAX_BLOCK_SIZE}], got {bounds[0]}",
                RULE_KERNEL_SIGNATURE,
            )
        if len(bounds) == 2 and bounds[1] < 0:
            raise rule_error(
                self, "launch_bounds min_blocks must be >= 0", RULE_KERNEL_SIGNATURE
            )

    def print(self, printer: Printer) -> None:
        if self.kernel_kind != KernelKind.PLAIN:
            printer.print_string(f" {self.kernel_kind.value}")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(")")
        outputs = self.function_type.outputs.data
        if outputs:
            printer.print_string(" -> ")
            printer.print_list(outputs, printer.print_attribute)
        if self.launch_bounds is not None:
            values = self.launch_bounds.get_values()
            printer.print_string(f" launch_bounds({', '.join(str(v) for v in values)})")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_block_terminators=bool(outputs),
        )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        kind_name = parser.parse_optional_keyword_in(("host", "device"))
        kind = KernelKind(kind_name) if kind_name else KernelKind.PLAIN
        sym_name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
        )
        outputs: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            outputs = [parser.parse_type()]
        bounds: list[int] | None = None
        if parser.parse_optional_keyword("launch_bounds"):
            start = parser.pos
            bounds = parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_integer
            )
            if any(not -(2**31) <= b < 2**31 for b in bounds):
                parser.raise_error(
                    "launch_bounds values must fit in i32", start, parser.pos
                )
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region(args)
        if not outputs:
            for block in region.blocks:
                last = block.last_op
                if last is None or not last.has_trait(IsTerminator):
                    block.add_op(ReturnOp())
        op = cls(
            sym_name,
            [a.type for a in args],
            kind=kind,
            outputs=outputs,
            launch_bounds=bounds,
            body=region,
        )
        if attrs is not None:
            op.attributes |= attrs.data
        return op


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a kernel, returning the value of a host or device kernel.

    irgl.return %v : i32
    """

    name = "irgl.return"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(KernelOp))

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        kernel = self.parent_op()
        assert isinstance(kernel, KernelOp)
        expected = tuple(kernel.function_type.outputs.data)
        found = tuple(v.type for v in self.values)
        if expected != found:
            raise VerifyException(
                f"'irgl.return' returns ({', '.join(map(str, found))}) but kernel "
                f"@{kernel.sym_name.data} returns ({', '.join(map(str, expected))})"
            )


class CallSymbolUser(SymbolUserOpInterface):
    """`irgl.call` names a device kernel of the module and passes it
    arguments and takes results of its types.

    Checked only in irgl kernels: once lowered, the callee is a `func.func`
    and the call a `func.call`.
    """

    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        if not in_irgl_kernel(op):
            return
        name = op.callee.string_value()
        target = SymbolTable.lookup_symbol(op, op.callee)
        if target is None:
            raise rule_error(op, f"calls @{name}, which does not exist", RULE_CALL)
        if not isinstance(target, KernelOp):
            hint = (
                ": call func.func helpers with func.call"
                if target.name == "func.func"
                else ""
            )
            raise rule_error(
                op,
                f"calls @{name}, which is not an irgl.kernel ({target.name}){hint}",
                RULE_CALL,
            )
        if target.kernel_kind != KernelKind.DEVICE:
            how = (
                "plain kernels are launched with irgl.invoke or irgl.iterate"
                if target.kernel_kind == KernelKind.PLAIN
                else "host kernels are entry points that run on the CPU"
            )
            raise rule_error(
                op,
                f"calls @{name}, a {target.kernel_kind.value} kernel; only device "
                f"kernels are called ({how})",
                RULE_CALL,
            )
        _verify_call_types(op, target)


def _verify_call_types(op: CallOp, target: KernelOp) -> None:
    name = target.sym_name.data
    expected = target.function_type.inputs.data
    if len(op.arguments) != len(expected):
        raise rule_error(
            op,
            f"passes {len(op.arguments)} argument(s) to @{name}, which takes "
            f"{len(expected)}",
            RULE_CALL_ARGUMENTS,
        )
    for index, (arg, want) in enumerate(zip(op.arguments, expected, strict=True)):
        if arg.type != want:
            raise rule_error(
                op,
                f"argument {index} of @{name} has type {arg.type}, expected {want}",
                RULE_CALL_ARGUMENTS,
            )
    outputs = tuple(target.function_type.outputs.data)
    results = tuple(op.res.types)
    if results != outputs:
        raise rule_error(
            op,
            f"takes ({', '.join(map(str, results))}) from @{name}, which returns "
            f"({', '.join(map(str, outputs))})",
            RULE_CALL_ARGUMENTS,
        )


@irdl_op_definition
class CallOp(IRDLOperation):
    """Calls a device kernel from a plain or device kernel: a call of a CUDA
    `__device__` function (lowered to `func.call`). `func.func` helpers are
    called with `func.call`.

        %y = irgl.call @twice(%x) : (i32) -> i32
    """

    name = "irgl.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    arguments = var_operand_def()
    res = var_result_def()

    traits = traits_def(
        CallSymbolUser(),
        AllowedIn(
            frozenset({KernelKind.PLAIN, KernelKind.DEVICE}),
            "(call of a device kernel) ",
            "plain or device kernels",
            RULE_CALL,
            ": device kernels are __device__ functions, called from GPU code",
        ),
    )

    assembly_format = (
        "$callee `(` $arguments `)` attr-dict `:` functional-type($arguments, $res)"
    )

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        arguments: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(
            operands=[arguments],
            result_types=[result_types],
            properties={"callee": callee},
        )


def call_callee(op: Operation) -> SymbolRefAttr | None:
    """The symbol that `op` calls (`func.call`, `irgl.call`), or None."""
    if isinstance(op, func.CallOp | CallOp):
        return op.callee
    return None


def _helper_irgl_op(helper: func.FuncOp) -> Operation | None:
    """The first irgl op in the body of `helper`, if any."""
    for inner in helper.body.walk():
        if inner.dialect_name() == "irgl":
            return inner
    return None


def _call_chain(path: list[Operation], target: Operation) -> str:
    names = [_symbol(f) for f in path[path.index(target) :]] + [_symbol(target)]
    return " -> ".join(names)


def _symbol(op: Operation) -> str:
    name = op.properties.get("sym_name")
    return f"@{getattr(name, 'data', '?')}"


def verify_kernel_calls(kernel: Operation, *, device: bool) -> None:
    """Check what the kernel calls, transitively through `func.func` helpers
    and device kernels.

    A `func.call` names a `func.func` with a body whose ops are no irgl ops
    (a helper is plain code: arith, math, scf, memref, func; graph accesses
    and kernel constructs belong in kernels). In device code (`device`: a
    plain or device kernel) no call chain leads back to a function on it.
    Each violation is a located diagnostic at the offending op. Calls whose
    callee is missing or of the wrong kind are left to the call's own
    verifier.
    """
    path: list[Operation] = []
    done: set[Operation] = set()

    def visit(function: Operation) -> None:
        path.append(function)
        for op in function.walk():
            ref = call_callee(op)
            if ref is None:
                continue
            target = SymbolTable.lookup_symbol(op, ref)
            if target is None:
                continue
            if isinstance(op, func.CallOp):
                if not isinstance(target, func.FuncOp):
                    continue
                _verify_helper(op, target, kernel)
            elif not isinstance(target, KernelOp):
                continue
            if target in path:
                if device:
                    message = (
                        f"'{op.name}' calls {_symbol(target)} recursively "
                        f"({_call_chain(path, target)}): device code has no "
                        f"recursion (rule: {RULE_RECURSION})"
                    )
                    raise located_error(op, message, VerifyException(message))
                continue
            if target not in done:
                visit(target)
        path.pop()
        done.add(function)

    visit(kernel)


def _verify_helper(call: func.CallOp, helper: func.FuncOp, kernel: Operation) -> None:
    name = helper.sym_name.data
    if name.startswith(RESERVED_PREFIX):
        return  # a runtime function, declared by a lowering pass
    if helper.is_declaration:
        message = (
            f"'func.call' calls @{name}, which is declared without a body: a "
            "function called from a kernel is defined in the program (call C "
            f"functions from irgl.cexpr text) (rule: {RULE_CALL})"
        )
        raise located_error(call, message, VerifyException(message))
    inner = _helper_irgl_op(helper)
    if inner is None:
        return
    message = (
        f"'{inner.name}' is in func.func @{name}, a helper called from kernel "
        f"{_symbol(kernel)}: a func.func helper holds plain code (arith, math, "
        "scf, memref, func); graph accesses belong in an irgl.kernel device, "
        f"kernel constructs in a plain kernel (rule: {RULE_HELPER_BODY})"
    )
    raise located_error(inner, message, VerifyException(message))


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates the body of an irgl region op (implicit when empty).

    In `irgl.iterate` it yields the loop-carried kernel arguments for the next
    invocation and, with an extra condition, `extra %cond`.

        irgl.yield %next : i32 extra %stop : i1
    """

    name = "irgl.yield"

    values = var_operand_def()
    extra = opt_operand_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    traits = traits_def(IsTerminator())

    assembly_format = (
        "attr-dict ($values^ `:` type($values))? (`extra` $extra^ `:` type($extra))?"
    )

    def __init__(self, values: Sequence[SSAValue] = (), extra: SSAValue | None = None):
        super().__init__(operands=[values, [] if extra is None else [extra]])

    def verify_(self) -> None:
        parent = self.parent_op()
        trait = (
            None if parent is None else parent.get_trait(SingleBlockImplicitTerminator)
        )
        if trait is None or trait.op_type is not YieldOp:
            raise VerifyException(
                "'irgl.yield' terminates the body of an irgl region op (ForAll, "
                "For, Atomic, Exclusive, Pipe, Iterate), not of "
                f"'{parent.name if parent else 'nothing'}'"
            )


#: The trait of irgl ops whose bodies end with an (implicit) `irgl.yield`.
IMPLICIT_YIELD = SingleBlockImplicitTerminator(YieldOp)


def add_implicit_yield(region: Region) -> None:
    """Give each block of `region` an `irgl.yield` if it has no terminator."""
    for block in region.blocks:
        last = block.last_op
        if last is None or not last.has_trait(
            IsTerminator, value_if_unregistered=False
        ):
            block.add_op(YieldOp())


def yield_only_body(arg_types: Sequence[Attribute] = ()) -> Region:
    """A one-block body holding just an empty `irgl.yield`.

    Constructors use it for default bodies. Inside `with ImplicitBuilder(...)`
    every new op is inserted at the builder's position; the yield is taken
    back out so that it ends up only in the new body.
    """
    terminator = YieldOp()
    if terminator.parent is not None:
        terminator.detach()
    return Region(Block([terminator], arg_types=arg_types))


__all__ = [
    "IMPLICIT_YIELD",
    "CallOp",
    "KernelOp",
    "ReturnOp",
    "YieldOp",
    "add_implicit_yield",
    "yield_only_body",
]
