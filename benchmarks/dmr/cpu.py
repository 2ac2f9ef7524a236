"""DMR on the CPU with the C helpers of ``dmr.mlir``.

The C of ``dmr.mlir`` (its ``irgl.cinclude``d ``dmr_mesh.cuh``) is
``__host__ __device__``; this builds it with the host C++ compiler (``$CXX``
or ``g++``) next to ``cpu_driver.cpp``, which does what ``@main`` and
``@refine`` do, so that the geometry, and the kernel's rounds of Exclusive
(simulated), can be tested without a GPU; one thread at a time it is also a
CPU baseline.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import numpy as np

from irgl_runner import host_cxx

MLIR = Path(__file__).with_name("dmr.mlir")

DRIVER = Path(__file__).with_name("cpu_driver.cpp")


def helper_source(mlir: Path = MLIR) -> str:
    """The file-scope C of ``mlir``: its module-level ``irgl.cblock``s and
    ``irgl.cinclude``d headers (found beside ``mlir``), in order."""
    from xdsl.context import Context
    from xdsl.dialects import arith, builtin, memref, scf
    from xdsl.parser import Parser

    from irgl_dialect.dialect import Irgl
    from lowering.convert_irgl_c import file_scope_c

    ctx = Context()
    for dialect in (builtin.Builtin, arith.Arith, memref.MemRef, scf.Scf, Irgl):
        ctx.load_dialect(dialect)
    module = Parser(ctx, mlir.read_text(), str(mlir)).parse_module()
    return "\n".join(file_scope_c(module, [str(mlir.resolve().parent)]))


def compiler() -> str | None:
    """The host C++ compiler (``irgl_runner.host_cxx``)."""
    return host_cxx.compiler()


@functools.cache
def _library(source: str) -> ctypes.CDLL:
    try:
        lib = host_cxx.build_shared_library(source, "dmr_cpu")
    except host_cxx.HostBuildError as e:
        raise RuntimeError(str(e)) from None
    lib.dmr_cpu_refine.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int]
    lib.dmr_cpu_refine.restype = ctypes.c_int
    return lib


def refine(arrays: dict[str, np.ndarray], threads: int = 1, mlir: Path = MLIR) -> int:
    """Refine the device-layout ``arrays`` (xy, tri, nbr, flags, meta from
    ``mesh.to_device_layout``) in place; return the bad triangles left.

    ``threads`` > 1 simulates the GPU's rounds: that many bad triangles build
    their cavities on the same mesh and go through the Exclusive protocol
    together (1: one at a time).
    """
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    lib = _library(helper_source(mlir) + "\n" + DRIVER.read_text())
    names = ("xy", "tri", "nbr", "flags", "meta")
    for name in names:
        a = arrays[name]
        dtype = np.float64 if name == "xy" else np.int32
        if a.dtype != dtype or not a.flags.c_contiguous or not a.flags.writeable:
            raise ValueError(f"{name} must be a writable contiguous {dtype.__name__}")
    claims = np.zeros(len(arrays["flags"]), dtype=np.int32)
    pointers = [arrays[n].ctypes.data for n in names] + [claims.ctypes.data]
    return int(lib.dmr_cpu_refine(*pointers, threads))
