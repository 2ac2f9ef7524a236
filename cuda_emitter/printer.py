"""Print lowered IrGL IR as one CUDA C++ translation unit.

The input is the lowered IR described in `docs/lowered-ir.md`: `gpu`, `func`,
`scf`, `arith` and `memref` operations, `irgl_rt` handle types and escape-hatch
operations, and `func.call`s to the runtime functions of
`cuda_emitter/runtime/irgl_runtime.cuh`. `CudaPrinter` has one print rule per
operation (`singledispatchmethod`); an operation without a rule is an error that
names it, never a comment.

Naming follows `xdsl/backend/csl/print_csl.py`: every SSA value becomes a C
variable named after its `name_hint` (made a valid, non-reserved C++
identifier and de-duplicated) or `v0`, `v1`, ...; every region opens a nested
scope. `arith.constant` values are printed inline as literals. The results of
`scf.for`, `scf.while` and `scf.if` are variables declared before the construct
and assigned by `scf.yield` / `scf.condition`.
"""

from __future__ import annotations

import math
import re
import struct
import textwrap
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import singledispatchmethod
from typing import NoReturn

from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    Signedness,
    SignednessAttr,
    StringAttr,
    SymbolRefAttr,
    UnrankedMemRefType,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.traits import SymbolTable, is_side_effect_free
from xdsl.utils.base_printer import BasePrinter
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.hints import isa

from cuda_emitter.host_abi import (
    AbiKind,
    AbiTypeError,
    is_entry_point,
    param_kind,
    result_kind,
)
from irgl_dialect.runtime import (
    COHERENT_LOAD_ATTR,
    NOINLINE_ATTR,
    UNROLL_ATTR,
    CBlockOp,
    CDeclOp,
    CellType,
    CExprOp,
    CGlobalOp,
    GraphHandleType,
    GridSizeOp,
    LaunchAttr,
    WorklistType,
)
from irgl_dialect.runtime_library import RUNTIME_FUNCTIONS
from irgl_dialect.runtime_library import c_type as runtime_c_type

# --------------------------------------------------------------------------- #
# Names
# --------------------------------------------------------------------------- #

_RESERVED_NAMES = frozenset(
    # C++20 keywords and alternative tokens
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char
    char8_t char16_t char32_t class compl concept const consteval constexpr
    constinit const_cast continue co_await co_return co_yield decltype default
    delete do double dynamic_cast else enum explicit export extern false final
    float for friend goto if import inline int long module mutable namespace new
    noexcept not not_eq nullptr operator or or_eq override private protected
    public register reinterpret_cast requires restrict return short signed sizeof
    static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void
    volatile wchar_t while xor xor_eq"""
    # names of the C/C++ library and CUDA that a local variable must not shadow
    """ main std irgl NULL INFINITY NAN assert printf memcpy memset malloc free
    abs min max fmin fmax fminf fmaxf size_t ptrdiff_t intptr_t uintptr_t
    int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
    threadIdx blockIdx blockDim gridDim warpSize dim3 atomicAdd atomicSub
    atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd
    atomicOr atomicXor cooperative_groups""".split()
)
"""Identifiers that an emitted variable never uses (a `v_` prefix is added)."""

_RESERVED_PREFIXES = ("irgl", "IRGL", "cuda", "cu_")
"""Identifier prefixes of the runtime and of the CUDA API."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# String and character literals and comments of C text: their words name
# nothing, so they reserve no C name.
_NOT_CODE = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S
)
_C_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

# Opens the program's host code (host functions, entry points), which nvcc's
# device pass skips like the runtime's (`IRGL_HOST_CODE`, irgl_runtime.cuh).
_HOST_ONLY = "#if IRGL_HOST_CODE"


def c_identifier(hint: str | None) -> str | None:
    """Turn a `name_hint` into a C++ identifier that is neither a keyword nor
    reserved (no `__`, no leading underscore); None when nothing usable is left."""
    if hint is None:
        return None
    name = re.sub(r"[^A-Za-z0-9_]", "_", hint)
    name = re.sub(r"_+", "_", name).strip("_")
    if not name:
        return None
    if name[0].isdigit():
        name = "v" + name
    if name in _RESERVED_NAMES or name.startswith(_RESERVED_PREFIXES):
        name = "v_" + name
    return name


@dataclass
class _Scope:
    """The C names visible in one region (and, through `parent`, around it)."""

    parent: _Scope | None
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    taken: set[str] = field(default_factory=set[str])

    def lookup(self, value: SSAValue) -> str | None:
        scope: _Scope | None = self
        while scope is not None:
            if value in scope.names:
                return scope.names[value]
            scope = scope.parent
        return None

    def is_taken(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.taken:
                return True
            scope = scope.parent
        return False


# --------------------------------------------------------------------------- #
# Operation tables
# --------------------------------------------------------------------------- #

_BINARY_OPERATORS: dict[type[Operation], str] = {
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivSIOp: "/",
    arith.RemSIOp: "%",
    arith.AndIOp: "&",
    arith.OrIOp: "|",
    arith.XOrIOp: "^",
    arith.ShRSIOp: ">>",
    arith.AddfOp: "+",
    arith.SubfOp: "-",
    arith.MulfOp: "*",
    arith.DivfOp: "/",
}
"""Operations printed as `lhs <operator> rhs` on the operands' own C type."""

_UNSIGNED_BINARY_OPERATORS: dict[type[Operation], str] = {
    arith.DivUIOp: "/",
    arith.RemUIOp: "%",
    arith.ShRUIOp: ">>",
    arith.ShLIOp: "<<",
}
"""Operations printed on the unsigned type of the operands' width (`shli` too,
since a signed left shift into the sign bit is undefined in C++17)."""

_CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPI_OPERATORS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

_CMPF_PREDICATES = (
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
)

_GPU_ID_VARIABLES: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "threadIdx",
    gpu.BlockIdOp: "blockIdx",
    gpu.BlockDimOp: "blockDim",
    gpu.GridDimOp: "gridDim",
}

_ATOMIC_KINDS: dict[int, tuple[str, str]] = {
    0: ("atomicAdd", "float"),
    1: ("atomicAdd", "integer"),
    2: ("atomicExch", "any"),
    4: ("atomicMax", "signed"),
    5: ("atomicMax", "unsigned"),
    7: ("atomicMin", "signed"),
    8: ("atomicMin", "unsigned"),
    11: ("atomicOr", "integer"),
    12: ("atomicAnd", "integer"),
}
"""`memref.atomic_rmw` kinds (MLIR's `arith::AtomicRMWKind` numbering) → the
CUDA atomic function and the class of element type it accepts."""


def _is_integer_like(type_: Attribute) -> bool:
    """Whether `type_` is an integer type or `index`."""
    return isinstance(type_, IntegerType | IndexType)


def _is_unsigned(type_: Attribute) -> bool:
    """Whether `type_` is an explicitly unsigned integer type (`ui32`)."""
    return isa(type_, IntegerType) and type_.signedness == SignednessAttr(
        Signedness.UNSIGNED
    )


def _to_f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _shortest_f32(value: float) -> str:
    """The shortest decimal text that reads back as the f32 `value`."""
    target = _to_f32(value)
    for digits in range(1, 10):
        text = f"{target:.{digits}g}"
        if _to_f32(float(text)) == target:
            return text
    return f"{target:.9g}"


def _is_removable(op: Operation | Block) -> bool:
    """Whether `op` may be dropped when its results are unused."""
    return isinstance(op, Operation) and (
        is_side_effect_free(op)
        or isinstance(op, (memref.LoadOp, gpu.GlobalIdOp, *_GPU_ID_VARIABLES))
    )


def _live_while_results(loop: scf.WhileOp) -> list[int]:
    """Positions of the `scf.while` results that are used, as a result or as
    an argument of the after block (the others get no C variable, which
    would be set but never used)."""
    after = loop.after_region.block.args
    return [i for i, r in enumerate(loop.res) if r.uses or after[i].uses]


def _kernels(functions: Sequence[gpu.FuncOp | func.FuncOp]) -> list[gpu.FuncOp]:
    """The kernels (`gpu.func ... kernel`) among a module's device functions."""
    return [f for f in functions if isinstance(f, gpu.FuncOp) and f.kernel is not None]


def _func_kind(op: Operation) -> str:
    if isinstance(op, gpu.FuncOp):
        return "gpu.func"
    return op.name


def _symbol_name(op: Operation) -> str | None:
    attr = op.attributes.get("sym_name") or op.properties.get("sym_name")
    return attr.data if isinstance(attr, StringAttr) else None


# --------------------------------------------------------------------------- #
# The printer
# --------------------------------------------------------------------------- #


@dataclass(eq=False, repr=False)
class CudaPrinter(BasePrinter):
    """Prints a lowered `builtin.module` (see `print_module`) as CUDA C++.

    The caller prints the file header and the runtime (`CudaTarget.emit`); this
    printer prints the `irgl_rt.c_global` text, forward declarations, device
    code and host code.
    """

    index_bitwidth: int = field(default=32, kw_only=True)
    """Width of `irgl_index` (must match `IRGL_INDEX_BITS`)."""

    _scope: _Scope = field(default_factory=lambda: _Scope(None), init=False)
    _counter: int = field(default=0, init=False)
    _op_stack: list[Operation] = field(default_factory=list[Operation], init=False)
    _module: ModuleOp | None = field(default=None, init=False)
    _in_device_code: bool = field(default=False, init=False)

    # ------------------------------------------------------------------ #
    # Errors
    # ------------------------------------------------------------------ #

    def fail(self, message: str, op: Operation | None = None) -> NoReturn:
        """Raise a DiagnosticException about `op` (default: the op being printed).

        The message names the op, the enclosing function and the op's source
        location when it has one; the IR is attached with the op underlined.
        """
        if op is None and self._op_stack:
            op = self._op_stack[-1]
        if op is None:
            raise DiagnosticException(f"CUDA emitter: {message}")
        where: list[str] = []
        if isinstance(op, func.FuncOp | gpu.FuncOp):
            where.append(f"{_func_kind(op)} @{_symbol_name(op)}")
        parent = None if where else op.parent_op()
        while parent is not None and not isinstance(parent, ModuleOp | gpu.ModuleOp):
            if (name := _symbol_name(parent)) is not None:
                where.append(f"in {_func_kind(parent)} @{name}")
                break
            parent = parent.parent_op()
        location = str(op.location)
        if location != "loc(unknown)":
            where.append(f"at {location}")
        suffix = f" ({', '.join(where)})" if where else ""
        text = f"CUDA emitter: {message}{suffix}"
        op.emit_error(text, DiagnosticException(text))

    def _unsupported(self, op: Operation, why: str = "") -> NoReturn:
        detail = f": {why}" if why else ""
        self.fail(f"cannot print operation '{op.name}'{detail}", op)

    # ------------------------------------------------------------------ #
    # Scopes and names
    # ------------------------------------------------------------------ #

    @contextmanager
    def _nested_scope(self) -> Generator[_Scope, None, None]:
        scope = _Scope(self._scope)
        self._scope = scope
        try:
            yield scope
        finally:
            assert scope.parent is not None
            self._scope = scope.parent

    def _is_taken(self, name: str) -> bool:
        return name in _RESERVED_NAMES or self._scope.is_taken(name)

    def _reserve(self, name: str) -> None:
        """Keep `name` (from C text or a symbol) out of the emitter's names."""
        self._scope.taken.add(name)

    def _fresh_name(self, base: str | None) -> str:
        if base is None:
            while self._is_taken(f"v{self._counter}"):
                self._counter += 1
            base = f"v{self._counter}"
            self._counter += 1
        name, suffix = base, 1
        while self._is_taken(name):
            name = f"{base}_{suffix}"
            suffix += 1
        self._reserve(name)
        return name

    def declare(self, value: SSAValue, hint: str | None = None) -> str:
        """Give `value` a new C name in the current scope and return it."""
        name = self._fresh_name(c_identifier(hint or value.name_hint))
        self._scope.names[value] = name
        return name

    def bind(self, value: SSAValue, name: str) -> None:
        """Make `value` another SSA name of the existing C variable `name`."""
        self._scope.names[value] = name

    def name_of(self, value: SSAValue) -> str:
        name = self._scope.lookup(value)
        if name is None:
            self.fail(f"value {value.name_hint or ''} is used outside its scope")
        return name

    def expr(self, value: SSAValue, *, typed: bool = False) -> str:
        """The C expression of `value`: a literal for constants, else its name.

        With `typed`, a literal has exactly the C type of the value (needed for
        arguments of overloaded or template functions).
        """
        if isinstance(value, OpResult) and isinstance(value.owner, arith.ConstantOp):
            return self.literal(value.owner.value, value.type, typed=typed)
        return self.name_of(value)

    # ------------------------------------------------------------------ #
    # Types and literals
    # ------------------------------------------------------------------ #

    def c_type(self, type_: Attribute) -> str:
        """The C++ type of an MLIR type (`docs/lowered-ir.md`, Type mapping):
        the runtime library's mapping, plus unsigned integers and the checks
        on integer widths and memref ranks."""
        match type_:
            case IntegerType():
                width = type_.bitwidth
                if width == 1:
                    return "bool"
                if width not in (8, 16, 32, 64):
                    self.fail(f"unsupported type {type_}: no C integer of that width")
                if _is_unsigned(type_):
                    return f"uint{width}_t"
                return f"int{width}_t"
            case MemRefType():
                self._check_memref_type(type_)
                return f"{self.c_type(type_.element_type)}*"
            case UnrankedMemRefType():
                return f"{self.c_type(type_.element_type)}*"
        try:
            return runtime_c_type(type_)
        except ValueError:
            self.fail(f"unsupported type {type_}")

    def _check_memref_type(self, type_: MemRefType) -> None:
        if type_.get_num_dims() > 1:
            self.fail(f"unsupported type {type_}: only rank-0 and rank-1 memrefs")
        if not isinstance(type_.layout, NoneAttr):
            self.fail(f"unsupported type {type_}: memref layouts are not supported")
        if not isinstance(type_.memory_space, NoneAttr):
            self.fail(f"unsupported type {type_}: memref memory spaces")
        if isinstance(type_.element_type, MemRefType):
            self.fail(f"unsupported type {type_}: memref of memrefs")

    def _width(self, type_: Attribute) -> int:
        if isinstance(type_, IndexType):
            return self.index_bitwidth
        if isinstance(type_, IntegerType):
            return type_.bitwidth
        if isinstance(type_, Float32Type):
            return 32
        if isinstance(type_, Float64Type):
            return 64
        self.fail(f"unsupported type {type_}: expected an integer or float")

    def unsigned_c_type(self, type_: Attribute) -> str:
        """The unsigned C type of an integer or index type's width."""
        width = self._width(type_)
        if width == 1:
            return "bool"
        self.c_type(type_)  # checks the width
        return f"uint{width}_t"

    def literal(self, value: Attribute, type_: Attribute, *, typed: bool) -> str:
        """A C literal for an `arith.constant` value of `type_`."""
        if isinstance(value, IntegerAttr) and _is_integer_like(type_):
            return self._int_literal(value.value.data, type_, typed=typed)
        if isinstance(value, FloatAttr) and isinstance(
            type_, Float32Type | Float64Type
        ):
            return self._float_literal(value.value.data, type_, typed=typed)
        self.fail(f"unsupported constant {value} of type {type_}")

    def _int_literal(self, raw: int, type_: Attribute, *, typed: bool) -> str:
        width = self._width(type_)
        if width == 1:
            return "true" if raw & 1 else "false"
        unsigned = _is_unsigned(type_)
        value = raw % (1 << width)
        if not unsigned and value >= 1 << (width - 1):
            value -= 1 << width
        if unsigned:
            text = f"{value}u" if value < 1 << 32 else f"{value}ull"
        elif value == -(1 << 63):
            text = "(-9223372036854775807LL - 1)"
        elif value == -(1 << 31) and width == 32:
            text = "(-2147483647 - 1)"
        else:
            text = str(value) if -(1 << 31) < value < 1 << 31 else f"{value}LL"
            if value < 0:
                text = f"({text})"
        c_type = self.c_type(type_)
        if typed and c_type not in ("int32_t", "uint32_t"):
            return f"({c_type}){text}"
        return text

    def _float_literal(
        self, value: float, type_: Float32Type | Float64Type, *, typed: bool
    ) -> str:
        single = isinstance(type_, Float32Type)
        if math.isnan(value):
            text = "NAN"
        elif math.isinf(value):
            text = "INFINITY" if value > 0 else "(-INFINITY)"
        else:
            text = _shortest_f32(value) if single else repr(value)
            if not re.search(r"[.eEn]", text):
                text += ".0"
            if single:
                text += "f"
            if value < 0 or text.startswith("-"):
                text = f"({text})"
            return text
        if not single and typed:
            return f"(double){text}"
        return text

    # ------------------------------------------------------------------ #
    # Output helpers
    # ------------------------------------------------------------------ #

    def line(self, text: str) -> None:
        """Print `text` on a new line at the current indentation."""
        self.print_string("\n" + text)

    def _define(self, result: SSAValue, expression: str) -> None:
        """Print `T name = expression;` for a new variable.

        An unused value of an operation without side effects is not printed
        (it would only draw an "unused variable" warning from nvcc).
        """
        c_type = self.c_type(result.type)
        if not result.uses and _is_removable(result.owner):
            return
        self.line(f"{c_type} {self.declare(result)} = {expression};")

    def _define_or_discard(self, result: SSAValue, expression: str) -> None:
        """Like `_define`, but print a bare statement when the value is unused."""
        if result.uses:
            self._define(result, expression)
        else:
            self.c_type(result.type)
            self.line(f"{expression};")

    def _assign_all(
        self,
        targets: Sequence[str],
        values: Sequence[SSAValue],
        types: Sequence[Attribute],
    ) -> None:
        """Print `target = value;` for each pair, as one parallel assignment."""
        pending = [
            (target, self.expr(value), type_)
            for target, value, type_ in zip(targets, values, types, strict=True)
        ]
        pending = [(t, v, ty) for t, v, ty in pending if t != v]
        target_set = {t for t, _, _ in pending}
        resolved: list[tuple[str, str]] = []
        for target, value, type_ in pending:
            if value in target_set:
                temporary = self._fresh_name(f"{value}_next")
                self.line(f"{self.c_type(type_)} {temporary} = {value};")
                value = temporary
            resolved.append((target, value))
        for target, value in resolved:
            self.line(f"{target} = {value};")

    def print_op(self, op: Operation) -> None:
        """Print one operation (dispatching on its class)."""
        self._op_stack.append(op)
        try:
            self.print(op)
        finally:
            self._op_stack.pop()

    def _print_block(self, block: Block) -> None:
        for op in block.ops:
            self.print_op(op)

    def _single_block(self, region: Region) -> Block:
        if len(region.blocks) != 1:
            self.fail(
                f"a region with {len(region.blocks)} blocks: only structured "
                "control flow (one block per region) is supported"
            )
        block = region.block
        return block

    def _print_nested_block(self, block: Block) -> None:
        with self._nested_scope(), self.indented():
            self._print_block(block)

    # ------------------------------------------------------------------ #
    # Module structure
    # ------------------------------------------------------------------ #

    def print_module(self, module: ModuleOp) -> None:
        """Print everything after the runtime: globals, declarations, code."""
        self.print_op(module)

    @singledispatchmethod
    def print(self, op: Operation) -> None:
        """Print `op`; operations without a rule are an error."""
        self._unsupported(op, "the CUDA emitter has no rule for it")

    @print.register
    def _(self, op: ModuleOp) -> None:
        if op.parent_op() is not None:
            self._unsupported(op, "nested builtin.module")
        self._module = op
        globals_: list[CGlobalOp] = []
        gpu_modules: list[gpu.ModuleOp] = []
        host_functions: list[func.FuncOp] = []
        for child in op.ops:
            match child:
                case CGlobalOp():
                    globals_.append(child)
                case gpu.ModuleOp():
                    gpu_modules.append(child)
                    globals_.extend(
                        o for o in child.body.block.ops if isinstance(o, CGlobalOp)
                    )
                case func.FuncOp():
                    self._reserve(child.sym_name.data)
                    if not child.is_declaration:
                        host_functions.append(child)
                case _:
                    self._unsupported(child, "not allowed at module scope")
        device_functions = self._collect_device_functions(gpu_modules)

        for global_op in globals_:
            for word in _IDENTIFIER.findall(_NOT_CODE.sub(" ", global_op.text.data)):
                self._reserve(word)

        # C text for both passes, then what only nvcc compiles: device C text,
        # the device functions and kernels (the host compiler's pass,
        # IRGL_HOST_ONLY, refers to the kernels through irgl::KernelRef)
        shared = [g for g in globals_ if not self._is_device_global(g)]
        device_text = [g for g in globals_ if self._is_device_global(g)]
        if shared:
            self.line("")
            self.line("// irgl_rt.c_global")
            for global_op in shared:
                self.print_op(global_op)
        self.line("")
        self.line("#ifdef IRGL_HOST_ONLY")
        self._print_kernel_refs(device_functions)
        self.line("#else")
        if device_text:
            self.line("")
            self.line("// irgl_rt.c_global (device code)")
            for global_op in device_text:
                self.print_op(global_op)
        if device_functions:
            self.line("")
            self.line("// Forward declarations")
            for function in device_functions:
                self.line(self._device_signature(function, with_names=False) + ";")
        for gpu_module in gpu_modules:
            self.print_op(gpu_module)
        self.line("#endif  // IRGL_HOST_ONLY")

        if host_functions:
            self.line("")
            self.line(_HOST_ONLY)
            for function in host_functions:
                self.line(self._host_signature(function, with_names=False) + ";")
            self.line("#endif")

        # the host code, which nvcc's device pass need not parse
        self.line("")
        self.line(_HOST_ONLY)
        for function in host_functions:
            self.print_op(function)
        self._print_preload(device_functions)
        self.line("#endif  // IRGL_HOST_CODE")
        self.line("")

    def _print_preload(
        self, device_functions: Sequence[gpu.FuncOp | func.FuncOp]
    ) -> None:
        """`extern "C" int irgl_preload_kernels()`: loads every kernel of the
        program (CUDA loads a kernel lazily, at its first launch or attribute
        query); `irgl_runner.api.Program` calls it when it loads the library,
        so that a first call does not pay for loading kernels."""
        kernels = _kernels(device_functions)
        self.line("")
        self.line('extern "C" int irgl_preload_kernels() {')
        self.line("  return irgl::guard([] {")
        if kernels:
            self.line("    cudaFuncAttributes attributes;")
        for kernel in kernels:
            name = self._c_symbol(kernel)
            self.line(
                "    IRGL_CHECK(cudaFuncGetAttributes(&attributes, "
                f"irgl::kernel_address({name})));"
            )
            # a cooperative launch's occupancy query, cached on this thread
            info = LaunchAttr.of(kernel)
            if info is not None and info.cooperative:
                self.line(f"    (void)irgl::grid_size({name}, {info.block}, false);")
        self.line("  });")
        self.line("}")

    @staticmethod
    def _is_device_global(op: CGlobalOp) -> bool:
        """Whether C text is device code: marked so, or inside a gpu.module."""
        return op.device is not None or isinstance(op.parent_op(), gpu.ModuleOp)

    def _print_kernel_refs(
        self, device_functions: Sequence[gpu.FuncOp | func.FuncOp]
    ) -> None:
        """The host compiler's view of the kernels: the program's device code
        (a fatbinary linked beside the host code) and an `irgl::KernelRef`
        per kernel, named as the kernel is."""
        self.line("IRGL_PROGRAM_DEVICE_CODE()")
        for kernel in _kernels(device_functions):
            self._op_stack.append(kernel)
            try:
                params = self._parameters(None, kernel.function_type.inputs.data)
                name = self._c_symbol(kernel)
                self.line(f"IRGL_KERNEL_REF({', '.join(filter(None, [name, params]))})")
            finally:
                self._op_stack.pop()

    def _collect_device_functions(
        self, gpu_modules: Sequence[gpu.ModuleOp]
    ) -> list[gpu.FuncOp | func.FuncOp]:
        functions: list[gpu.FuncOp | func.FuncOp] = []
        seen: set[str] = set()
        for gpu_module in gpu_modules:
            for op in gpu_module.body.block.ops:
                match op:
                    case func.FuncOp() if op.is_declaration:
                        self._reserve(op.sym_name.data)
                        continue
                    case gpu.FuncOp() | func.FuncOp():
                        name = self._c_symbol(op)
                        if name in seen:
                            self.fail(f"two device functions are named '{name}'", op)
                        seen.add(name)
                        self._reserve(name)
                        functions.append(op)
                    case CGlobalOp():
                        continue
                    case _:
                        self._unsupported(op, "not allowed in a gpu.module")
        return functions

    def _c_symbol(self, op: Operation, *, prefixed: bool = False) -> str:
        """The symbol name of `op` as a C++ function name (checked); with
        `prefixed` it is only used after `irgl_host_` / `irgl_entry_`."""
        name = _symbol_name(op) or ""
        usable = _C_SYMBOL.fullmatch(name) is not None and "__" not in name
        if not prefixed:
            usable = usable and name not in _RESERVED_NAMES
            usable = usable and not name.startswith(("irgl_host_", "irgl_entry_"))
        if not usable:
            self.fail(f"symbol @{name} is not usable as a C++ function name", op)
        return name

    def _kernel_c_name(
        self, ref: SymbolRefAttr, op: Operation
    ) -> tuple[str, gpu.FuncOp]:
        assert self._module is not None
        kernel = SymbolTable.lookup_symbol(self._module, ref)
        if not isinstance(kernel, gpu.FuncOp) or kernel.kernel is None:
            self.fail(f"{ref} is not a gpu.func kernel", op)
        return kernel.sym_name.data, kernel

    @print.register
    def _(self, op: CGlobalOp) -> None:
        if not isinstance(op.parent_op(), ModuleOp | gpu.ModuleOp):
            self._unsupported(op, "irgl_rt.c_global must be at module scope")
        text = textwrap.dedent(op.text.data).strip("\n")
        if op.device is not None:
            text = "__device__ " + text
        for text_line in text.split("\n"):
            self.print_string("\n" + text_line.rstrip(), indent=0)

    @print.register
    def _(self, op: gpu.ModuleOp) -> None:
        self.line("")
        self.line(f"// gpu.module @{op.sym_name.data}")
        self._in_device_code = True
        try:
            for child in op.body.block.ops:
                if isinstance(child, gpu.FuncOp | func.FuncOp) and (
                    not isinstance(child, func.FuncOp) or not child.is_declaration
                ):
                    self.print_op(child)
        finally:
            self._in_device_code = False

    # ------------------------------------------------------------------ #
    # Functions
    # ------------------------------------------------------------------ #

    def _parameters(self, block: Block | None, types: Sequence[Attribute]) -> str:
        if block is None:
            return ", ".join(self.c_type(t) for t in types)
        return ", ".join(f"{self.c_type(a.type)} {self.declare(a)}" for a in block.args)

    def _return_type(self, function: gpu.FuncOp | func.FuncOp) -> str:
        outputs = function.function_type.outputs.data
        if len(outputs) > 1:
            self.fail("functions with more than one result are not supported", function)
        return self.c_type(outputs[0]) if outputs else "void"

    def _device_signature(
        self, function: gpu.FuncOp | func.FuncOp, *, with_names: bool
    ) -> str:
        self._op_stack.append(function)
        try:
            name = self._c_symbol(function)
            block = self._single_block(function.body) if with_names else None
            params = self._parameters(block, function.function_type.inputs.data)
            if isinstance(function, gpu.FuncOp) and function.kernel is not None:
                return (
                    f"__global__ void{self._launch_bounds(function)} {name}({params})"
                )
            noinline = (
                " IRGL_NOINLINE_BODY" if NOINLINE_ATTR in function.attributes else ""
            )
            return (
                f"__device__{noinline} {self._return_type(function)} {name}({params})"
            )
        finally:
            self._op_stack.pop()

    def _launch_bounds(self, kernel: gpu.FuncOp) -> str:
        """` __launch_bounds__(...)` from the kernel's `#irgl_rt.launch`."""
        launch = LaunchAttr.of(kernel)
        if launch is None or not launch.bounds:
            return ""
        return f" __launch_bounds__({', '.join(str(v) for v in launch.bounds)})"

    def _host_signature(self, function: func.FuncOp, *, with_names: bool) -> str:
        self._op_stack.append(function)
        try:
            name = self._c_symbol(function, prefixed=True)
            block = self._single_block(function.body) if with_names else None
            params = self._parameters(block, function.function_type.inputs.data)
            return f"static {self._return_type(function)} irgl_host_{name}({params})"
        finally:
            self._op_stack.pop()

    def _print_function(
        self, signature: Callable[[], str], function: Operation
    ) -> None:
        """Print a function definition; `signature` names the parameters."""
        body = self._single_block(function.regions[0])
        self._counter = 0
        with self._nested_scope():
            for inner in function.walk():
                if isinstance(inner, CDeclOp):
                    self._reserve(inner.var_name.data)
                elif isinstance(inner, CBlockOp):
                    for word in _IDENTIFIER.findall(inner.text.data):
                        self._reserve(word)
            self.line("")
            self.line(signature() + " {")
            with self.indented():
                self._print_block(body)
            self.line("}")

    @print.register
    def _(self, op: gpu.FuncOp) -> None:
        self._print_function(lambda: self._device_signature(op, with_names=True), op)

    @print.register
    def _(self, op: func.FuncOp) -> None:
        if op.is_declaration:
            return
        if self._in_device_code:
            self._print_function(
                lambda: self._device_signature(op, with_names=True), op
            )
            return
        self._print_function(lambda: self._host_signature(op, with_names=True), op)
        if is_entry_point(op):
            self._print_entry_point(op)

    def _abi_parameter(self, type_: Attribute, name: str) -> tuple[str, str]:
        """The C ABI type of a host-function parameter (from the host ABI
        table, `cuda_emitter/host_abi.py`) and the conversion of the ABI
        parameter `name` to the host function's argument."""
        try:
            kind = param_kind(type_)
        except AbiTypeError as error:
            self.fail(str(error))
        c_type = self.c_type(type_)
        match kind:
            case AbiKind.POINTER if isinstance(
                type_, GraphHandleType | WorklistType | CellType
            ):
                return kind.value, f"*static_cast<{c_type}*>({name})"
            case AbiKind.POINTER:
                return kind.value, f"static_cast<{c_type}>({name})"
            case AbiKind.BOOL:
                return kind.value, f"{name} != 0"
            case AbiKind.INT | AbiKind.FLOAT:
                return kind.value, f"({c_type}){name}"

    def _abi_result(self, type_: Attribute, value: str) -> tuple[str, str]:
        """The C ABI type of a host-function result (from the host ABI table)
        and the conversion of the C++ result `value` to it."""
        try:
            kind = result_kind(type_)
        except AbiTypeError as error:
            self.fail(str(error))
        match kind:
            case AbiKind.BOOL:
                return kind.value, f"{value} ? 1 : 0"
            case AbiKind.INT | AbiKind.FLOAT:
                return kind.value, f"({kind.value}){value}"
            case AbiKind.POINTER:
                return kind.value, f"static_cast<void*>({value})"

    def _print_entry_point(self, function: func.FuncOp) -> None:
        """`extern "C" int irgl_entry_<name>(...)` (docs/lowered-ir.md, Host ABI)."""
        name = self._c_symbol(function, prefixed=True)
        self._op_stack.append(function)
        try:
            with self._nested_scope():
                self._reserve("result")
                params: list[str] = []
                args: list[str] = []
                for arg in function.body.block.args:
                    arg_name = self.declare(arg)
                    abi_type, conversion = self._abi_parameter(arg.type, arg_name)
                    params.append(f"{abi_type} {arg_name}")
                    args.append(conversion)
                call = f"irgl_host_{name}({', '.join(args)})"
                outputs = function.function_type.outputs.data
                if outputs:
                    abi_type, call = self._abi_result(outputs[0], call)
                    params.append(f"{abi_type}* result")
                    call = f"*result = {call}"
        finally:
            self._op_stack.pop()
        self.line("")
        self.line(f'extern "C" int irgl_entry_{name}({", ".join(params)}) {{')
        with self.indented():
            self.line("return irgl::guard([&] {")
            with self.indented():
                self.line(f"{call};")
            self.line("});")
        self.line("}")

    @print.register
    def _(self, op: func.CallOp) -> None:
        if len(op.res) > 1:
            self._unsupported(op, "calls with more than one result")
        callee = SymbolTable.lookup_symbol(op, op.callee)
        name = op.callee.root_reference.data
        if isinstance(callee, func.FuncOp) and callee.is_declaration:
            self._check_runtime_call(op, callee)
        if (
            isinstance(callee, func.FuncOp)
            and not callee.is_declaration
            and isinstance(callee.parent_op(), ModuleOp)
        ):
            name = f"irgl_host_{name}"
        call = f"{name}({', '.join(self.expr(a, typed=True) for a in op.arguments)})"
        if op.res:
            self._define_or_discard(op.res[0], call)
        else:
            self.line(f"{call};")

    def _check_runtime_call(self, op: func.CallOp, callee: func.FuncOp) -> None:
        """A call to an external `irgl_*` function must match the runtime
        library (`irgl_dialect/runtime_library.py`)."""
        name = callee.sym_name.data
        if not name.startswith("irgl_"):
            return
        fn = RUNTIME_FUNCTIONS.get(name)
        if fn is None:
            self.fail(f"@{name} is not a function of the IrGL runtime library", op)
        if callee.function_type != fn.function_type:
            self.fail(
                f"@{name} is declared as {callee.function_type}, but the runtime "
                f"library has {fn.function_type}",
                op,
            )

    def _print_return(self, op: Operation, values: Sequence[SSAValue]) -> None:
        if len(values) > 1:
            self._unsupported(op, "returning more than one value")
        if values:
            self.line(f"return {self.expr(values[0], typed=True)};")
        elif op.next_op is not None or not isinstance(
            op.parent_op(), func.FuncOp | gpu.FuncOp
        ):
            self.line("return;")

    @print.register
    def _(self, op: func.ReturnOp) -> None:
        self._print_return(op, op.arguments)

    @print.register
    def _(self, op: gpu.ReturnOp) -> None:
        self._print_return(op, op.args)

    # ------------------------------------------------------------------ #
    # gpu
    # ------------------------------------------------------------------ #

    def _require_device(self, op: Operation) -> None:
        if not self._in_device_code:
            self._unsupported(op, "only allowed in device code (inside gpu.module)")

    def _require_host(self, op: Operation) -> None:
        if self._in_device_code:
            self._unsupported(op, "only allowed in host code (outside gpu.module)")

    @print.register(gpu.ThreadIdOp)
    @print.register(gpu.BlockIdOp)
    @print.register(gpu.BlockDimOp)
    @print.register(gpu.GridDimOp)
    def _print_gpu_id(
        self, op: gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp
    ) -> None:
        self._require_device(op)
        variable = _GPU_ID_VARIABLES[type(op)]
        self._define(op.result, f"(irgl_index){variable}.{op.dimension.data.value}")

    @print.register
    def _(self, op: gpu.GlobalIdOp) -> None:
        self._require_device(op)
        dim = op.dimension.data.value
        self._define(
            op.result,
            f"(irgl_index)blockIdx.{dim} * (irgl_index)blockDim.{dim} "
            f"+ (irgl_index)threadIdx.{dim}",
        )

    @print.register
    def _(self, op: gpu.BarrierOp) -> None:
        self._require_device(op)
        self.line("__syncthreads();")

    def _is_constant_one(self, value: SSAValue) -> bool:
        owner = value.owner
        return (
            isinstance(owner, arith.ConstantOp)
            and isinstance(owner.value, IntegerAttr)
            and owner.value.value.data == 1
        )

    @print.register
    def _(self, op: gpu.LaunchFuncOp) -> None:
        self._require_host(op)
        if op.asyncDependencies or op.asyncToken is not None or op.asyncObject:
            self._unsupported(op, "asynchronous launches are not supported")
        if op.clusterSizeX or op.clusterSizeY or op.clusterSizeZ:
            self._unsupported(op, "thread-block clusters are not supported")
        if op.dynamicSharedMemorySize is not None:
            self._unsupported(op, "dynamic shared memory is not supported")
        for value in (op.gridSizeY, op.gridSizeZ, op.blockSizeY, op.blockSizeZ):
            if not self._is_constant_one(value):
                self._unsupported(
                    op, "only 1-D launches: the y and z sizes must be constant 1"
                )
        name, kernel = self._kernel_c_name(op.kernel, op)
        info = LaunchAttr.of(kernel)
        cooperative = info is not None and info.cooperative
        launch = "irgl::launch_cooperative" if cooperative else "irgl::launch"
        args = [name, self.expr(op.gridSizeX), self.expr(op.blockSizeX)]
        args += [self.expr(a, typed=True) for a in op.kernelOperands]
        self.line(f"{launch}({', '.join(args)});")

    @print.register
    def _(self, op: GridSizeOp) -> None:
        self._require_host(op)
        name, _ = self._kernel_c_name(op.kernel, op)
        resident = "true" if op.resident is not None else "false"
        self._define(
            op.result, f"irgl::grid_size({name}, {self.expr(op.block)}, {resident})"
        )

    # ------------------------------------------------------------------ #
    # scf
    # ------------------------------------------------------------------ #

    def _declare_results(
        self,
        results: Sequence[SSAValue],
        inits: Sequence[SSAValue] | None = None,
        hints: Sequence[SSAValue] = (),
    ) -> list[str]:
        """Declare one variable per result, initialised from `inits` if given.

        A result takes the name hint of `hints[i]` (the matching block
        argument) when it has none or shares it with the other results
        (`%r:2 = ...`)."""
        names: list[str] = []
        shared = len({r.name_hint for r in results}) < len(results)
        for index, result in enumerate(results):
            hint = result.name_hint
            if (hint is None or shared) and index < len(hints):
                hint = hints[index].name_hint or hint
            name = self.declare(result, hint)
            if inits is None:
                self.line(f"{self.c_type(result.type)} {name};")
            else:
                self.line(
                    f"{self.c_type(result.type)} {name} = {self.expr(inits[index])};"
                )
            names.append(name)
        return names

    @print.register
    def _(self, op: scf.ForOp) -> None:
        body = self._single_block(op.body)
        induction, *carried = body.args
        names = self._declare_results(op.res, op.iter_args, carried)
        with self._nested_scope():
            for arg, name in zip(carried, names, strict=True):
                self.bind(arg, name)
            i = self.declare(induction)
            unroll = op.attributes.get(UNROLL_ATTR)
            if isinstance(unroll, IntegerAttr):
                self.line(f"#pragma unroll {unroll.value.data}")
            self.line(
                f"for ({self.c_type(induction.type)} {i} = {self.expr(op.lb)}; "
                f"{i} < {self.expr(op.ub)}; {i} += {self.expr(op.step)}) {{"
            )
            with self.indented():
                self._print_block(body)
            self.line("}")

    @print.register
    def _(self, op: scf.IfOp) -> None:
        self._declare_results(op.output)
        then_block = self._single_block(op.true_region)
        self.line(f"if ({self.expr(op.cond)}) {{")
        self._print_nested_block(then_block)
        if op.false_region.blocks:
            else_block = self._single_block(op.false_region)
            only_yield = len(else_block.ops) == 1 and isinstance(
                else_block.first_op, scf.YieldOp
            )
            if op.output or not only_yield:
                self.line("} else {")
                self._print_nested_block(else_block)
        self.line("}")

    @print.register
    def _(self, op: scf.WhileOp) -> None:
        before = self._single_block(op.before_region)
        after = self._single_block(op.after_region)
        carried = [self.declare(arg) for arg in before.args]
        for name, arg, init in zip(carried, before.args, op.arguments, strict=True):
            self.line(f"{self.c_type(arg.type)} {name} = {self.expr(init)};")
        live = _live_while_results(op)
        results = self._declare_results(
            [op.res[i] for i in live], hints=[after.args[i] for i in live]
        )
        self.line("while (true) {")
        # before and after share one C block, hence one scope
        with self._nested_scope(), self.indented():
            self._print_block(before)
            for i, name in zip(live, results, strict=True):
                self.bind(after.args[i], name)
            self._print_block(after)
        self.line("}")

    @print.register
    def _(self, op: scf.ConditionOp) -> None:
        loop = op.parent_op()
        assert isinstance(loop, scf.WhileOp)
        live = _live_while_results(loop)
        self._assign_all(
            [self.name_of(loop.res[i]) for i in live],
            [op.args[i] for i in live],
            [loop.res[i].type for i in live],
        )
        self.line(f"if (!{self.expr(op.condition)}) break;")

    @print.register
    def _(self, op: scf.YieldOp) -> None:
        parent = op.parent_op()
        match parent:
            case scf.ForOp() | scf.IfOp():
                targets: Sequence[SSAValue] = parent.results
            case scf.WhileOp():
                targets = parent.before_region.block.args
            case _:
                self._unsupported(op, f"scf.yield in {parent and parent.name}")
        self._assign_all(
            [self.name_of(t) for t in targets], op.arguments, [t.type for t in targets]
        )

    # ------------------------------------------------------------------ #
    # arith
    # ------------------------------------------------------------------ #

    @print.register
    def _(self, op: arith.ConstantOp) -> None:
        # printed inline at each use; check now that it can be
        self.literal(op.value, op.result.type, typed=True)

    @print.register(arith.AddiOp)
    @print.register(arith.SubiOp)
    @print.register(arith.MuliOp)
    @print.register(arith.DivSIOp)
    @print.register(arith.RemSIOp)
    @print.register(arith.AndIOp)
    @print.register(arith.OrIOp)
    @print.register(arith.XOrIOp)
    @print.register(arith.ShRSIOp)
    @print.register(arith.AddfOp)
    @print.register(arith.SubfOp)
    @print.register(arith.MulfOp)
    @print.register(arith.DivfOp)
    def _print_binary(self, op: Operation) -> None:
        lhs, rhs = (self.expr(v) for v in op.operands)
        self._define(op.results[0], f"{lhs} {_BINARY_OPERATORS[type(op)]} {rhs}")

    @print.register(arith.DivUIOp)
    @print.register(arith.RemUIOp)
    @print.register(arith.ShRUIOp)
    @print.register(arith.ShLIOp)
    def _print_unsigned_binary(self, op: Operation) -> None:
        result = op.results[0]
        unsigned = self.unsigned_c_type(result.type)
        lhs, rhs = (self.expr(v) for v in op.operands)
        operator = _UNSIGNED_BINARY_OPERATORS[type(op)]
        expression = f"({unsigned}){lhs} {operator} ({unsigned}){rhs}"
        self._define(result, f"({self.c_type(result.type)})({expression})")

    @print.register
    def _(self, op: arith.CeilDivSIOp) -> None:
        a, b = self.expr(op.lhs), self.expr(op.rhs)
        self._define(
            op.result, f"{a} / {b} + ({a} % {b} != 0 && ({a} < 0) == ({b} < 0))"
        )

    @print.register
    def _(self, op: arith.CeilDivUIOp) -> None:
        unsigned = self.unsigned_c_type(op.result.type)
        a, b = f"({unsigned}){self.expr(op.lhs)}", f"({unsigned}){self.expr(op.rhs)}"
        self._define(
            op.result,
            f"({self.c_type(op.result.type)})({a} / {b} + ({a} % {b} != 0))",
        )

    @print.register
    def _(self, op: arith.FloorDivSIOp) -> None:
        a, b = self.expr(op.lhs), self.expr(op.rhs)
        self._define(
            op.result, f"{a} / {b} - ({a} % {b} != 0 && ({a} < 0) != ({b} < 0))"
        )

    @print.register(arith.MaxSIOp)
    @print.register(arith.MinSIOp)
    @print.register(arith.MaxUIOp)
    @print.register(arith.MinUIOp)
    def _print_integer_min_max(
        self, op: arith.MaxSIOp | arith.MinSIOp | arith.MaxUIOp | arith.MinUIOp
    ) -> None:
        a, b = self.expr(op.lhs), self.expr(op.rhs)
        operator = ">" if isinstance(op, arith.MaxSIOp | arith.MaxUIOp) else "<"
        if isinstance(op, arith.MaxUIOp | arith.MinUIOp):
            unsigned = self.unsigned_c_type(op.result.type)
            condition = f"({unsigned}){a} {operator} ({unsigned}){b}"
        else:
            condition = f"{a} {operator} {b}"
        self._define(op.result, f"{condition} ? {a} : {b}")

    @print.register(arith.MaximumfOp)
    @print.register(arith.MinimumfOp)
    @print.register(arith.MaxnumfOp)
    @print.register(arith.MinnumfOp)
    def _print_float_min_max(
        self,
        op: arith.MaximumfOp | arith.MinimumfOp | arith.MaxnumfOp | arith.MinnumfOp,
    ) -> None:
        # fmax/fmin: NaN operands are not propagated (exact for maxnumf/minnumf)
        function = (
            "fmax" if isinstance(op, arith.MaximumfOp | arith.MaxnumfOp) else "fmin"
        )
        if isinstance(op.result.type, Float32Type):
            function += "f"
        self._define(op.result, f"{function}({self.expr(op.lhs)}, {self.expr(op.rhs)})")

    @print.register
    def _(self, op: arith.NegfOp) -> None:
        self._define(op.result, f"-{self.expr(op.operand)}")

    @print.register
    def _(self, op: arith.CmpiOp) -> None:
        predicate = _CMPI_PREDICATES[op.predicate.value.data]
        a, b = self.expr(op.lhs), self.expr(op.rhs)
        if predicate.startswith("u"):
            unsigned = self.unsigned_c_type(op.lhs.type)
            a, b = f"({unsigned}){a}", f"({unsigned}){b}"
        operator = _CMPI_OPERATORS[predicate.removeprefix("s").removeprefix("u")]
        self._define(op.result, f"{a} {operator} {b}")

    @print.register
    def _(self, op: arith.CmpfOp) -> None:
        predicate = _CMPF_PREDICATES[op.predicate.value.data]
        a, b = self.expr(op.lhs), self.expr(op.rhs)
        expression = {
            "false": "false",
            "true": "true",
            "oeq": f"{a} == {b}",
            "ogt": f"{a} > {b}",
            "oge": f"{a} >= {b}",
            "olt": f"{a} < {b}",
            "ole": f"{a} <= {b}",
            "one": f"({a} < {b} || {a} > {b})",
            "ord": f"({a} == {a} && {b} == {b})",
            "ueq": f"!({a} < {b} || {a} > {b})",
            "ugt": f"!({a} <= {b})",
            "uge": f"!({a} < {b})",
            "ult": f"!({a} >= {b})",
            "ule": f"!({a} > {b})",
            "une": f"{a} != {b}",
            "uno": f"({a} != {a} || {b} != {b})",
        }[predicate]
        self._define(op.result, expression)

    @print.register
    def _(self, op: arith.SelectOp) -> None:
        self._define(
            op.result,
            f"{self.expr(op.cond)} ? {self.expr(op.lhs)} : {self.expr(op.rhs)}",
        )

    def _cast(self, op: Operation, expression: str) -> None:
        result = op.results[0]
        self._define(result, f"({self.c_type(result.type)}){expression}")

    def _is_i1(self, type_: Attribute) -> bool:
        return isinstance(type_, IntegerType) and type_.bitwidth == 1

    @print.register(arith.IndexCastOp)
    @print.register(arith.SIToFPOp)
    @print.register(arith.FPToSIOp)
    @print.register(arith.ExtFOp)
    @print.register(arith.TruncFOp)
    @print.register(arith.ExtSIOp)
    def _print_signed_cast(self, op: Operation) -> None:
        source = op.operands[0]
        if self._is_i1(source.type) and not self._is_i1(op.results[0].type):
            # a signed i1 is 0 or -1
            self._cast(op, f"({self.expr(source)} ? -1 : 0)")
            return
        self._cast(op, self.expr(source))

    @print.register(arith.ExtUIOp)
    @print.register(arith.UIToFPOp)
    def _print_unsigned_extension(self, op: arith.ExtUIOp | arith.UIToFPOp) -> None:
        source = op.input
        unsigned = self.unsigned_c_type(source.type)
        self._cast(op, f"({unsigned}){self.expr(source)}")

    @print.register
    def _(self, op: arith.FPToUIOp) -> None:
        unsigned = self.unsigned_c_type(op.result.type)
        self._cast(op, f"({unsigned}){self.expr(op.input)}")

    @print.register
    def _(self, op: arith.TruncIOp) -> None:
        if self._is_i1(op.result.type):
            self._define(op.result, f"({self.expr(op.input)} & 1) != 0")
            return
        self._cast(op, self.expr(op.input))

    @print.register
    def _(self, op: arith.BitcastOp) -> None:
        source, result = op.input, op.result
        source_float = isinstance(source.type, Float32Type | Float64Type)
        result_float = isinstance(result.type, Float32Type | Float64Type)
        if self._width(source.type) != self._width(result.type):
            self._unsupported(op, "bitcast between types of different widths")
        if source_float == result_float:
            self._cast(op, self.expr(source))
            return
        owner = source.owner
        if isinstance(owner, arith.ConstantOp):
            # fold the constant: reinterpret its bytes in Python
            formats = {32: ("<i", "<f"), 64: ("<q", "<d")}[self._width(source.type)]
            attr = owner.value
            assert isinstance(attr, IntegerAttr | FloatAttr)
            number = attr.value.data
            if not source_float:
                width = self._width(source.type)
                number = int(number) % (1 << width)
                if number >= 1 << (width - 1):
                    number -= 1 << width
            packed = struct.pack(formats[source_float], number)
            (reinterpreted,) = struct.unpack(formats[result_float], packed)
            literal_attr = (
                FloatAttr(reinterpreted, result.type)  # type: ignore[arg-type]
                if result_float
                else IntegerAttr(reinterpreted, result.type)  # type: ignore[arg-type]
            )
            self._define(result, self.literal(literal_attr, result.type, typed=True))
            return
        name = self.declare(result)
        self.line(f"{self.c_type(result.type)} {name};")
        self.line(f"memcpy(&{name}, &{self.expr(source)}, sizeof({name}));")

    # ------------------------------------------------------------------ #
    # memref
    # ------------------------------------------------------------------ #

    def _element(
        self, op: Operation, ref: SSAValue, indices: Sequence[SSAValue]
    ) -> str:
        type_ = ref.type
        assert isa(type_, MemRefType)
        self._check_memref_type(type_)
        if type_.get_num_dims() == 0:
            return f"{self.expr(ref)}[0]"
        if len(indices) != 1:
            self._unsupported(op, "expected one index")
        return f"{self.expr(ref)}[{self.expr(indices[0])}]"

    @print.register
    def _(self, op: memref.LoadOp) -> None:
        element = self._element(op, op.memref, op.indices)
        if COHERENT_LOAD_ATTR in op.attributes:  # where atomics update it
            element = f"__ldcg(&{element})"
        self._define(op.res, element)

    @print.register
    def _(self, op: memref.StoreOp) -> None:
        target = self._element(op, op.memref, op.indices)
        self.line(f"{target} = {self.expr(op.value)};")

    @print.register
    def _(self, op: memref.CastOp) -> None:
        """A shape cast of one element type (`memref<8xi32>` to `memref<?xi32>`,
        or through `memref<*xi32>`, made for runtime calls): the same pointer."""
        source, dest = op.source.type, op.dest.type
        if not (
            isinstance(source, MemRefType | UnrankedMemRefType)
            and isinstance(dest, MemRefType | UnrankedMemRefType)
            and source.element_type == dest.element_type
        ):
            self._unsupported(op, "only casts between memrefs of one element type")
        self._define(op.dest, self.expr(op.source))

    @print.register
    def _(self, op: memref.AllocaOp) -> None:
        type_ = op.memref.type
        assert isa(type_, MemRefType)
        self._check_memref_type(type_)
        shape = type_.get_shape()
        if DYNAMIC_INDEX in shape:
            self._unsupported(op, "dynamically sized allocas are not supported")
        size = shape[0] if shape else 1
        name = self.declare(op.memref)
        self.line(f"{self.c_type(type_.element_type)} {name}[{size}];")

    @print.register
    def _(self, op: memref.AllocOp) -> None:
        self._require_host(op)
        type_ = op.memref.type
        assert isa(type_, MemRefType)
        element = self.c_type(type_.element_type)
        self._check_memref_type(type_)
        shape = type_.get_shape()
        if not shape:
            size = "1"
        elif shape[0] == DYNAMIC_INDEX:
            size = self.expr(op.dynamic_sizes[0])
        else:
            size = str(shape[0])
        self._define(op.memref, f"irgl_alloc<{element}>({size})")

    @print.register
    def _(self, op: memref.DeallocOp) -> None:
        self._require_host(op)
        self.line(f"irgl_free({self.expr(op.memref)});")

    def _atomic_type(self, op: memref.AtomicRMWOp) -> tuple[str, str]:
        """The CUDA atomic function and the C type it operates on."""
        kind = op.kind.value.data
        if kind not in _ATOMIC_KINDS:
            self._unsupported(op, f"atomic kind {kind}")
        function, accepts = _ATOMIC_KINDS[kind]
        type_ = op.result.type
        is_float = isinstance(type_, Float32Type | Float64Type)
        if (accepts == "float") != is_float and accepts != "any":
            self._unsupported(op, f"atomic kind {kind} on {type_}")
        if is_float:
            if isinstance(type_, Float64Type) and function == "atomicExch":
                self._unsupported(op, "atomicExch on f64")
            return function, self.c_type(type_)
        width = self._width(type_)
        if width == 32:
            return function, "unsigned int" if accepts == "unsigned" else "int"
        if width == 64:
            return (
                function,
                "long long" if accepts == "signed" else "unsigned long long",
            )
        self._unsupported(op, f"atomics on {type_}")

    @print.register
    def _(self, op: memref.AtomicRMWOp) -> None:
        self._require_device(op)
        function, atomic_type = self._atomic_type(op)
        address = "&" + self._element(op, op.memref, op.indices)
        value = self.expr(op.value)
        c_type = self.c_type(op.result.type)
        natural = {
            "int32_t": "int",
            "irgl_index": "int" if self.index_bitwidth == 32 else "",
        }
        if natural.get(c_type, c_type) == atomic_type:
            call = f"{function}({address}, {value})"
        else:
            call = f"{function}(({atomic_type}*){address}, ({atomic_type}){value})"
            if op.result.uses:
                call = f"({c_type}){call}"
        self._define_or_discard(op.result, call)

    # ------------------------------------------------------------------ #
    # irgl_rt: the C escape hatch
    # ------------------------------------------------------------------ #

    def _substitute(self, text: str, operands: Sequence[SSAValue]) -> str:
        def replace(match: re.Match[str]) -> str:
            index = int(match.group(1))
            if index >= len(operands):
                self.fail(f"${index} names no operand")
            return self.expr(operands[index], typed=True)

        return re.sub(r"\$(\d+)", replace, text)

    @print.register
    def _(self, op: CBlockOp) -> None:
        text = textwrap.dedent(self._substitute(op.text.data, op.args)).strip("\n")
        for text_line in text.split("\n"):
            self.line(text_line.rstrip())

    @print.register
    def _(self, op: CExprOp) -> None:
        text = " ".join(self._substitute(op.text.data, op.args).split())
        self._define_or_discard(op.result, text)

    @print.register
    def _(self, op: CDeclOp) -> None:
        init = f" = {op.init.data}" if op.init is not None else ""
        self.line(f"{op.c_type.data} {op.var_name.data}{init};")
