# ruff: noqa: E501
"""The small-worklist mode of control kernels (irgl-outline-iterations
`small_worklist`): while a loop's worklist holds at most N items, block 0
alone runs its rounds with block barriers.

Without a GPU: which benchmarks' control loops get the mode (the remarks),
and the emitted CUDA of BFS, SSSP, MIS, PR and of a Pipe with a retry
worklist builds with nvcc with the mode on. With a GPU (`gpu` marker): every
app whose control kernel uses the mode agrees with the CPU references with
the mode off, at its default threshold, at a low threshold that graphs with
bursts of work cross both ways many times, and with every round on block 0;
a retrying Pipe run by block 0 ends like the host loop.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import has_gpu, irgl_opt, nvcc_object_errors, shared_build_cache

from irgl_runner import generators
from irgl_runner.apps import execute, load_app
from irgl_runner.graph_args import default_source
from irgl_runner.graphs import COOGraph, CSRGraph, clean

ROOT = Path(__file__).resolve().parents[2]

#: Apps whose control loop has the mode, and those whose loop has not (why).
MODE_APPS = ["bfs", "sssp", "mis", "pr"]
NO_MODE = {"mst": "@hook has no worklist"}

#: Pipelines of the GPU tests: off, default (256), a low threshold the
#: worklists cross many times, block 0 for every round, block 0 until its
#: first step (a time limit every step exceeds), and a 20 us limit.
PIPELINES = {
    "off": "lower-irgl{small_worklist=0}",
    "default": "lower-irgl",
    "low": "lower-irgl{small_worklist=16}",
    "always": "lower-irgl{small_worklist=1000000000}",
    # a time limit every step exceeds: the mode ends after its first step
    "timed_out": "lower-irgl{small_worklist=1000000000 small_worklist_us=1}",
    "timed": "lower-irgl{small_worklist_us=20}",
    # one copy of the round for the grid and block 0 (small_worklist_merged)
    "merged": "lower-irgl{small_worklist_merged=true}",
    "merged_low": "lower-irgl{small_worklist=16 small_worklist_merged=true}",
    "merged_timed_out": (
        "lower-irgl{small_worklist=1000000000 small_worklist_us=1 "
        "small_worklist_merged=true}"
    ),
}

#: A looping Pipe whose kernel retries the first arrival of every item, and
#: stamps the second with its number and pushes n+1 and 2(n+1) (below
#: %limit; later arrivals do nothing): retry rounds in both modes, and a
#: frontier that grows and shrinks.
RETRY_PIPE = """
irgl.kernel @step(%hits: memref<?xi32>, %tries: memref<?xi32>, %limit: index) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %old = "memref.atomic_rmw"(%one, %tries, %n) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
    %first = arith.cmpi eq, %old, %zero : i32
    %second = arith.cmpi eq, %old, %one : i32
    scf.if %first {
      irgl.retry %n
    } else {
      scf.if %second {
        %nn = arith.index_cast %n : index to i32
        memref.store %nn, %hits[%n] : memref<?xi32>
        %next = arith.addi %n, %c1 : index
        %more = arith.cmpi slt, %next, %limit : index
        scf.if %more {
          irgl.wl.push %next
        }
        %twice = arith.muli %next, %c2 : index
        %inside = arith.cmpi slt, %twice, %limit : index
        scf.if %inside {
          irgl.wl.push %twice
        }
      }
    }
  }
}
irgl.kernel host @main(%hits: memref<?xi32>, %tries: memref<?xi32>, %limit: index, %cap: index) {
  %c0 = arith.constant 0 : index
  irgl.pipe initial [%c0] capacity %cap {
    irgl.invoke @step(%hits, %tries, %limit) : (memref<?xi32>, memref<?xi32>, index)
  }
}
"""


#: BFS levels from %src along edges whose Iterate runs while any item is not
#: %stop (an Any cell) and returns the carried level of the next round.
LEVELS_UNTIL_STOP = """
irgl.kernel @visit(%g: !irgl.graph, %level: memref<?xi32>, %lvl: i32, %stop: index) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        %old = "memref.atomic_rmw"(%lvl, %level, %dst) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi eq, %old, %inf : i32
        scf.if %first {
          irgl.wl.push %dst
        }
      }
    }
    %go = arith.cmpi ne, %n, %stop : index
    irgl.reduce_and_return %go
  }
}
irgl.kernel host @main(%g: !irgl.graph, %level: memref<?xi32>, %src: index, %stop: index) -> i32 {
  %c1 = arith.constant 1 : i32
  %last = irgl.iterate while any @visit(%g, %level, %l = %c1, %stop) : (!irgl.graph, memref<?xi32>, i32, index) initial [%src] {
    %next = arith.addi %l, %c1 : i32
    irgl.yield %next : i32
  }
  irgl.return %last : i32
}
"""


def _lower(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return irgl_opt(str(path), *args)


def _remarks(path: Path, options: str = "") -> list[str]:
    proc = _lower(
        path, "-p", f"lower-irgl{{remarks=true {options}}}", "-o", "/dev/null"
    )
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stderr.splitlines() if "small-worklist" in line]


@pytest.mark.parametrize("app", [*MODE_APPS, *NO_MODE])
def test_remarks_say_which_loops_have_the_mode(app: str) -> None:
    remarks = _remarks(ROOT / "benchmarks" / app / f"{app}.mlir")
    if app in NO_MODE:
        (remark,) = remarks
        assert f"no small-worklist mode: {NO_MODE[app]}" in remark
    else:
        mode = "small-worklist mode (block 0 alone while in holds at most 256"
        # BFS has two worklist Iterates (two-hop for sparse graphs, top-down
        # for dense ones), each with the mode; its bottom-up Iterate has none
        loops = 2 if app == "bfs" else 1
        assert len([r for r in remarks if mode in r]) == loops, remarks
    if app == "sssp":
        # the window's Pipe around the Iterate: its round holds the Iterate
        assert any(
            "irgl.pipe" in r
            and "no small-worklist mode: its round holds a nested loop" in r
            for r in remarks
        ), remarks
    assert _remarks(ROOT / "benchmarks" / app / f"{app}.mlir", "small_worklist=0") == []


def test_grid_wide_kernels_stay_in_grid_mode() -> None:
    """DMR's refinement kernel claims with Exclusive and synchronizes the
    grid: its Iterate keeps grid barriers."""
    (remark,) = _remarks(ROOT / "examples" / "dmr_refine.mlir")
    assert "no small-worklist mode: @refine needs the whole grid" in remark


@pytest.mark.parametrize("app", [*MODE_APPS, "retry", "levels"])
def test_small_worklist_cuda_compiles(app: str, tmp_path: Path) -> None:
    if app in ("retry", "levels"):
        mlir = tmp_path / f"{app}.mlir"
        mlir.write_text(RETRY_PIPE if app == "retry" else LEVELS_UNTIL_STOP)
    else:
        mlir = ROOT / "benchmarks" / app / f"{app}.mlir"
    proc = _lower(mlir, "-p", "lower-irgl{small_worklist=64}", "-t", "cuda")
    assert proc.returncode == 0, proc.stderr
    cuda = proc.stdout
    # (SSSP's relax declares launch_bounds(256, 2), which its control
    # kernel adopts; the others get one 1024-thread block per SM)
    head = re.search(
        r"__global__ void __launch_bounds__\(\d+, \d+\) main_control\(", cuda
    )
    assert head is not None
    control = cuda[head.start() :]
    # every kernel here uses the worklist: each step ends in
    # irgl_ctl_size_check, whose barrier is the step's
    assert "irgl_ctl_block_sync();" not in control
    assert "irgl_ctl_size_check(" in control
    # the threshold: the items alone, or (the kernel takes a graph) the
    # items and their out-degrees (small_worklist_edges)
    assert re.search(r"<= 64;|irgl_ctl_small_fits\([^;]*\(irgl_index\)64, ", control)
    # block 0 of one block, or the launch's grid
    assert ", (irgl_index)0, (irgl_index)1);" in control
    assert control.count("irgl_grid_sync();") >= 3
    if app != "bfs":  # (BFS's is built with a time limit too, below)
        assert nvcc_object_errors(cuda) is None


@pytest.mark.parametrize("app", [*MODE_APPS, "retry", "levels"])
def test_merged_rounds_call_each_body_once(app: str, tmp_path: Path) -> None:
    """`small_worklist_merged`: the control kernel calls each device body
    once (one copy for the grid and block 0, the geometry chosen at run
    time) where the default calls it twice; with a time limit, retries and
    a carried level too; the retry Pipe's CUDA compiles (BFS's merged form,
    the same control flow around the two-hop body, is built for the
    compile-time figures in RESULTS)."""
    if app in ("retry", "levels"):
        mlir = tmp_path / f"{app}.mlir"
        mlir.write_text(RETRY_PIPE if app == "retry" else LEVELS_UNTIL_STOP)
    else:
        mlir = ROOT / "benchmarks" / app / f"{app}.mlir"
    options = "small_worklist=64 small_worklist_us=32"
    both = "small_worklist_merged=true retry_merged=true"
    merged = _lower(mlir, "-p", f"lower-irgl{{{options} {both}}}", "-t", "cuda")
    plain = _lower(mlir, "-p", f"lower-irgl{{{options}}}", "-t", "cuda")
    assert merged.returncode == 0 and plain.returncode == 0, merged.stderr

    def calls(cuda: str) -> int:
        """Device-body calls in the first control kernel's definition."""
        head = re.search(r" main_control\([^;{]*\) \{", cuda)  # not a declaration
        assert head is not None
        control = cuda[head.start() :]
        control = control[: control.index("\n}\n")]
        return len(re.findall(r"\b\w+_device\(", control))

    assert 0 < calls(merged.stdout) < calls(plain.stdout)
    # block 0 of 1 block, or the launch's geometry, chosen at run time
    assert re.search(r"= \w+ \? 0 : \w+;", merged.stdout)
    assert re.search(r"= \w+ \? 1 : \w+;", merged.stdout)
    if app == "retry":  # nvcc for one program with both merged forms
        assert nvcc_object_errors(merged.stdout) is None


def test_time_limit_cuda_compiles(tmp_path: Path) -> None:
    """`small_worklist_us`: a two-word status buffer, the mode asked at
    every entry, each step of block 0 stamped and judged against the limit
    in nanoseconds; the CUDA compiles."""
    mlir = ROOT / "benchmarks" / "bfs" / "bfs.mlir"
    # (the threshold of test_small_worklist_cuda_compiles: one BFS build)
    timed = _lower(
        mlir, "-p", "lower-irgl{small_worklist=64 small_worklist_us=32}", "-t", "cuda"
    )
    plain = _lower(mlir, "-p", "lower-irgl", "-t", "cuda")
    assert timed.returncode == 0 and plain.returncode == 0, timed.stderr
    host = timed.stdout[timed.stdout.index("static void irgl_host_main(") :]
    assert "irgl_alloc<int32_t>(2);" in host
    # the first of BFS's two control kernels (one per Iterate)
    control = timed.stdout[timed.stdout.index("main_control(irgl::Graph v0") :]
    control = control[: control.index("__global__")]
    assert control.count("irgl_ctl_small_allowed(") == 1
    assert control.count("irgl_ctl_clock();") == 1
    assert "(int64_t)32000, " in control
    # without a limit none of it (the header's definitions aside)
    plain_control = plain.stdout[plain.stdout.index("main_control(irgl::Graph v0") :]
    assert "irgl_ctl_small_allowed(" not in plain_control
    assert "irgl_ctl_clock();" not in plain_control
    assert "irgl_alloc<int32_t>(2);" not in plain_control
    assert nvcc_object_errors(timed.stdout) is None


# --------------------------------------------------------------------------- #
# On the GPU
# --------------------------------------------------------------------------- #


def _beads(beads: int, width: int, seed: int = 7) -> CSRGraph:
    """Hubs h_0 .. h_beads, each joined to its own `width` leaves, every leaf
    of h_i joined to h_(i+1): from h_0 the frontier is 1, width, 1, width,
    ..., crossing a threshold below `width` twice per bead."""
    rng = np.random.default_rng(seed)
    hubs = np.arange(beads + 1, dtype=np.int64)
    leaves = beads + 1 + np.arange(beads * width, dtype=np.int64).reshape(beads, width)
    src = np.concatenate([np.repeat(hubs[:-1], width), leaves.ravel()])
    dst = np.concatenate([leaves.ravel(), np.repeat(hubs[1:], width)])
    weights = rng.integers(1, 100, size=src.shape[0], dtype=np.int32)
    n = beads + 1 + beads * width
    return clean(COOGraph(n, src, dst, weights), symmetrize=True)


GRAPHS = {
    "grid": lambda: generators.grid2d(40, 30, seed=5),
    "path": lambda: generators.generate("path:3000"),
    "rmat": lambda: generators.rmat(10, seed=3),
    "beads": lambda: _beads(60, 40),
}


@functools.cache
def _program(app: str, pipeline: str):
    from irgl_runner.api import Program, build

    return Program(build(load_app(app).mlir, PIPELINES[pipeline]))


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("app", MODE_APPS)
def test_app_with_small_worklist_matches_reference(
    app: str, pipeline: str, graph_name: str
) -> None:
    assert has_gpu()
    spec = load_app(app)
    graph = GRAPHS[graph_name]()
    source = 0
    if app in ("bfs", "sssp") and graph_name == "rmat":
        source = default_source(graph, generators.parse_spec("rmat:10"))
    ctx = execute(spec, _program(app, pipeline), graph, source=source, reps=2, warmup=0)
    assert spec.check is not None and spec.check(ctx) is None


@pytest.mark.gpu
@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_retry_pipe_with_small_worklist(pipeline: str, tmp_path: Path) -> None:
    """Every item in [0, limit) is reached, retried once and stamped with its
    own number, whichever mode runs the rounds."""
    from irgl_runner.api import Program, build

    assert has_gpu()
    mlir = tmp_path / "retry.mlir"
    mlir.write_text(RETRY_PIPE)
    program = Program(build(mlir, PIPELINES[pipeline], cache=shared_build_cache()))
    limit = 5000
    hits = program.alloc(limit, np.int32).fill(-1)
    tries = program.alloc(limit, np.int32).fill(0)
    program.call("main", hits, tries, limit, 4 * limit)
    np.testing.assert_array_equal(hits.to_numpy(), np.arange(limit))
    assert (tries.to_numpy() >= 2).all()


@pytest.mark.gpu
@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_carried_level_and_any_cell_with_small_worklist(
    pipeline: str, tmp_path: Path
) -> None:
    """On a path from node 0, round r visits node r-1 and gives node r level
    r; the round that visits %stop makes the Any cell false, so the loop ends
    after it and returns the carried level of the next round."""
    from irgl_runner.api import Program, build

    assert has_gpu()
    mlir = tmp_path / "levels.mlir"
    mlir.write_text(LEVELS_UNTIL_STOP)
    program = Program(build(mlir, PIPELINES[pipeline], cache=shared_build_cache()))
    n, stop, inf = 3000, 2000, 1073741823
    graph = program.upload_graph(generators.generate(f"path:{n}"))
    initial = np.full(n, inf, dtype=np.int32)
    initial[0] = 0
    level = program.alloc(n, np.int32)
    level.from_numpy(initial)
    last = program.call("main", graph, level, 0, stop)
    assert last == stop + 2
    expected = np.full(n, inf, dtype=np.int32)
    expected[: stop + 2] = np.arange(stop + 2)
    np.testing.assert_array_equal(level.to_numpy(), expected)
