"""Load compiled IrGL programs and call their entry points through ctypes.

A program is a shared library built by :mod:`irgl_runner.build`; it exports
``extern "C" int irgl_entry_<hostfn>(args..., result*)`` plus the runtime
helpers described in ``docs/lowered-ir.md`` ("Host ABI"). The parameter and
result kinds of each entry point come from the program's ABI manifest
(``irgl_<key>.abi.json`` beside the library, written by the build), so calls
need no signature::

    prog = Program(build("benchmarks/bfs/bfs.mlir"))
    g = prog.upload_graph(graph)
    level = prog.alloc(graph.num_nodes, np.int32)
    prog.call("main", g, level, 0)
    print(level.to_numpy())

Memref arguments may also be CuPy arrays, PyTorch CUDA tensors or anything
else with ``__cuda_array_interface__`` / ``__dlpack__`` (no copy), and a
:class:`DeviceArray` is usable by those libraries in place.
"""

from __future__ import annotations

import ctypes
import os
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from cuda_emitter.host_abi import (
    AbiKind,
    AbiValue,
    EntryPoint,
    load_manifest,
    manifest_path,
)
from irgl_dialect.runtime_library import HOST_EXPORTS

from .array_interop import (
    KDL_CUDA,
    ForeignArray,
    check_memref,
    cuda_array_interface,
    current_device,
    foreign_array,
    memref_shape,
    to_dlpack,
)
from .build import (
    DEFAULT_NVCC_FLAGS,
    DEFAULT_PIPELINE,
    EmittedProgram,
    build,
    cache_dir,
    compile_cuda,
    emit_cuda,
    emit_program,
    runtime_include_dir,
)
from .errors import CompileError, IrglError, IrglRuntimeError
from .graphs import CSRGraph, as_graph

__all__ = [
    "CompileError",
    "DEFAULT_NVCC_FLAGS",
    "DEFAULT_PIPELINE",
    "DeviceArray",
    "DeviceGraph",
    "EmittedProgram",
    "IrglError",
    "IrglRuntimeError",
    "Program",
    "build",
    "cache_dir",
    "compile_cuda",
    "emit_cuda",
    "emit_program",
    "runtime_include_dir",
]

#: What :meth:`Program.steps_take` counts, in the runtime's order.
STEP_KINDS = ("launches", "grid barriers", "block-0 rounds")

#: The ctypes type of each ABI kind, as a parameter and as what the result
#: pointer points to.
CTYPES: dict[AbiKind, Any] = {
    AbiKind.POINTER: ctypes.c_void_p,
    AbiKind.BOOL: ctypes.c_int,
    AbiKind.INT: ctypes.c_int64,
    AbiKind.FLOAT: ctypes.c_double,
}

#: numpy dtypes of memref element types (``memref<?xf32>`` -> float32).
ELEMENT_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(dt)
    for name, dt in {
        "i8": np.int8,
        "i16": np.int16,
        "i32": np.int32,
        "i64": np.int64,
        "f32": np.float32,
        "f64": np.float64,
    }.items()
}


def _memref_dtype(mlir_type: str) -> np.dtype | None:
    """The element dtype of a ``memref<...xT>`` type, if it has a fixed one."""
    if not mlir_type.startswith("memref<"):
        return None
    element = mlir_type[len("memref<") :].rstrip(">").split("x")[-1].split(",")[0]
    return ELEMENT_DTYPES.get(element.strip())


@dataclass(frozen=True)
class _Param:
    """What converting an argument of a host function needs, worked out
    once per entry point (:func:`_params`): calls are timed."""

    function: str
    index: int
    abi: AbiValue
    memref: bool
    dtype: np.dtype | None
    quick: type | None = None
    """The argument type passed without :func:`_convert`'s checks (a
    :class:`DeviceArray` of the memref's dtype, a :class:`DeviceGraph`, an
    ``int`` or a ``float``; ``bool`` is not ``int`` here): an empty search
    is tens of microseconds, and its call's conversions a few of them."""

    def where(self) -> str:
        return f"@{self.function} argument {self.index} ({self.abi.mlir_type})"


def _params(entry: EntryPoint) -> tuple[_Param, ...]:
    """The parameters of ``entry``, ready for :func:`_convert`."""
    params: list[_Param] = []
    for i, p in enumerate(entry.params):
        memref = p.mlir_type.startswith("memref")
        dtype = _memref_dtype(p.mlir_type)
        quick: type | None
        if p.kind is not AbiKind.POINTER:
            quick = {AbiKind.INT: int, AbiKind.FLOAT: float}.get(p.kind)
        elif not memref:
            quick = DeviceGraph
        else:  # a memref of no fixed dtype is always checked
            quick = DeviceArray if dtype is not None else None
        params.append(_Param(entry.name, i, p, memref, dtype, quick))
    return tuple(params)


def _converted(
    params: tuple[_Param, ...], args: tuple[object, ...], foreign: list[ForeignArray]
) -> list[object]:
    """The ctypes-ready values of ``args``: the common argument types
    directly (:attr:`_Param.quick`), the others through :func:`_convert`."""
    values: list[object] = []
    for param, value in zip(params, args, strict=True):
        kind = type(value)
        if kind is not param.quick:
            values.append(_convert(param, value, foreign))
        elif kind is int or kind is float:
            values.append(value)
        elif kind is DeviceGraph:
            values.append(cast(DeviceGraph, value).ptr)
        elif cast(DeviceArray, value).dtype is param.dtype:
            values.append(cast(DeviceArray, value).ptr)
        else:  # an equal dtype that is another object: checked as usual
            values.append(_convert(param, value, foreign))
    return values


def _convert(
    param: _Param,
    value: object,
    foreign: list[ForeignArray] | None = None,
) -> object:
    """A Python argument -> the ctypes-ready value for ``param`` (or TypeError).

    Another library's CUDA array (``__cuda_array_interface__`` or
    ``__dlpack__``) is validated against the memref and appended to
    ``foreign`` (which keeps it alive for the call)."""
    where = param.where
    match param.abi.kind:
        case AbiKind.POINTER:
            if isinstance(value, DeviceGraph):
                if param.memref:
                    raise TypeError(f"{where()}: got a graph, expected a device array")
                return value.ptr
            if isinstance(value, DeviceArray):
                if not param.memref:
                    raise TypeError(f"{where()}: got a device array")
                expected = param.dtype
                if (
                    expected is not None
                    and value.dtype is not expected
                    and value.dtype != expected
                ):
                    raise TypeError(
                        f"{where()}: got a device array of {value.dtype}, "
                        f"expected {expected}"
                    )
                return value.ptr
            if value is None or (
                isinstance(value, int) and not isinstance(value, bool)
            ):
                return value  # a raw pointer (e.g. a handle from another entry point)
            array = foreign_array(value, where())
            if array is not None:
                if not param.memref:
                    raise TypeError(f"{where()}: got an array, expected a graph")
                check_memref(
                    array,
                    where(),
                    param.dtype,
                    memref_shape(param.abi.mlir_type),
                    current_device() if array.device is not None else None,
                )
                if foreign is not None:
                    foreign.append(array)
                return array.ptr
            raise TypeError(
                f"{where()}: expected a device value, got {type(value).__name__}"
                + (
                    " (a memref takes a DeviceArray or a CUDA array exposing "
                    "__cuda_array_interface__ or __dlpack__)"
                    if param.memref
                    else ""
                )
            )
        case AbiKind.BOOL:
            if isinstance(value, (bool, np.bool_, int, np.integer)):
                return int(bool(value))
        case AbiKind.INT:
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                return int(value)
        case AbiKind.FLOAT:
            if isinstance(value, (int, float, np.integer, np.floating)):
                return float(value)
    raise TypeError(f"{where()}: cannot pass {type(value).__name__}")


# ------------------------------------------------------------------ device data


@dataclass(eq=False)
class DeviceGraph:
    """A graph on the device (an ``irgl::Graph*`` from ``irgl_graph_create``)."""

    program: Program
    ptr: int
    num_nodes: int
    num_edges: int

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(
            self, self.program._lib.irgl_graph_destroy, ctypes.c_void_p(self.ptr)
        )
        self._finalizer.atexit = False

    def free(self) -> None:
        """Destroy the device graph now (idempotent)."""
        self._finalizer()


@dataclass(eq=False)
class DeviceArray:
    """``length`` elements of ``dtype`` in device memory (a memref argument).

    It exposes ``__cuda_array_interface__`` and ``__dlpack__``, so CuPy,
    PyTorch and Numba use it in place (``cupy.asarray(a)``,
    ``torch.from_dlpack(a)``, :meth:`to_cupy`, :meth:`to_torch`); their
    arrays keep it alive. ``device`` is its CUDA device ordinal.
    """

    program: Program
    ptr: int
    length: int
    dtype: np.dtype
    device: int = 0

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(
            self, self.program._lib.irgl_device_free, ctypes.c_void_p(self.ptr)
        )
        self._finalizer.atexit = False

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.length * self.dtype.itemsize

    def _live(self) -> None:
        if not self._finalizer.alive:
            raise BufferError("the device array was freed")

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA Array Interface (v3): 1-D, C-contiguous, writable, on the
        legacy default stream."""
        self._live()
        return cuda_array_interface(self.ptr, self.length, self.dtype)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(kDLCUDA, device ordinal)``."""
        return (KDL_CUDA, self.device)

    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> object:
        """A DLPack capsule of the array, without a copy (``copy=True`` and
        other devices raise ``BufferError``). The program's work runs on the
        legacy default stream; for another consumer ``stream`` the device is
        synchronized first."""
        self._live()
        if copy:
            raise BufferError("DeviceArray.__dlpack__ does not copy")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(
                f"the array is on {self.__dlpack_device__()}, not {tuple(dl_device)}"
            )
        if stream not in (None, -1, 1):
            self.program.synchronize()
        return to_dlpack(self, self.ptr, self.length, self.dtype, self.device)

    def to_cupy(self) -> Any:
        """A CuPy array over the same memory (no copy; keeps this alive)."""
        import cupy  # pyright: ignore[reportMissingImports]

        return cupy.asarray(self)

    def to_torch(self) -> Any:
        """A PyTorch CUDA tensor over the same memory (no copy; via DLPack)."""
        import torch  # pyright: ignore[reportMissingImports]

        return torch.from_dlpack(self)

    def to_numpy(self) -> np.ndarray:
        """Copy the contents to a new host array."""
        out = np.empty(self.length, dtype=self.dtype)
        if self.length:
            self.program._check(
                self.program._lib.irgl_copy_to_host(
                    out.ctypes.data, self.ptr, self.nbytes
                ),
                "irgl_copy_to_host",
            )
        return out

    def from_numpy(self, values: np.ndarray) -> DeviceArray:
        """Copy ``values`` (same length, cast to dtype) to the device; return self."""
        arr = np.ascontiguousarray(values, dtype=self.dtype).ravel()
        if arr.shape[0] != self.length:
            raise ValueError(
                f"{arr.shape[0]} values for a device array of {self.length}"
            )
        if self.length:
            self.program._check(
                self.program._lib.irgl_copy_to_device(
                    self.ptr, arr.ctypes.data, self.nbytes
                ),
                "irgl_copy_to_device",
            )
        return self

    def fill(self, value: int | float) -> DeviceArray:
        """Set every element to ``value`` (through a host copy); returns self."""
        return self.from_numpy(np.full(self.length, value, dtype=self.dtype))

    def free(self) -> None:
        """Release the device memory now (idempotent)."""
        self._finalizer()


# ---------------------------------------------------------------------- program


#: ctypes for the C types of the runtime's exported API
#: (``irgl_dialect.runtime_library.HOST_EXPORTS``).
_CTYPES_OF_C: dict[str, Any] = {
    "void": None,
    "void*": ctypes.c_void_p,
    "const void*": ctypes.c_void_p,
    "int": ctypes.c_int,
    "int64_t": ctypes.c_int64,
    "const int64_t*": ctypes.POINTER(ctypes.c_int64),
    "int64_t*": ctypes.POINTER(ctypes.c_int64),
    "const int32_t*": ctypes.POINTER(ctypes.c_int32),
    "const char*": ctypes.c_char_p,
}


def _c_to_ctypes(c_type: str) -> Any:
    """The ctypes type of a C type of the runtime's exported API."""
    try:
        return _CTYPES_OF_C[c_type]
    except KeyError:
        raise IrglError(
            f"runtime export type {c_type!r} has no ctypes mapping"
        ) from None


class Program:
    """A compiled program (shared library) loaded with ctypes.

    ``entry_points`` is the ABI of its host functions; by default it is read
    from the manifest beside the library (see :mod:`irgl_runner.build`).
    Passing it is the escape hatch for a library built some other way.
    """

    def __init__(
        self,
        so_path: str | os.PathLike[str],
        entry_points: Iterable[EntryPoint] | None = None,
    ) -> None:
        self.path = Path(so_path)
        if entry_points is None:
            entry_points = self._read_manifest()
        self.entry_points: dict[str, EntryPoint] = {e.name: e for e in entry_points}
        try:
            self._lib = ctypes.CDLL(str(self.path))
        except OSError as e:
            raise IrglError(f"cannot load {self.path}: {e}") from None
        self.last_result: object = None
        self._entries: dict[str, Any] = {}
        self._params: dict[str, tuple[_Param, ...]] = {}
        for export in HOST_EXPORTS.values():
            self._declare(
                export.name,
                _c_to_ctypes(export.c_result),
                [_c_to_ctypes(p) for p in export.c_params],
            )
        # the process's one-time CUDA set-up (context, memory pool) here, not
        # in the first call: a first call then takes about what later ones do
        self._check(self._lib.irgl_warm_up(), "irgl_warm_up")
        # and every kernel of the program loaded (CUDA loads one lazily, at
        # its first launch); a library built some other way may not have it
        preload = getattr(self._lib, "irgl_preload_kernels", None)
        if preload is not None:
            preload.restype, preload.argtypes = ctypes.c_int, []
            self._check(preload(), "irgl_preload_kernels")

    def _read_manifest(self) -> tuple[EntryPoint, ...]:
        path = manifest_path(self.path)
        if not path.is_file():
            return ()
        try:
            return load_manifest(path.read_text())
        except (OSError, ValueError, KeyError, TypeError, AssertionError) as e:
            raise IrglError(f"{path}: not a valid ABI manifest: {e}") from None

    def _declare(self, name: str, restype: Any, argtypes: list[Any]) -> None:
        try:
            fn = getattr(self._lib, name)
        except AttributeError:
            raise IrglError(
                f"{self.path} does not export the runtime function {name}"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes

    # -- runtime helpers ---------------------------------------------------

    def last_error(self) -> str:
        """The runtime's last error message."""
        msg = self._lib.irgl_last_error()
        return msg.decode(errors="replace") if msg else "unknown error"

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise IrglRuntimeError(f"{what}: {self.last_error()}")

    def device_name(self) -> str:
        """Name of the CUDA device the runtime uses."""
        name = self._lib.irgl_device_name()
        return name.decode(errors="replace") if name else "unknown"

    def device_memory(self) -> tuple[int, int]:
        """Bytes in use on the device (every allocation of every context on
        it, the runtime's pooled scratch included) and its total."""
        out = (ctypes.c_int64 * 2)()
        self._check(self._lib.irgl_device_memory(out), "irgl_device_memory")
        return int(out[0]), int(out[1])

    def _counted(self, name: str, what: str, count: int) -> list[int]:
        """Take ``count`` counters of a counting build (nvcc flag
        ``-DIRGL_COUNT_EDGES``) through its export ``name``; a plain build
        raises saying it counts no ``what``."""
        take = getattr(self._lib, name, None)
        if take is None:
            raise IrglError(
                f"{self.path} counts no {what}: build it with the nvcc flag "
                "-DIRGL_COUNT_EDGES"
            )
        take.restype, take.argtypes = ctypes.c_int, [ctypes.POINTER(ctypes.c_ulonglong)]
        out = (ctypes.c_ulonglong * count)()
        self._check(take(out), name)
        return [int(v) for v in out]

    def edge_reads_take(self) -> int:
        """A counting build's (nvcc flag ``-DIRGL_COUNT_EDGES``) edge reads
        since the last take, then zero: the edges its threads read, whichever
        form (a thread, a warp, a block, a team of blocks) walked them (SSSP:
        the edges it relaxed). For measuring work: the counter's atomics slow
        the program down."""
        return self._counted("irgl_edge_reads_take", "edges", 1)[0]

    def atomics_take(self) -> int:
        """A counting build's (nvcc flag ``-DIRGL_COUNT_EDGES``) atomic
        read-modify-writes of the program's own code since the last take,
        then zero (SSSP: its distance minimums and stamp exchanges; the
        runtime's worklist and lock atomics are not counted). For measuring
        work."""
        return self._counted("irgl_atomics_take", "atomics", 1)[0]

    def span_take(self) -> int:
        """A counting build's (nvcc flag ``-DIRGL_COUNT_EDGES``) span since
        the last take, then zero: for every step (between two grid barriers,
        a round block 0 takes alone, a kernel launch), the most edges one
        thread read, summed over the steps; the chain of edge reads that no
        number of threads shortens (a hub's edges read by one block). For
        measuring work."""
        return self._counted("irgl_span_take", "span", 1)[0]

    def steps_take(self) -> dict[str, int]:
        """A counting build's (nvcc flag ``-DIRGL_COUNT_EDGES``)
        synchronization steps since the last take, then zero: its kernel
        launches, the grid barriers its control kernels passed and the rounds
        block 0 took alone (the small-worklist mode). For measuring work."""
        counts = self._counted("irgl_steps_take", "steps", len(STEP_KINDS))
        return dict(zip(STEP_KINDS, counts, strict=True))

    def synchronize(self) -> None:
        """Wait for the device; raise on a pending CUDA error."""
        self._check(self._lib.irgl_device_synchronize(), "irgl_device_synchronize")

    def upload_graph(self, graph: CSRGraph | object) -> DeviceGraph:
        """Copy a graph to the device: a :class:`CSRGraph`, or a scipy sparse
        matrix or networkx graph (converted by
        :func:`irgl_runner.graphs.as_graph`; ``TypeError`` for anything else)."""
        graph = as_graph(graph)
        rs = np.ascontiguousarray(graph.row_start, dtype=np.int64)
        dst = np.ascontiguousarray(graph.edge_dst, dtype=np.int64)
        w = (
            None
            if graph.weights is None
            else np.ascontiguousarray(graph.weights, dtype=np.int32)
        )
        handle = self._lib.irgl_graph_create(
            graph.num_nodes,
            graph.num_edges,
            rs.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
            dst.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
            None if w is None else w.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
        )
        if not handle:
            raise IrglRuntimeError(f"irgl_graph_create: {self.last_error()}")
        return DeviceGraph(self, handle, graph.num_nodes, graph.num_edges)

    def alloc(self, n: int, dtype: np.dtype | type | str) -> DeviceArray:
        """Allocate ``n`` uninitialized elements of ``dtype`` on the device."""
        dt = np.dtype(dtype)
        if n < 0:
            raise ValueError(f"negative length {n}")
        ptr = self._lib.irgl_device_alloc(max(n * dt.itemsize, 1))
        if not ptr:
            raise IrglRuntimeError(
                f"irgl_device_alloc({n * dt.itemsize} bytes): {self.last_error()}"
            )
        device = current_device()  # the runtime's context exists now
        return DeviceArray(self, ptr, n, dt, 0 if device is None else device)

    # -- entry points ------------------------------------------------------

    def entry_point(self, name: str) -> EntryPoint:
        """The ABI of host function ``@name``."""
        entry = self.entry_points.get(name)
        if entry is not None:
            return entry
        if not self.entry_points:
            raise IrglError(
                f"{self.path} has no ABI manifest ({manifest_path(self.path).name}); "
                "build it with irgl_runner.build, or pass entry_points to Program"
            )
        raise IrglError(
            f"{self.path} has no entry point @{name} "
            f"(entry points: {', '.join('@' + n for n in self.entry_points)})"
        )

    def _function(self, entry: EntryPoint) -> Any:
        fn = self._entries.get(entry.name)
        if fn is None:
            try:
                fn = self._lib[entry.c_symbol]
            except AttributeError:
                raise IrglError(
                    f"{self.path} does not export {entry.c_symbol} "
                    f"(host function @{entry.name})"
                ) from None
            fn.restype = ctypes.c_int
            argtypes = [CTYPES[p.kind] for p in entry.params]
            if entry.result is not None:
                argtypes.append(ctypes.POINTER(CTYPES[entry.result.kind]))
            fn.argtypes = argtypes
            self._entries[entry.name] = fn
        return fn

    def call(self, host_fn: str, *args: object) -> Any:
        """Call ``irgl_entry_<host_fn>`` with its ABI; return its result (int,
        float, bool, a pointer as int, or None); raise
        :class:`IrglRuntimeError` if it fails and ``TypeError`` for arguments
        that do not fit its parameters.

        A memref argument is a :class:`DeviceArray` or, without a copy, any
        CUDA array exposing ``__cuda_array_interface__`` or ``__dlpack__``
        (CuPy, PyTorch, Numba): its dtype, shape, contiguity and device must
        fit the parameter."""
        entry = self.entry_point(host_fn)
        if len(args) != len(entry.params):
            raise TypeError(
                f"@{host_fn} takes {len(entry.params)} arguments, got {len(args)}"
            )
        foreign: list[ForeignArray] = []  # other libraries' arrays: kept alive
        params = self._params.get(host_fn)
        if params is None:
            params = self._params[host_fn] = _params(entry)
        values = _converted(params, args, foreign)
        if foreign and any(a.stream is not None for a in foreign):
            self.synchronize()  # their producers' streams are done
        fn = self._function(entry)
        if entry.result is None:
            rc = fn(*values)
        else:
            cell = CTYPES[entry.result.kind]()
            rc = fn(*values, ctypes.byref(cell))
        if rc != 0:
            raise IrglRuntimeError(f"@{host_fn}: {self.last_error()}")
        if entry.result is None:
            return None
        if entry.result.kind is AbiKind.BOOL:
            return bool(cell.value)
        return cell.value

    def time_call(self, host_fn: str, *args: object) -> float:
        """Like :meth:`call`, but return the wall time in milliseconds.

        The device is synchronized before the clock starts; the time runs until
        ``irgl_device_synchronize()`` returns after the call.  The call's
        result is kept in :attr:`last_result`.
        """
        self.synchronize()
        t0 = time.perf_counter()
        result = self.call(host_fn, *args)
        self.synchronize()
        elapsed = (time.perf_counter() - t0) * 1e3
        self.last_result = result
        return elapsed
