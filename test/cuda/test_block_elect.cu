// GPU tests of the block cooperation primitives of nested parallelism:
// irgl_block_elect (one barrier when nobody wants, three otherwise) and
// irgl_block_bcast, in the election loops the lowering emits.
#include "test_common.cuh"

#include <vector>

static const int BLOCK = 1024;
static const int BLOCKS = 6;
static const int MAX_ROUNDS = BLOCK + 2;

/// Whether thread `t` of block `b` wants to be elected (block 0: nobody).
__host__ __device__ bool wants(int b, int t) {
  if (b == 0) return false;
  if (b == 1) return true;
  return (t * 7 + b) % (b + 1) == 0;
}

/// Each block runs an election loop; thread 0 records each round's owner
/// and the value broadcast from it (owner * 3 + 1), -1 at the end.
__global__ void elect_loop(int32_t* owners, int32_t* values) {
  const int b = blockIdx.x, t = threadIdx.x;
  const bool want = wants(b, t);
  bool done = false;
  int round = 0;
  while (true) {
    const int32_t owner = irgl_block_elect(want && !done);
    if (t == 0) owners[b * MAX_ROUNDS + round] = owner;
    if (owner < 0) break;
    const int32_t v = irgl_block_bcast_i32(t * 3 + 1, owner);
    if (t == 0) values[b * MAX_ROUNDS + round] = v;
    done = done || t == owner;
    ++round;
  }
}

int main() {
  run_test("election loop elects each wanting thread once, highest first", [] {
    int32_t* owners = irgl_alloc<int32_t>(BLOCKS * MAX_ROUNDS);
    int32_t* values = irgl_alloc<int32_t>(BLOCKS * MAX_ROUNDS);
    irgl::launch(elect_loop, BLOCKS, BLOCK, owners, values);
    IRGL_CHECK(cudaDeviceSynchronize());
    const std::vector<int32_t> got = to_host(owners, BLOCKS * MAX_ROUNDS);
    const std::vector<int32_t> got_values = to_host(values, BLOCKS * MAX_ROUNDS);
    for (int b = 0; b < BLOCKS; ++b) {
      int round = 0;
      for (int t = BLOCK - 1; t >= 0; --t) {
        if (!wants(b, t)) continue;
        EXPECT(got[b * MAX_ROUNDS + round] == t, "block %d round %d: owner %d, want %d", b, round,
               got[b * MAX_ROUNDS + round], t);
        EXPECT(got_values[b * MAX_ROUNDS + round] == t * 3 + 1, "block %d round %d: value %d", b, round,
               got_values[b * MAX_ROUNDS + round]);
        ++round;
      }
      EXPECT(got[b * MAX_ROUNDS + round] == -1, "block %d: no -1 after %d rounds", b, round);
    }
    irgl_free(owners);
    irgl_free(values);
  });
  return finish();
}
