// Latencies of the pieces of a level of a high-diameter traversal on this
// GPU, measured with the runtime the generated code uses (irgl_grid_sync,
// irgl::launch_cooperative, irgl_wl_push): what benchmarks/latency/run.py
// sets against the per-level time of BFS on the 2048x2048 grid.
//
// Every figure is the median over REPS runs of the mean over ITERS
// dependent repetitions, timed on the device with %globaltimer (ns) unless
// it is a host-side launch. Prints one JSON object.
#include "../../cuda_emitter/runtime/irgl_runtime.cuh"

#include <cooperative_groups.h>  // cluster barriers (the runtime no longer includes it)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int ITERS = 4096;
constexpr int REPS = 9;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// ITERS grid barriers (the control kernel's, at its co-resident grid).
__global__ void __launch_bounds__(1024, 1) grid_barriers(unsigned long long* ns) {
  irgl_grid_sync();
  const unsigned long long t0 = now_ns();
  for (int i = 0; i < ITERS; ++i) irgl_grid_sync();
  const unsigned long long t1 = now_ns();
  if (irgl_is_first_thread()) *ns = t1 - t0;
}

/// ITERS block barriers of one 1024-thread block (the small-worklist mode).
__global__ void __launch_bounds__(1024, 1) block_barriers(unsigned long long* ns) {
  __syncthreads();
  const unsigned long long t0 = now_ns();
  for (int i = 0; i < ITERS; ++i) __syncthreads();
  const unsigned long long t1 = now_ns();
  if (threadIdx.x == 0) *ns = t1 - t0;
}

/// A pointer chase: ITERS dependent loads (one thread).
__global__ void chase(const int32_t* next, int32_t start, unsigned long long* ns, int32_t* sink) {
  int32_t p = start;
  for (int i = 0; i < 64; ++i) p = next[p];  // warm the first lines
  const unsigned long long t0 = now_ns();
  for (int i = 0; i < ITERS; ++i) p = next[p];
  const unsigned long long t1 = now_ns();
  *ns = t1 - t0;
  *sink = p;
}

/// ITERS dependent atomics on one word (one thread): each adds the last
/// result's low bit, so the next cannot start before the last returned.
__global__ void atomic_chain(int32_t* word, unsigned long long* ns) {
  int32_t v = 0;
  const unsigned long long t0 = now_ns();
  for (int i = 0; i < ITERS; ++i) v = atomicAdd(word, (v & 1) + 1);
  const unsigned long long t1 = now_ns();
  *ns = t1 - t0;
  word[1] = v;
}

/// ITERS rounds of one block: every thread pushes one item onto a worklist
/// (warp-aggregated atomicAdd on its tail), then a barrier, then thread 0
/// reads and resets the tail: the push-and-size part of a step.
__global__ void __launch_bounds__(1024, 1) push_rounds(irgl::Worklist wl, int active, unsigned long long* ns) {
  const unsigned long long t0 = now_ns();
  for (int i = 0; i < ITERS; ++i) {
    if (static_cast<int>(threadIdx.x) < active) irgl_wl_push(wl, threadIdx.x);
    __syncthreads();
    if (threadIdx.x == 0) *reinterpret_cast<volatile irgl_index*>(wl.tail) = 0;
    __syncthreads();
  }
  const unsigned long long t1 = now_ns();
  if (threadIdx.x == 0) *ns = t1 - t0;
}

__global__ void empty_kernel() {}

/// Thread-block clusters (sm_90): ITERS cluster barriers, then ITERS grid
/// barriers, in a cooperative launch whose blocks form clusters; between the
/// cluster barriers every block writes a global word that the next block of
/// its cluster reads after the barrier (errors[0] counts stale reads).
/// A cluster barrier could end a step of a medium worklist that one cluster
/// runs, as the block barrier ends one of the small-worklist mode.
__global__ void __launch_bounds__(1024, 1) cluster_barriers(unsigned long long* ns, int* words, int* errors) {
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const unsigned size = cluster.num_blocks();
  int* mine = words + (blockIdx.x - rank);
  cg::this_grid().sync();
  const unsigned long long t0 = now_ns();
  for (int i = 1; i <= ITERS; ++i) {
    if (threadIdx.x == 0) reinterpret_cast<volatile int*>(mine)[rank] = i;
    cluster.sync();
    if (threadIdx.x == 0 && reinterpret_cast<volatile int*>(mine)[(rank + 1) % size] < i) atomicAdd(errors, 1);
  }
  const unsigned long long t1 = now_ns();
  cg::this_grid().sync();
  const unsigned long long t2 = now_ns();
  for (int i = 0; i < ITERS; ++i) cg::this_grid().sync();
  const unsigned long long t3 = now_ns();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ns[0] = t1 - t0;
    ns[1] = t3 - t2;
  }
}

struct ClusterFigures {
  int size = 0;
  int clusters = 0;            // co-resident clusters (occupancy API)
  bool launched = false;       // cooperative + cluster launch accepted
  double cluster_sync_ns = 0;  // per cluster barrier
  double grid_sync_ns = 0;     // per grid barrier of that launch
  int stale = 0;               // stale reads after a cluster barrier
};

ClusterFigures measure_clusters(int size, unsigned long long* ns) {
  ClusterFigures f;
  f.size = size;
  if (size > 8) {
    if (cudaFuncSetAttribute(cluster_barriers, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
      (void)cudaGetLastError();
      return f;
    }
  }
  cudaLaunchConfig_t config = {};
  config.blockDim = dim3(1024);
  cudaLaunchAttribute attrs[2];
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim.x = static_cast<unsigned>(size);
  attrs[0].val.clusterDim.y = 1;
  attrs[0].val.clusterDim.z = 1;
  attrs[1].id = cudaLaunchAttributeCooperative;
  attrs[1].val.cooperative = 1;
  config.attrs = attrs;
  config.numAttrs = 1;
  config.gridDim = dim3(static_cast<unsigned>(size));
  if (cudaOccupancyMaxActiveClusters(&f.clusters, cluster_barriers, &config) != cudaSuccess || f.clusters <= 0) {
    (void)cudaGetLastError();
    return f;
  }
  config.numAttrs = 2;
  config.gridDim = dim3(static_cast<unsigned>(f.clusters * size));
  int* words = irgl_alloc<int32_t>(f.clusters * size);
  int* errors = irgl_alloc<int32_t>(1);
  std::vector<double> cl, gr;
  for (int r = 0; r < REPS; ++r) {
    IRGL_CHECK(cudaMemset(words, 0, sizeof(int) * f.clusters * size));
    if (cudaLaunchKernelEx(&config, cluster_barriers, ns, words, errors) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      (void)cudaGetLastError();
      irgl_free(words);
      irgl_free(errors);
      return f;
    }
    unsigned long long h[2];
    IRGL_CHECK(cudaMemcpy(h, ns, sizeof(h), cudaMemcpyDeviceToHost));
    cl.push_back(h[0] / static_cast<double>(ITERS));
    gr.push_back(h[1] / static_cast<double>(ITERS));
  }
  IRGL_CHECK(cudaMemcpy(&f.stale, errors, sizeof(int), cudaMemcpyDeviceToHost));
  irgl_free(words);
  irgl_free(errors);
  f.launched = true;
  f.cluster_sync_ns = median(cl);
  f.grid_sync_ns = median(gr);
  return f;
}


/// A random cyclic permutation of n slots spaced `stride` ints apart.
std::vector<int32_t> cycle(size_t n, size_t stride) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(1));
  std::vector<int32_t> next(n * stride, 0);
  for (size_t i = 0; i < n; ++i)
    next[static_cast<size_t>(order[i]) * stride] = static_cast<int32_t>(order[(i + 1) % n] * stride);
  return next;
}

template <class Run>
double per_op_ns(Run run) {
  std::vector<double> samples;
  for (int r = 0; r < REPS; ++r) samples.push_back(run() / static_cast<double>(ITERS));
  return median(samples);
}

unsigned long long read_ns(const unsigned long long* ns) {
  unsigned long long h = 0;
  IRGL_CHECK(cudaMemcpy(&h, ns, sizeof(h), cudaMemcpyDeviceToHost));
  return h;
}

double chase_ns(size_t bytes, unsigned long long* ns, int32_t* sink) {
  const size_t stride = 32;  // one 128-byte line per slot
  const size_t n = std::max<size_t>(2, bytes / (stride * sizeof(int32_t)));
  const std::vector<int32_t> host = cycle(n, stride);
  int32_t* dev = irgl_alloc<int32_t>(static_cast<irgl_index>(host.size()));
  IRGL_CHECK(cudaMemcpy(dev, host.data(), host.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  const double r = per_op_ns([&] {
    irgl::launch(chase, 1, 1, dev, 0, ns, sink);
    return static_cast<double>(read_ns(ns));
  });
  irgl_free(dev);
  return r;
}

}  // namespace

int main() {
  try {
    cudaDeviceProp prop{};
    IRGL_CHECK(cudaGetDeviceProperties(&prop, 0));
    unsigned long long* ns = irgl_alloc<unsigned long long>(2);
    int32_t* scratch = irgl_alloc<int32_t>(2);

    const irgl_index grid = irgl::grid_size(grid_barriers, 1024, true);
    const double grid_sync = per_op_ns([&] {
      irgl::launch_cooperative(grid_barriers, grid, 1024, ns);
      return static_cast<double>(read_ns(ns));
    });
    const double block_sync = per_op_ns([&] {
      irgl::launch(block_barriers, 1, 1024, ns);
      return static_cast<double>(read_ns(ns));
    });
    const double l2 = chase_ns(size_t{8} << 20, ns, scratch);    // 8 MB: in L2
    const double dram = chase_ns(size_t{2} << 30, ns, scratch);  // 2 GB: DRAM, TLB misses
    const double atomic = per_op_ns([&] {
      irgl::launch(atomic_chain, 1, 1, scratch, ns);
      return static_cast<double>(read_ns(ns));
    });
    irgl::Worklist wl = irgl_wl_create(4096);
    const double push_1024 = per_op_ns([&] {
      irgl::launch(push_rounds, 1, 1024, wl, 1024, ns);
      return static_cast<double>(read_ns(ns));
    });
    const double push_32 = per_op_ns([&] {
      irgl::launch(push_rounds, 1, 1024, wl, 32, ns);
      return static_cast<double>(read_ns(ns));
    });
    irgl_wl_destroy(wl);
    std::vector<double> launches;
    for (int r = 0; r < 200; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      irgl::launch(empty_kernel, 1, 32);
      IRGL_CHECK(cudaDeviceSynchronize());
      const auto t1 = std::chrono::steady_clock::now();
      launches.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    std::string clusters;
    for (int size : {2, 4, 8, 16}) {
      const ClusterFigures f = measure_clusters(size, ns);
      char row[256];
      std::snprintf(row, sizeof(row),
                    "%s{\"size\": %d, \"clusters\": %d, \"cooperative\": %s, \"cluster_sync_ns\": %.1f, "
                    "\"grid_sync_ns\": %.1f, \"stale_reads\": %d}",
                    clusters.empty() ? "" : ", ", f.size, f.clusters, f.launched ? "true" : "false",
                    f.cluster_sync_ns, f.grid_sync_ns, f.stale);
      clusters += row;
    }
    std::printf(
        "{\"device\": \"%s\", \"sms\": %d, \"control_grid\": %lld, \"grid_sync_ns\": %.1f, "
        "\"block_sync_ns\": %.1f, \"l2_load_ns\": %.1f, \"dram_load_ns\": %.1f, \"atomic_ns\": %.1f, "
        "\"push_round_1024_ns\": %.1f, \"push_round_32_ns\": %.1f, \"launch_sync_ns\": %.1f, \"clusters\": [%s]}\n",
        prop.name, prop.multiProcessorCount, static_cast<long long>(grid), grid_sync, block_sync, l2, dram,
        atomic, push_1024, push_32, median(launches), clusters.c_str());
    irgl_free(ns);
    irgl_free(scratch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latency: %s\n", e.what());
    return 1;
  }
  return 0;
}
