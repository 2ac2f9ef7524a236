"""Measure both PageRank variants (benchmarks/pr, benchmarks/pr_pull) on a GPU.

    python3 benchmarks/pr_pull/measure.py --graph rmat:18 --graph rmat:20 \
        --tolerance 1e-6 [--reps 5] [--out results.jsonl]

For each variant, graph and tolerance it prints one JSON line: the median
time of the host function (as ``irgl-bench run`` times it), the rounds of
the pull recurrence (the same as the reference's, whose recurrence the pull
version runs), whether the app's check passed, and for the pull variant the
bytes a round must move at least (edge targets ``4 E``, 32-bit indices;
row offsets and the per-node arrays ``48 N``; the gathered contributions
counted once, as they stay in L2 on these graphs) and the GB/s that
makes.  ``--copy-gbs`` also times a device-to-device copy (through ctypes
on libcudart) for comparison. ``--floor`` (needs CuPy) measures a round's
memory floor on the GPU instead of assuming one: a kernel that does only a
round's compulsory edge work with no imbalance (one thread an edge, in
storage order: each edge's target read, its contribution gathered, the sums
kept in registers) plus the per-node bytes at the copy bandwidth.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from irgl_runner.api import Program, build
from irgl_runner.apps import execute, load_app
from irgl_runner.graph_args import resolve_graph
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import pull_step

VARIANTS = ("pr", "pr_pull")


def pull_rounds(graph: CSRGraph, tol: float, damping: float = 0.85) -> int:
    """Rounds the program runs: from the residual ``u`` (1, or ``1 - d``
    where a node has over a quarter of the edges), ``r <- d A^T D^-1 r``
    (plus ``1 - d - u`` in the first round: the residual of the guess ``u``)
    until, after a round, ``max |r| < tol`` (``tol`` unnormalized, as the
    program gets it)."""
    n = graph.num_nodes
    step = pull_step(graph, damping)
    star = int(graph.degrees().max(initial=0)) > graph.num_edges // 4
    unit = 1.0 - damping if star else 1.0
    r: np.ndarray = step(np.full(n, unit)) + (1.0 - damping - unit)
    rounds = 1
    while n and np.abs(r).max() >= tol:
        r = step(r)
        rounds += 1
    return rounds


def copy_gbs(nbytes: int = 1 << 30, reps: int = 10) -> float | None:
    """Device-to-device cudaMemcpy bandwidth (read + write bytes per second)."""
    name = ctypes.util.find_library("cudart") or "libcudart.so"
    try:
        rt = ctypes.CDLL(name)
    except OSError:
        return None
    a, b = ctypes.c_void_p(), ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(a), ctypes.c_size_t(nbytes)) or rt.cudaMalloc(
        ctypes.byref(b), ctypes.c_size_t(nbytes)
    ):
        return None
    d2d = 3
    times = []
    for _ in range(reps + 1):
        rt.cudaDeviceSynchronize()
        start = time.perf_counter()
        rt.cudaMemcpy(b, a, ctypes.c_size_t(nbytes), d2d)
        rt.cudaDeviceSynchronize()
        times.append(time.perf_counter() - start)
    rt.cudaFree(a)
    rt.cudaFree(b)
    return 2 * nbytes / statistics.median(times[1:]) / 1e9


#: The floor kernel: every edge's target read and its f64 contribution
#: gathered, one thread an edge in storage order (no per-node imbalance, all
#: the loads in flight the GPU allows); one store a block so nothing is
#: optimized away.
_GATHER = r"""
extern "C" __global__ void gather(const int* dst, const double* x, long long m,
                                  double* out) {
  double s = 0.0;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m;
       e += (long long)gridDim.x * blockDim.x)
    s += x[dst[e]];
  for (int k = 16; k > 0; k >>= 1) s += __shfl_down_sync(0xffffffffu, s, k);
  if ((threadIdx.x & 31) == 0) atomicAdd(out + blockIdx.x, s);
}
"""


def round_floor_us(graph: CSRGraph, reps: int = 50) -> dict[str, float] | None:
    """A pull round's measured floor on this GPU (None without CuPy): the
    floor kernel's median time over ``reps`` launches, and with the per-node
    bytes (``48 N``: offsets, two ranks, two residual arrays) at the measured
    copy bandwidth added."""
    try:
        import cupy as cp  # type: ignore[import-not-found]
    except ImportError:
        return None
    m = graph.num_edges
    dst = cp.asarray(np.asarray(graph.edge_dst), dtype=cp.int32)
    x = cp.asarray(np.random.default_rng(1).random(graph.num_nodes))
    blocks = 4 * cp.cuda.Device().attributes["MultiProcessorCount"] * 2
    out = cp.zeros(blocks, dtype=cp.float64)
    kernel = cp.RawKernel(_GATHER, "gather")
    args = (dst, x, cp.int64(m), out)
    kernel((blocks,), (256,), args)  # load and warm
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        kernel((blocks,), (256,), args)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1000)
    gather_us = statistics.median(times)
    gbs = copy_gbs(1 << 28) or 0.0
    nodes_us = 48 * graph.num_nodes / (gbs * 1e3) if gbs else 0.0
    return {
        "gather_us": round(gather_us, 2),
        "round_floor_us": round(gather_us + nodes_us, 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Measure both PageRank variants.")
    p.add_argument("--graph", action="append", required=True)
    p.add_argument("--tolerance", action="append", type=float, default=None)
    p.add_argument("--variant", action="append", choices=VARIANTS, default=None)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--no-check", action="store_true")
    p.add_argument("--copy-gbs", action="store_true")
    p.add_argument(
        "--floor",
        action="store_true",
        help="measure each graph's round floor on the GPU (needs CuPy)",
    )
    p.add_argument(
        "-p",
        "--pipeline",
        action="append",
        default=None,
        help="pass pipeline(s) to lower with (default lower-irgl); one row each",
    )
    args = p.parse_args(argv)
    tolerances = args.tolerance or [1e-6]
    out = args.out.open("a") if args.out else None

    def emit(row: dict[str, object]) -> None:
        line = json.dumps(row)
        print(line, flush=True)
        if out is not None:
            out.write(line + "\n")
            out.flush()

    if args.copy_gbs:
        emit({"copy_gbs": copy_gbs()})
    pipelines = args.pipeline or ["lower-irgl"]
    programs = {
        (v, pipeline): Program(build(load_app(v).mlir, pipeline))
        for v in args.variant or VARIANTS
        for pipeline in pipelines
    }
    for spec in args.graph:
        graph, _ = resolve_graph(spec, True, False, Path("/tmp/irgl-graph-cache"))
        floor = round_floor_us(graph) if args.floor else None
        for tol in tolerances:
            rounds = pull_rounds(graph, tol * graph.num_nodes)
            for (name, pipeline), program in programs.items():
                base = load_app(name)
                app = dataclasses.replace(
                    base, params={**base.params, "tolerance": tol}
                )
                ctx = execute(app, program, graph, 0, reps=args.reps, warmup=1)
                ms = statistics.median(ctx.times_ms)
                row: dict[str, object] = {
                    "app": name,
                    "pipeline": pipeline,
                    "graph": spec,
                    "nodes": graph.num_nodes,
                    "edges": graph.num_edges,
                    "tolerance": tol,
                    "median_ms": round(ms, 3),
                    "times_ms": [round(t, 3) for t in ctx.times_ms],
                }
                if name == "pr_pull":
                    moved = rounds * (4 * graph.num_edges + 48 * graph.num_nodes)
                    row |= {
                        "rounds": rounds,
                        "us_per_round": round(1000 * ms / rounds, 2),
                        "gb_per_s": round(moved / (ms / 1000) / 1e9, 1),
                    }
                    if floor is not None:
                        row |= floor
                        row["round_over_floor"] = round(
                            1000 * ms / rounds / floor["round_floor_us"], 2
                        )
                if not args.no_check and app.check is not None:
                    row["check"] = app.check(ctx) or "passed"
                emit(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
