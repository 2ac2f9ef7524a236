"""CUDA arrays in and out without copies (DLPack, ``__cuda_array_interface__``).

The pure-Python parts run everywhere: the interface dict, the DLPack capsule
layout (read back with ctypes, and checked against numpy's own capsules), the
validation of foreign arrays, and ``Program.call`` against a host-only C mock
of the runtime, where "device" memory is host memory so a fake producer can
expose a numpy buffer. The tests marked ``gpu`` use CuPy and PyTorch.
"""

from __future__ import annotations

import ctypes
import gc
import shutil
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cuda_emitter.host_abi import AbiKind, AbiValue, EntryPoint, dump_manifest
from cuda_emitter.host_abi import manifest_path as abi_manifest_path
from irgl_runner import api
from irgl_runner.api import Program
from irgl_runner.array_interop import (
    KDL_CPU,
    KDL_CUDA,
    DLManagedTensor,
    ForeignArray,
    check_memref,
    cuda_array_interface,
    foreign_array,
    live_exports,
    memref_shape,
    read_dlpack,
    to_dlpack,
)

REPO = Path(__file__).resolve().parents[2]
INF = 1073741823

MOCK = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
static const char *err = "no error";
void *irgl_graph_create(int64_t n, int64_t m, const int64_t *rs, const int64_t *d,
                        const int32_t *w) {
  (void)m; (void)rs; (void)d; (void)w; int64_t *g = malloc(8); *g = n; return g;
}
void irgl_graph_destroy(void *p) { free(p); }
void *irgl_device_alloc(int64_t bytes) { return malloc(bytes); }
void irgl_device_free(void *p) { free(p); }
int irgl_copy_to_device(void *d, const void *s, int64_t b) {
  memcpy(d, s, b); return 0;
}
int irgl_copy_to_host(void *d, const void *s, int64_t b) { memcpy(d, s, b); return 0; }
int irgl_device_synchronize(void) { return 0; }
const char *irgl_device_name(void) { return "Mock Device"; }
int irgl_device_memory(long long *out) { out[0] = 1000; out[1] = 80000; return 0; }
int irgl_warm_up(void) { return 0; }
const char *irgl_last_error(void) { return err; }
/* @fill(%a: memref<?xi32>, %n: index, %v: i32) */
int irgl_entry_fill(void *a, int64_t n, int64_t v) {
  for (int64_t i = 0; i < n; i++) ((int32_t *)a)[i] = (int32_t)v;
  return 0;
}
/* @sum(%a: memref<?xf64>, %n: index) -> f64 */
int irgl_entry_sum(void *a, int64_t n, double *r) {
  double s = 0; for (int64_t i = 0; i < n; i++) s += ((double *)a)[i];
  *r = s; return 0;
}
/* @nodes(%g: !irgl.graph) -> index */
int irgl_entry_nodes(void *g, int64_t *r) { *r = *(int64_t *)g; return 0; }
/* @four(%a: memref<4xi32>) */
int irgl_entry_four(void *a) { ((int32_t *)a)[3] = 4; return 0; }
"""


def _value(t: str) -> AbiValue:
    kind = {"index": AbiKind.INT, "i32": AbiKind.INT, "f64": AbiKind.FLOAT}
    return AbiValue(kind.get(t, AbiKind.POINTER), t)


def _entry(name: str, params: str, result: str | None = None) -> EntryPoint:
    return EntryPoint(
        name,
        tuple(_value(t) for t in params.split()),
        None if result is None else _value(result),
    )


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Program:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the mock runtime")
    d = tmp_path_factory.mktemp("interop")
    (d / "mock.c").write_text(MOCK)
    so = d / "libmock.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-o", str(so), str(d / "mock.c")], check=True
    )
    abi = (
        _entry("fill", "memref<?xi32> index i32"),
        _entry("sum", "memref<?xf64> index", "f64"),
        _entry("nodes", "!irgl.graph", "index"),
        _entry("four", "memref<4xi32>"),
    )
    abi_manifest_path(so).write_text(dump_manifest(abi))
    return Program(so)


class FakeCAI:
    """A CUDA-array-interface producer over a numpy buffer (for the mock,
    whose device memory is host memory)."""

    def __init__(self, arr: np.ndarray, **override: Any) -> None:
        self.arr = arr
        self.iface: dict[str, Any] = {
            "shape": arr.shape,
            "typestr": arr.dtype.str,
            "data": (arr.ctypes.data, False),
            "version": 3,
            "strides": None if arr.flags.c_contiguous else arr.strides,
            "stream": None,
        }
        self.iface.update(override)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self.iface


class FakeDLPack:
    """A DLPack producer claiming CUDA device ``device`` over a numpy buffer."""

    def __init__(self, arr: np.ndarray, device: tuple[int, int] = (KDL_CUDA, 0)):
        self.arr, self.device, self.streams = arr, device, []

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, *, stream: int | None = None) -> object:
        self.streams.append(stream)
        return to_dlpack(
            self.arr, self.arr.ctypes.data, self.arr.size, self.arr.dtype, 0
        )


# ------------------------------------------------------------------- out


def test_cuda_array_interface_dict() -> None:
    cai = cuda_array_interface(0xABC000, 7, np.dtype(np.int32))
    assert cai == {
        "shape": (7,),
        "typestr": np.dtype(np.int32).str,
        "data": (0xABC000, False),
        "version": 3,
        "strides": None,
        "stream": 1,
    }
    assert np.dtype(cuda_array_interface(1, 1, np.dtype("f8"))["typestr"]) == np.float64


@pytest.mark.parametrize(
    "dtype", ["int8", "int32", "int64", "uint16", "float32", "float64", "bool"]
)
def test_dlpack_capsule_layout(dtype: str) -> None:
    owner = np.zeros(1)
    capsule = to_dlpack(owner, 0x7F0000001000, 11, np.dtype(dtype), 3)
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    assert name(capsule) == b"dltensor"
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )
    t = DLManagedTensor.from_address(get(capsule, b"dltensor")).dl_tensor
    assert (t.data, t.ndim, t.byte_offset) == (0x7F0000001000, 1, 0)
    assert (t.device.device_type, t.device.device_id) == (KDL_CUDA, 3)
    assert (t.shape[0], t.strides[0]) == (11, 1)
    code = {"i": 0, "u": 1, "f": 2, "b": 6}[np.dtype(dtype).kind]
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (
        code,
        8 * np.dtype(dtype).itemsize,
        1,
    )
    view = read_dlpack(capsule)
    assert (view.ptr, view.shape, view.dtype, view.device) == (
        0x7F0000001000,
        (11,),
        np.dtype(dtype),
        3,
    )
    assert view.strides == (np.dtype(dtype).itemsize,) and view.c_contiguous


def test_unconsumed_capsule_releases_its_owner() -> None:
    class Owner:
        pass

    owner = Owner()
    alive = weakref.ref(owner)
    before = live_exports()
    capsule = to_dlpack(owner, 0x1000, 4, np.dtype(np.int32), 0)
    del owner
    gc.collect()
    assert alive() is not None and live_exports() == before + 1  # held by the export
    del capsule  # never consumed: its destructor calls the deleter
    gc.collect()
    assert alive() is None and live_exports() == before


def test_consumed_capsule_is_released_by_the_deleter_once() -> None:
    """A consumer renames the capsule "used_dltensor" and calls the deleter
    when done; the capsule's destructor must then leave it alone."""
    before = live_exports()
    capsule = to_dlpack(object(), 0x1000, 4, np.dtype(np.int32), 0)
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )
    set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_SetName", ctypes.pythonapi)
    )
    address = get(capsule, b"dltensor")
    used = b"used_dltensor"
    assert set_name(capsule, used) == 0
    managed = DLManagedTensor.from_address(address)
    managed.deleter(ctypes.cast(address, ctypes.POINTER(DLManagedTensor)))
    assert live_exports() == before
    del capsule
    gc.collect()
    assert live_exports() == before
    with pytest.raises(TypeError, match="capsule named b'used_dltensor'"):
        capsule2 = to_dlpack(object(), 0x1000, 1, np.dtype(np.int32), 0)
        set_name(capsule2, used)
        read_dlpack(capsule2)


def test_read_dlpack_matches_numpy_capsules() -> None:
    """numpy is a real DLPack producer: reading its capsules checks the
    struct layout (including strides and byte offsets of views)."""
    base = np.arange(24, dtype=np.int16).reshape(4, 6)
    for arr in (base, base[1:, ::2], np.arange(5.0)):
        view = read_dlpack(arr.__dlpack__())
        assert view.ptr == arr.ctypes.data
        assert view.shape == arr.shape and view.dtype == arr.dtype
        assert view.device is None  # CPU
        if view.strides is not None:  # None: C order
            assert view.strides == arr.strides
        assert view.c_contiguous == arr.flags.c_contiguous


def test_read_dlpack_rejects_non_capsules() -> None:
    with pytest.raises(TypeError, match="not an unused 'dltensor' capsule"):
        read_dlpack(object())


# -------------------------------------------------------------------- in


def test_memref_shape() -> None:
    assert memref_shape("memref<?xi32>") == (None,)
    assert memref_shape("memref<4x?xf32>") == (4, None)
    assert memref_shape("memref<i64>") == ()
    assert memref_shape("memref<?xi32, strided<[1]>>") == (None,)
    assert memref_shape("!irgl.graph") is None


def test_foreign_array_from_cai() -> None:
    arr = np.arange(6, dtype=np.int32)
    fa = foreign_array(FakeCAI(arr, stream=5), "x")
    assert fa is not None
    assert (fa.ptr, fa.shape, fa.dtype, fa.stream) == (
        arr.ctypes.data,
        (6,),
        np.dtype(np.int32),
        5,
    )
    assert fa.keepalive and fa.c_contiguous
    assert foreign_array(object(), "x") is None


def test_foreign_array_from_dlpack_asks_for_our_stream() -> None:
    arr = np.arange(3, dtype=np.float64)
    producer = FakeDLPack(arr, (KDL_CUDA, 2))
    fa = foreign_array(producer, "x")
    assert fa is not None and fa.ptr == arr.ctypes.data and fa.device == 2
    assert producer.streams == [1]  # the legacy default stream the runtime uses
    assert fa.keepalive[0] is producer


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (np.zeros(3, np.int32), "in host memory"),
        (FakeDLPack(np.zeros(3), (KDL_CPU, 0)), r"in host memory \(DLPack device CPU"),
        (FakeDLPack(np.zeros(3), (14, 0)), "DLPack device type 14"),
        (FakeCAI(np.zeros(3), mask=(1, False)), "masked arrays"),
        (FakeCAI(np.zeros(3), shape=None), "malformed __cuda_array_interface__"),
        (FakeCAI(np.zeros((2, 2)), strides=(8,)), "1 strides for 2 dimensions"),
    ],
)
def test_foreign_array_rejects(value: object, fragment: str) -> None:
    with pytest.raises(TypeError, match=fragment) as info:
        foreign_array(value, "@f argument 0")
    assert str(info.value).startswith("@f argument 0")
    if "host" in fragment:
        assert "from_numpy" in str(info.value)


def test_foreign_array_reports_a_failing_interface() -> None:
    class NeedsGrad:
        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            raise RuntimeError(
                "Can't get __cuda_array_interface__ on a tensor that requires grad"
            )

    with pytest.raises(TypeError, match="requires grad"):
        foreign_array(NeedsGrad(), "x")


def _fa(
    shape: tuple[int, ...], strides: tuple[int, ...] | None = None, **kw: Any
) -> ForeignArray:
    return ForeignArray(0x1000, shape, strides, np.dtype(np.int32), **kw)


@pytest.mark.parametrize(
    ("array", "dims", "device", "fragment"),
    [
        (_fa((4,)), (None,), None, None),
        (_fa((4,), (4,)), (None,), None, None),
        (_fa((4, 1), (4, 99)), (None, None), None, None),  # extent-1 stride is free
        (_fa((4,), (8,)), (None,), None, "not contiguous"),
        (_fa((2, 2)), (None,), None, "2-D array of shape (2, 2), expected 1-D"),
        (_fa((3,)), (4,), None, "dimension 0 is 3, the memref needs 4"),
        (_fa((4,), readonly=True), (None,), None, "read-only"),
        (
            _fa((4,), device=1),
            (None,),
            0,
            "on CUDA device 1, but the program runs on device 0",
        ),
        (_fa((4,), device=0), (None,), 0, None),
    ],
)
def test_check_memref(
    array: ForeignArray,
    dims: tuple[int | None, ...],
    device: int | None,
    fragment: str | None,
) -> None:
    if fragment is None:
        check_memref(array, "w", np.dtype(np.int32), dims, device)
    else:
        with pytest.raises(
            TypeError, match=fragment.replace("(", r"\(").replace(")", r"\)")
        ):
            check_memref(array, "w", np.dtype(np.int32), dims, device)
    with pytest.raises(TypeError, match="got an array of int32, expected float32"):
        check_memref(_fa((4,)), "w", np.dtype(np.float32), (None,), None)


# --------------------------------------------- Program.call against the mock


def test_call_takes_foreign_arrays_in_place(mock: Program) -> None:
    arr = np.zeros(5, dtype=np.int32)
    mock.call("fill", FakeCAI(arr), 5, 7)
    assert arr.tolist() == [7] * 5  # the program wrote the producer's memory
    before = live_exports()
    mock.call("fill", FakeDLPack(arr), 3, -2)
    assert arr.tolist() == [-2, -2, -2, 7, 7]
    gc.collect()
    assert live_exports() == before  # the capsule went after the call
    assert mock.call("sum", FakeDLPack(np.array([1.5, 2.5])), 2) == 4.0
    four = np.zeros(4, dtype=np.int32)
    mock.call("four", FakeCAI(four))
    assert four[3] == 4


def test_call_rejects_bad_foreign_arrays(mock: Program) -> None:
    with pytest.raises(
        TypeError, match=r"@fill argument 0 \(memref<\?xi32>\): got an array of int64"
    ):
        mock.call("fill", FakeCAI(np.zeros(3, np.int64)), 3, 0)
    with pytest.raises(TypeError, match="not contiguous"):
        mock.call("fill", FakeCAI(np.zeros(6, np.int32)[::2]), 3, 0)
    with pytest.raises(TypeError, match="dimension 0 is 3, the memref needs 4"):
        mock.call("four", FakeCAI(np.zeros(3, np.int32)))
    with pytest.raises(TypeError, match="in host memory.*from_numpy"):
        mock.call("fill", np.zeros(3, np.int32), 3, 0)
    with pytest.raises(TypeError, match="got an array, expected a graph"):
        mock.call("nodes", FakeCAI(np.zeros(3, np.int32)))
    with pytest.raises(TypeError, match="a memref takes a DeviceArray or a CUDA array"):
        mock.call("fill", "level", 3, 0)


def test_call_checks_the_device(mock: Program, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "current_device", lambda: 0)
    arr = np.zeros(2, np.int32)
    with pytest.raises(
        TypeError, match="on CUDA device 1, but the program runs on device 0"
    ):
        mock.call("fill", FakeDLPack(arr, (KDL_CUDA, 1)), 2, 1)
    mock.call("fill", FakeDLPack(arr, (KDL_CUDA, 0)), 2, 1)
    assert arr.tolist() == [1, 1]


def test_call_synchronizes_for_a_producer_stream(
    mock: Program, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[bool] = []
    monkeypatch.setattr(mock, "synchronize", lambda: synced.append(True))
    arr = np.zeros(2, np.int32)
    mock.call("fill", FakeCAI(arr), 2, 1)
    assert synced == []
    mock.call("fill", FakeCAI(arr, stream=12345), 2, 1)
    assert synced == [True]


def test_device_array_exports(mock: Program, monkeypatch: pytest.MonkeyPatch) -> None:
    a = mock.alloc(4, np.int32).from_numpy(np.arange(4))
    assert a.__dlpack_device__() == (KDL_CUDA, a.device)
    cai = a.__cuda_array_interface__
    assert cai["data"] == (a.ptr, False) and cai["shape"] == (4,)
    view = read_dlpack(a.__dlpack__())
    assert (view.ptr, view.shape, view.dtype) == (a.ptr, (4,), np.dtype(np.int32))
    # a DeviceArray seen through either protocol is a memref argument again
    mock.call("fill", FakeCAI(np.zeros(0, np.int32), **cai), 4, 9)
    assert a.to_numpy().tolist() == [9] * 4
    synced: list[bool] = []
    monkeypatch.setattr(mock, "synchronize", lambda: synced.append(True))
    a.__dlpack__(stream=1)
    a.__dlpack__(stream=None)
    assert synced == []
    a.__dlpack__(stream=0xBEEF)  # another stream: wait for the program first
    assert synced == [True]
    with pytest.raises(BufferError, match="does not copy"):
        a.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="not"):
        a.__dlpack__(dl_device=(KDL_CPU, 0))


def test_exported_array_outlives_its_name(mock: Program) -> None:
    a = mock.alloc(3, np.float64).from_numpy(np.array([1.0, 2.0, 3.0]))
    alive = weakref.ref(a)
    capsule = a.__dlpack__()
    del a
    gc.collect()
    assert alive() is not None  # the capsule holds it
    view = read_dlpack(capsule)
    assert np.ctypeslib.as_array(
        ctypes.cast(view.ptr, ctypes.POINTER(ctypes.c_double)), (3,)
    ).tolist() == [1.0, 2.0, 3.0]
    del capsule, view
    gc.collect()
    assert alive() is None


def test_freed_array_is_not_exported(mock: Program) -> None:
    a = mock.alloc(2, np.int32)
    a.free()
    with pytest.raises(BufferError, match="freed"):
        a.__dlpack__()
    with pytest.raises(BufferError, match="freed"):
        _ = a.__cuda_array_interface__


def test_upload_graph_takes_scipy(mock: Program) -> None:
    sp = pytest.importorskip("scipy.sparse")
    g = mock.upload_graph(sp.csr_matrix(np.eye(6, k=1, dtype=np.int32)))
    assert (g.num_nodes, g.num_edges) == (6, 5)
    assert mock.call("nodes", g) == 6
    with pytest.raises(TypeError, match="expected a graph"):
        mock.upload_graph(np.zeros((2, 5), dtype=int))


# ------------------------------------------------------------------ GPU


def _bfs(graph_spec: str = "random:300:1200"):
    from irgl_runner.api import build
    from irgl_runner.generators import generate
    from irgl_runner.reference import bfs_levels

    graph = generate(graph_spec)
    prog = Program(build(REPO / "benchmarks" / "bfs" / "bfs.mlir", "lower-irgl"))
    return prog, prog.upload_graph(graph), graph, bfs_levels(graph, 0)


@pytest.mark.gpu
def test_gpu_cupy_arrays_in_and_out() -> None:
    cp = pytest.importorskip("cupy")
    prog, g, graph, expected = _bfs()
    level = cp.full(graph.num_nodes, INF, dtype=cp.int32)
    prog.call("main", g, level, 0)
    np.testing.assert_array_equal(cp.asnumpy(level), expected)
    # a DeviceArray through CuPy, both ways, sharing memory
    mine = prog.alloc(graph.num_nodes, "int32").fill(INF)
    prog.call("main", g, mine, 0)
    for view in (cp.asarray(mine), cp.from_dlpack(mine), mine.to_cupy()):
        assert view.data.ptr == mine.ptr
        np.testing.assert_array_equal(cp.asnumpy(view), expected)
    cp.asarray(mine)[:] = 5  # written through CuPy, read by the runtime
    assert (mine.to_numpy() == 5).all()
    with pytest.raises(TypeError, match="got an array of int64, expected int32"):
        prog.call("main", g, cp.zeros(graph.num_nodes, cp.int64), 0)
    with pytest.raises(TypeError, match="not contiguous"):
        prog.call("main", g, cp.zeros(2 * graph.num_nodes, cp.int32)[::2], 0)
    with pytest.raises(TypeError, match="expected 1-D"):
        prog.call("main", g, cp.zeros((graph.num_nodes, 1), cp.int32), 0)


@pytest.mark.gpu
def test_gpu_torch_tensors_in_and_out() -> None:
    torch = pytest.importorskip("torch")
    prog, g, graph, expected = _bfs()
    level = torch.full((graph.num_nodes,), INF, dtype=torch.int32, device="cuda")
    prog.call("main", g, level, 0)
    np.testing.assert_array_equal(level.cpu().numpy(), expected)
    mine = prog.alloc(graph.num_nodes, "int32").fill(INF)
    prog.call("main", g, mine, 0)
    for view in (
        torch.from_dlpack(mine),
        mine.to_torch(),
        torch.as_tensor(mine, device="cuda"),
    ):
        assert view.data_ptr() == mine.ptr and view.is_cuda
        np.testing.assert_array_equal(view.cpu().numpy(), expected)
    with pytest.raises(TypeError, match="in host memory.*from_numpy"):
        prog.call("main", g, torch.zeros(graph.num_nodes, dtype=torch.int32), 0)
    with pytest.raises(TypeError, match="got an array of float32"):
        prog.call("main", g, torch.zeros(graph.num_nodes, device="cuda"), 0)


@pytest.mark.gpu
def test_gpu_readme_example_runs() -> None:
    pytest.importorskip("cupy")
    import re

    text = (REPO / "README.md").read_text()
    (block,) = [
        b
        for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
        if "Program(" in b
    ]
    proc = subprocess.run(
        [sys.executable, "-c", block],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
