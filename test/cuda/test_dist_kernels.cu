// GPU tests of the several-GPU runtime's exchange kernels (one process, no
// communicator): the worklist rebuild from marks (16 marks a thread) and the
// per-peer compaction of changed entries (slots claimed per block).
// Built with NCCL's flags by test_runtime_gpu.py (a test_dist_* program).
#define IRGL_DISTRIBUTED 1
#include "test_common.cuh"

#include <algorithm>
#include <random>
#include <vector>

using irgl::dist::compact_changed_kernel;
using irgl::dist::compact_pushed_kernel;
using irgl::dist::rebuild16_kernel;

/// Marks at a density, with a run of marks and an all-zero stretch; sizes
/// that do and do not end on a 16-byte chunk.
static void rebuild_case(int64_t n, double density, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> mark(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) mark[i] = (rng() % 10000) < density * 10000 ? static_cast<unsigned char>(1 + rng() % 3) : 0;
  for (int64_t i = n / 3; i < std::min<int64_t>(n, n / 3 + 100); ++i) mark[i] = 1;
  for (int64_t i = n / 2; i < std::min<int64_t>(n, n / 2 + 5000); ++i) mark[i] = 0;
  unsigned char* d_mark = to_device(mark);
  int32_t* d_items = to_device(std::vector<int32_t>(static_cast<size_t>(n) + 1, -1));
  irgl_index* d_tail = to_device(std::vector<irgl_index>(1, 0));
  for (unsigned blocks : {1u, 7u, irgl::dist::blocks_for((n + 15) / 16)}) {
    IRGL_CHECK(cudaMemset(d_tail, 0, sizeof(irgl_index)));
    rebuild16_kernel<<<blocks, 256>>>(d_mark, n, d_items, d_tail);
    IRGL_CHECK(cudaDeviceSynchronize());
    const irgl_index tail = to_host(d_tail, 1)[0];
    std::vector<int32_t> items = to_host(d_items, static_cast<size_t>(tail));
    std::sort(items.begin(), items.end());
    std::vector<int32_t> want;
    for (int64_t i = 0; i < n; ++i)
      if (mark[i]) want.push_back(static_cast<int32_t>(i));
    EXPECT(items == want, "n=%lld blocks=%u: %lld items, want %zu", static_cast<long long>(n), blocks,
           static_cast<long long>(tail), want.size());
  }
  cudaFree(d_mark);
  cudaFree(d_items);
  cudaFree(d_tail);
}

/// The changed entries of a list cut into `world` peer segments: per peer,
/// each changed entry once, as its position and value; pushed: bit 31 where
/// flagged, and the last copy takes the value.
static void compact_case(int64_t first, int64_t n, int world, double density, bool pushed, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t local = first + n;
  std::vector<int32_t> a(static_cast<size_t>(local)), snap(static_cast<size_t>(local));
  for (int64_t i = 0; i < local; ++i) a[i] = snap[i] = static_cast<int32_t>(rng() % 1000);
  std::vector<unsigned char> flags(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i)
    if ((rng() % 10000) < density * 10000) {
      a[first + i] -= 1 + static_cast<int32_t>(rng() % 5);
      flags[i] = rng() % 2;
    }
  std::vector<int64_t> off(static_cast<size_t>(world) + 1, 0);  // uneven segments, one empty
  for (int q = 1; q < world; ++q) off[q] = q == 1 ? 0 : std::min<int64_t>(n, off[q - 1] + 1 + rng() % (2 * n / world + 1));
  off[world] = n;
  std::vector<irgl_index> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<irgl_index>(first + i);
  int32_t* d_a = to_device(a);
  int32_t* d_snap = to_device(snap);
  unsigned char* d_flags = to_device(flags);
  int64_t* d_off = to_device(off);
  irgl_index* d_ids = to_device(ids);
  int64_t* d_row = to_device(std::vector<int64_t>(static_cast<size_t>(world), 0));
  int32_t* d_pos = to_device(std::vector<int32_t>(static_cast<size_t>(n) + 1, 0));
  int32_t* d_val = to_device(std::vector<int32_t>(static_cast<size_t>(n) + 1, 0));
  const unsigned blocks = irgl::dist::blocks_for(n);
  if (pushed)
    compact_pushed_kernel<int32_t><<<blocks, 256>>>(d_a, d_snap, first, n, d_off, world, d_flags, d_row, d_pos, d_val);
  else
    compact_changed_kernel<int32_t><<<blocks, 256>>>(d_a, d_snap, d_ids, n, d_off, world, false, d_row, d_pos, d_val);
  IRGL_CHECK(cudaDeviceSynchronize());
  const std::vector<int64_t> row = to_host(d_row, static_cast<size_t>(world));
  const std::vector<int32_t> pos = to_host(d_pos, static_cast<size_t>(n));
  const std::vector<int32_t> val = to_host(d_val, static_cast<size_t>(n));
  const std::vector<int32_t> snap_after = to_host(d_snap, static_cast<size_t>(local));
  for (int q = 0; q < world; ++q) {
    std::vector<std::pair<int32_t, int32_t>> got, want;
    for (int64_t k = 0; k < row[q]; ++k) got.emplace_back(pos[off[q] + k], val[off[q] + k]);
    for (int64_t i = off[q]; i < off[q + 1]; ++i)
      if (a[first + i] != snap[first + i]) {
        const uint32_t bit = pushed && flags[i] ? 0x80000000u : 0u;
        want.emplace_back(static_cast<int32_t>(static_cast<uint32_t>(i - off[q]) | bit), a[first + i]);
      }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT(got == want, "world=%d n=%lld peer %d: %lld pairs, want %zu", world, static_cast<long long>(n), q,
           static_cast<long long>(row[q]), want.size());
  }
  if (pushed) EXPECT(snap_after == a, "the last copy takes the compacted values");
  for (void* p : {static_cast<void*>(d_a), static_cast<void*>(d_snap), static_cast<void*>(d_flags),
                  static_cast<void*>(d_off), static_cast<void*>(d_ids), static_cast<void*>(d_row),
                  static_cast<void*>(d_pos), static_cast<void*>(d_val)})
    cudaFree(p);
}

int main() {
  run_test("rebuild from marks", [] {
    for (int64_t n : {int64_t(1), int64_t(15), int64_t(16), int64_t(17), int64_t(4099), int64_t(1) << 20,
                      (int64_t(1) << 22) + 5})
      for (double density : {0.0, 0.001, 0.3, 1.0}) rebuild_case(n, density, static_cast<unsigned>(n) + 1);
  });
  run_test("compaction per peer", [] {
    for (int world : {1, 2, 4, 8, 65})
      for (int64_t n : {int64_t(1), int64_t(300), int64_t(1) << 20})
        for (double density : {0.0, 0.01, 0.6})
          for (bool pushed : {false, true}) compact_case(5, n, world, density, pushed, static_cast<unsigned>(world * n));
  });
  return finish();
}
