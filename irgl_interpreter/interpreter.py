"""Build an interpreter for IrGL programs and run a host kernel.

    module = load_program("benchmarks/bfs/bfs.mlir")
    level = np.zeros(graph.num_nodes, dtype=np.int32)
    run = run_host(module, "main", [graph, level, 0], schedule="random:1")

`load_program` parses and verifies exactly as `irgl-opt` does and raises
:class:`ProgramError` with irgl-opt's diagnostic for a bad program; a
program that goes wrong while running raises :class:`InterpretationFailure`
naming the kernel and the operation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    OpImplResult,
    PythonValues,
    ReturnedValues,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Operation, Region, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    DiagnosticException,
    InterpretationError,
    ParseError,
)
from xdsl.utils.scoped_dict import ScopedDict

from irgl_dialect.attributes import GraphType, KernelKind
from irgl_dialect.kernels import KernelOp
from irgl_dialect.syntax import parse_remembered, source_diagnostic
from irgl_interpreter.c_escape import (
    DEFAULT_REGISTRY,
    CEscapeFunctions,
    CImpl,
    CRegistry,
    set_c_registry,
)
from irgl_interpreter.graph import GraphFunctions
from irgl_interpreter.kernels import KernelFunctions
from irgl_interpreter.loops import LoopFunctions
from irgl_interpreter.memory import ArithExtraFunctions, MemoryFunctions, numpy_dtype
from irgl_interpreter.state import (
    Graph,
    IrglRuntimeError,
    IrglState,
    Schedule,
    Stats,
    irgl_state,
    set_irgl_state,
)
from irgl_interpreter.sync import SyncFunctions
from irgl_runner.graphs import as_graph


class ProgramError(Exception):
    """A program that does not parse or verify; the message is irgl-opt's
    diagnostic (the IR with the offending op underlined)."""


class InterpretationFailure(Exception):
    """A program that went wrong while running (see `IrglRuntimeError`)."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.op = op


def context() -> Context:
    """The dialects IrGL programs use (as irgl-opt knows them)."""
    from irgl_dialect.dialect import Irgl

    ctx = Context()
    for dialect in (
        builtin.Builtin,
        arith.Arith,
        memref.MemRef,
        scf.Scf,
        func.Func,
        Irgl,
    ):
        ctx.load_dialect(dialect)
    return ctx


def _diagnostic(error: Exception) -> str:
    """The text irgl-opt prints for a parse or verification error."""
    lines = [str(error).rstrip()]
    lines += [str(note).rstrip() for note in getattr(error, "__notes__", ())]
    return "\n".join(lines)


def parse_program(text: str, name: str = "<program>") -> ModuleOp:
    """Parse and verify IrGL text; ProgramError with irgl-opt's diagnostic."""
    try:
        # SourceParser: an operand defined in its op's own region is a located
        # parse error (xDSL's parser leaves a placeholder that fails later
        # with a bare ValueError).
        module = parse_remembered(context(), text, name)
        module.verify()
    except (DiagnosticException, ParseError) as error:
        if isinstance(error, DiagnosticException):
            error = source_diagnostic(error)  # at its line, as irgl-opt does
        raise ProgramError(_diagnostic(error)) from None
    return module


def load_program(path: str | Path) -> ModuleOp:
    """Parse and verify an IrGL file (see `parse_program`)."""
    path = Path(path)
    return parse_program(path.read_text(), str(path))


_MISSING = object()


def _lookup(scope: ScopedDict[Any, Any], value: SSAValue) -> Any:
    """The value of `value` in `scope`: one lookup a scope, keyed by the
    SSA value's `id` (`IrglInterpreter` keys its scopes so: SSAValue's own
    hash is a Python method, called for every operand of every op run, and
    ScopedDict tests for a key before fetching it)."""
    key = id(value)
    at: ScopedDict[Any, Any] | None = scope
    while at is not None:
        found = at._local_scope.get(key, _MISSING)  # pyright: ignore[reportPrivateUsage]
        if found is not _MISSING:
            return found
        at = at.parent
    raise KeyError(f"No value for key {value}")


class IrglInterpreter(Interpreter):
    """xDSL's interpreter, running op implementations directly: errors of
    the program surface as `IrglRuntimeError` naming the op, instead of each
    enclosing op re-printing the module. Its scopes map an SSA value's `id`
    to its Python value (`get_values` and `set_values` take SSA values)."""

    def get_values(self, values: Iterable[SSAValue]) -> tuple[Any, ...]:
        return tuple([_lookup(self._ctx, value) for value in values])

    def set_values(self, pairs: Iterable[tuple[SSAValue, Any]]) -> None:
        local: dict[Any, Any] = self._ctx._local_scope  # pyright: ignore[reportPrivateUsage]
        for value, python_value in pairs:
            local[id(value)] = python_value

    def _run_op(self, op: Operation, inputs: PythonValues) -> OpImplResult:
        entry = self._impls._impl_dict.get(type(op))  # pyright: ignore[reportPrivateUsage]
        if entry is None:
            raise IrglRuntimeError(
                op, f"'{op.name}' cannot be interpreted: no implementation for it"
            )
        functions, implementation = entry
        try:
            return implementation(functions, self, op, inputs)
        except IrglRuntimeError:
            raise
        except (
            ArithmeticError,
            AssertionError,
            InterpretationError,
            LookupError,
            TypeError,
            ValueError,
        ) as error:
            # a Python error in an op's function (e.g. xDSL's own checks)
            what = f"{type(error).__name__}: {error}".rstrip(": ")
            raise IrglRuntimeError(op, f"'{op.name}' failed: {what}") from error

    def run_ssacfg_region(
        self, region: Region, args: PythonValues, name: str = "unknown"
    ) -> PythonValues:
        """As `Interpreter.run_ssacfg_region`, without its per-op checks; an
        operand is looked up with one hash a scope (`_lookup`)."""
        block = region.blocks.first
        initial = self._ctx
        results: PythonValues = ()
        while block is not None:
            outer = self._ctx
            ctx: ScopedDict[Any, Any] = ScopedDict(outer, name=name)
            self._ctx = ctx
            local: dict[Any, Any] = ctx._local_scope  # pyright: ignore[reportPrivateUsage]
            for arg, value in zip(block.args, args, strict=True):
                local[id(arg)] = value
            op = block.first_op
            block = None
            while op is not None:
                inputs = []
                for v in op._operands:  # pyright: ignore[reportPrivateUsage]
                    found = local.get(id(v), _MISSING)
                    inputs.append(found if found is not _MISSING else _lookup(outer, v))
                result = self._run_op(op, tuple(inputs))
                for res, value in zip(op.results, result.values, strict=True):
                    local[id(res)] = value
                jump = result.terminator_value
                if jump is not None:
                    if isinstance(jump, ReturnedValues):
                        results = jump.values
                    else:
                        block, args = jump
                    break
                op = op.next_op
        self._ctx = initial
        return results


def make_interpreter(
    module: ModuleOp,
    schedule: Schedule | str = "sequential",
    c_impls: Mapping[str, CImpl] | None = None,
) -> IrglInterpreter:
    """An interpreter of `module` with every IrGL construct family registered."""
    interpreter = IrglInterpreter(module, index_bitwidth=64)
    register_irgl_implementations(interpreter)
    if isinstance(schedule, str):
        schedule = Schedule.parse(schedule)
    registry = CRegistry(dict(DEFAULT_REGISTRY.impls))
    if c_impls:
        registry.update(dict(c_impls))
    set_irgl_state(interpreter, IrglState(schedule=schedule))
    set_c_registry(interpreter, registry)
    return interpreter


def register_irgl_implementations(interpreter: Interpreter) -> None:
    """Register xDSL's arith/scf/func/builtin functions and ours on `interpreter`."""
    for functions in (
        ArithFunctions(),
        ScfFunctions(),
        FuncFunctions(),
        BuiltinFunctions(),
    ):
        interpreter.register_implementations(functions)
    for functions in (ArithExtraFunctions(), MemoryFunctions()):
        interpreter.register_implementations(functions, override=True)
    for functions in (
        KernelFunctions(),
        LoopFunctions(),
        SyncFunctions(),
        GraphFunctions(),
        CEscapeFunctions(),
    ):
        interpreter.register_implementations(functions)


@dataclass
class RunResult:
    """What `run_host` returns: the host kernel's results and counters."""

    values: tuple[Any, ...]
    stats: Stats
    seconds: float
    schedule: Schedule
    arrays: list[np.ndarray] = field(default_factory=list[np.ndarray])

    @property
    def edge_visits_per_second(self) -> float:
        return self.stats.edge_visits / self.seconds if self.seconds > 0 else 0.0


def find_host_kernel(module: ModuleOp, name: str) -> KernelOp:
    """The host kernel @name of `module` (InterpretationFailure if none)."""
    kernels = [op for op in module.ops if isinstance(op, KernelOp)]
    for kernel in kernels:
        if kernel.sym_name.data == name:
            if kernel.kernel_kind != KernelKind.HOST:
                raise InterpretationFailure(
                    f"@{name} is a {kernel.kernel_kind.value} kernel; only host "
                    "kernels are entry points"
                )
            return kernel
    hosts = [k.sym_name.data for k in kernels if k.kernel_kind == KernelKind.HOST]
    raise InterpretationFailure(
        f"no host kernel @{name} (host kernels: {', '.join(hosts) or 'none'})"
    )


def _convert_args(kernel: KernelOp, args: Sequence[Any]) -> list[Any]:
    inputs = kernel.function_type.inputs.data
    name = kernel.sym_name.data
    if len(args) != len(inputs):
        raise InterpretationFailure(
            f"@{name} takes {len(inputs)} argument(s), got {len(args)}"
        )
    values: list[Any] = []
    for position, (arg, type_) in enumerate(zip(args, inputs, strict=True)):
        where = f"argument {position} of @{name} ({type_})"
        if isinstance(type_, GraphType):
            if not isinstance(arg, Graph):
                if not all(
                    hasattr(arg, a) for a in ("num_nodes", "row_start", "edge_dst")
                ):
                    try:
                        arg = as_graph(arg)
                    except TypeError as e:
                        raise TypeError(f"{where}: {e}") from None
                arg = Graph.from_csr(arg)
            values.append(arg)
        elif isinstance(type_, MemRefType):
            if not isinstance(arg, np.ndarray):
                raise InterpretationFailure(f"{where}: expected a numpy array")
            want = np.dtype(numpy_dtype(type_.get_element_type()))
            if arg.dtype != want:
                raise InterpretationFailure(
                    f"{where}: expected a {want} array, got {arg.dtype}"
                )
            values.append(arg)
        elif isinstance(type_, builtin.AnyFloat):
            values.append(float(arg))
        else:
            values.append(int(arg))
    return values


def describe_failure(error: IrglRuntimeError) -> str:
    """A one-screen diagnostic: the message, the kernel and the op."""
    op = error.op
    if op is None:
        return f"error: {error.message}"
    kernel = op if isinstance(op, KernelOp) else op.parent_op()
    while kernel is not None and not isinstance(kernel, KernelOp):
        kernel = kernel.parent_op()
    where = f" in kernel @{kernel.sym_name.data}" if kernel is not None else ""
    if error.iteration is not None and f"iteration {error.iteration}" not in str(error):
        where += f", iteration {error.iteration}"
    return f"error{where}: {error.message}\n  at: {_one_line(op)}"


def _one_line(op: Operation) -> str:
    from io import StringIO

    if op.regions:
        return op.name + " { ... }"
    text = StringIO()
    Printer(stream=text).print_op(op)
    first = text.getvalue().strip().splitlines()
    return first[0] if first else op.name


def run_host(
    module: ModuleOp,
    name: str,
    args: Iterable[Any],
    schedule: Schedule | str = "sequential",
    c_impls: Mapping[str, CImpl] | None = None,
    progress: Callable[[Stats], None] | None = None,
) -> RunResult:
    """Run host kernel @name of a verified `module` on `args`: graphs (a
    CSRGraph or `Graph`; a scipy sparse matrix or networkx graph is converted
    by `irgl_runner.graphs.as_graph`, anything else is a TypeError), numpy
    arrays for memrefs (updated in place) and numbers. InterpretationFailure
    if the program goes wrong. `progress` is called with the run's counters
    as it goes (see `IrglState.progress`)."""
    kernel = find_host_kernel(module, name)
    values = _convert_args(kernel, list(args))
    interpreter = make_interpreter(module, schedule, c_impls)
    state = irgl_state(interpreter)
    state.progress = progress
    start = time.perf_counter()
    try:
        results = interpreter.run_ssacfg_region(kernel.body, tuple(values), name)
    except IrglRuntimeError as error:
        raise InterpretationFailure(describe_failure(error), error.op) from None
    except RecursionError:
        raise InterpretationFailure(f"@{name}: nesting too deep to interpret") from None
    seconds = time.perf_counter() - start
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    return RunResult(tuple(results), state.stats, seconds, state.schedule, arrays)
