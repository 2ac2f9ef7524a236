// GPU tests of the host thread's scratch slab (irgl::scratch_bytes with
// zeroing): every piece a guarded call takes reads as zero although the
// calls before it wrote every byte of theirs; a piece that does not fit the
// slab in its first call comes from the pool and from the slab once an
// earlier call has asked for that much; a piece larger than the slab may
// grow comes from the pool; a call that fails leaves the next call's pieces
// zeroed too.
#include "test_common.cuh"

#include <cstdint>
#include <stdexcept>
#include <vector>

/// Writes `value` to each of the n bytes at p.
__global__ void fill(unsigned char* p, size_t n, unsigned char value) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = value;
}

/// Counts the nonzero bytes of p[0:n] into *count.
__global__ void count_nonzero(const unsigned char* p, size_t n, unsigned long long* count) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    mine += p[i] != 0;
  if (mine) atomicAdd(count, mine);
}

static unsigned long long nonzero(const void* p, size_t n) {
  unsigned long long* count = nullptr;
  IRGL_CHECK(cudaMalloc(&count, sizeof(*count)));
  IRGL_CHECK(cudaMemset(count, 0, sizeof(*count)));
  count_nonzero<<<264, 256>>>(static_cast<const unsigned char*>(p), n, count);
  unsigned long long host = 0;
  IRGL_CHECK(cudaMemcpy(&host, count, sizeof(host), cudaMemcpyDeviceToHost));
  IRGL_CHECK(cudaFree(count));
  return host;
}

static bool in_slab(const void* p) {
  int device = 0;
  IRGL_CHECK(cudaGetDevice(&device));
  const irgl::detail::ScratchSlab& s = irgl::detail::thread_slabs()[device];
  const char* c = static_cast<const char*>(p);
  return s.base != nullptr && c >= s.base && c < s.base + s.bytes;
}

struct Piece {
  size_t bytes;
  bool in_slab;
  unsigned long long nonzero;  // when taken
};

/// One guarded call: takes zeroed pieces of `sizes` bytes in turn, records
/// where each came from and whether it read as zero, writes every byte of
/// it, frees them all; throws at the end when `fail` (after the frees, so
/// that the pieces' bookkeeping is the runtime's to undo, as when a kernel
/// fails after its scratch was taken). Returns the pieces.
static std::vector<Piece> call(const std::vector<size_t>& sizes, bool fail = false) {
  std::vector<Piece> pieces;
  const int rc = irgl::guard([&] {
    std::vector<void*> taken;
    for (size_t n : sizes) {
      void* p = irgl::scratch_bytes(n);
      taken.push_back(p);
      pieces.push_back({n, in_slab(p), nonzero(p, n)});
      fill<<<264, 256>>>(static_cast<unsigned char*>(p), n, 0xA5);
      IRGL_CHECK(cudaGetLastError());
    }
    if (fail) throw std::runtime_error("the call fails");
    for (void* p : taken) irgl::scratch_free(p);
  });
  EXPECT((rc != 0) == fail, "call rc %d, expected failure %d", rc, fail);
  IRGL_CHECK(cudaDeviceSynchronize());
  return pieces;
}

static void expect_zeroed(const std::vector<Piece>& pieces, const char* what) {
  for (const Piece& p : pieces)
    EXPECT(p.nonzero == 0, "%s: a %zu-byte piece had %llu nonzero bytes", what, p.bytes, p.nonzero);
}

int main() {
  using irgl::detail::ScratchSlab;
  const size_t mib = size_t(1) << 20;

  run_test("small pieces come from the slab, zeroed in every call", [&] {
    for (int round = 0; round < 3; ++round) {
      std::vector<Piece> pieces = call({4, 12, 1000, 256, 1});
      expect_zeroed(pieces, "small");
      for (const Piece& p : pieces) EXPECT(p.in_slab, "round %d: a %zu-byte piece", round, p.bytes);
    }
  });

  run_test("a node array grows the slab from the next call on", [&] {
    const size_t big = 4 * mib + 12;  // 4 MB of stamps and a little more
    std::vector<Piece> first = call({64, big, 8});
    expect_zeroed(first, "first");
    EXPECT(!first[1].in_slab, "a piece larger than the slab came from it before it grew");
    for (int round = 0; round < 3; ++round) {
      std::vector<Piece> later = call({64, big, 8});
      expect_zeroed(later, "later");
      for (const Piece& p : later) EXPECT(p.in_slab, "round %d: a %zu-byte piece", round, p.bytes);
    }
    // a smaller call after the larger ones: cleared what the last call used
    std::vector<Piece> small = call({3 * mib, 100});
    expect_zeroed(small, "smaller");
    std::vector<Piece> again = call({64, big, 8});
    expect_zeroed(again, "again");
  });

  run_test("a piece larger than the slab may grow comes from the pool", [&] {
    const size_t huge = ScratchSlab::kMaxBytes + 1;
    for (int round = 0; round < 2; ++round) {
      std::vector<Piece> pieces = call({huge, 16});
      expect_zeroed(pieces, "huge");
      EXPECT(!pieces[0].in_slab, "round %d: a piece over kMaxBytes came from the slab", round);
      EXPECT(pieces[1].in_slab, "round %d: the small piece after it", round);
    }
  });

  run_test("a failed call's pieces are zero again in the next call", [&] {
    const size_t big = 2 * mib;
    expect_zeroed(call({big, 40}, /*fail=*/true), "failing");
    for (int round = 0; round < 2; ++round) {
      std::vector<Piece> pieces = call({big, 40});
      expect_zeroed(pieces, "after the failure");
    }
  });

  run_test("pieces taken outside a guarded call are zeroed", [&] {
    void* p = irgl::scratch_bytes(mib);
    EXPECT(nonzero(p, mib) == 0, "outside a call");
    irgl::scratch_free(p);
    expect_zeroed(call({mib}), "the call after");
  });
  return finish();
}
