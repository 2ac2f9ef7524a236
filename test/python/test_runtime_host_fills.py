# ruff: noqa: E501
"""The runtime library holds no kernels: its host functions that write
device memory do it with 32-bit fills (cuMemsetD32Async, through the
driver entry point) and copies. On a GPU, in both index widths, through the
library a program links: initial items pushed from the host, a worklist
initialized from an index array (64-bit items narrowed by a strided copy)
and an All cell's flags reset to 1."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from conftest import has_gpu

from irgl_runner.build import EmittedProgram, compile_cuda

PROGRAM = r"""
#define IRGL_INDEX_BITS %(bits)d
#include "irgl_runtime.cuh"

#if IRGL_HOST_CODE
extern "C" int check_fills(long long* out) {
  return irgl::guard([&] {
    irgl::Pipe* p = irgl_pipe_create(8);
    irgl_pipe_push_initial(p, 5);
    irgl_pipe_push_initial(p, 7);
    int32_t items[3];
    irgl_index tail = 0;
    IRGL_CHECK(cudaMemcpy(items, p->in.items, 2 * sizeof(int32_t), cudaMemcpyDeviceToHost));
    IRGL_CHECK(cudaMemcpy(&tail, p->in.tail, sizeof(irgl_index), cudaMemcpyDeviceToHost));
    out[0] = items[0];
    out[1] = items[1];
    out[2] = tail;
    const irgl_index host[3] = {1, 2, 2147483647};
    irgl_index* dev = irgl_alloc<irgl_index>(3);
    IRGL_CHECK(cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice));
    irgl_pipe_init_from_array_index(p, dev, 3);
    IRGL_CHECK(cudaMemcpy(items, p->in.items, 3 * sizeof(int32_t), cudaMemcpyDeviceToHost));
    IRGL_CHECK(cudaMemcpy(&tail, p->in.tail, sizeof(irgl_index), cudaMemcpyDeviceToHost));
    out[3] = items[0];
    out[4] = items[1];
    out[5] = items[2];
    out[6] = tail;
    irgl::Cell all = irgl_cell_create_slots(false);
    int flags[3];
    IRGL_CHECK(cudaMemcpy(flags, all.flag, sizeof(flags), cudaMemcpyDeviceToHost));
    out[7] = flags[0] + flags[1] + flags[2];
    irgl_cell_destroy(all);
    irgl_free(dev);
    irgl_pipe_destroy(p);
  });
}
#endif
"""


@pytest.mark.gpu
@pytest.mark.parametrize("bits", [32, 64])
def test_host_fills_through_the_runtime_library(bits: int, tmp_path) -> None:
    assert has_gpu()
    program = EmittedProgram(cuda=PROGRAM % {"bits": bits}, entry_points=())
    lib = ctypes.CDLL(str(compile_cuda(program, cache=tmp_path)))
    assert any(p.name.startswith("libirgl_runtime_") for p in tmp_path.iterdir())
    out = np.zeros(8, dtype=np.int64)
    rc = lib.check_fills(out.ctypes.data_as(ctypes.POINTER(ctypes.c_longlong)))
    assert rc == 0
    assert out.tolist() == [5, 7, 2, 1, 2, 2147483647, 3, 3]
