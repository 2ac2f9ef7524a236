"""Python implementations of the C text of the DMR benchmark
(`benchmarks/dmr/dmr.mlir`).

DMR keeps its geometry in C (`__host__ __device__` helpers in
`benchmarks/dmr/dmr_mesh.cuh`, which the program `irgl.cinclude`s).
Here those helpers are built once with the host C++ compiler (`$CXX`,
`g++` or `c++`, as `benchmarks/dmr/cpu.py` does), together with a few
`extern "C"` wrappers, and each kernel-level or host-level C text of the
program is registered as a Python function that calls them through ctypes
on the numpy arrays the interpreter uses for memrefs. The host-side helpers
(`dmr_host_get`/`dmr_host_check`, CUDA-only in the program)
and the `atomicAdd` statements are plain Python. Constants (`DMR_NBAD`, ...)
come from the program's own `#define`s.
"""

from __future__ import annotations

import ctypes
import functools
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from irgl_interpreter.c_escape import CImpl
from irgl_interpreter.interpreter import load_program
from irgl_runner import host_cxx
from lowering.convert_irgl_c import file_scope_c

MLIR = Path(__file__).resolve().parent.parent / "benchmarks" / "dmr" / "dmr.mlir"

_WRAPPERS = """
extern "C" {
int irgl_interp_num_triangles(const int* meta) { return dmr_num_triangles(meta); }
int irgl_interp_scatter(int i, int n) { return dmr_scatter(i, n); }
int irgl_interp_alive_and_bad(const double* xy, const int* tri, const int* flags,
                              int t) {
  return dmr_alive_and_bad(xy, tri, flags, t);
}
int irgl_interp_is_bad(const double* xy, const int* tri, int t) {
  return dmr_is_bad(xy, tri, t);
}
int irgl_interp_build_cavity(int t, const double* xy, const int* tri, const int* nbr,
                             const int* flags, int* lock, int* info, double* pt) {
  return dmr_build_cavity(t, xy, tri, nbr, flags, lock, info, pt);
}
int irgl_interp_postpone(int* flags, int* meta, int t) {
  return dmr_postpone(flags, meta, t);
}
int irgl_interp_retriangulate(double* xy, int* tri, int* nbr, int* flags, int* meta,
                              const int* lock, int* info, const double* pt) {
  return dmr_retriangulate(xy, tri, nbr, flags, meta, lock, info, pt);
}
}
"""


class DmrUnavailable(RuntimeError):
    """No C++ compiler, or it failed on the helpers."""


def compiler() -> str | None:
    """The host C++ compiler (``irgl_runner.host_cxx``)."""
    return host_cxx.compiler()


def _helpers(mlir: Path) -> list[str]:
    """The lines of the program's file-scope C (cblocks and included headers)."""
    module = load_program(mlir)
    texts = file_scope_c(module, [str(mlir.resolve().parent)])
    return "\n".join(texts).split("\n")


def _constants(lines: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for line in lines:
        match = re.fullmatch(r"#define (DMR_\w+) \(?(-?\d+)\)?", line.strip())
        if match:
            found[match[1]] = int(match[2])
    return found


@functools.cache
def _library(mlir: Path) -> tuple[ctypes.CDLL, dict[str, int]]:
    lines = _helpers(mlir)
    source = "\n".join(lines) + "\n" + _WRAPPERS
    try:
        lib = host_cxx.build_shared_library(source, "interp_dmr_helpers")
    except host_cxx.HostBuildError as e:
        raise DmrUnavailable(f"DMR's C helpers: {e}") from None
    p, i = ctypes.c_void_p, ctypes.c_int
    signatures = {
        "irgl_interp_num_triangles": [p],
        "irgl_interp_scatter": [i, i],
        "irgl_interp_alive_and_bad": [p, p, p, i],
        "irgl_interp_is_bad": [p, p, i],
        "irgl_interp_build_cavity": [i, p, p, p, p, p, p, p],
        "irgl_interp_postpone": [p, p, i],
        "irgl_interp_retriangulate": [p] * 8,
    }
    for name, argtypes in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int
    return lib, _constants(lines)


def _ptr(array: np.ndarray) -> int:
    if not array.flags.c_contiguous:
        raise ValueError("DMR helpers need contiguous arrays")
    return array.ctypes.data


def c_impls(mlir: Path = MLIR) -> Mapping[str, CImpl]:
    """The Python implementation of every non-module-level C text of DMR."""
    lib, k = _library(mlir)
    nbad, initial_bad = k["DMR_NBAD"], k["DMR_INITIAL_BAD"]
    gave_up, overflow, deleted = k["DMR_GAVE_UP"], k["DMR_OVERFLOW"], k["DMR_DELETED"]

    def host_check(meta: np.ndarray) -> None:
        if meta[overflow]:
            raise RuntimeError(
                "dmr: mesh capacity exceeded (more triangles or points than allocated)"
            )

    def add(slot: int) -> CImpl:
        def run(meta: np.ndarray) -> None:
            meta[slot] += 1

        return run

    def report(what: str, slot: int) -> CImpl:
        def run(meta: np.ndarray) -> None:
            print(f"dmr: {what} bad triangles: {int(meta[slot])}", file=sys.stderr)

        return run

    def set_initial(meta: np.ndarray) -> None:
        meta[initial_bad] = meta[nbad]

    def reset(meta: np.ndarray) -> None:
        meta[nbad] = 0

    return {
        "dmr_num_triangles($0)": lambda meta: lib.irgl_interp_num_triangles(_ptr(meta)),
        "dmr_scatter($0, $1)": lambda i, n: lib.irgl_interp_scatter(i, n),
        "dmr_alive_and_bad($0, $1, $2, $3)": lambda xy, tri, flags, t: bool(
            lib.irgl_interp_alive_and_bad(_ptr(xy), _ptr(tri), _ptr(flags), t)
        ),
        "dmr_is_bad($0, $1, $2)": lambda xy, tri, t: bool(
            lib.irgl_interp_is_bad(_ptr(xy), _ptr(tri), t)
        ),
        "dmr_build_cavity($0, $1, $2, $3, $4, $5, $6, $7)": (
            lambda t, *arrays: lib.irgl_interp_build_cavity(
                t, *(_ptr(a) for a in arrays)
            )
        ),
        "dmr_postpone($0, $1, $2)": lambda flags, meta, t: bool(
            lib.irgl_interp_postpone(_ptr(flags), _ptr(meta), t)
        ),
        "dmr_retriangulate($0, $1, $2, $3, $4, $5, $6, $7)": (
            lambda *arrays: lib.irgl_interp_retriangulate(*(_ptr(a) for a in arrays))
        ),
        "!($0[$1] & DMR_DELETED)": lambda flags, t: not (int(flags[t]) & deleted),
        "atomicAdd(&$0[DMR_NBAD], 1);": add(nbad),
        "atomicAdd(&$0[DMR_GAVE_UP], 1);": add(gave_up),
        "$0[DMR_NBAD] = 0;": reset,
        "$0[DMR_INITIAL_BAD] = $0[DMR_NBAD];": set_initial,
        'fprintf(stderr, "dmr: initial bad triangles: %d\\n", '
        "dmr_host_get($0, DMR_INITIAL_BAD));": report("initial", initial_bad),
        'fprintf(stderr, "dmr: final bad triangles: %d\\n", '
        "dmr_host_get($0, DMR_NBAD));": report("final", nbad),
        "dmr_host_check($0);": host_check,
        "dmr_host_get($0, DMR_NBAD)": lambda meta: int(meta[nbad]),
    }
