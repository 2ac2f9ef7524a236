// GPU tests of the grid barrier and cooperative launches: 10,000 rounds of a
// grid at full co-resident size (no deadlock, no lost update), a grid that
// cannot be co-resident (irgl::Error, not a hang), and grid_size.
#include "test_common.cuh"

static const int ROUNDS = 10000;

/// Each round every block adds 1 to counts[r] and publishes r in its slot of
/// a double buffer; after the barrier every block checks counts[r] and the
/// slot of the next block. Mismatches are counted in errors.
__global__ void rounds_kernel(int* counts, int* slots, int* errors, int rounds) {
  const int nb = gridDim.x, b = blockIdx.x;
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x == 0) {
      atomicAdd(&counts[r], 1);
      slots[(r & 1) * nb + b] = r;  // plain store
    }
    irgl_grid_sync();
    if (threadIdx.x == 0) {
      if (counts[r] != nb) atomicAdd(&errors[0], 1);
      if (slots[(r & 1) * nb + (b + 1) % nb] != r) atomicAdd(&errors[1], 1);
    }
  }
}

/// A small cooperative kernel: every thread adds 1.
__global__ void count_threads(int* total) {
  irgl_grid_sync();
  atomicAdd(total, 1);
}

/// The three-phase Exclusive of the lowering (race, priority check, check),
/// on claim cells: thread t (priority t+1) wants elements t % m and
/// (t * mult + 3) % m. Winners count themselves in owners[] per element.
__global__ void exclusive_kernel(int32_t* claims, int* owners, int* winners, int m, int mult) {
  const irgl_index t = irgl_global_thread_id();
  const int32_t prio = static_cast<int32_t>(t) + 1;
  const irgl_index e[2] = {t % m, static_cast<irgl_index>((static_cast<long long>(t) * mult + 3) % m)};
  for (int k = 0; k < 2; ++k) irgl_claim_write(claims, e[k], prio);
  irgl_grid_sync();
  bool mine = true;
  for (int k = 0; k < 2; ++k) mine = mine && irgl_claim_read(claims, e[k]) == prio;
  if (!mine)
    for (int k = 0; k < 2; ++k) irgl_claim_raise(claims, e[k], prio);
  irgl_grid_sync();
  mine = true;
  for (int k = 0; k < 2; ++k) mine = mine && irgl_claim_read(claims, e[k]) == prio;
  if (mine) {
    atomicAdd(&owners[e[0]], 1);
    if (e[1] != e[0]) atomicAdd(&owners[e[1]], 1);
    atomicAdd(&winners[0], 1);
    if (t == irgl_global_num_threads() - 1) winners[1] = 1;  // the top priority won
  }
  irgl_grid_sync();
}

int main() {
  run_test("10,000 grid barriers at full residency", [] {
    const irgl_index block = 256;
    const irgl_index grid = irgl::grid_size(rounds_kernel, block, true);
    EXPECT(grid >= 1, "grid_size %d", (int)grid);
    EXPECT(irgl::grid_size(rounds_kernel, block, true) == grid, "grid_size not stable");
    int* counts = irgl_alloc<int32_t>(ROUNDS);
    int* slots = irgl_alloc<int32_t>(2 * grid);
    int* errors = irgl_alloc<int32_t>(2);
    IRGL_CHECK(cudaMemset(slots, 0xff, 2 * grid * sizeof(int)));
    irgl::launch_cooperative(rounds_kernel, grid, block, counts, slots, errors, ROUNDS);
    IRGL_CHECK(cudaDeviceSynchronize());
    std::vector<int> e = to_host(errors, 2);
    EXPECT(e[0] == 0 && e[1] == 0, "%d count mismatches, %d stale slots", e[0], e[1]);
    std::vector<int> c = to_host(counts, ROUNDS);
    int bad = 0;
    for (int x : c) bad += x != grid;
    EXPECT(bad == 0, "%d rounds with a wrong total", bad);
    std::printf("     (%d blocks x %d threads)\n", (int)grid, (int)block);
    irgl_free(counts);
    irgl_free(slots);
    irgl_free(errors);
  });

  run_test("a grid that cannot be co-resident throws", [] {
    const irgl_index block = 1024;
    const irgl_index max = irgl::grid_size(count_threads, block, true);
    int* total = irgl_alloc<int32_t>(1);
    std::string msg;
    try {
      irgl::launch_cooperative(count_threads, max + 1, block, total);
    } catch (const irgl::Error& e) {
      msg = e.what();
    }
    EXPECT(msg.find("co-resident") != std::string::npos, "message: '%s'", msg.c_str());
    // The device is fine afterwards and a resident grid works.
    irgl::launch_cooperative(count_threads, max, block, total);
    EXPECT(to_host(total, 1)[0] == max * block, "total %d", to_host(total, 1)[0]);
    irgl_free(total);
  });

  run_test("grid_size, launch errors and IRGL_CHECK", [] {
    EXPECT(irgl::grid_size(count_threads, 32, false) >= 1, "non-resident grid size < 1");
    std::string msg;
    try {
      irgl::launch(count_threads, 1, 2048, static_cast<int*>(nullptr));  // block too large
    } catch (const irgl::Error& e) {
      msg = e.what();
    }
    EXPECT(!msg.empty(), "a 2048-thread block did not throw");
    msg.clear();
    try {
      IRGL_CHECK(cudaSetDevice(1 << 20));  // no such device
    } catch (const irgl::Error& e) {
      msg = e.what();
    }
    EXPECT(msg.find("test_grid_sync.cu:") != std::string::npos, "IRGL_CHECK message '%s'", msg.c_str());
    EXPECT(irgl_device_synchronize() == 0, "device unusable: %s", irgl_last_error());
  });

  run_test("Exclusive claims: winners are disjoint, top priority wins", [] {
    const irgl_index block = 256;
    const irgl_index grid = irgl::grid_size(exclusive_kernel, block, true);
    const int threads = static_cast<int>(grid * block), m = threads / 4;
    int32_t* claims = irgl_alloc<int32_t>(m);
    int* owners = irgl_alloc<int32_t>(m);
    int* winners = irgl_alloc<int32_t>(2);
    for (int mult : {1, 7, 12345}) {
      IRGL_CHECK(cudaMemset(claims, 0, m * sizeof(int32_t)));
      IRGL_CHECK(cudaMemset(owners, 0, m * sizeof(int)));
      IRGL_CHECK(cudaMemset(winners, 0, 2 * sizeof(int)));
      irgl::launch_cooperative(exclusive_kernel, grid, block, claims, owners, winners, m, mult);
      std::vector<int> o = to_host(owners, m), w = to_host(winners, 2);
      int shared = 0;
      for (int x : o) shared += x > 1;
      EXPECT(shared == 0, "mult %d: %d elements owned by several winners", mult, shared);
      EXPECT(w[0] >= 1 && w[1] == 1, "mult %d: %d winners, top priority won: %d", mult, w[0], w[1]);
    }
    irgl_free(claims);
    irgl_free(owners);
    irgl_free(winners);
  });

  return finish();
}
