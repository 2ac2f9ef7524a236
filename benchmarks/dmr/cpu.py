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
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

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
    """The host C++ compiler: ``$CXX``, ``g++`` or ``c++``; None if absent."""
    for name in (os.environ.get("CXX"), "g++", "c++"):
        if name and shutil.which(name):
            return name
    return None


@functools.cache
def _library(source: str) -> ctypes.CDLL:
    cxx = compiler()
    if cxx is None:
        raise RuntimeError("no C++ compiler (set $CXX)")
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"irgl_dmr_cpu_{key}_{os.getpid()}"
    out.mkdir(exist_ok=True)
    cpp, so = out / "dmr_cpu.cpp", out / "libdmr_cpu.so"
    cpp.write_text(source)
    proc = subprocess.run(
        [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-o", str(so), str(cpp)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{cxx} failed on {cpp}:\n{proc.stderr}")
    lib = ctypes.CDLL(str(so))
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
