"""The host ABI table (cuda_emitter/host_abi.py) agrees with the lowered
modules and with the entry points the emitter prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from cuda_emitter.host_abi import (
    AbiKind,
    dump_manifest,
    entry_points,
    load_manifest,
)

ROOT = Path(__file__).resolve().parents[2]


def _lowered(path: Path) -> ModuleOp:
    from xdsl.dialects import get_all_dialects

    from irgl_dialect.dialect import Irgl
    from irgl_dialect.runtime import IrglRuntime
    from lowering.lower_irgl import LowerIrgl

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    ctx.load_dialect(Irgl)
    ctx.load_dialect(IrglRuntime)
    module = Parser(ctx, path.read_text(), str(path)).parse_module()
    LowerIrgl(include_dirs=(str(path.parent),)).apply(ctx, module)
    return module


def test_bfs_entry_point() -> None:
    (entry,) = entry_points(_lowered(ROOT / "benchmarks/bfs/bfs.mlir"))
    assert entry.c_symbol == "irgl_entry_" + entry.name
    assert [p.kind for p in entry.params] == [
        AbiKind.POINTER,
        AbiKind.POINTER,
        AbiKind.INT,
    ]
    assert entry.params[2].mlir_type == "index"
    assert entry.result is None


def test_manifest_round_trip() -> None:
    entries = entry_points(_lowered(ROOT / "benchmarks/pr/pr.mlir"))
    assert load_manifest(dump_manifest(entries)) == entries
    assert entries[0].params[-1].kind is AbiKind.FLOAT


def test_manifest_rejects_other_json() -> None:
    with pytest.raises(ValueError, match="manifest"):
        load_manifest('{"version": 99}')


@pytest.mark.parametrize("app", ["bfs", "cc", "mst", "pr", "dmr"])
def test_printed_entry_points_match(app: str) -> None:
    """The extern "C" signatures in the emitted CUDA use the table's C types."""
    from xdsl.utils.target import Target  # noqa: F401

    from cuda_emitter import get_cuda_target

    module = _lowered(ROOT / f"benchmarks/{app}/{app}.mlir")
    import io

    out = io.StringIO()
    get_cuda_target()().emit(Context(), module, out)
    for entry in entry_points(module):
        match = re.search(
            rf'extern "C" int {entry.c_symbol}\(([^)]*)\)', out.getvalue()
        )
        assert match is not None, entry.c_symbol
        c_types = [p.rsplit(" ", 1)[0] for p in match.group(1).split(", ") if p]
        want = [p.kind.value for p in entry.params]
        if entry.result is not None:
            want.append(entry.result.kind.value + "*")
        assert c_types == want


def test_runner_maps_every_runtime_export() -> None:
    """The runner sets up ctypes for every exported runtime function from the
    runtime-library table (no C type without a ctypes mapping)."""
    from irgl_dialect.runtime_library import HOST_EXPORTS
    from irgl_runner.api import _c_to_ctypes  # pyright: ignore[reportPrivateUsage]

    for export in HOST_EXPORTS.values():
        _c_to_ctypes(export.c_result)
        for param in export.c_params:
            _c_to_ctypes(param)


def test_arguments_convert_alike_on_the_quick_path() -> None:
    """`Program.call`'s conversion (irgl_runner.api._converted) passes a
    DeviceArray of the memref's dtype, a DeviceGraph, an int and a float
    without _convert's checks, and sends everything else through them: the
    values are _convert's, and its errors stay (a bool for an integer, an
    array of another dtype, a graph for a memref)."""
    import numpy as np

    from cuda_emitter.host_abi import AbiValue, EntryPoint
    from irgl_runner.api import DeviceArray, DeviceGraph, _convert, _converted, _params

    entry = EntryPoint(
        "main",
        (
            AbiValue(AbiKind.POINTER, "!irgl.graph"),
            AbiValue(AbiKind.POINTER, "memref<?xi32>"),
            AbiValue(AbiKind.INT, "index"),
            AbiValue(AbiKind.FLOAT, "f32"),
            AbiValue(AbiKind.BOOL, "i1"),
        ),
        None,
    )
    params = _params(entry)
    graph = DeviceGraph.__new__(DeviceGraph)
    graph.ptr = 4096

    def array(dtype: str, ptr: int) -> DeviceArray:
        a = DeviceArray.__new__(DeviceArray)
        a.ptr, a.length, a.dtype, a.device = ptr, 8, np.dtype(dtype), 0
        return a

    cases = [
        (graph, array("int32", 512), 7, 2.5, True),
        (graph, array("int32", 640), np.int64(3), 1, np.bool_(False)),
        (0, array("int32", 768), 0, np.float32(0.5), 0),
    ]
    for args in cases:
        quick = _converted(params, args, [])
        slow = [_convert(p, a, []) for p, a in zip(params, args, strict=True)]
        assert quick == slow
        assert [type(v) for v in quick] == [type(v) for v in slow]
    bad = [
        ((graph, array("int32", 512), True, 1.0, 1), "cannot pass bool"),
        ((graph, array("int64", 512), 1, 1.0, 1), "got a device array of int64"),
        ((graph, graph, 1, 1.0, 1), "got a graph, expected a device array"),
        ((graph, array("int32", 512), 1.5, 1.0, 1), "cannot pass float"),
    ]
    for args, message in bad:
        with pytest.raises(TypeError, match=message):
            _converted(params, args, [])
