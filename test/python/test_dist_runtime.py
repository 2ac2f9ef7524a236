"""Several GPUs without a GPU: the NCCL section of the runtime against its
table, lower-irgl{distribute=...}, compiling with NCCL, the bootstrap."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import check_build_flags
from test_runtime_library import _declarations  # pyright: ignore[reportPrivateUsage]

from irgl_dialect.runtime_library import DIST_EXPORTS, RUNTIME_FUNCTIONS
from irgl_runner import distributed
from irgl_runner.build import CompileError, emit_program
from irgl_runner.errors import IrglRuntimeError, UsageError

ROOT = Path(__file__).resolve().parents[2]

#: Built to be compiled, not run: the compile-check flags.
FLAGS = check_build_flags()


def _nccl_or_skip() -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    try:
        distributed.find_nccl()
    except distributed.NcclNotFound as e:
        pytest.skip(f"NCCL not found (pip install nvidia-nccl-cu13): {e}")


@pytest.mark.parametrize("name", sorted(DIST_EXPORTS))
def test_header_declares_dist_export(name: str) -> None:
    export = DIST_EXPORTS[name]
    (decl,) = _declarations()[name]
    result, params, quals = decl
    assert "IRGL_EXPORT" in quals
    assert (result, params) == (export.c_result, export.c_params)


def test_dist_runtime_functions_are_in_the_table() -> None:
    names = {n for n in _declarations() if n.startswith("irgl_dist_")}
    assert names - set(DIST_EXPORTS) == {
        n for n in RUNTIME_FUNCTIONS if n.startswith("irgl_dist_")
    }


def test_single_gpu_build_does_not_define_distributed() -> None:
    cuda = emit_program(ROOT / "examples/bfs.mlir").cuda
    assert "#define IRGL_DISTRIBUTED" not in cuda


def test_distribute_option_is_checked() -> None:
    with pytest.raises(CompileError, match="distribute must be oec or cvc"):
        emit_program(ROOT / "examples/bfs.mlir", "lower-irgl{distribute=xyz}")


def test_refused_program_is_a_located_error() -> None:
    with pytest.raises(CompileError, match="cannot distribute"):
        emit_program(ROOT / "benchmarks/bfs/bfs.mlir", "lower-irgl{distribute=oec}")


@pytest.mark.parametrize(
    ("program", "policy", "bits"),
    [
        ("examples/bfs.mlir", "oec", 32),
        ("benchmarks/cc/cc_lp.mlir", "cvc", 32),
        # a graph whose edges 32 bits cannot number
        ("benchmarks/sssp/sssp.mlir", "oec", 64),
    ],
)
def test_compiles_with_nccl(
    program: str, policy: str, bits: int, tmp_path: Path
) -> None:
    _nccl_or_skip()
    target = "cuda{index-bitwidth=64}" if bits == 64 else distributed.DEFAULT_TARGET
    so = distributed.build_distributed(
        ROOT / program, policy, flags=FLAGS, cache=tmp_path, target=target
    )
    assert so.is_file()
    cu = so.with_suffix(".cu").read_text()
    assert "#define IRGL_DISTRIBUTED 1" in cu
    assert ("#define IRGL_INDEX_BITS 64" in cu) == (bits == 64)


def test_missing_nccl_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "_candidates", lambda: [])
    with pytest.raises(distributed.NcclNotFound, match="nvidia-nccl-cu13"):
        distributed.build_distributed(ROOT / "examples/bfs.mlir", "oec")


def test_unique_id_through_a_file(tmp_path: Path) -> None:
    uid = bytes(range(128))
    got: list[bytes] = []
    reader = threading.Thread(
        target=lambda: got.append(
            distributed.exchange_unique_id(
                None, distributed.RankEnv(1, 2, 1), tmp_path, "r1", 30.0
            )
        )
    )
    reader.start()
    written = distributed.exchange_unique_id(
        lambda: uid, distributed.RankEnv(0, 2, 0), tmp_path, "r1", 30.0
    )
    reader.join()
    assert written == uid and got == [uid]
    assert not list(tmp_path.glob(".*tmp"))  # written through a renamed file


def test_missing_rank_zero_times_out(tmp_path: Path) -> None:
    with pytest.raises(IrglRuntimeError, match="no NCCL unique id from rank 0"):
        distributed.exchange_unique_id(
            None, distributed.RankEnv(1, 2, 1), tmp_path, "r2", 0.3
        )


def test_rank_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    assert distributed.RankEnv.from_environ() == distributed.RankEnv(0, 1, 0)
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert distributed.RankEnv.from_environ() == distributed.RankEnv(3, 4, 1)
    monkeypatch.setenv("RANK", "4")
    with pytest.raises(UsageError, match="out of range"):
        distributed.RankEnv.from_environ()


def test_node_array_positions() -> None:
    assert distributed.node_array_positions(ROOT / "examples/bfs.mlir", "oec") == {
        "main": (1,)
    }


@pytest.mark.parametrize(
    ("visible", "count"),
    [(None, 4), ("0,1", 2), ("3", 1), ("", 0), ("1,-1,2", 1), ("0,1,2,3,4,5", 4)],
)
def test_gpu_count_honours_cuda_visible_devices(
    visible: str | None, count: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        'for i in 0 1 2 3; do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; done\n'
    )
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert distributed.gpu_count() == count
    # a value given instead of the process's (the GPU suite's ranks)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert distributed.gpu_count(visible) == (count if visible is not None else 1)


@pytest.mark.parametrize(
    ("visible", "local_rank", "chosen"),
    [(None, 2, "2"), ("4,5,6", 1, "5"), ("GPU-a, GPU-b", 1, "GPU-b")],
)
def test_a_rank_keeps_to_its_gpu(
    visible: str | None, local_rank: int, chosen: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LOCAL_RANK-th visible GPU is the only one a rank sees."""
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    env = distributed.RankEnv(rank=local_rank, world=4, local_rank=local_rank)
    distributed._select_gpu(env)  # pyright: ignore[reportPrivateUsage]
    assert os.environ["CUDA_VISIBLE_DEVICES"] == chosen


def test_more_ranks_than_visible_gpus_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    env = distributed.RankEnv(rank=2, world=4, local_rank=2)
    with pytest.raises(distributed.UsageError, match="at most one rank per GPU"):
        distributed._select_gpu(env)  # pyright: ignore[reportPrivateUsage]


FOLD_PROBE = r"""
#define IRGL_DISTRIBUTED 1
#include "irgl_runtime.cuh"
#include <cstdio>
// irgl_dist_local_node under irgl_dist_fold, on the host alone (no GPU
// call): argv = master_offset num_masters num_nodes bounds...
int main(int argc, char** argv) {
  irgl::dist::State& s = irgl::dist::state();
  s.ready = s.partition = true;
  s.master_offset = std::atoll(argv[1]);
  s.num_masters = std::atoll(argv[2]);
  const long long n = std::atoll(argv[3]);
  std::vector<int64_t> bounds;
  for (int i = 4; i < argc; ++i) bounds.push_back(std::atoll(argv[i]));
  const int64_t blocks = static_cast<int64_t>(bounds.size()) - 1;
  if (irgl_dist_fold(blocks, bounds.data()) != 0) return 3;
  for (long long g = -1; g <= n; ++g)
    std::printf("%lld\n", static_cast<long long>(irgl_dist_local_node(g)));
  return 0;
}
"""


def test_local_node_folds_a_global_id(tmp_path: Path) -> None:
    """irgl_dist_local_node after irgl_dist_fold names a rank's masters by
    their partition ids (irgl_runner/partition_fold.py): the runtime's fold
    is FoldMap's, for every rank of a 3-rank folded partitioning."""
    _nccl_or_skip()
    from irgl_runner.generators import generate
    from irgl_runner.partition import partition_graph

    src = tmp_path / "probe.cu"
    src.write_text(FOLD_PROBE)
    exe = tmp_path / "probe"
    runtime = ROOT / "cuda_emitter" / "runtime"
    subprocess.run(
        [
            "nvcc",
            "-std=c++17",
            f"-I{runtime}",
            *distributed.nccl_flags(),
            str(src),
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
    )
    graph = generate("rmat:8")
    whole = partition_graph(graph, "oec", 3, fold=True)
    assert whole.fold is not None
    n = graph.num_nodes
    for part in whole.partitions:
        assert part.fold_bounds is not None
        done = subprocess.run(
            [
                str(exe),
                str(part.master_offset),
                str(part.num_masters),
                str(n),
                *map(str, part.fold_bounds),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        got = [int(x) for x in done.stdout.split()]
        want = [-1] * (n + 2)  # ids -1 .. n
        masters = part.local_to_global[: part.num_masters]
        for local, g in enumerate(masters):
            want[int(g) + 1] = local
        assert got == want, part.rank
