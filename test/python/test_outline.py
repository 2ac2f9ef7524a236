# ruff: noqa: E501
"""Iteration outlining (lowering/outline_iterations.py).

Without a GPU: which benchmarks are outlined (the remarks), the control
kernel of an outlined program is a cooperative `__global__` launched once,
and the emitted CUDA builds with nvcc. With a GPU (`gpu` marker): an
outlined Iterate whose kernel retries every item once returns the carried
level, writes what the host loop writes, and a worklist overflow inside the
control kernel is reported as an error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import has_gpu, irgl_opt, nvcc_object_errors, shared_build_cache

ROOT = Path(__file__).resolve().parents[2]

#: An Iterate whose kernel retries each item once (the first attempt fails),
#: then stamps it with the carried level and pushes its successor (up to
#: %limit); the host function returns the last level.
RETRY_PROGRAM = """
irgl.kernel @step(%hits: memref<?xi32>, %tries: memref<?xi32>, %lvl: i32, %limit: index) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %c1 = arith.constant 1 : index
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %old = "memref.atomic_rmw"(%one, %tries, %n) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
    %first = arith.cmpi eq, %old, %zero : i32
    scf.if %first {
      irgl.retry %n
    } else {
      memref.store %lvl, %hits[%n] : memref<?xi32>
      %next = arith.addi %n, %c1 : index
      %more = arith.cmpi slt, %next, %limit : index
      scf.if %more {
        irgl.wl.push %next
      }
    }
  }
}
irgl.kernel host @main(%hits: memref<?xi32>, %tries: memref<?xi32>, %limit: index, %cap: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : i32
  %last = irgl.iterate @step(%hits, %tries, %l = %c1, %limit) : (memref<?xi32>, memref<?xi32>, i32, index) initial [%c0] capacity %cap {
    %next = arith.addi %l, %c1 : i32
    irgl.yield %next : i32
  }
  irgl.return %last : i32
}
"""

#: A looping Pipe whose kernel pushes three items per item: it overflows a
#: small worklist.
OVERFLOW_PROGRAM = """
irgl.kernel @grow(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
    irgl.wl.push %n
    irgl.wl.push %n
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %cap: index) {
  %c0 = arith.constant 0 : index
  irgl.pipe initial [%c0] capacity %cap {
    irgl.invoke @grow(%x) : (memref<?xi32>)
  }
}
"""


def _lower(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return irgl_opt(str(path), *args)


@pytest.mark.parametrize(
    ("app", "outlined"),
    [
        ("bfs", True),
        ("sssp", True),
        ("mis", True),
        ("mst", True),
        ("pr", True),
        ("cc", False),
        ("dmr", True),
        ("tc", None),
    ],
)
def test_remarks_say_which_loops_are_outlined(app: str, outlined: bool | None) -> None:
    mlir = ROOT / "benchmarks" / app / f"{app}.mlir"
    proc = _lower(mlir, "-p", "lower-irgl{remarks=true}")
    assert proc.returncode == 0, proc.stderr
    remarks = [  # irgl-exclusive-footprint's and irgl-stamp-test's aside
        line
        for line in proc.stderr.splitlines()
        if line.startswith("remark:")
        and "irgl.exclusive:" not in line
        and "irgl-stamp-test:" not in line
    ]
    if outlined is None:
        assert remarks == []  # no Iterate or Pipe at all
        return
    assert remarks, proc.stderr
    first = remarks[0]
    if outlined:
        assert "outlined into control kernel @main_control" in first
        assert "main_control" in proc.stdout
    else:
        assert "not outlined:" in first
        assert "main_control" not in proc.stdout


def test_outline_off_keeps_host_loops() -> None:
    mlir = ROOT / "benchmarks" / "bfs" / "bfs.mlir"
    inline = "cuda{inline-runtime=false}"
    on = _lower(mlir, "--lower-irgl", "-t", inline)
    off = _lower(mlir, "-p", "lower-irgl{outline=false}", "-t", inline)
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    assert "irgl::launch_cooperative(main_control" in on.stdout
    assert "__device__ void bfs_device(" in on.stdout
    assert "irgl_pipe_advance" not in on.stdout
    assert "main_control" not in off.stdout
    assert "irgl_pipe_advance(" in off.stdout


def test_bfs_outlines_each_of_its_two_ways() -> None:
    """Two-hop (sparse graphs), and top-down then bottom-up (dense graphs):
    each way's Pipe, @init inside, becomes one control kernel, launched
    once; the second runs a copy of @init for its block size, so nothing
    else is launched."""
    mlir = ROOT / "benchmarks" / "bfs" / "bfs.mlir"
    proc = _lower(mlir, "-p", "lower-irgl{remarks=true}")
    assert proc.returncode == 0, proc.stderr
    inside = [
        line.removeprefix("remark: irgl.iterate ").split(" in @main")[0]
        for line in proc.stderr.splitlines()
        if "outlined inside control kernel" in line
    ]
    assert inside == ["@bfs_two_hop", "@bfs", "@bfs_bottom_up"], proc.stderr
    assert (
        "@init runs in a control kernel of block size 256: this one runs a "
        "copy, @init_b1024" in proc.stderr
    )
    launched = [
        line.split("kernel = @irgl_kernels::@")[1].split(",")[0]
        for line in proc.stdout.splitlines()
        if "gpu.launch_func" in line
    ]
    assert launched == ["main_control", "main_control1"]


@pytest.mark.parametrize("app", ["bfs", "mst", "retry"])
def test_outlined_cuda_compiles(app: str, tmp_path: Path) -> None:
    if app == "retry":
        mlir = tmp_path / "retry.mlir"
        mlir.write_text(RETRY_PROGRAM)
    else:
        mlir = ROOT / "benchmarks" / app / f"{app}.mlir"
    proc = _lower(mlir, "--lower-irgl", "-t", "cuda")
    assert proc.returncode == 0, proc.stderr
    assert "irgl::launch_cooperative(main_control" in proc.stdout
    assert nvcc_object_errors(proc.stdout) is None


def _library(source: str, tmp_path: Path, *options: str) -> Path:
    """Build `source` with `lower-irgl{options}` (the ABI manifest beside)."""
    from irgl_runner.api import build

    mlir = tmp_path / "program.mlir"
    mlir.write_text(source)
    pipeline = f"lower-irgl{{{' '.join(options)}}}"
    return build(mlir, pipeline, cache=shared_build_cache())


def _program(source: str, tmp_path: Path, *options: str):
    from irgl_runner.api import Program

    return Program(_library(source, tmp_path, *options))


def test_gpu_programs_build_with_their_abi(tmp_path: Path) -> None:
    """The programs of the GPU tests below build, and their entry points take
    the arguments those tests pass (checked without a GPU)."""
    from cuda_emitter.host_abi import load_manifest, manifest_path

    for source, arity in ((RETRY_PROGRAM, 4), (OVERFLOW_PROGRAM, 2)):
        library = _library(source, tmp_path, "outline=true")
        entries = load_manifest(manifest_path(library).read_text())
        (main,) = [e for e in entries if e.name == "main"]
        assert len(main.params) == arity


@pytest.mark.gpu
@pytest.mark.parametrize("outline", ["true", "false"])
def test_retry_iterate_on_gpu(outline: str, tmp_path: Path) -> None:
    assert has_gpu()
    program = _program(RETRY_PROGRAM, tmp_path, f"outline={outline}")
    limit = 300
    hits = program.alloc(limit, np.int32).fill(0)
    tries = program.alloc(limit, np.int32).fill(0)
    last = program.call("main", hits, tries, limit, 64)
    assert last == limit + 1
    np.testing.assert_array_equal(hits.to_numpy(), np.arange(1, limit + 1))
    np.testing.assert_array_equal(tries.to_numpy(), np.full(limit, 2))


@pytest.mark.gpu
@pytest.mark.parametrize("outline", ["true", "false"])
def test_overflow_in_control_kernel_is_an_error(outline: str, tmp_path: Path) -> None:
    from irgl_runner.api import IrglRuntimeError

    assert has_gpu()
    program = _program(OVERFLOW_PROGRAM, tmp_path, f"outline={outline}")
    x = program.alloc(4, np.int32).fill(0)
    with pytest.raises(IrglRuntimeError, match="worklist overflow"):
        program.call("main", x, 16)


@pytest.mark.gpu
def test_outlined_call_after_an_overflow(tmp_path: Path) -> None:
    """A control kernel's worklist overflow is reported, and the next
    outlined call on the host thread (another program, which takes the
    same mapped status word) runs clean, twice over."""
    from irgl_runner import generators
    from irgl_runner.api import IrglRuntimeError, Program, build
    from irgl_runner.apps import execute, load_app

    assert has_gpu()
    overflow = _program(OVERFLOW_PROGRAM, tmp_path, "outline=true")
    x = overflow.alloc(4, np.int32).fill(0)
    app = load_app("bfs")
    bfs = Program(build(app.mlir))
    graph = generators.generate("rmat:10")
    assert app.check is not None
    for _ in range(2):
        with pytest.raises(IrglRuntimeError, match="worklist overflow"):
            overflow.call("main", x, 16)
        ctx = execute(app, bfs, graph, source=1, reps=1, warmup=0)
        assert app.check(ctx) is None


@pytest.mark.parametrize("app", ["bfs", "sssp"])
def test_block_push_cuda_compiles(app: str, tmp_path: Path) -> None:
    """lower-irgl{block_push=true}: pushes staged per block, in the kernels
    and in the outlined device bodies; the CUDA builds."""
    mlir = ROOT / "benchmarks" / app / f"{app}.mlir"
    proc = _lower(mlir, "-p", "lower-irgl{block_push=true}", "-t", "cuda")
    assert proc.returncode == 0, proc.stderr
    code = proc.stdout.split("// ---- end irgl_runtime.cuh ----")[1]
    assert "irgl_wl_push(" not in code
    assert code.count("irgl_wl_block_begin(") == code.count("irgl_wl_block_flush(")
    assert code.count("irgl_wl_block_begin(") >= 2  # the kernel and its body
    assert nvcc_object_errors(proc.stdout) is None


REDUCE_PROGRAM = """
irgl.kernel @step(%x: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    %v = memref.load %x[%i] : memref<?xi32>
    %c1 = arith.constant 1 : i32
    %w = arith.addi %v, %c1 : i32
    memref.store %w, %x[%i] : memref<?xi32>
    %c9 = arith.constant 9 : i32
    %small = arith.cmpi slt, %w, %c9 : i32
    irgl.reduce_and_return %small
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index) {
  irgl.iterate while any @step(%x, %n) : (memref<?xi32>, index) {
  }
  irgl.return
}
"""


@pytest.mark.parametrize("outline", ["true", "false"])
def test_block_reduce_cuda_compiles(outline: str, tmp_path: Path) -> None:
    """lower-irgl{block_reduce=true}: ReduceAndReturn goes through the block's
    flag in the kernel (or its outlined device body); the CUDA builds."""
    mlir = tmp_path / "reduce.mlir"
    mlir.write_text(REDUCE_PROGRAM)
    pipeline = f"lower-irgl{{block_reduce=true outline={outline}}}"
    proc = _lower(mlir, "-p", pipeline, "-t", "cuda")
    assert proc.returncode == 0, proc.stderr
    code = proc.stdout.split("// ---- end irgl_runtime.cuh ----")[1]
    assert "irgl_cell_reduce(" not in code
    # the kernel, or (outlined) its device body: the control kernel runs
    # every invocation, so the kernel itself is not emitted
    kernels = 1
    assert code.count("irgl_cell_block_begin(") == kernels
    assert code.count("irgl_cell_reduce_block(") == kernels
    assert code.count("irgl_cell_block_flush(") == kernels
    assert nvcc_object_errors(proc.stdout) is None


@pytest.mark.gpu
@pytest.mark.parametrize("options", ["block_reduce=true", "block_reduce=false"])
def test_block_reduce_on_gpu(options: str, tmp_path: Path) -> None:
    assert has_gpu()
    program = _program(REDUCE_PROGRAM, tmp_path, options)
    x = program.alloc(5000, np.int32).fill(0)
    program.call("main", x, 5000)
    np.testing.assert_array_equal(x.to_numpy(), np.full(5000, 9))


def _barrier_profile_source() -> str:
    from irgl_runner.apps import load_app
    from irgl_runner.build import emit_cuda

    return emit_cuda(load_app("bfs").mlir, "lower-irgl")


def test_barrier_profile_compiles(tmp_path: Path) -> None:
    """-DIRGL_PROFILE_CONTROL (the control kernels' barrier profile) builds
    without warnings; without it the runtime has no profile counters."""
    from conftest import COMPILE_CHECK_FLAGS, nvcc_path

    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    source = tmp_path / "bfs.cu"
    source.write_text(_barrier_profile_source())
    proc = subprocess.run(
        [
            nvcc,
            "-arch=sm_90",
            "-std=c++17",
            *COMPILE_CHECK_FLAGS,
            "-DIRGL_PROFILE_CONTROL",
            "-c",
            str(source),
            "-o",
            str(tmp_path / "bfs.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr.lower()


def test_extra_nvcc_flags_are_part_of_the_cache_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from irgl_runner.build import extra_nvcc_flags, library_path

    monkeypatch.delenv("IRGL_NVCC_FLAGS", raising=False)
    plain = library_path("__global__ void k() {}", cache=tmp_path)
    assert extra_nvcc_flags() == []
    monkeypatch.setenv("IRGL_NVCC_FLAGS", "-DIRGL_PROFILE_CONTROL  -lineinfo")
    assert extra_nvcc_flags() == ["-DIRGL_PROFILE_CONTROL", "-lineinfo"]
    assert library_path("__global__ void k() {}", cache=tmp_path) != plain


def _profile(tmp_path: Path, pipeline: str) -> tuple[int, int, int, int, int]:
    """The barrier profile of BFS on a 64x64 grid lowered with `pipeline`:
    grid barriers, blocks, the last block's and the mean wait (ns), and the
    small-worklist steps."""
    import os
    import re

    env = {
        **os.environ,
        "IRGL_NVCC_FLAGS": "-DIRGL_PROFILE_CONTROL",
        "IRGL_CACHE_DIR": str(tmp_path / "cache"),
    }
    command = [sys.executable, "-m", "irgl_runner.bench_cli", "run", "bfs"]
    command += ["--graph", "grid:64x64", "--reps", "1", "--no-cache", "-p", pipeline]
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    found = re.findall(
        r"irgl profile: (\d+) grid barriers of (\d+) blocks, (\d+) ns per barrier "
        r"for the last block to arrive, (\d+) ns per barrier and block .*, "
        r"(\d+) small-worklist steps",
        proc.stderr,
    )
    assert found, proc.stderr
    barriers, blocks, last, mean, steps = map(int, found[-1])
    return barriers, blocks, last, mean, steps


@pytest.mark.gpu
def test_barrier_profile_counts_the_levels(tmp_path: Path) -> None:
    """Built with the profile, the outlined BFS on a 64x64 grid (127 levels
    from a corner, at most 64 nodes each; a grid has 4 edges per node, so BFS
    runs its two-hop Iterate: two levels a round, 64 rounds) reports in grid
    mode a grid barrier per round, the last block's wait no longer than the
    mean one, and no small-worklist step; in the small-worklist mode every
    round is a step of block 0 alone, between two grid barriers."""
    rounds = 64
    assert has_gpu()
    barriers, blocks, last, mean, steps = _profile(
        tmp_path, "lower-irgl{small_worklist=0}"
    )
    assert barriers >= rounds - 1 and blocks >= 2
    # the last block to arrive waits least: the barrier alone
    assert 0 < last <= mean
    assert steps == 0  # small_worklist=0: no step of block 0 alone
    barriers, blocks, _, _, steps = _profile(tmp_path, "lower-irgl{small_worklist=256}")
    assert steps >= rounds - 1 and barriers <= 4
