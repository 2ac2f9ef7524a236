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
    lib.dmr_cpu_refine.argtypes = [ctypes.c_void_p] * 6 + [
        ctypes.c_int,  # threads
        ctypes.c_int,  # push order
        ctypes.c_int,  # priority
        ctypes.c_uint,  # seed
        ctypes.c_void_p,  # log rows
        ctypes.c_int,  # log capacity
        ctypes.c_void_p,  # log count
    ]
    lib.dmr_cpu_refine.restype = ctypes.c_int
    return lib


LOG_COLUMNS = ("launch", "items", "fixed", "noop", "lost")
"""The columns of :func:`simulate`'s round log: the launch of ``@refine`` the
round belongs to, its work items (threads with an item), the winners that
re-triangulated a cavity, the winners with nothing to do (their triangle was
already gone or good), and the losers of the Exclusive (retried with the next
launch)."""

ORDERS = ("warps", "threads")
"""Push orders :func:`simulate` models (see ``cpu_driver.cpp``): ``warps``,
the GPU's (warp-aggregated appends, the warps in a random order, the losers'
retries first); ``threads``, every push in thread order."""

PRIORITIES = ("slot", "hashed")
"""Exclusive priorities :func:`simulate` models: ``slot``, the lowering's
(thread id + 1, so the worklist order); ``hashed``, a multiplicative hash of
the thread id (what a lowering that scrambled priorities would do)."""


def refine(
    arrays: dict[str, np.ndarray],
    threads: int = 1,
    mlir: Path = MLIR,
    order: str = "warps",
    seed: int = 1,
) -> int:
    """Refine the device-layout ``arrays`` (xy, tri, nbr, flags, meta from
    ``mesh.to_device_layout``) in place; return the bad triangles left.

    ``threads`` > 1 simulates the GPU's launches of ``@refine`` with that many
    threads (see :func:`simulate`); 1 refines one triangle at a time.
    """
    return simulate(arrays, threads, mlir, order=order, seed=seed, max_rounds=0)[0]


def simulate(
    arrays: dict[str, np.ndarray],
    threads: int,
    mlir: Path = MLIR,
    order: str = "warps",
    priority: str = "slot",
    seed: int = 1,
    max_rounds: int = 1 << 16,
) -> tuple[int, np.ndarray]:
    """:func:`refine`, returning also the log of its Exclusive rounds
    (``int32`` array, one row a round, columns :data:`LOG_COLUMNS`; at most
    ``max_rounds`` rows).

    Each launch of ``@refine`` is simulated as the GPU runs it with
    ``threads`` threads: a worklist of W items takes ceil(W / threads)
    rounds; in each, the items of consecutive slots build their cavities on
    the same mesh, contend with the priority of their thread (``priority``,
    one of :data:`PRIORITIES`), and the winners re-triangulate; the pushes
    go to the next launch's worklist in the ``order`` of :data:`ORDERS`
    (random choices from ``seed``). See ``cpu_driver.cpp``.
    """
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {PRIORITIES}, got {priority!r}")
    lib = _library(helper_source(mlir) + "\n" + DRIVER.read_text())
    names = ("xy", "tri", "nbr", "flags", "meta")
    for name in names:
        a = arrays[name]
        dtype = np.float64 if name == "xy" else np.int32
        if a.dtype != dtype or not a.flags.c_contiguous or not a.flags.writeable:
            raise ValueError(f"{name} must be a writable contiguous {dtype.__name__}")
    # one claim cell per edge of a triangle slot (dmr_edge_id)
    claims = np.zeros(len(arrays["tri"]), dtype=np.int32)
    pointers = [arrays[n].ctypes.data for n in names] + [claims.ctypes.data]
    log = np.zeros((max(max_rounds, 1), len(LOG_COLUMNS)), dtype=np.int32)
    count = ctypes.c_int(0)
    bad = lib.dmr_cpu_refine(
        *pointers,
        threads,
        ORDERS.index(order),
        PRIORITIES.index(priority),
        seed,
        log.ctypes.data,
        max_rounds,
        ctypes.byref(count),
    )
    return int(bad), log[: min(count.value, max_rounds)].copy()


GPU_THREADS = 396 * 256
"""The threads of ``@refine`` on an H100 (396 co-resident blocks of 256)."""


def main(argv: list[str] | None = None) -> int:
    """``python benchmarks/dmr/cpu.py MESH``: refine the mesh spec ``MESH``
    (``mesh.SPEC_FORMS``) on the CPU with the GPU's launches simulated and
    print one JSON object: the checker's verdict, :func:`mesh.summary` and
    the totals of the round log (with ``--rounds``, every round)."""
    import argparse
    import importlib.util
    import json
    import sys

    parser = argparse.ArgumentParser(
        prog="cpu.py", description="DMR on the CPU, GPU launches simulated."
    )
    parser.add_argument("mesh", help="KIND[:N][@SEED], e.g. random:100000@0")
    parser.add_argument("--threads", type=int, default=GPU_THREADS)
    parser.add_argument("--order", choices=ORDERS, default="warps")
    parser.add_argument("--priority", choices=PRIORITIES, default="slot")
    parser.add_argument("--growth", type=float, default=20.0)
    parser.add_argument("--rounds", action="store_true", help="print every round")
    args = parser.parse_args(argv)
    spec = importlib.util.spec_from_file_location(
        "irgl_bench_dmr_app", Path(__file__).with_name("app.py")
    )
    assert spec is not None and spec.loader is not None
    app = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, app)
    spec.loader.exec_module(app)
    mesh = app.mesh
    try:
        parsed = mesh.parse_spec(args.mesh)
        if args.threads < 1:
            raise ValueError(f"--threads must be at least 1, got {args.threads}")
        inp = app.make_input(parsed.points, parsed.seed, args.growth, parsed.kind)
        bad, log = simulate(
            inp.arrays, args.threads, order=args.order, priority=args.priority
        )
    except (ValueError, RuntimeError) as e:
        print(f"cpu.py: error: {e}", file=sys.stderr)
        return 2
    after = mesh.from_device_layout(**inp.arrays)
    totals = dict(zip(LOG_COLUMNS[1:], map(int, log[:, 1:].sum(axis=0)), strict=True))
    record = {
        "mesh": parsed.name,
        "threads": args.threads,
        "check": mesh.check_refined(inp.mesh, after) or "passed",
        "bad_left": bad,
        **mesh.summary(inp.mesh, after),
        "launches": int(log[-1, 0]) + 1 if len(log) else 0,
        "rounds": len(log),
        **totals,
    }
    if args.rounds:
        record["round_log"] = [
            dict(zip(LOG_COLUMNS, map(int, r), strict=True)) for r in log
        ]
    print(json.dumps(record))
    return 0 if record["check"] == "passed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
