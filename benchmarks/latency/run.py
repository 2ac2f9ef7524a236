"""Build and run latency.cu: the latencies of the pieces of one level of a
high-diameter traversal on this GPU (grid and block barriers, dependent L2
and DRAM loads, a dependent atomic, a round of worklist pushes, a host
launch and synchronization), as one JSON line; `clusters` adds, for
thread-block clusters of 2 to 16 blocks in a cooperative launch, the cost of
a cluster barrier and of the grid barrier beside it.

    python benchmarks/latency/run.py                 # nvcc, then run
    python benchmarks/latency/run.py --binary PATH   # run a prebuilt one
    python benchmarks/latency/run.py --build-only -o PATH

With `--level-us X` it also prints how many of each piece one level of X
microseconds could hold (a budget for the breakdown in RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(output: Path, arch: str) -> None:
    """Compile latency.cu with nvcc ($NVCC or the one on PATH)."""
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc")
    if nvcc is None:
        sys.exit("latency: nvcc not found (set NVCC or PATH)")
    cmd = [nvcc, f"-arch={arch}", "-std=c++17", "-O2", str(HERE / "latency.cu")]
    subprocess.run([*cmd, "-o", str(output)], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Latencies of the pieces of a traversal level."
    )
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--binary", type=Path, help="a prebuilt latency binary")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("-o", "--output", type=Path, help="where to build")
    parser.add_argument("--level-us", type=float, help="a level's measured time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        binary = args.binary
        if binary is None:
            binary = args.output or Path(tmp) / "latency"
            build(binary, args.arch)
        if args.build_only:
            return 0
        proc = subprocess.run([str(binary)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    figures = json.loads(proc.stdout)
    print(json.dumps(figures))
    if args.level_us is not None:
        level_ns = args.level_us * 1000.0
        for key, value in figures.items():
            if key.endswith("_ns") and value > 0:
                print(
                    f"{key:>22}: {value:9.1f} ns  ({level_ns / value:6.1f} per level)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
