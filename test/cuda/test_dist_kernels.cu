// GPU tests of the several-GPU runtime's exchange kernels (one process, no
// communicator): the worklist rebuild from marks (16 marks a thread), the
// per-peer compaction of changed entries (slots claimed per block), the
// hot nodes' gather and scatter around their all-gather, and the take of the
// mirrors pushed without a slot.
// Built with NCCL's flags by test_runtime_gpu.py (a test_dist_* program).
#define IRGL_DISTRIBUTED 1
#include "test_common.cuh"

#include <algorithm>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

using irgl::dist::compact_changed_kernel;
using irgl::dist::compact_pushed_kernel;
using irgl::dist::hot_gather_kernel;
using irgl::dist::hot_scatter_kernel;
using irgl::dist::identity_of;
using irgl::dist::rebuild16_kernel;
using irgl::dist::take_pushed_kernel;

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

/// `old` combined with `v` by min, max or minu (the runtime's combine, on
/// the host: the expected values).
template <class T>
static T reference_combine(int red, T old, T v) {
  if (red == irgl::dist::kMin) return std::min(old, v);
  if (red == irgl::dist::kMax) return std::max(old, v);
  typedef typename irgl::dist::Unsigned<T>::type U;  // kMinU: the unsigned order
  return static_cast<U>(v) < static_cast<U>(old) ? v : old;
}

/// The hot nodes on one rank of `local` nodes (the first `masters` its
/// masters): the gather takes each local entry and the reduction's identity
/// where the rank has no copy; given a buffer of other values (what the
/// all-gather of the masters' values brings), the scatter lowers (raises)
/// the mirrors and their last copy and leaves the masters alone.
/// `values(i)`: the i-th test value.
template <class T, class Values>
static void hot_case(int red, int64_t local, int64_t masters, int64_t hot_count, Values values, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> a(static_cast<size_t>(local)), other(static_cast<size_t>(hot_count));
  for (int64_t i = 0; i < local; ++i) a[i] = values(rng() % 1000);
  for (int64_t k = 0; k < hot_count; ++k) other[k] = values(rng() % 1000);
  const std::vector<T> snap = a;
  std::vector<irgl_index> hot(static_cast<size_t>(hot_count));
  for (int64_t k = 0; k < hot_count; ++k) hot[k] = rng() % 4 == 0 ? -1 : static_cast<irgl_index>(rng() % local);
  std::sort(hot.begin(), hot.end());  // distinct local ids, -1 repeated
  for (int64_t k = 1; k < hot_count; ++k)
    if (hot[k] >= 0 && hot[k] == hot[k - 1]) hot[k - 1] = -1;
  T* d_a = to_device(a);
  T* d_snap = to_device(snap);
  irgl_index* d_hot = to_device(hot);
  T* d_buf = to_device(std::vector<T>(static_cast<size_t>(hot_count) + 1));
  const unsigned blocks = irgl::dist::blocks_for(hot_count);
  const T identity = identity_of<T>(red);
  hot_gather_kernel<T><<<blocks, 256>>>(d_a, d_hot, hot_count, identity, d_buf);
  IRGL_CHECK(cudaDeviceSynchronize());
  std::vector<T> buf = to_host(d_buf, static_cast<size_t>(hot_count));
  bool gathered = true;
  for (int64_t k = 0; k < hot_count; ++k) {
    gathered = gathered && buf[k] == (hot[k] >= 0 ? a[hot[k]] : identity);
    buf[k] = reference_combine<T>(red, buf[k], other[k]);  // the all-reduce, on the host
  }
  EXPECT(gathered, "red=%d: the gather takes the local entries and the identity elsewhere", red);
  IRGL_CHECK(cudaMemcpy(d_buf, buf.data(), buf.size() * sizeof(T), cudaMemcpyHostToDevice));
  hot_scatter_kernel<T><<<blocks, 256>>>(d_a, d_snap, d_hot, hot_count, masters, d_buf, red);
  IRGL_CHECK(cudaDeviceSynchronize());
  std::vector<T> want = a, want_snap = snap;
  for (int64_t k = 0; k < hot_count; ++k)
    if (hot[k] >= masters) want[hot[k]] = want_snap[hot[k]] = reference_combine<T>(red, a[hot[k]], buf[k]);
  EXPECT(to_host(d_a, static_cast<size_t>(local)) == want, "red=%d: the mirrors take the all-reduced values", red);
  EXPECT(to_host(d_snap, static_cast<size_t>(local)) == want_snap, "red=%d: and so does their last copy", red);
  for (void* p : {static_cast<void*>(d_a), static_cast<void*>(d_snap), static_cast<void*>(d_hot),
                  static_cast<void*>(d_buf)})
    cudaFree(p);
}

/// The exchange takes the pushed mirrors' bytes as its flags (none for a
/// first worklist) and leaves them all clear, whatever the size's remainder
/// by four and the grid.
static void take_case(int64_t n, double density, bool initial, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> pushed(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) pushed[i] = (rng() % 10000) < density * 10000 ? 1 : 0;
  for (unsigned blocks : {1u, 7u, irgl::dist::blocks_for((n + 3) / 4)}) {
    unsigned char* d_pushed = to_device(pushed);
    unsigned char* d_flags = to_device(std::vector<unsigned char>(static_cast<size_t>(n), 7));
    take_pushed_kernel<<<blocks, 256>>>(d_pushed, d_flags, n, initial);
    IRGL_CHECK(cudaDeviceSynchronize());
    const std::vector<unsigned char> flags = to_host(d_flags, static_cast<size_t>(n));
    const std::vector<unsigned char> left = to_host(d_pushed, static_cast<size_t>(n));
    EXPECT(flags == (initial ? std::vector<unsigned char>(static_cast<size_t>(n), 0) : pushed),
           "n=%lld blocks=%u initial=%d: flags differ", static_cast<long long>(n), blocks, initial);
    EXPECT(std::all_of(left.begin(), left.end(), [](unsigned char b) { return b == 0; }),
           "n=%lld blocks=%u initial=%d: pushed bytes left set", static_cast<long long>(n), blocks, initial);
    cudaFree(d_pushed);
    cudaFree(d_flags);
  }
}

int main() {
  run_test("pushed mirrors taken", [] {
    for (int64_t n : {int64_t(1), int64_t(3), int64_t(4), int64_t(5), int64_t(4099), (int64_t(1) << 20) + 3})
      for (double density : {0.0, 0.01, 1.0})
        for (bool initial : {false, true}) take_case(n, density, initial, static_cast<unsigned>(n) + 3);
  });
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
  run_test("hot nodes", [] {
    using irgl::dist::kMax;
    using irgl::dist::kMin;
    using irgl::dist::kMinU;
    auto ints = [](unsigned v) { return static_cast<int32_t>(v) - 500; };
    auto reals = [](unsigned v) { return v % 7 == 0 ? std::numeric_limits<float>::infinity() : 0.5f * v; };
    for (int64_t hot : {int64_t(1), int64_t(1000), int64_t(1) << 18}) {
      hot_case<int32_t>(kMin, 3000, 1000, std::min<int64_t>(hot, 3000), ints, 7);
      hot_case<int32_t>(kMinU, 3000, 1000, std::min<int64_t>(hot, 3000), ints, 8);
      hot_case<int64_t>(kMax, 1 << 20, 1 << 19, hot, [](unsigned v) { return int64_t(v) << 33; }, 9);
      hot_case<float>(kMin, 1 << 20, 1 << 10, hot, reals, 10);
      hot_case<float>(kMax, 1 << 20, 1 << 10, hot, reals, 11);
    }
  });
  return finish();
}
