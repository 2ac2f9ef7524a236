"""CUDA arrays in and out without copies: DLPack and ``__cuda_array_interface__``.

Out: :func:`cuda_array_interface` is the (version 3) interface dict of a
device buffer, and :func:`to_dlpack` wraps one in a ``"dltensor"`` capsule
(a ``DLManagedTensor`` built with ctypes) that keeps its owner alive until
the consumer calls the deleter, so ``cupy.asarray``, ``cupy.from_dlpack``,
``torch.as_tensor(..., device="cuda")`` and ``torch.from_dlpack`` see a
:class:`~irgl_runner.api.DeviceArray` in place.

In: :func:`foreign_array` reads the buffer of any object exposing either
protocol (CuPy, PyTorch, Numba, JAX, ...) into a :class:`ForeignArray`
(pointer, shape, byte strides, dtype, device, and the objects to keep alive),
refusing host-memory producers with a ``TypeError`` that says what to pass;
:func:`check_memref` validates one against a ``memref`` parameter.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "DLDataType",
    "DLDevice",
    "DLManagedTensor",
    "DLTensor",
    "ForeignArray",
    "KDL_CPU",
    "KDL_CUDA",
    "KDL_CUDA_HOST",
    "KDL_CUDA_MANAGED",
    "check_memref",
    "cuda_array_interface",
    "current_device",
    "dlpack_dtype",
    "foreign_array",
    "memref_shape",
    "pointer_device",
    "read_dlpack",
    "to_dlpack",
]

#: DLPack device types (``DLDeviceType``).
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host (pinned)", 13: "CUDA managed"}

#: DLPack dtype codes (``DLDataTypeCode``) by numpy kind.
_DL_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_DL_KINDS = {code: kind for kind, code in _DL_CODES.items()}


class DLDevice(ctypes.Structure):
    """``DLDevice``: device type and ordinal."""

    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    """``DLDataType``: type code, bits per lane, lanes."""

    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


class DLTensor(ctypes.Structure):
    """``DLTensor`` (strides and shape in elements)."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    """``DLManagedTensor``: a tensor plus its owner's context and deleter."""


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]

# Private prototypes of the capsule API (ctypes.pythonapi's shared function
# objects are left as they are).
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR
)(("PyCapsule_New", ctypes.pythonapi))
_capsule_is_valid_raw = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
)(("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_pointer_raw = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p
)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)
_capsule_pointer = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p
)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi)
)

#: The capsule name (module-level: the capsule keeps a pointer to it).
_DLTENSOR = b"dltensor"

#: Exported tensors not yet deleted: address -> (owner, struct, shape, strides).
_EXPORTS: dict[int, tuple[object, ...]] = {}
_EXPORTS_LOCK = threading.Lock()


@_DELETER
def _delete_managed(managed: Any) -> None:
    """The deleter of exported tensors: drop the owner reference."""
    address = ctypes.cast(managed, ctypes.c_void_p).value
    with _EXPORTS_LOCK:
        _EXPORTS.pop(address or 0, None)


@_CAPSULE_DESTRUCTOR
def _destroy_capsule(capsule: int | None) -> None:
    """A capsule no consumer took (still named "dltensor") deletes its tensor."""
    if capsule and _capsule_is_valid_raw(capsule, _DLTENSOR):
        address = _capsule_pointer_raw(capsule, _DLTENSOR)
        if address:
            managed = DLManagedTensor.from_address(address)
            managed.deleter(ctypes.cast(address, ctypes.POINTER(DLManagedTensor)))


def live_exports() -> int:
    """How many exported tensors have not been deleted yet (for tests)."""
    with _EXPORTS_LOCK:
        return len(_EXPORTS)


def dlpack_dtype(dtype: np.dtype) -> DLDataType:
    """The DLPack type of a numpy dtype (ints, unsigned, floats, bool)."""
    code = _DL_CODES.get(dtype.kind)
    if code is None:
        raise TypeError(f"no DLPack type for {dtype}")
    return DLDataType(code, dtype.itemsize * 8, 1)


def to_dlpack(
    owner: object, ptr: int, length: int, dtype: np.dtype, device_id: int
) -> object:
    """A ``"dltensor"`` capsule for ``length`` elements at device pointer
    ``ptr``; ``owner`` stays referenced until the consumer's deleter runs."""
    managed = DLManagedTensor()
    shape = (ctypes.c_int64 * 1)(length)
    strides = (ctypes.c_int64 * 1)(1)
    tensor = managed.dl_tensor
    tensor.data = ptr
    tensor.device = DLDevice(KDL_CUDA, device_id)
    tensor.ndim = 1
    tensor.dtype = dlpack_dtype(np.dtype(dtype))
    tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed.manager_ctx = None
    managed.deleter = _delete_managed
    address = ctypes.addressof(managed)
    with _EXPORTS_LOCK:
        _EXPORTS[address] = (owner, managed, shape, strides)
    try:
        return _capsule_new(address, _DLTENSOR, _destroy_capsule)
    except BaseException:
        with _EXPORTS_LOCK:
            _EXPORTS.pop(address, None)
        raise


def cuda_array_interface(ptr: int, length: int, dtype: np.dtype) -> dict[str, Any]:
    """The ``__cuda_array_interface__`` (v3) of a 1-D C-contiguous device
    buffer written on the legacy default stream (``stream: 1``)."""
    return {
        "shape": (length,),
        "typestr": np.dtype(dtype).str,
        "data": (ptr, False),
        "version": 3,
        "strides": None,
        "stream": 1,
    }


# ----------------------------------------------------------------- CUDA driver


@functools.cache
def _libcuda() -> Any:
    """The CUDA driver library, or None where there is none."""
    names = ("nvcuda.dll",) if sys.platform == "win32" else ("libcuda.so.1",)
    for name in (*names, "libcuda.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
_CUDA_ERROR_INVALID_VALUE = 1


def pointer_device(ptr: int) -> int | None:
    """The CUDA device ordinal of memory at ``ptr``; -1 if the driver does not
    know it as CUDA memory; None when that cannot be told (no driver)."""
    lib = _libcuda()
    if lib is None:
        return None
    ordinal = ctypes.c_int(-1)
    rc = lib.cuPointerGetAttribute(
        ctypes.byref(ordinal),
        ctypes.c_int(_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL),
        ctypes.c_uint64(ptr),
    )
    if rc == 0:
        return int(ordinal.value)
    return -1 if rc == _CUDA_ERROR_INVALID_VALUE else None


def current_device() -> int | None:
    """The device of the calling thread's current CUDA context (the one the
    runtime uses); None if there is none or no driver."""
    lib = _libcuda()
    if lib is None:
        return None
    device = ctypes.c_int(-1)
    return int(device.value) if lib.cuCtxGetDevice(ctypes.byref(device)) == 0 else None


# ---------------------------------------------------------------------- inputs


@dataclass
class ForeignArray:
    """The buffer of another library's array (byte strides; None: C order)."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    dtype: np.dtype
    readonly: bool = False
    device: int | None = None  # CUDA ordinal, where known
    stream: int | None = None  # CAI: the producer's stream (None: no sync)
    keepalive: list[object] = field(default_factory=list)

    @property
    def c_contiguous(self) -> bool:
        """Whether the elements are dense in C order."""
        if self.strides is None or 0 in self.shape:
            return True
        expected = self.dtype.itemsize
        for extent, stride in zip(
            reversed(self.shape), reversed(self.strides), strict=True
        ):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True


def _type_name(value: object) -> str:
    t = type(value)
    return (
        f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__name__
    )


def _host_memory_error(where: str, value: object, device: str) -> TypeError:
    return TypeError(
        f"{where}: got a {_type_name(value)} in host memory ({device}); a memref "
        "argument must be in GPU memory: copy a host array with "
        "prog.alloc(n, dtype).from_numpy(numpy_array) (e.g. tensor.numpy()), "
        "or pass a CUDA array (CuPy, a PyTorch CUDA tensor, Numba)"
    )


def read_dlpack(capsule: object, where: str = "DLPack capsule") -> ForeignArray:
    """The buffer of an unconsumed ``"dltensor"`` capsule (left unconsumed:
    its destructor frees it once the capsule goes)."""
    is_capsule = type(capsule).__name__ == "PyCapsule"
    name = _capsule_name(capsule) if is_capsule else None
    if name != _DLTENSOR or not _capsule_is_valid(capsule, _DLTENSOR):
        what = f"a capsule named {name!r}" if is_capsule else type(capsule).__name__
        raise TypeError(
            f"{where}: __dlpack__() gave {what}, not an unused 'dltensor' capsule"
        )
    address = _capsule_pointer(capsule, _DLTENSOR)
    tensor = DLManagedTensor.from_address(address).dl_tensor
    dt = tensor.dtype
    kind = _DL_KINDS.get(dt.code)
    if kind is None or dt.lanes != 1 or dt.bits % 8:
        raise TypeError(
            f"{where}: unsupported DLPack dtype (code {dt.code}, "
            f"{dt.bits} bits, {dt.lanes} lanes)"
        )
    try:
        dtype = np.dtype(f"{kind}{dt.bits // 8}") if kind != "b" else np.dtype(bool)
    except TypeError:
        raise TypeError(f"{where}: unsupported DLPack dtype {kind}{dt.bits}") from None
    ndim = int(tensor.ndim)
    shape = tuple(int(tensor.shape[i]) for i in range(ndim))
    strides = (
        tuple(int(tensor.strides[i]) * dtype.itemsize for i in range(ndim))
        if tensor.strides
        else None
    )
    device_type = int(tensor.device.device_type)
    return ForeignArray(
        ptr=int(tensor.data or 0) + int(tensor.byte_offset),
        shape=shape,
        strides=strides,
        dtype=dtype,
        device=int(tensor.device.device_id)
        if device_type in (KDL_CUDA, KDL_CUDA_MANAGED)
        else None,
        keepalive=[capsule],
    )


def _interface(value: object, where: str) -> dict[str, Any] | None:
    """``value.__cuda_array_interface__``, None if it has none."""
    try:
        cai = value.__cuda_array_interface__  # type: ignore[attr-defined]
    except AttributeError:
        return None
    except Exception as e:  # e.g. torch: a tensor that requires grad
        raise TypeError(
            f"{where}: {_type_name(value)}.__cuda_array_interface__ failed: {e}"
        ) from None
    if not isinstance(cai, dict):
        raise TypeError(
            f"{where}: __cuda_array_interface__ is a {type(cai).__name__}, not a dict"
        )
    return cai


def _from_interface(value: object, cai: dict[str, Any], where: str) -> ForeignArray:
    """A :class:`ForeignArray` of a ``__cuda_array_interface__`` dict."""
    try:
        shape = tuple(int(x) for x in cai["shape"])
        dtype = np.dtype(cai["typestr"])
        data = cai.get("data")
        ptr, readonly = (0, False) if data is None else (int(data[0]), bool(data[1]))
        raw = cai.get("strides")
        strides = None if raw is None else tuple(int(x) for x in raw)
        stream = cai.get("stream")
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise TypeError(
            f"{where}: malformed __cuda_array_interface__ ({type(e).__name__}: {e})"
        ) from None
    if cai.get("mask") is not None:
        raise TypeError(f"{where}: masked arrays are not supported")
    if strides is not None and len(strides) != len(shape):
        raise TypeError(f"{where}: {len(strides)} strides for {len(shape)} dimensions")
    return ForeignArray(
        ptr,
        shape,
        strides,
        dtype,
        readonly,
        stream=None if stream is None else int(stream),
        keepalive=[value],
    )


def foreign_array(value: object, where: str) -> ForeignArray | None:
    """The device buffer of ``value`` if it exposes ``__cuda_array_interface__``
    or ``__dlpack__`` (None if neither); host-memory producers (numpy, CPU
    tensors) raise ``TypeError`` saying what to pass instead."""
    device: tuple[int, int] | None = None
    if hasattr(value, "__dlpack_device__"):
        try:
            dev = value.__dlpack_device__()  # type: ignore[attr-defined]
            device = (int(dev[0]), int(dev[1]))
        except Exception as e:
            raise TypeError(
                f"{where}: {_type_name(value)}.__dlpack_device__() failed: {e}"
            ) from None
        if device[0] in (KDL_CPU, KDL_CUDA_HOST):
            raise _host_memory_error(
                where, value, f"DLPack device {_DEVICE_NAMES[device[0]]}"
            )
        if device[0] not in (KDL_CUDA, KDL_CUDA_MANAGED):
            raise TypeError(
                f"{where}: got a {_type_name(value)} on DLPack device type "
                f"{device[0]}, not a CUDA device"
            )
    if isinstance(value, np.ndarray):
        raise _host_memory_error(where, value, "a numpy array")
    cai = _interface(value, where)
    if cai is not None:
        array = _from_interface(value, cai, where)
    elif hasattr(value, "__dlpack__"):
        producer: Any = value
        try:
            try:
                capsule = producer.__dlpack__(stream=1)  # our legacy default stream
            except TypeError:
                capsule = producer.__dlpack__()
        except Exception as e:
            raise TypeError(
                f"{where}: {_type_name(value)}.__dlpack__() failed: {e}"
            ) from None
        array = read_dlpack(capsule, where)
        array.keepalive.insert(0, value)
        if array.device is None:
            raise _host_memory_error(where, value, "its DLPack tensor is not on CUDA")
    else:
        return None
    if device is not None:
        array.device = device[1]
    elif array.device is None and array.ptr:
        ordinal = pointer_device(array.ptr)
        if ordinal == -1:
            raise TypeError(
                f"{where}: the {_type_name(value)} at {array.ptr:#x} is not CUDA "
                "device memory (the driver does not know it)"
            )
        array.device = ordinal
    return array


def memref_shape(mlir_type: str) -> tuple[int | None, ...] | None:
    """The dimensions of ``memref<AxBx...xT>`` (None for ``?``); None if not
    a memref type."""
    if not mlir_type.startswith("memref<"):
        return None
    body = mlir_type[len("memref<") :].rstrip(">").split(",")[0].strip()
    parts = body.split("x")[:-1]
    return tuple(None if p.strip() == "?" else int(p) for p in parts)


def check_memref(
    array: ForeignArray,
    where: str,
    expected_dtype: np.dtype | None,
    dims: Sequence[int | None] | None,
    device: int | None,
) -> None:
    """``TypeError`` unless ``array`` fits a memref parameter of element type
    ``expected_dtype`` and dimensions ``dims`` on CUDA device ``device``
    (None: unchecked)."""
    if expected_dtype is not None and array.dtype != expected_dtype:
        raise TypeError(
            f"{where}: got an array of {array.dtype}, expected {expected_dtype}"
        )
    if dims is not None:
        if len(array.shape) != len(dims):
            raise TypeError(
                f"{where}: got a {len(array.shape)}-D array of shape "
                f"{array.shape}, expected {len(dims)}-D"
            )
        for i, (got, want) in enumerate(zip(array.shape, dims, strict=True)):
            if want is not None and got != want:
                raise TypeError(
                    f"{where}: dimension {i} is {got}, the memref needs {want}"
                )
    if not array.c_contiguous:
        raise TypeError(
            f"{where}: the array is not contiguous (shape {array.shape}, byte "
            f"strides {array.strides}); pass a contiguous copy"
        )
    if array.readonly:
        raise TypeError(f"{where}: the array is read-only; the program may write it")
    if device is not None and array.device is not None and array.device != device:
        raise TypeError(
            f"{where}: the array is on CUDA device {array.device}, but the "
            f"program runs on device {device}"
        )
