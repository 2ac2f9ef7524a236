"""Build-only checks of cuda_emitter/runtime/irgl_runtime.cuh (no GPU needed).

Compiles a translation unit that calls every runtime function of the contract
(docs/lowered-ir.md) with `nvcc -arch=sm_90 -std=c++17 -c`, in both index
widths, and links two such units into one shared object to check that the
header can be included several times and exports the extern "C" ABI.
Skipped only when nvcc is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import nvcc_path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_DIR = ROOT / "cuda_emitter" / "runtime"

# Calls every device- and host-side runtime function with its contract types.
EVERYTHING = r"""
#include "irgl_runtime.cuh"

__global__ void device_side(irgl::Graph g, irgl::Worklist in, irgl::Worklist out,
                            irgl::Cell cell, int32_t* locks, int64_t* tickets,
                            irgl_index* sink) {
  irgl_index id = irgl_global_thread_id();
  irgl_index acc = irgl_global_num_threads() + irgl_graph_num_nodes(g) +
                   irgl_graph_num_edges(g);
  for (irgl_index i = id; i < irgl_wl_size(in); i += irgl_global_num_threads()) {
    irgl_index n = irgl_wl_item(in, i);
    irgl_index last = irgl_graph_last_edge(g, n);
    for (irgl_index e = irgl_graph_first_edge(g, n); e < last; ++e) {
      acc += irgl_graph_edge_dst(g, e) + irgl_graph_edge_weight(g, e);
      irgl_wl_push(out, irgl_graph_edge_dst(g, e));
    }
    acc += irgl_graph_degree(g, n);
  }
  irgl_cell_reduce(cell, acc > 0);
  bool done = false;
  while (!done) {
    if (irgl_lock_try_i32(locks, id % 16)) {
      sink[0] += acc;
      irgl_lock_release_i32(locks, id % 16);
      done = true;
    }
  }
  irgl_ticket_acquire_i64(tickets, id % 16);
  sink[1] += 1;
  irgl_ticket_release_i64(tickets, id % 16);
  irgl_ticket_acquire_i32(locks, id % 16);
  sink[1] += 1;
  irgl_ticket_release_i32(locks, id % 16);
  irgl_claim_write(locks, id % 16, 1);
  irgl_claim_raise(locks, id % 16, 2);
  sink[2] = irgl_claim_read(locks, id % 16);
  irgl_grid_sync();
}

__global__ void no_args() {}

static int host_side(irgl::Graph g) {
  irgl::Pipe* p = irgl_pipe_create(irgl_graph_capacity(g));
  irgl_pipe_push_initial(p, 0);
  int32_t* a32 = irgl_alloc<int32_t>(4);
  irgl_index* ai = irgl_alloc<irgl_index>(4);
  irgl_pipe_init_from_array_i32(p, a32, 4);
  irgl_pipe_init_from_array_index(p, ai, 4);
  bool* b = irgl_alloc<bool>(1);
  int8_t* c8 = irgl_alloc<int8_t>(1);
  int16_t* c16 = irgl_alloc<int16_t>(1);
  int64_t* c64 = irgl_alloc<int64_t>(16);
  float* f = irgl_alloc<float>(1);
  double* d = irgl_alloc<double>(1);
  irgl::Cell cell = irgl_cell_create(true);
  irgl_cell_reset(cell);
  irgl_index bs = 256;
  irgl_index grid = irgl::grid_size(device_side, bs, true);
  grid += irgl::grid_size(no_args, bs, false);
  irgl::launch_cooperative(device_side, grid, bs, g, irgl_pipe_in(p),
                           irgl_pipe_out(p), cell, a32, c64, ai);
  irgl::launch(device_side, grid, bs, g, irgl_pipe_in(p), irgl_pipe_retry(p),
               cell, a32, c64, ai);
  irgl::launch(no_args, 1, 32);
  irgl::launch_cooperative(no_args, 1, 32);
  irgl_pipe_advance(p);
  irgl_pipe_advance_retry(p);
  irgl_index n = irgl_pipe_in_size(p) + irgl_pipe_out_size(p) + irgl_pipe_retry_size(p);
  bool r = irgl_cell_read(cell);
  irgl_cell_destroy(cell);
  irgl_free(a32); irgl_free(ai); irgl_free(b); irgl_free(c8);
  irgl_free(c16); irgl_free(c64); irgl_free(f); irgl_free(d);
  irgl_pipe_destroy(p);
  IRGL_CHECK(cudaDeviceSynchronize());
  return static_cast<int>(n) + (r ? 1 : 0) + static_cast<int>(irgl_graph_num_nodes(g));
}

extern "C" int irgl_entry_everything(void* g, int64_t* result) {
  return irgl::guard([&] { *result = host_side(*static_cast<irgl::Graph*>(g)); });
}
"""

# A second translation unit: including the header again must not clash.
SECOND = r"""
#include "irgl_runtime.cuh"
__global__ void other(irgl::Worklist out) {
  irgl_wl_push(out, irgl_global_thread_id());
}
extern "C" int irgl_entry_other(void* p) {
  irgl::Pipe* pipe = static_cast<irgl::Pipe*>(p);
  return irgl::guard([&] { irgl::launch(other, 1, 32, irgl_pipe_out(pipe)); });
}
"""

ABI = [
    "irgl_graph_create",
    "irgl_graph_destroy",
    "irgl_device_alloc",
    "irgl_device_free",
    "irgl_copy_to_device",
    "irgl_copy_to_host",
    "irgl_device_synchronize",
    "irgl_device_name",
    "irgl_device_memory",
    "irgl_warm_up",
    "irgl_last_error",
]


def _nvcc() -> str:
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    return nvcc


def _compile(nvcc: str, args: list[str], cwd: Path) -> None:
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", f"-I{RUNTIME_DIR}", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.parametrize("index_bits", [32, 64])
def test_header_compiles_with_every_function(tmp_path: Path, index_bits: int) -> None:
    nvcc = _nvcc()
    (tmp_path / "everything.cu").write_text(EVERYTHING)
    defines = ["-DIRGL_INDEX_BITS=64"] if index_bits == 64 else []
    _compile(nvcc, [*defines, "-c", "everything.cu", "-o", "everything.o"], tmp_path)


def test_header_links_into_shared_object(tmp_path: Path) -> None:
    nvcc = _nvcc()
    (tmp_path / "a.cu").write_text(EVERYTHING)
    (tmp_path / "b.cu").write_text(SECOND)
    for name in ("a", "b"):
        _compile(
            nvcc,
            ["-Xcompiler", "-fPIC", "-c", f"{name}.cu", "-o", f"{name}.o"],
            tmp_path,
        )
    _compile(nvcc, ["-shared", "a.o", "b.o", "-o", "libboth.so"], tmp_path)
    nm = shutil.which("nm")
    if nm is None:
        return
    out = subprocess.run(
        [nm, "-D", "--defined-only", str(tmp_path / "libboth.so")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    for sym in [*ABI, "irgl_entry_everything", "irgl_entry_other"]:
        assert sym in exported, f"{sym} not exported from the shared object"
