"""The host ABI: how a lowered host function crosses into Python (ctypes).

For each public host `func.func @name(args) -> (r)` of a lowered module the
emitted file exports `extern "C" int irgl_entry_name(<params>, <r>* result)`
(docs/lowered-ir.md, "Host ABI"). This module is the one definition of that
mapping from MLIR types to ABI kinds; the emitter prints entry points from it,
and the runner reads a module's entry points (or the JSON manifest the emitter
writes beside a `.cu` file) to call them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

from irgl_dialect.runtime import CellType, GraphHandleType, PipeType, WorklistType

#: Version of the manifest format (bumped on incompatible changes).
MANIFEST_VERSION = 1


class AbiKind(str, Enum):
    """How one value crosses the host ABI: its C type in the entry point."""

    POINTER = "void*"
    """A device pointer or runtime handle (graph, memref, pipe, worklist, cell)."""
    BOOL = "int"
    """An i1, as 0 or 1."""
    INT = "int64_t"
    """Any other integer or index."""
    FLOAT = "double"
    """f32 or f64."""


class AbiTypeError(ValueError):
    """A type that cannot cross the host ABI."""


@dataclass(frozen=True)
class AbiValue:
    """One parameter or the result of an entry point."""

    kind: AbiKind
    mlir_type: str
    """The MLIR type it carries, as printed (e.g. `memref<?xi32>`, `index`)."""


@dataclass(frozen=True)
class EntryPoint:
    """One exported host function: `extern "C" int irgl_entry_<name>(...)`."""

    name: str
    params: tuple[AbiValue, ...]
    result: AbiValue | None

    @property
    def c_symbol(self) -> str:
        return f"irgl_entry_{self.name}"

    def to_json(self) -> dict[str, object]:
        def value(v: AbiValue) -> dict[str, str]:
            return {"kind": v.kind.name, "type": v.mlir_type}

        return {
            "name": self.name,
            "params": [value(p) for p in self.params],
            "result": None if self.result is None else value(self.result),
        }

    @staticmethod
    def from_json(data: dict[str, object]) -> EntryPoint:
        def value(v: object) -> AbiValue:
            assert isinstance(v, dict)
            return AbiValue(AbiKind[str(v["kind"])], str(v["type"]))

        params = data["params"]
        assert isinstance(params, list)
        result = data["result"]
        return EntryPoint(
            name=str(data["name"]),
            params=tuple(value(p) for p in params),
            result=None if result is None else value(result),
        )


def param_kind(type_: Attribute) -> AbiKind:
    """The ABI kind of a host-function parameter of type `type_`."""
    match type_:
        case GraphHandleType() | WorklistType() | CellType() | PipeType():
            return AbiKind.POINTER
        case MemRefType():
            return AbiKind.POINTER
        case IntegerType(width=width) if width.data == 1:
            return AbiKind.BOOL
        case IntegerType() | IndexType():
            return AbiKind.INT
        case Float32Type() | Float64Type():
            return AbiKind.FLOAT
        case _:
            raise AbiTypeError(f"type {type_} cannot cross the host ABI")


def result_kind(type_: Attribute) -> AbiKind:
    """The ABI kind of a host-function result of type `type_` (what the
    entry point's `result` pointer points to)."""
    match type_:
        case MemRefType() | PipeType():
            return AbiKind.POINTER
        case GraphHandleType() | WorklistType() | CellType():
            raise AbiTypeError(f"a result of type {type_} cannot cross the host ABI")
        case _:
            try:
                return param_kind(type_)
            except AbiTypeError:
                raise AbiTypeError(
                    f"a result of type {type_} cannot cross the host ABI"
                ) from None


def is_entry_point(function: func.FuncOp) -> bool:
    """Whether a host `func.func` is exported (public and defined)."""
    if function.is_declaration:
        return False
    return function.sym_visibility is None or function.sym_visibility.data != "private"


def entry_point(function: func.FuncOp) -> EntryPoint:
    """The ABI of one exported host function."""
    params = tuple(
        AbiValue(param_kind(t), str(t)) for t in function.function_type.inputs.data
    )
    outputs = function.function_type.outputs.data
    if len(outputs) > 1:
        raise AbiTypeError(
            f"@{function.sym_name.data} returns {len(outputs)} values; "
            "the host ABI carries at most one"
        )
    result = AbiValue(result_kind(outputs[0]), str(outputs[0])) if outputs else None
    return EntryPoint(function.sym_name.data, params, result)


def entry_points(module: ModuleOp) -> tuple[EntryPoint, ...]:
    """The exported host functions of a lowered module, in order."""
    return tuple(
        entry_point(op)
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and is_entry_point(op)
    )


def manifest_path(cu_path: str | Path) -> Path:
    """Where the manifest of `prog.cu` lies: `prog.abi.json` beside it."""
    path = Path(cu_path)
    return path.with_name(path.stem + ".abi.json")


def dump_manifest(entries: tuple[EntryPoint, ...]) -> str:
    """The JSON manifest text of a module's entry points."""
    return json.dumps(
        {"version": MANIFEST_VERSION, "entry_points": [e.to_json() for e in entries]},
        indent=2,
    )


def load_manifest(text: str) -> tuple[EntryPoint, ...]:
    """Entry points from a manifest's JSON text."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        raise ValueError(
            f"not an IrGL ABI manifest of version {MANIFEST_VERSION}: "
            f"{str(data)[:60]!r}"
        )
    return tuple(EntryPoint.from_json(e) for e in data["entry_points"])
