"""Run compiled IrGL programs from Python through ctypes.

A program is a CUDA file emitted by ``irgl-opt --lower-irgl -t cuda``; it
exports ``extern "C" int irgl_entry_<hostfn>(args..., results*...)`` plus the
runtime helpers described in ``docs/lowered-ir.md`` ("Host ABI for Python").

Typical use::

    so = compile_cuda(emit_cuda("benchmarks/bfs/bfs.mlir"))
    prog = Program(so)
    g = prog.upload_graph(graph)
    level = prog.alloc(graph.num_nodes, np.int32)
    prog.call("main", g, level, 0)
    print(level.to_numpy())
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .graphs import CSRGraph

__all__ = [
    "ARG_KINDS",
    "CompileError",
    "DEFAULT_NVCC_FLAGS",
    "DeviceArray",
    "DeviceGraph",
    "IrglError",
    "IrglRuntimeError",
    "Program",
    "RESULT_KINDS",
    "cache_dir",
    "compile_cuda",
    "emit_cuda",
    "runtime_include_dir",
]

DEFAULT_NVCC_FLAGS: tuple[str, ...] = (
    "-arch=sm_90",
    "-O3",
    "-std=c++17",
    "-shared",
    "-Xcompiler",
    "-fPIC",
)


class IrglError(Exception):
    """Base class of the errors raised by this module."""


class CompileError(IrglError):
    """``irgl-opt`` or ``nvcc`` failed (the message carries its stderr)."""


class IrglRuntimeError(IrglError):
    """An entry point or runtime helper reported failure (``irgl_last_error()``)."""


# ------------------------------------------------------------------ compilation


def cache_dir() -> Path:
    """Where compiled libraries live: ``$IRGL_CACHE_DIR`` or ``~/.cache/irgl``."""
    env = os.environ.get("IRGL_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "irgl"


def runtime_include_dir() -> Path:
    """Directory holding ``irgl_runtime.cuh`` (``cuda_emitter/runtime``)."""
    return Path(__file__).resolve().parent.parent / "cuda_emitter" / "runtime"


def _looks_like_path(src: str | os.PathLike[str]) -> bool:
    if isinstance(src, os.PathLike):
        return True
    return "\n" not in src and len(src) < 4096 and Path(src).is_file()


def compile_cuda(
    source: str | os.PathLike[str],
    flags: Sequence[str] = DEFAULT_NVCC_FLAGS,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    nvcc: str = "nvcc",
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """Compile CUDA source (a ``.cu`` path or the text itself) to a shared library.

    The library is cached under :func:`cache_dir` keyed by the SHA-256 of the
    source, the flags, the include dirs and the runtime headers in them, and
    reused when present.  Raises :class:`CompileError` with nvcc's output.
    """
    includes = [runtime_include_dir(), *map(Path, include_dirs)]
    if _looks_like_path(source):
        path = Path(source)
        try:
            text = path.read_text()
        except OSError as e:
            raise CompileError(
                f"cannot read CUDA source {path}: {e.strerror or e}"
            ) from None
        includes.append(path.resolve().parent)
    else:
        text = str(source)
    args = [*flags, *(f"-I{d}" for d in includes)]
    h = hashlib.sha256()
    h.update(text.encode())
    h.update(b"\0" + "\0".join(args).encode())
    for d in includes:  # a changed runtime header must force a rebuild
        for hdr in sorted(Path(d).glob("*.cuh")) + sorted(Path(d).glob("*.h")):
            h.update(hdr.name.encode() + b"\0" + hdr.read_bytes())
    key = h.hexdigest()[:32]
    out_dir = Path(cache) if cache is not None else cache_dir()
    so = out_dir / f"irgl_{key}.so"
    if so.is_file():
        return so
    out_dir.mkdir(parents=True, exist_ok=True)
    cu = out_dir / f"irgl_{key}.cu"
    cu.write_text(text)
    tmp = out_dir / f".irgl_{key}.{os.getpid()}.so"
    cmd = [nvcc, *args, "-o", str(tmp), str(cu)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise CompileError(
            f"nvcc not found (tried {nvcc!r}); is the CUDA toolkit on PATH?"
        ) from None
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise CompileError(
            f"nvcc failed (exit {proc.returncode}) on {cu}:\n"
            + (proc.stderr.strip() or proc.stdout.strip())
        )
    os.replace(tmp, so)
    return so


def _find_irgl_opt() -> str | None:
    found = shutil.which("irgl-opt")
    if found:
        return found
    beside = Path(sys.executable).with_name("irgl-opt")
    return str(beside) if beside.is_file() else None


def emit_cuda(mlir_path: str | os.PathLike[str], extra_args: Sequence[str] = ()) -> str:
    """Lower an IrGL MLIR file to CUDA text with ``irgl-opt --lower-irgl -t cuda``."""
    path = Path(mlir_path)
    if not path.is_file():
        raise CompileError(f"{path}: no such MLIR file")
    exe = _find_irgl_opt()
    if exe is None:
        raise CompileError(
            "irgl-opt not found on PATH (install the package: pip install -e .)"
        )
    cmd = [exe, "--lower-irgl", "-t", "cuda", *extra_args, str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(
            f"irgl-opt failed (exit {proc.returncode}) on {path}:\n"
            + proc.stderr.strip()
        )
    return proc.stdout


# ------------------------------------------------------------------ ABI mapping

#: Argument kinds (MLIR types of host-function parameters) -> ctypes, per the ABI.
ARG_KINDS: dict[str, Any] = {
    "graph": ctypes.c_void_p,
    "memref": ctypes.c_void_p,
    "pipe": ctypes.c_void_p,  # the irgl::Pipe* itself
    "worklist": ctypes.c_void_p,  # points to an irgl::Worklist
    "cell": ctypes.c_void_p,  # points to an irgl::Cell
    "i1": ctypes.c_int,
    "i8": ctypes.c_int64,
    "i16": ctypes.c_int64,
    "i32": ctypes.c_int64,
    "i64": ctypes.c_int64,
    "index": ctypes.c_int64,
    "f32": ctypes.c_double,
    "f64": ctypes.c_double,
}

#: Result kinds -> what the entry point's ``result`` pointer points to: int64_t
#: (integers, index), double (floats), int (i1), void* (memref, pipe).
RESULT_KINDS: dict[str, Any] = {
    "i1": ctypes.c_int,
    "i8": ctypes.c_int64,
    "i16": ctypes.c_int64,
    "i32": ctypes.c_int64,
    "i64": ctypes.c_int64,
    "index": ctypes.c_int64,
    "f32": ctypes.c_double,
    "f64": ctypes.c_double,
    "memref": ctypes.c_void_p,
    "pipe": ctypes.c_void_p,
}


def _infer_kind(value: object) -> str:
    """ABI kind of a Python argument."""
    if isinstance(value, DeviceGraph):
        return "graph"
    if isinstance(value, DeviceArray):
        return "memref"
    if isinstance(value, (bool, np.bool_)):
        return "i1"
    if isinstance(value, (int, np.integer)):
        return "i64"
    if isinstance(value, (float, np.floating)):
        return "f64"
    raise TypeError(f"cannot pass {type(value).__name__} to an IrGL entry point")


def _convert(kind: str, value: object) -> object:
    """Python value -> the ctypes-ready value for ``kind``."""
    if ARG_KINDS[kind] is ctypes.c_void_p:
        if isinstance(value, (DeviceGraph, DeviceArray)):
            return value.ptr
        if value is None or isinstance(value, int):
            return value  # a raw pointer (e.g. a handle from another entry point)
        raise TypeError(f"expected a device {kind}, got {type(value).__name__}")
    if kind == "i1":
        return int(bool(value))
    if kind in ("f32", "f64"):
        return float(value)  # type: ignore[arg-type]
    return int(value)  # type: ignore[call-overload]


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
    """``length`` elements of ``dtype`` in device memory (a memref argument)."""

    program: Program
    ptr: int
    length: int
    dtype: np.dtype

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(
            self, self.program._lib.irgl_device_free, ctypes.c_void_p(self.ptr)
        )
        self._finalizer.atexit = False

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.length * self.dtype.itemsize

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


class Program:
    """A compiled program (shared library) loaded with ctypes."""

    def __init__(self, so_path: str | os.PathLike[str]) -> None:
        self.path = Path(so_path)
        try:
            self._lib = ctypes.CDLL(str(self.path))
        except OSError as e:
            raise IrglError(f"cannot load {self.path}: {e}") from None
        self.last_result: object = None
        self._entries: dict[tuple[str, tuple[str, ...], str | None], Any] = {}
        vp, i64, i32p = ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int32)
        i64p = ctypes.POINTER(ctypes.c_int64)
        self._declare("irgl_graph_create", vp, [i64, i64, i64p, i64p, i32p])
        self._declare("irgl_graph_destroy", None, [vp])
        self._declare("irgl_device_alloc", vp, [i64])
        self._declare("irgl_device_free", None, [vp])
        self._declare("irgl_copy_to_device", ctypes.c_int, [vp, vp, i64])
        self._declare("irgl_copy_to_host", ctypes.c_int, [vp, vp, i64])
        self._declare("irgl_device_synchronize", ctypes.c_int, [])
        self._declare("irgl_device_name", ctypes.c_char_p, [])
        self._declare("irgl_last_error", ctypes.c_char_p, [])

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

    def synchronize(self) -> None:
        """Wait for the device; raise on a pending CUDA error."""
        self._check(self._lib.irgl_device_synchronize(), "irgl_device_synchronize")

    def upload_graph(self, graph: CSRGraph) -> DeviceGraph:
        """Copy a CSR graph to the device."""
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
        return DeviceArray(self, ptr, n, dt)

    # -- entry points ------------------------------------------------------

    def _entry(self, name: str, kinds: tuple[str, ...], returns: str | None) -> Any:
        key = (name, kinds, returns)
        fn = self._entries.get(key)
        if fn is None:
            symbol = f"irgl_entry_{name}"
            try:
                fn = self._lib[symbol]  # a fresh function object per signature
            except AttributeError:
                raise IrglError(
                    f"{self.path} has no entry point {symbol} (host function @{name})"
                ) from None
            fn.restype = ctypes.c_int
            fn.argtypes = [ARG_KINDS[k] for k in kinds]
            if returns is not None:
                fn.argtypes.append(ctypes.POINTER(RESULT_KINDS[returns]))
            self._entries[key] = fn
        return fn

    def call(
        self,
        host_fn: str,
        *args: object,
        signature: Sequence[str] | None = None,
        returns: str | None = None,
    ) -> Any:
        """Call ``irgl_entry_<host_fn>``; raise :class:`IrglRuntimeError` on failure.

        ``signature`` lists the parameters' kinds (keys of :data:`ARG_KINDS`,
        e.g. ``["graph", "memref", "index"]``); if omitted it is inferred from the
        values (DeviceGraph -> graph, DeviceArray -> memref, bool -> i1,
        int -> i64, float -> f64).  ``returns`` is the kind of the host
        function's single result (a key of :data:`RESULT_KINDS`), whose value
        is returned (int, float, bool, or a pointer as int); ``None`` for none.
        """
        kinds = (
            tuple(signature)
            if signature is not None
            else tuple(_infer_kind(a) for a in args)
        )
        if len(kinds) != len(args):
            raise TypeError(
                f"@{host_fn} takes {len(kinds)} arguments per its signature, "
                f"got {len(args)}"
            )
        for k in kinds:
            if k not in ARG_KINDS:
                raise ValueError(
                    f"unknown argument kind {k!r} (known: {', '.join(ARG_KINDS)})"
                )
        if returns is not None and returns not in RESULT_KINDS:
            raise ValueError(
                f"unknown result kind {returns!r} (known: {', '.join(RESULT_KINDS)})"
            )
        fn = self._entry(host_fn, kinds, returns)
        values = [_convert(k, a) for k, a in zip(kinds, args, strict=True)]
        if returns is None:
            rc = fn(*values)
        else:
            cell = RESULT_KINDS[returns]()
            rc = fn(*values, ctypes.byref(cell))
        if rc != 0:
            raise IrglRuntimeError(f"@{host_fn}: {self.last_error()}")
        if returns is None:
            return None
        if returns == "i1":
            return bool(cell.value)
        return cell.value

    def time_call(
        self,
        host_fn: str,
        *args: object,
        signature: Sequence[str] | None = None,
        returns: str | None = None,
    ) -> float:
        """Like :meth:`call`, but return the wall time in milliseconds.

        The device is synchronized before the clock starts; the time runs until
        ``irgl_device_synchronize()`` returns after the call.  The call's
        result is kept in :attr:`last_result`.
        """
        self.synchronize()
        t0 = time.perf_counter()
        result = self.call(host_fn, *args, signature=signature, returns=returns)
        self.synchronize()
        elapsed = (time.perf_counter() - t0) * 1e3
        self.last_result = result
        return elapsed
