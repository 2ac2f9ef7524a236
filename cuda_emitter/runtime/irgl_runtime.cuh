// irgl_runtime.cuh -- the header-only CUDA runtime of IrGL on xDSL.
//
// This file implements the runtime half of the contract in docs/lowered-ir.md:
// the handle structs (irgl::Graph, irgl::Worklist, irgl::Pipe, irgl::Cell),
// the device-side functions the lowered kernels call (worklist push/pop,
// locks, the grid barrier, Any/All reduction), the host-side functions the
// lowered host code calls (pipes, cells, launches, occupancy), and the
// extern "C" ABI every emitted shared object exports for Python (ctypes).
//
// Build: nvcc -arch=sm_70 or newer (the locks and the push rely on independent
// thread scheduling), -std=c++17, no extra include flags. Every function is
// inline (or a template), so several translation units may include it; the
// extern "C" ABI functions are additionally marked `used` so that they are
// emitted (and exported from a shared object) even when nothing calls them.
//
// Options (define before including):
//   IRGL_INDEX_BITS=64   irgl_index is int64_t instead of int.
//   IRGL_SYNC_LAUNCH     synchronize after every launch (debugging: errors are
//                        then reported by the launch that caused them).
//   IRGL_RUNTIME_LIBRARY the runtime's host functions that are not templates
//                        are only declared: link the shared library built
//                        from this header with IRGL_RUNTIME_LIBRARY_BUILD
//                        (irgl_runner.build does both). A program then
//                        compiles without them and without the standard
//                        C++ headers they need, about 0.8 s of nvcc each.
//
// Errors in host code throw irgl::Error; extern "C" functions catch them,
// store the message (irgl_last_error()) and return an error value.
#pragma once

#include <cuda_runtime.h>

#if !defined(__CUDACC__)
// A host C++ compiler (the runtime library is built with one: it holds no
// device code): the device code below parses against these declarations and
// is never emitted, every device function being inline and called from
// device code only (kernels are compiled by nvcc alone, `#ifdef __CUDACC__`).
#include <math.h>
extern const uint3 threadIdx, blockIdx;
extern const dim3 blockDim, gridDim;
void __syncthreads();
int __syncthreads_or(int);
void __syncwarp(unsigned = 0xffffffffu);
void __threadfence();
void __nanosleep(unsigned);
void __trap();
void __barrier_sync(unsigned);
unsigned __activemask();
unsigned __ballot_sync(unsigned, int);
int __ffs(int);
int __popc(unsigned);
template <class T>
unsigned __match_any_sync(unsigned, T);
template <class T, class... R>
T __shfl_sync(unsigned, T, R...);
template <class T, class... R>
T __shfl_up_sync(unsigned, T, R...);
template <class T, class... R>
T __shfl_xor_sync(unsigned, T, R...);
template <class T, class U>
T atomicAdd(T*, U);
template <class T, class U>
T atomicAdd_block(T*, U);
template <class T, class U>
T atomicSub(T*, U);
template <class T, class U>
T atomicExch(T*, U);
template <class T, class U>
T atomicMax(T*, U);
template <class T, class U, class V>
T atomicCAS(T*, U, V);
#endif

// IRGL_HOST_CODE: whether this pass sees the runtime's host-only code (launch
// helpers, pipes, cells, the extern "C" functions). The programs the cuda
// target emits define IRGL_SPLIT_HOST_CODE and wrap their own host code in
// `#if IRGL_HOST_CODE`: nvcc's device pass (cicc) then skips both, and the
// standard headers only they need, about 0.25 s of every program's compile.
// irgl::Error and IRGL_CHECK stay visible to both passes (C escapes use
// them in host functions that both passes parse). Other
// sources that include this header, and distributed builds, see everything
// in both passes.
#if defined(__CUDA_ARCH__) && defined(IRGL_SPLIT_HOST_CODE) && !defined(IRGL_DISTRIBUTED)
#define IRGL_HOST_CODE 0
#else
#define IRGL_HOST_CODE 1
#endif

// IRGL_HOST_IMPL: whether this pass defines the host functions that are not
// templates (else they are declared, IRGL_RUNTIME_LIBRARY). IRGL_HOST_API
// marks them: inline in a header-only build, exported from the runtime
// library, plain declarations in a program linked with it.
// (A module's __device__ variables are its own: the distributed runtime's,
// the control-kernel profile's and the edge counter's host code reads the
// program's.)
#if defined(IRGL_RUNTIME_LIBRARY) &&                                                            \
    (defined(IRGL_DISTRIBUTED) || defined(IRGL_RUNTIME_LIBRARY_BUILD) || defined(IRGL_PROFILE_CONTROL) || \
     defined(IRGL_COUNT_EDGES))
#error "IRGL_RUNTIME_LIBRARY: not with IRGL_DISTRIBUTED, IRGL_RUNTIME_LIBRARY_BUILD, IRGL_PROFILE_CONTROL or IRGL_COUNT_EDGES"
#endif
#if IRGL_HOST_CODE && !defined(IRGL_RUNTIME_LIBRARY)
#define IRGL_HOST_IMPL 1
#else
#define IRGL_HOST_IMPL 0
#endif
#if defined(IRGL_RUNTIME_LIBRARY_BUILD)
#define IRGL_HOST_API __attribute__((visibility("default")))
#elif defined(IRGL_RUNTIME_LIBRARY)
#define IRGL_HOST_API
#else
#define IRGL_HOST_API inline
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <type_traits>
#include <utility>
// <string> and <stdexcept>: every build but a program linked with the
// runtime library whose C text in host code does not name std::
// (IRGL_HOST_C_TEXT: it does, see irgl_runner.build); about 0.3 s of
// compiling. irgl::Error needs neither.
#if !defined(IRGL_RUNTIME_LIBRARY) || defined(IRGL_HOST_C_TEXT)
#include <stdexcept>
#include <string>
#endif
#if IRGL_HOST_IMPL
#include <map>
#include <vector>
#endif

// The runtime's cache of memory pools (scratch_pool) locks a pthread mutex:
// <mutex> (with <chrono> and <system_error>) costs every program about 0.2 s
// of compiling.
#if IRGL_HOST_IMPL
#include <pthread.h>
#endif

#if defined(IRGL_INDEX_BITS) && IRGL_INDEX_BITS == 64
/// The C++ type of MLIR `index` (Target option index-bitwidth=64).
typedef int64_t irgl_index;
#else
/// The C++ type of MLIR `index` (default: 32 bits).
typedef int irgl_index;
#endif

/// Marks an extern "C" ABI function: emitted even if unused, exported.
#define IRGL_EXPORT extern "C" __attribute__((used, visibility("default"))) inline

/// A control kernel's device body that it calls from several places and that
/// is large (`#irgl_rt.noinline`): compiled once, called. Building with
/// -DIRGL_NOINLINE_BODY= inlines it at every call site instead.
#ifndef IRGL_NOINLINE_BODY
#define IRGL_NOINLINE_BODY __noinline__
#endif

namespace irgl {

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// The exception every host-side runtime failure throws (CUDA errors,
/// worklist overflow, a cooperative grid that cannot be co-resident, invalid
/// input), and C text in host code may throw. Entry points catch it
/// (irgl::guard) and return 1. Built from a C string or anything with
/// `c_str()` (a std::string), whose first kMax - 1 bytes it keeps: it needs
/// no <string>, so every program has it at no cost of compiling.
struct Error : std::exception {
  static constexpr size_t kMax = 1024;
  explicit Error(const char* what) noexcept {
    size_t n = what ? std::strlen(what) : 0;
    if (n >= kMax) n = kMax - 1;
    if (n) std::memcpy(message_, what, n);
    message_[n] = '\0';
  }
  template <class S, class = decltype(static_cast<const char*>(std::declval<const S&>().c_str()))>
  explicit Error(const S& what) noexcept : Error(what.c_str()) {}
  const char* what() const noexcept override { return message_; }

 private:
  char message_[kMax];
};

#ifndef IRGL_RUNTIME_LIBRARY

/// Per-thread storage of the last message stored by a failed extern "C"
/// function (read through irgl_last_error()).
inline std::string& last_error_storage() {
  thread_local std::string message;
  return message;
}

/// Stores `message` as the last error of the calling host thread.
inline void set_last_error(const std::string& message) { last_error_storage() = message; }
#endif

namespace detail {
/// guard's work: runs fn(ctx) and catches what it throws (below).
IRGL_HOST_API int guarded(void (*fn)(void*), void* ctx) noexcept;
/// IRGL_CHECK's failure: clears CUDA's last error and throws irgl::Error
/// ("<where>: <cudaGetErrorString>").
[[noreturn]] IRGL_HOST_API void fail_cuda(cudaError_t err, const char* where);
}  // namespace detail

/// Runs `f()`; returns 0 on success, or stores the message of any exception
/// it throws (irgl_last_error()) and returns 1. Used by emitted entry points.
/// The outermost guard of a host thread also brackets the call for the
/// small-scratch slab (detail::call_end clears what the call used).
template <class F>
inline int guard(F&& f) noexcept {
  typedef typename std::remove_reference<F>::type Fn;
  return detail::guarded([](void* c) { (*static_cast<Fn*>(c))(); },
                         const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace irgl

#define IRGL_STRINGIFY_(x) #x
#define IRGL_STRINGIFY(x) IRGL_STRINGIFY_(x)

/// Evaluates a CUDA runtime call; on failure clears CUDA's (non-sticky) last
/// error and throws irgl::Error("file:line: call: <cudaGetErrorString>").
#define IRGL_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t irgl_check_err_ = (call);                                                         \
    if (irgl_check_err_ != cudaSuccess) {                                                         \
      (void)cudaGetLastError(); /* this module's CUDA runtime's (see check_launch) */             \
      ::irgl::detail::fail_cuda(irgl_check_err_, __FILE__ ":" IRGL_STRINGIFY(__LINE__) ": " #call); \
    }                                                                                             \
  } while (0)

namespace irgl {

// ---------------------------------------------------------------------------
// Handle structs (passed to kernels by value)
// ---------------------------------------------------------------------------

/// A CSR graph resident on the device. row_start has nnodes+1 entries,
/// edge_dst and edge_weight nedges (edge_weight is all 1s for an unweighted
/// graph). `max_degree` is the largest out-degree (0 without nodes).
/// Created by irgl_graph_create, which returns an irgl::Graph*.
struct Graph {
  irgl_index nnodes, nedges;
  irgl_index* row_start;
  irgl_index* edge_dst;
  int32_t* edge_weight;
  irgl_index max_degree = 0;
};

/// One device worklist: `capacity` int32 items, a tail counter (number of
/// pushes so far; may exceed capacity after an overflow) and an overflow flag
/// (set when a push did not fit). All three point to device memory.
/// `retry_round` (kept in the handle, not in device memory) says how many
/// retry rounds in a row produced this worklist as `in`: 0 for the first
/// invocation of a kernel on it, r after r re-launches on retried items
/// (irgl_pipe_advance_retry, irgl_wl_next_round). Kernels lowered with
/// `retry_backoff` read it to back off (irgl_backoff_chunk).
struct Worklist {
  int32_t* items;
  irgl_index* tail;
  int* overflow;
  irgl_index capacity;
  irgl_index retry_round = 0;
};

/// A pipe context (host only): the in, out and retry worklists of a Pipe or
/// Iterate. Kernels pop from `in` and push to `out` / `retry`;
/// irgl_pipe_advance / irgl_pipe_advance_retry rotate them.
struct Pipe {
  Worklist in, out, retry;
  irgl_index capacity;
  int32_t* items_storage;  // 3 * capacity items, one scratch allocation
  size_t items_bytes;      // its size (detail::give_items may keep the block for the next pipe)
  char* meta_storage;      // 3 * kMetaBytes: per worklist tail + overflow flag
  static constexpr size_t kMetaBytes = 16;  // tail at +0 (8 bytes), flag at +8
  // Size of `in` as read by the last advance, or -1 when unknown. Kernels
  // never push to `in`, so it stays valid until `in` changes on the host.
  irgl_index in_size = -1;
};

/// An Any/All reduction cell for ReduceAndReturn: one device int flag.
/// Any: reset to 0, set to 1 by any true value. All: reset to 1, cleared by
/// any false value.
struct Cell {
  int* flag;
  bool any;
};

namespace detail {

/// Unsigned counterpart of irgl_index (wrap-around arithmetic on positions).
typedef std::make_unsigned<irgl_index>::type uindex;

/// Atomic add on an irgl_index counter; returns the old value.
__device__ __forceinline__ int atomic_add_index(int* p, int v) { return atomicAdd(p, v); }
/// Atomic add on a 64-bit irgl_index counter; returns the old value.
__device__ __forceinline__ int64_t atomic_add_index(int64_t* p, int64_t v) {
  return static_cast<int64_t>(
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v)));
}

/// The calling thread's lane in its warp (works for any block shape).
__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

}  // namespace detail
}  // namespace irgl

// ---------------------------------------------------------------------------
// Graph accessors
// ---------------------------------------------------------------------------

/// Number of nodes.
__host__ __device__ __forceinline__ irgl_index irgl_graph_num_nodes(irgl::Graph g) { return g.nnodes; }
/// Number of edges.
__host__ __device__ __forceinline__ irgl_index irgl_graph_num_edges(irgl::Graph g) { return g.nedges; }
/// First edge of node n: row_start[n].
__device__ __forceinline__ irgl_index irgl_graph_first_edge(irgl::Graph g, irgl_index n) {
  return g.row_start[n];
}
#ifdef IRGL_COUNT_EDGES
// Edge-read counter of a counting build (-DIRGL_COUNT_EDGES; for measuring
// work, never for timing): the edges the program's threads read
// (irgl_graph_edge_dst calls), summed. Each read adds to its thread's span
// slot (below); a slot is added here when its step publishes or a launch's
// drain takes it, so the count is exact whichever form (a thread, a warp, a
// block or a team of blocks) walked the edges, and a loop that stops early
// counts only what it read; an unrolled edge loop's copy past its range's
// end reads the range's last edge again, and counts it again. Read and
// reset by irgl_edge_reads_take.
__device__ unsigned long long irgl_edge_reads;
// The synchronization steps of a counting build: [0] grid barriers passed
// (block 0's count), [1] and [2] the worklist steps (irgl_ctl_size_check) of
// block 0 and of block 1 (their difference: the small-worklist mode's rounds,
// which block 0 takes alone). Kernel launches are counted on the host
// (irgl::detail::launches). Read and reset by irgl_steps_take.
__device__ unsigned long long irgl_step_counts[3];
// The span of a counting build: for every step (the code between two grid
// barriers of a control kernel, a round block 0 takes alone in the
// small-worklist mode, a kernel launch), the most edges one thread read
// (irgl_graph_edge_dst calls), summed over the steps. A step ends when its
// slowest thread does, so this is the chain of edge reads that no number of
// threads shortens: a hub's edges read by one block's threads, a bottom-up
// scan of one node, where the edge visits only sum them. Each thread counts
// in irgl_span_thread[its global id mod IRGL_SPAN_THREADS] (threads of a
// larger grid share a slot: their counts add up); the step's end takes the
// maximum and zeroes the slots. Read and reset by irgl_span_take.
#define IRGL_SPAN_THREADS (1 << 20)
__device__ unsigned irgl_span_thread[IRGL_SPAN_THREADS];
__device__ unsigned irgl_span_grid_step;    // the maximum of the grid's current step
__device__ unsigned irgl_span_block_step;   // of block 0's current lone round
__device__ unsigned irgl_span_launch_step;  // of the last kernel launch's leftovers
__device__ unsigned long long irgl_span_total;
/// The calling thread's slot of irgl_span_thread.
__device__ __forceinline__ unsigned* irgl_span_slot() {
  const unsigned long long id = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  return &irgl_span_thread[id & (IRGL_SPAN_THREADS - 1)];
}
/// The calling thread's edge reads of the step into `step` (a maximum); its
/// slot zeroed.
__device__ __forceinline__ void irgl_span_publish(unsigned* step) {
  unsigned* slot = irgl_span_slot();
  const unsigned mine = *slot;
  if (mine != 0) {
    atomicMax(step, mine);
    atomicAdd(&irgl_edge_reads, static_cast<unsigned long long>(mine));
    *slot = 0;
  }
}
/// After every thread of the step published: its maximum added to the span.
/// One thread.
__device__ __forceinline__ void irgl_span_close(unsigned* step) {
  irgl_span_total += *step;
  *step = 0;
}
/// After a kernel launch: every slot's count into irgl_span_launch_step,
/// zeroed (the launch's threads that no barrier closed).
__global__ void irgl_span_drain_kernel() {
  unsigned most = 0;
  unsigned long long reads = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < IRGL_SPAN_THREADS; i += gridDim.x * blockDim.x) {
    const unsigned c = irgl_span_thread[i];
    if (c != 0) {
      most = c > most ? c : most;
      reads += c;
      irgl_span_thread[i] = 0;
    }
  }
  if (most != 0) {
    atomicMax(&irgl_span_launch_step, most);
    atomicAdd(&irgl_edge_reads, reads);
  }
}
/// Then its maximum added to the span.
__global__ void irgl_span_close_kernel() { irgl_span_close(&irgl_span_launch_step); }
#endif
/// One past the last edge of node n: row_start[n+1].
__device__ __forceinline__ irgl_index irgl_graph_last_edge(irgl::Graph g, irgl_index n) {
  return g.row_start[n + 1];
}
/// Out-degree of node n.
__device__ __forceinline__ irgl_index irgl_graph_degree(irgl::Graph g, irgl_index n) {
  return g.row_start[n + 1] - g.row_start[n];
}
/// The largest out-degree of the graph (computed by irgl_graph_create).
__host__ __device__ __forceinline__ irgl_index irgl_graph_max_degree(irgl::Graph g) { return g.max_degree; }
/// Destination node of edge e.
__device__ __forceinline__ irgl_index irgl_graph_edge_dst(irgl::Graph g, irgl_index e) {
#ifdef IRGL_COUNT_EDGES
  atomicAdd(irgl_span_slot(), 1u);
#endif
  return g.edge_dst[e];
}
/// Weight of edge e (1 for an unweighted graph).
__device__ __forceinline__ int32_t irgl_graph_edge_weight(irgl::Graph g, irgl_index e) {
  return g.edge_weight[e];
}
/// Default worklist capacity for a graph: max(nodes, edges) + 1.
__host__ __device__ __forceinline__ irgl_index irgl_graph_capacity(irgl::Graph g) {
  return (g.nnodes > g.nedges ? g.nnodes : g.nedges) + 1;
}

// ---------------------------------------------------------------------------
// Device-side worklist, reduction, locks, barrier, thread ids
// ---------------------------------------------------------------------------

/// Number of items in a worklist (tail clamped to capacity).
__device__ __forceinline__ irgl_index irgl_wl_size(irgl::Worklist wl) {
  irgl_index t = *wl.tail;
  return t < wl.capacity ? t : wl.capacity;
}

/// The i-th item of a worklist (pop; 0 <= i < irgl_wl_size(wl)).
__device__ __forceinline__ irgl_index irgl_wl_item(irgl::Worklist wl, irgl_index i) {
  return static_cast<irgl_index>(wl.items[i]);
}

// Retry backoff (lower-irgl{retry_backoff=true}; spec: Retry "triggers
// conflict management in the runtime", Compiling ForAll: "a mapping that
// distributes contiguous blocks of iterations to a single thread"). In retry
// round r >= 1 of a kernel, thread t runs the `in` slots
// [t * chunk, (t + 1) * chunk) one after another, chunk >= 2^r: items that
// lost together (pushed next to each other) no longer contend with each
// other, and the number of contending threads halves with every round in a
// row that still has conflicts, until one thread runs the rest serially.

/// Largest backoff exponent: a chunk never exceeds 2^20 for the round alone.
#define IRGL_BACKOFF_MAX_SHIFT 20

/// The retry round of `wl` (see irgl::Worklist::retry_round).
__host__ __device__ __forceinline__ irgl_index irgl_wl_retry_round(irgl::Worklist wl) {
  return wl.retry_round;
}

/// Iterations per thread in retry round `round` when the loop has
/// `per_thread` = ceil(count / threads) iterations per thread: per_thread in
/// round 0, else max(per_thread, 2^min(round, IRGL_BACKOFF_MAX_SHIFT)).
__host__ __device__ __forceinline__ irgl_index irgl_backoff_chunk(irgl_index round, irgl_index per_thread) {
  if (round <= 0) return per_thread;
  const int shift = round < IRGL_BACKOFF_MAX_SHIFT ? static_cast<int>(round) : IRGL_BACKOFF_MAX_SHIFT;
  const irgl_index backoff = static_cast<irgl_index>(1) << shift;
  return per_thread > backoff ? per_thread : backoff;
}

/// `next` (the old retry worklist, becoming `in`) one retry round after
/// `prev` (the old `in`): a control kernel's in/retry swap.
__host__ __device__ __forceinline__ irgl::Worklist irgl_wl_next_round(irgl::Worklist next, irgl::Worklist prev) {
  next.retry_round = prev.retry_round + 1;
  return next;
}

/// `wl` with its retry round reset to 0 (a worklist leaving `in`).
__host__ __device__ __forceinline__ irgl::Worklist irgl_wl_first_round(irgl::Worklist wl) {
  wl.retry_round = 0;
  return wl;
}

/// Pushes v (stored as int32) onto wl. Warp-aggregated and safe under
/// divergence: the currently active lanes that push to the same worklist
/// (grouped with __match_any_sync on the tail address, so one call site may
/// target different worklists) elect a leader that does one atomicAdd for the
/// group and broadcasts the base. A push that lands at or past the capacity
/// is dropped and sets the overflow flag; nothing is written out of bounds.
__device__ __forceinline__ void irgl_wl_push(irgl::Worklist wl, irgl_index v) {
  using irgl::detail::uindex;
  const unsigned active = __activemask();
  const unsigned peers =
      __match_any_sync(active, static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(wl.tail)));
  const unsigned lane = irgl::detail::lane_id();
  const int leader = __ffs(peers) - 1;
  const unsigned rank = __popc(peers & ((1u << lane) - 1u));
  irgl_index base = 0;
  if (static_cast<int>(lane) == leader)
    base = irgl::detail::atomic_add_index(wl.tail, static_cast<irgl_index>(__popc(peers)));
  base = __shfl_sync(peers, base, leader);
  const uindex pos = static_cast<uindex>(base) + rank;
  if (pos < static_cast<uindex>(wl.capacity)) {
    wl.items[pos] = static_cast<int32_t>(v);
  } else {
    *reinterpret_cast<volatile int*>(wl.overflow) = 1;
  }
}

// Block-aggregated pushes (convert-irgl-loops{block_push}, cooperative
// conversion): a kernel's pushes to `out` are staged in shared memory (one
// shared atomic each) and published at the kernel's end with one global
// atomicAdd per block. irgl_wl_block_begin and irgl_wl_block_flush are
// called by every thread of the block at the top level of the kernel body;
// irgl_wl_push_block may be called under any divergence. When the staging
// buffer is full, a push goes to the worklist directly (irgl_wl_push).
namespace irgl {
constexpr int kBlockPushSlots = 2048;
namespace detail {
__shared__ int32_t block_push_items[kBlockPushSlots];
__shared__ int block_push_count;
__shared__ irgl_index block_push_base;
}  // namespace detail
}  // namespace irgl

// `staged` (the same in every thread of the grid) is false where the grid
// is one block (a device body run by a control kernel's block 0 alone): the
// pushes then go straight to the worklist and begin/flush do nothing.

/// Empties this block's staging buffer (every thread of the block).
__device__ __forceinline__ void irgl_wl_block_begin(bool staged) {
  if (!staged) return;
  if (threadIdx.x == 0) irgl::detail::block_push_count = 0;
  __syncthreads();
}

/// Pushes v onto `wl` through this block's staging buffer.
__device__ __forceinline__ void irgl_wl_push_block(irgl::Worklist wl, irgl_index v, bool staged) {
  if (!staged) {
    irgl_wl_push(wl, v);
    return;
  }
  const int slot = atomicAdd(&irgl::detail::block_push_count, 1);
  if (slot < irgl::kBlockPushSlots) {
    irgl::detail::block_push_items[slot] = static_cast<int32_t>(v);
  } else {
    irgl_wl_push(wl, v);  // the buffer is full
  }
}

/// Publishes the staged items to `wl` with one atomicAdd for the block (every
/// thread of the block). Items past the capacity are dropped and set the
/// overflow flag, as irgl_wl_push does.
__device__ __forceinline__ void irgl_wl_block_flush(irgl::Worklist wl, bool staged) {
  using irgl::detail::uindex;
  if (!staged) return;
  __syncthreads();
  const int pushed = irgl::detail::block_push_count;
  const int n = pushed < irgl::kBlockPushSlots ? pushed : irgl::kBlockPushSlots;
  if (threadIdx.x == 0 && n > 0)
    irgl::detail::block_push_base = irgl::detail::atomic_add_index(wl.tail, static_cast<irgl_index>(n));
  __syncthreads();
  if (n == 0) return;
  const irgl_index base = irgl::detail::block_push_base;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const uindex pos = static_cast<uindex>(base) + static_cast<uindex>(i);
    if (pos < static_cast<uindex>(wl.capacity))
      wl.items[pos] = irgl::detail::block_push_items[i];
    else
      *reinterpret_cast<volatile int*>(wl.overflow) = 1;
  }
  __syncthreads();  // the buffer is free again (a device body may run next)
}

/// ReduceAndReturn into a cell. Any: set the flag if v. All: clear it if !v.
/// Plain stores: every writer of a cell writes the same value.
__device__ __forceinline__ void irgl_cell_reduce(irgl::Cell c, bool v) {
  if (c.any) {
    if (v) *reinterpret_cast<volatile int*>(c.flag) = 1;
  } else {
    if (!v) *reinterpret_cast<volatile int*>(c.flag) = 0;
  }
}

// Block-reduced ReduceAndReturn (convert-irgl-sync{block_reduce}): the
// threads of a block reduce into a shared flag (plain shared stores, any
// divergence); at the kernel's end one thread per block reduces the block's
// value into the cell (the __syncthreads_or / __syncthreads_and of the
// block, without the global traffic of one store per thread).
// irgl_cell_block_begin and irgl_cell_block_flush are called by every thread
// of the block at the top level of the kernel body.
namespace irgl {
namespace detail {
__shared__ int block_reduce_flag;
}  // namespace detail
}  // namespace irgl

/// Resets this block's flag to the identity of `c` (every thread).
__device__ __forceinline__ void irgl_cell_block_begin(irgl::Cell c) {
  if (threadIdx.x == 0) irgl::detail::block_reduce_flag = c.any ? 0 : 1;
  __syncthreads();
}

/// ReduceAndReturn into this block's flag. Any: set if v. All: clear if !v.
__device__ __forceinline__ void irgl_cell_reduce_block(irgl::Cell c, bool v) {
  volatile int* flag = &irgl::detail::block_reduce_flag;
  if (c.any) {
    if (v) *flag = 1;
  } else {
    if (!v) *flag = 0;
  }
}

/// Reduces the block's flag into the cell (every thread; one store per block
/// at most).
__device__ __forceinline__ void irgl_cell_block_flush(irgl::Cell c) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const bool value = irgl::detail::block_reduce_flag != 0;
    if (value == c.any) irgl_cell_reduce(c, value);
  }
}

// Device-scope atomics and the grid barrier: the PTX that libcu++'s
// cuda::atomic_ref<T, cuda::thread_scope_device> and cooperative_groups'
// this_grid().sync() emit on sm_70 and newer,
// written out so that no program parses those headers (<cuda/atomic> alone
// is about 1.4 CPU s of every program's nvcc run, docs/performance-notes.md):
// device code uses these, not cuda::atomic_ref.
namespace irgl {
namespace scoped {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "the IrGL runtime needs sm_70 or newer"
#endif
#define IRGL_SCOPED_ATOMIC(T, B, R, ADD)                                                       \
  __device__ __forceinline__ T load_relaxed(const T* p) {                                         \
    T v;                                                                                          \
    asm volatile("ld.relaxed.gpu.b" #B " %0,[%1];" : "=" R(v) : "l"(p) : "memory");              \
    return v;                                                                                     \
  }                                                                                               \
  __device__ __forceinline__ void store_relaxed(T* p, T v) {                                      \
    asm volatile("st.relaxed.gpu.b" #B " [%0],%1;" ::"l"(p), R(v) : "memory");                   \
  }                                                                                               \
  __device__ __forceinline__ void store_release(T* p, T v) {                                      \
    asm volatile("st.release.gpu.b" #B " [%0],%1;" ::"l"(p), R(v) : "memory");                   \
  }                                                                                               \
  __device__ __forceinline__ T cas_relaxed(T* p, T expected, T desired) {                         \
    T old;                                                                                        \
    asm volatile("atom.cas.relaxed.gpu.b" #B " %0,[%1],%2,%3;"                                   \
                 : "=" R(old) : "l"(p), R(expected), R(desired) : "memory");                      \
    return old;                                                                                   \
  }                                                                                               \
  __device__ __forceinline__ T cas_acquire(T* p, T expected, T desired) {                         \
    T old;                                                                                        \
    asm volatile("atom.cas.acquire.gpu.b" #B " %0,[%1],%2,%3;"                                   \
                 : "=" R(old) : "l"(p), R(expected), R(desired) : "memory");                      \
    return old;                                                                                   \
  }                                                                                               \
  __device__ __forceinline__ T cas_release(T* p, T expected, T desired) {                         \
    T old;                                                                                        \
    asm volatile("atom.cas.release.gpu.b" #B " %0,[%1],%2,%3;"                                   \
                 : "=" R(old) : "l"(p), R(expected), R(desired) : "memory");                      \
    return old;                                                                                   \
  }                                                                                               \
  __device__ __forceinline__ T add_relaxed(T* p, T v) {                                           \
    T old;                                                                                        \
    asm volatile("atom.add.relaxed.gpu." #ADD " %0,[%1],%2;" : "=" R(old) : "l"(p), R(v) : "memory"); \
    return old;                                                                                   \
  }                                                                                               \
  __device__ __forceinline__ T add_release(T* p, T v) {                                           \
    T old;                                                                                        \
    asm volatile("atom.add.release.gpu." #ADD " %0,[%1],%2;" : "=" R(old) : "l"(p), R(v) : "memory"); \
    return old;                                                                                   \
  }
// load / store (relaxed, release), compare-and-swap (the old value) and
// fetch-add, at device scope, on 32- and 64-bit words
IRGL_SCOPED_ATOMIC(int32_t, 32, "r", s32)
IRGL_SCOPED_ATOMIC(int64_t, 64, "l", u64)
#undef IRGL_SCOPED_ATOMIC

/// cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device).
__device__ __forceinline__ void fence_acquire() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

/// cooperative_groups::this_grid().sync(): thread 0 of each block adds to
/// the barrier word of the grid workspace that a cooperative launch gets
/// from the driver (its address in %envreg1:%envreg2), block 0 adding
/// 0x80000000 - (blocks - 1), so that the top bit flips when the last block
/// arrives; a launch that is not cooperative (no workspace) traps.
__device__ __forceinline__ void grid_sync() {
  unsigned int reg;
  asm("mov.u32 %0, %%envreg2;" : "=r"(reg));
  const unsigned long long lo = reg;
  asm("mov.u32 %0, %%envreg1;" : "=r"(reg));
  const unsigned long long hi = reg;
  unsigned int* const workspace = reinterpret_cast<unsigned int*>((hi << 32) | lo);
  if (workspace == nullptr) __trap();
  unsigned int* const arrived = workspace + 1;  // {wsSize, barrier}
  unsigned int old = 0;
  __barrier_sync(0);
  if (threadIdx.x + threadIdx.y + threadIdx.z == 0) {  // arrive
    const unsigned int expected = gridDim.x * gridDim.y * gridDim.z;
    unsigned int nb = 1;
    if (blockIdx.x + blockIdx.y + blockIdx.z == 0) nb = 0x80000000u - (expected - 1);
    asm volatile("atom.add.release.gpu.u32 %0,[%1],%2;" : "=r"(old) : "l"(arrived), "r"(nb) : "memory");
  }
  if (threadIdx.x + threadIdx.y + threadIdx.z == 0) {  // wait
    unsigned int current;
    do {
      asm volatile("ld.acquire.gpu.u32 %0,[%1];" : "=r"(current) : "l"(arrived) : "memory");
    } while (((old ^ current) & 0x80000000u) == 0);
  }
  __barrier_sync(0);
}

}  // namespace scoped
}  // namespace irgl

/// Tries to take spin lock locks[i] (0 = free, 1 = held): a CAS 0->1 with
/// acquire semantics at device scope, preceded by a relaxed read so that
/// contended locks are not hammered with CASes. Never blocks. Callers retry
/// in a divergence-safe loop (`while (!done) { if (try) {...; release; done =
/// true;} }`), which is correct under independent thread scheduling.
__device__ __forceinline__ bool irgl_lock_try_i32(int32_t* locks, irgl_index i) {
  if (irgl::scoped::load_relaxed(&locks[i]) != 0) return false;
  return irgl::scoped::cas_acquire(&locks[i], 0, 1) == 0;
}

/// Releases spin lock locks[i]: a release store of 0 at device scope (writes
/// made in the critical section are visible to the next acquirer).
__device__ __forceinline__ void irgl_lock_release_i32(int32_t* locks, irgl_index i) {
  irgl::scoped::store_release(&locks[i], 0);
}

/// irgl_lock_try_i32 for 64-bit lock words (0 = free, 1 = held).
__device__ __forceinline__ bool irgl_lock_try_i64(int64_t* locks, irgl_index i) {
  if (irgl::scoped::load_relaxed(&locks[i]) != 0) return false;
  return irgl::scoped::cas_acquire(&locks[i], int64_t(0), int64_t(1)) == 0;
}

/// irgl_lock_release_i32 for 64-bit lock words.
__device__ __forceinline__ void irgl_lock_release_i64(int64_t* locks, irgl_index i) {
  irgl::scoped::store_release(&locks[i], int64_t(0));
}

/// Acquires ticket lock locks[i] (blocking, FIFO). One 64-bit word per lock:
/// high 32 bits = next ticket, low 32 bits = now serving; initialize to 0.
/// Takes a ticket with one atomic add of 1<<32, then spins with relaxed loads
/// and __nanosleep backoff proportional to its distance from the head of the
/// queue, and finishes with an acquire fence. Requires independent thread
/// scheduling (sm_70+) since lanes of one warp may wait on each other.
__device__ __forceinline__ void irgl_ticket_acquire_i64(int64_t* locks, irgl_index i) {
  int64_t* word = &locks[i];
  const uint64_t old = static_cast<uint64_t>(irgl::scoped::add_relaxed(word, int64_t(1) << 32));
  const uint32_t ticket = static_cast<uint32_t>(old >> 32);
  uint32_t serving = static_cast<uint32_t>(old);
  while (serving != ticket) {
    uint32_t distance = ticket - serving;  // wraps correctly
    __nanosleep((distance < 64u ? distance : 64u) * 32u);
    serving = static_cast<uint32_t>(static_cast<uint64_t>(irgl::scoped::load_relaxed(word)));
  }
  irgl::scoped::fence_acquire();
}

/// Releases ticket lock locks[i]: increments "now serving" with release
/// semantics. When serving wraps from 0xffffffff to 0 the add is corrected so
/// that no carry reaches the next-ticket half (only the holder writes it).
__device__ __forceinline__ void irgl_ticket_release_i64(int64_t* locks, irgl_index i) {
  int64_t* word = &locks[i];
  const uint32_t serving = static_cast<uint32_t>(static_cast<uint64_t>(irgl::scoped::load_relaxed(word)));
  const int64_t inc = serving == 0xffffffffu ? static_cast<int64_t>(1) - (static_cast<int64_t>(1) << 32)
                                             : static_cast<int64_t>(1);
  irgl::scoped::add_release(word, inc);
}

/// Acquires ticket lock locks[i] held in a 32-bit word (blocking, FIFO):
/// high 16 bits = next ticket, low 16 bits = now serving; initialize to 0.
/// 16-bit tickets would wrap onto waiting ones if 65536 threads queued on one
/// lock (a GPU runs more at once), so a ticket is taken with a CAS that waits
/// while 65535 threads hold or wait for the lock; otherwise as
/// irgl_ticket_acquire_i64 (backoff by distance, acquire fence, sm_70+).
__device__ __forceinline__ void irgl_ticket_acquire_i32(int32_t* locks, irgl_index i) {
  int32_t* word = &locks[i];
  uint32_t old = static_cast<uint32_t>(irgl::scoped::load_relaxed(word));
  for (;;) {
    const uint16_t queued = static_cast<uint16_t>((old >> 16) - (old & 0xffffu));
    if (queued == 0xffffu) {  // every 16-bit ticket is out: wait for one back
      __nanosleep(2048);
      old = static_cast<uint32_t>(irgl::scoped::load_relaxed(word));
      continue;
    }
    const int32_t expected = static_cast<int32_t>(old);
    // next + 1 in the high half (its carry out of bit 31 is dropped)
    const int32_t taken = static_cast<int32_t>(old + (1u << 16));
    const int32_t seen = irgl::scoped::cas_relaxed(word, expected, taken);
    if (seen == expected) break;
    old = static_cast<uint32_t>(seen);
  }
  const uint16_t ticket = static_cast<uint16_t>(old >> 16);
  uint16_t serving = static_cast<uint16_t>(old);
  while (serving != ticket) {
    const uint32_t distance = static_cast<uint16_t>(ticket - serving);  // wraps
    __nanosleep((distance < 64u ? distance : 64u) * 32u);
    serving = static_cast<uint16_t>(static_cast<uint32_t>(irgl::scoped::load_relaxed(word)));
  }
  irgl::scoped::fence_acquire();
}

/// Releases ticket lock locks[i] held in a 32-bit word: increments "now
/// serving" (low 16 bits) with release semantics; from 0xffff it wraps to 0
/// without a carry into the next-ticket half.
__device__ __forceinline__ void irgl_ticket_release_i32(int32_t* locks, irgl_index i) {
  int32_t* word = &locks[i];
  const uint32_t serving = static_cast<uint32_t>(irgl::scoped::load_relaxed(word)) & 0xffffu;
  const int32_t inc = serving == 0xffffu ? -0xffff : 1;
  irgl::scoped::add_release(word, inc);
}

/// Exclusive, race phase: writes priority `prio` into claim cell claims[i]
/// (a relaxed store at device scope; of racing writers, one wins).
__device__ __forceinline__ void irgl_claim_write(int32_t* claims, irgl_index i, int32_t prio) {
  irgl::scoped::store_relaxed(&claims[i], prio);
}

/// Exclusive, priority phase: raises claims[i] to at least `prio` (atomicMax).
__device__ __forceinline__ void irgl_claim_raise(int32_t* claims, irgl_index i, int32_t prio) {
  atomicMax(&claims[i], prio);
}

/// Exclusive: the priority currently in claim cell claims[i] (relaxed load
/// at device scope; the phases are separated by irgl_grid_sync).
__device__ __forceinline__ int32_t irgl_claim_read(int32_t* claims, irgl_index i) {
  return irgl::scoped::load_relaxed(&claims[i]);
}

// Exclusive with claim locks (convert-irgl-exclusive on a collective marked
// `locks`: a kernel whose conflicts are retried in place, no grid barriers).
// A cell is free when it is 0 (or positive: a priority left by the
// three-phase protocol); it holds -prio while the contender of priority
// prio is taking its cells (held, not committed), and -(prio + 2^30) once
// that contender has taken every cell and committed it (it runs, or is
// about to run, the body).
//
// Taking: irgl_claim_try (free cells, one CAS each), then irgl_claim_lock
// for the rest: a free cell is taken; a cell held, not committed, by a
// lower priority is taken from it (the lower contender finds out when it
// commits, and gives up); a cell committed by a lower priority is waited
// for (its holder never waits while it holds committed cells: it commits,
// runs the body and releases, or gives up and releases); a cell held or
// committed by a higher priority makes the contender give up (release its
// cells, run the else statements, retry). Then irgl_claim_commit of every
// cell: a contender whose cell was taken from it gives up. No committed
// cell is ever taken, so two contenders never run the body on a shared
// cell; waits only go to committed holders, so there is no deadlock; and
// the highest contender is never given up on nor waits on anyone who
// waits, so it gets through (progress). Cells are not handed on in
// priority order: a contender that only waited for a free cell (the first
// claim locks) could be starved by lower ones that took every cell it
// waited for as soon as it was released, and then gave up on its other
// cells (colour on rmat:12 did not finish). Priorities are unique among the
// contenders running at once and kept by a contender across its retries.
// Requires independent thread scheduling (sm_70+).

/// The priority of the contender of `rank` claiming `count` cells: larger
/// claims first (the bit length of `count` in bits 25..29), then a hash of
/// the rank (an odd multiplier permutes the ranks modulo 2^25); positive,
/// at most 2^30, unique for ranks below 2^25.
__host__ __device__ __forceinline__ int32_t irgl_claim_priority(irgl_index rank, irgl_index count) {
  uint32_t bits = 0;
  for (uint64_t c = count > 0 ? static_cast<uint64_t>(count) : 0u; c != 0 && bits < 31u; c >>= 1) ++bits;
  const uint32_t hashed = static_cast<uint32_t>(static_cast<uint64_t>(rank) * 0x9E3779B1ull) & 0x1ffffffu;
  return static_cast<int32_t>(((bits < 31u ? bits : 31u) << 25) + hashed + 1u);
}

/// The claim cell value of a cell committed by `prio` (-(prio + 2^30): at
/// least INT32_MIN since prio is at most 2^30, below any held value).
__host__ __device__ __forceinline__ int32_t irgl_claim_committed(int32_t prio) {
  return static_cast<int32_t>(-(static_cast<int64_t>(prio) + (int64_t(1) << 30)));
}

/// The priority holding claim cell value `v` (held or committed); 0 when
/// the cell is free.
__host__ __device__ __forceinline__ int32_t irgl_claim_holder(int32_t v) {
  if (v >= 0) return 0;
  const int64_t m = -static_cast<int64_t>(v);
  return static_cast<int32_t>(m > (int64_t(1) << 30) ? m - (int64_t(1) << 30) : m);
}

/// Fast path of a claim lock: one CAS 0 -> -prio (acquire); true when the
/// cell is now held by `prio` (also when it already was: an element named
/// twice). Never waits; a false leaves the cell as it was.
__device__ __forceinline__ bool irgl_claim_try(int32_t* claims, irgl_index i, int32_t prio) {
  const int32_t old = irgl::scoped::cas_acquire(&claims[i], 0, -prio);
  return old == 0 || old == -prio;
}

/// Claim lock on claims[i] for `prio` (not committed): true once held
/// (acquire); takes the cell when it is free or held, not committed, by a
/// lower priority; waits, with a short __nanosleep backoff, while a lower
/// priority has committed it; false, at once, when a higher priority holds
/// or has committed it (the caller releases its cells and retries).
__device__ __forceinline__ bool irgl_claim_lock(int32_t* claims, irgl_index i, int32_t prio) {
  const int32_t committed = irgl_claim_committed(prio);
  unsigned pause = 32;
  for (;;) {
    const int32_t v = irgl::scoped::load_relaxed(&claims[i]);
    if (v == -prio || v == committed) return true;
    const int32_t holder = irgl_claim_holder(v);
    if (holder > prio) return false;
    if (v >= 0 || v == -holder) {  // free, or held by a lower priority: take it
      if (irgl::scoped::cas_acquire(&claims[i], v, -prio) == v) return true;
      continue;
    }
    __nanosleep(pause);  // committed by a lower priority: it releases soon
    if (pause < 256) pause *= 2;
  }
}

/// Commits claims[i] for `prio`: a CAS -prio -> committed (acquire); true
/// when the cell is now committed by `prio` (also when it already was: an
/// element named twice); false when a higher priority took it (the caller
/// releases its cells and retries).
__device__ __forceinline__ bool irgl_claim_commit(int32_t* claims, irgl_index i, int32_t prio) {
  const int32_t committed = irgl_claim_committed(prio);
  const int32_t old = irgl::scoped::cas_acquire(&claims[i], -prio, committed);
  return old == -prio || old == committed;
}

/// Releases claims[i] if `prio` holds or has committed it: a CAS to 0 with
/// release semantics (the body's writes are visible to the next holder);
/// a cell named twice is released once, a cell not held (or taken by a
/// higher priority) is left alone.
__device__ __forceinline__ void irgl_claim_unlock(int32_t* claims, irgl_index i, int32_t prio) {
  const int32_t old = irgl::scoped::cas_release(&claims[i], irgl_claim_committed(prio), 0);
  if (old == -prio) irgl::scoped::cas_release(&claims[i], -prio, 0);
}

/// Pause before in-place retry number `attempt` (1, 2, ...) of an iteration
/// that lost a conflict: __nanosleep of 64 ns doubling per attempt, at most
/// 2 us.
__device__ __forceinline__ void irgl_retry_pause(irgl_index attempt) {
  const irgl_index shift = attempt < 5 ? attempt : 5;
  __nanosleep(static_cast<unsigned>(64) << shift);
}

/// The GPU's global nanosecond timer (%globaltimer): the small-worklist
/// mode's time limit and the barrier profile below.
__device__ __forceinline__ int64_t irgl_ctl_clock() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return static_cast<int64_t>(t);
}

#ifdef IRGL_PROFILE_CONTROL
// Barrier profile of grid-barrier kernels (build with -DIRGL_PROFILE_CONTROL;
// irgl-bench takes it from $IRGL_NVCC_FLAGS), printed and reset by
// irgl_outline_finish after each control kernel:
//   [0] the nanoseconds thread 0 of every block spends in grid barriers,
//       from its whole block's arrival (a block barrier) to the release
//       (the barrier itself plus the wait for the slowest block), summed;
//   [1] the grid barriers passed (block 0's count; every block counts its
//       own in irgl_profile_barriers, at most IRGL_PROFILE_BLOCKS blocks);
//   [2] the grid size;
//   [3] the sum over barriers of the shortest of those waits, the last
//       block's: the barrier's own cost, the rest of a step being the work
//       and the control code on its critical path;
//   [4], [5] the running minimum of the current barrier (two slots: block 0
//       adds slot k % 2 to [3] and resets it after barrier k + 1);
//   [6], [7] the worklist steps (irgl_ctl_size_check calls) of block 0 and
//       of block 1: block 0 alone takes the steps of the small-worklist mode,
//       so their difference counts those.
__device__ unsigned long long irgl_profile[8] = {0, 0, 0, 0, ~0ull, ~0ull, 0, 0};
#define IRGL_PROFILE_BLOCKS 4096
__device__ unsigned long long irgl_profile_barriers[IRGL_PROFILE_BLOCKS];
#endif

/// Grid-wide barrier (SyncRunningThreads). The kernel must be launched with
/// irgl::launch_cooperative (all blocks co-resident).
__device__ __forceinline__ void irgl_grid_sync() {
#ifdef IRGL_COUNT_EDGES
  irgl_span_publish(&irgl_span_grid_step);
#endif
#ifdef IRGL_PROFILE_CONTROL
  __syncthreads();  // the whole block has arrived: its own stragglers are not the barrier's
  const int64_t start = threadIdx.x == 0 ? irgl_ctl_clock() : 0;
  irgl::scoped::grid_sync();
  if (threadIdx.x == 0) {
    const unsigned long long wait = static_cast<unsigned long long>(irgl_ctl_clock() - start);
    const unsigned long long k = blockIdx.x < IRGL_PROFILE_BLOCKS ? irgl_profile_barriers[blockIdx.x]++ : 0;
    atomicAdd(&irgl_profile[0], wait);
    if (blockIdx.x < IRGL_PROFILE_BLOCKS) atomicMin(&irgl_profile[4 + k % 2], wait);
    if (blockIdx.x == 0) {
      if (k > 0) {  // every block's minimum of barrier k - 1 is in (before it arrived here)
        unsigned long long* last = &irgl_profile[4 + (k - 1) % 2];
        irgl_profile[3] += atomicExch(last, ~0ull);
      }
      irgl_profile[1] = k + 1;
      irgl_profile[2] = gridDim.x;
    }
  }
#else
  irgl::scoped::grid_sync();
#endif
#ifdef IRGL_COUNT_EDGES
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    irgl_step_counts[0] += 1;
    irgl_span_close(&irgl_span_grid_step);
  }
  irgl::scoped::grid_sync();  // the step's maximum taken before the next publishes
#endif
}

// Warp cooperation (nested parallelism): the lanes that reach a cooperative
// loop together capture their mask once with irgl_warp_active() and pass it to
// every collective below, so the collectives are correct under independent
// thread scheduling (no full-mask intrinsic in divergent code).

/// The lanes of the warp executing this point together (__activemask).
__device__ __forceinline__ int32_t irgl_warp_active() {
  return static_cast<int32_t>(__activemask());
}

/// The lanes of `mask` whose `pred` is true (__ballot_sync over `mask`).
__device__ __forceinline__ int32_t irgl_warp_ballot(int32_t mask, bool pred) {
  return static_cast<int32_t>(__ballot_sync(static_cast<unsigned>(mask), pred));
}

/// The lowest lane in `lanes` (-1 when empty).
__device__ __forceinline__ int32_t irgl_warp_first(int32_t lanes) {
  return __ffs(lanes) - 1;
}

/// Is the calling thread lane `lane` of its warp?
__device__ __forceinline__ bool irgl_warp_is_lane(int32_t lane) {
  return static_cast<int32_t>(irgl::detail::lane_id()) == lane;
}

/// Rank of the calling lane among the lanes of `mask`.
__device__ __forceinline__ irgl_index irgl_warp_rank(int32_t mask) {
  const unsigned below = (1u << irgl::detail::lane_id()) - 1u;
  return static_cast<irgl_index>(__popc(static_cast<unsigned>(mask) & below));
}

/// Number of lanes in `mask`.
__device__ __forceinline__ irgl_index irgl_warp_size(int32_t mask) {
  return static_cast<irgl_index>(__popc(static_cast<unsigned>(mask)));
}

/// Lane `lane`'s `v`, for the lanes of `mask` (one function per type, since
/// the lowered IR names each runtime function once per signature).
#define IRGL_WARP_SHFL(SUFFIX, T)                                                     \
  __device__ __forceinline__ T irgl_warp_shfl_##SUFFIX(int32_t mask, T v, int32_t lane) { \
    return __shfl_sync(static_cast<unsigned>(mask), v, lane);                         \
  }
IRGL_WARP_SHFL(index, irgl_index)
IRGL_WARP_SHFL(i32, int32_t)
IRGL_WARP_SHFL(i64, int64_t)
IRGL_WARP_SHFL(f32, float)
IRGL_WARP_SHFL(f64, double)
#undef IRGL_WARP_SHFL

__device__ __forceinline__ bool irgl_warp_shfl_i1(int32_t mask, bool v, int32_t lane) {
  return __shfl_sync(static_cast<unsigned>(mask), static_cast<int>(v), lane) != 0;
}

// Block cooperation (nested parallelism): called by every thread of the block
// at the same point (block-uniform control flow).

/// One thread of the block whose `want` is true (the highest index), or -1.
/// One barrier when no thread wants (the usual last call of an election
/// loop), three otherwise. The first barrier also orders the previous
/// call's reads of the slot before this call resets it.
__device__ __forceinline__ int32_t irgl_block_elect(bool want) {
  __shared__ int32_t slot;
  if (!__syncthreads_or(want)) return -1;
  if (threadIdx.x == 0) slot = -1;
  __syncthreads();
  if (want) atomicMax(&slot, static_cast<int32_t>(threadIdx.x));
  __syncthreads();
  return slot;
}

/// Thread `owner`'s `v`, for every thread of the block.
#define IRGL_BLOCK_BCAST(SUFFIX, T)                                           \
  __device__ __forceinline__ T irgl_block_bcast_##SUFFIX(T v, int32_t owner) { \
    __shared__ T slot;                                                        \
    if (static_cast<int32_t>(threadIdx.x) == owner) slot = v;                 \
    __syncthreads();                                                          \
    const T r = slot;                                                         \
    __syncthreads();                                                          \
    return r;                                                                 \
  }
IRGL_BLOCK_BCAST(index, irgl_index)
IRGL_BLOCK_BCAST(i1, bool)
IRGL_BLOCK_BCAST(i32, int32_t)
IRGL_BLOCK_BCAST(i64, int64_t)
IRGL_BLOCK_BCAST(f32, float)
IRGL_BLOCK_BCAST(f64, double)
#undef IRGL_BLOCK_BCAST

// ---------------------------------------------------------------------------
// Grid phase of nested parallelism: the edges of a node too large for one
// block, donated to every block of the grid (lowering/convert_irgl_nested_edges.py)
// ---------------------------------------------------------------------------
//
// A thread whose node has at least GRID_THRESHOLD edges takes a free job slot
// (`irgl_grid_donate`), stores the per-thread values the edge loop's body uses
// (`irgl_grid_put_<T>`) and publishes the job (`irgl_grid_publish`); every
// block then takes chunks of blockDim * IRGL_GRID_CHUNK_ROUNDS edges of the
// published jobs of its edge loop (`irgl_grid_take`, block-uniform) until
// none is left, and the donor waits until every chunk is done
// (`irgl_grid_finish`), which frees the slot. `irgl_grid_take` begins with a
// barrier: a job donated by a thread of the block is published before the
// block's thread 0 looks for jobs, so the donor's own block always walks
// what no other block takes, and a donor never depends on other blocks
// (which may have finished, or may not be resident yet) to take its
// chunks: when its block's help loop ends every chunk is taken, and each
// is being walked by a block inside its help loop, which waits for nothing
// outside itself. Lowered code reaches the grid phase only under a
// grid-uniform test that some node qualifies (`irgl_graph_max_degree`), so
// graphs without such nodes pay nothing. A job's cursor holds a
// generation (bits 40..63) and the next edge offset (bits 0..39); chunks are
// taken by compare-and-swap on it, so a block that saw an older job in a slot
// never takes edges of a newer one.

#ifndef IRGL_GRID_JOBS
#define IRGL_GRID_JOBS 64
#endif
#define IRGL_GRID_JOB_VALUES 16
#define IRGL_GRID_CHUNK_ROUNDS 4

namespace irgl {
namespace detail {

struct GridJob {
  unsigned long long cursor;  // generation << 40 | next edge offset
  unsigned long long done;    // edges finished
  long long lo, hi;
  int state;  // 0 free, 1 taken
  int site;
  unsigned long long values[IRGL_GRID_JOB_VALUES];
  unsigned long long acc;  // a reducing loop's blocks' totals, combined (bits of T)
};

static __device__ GridJob grid_jobs[IRGL_GRID_JOBS];
static __device__ int grid_active;

constexpr unsigned long long kGridOffset = (1ull << 40) - 1;

/// The chunk a block took last: its slot, first and end edge.
struct GridChunk {
  int32_t slot;
  irgl_index start, end;
};

__device__ __forceinline__ GridChunk& grid_chunk() {
#ifdef __CUDACC__
  __shared__ GridChunk chunk;
#else  // a host compiler parses it only (`__shared__` means nothing there)
  static GridChunk chunk;
#endif
  return chunk;
}

__device__ __forceinline__ unsigned long long grid_word(const unsigned long long* p) {
  return *reinterpret_cast<const volatile unsigned long long*>(p);
}

/// A job's 64-bit word holding a value of T, and back.
template <class T>
__device__ __forceinline__ unsigned long long grid_bits(T v) {
  unsigned long long w = 0;
  memcpy(&w, &v, sizeof(T));
  return w;
}

template <class T>
__device__ __forceinline__ T grid_value(unsigned long long w) {
  T v;
  memcpy(&v, &w, sizeof(T));
  return v;
}

}  // namespace detail
}  // namespace irgl

/// A free job slot for the edges lo..hi of edge loop `site`, or -1 if none.
__device__ __forceinline__ int32_t irgl_grid_donate(int32_t site, irgl_index lo, irgl_index hi) {
  using namespace irgl::detail;
  const int32_t first = static_cast<int32_t>(blockIdx.x % IRGL_GRID_JOBS);
  // not unrolled: 64 unrolled compare-and-swaps took the CC hook kernel
  // from 32 to 245 registers (sm_90), an eighth of the occupancy
#pragma unroll 1
  for (int32_t k = 0; k < IRGL_GRID_JOBS; ++k) {
    const int32_t s = (first + k) % IRGL_GRID_JOBS;
    if (atomicCAS(&grid_jobs[s].state, 0, 1) == 0) {
      // a new generation with no edges to take until irgl_grid_publish
      const unsigned long long old = grid_word(&grid_jobs[s].cursor);
      atomicExch(&grid_jobs[s].cursor, (((old >> 40) + 1) << 40) | kGridOffset);
      __threadfence();
      grid_jobs[s].lo = lo;
      grid_jobs[s].hi = hi;
      grid_jobs[s].site = site;
      grid_jobs[s].done = 0;
      return s;
    }
  }
  return -1;
}

/// Value `k` of job `slot` (the donor's per-thread values).
#define IRGL_GRID_VALUE(SUFFIX, T)                                                       \
  __device__ __forceinline__ void irgl_grid_put_##SUFFIX(int32_t slot, int32_t k, T v) { \
    irgl::detail::grid_jobs[slot].values[k] = irgl::detail::grid_bits<T>(v);            \
  }                                                                                     \
  __device__ __forceinline__ T irgl_grid_get_##SUFFIX(int32_t slot, int32_t k) {         \
    return irgl::detail::grid_value<T>(                                                 \
        irgl::detail::grid_word(&irgl::detail::grid_jobs[slot].values[k]));             \
  }
IRGL_GRID_VALUE(index, irgl_index)
IRGL_GRID_VALUE(i1, bool)
IRGL_GRID_VALUE(i32, int32_t)
IRGL_GRID_VALUE(i64, int64_t)
IRGL_GRID_VALUE(f32, float)
IRGL_GRID_VALUE(f64, double)
#undef IRGL_GRID_VALUE

/// Make job `slot` visible to every block (after its values are stored).
__device__ __forceinline__ void irgl_grid_publish(int32_t slot) {
  using namespace irgl::detail;
  __threadfence();
  const unsigned long long old = grid_word(&grid_jobs[slot].cursor);
  atomicExch(&grid_jobs[slot].cursor, old & ~kGridOffset);
  __threadfence();
  atomicAdd(&grid_active, 1);
}

/// Block-uniform: take the next chunk of a published job of edge loop
/// `site` (its slot; `irgl_grid_start` / `irgl_grid_end` give its edges),
/// or -1 when no job of `site` has edges left. The first barrier orders the
/// jobs that the block's threads published before the call (and the
/// previous call's reads of the chunk) before thread 0 looks.
__device__ __forceinline__ int32_t irgl_grid_take(int32_t site) {
  using namespace irgl::detail;
  GridChunk& chunk = grid_chunk();
  __syncthreads();
  if (threadIdx.x == 0) {
    chunk.slot = -1;
    const unsigned long long size =
        static_cast<unsigned long long>(blockDim.x) * IRGL_GRID_CHUNK_ROUNDS;
    if (*reinterpret_cast<volatile int*>(&grid_active) > 0) {
#pragma unroll 1
      for (int32_t s = 0; s < IRGL_GRID_JOBS && chunk.slot < 0; ++s) {
        GridJob& job = grid_jobs[s];
        unsigned long long c = grid_word(&job.cursor);
        while (true) {
          __threadfence();  // the job's fields as of (at least) cursor c
          if (*reinterpret_cast<volatile int*>(&job.site) != site) break;
          const long long lo = *reinterpret_cast<volatile long long*>(&job.lo);
          const long long hi = *reinterpret_cast<volatile long long*>(&job.hi);
          const unsigned long long total = static_cast<unsigned long long>(hi - lo);
          const unsigned long long offset = c & kGridOffset;
          if (offset >= total) break;
          const unsigned long long seen = atomicCAS(&job.cursor, c, c + size);
          if (seen == c) {
            chunk.slot = s;
            chunk.start = static_cast<irgl_index>(lo + static_cast<long long>(offset));
            chunk.end = static_cast<irgl_index>(
                lo + static_cast<long long>(offset + size < total ? offset + size : total));
            break;
          }
          c = seen;
        }
      }
    }
  }
  __syncthreads();
  return chunk.slot;
}

/// The first and end edge of the chunk the block took last.
__device__ __forceinline__ irgl_index irgl_grid_start() { return irgl::detail::grid_chunk().start; }
__device__ __forceinline__ irgl_index irgl_grid_end() { return irgl::detail::grid_chunk().end; }

/// Block-uniform: the block is done with its chunk of job `slot`. (Only
/// thread 0 reads the chunk after the barrier; the next irgl_grid_take's
/// first barrier comes before it writes the next one.)
__device__ __forceinline__ void irgl_grid_done(int32_t slot) {
  using namespace irgl::detail;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const GridChunk& chunk = grid_chunk();
    atomicAdd(&grid_jobs[slot].done, static_cast<unsigned long long>(chunk.end - chunk.start));
  }
}

namespace irgl {
namespace detail {
/// The donor of job `slot` waits until every chunk is done.
__device__ __forceinline__ void grid_wait(int32_t slot) {
  GridJob& job = grid_jobs[slot];
  const unsigned long long total = static_cast<unsigned long long>(job.hi - job.lo);
  while (grid_word(&job.done) < total) {
  }
  __threadfence();
}

/// Frees job `slot` (after grid_wait and any read of it).
__device__ __forceinline__ void grid_free(int32_t slot) {
  atomicSub(&grid_active, 1);
  atomicExch(&grid_jobs[slot].state, 0);
}
}  // namespace detail
}  // namespace irgl

/// The donor of job `slot` waits until every chunk is done, then frees it.
__device__ __forceinline__ void irgl_grid_finish(int32_t slot) {
  irgl::detail::grid_wait(slot);
  irgl::detail::grid_free(slot);
}

/// Global id of the calling thread in a 1-D launch.
__device__ __forceinline__ irgl_index irgl_global_thread_id() {
  return static_cast<irgl_index>(blockIdx.x) * static_cast<irgl_index>(blockDim.x) +
         static_cast<irgl_index>(threadIdx.x);
}

/// Number of threads in a 1-D launch.
__device__ __forceinline__ irgl_index irgl_global_num_threads() {
  return static_cast<irgl_index>(gridDim.x) * static_cast<irgl_index>(blockDim.x);
}

#if IRGL_HOST_CODE  // host only: a program's device pass skips it
// ---------------------------------------------------------------------------
// Launches and occupancy (host)
// ---------------------------------------------------------------------------

namespace irgl {
namespace detail {

// The non-template halves of the launch helpers (defined below, or in the
// runtime library). A program linked with the library and the library each
// have their own static CUDA runtime: a kernel's address means something
// only to the one that registered it, and each keeps its own last error. So
// occupancy queries, launches and cudaGetLastError stay inline here, in the
// module that launches; the library only checks numbers and throws.
/// Throws irgl::Error for a failed launch (err != cudaSuccess).
[[noreturn]] IRGL_HOST_API void fail_launch(const char* what, irgl_index grid, irgl_index block, cudaError_t err);
IRGL_HOST_API void check_dims(const char* what, irgl_index grid, irgl_index block);
/// grid_size from a kernel's occupancy: per_sm blocks per SM on `sms` SMs.
IRGL_HOST_API irgl_index grid_of(irgl_index block, int per_sm, int sms, bool resident);
/// Throws unless the device supports cooperative launches and `grid` blocks
/// fit at once (per_sm per SM on `sms` SMs).
IRGL_HOST_API void check_coresident(irgl_index grid, irgl_index block, int per_sm, int sms, bool supported);

/// Blocks per SM of `kernel` with `block` threads on the current device, the
/// SM count and whether it launches cooperatively. The driver is asked once
/// per kernel, block size and device on each host thread (a few
/// microseconds each time, twice a control kernel's launch otherwise).
inline void occupancy(const void* kernel, irgl_index block, int* per_sm, int* sms, int* cooperative = nullptr) {
  struct Known {
    const void* kernel;
    int block, device, per_sm, sms, cooperative;
  };
  constexpr int kKnown = 16;
  thread_local Known known[kKnown];
  thread_local int count = 0, next = 0;
  int device = 0;
  IRGL_CHECK(cudaGetDevice(&device));
  for (int k = 0; k < count; ++k) {
    const Known& e = known[k];
    if (e.kernel == kernel && e.block == static_cast<int>(block) && e.device == device) {
      *per_sm = e.per_sm;
      *sms = e.sms;
      if (cooperative) *cooperative = e.cooperative;
      return;
    }
  }
  Known e{kernel, static_cast<int>(block), device, 0, 0, 0};
  IRGL_CHECK(cudaDeviceGetAttribute(&e.cooperative, cudaDevAttrCooperativeLaunch, device));
  IRGL_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&e.per_sm, kernel, static_cast<int>(block), 0));
  IRGL_CHECK(cudaDeviceGetAttribute(&e.sms, cudaDevAttrMultiProcessorCount, device));
  known[count < kKnown ? count++ : next++ % kKnown] = e;
  *per_sm = e.per_sm;
  *sms = e.sms;
  if (cooperative) *cooperative = e.cooperative;
}

#ifdef IRGL_COUNT_EDGES
/// A counting build's kernel launches since the last irgl_steps_take.
inline unsigned long long& launches() {
  static unsigned long long count = 0;
  return count;
}
#endif

/// After a launch: its error or, with IRGL_SYNC_LAUNCH, the kernel's.
inline void check_launch(const char* what, irgl_index grid, irgl_index block, cudaError_t err) {
#ifdef IRGL_COUNT_EDGES
  launches() += 1;
  if (err == cudaSuccess) {  // the launch's span (stream-ordered after it)
    irgl_span_drain_kernel<<<256, 256>>>();
    irgl_span_close_kernel<<<1, 1>>>();
  }
#endif
  if (err == cudaSuccess) err = cudaGetLastError();
#ifdef IRGL_SYNC_LAUNCH
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
#endif
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    fail_launch(what, grid, block, err);
  }
}
/// n zero-initialized elements of `elem` bytes from cudaMalloc (device_alloc).
IRGL_HOST_API void* device_elems(size_t elem, irgl_index n);
/// n zero-initialized elements of `elem` bytes of scratch (scratch_alloc).
IRGL_HOST_API void* scratch_elems(size_t elem, irgl_index n);

/// A kernel's arguments converted to its parameter types, in order, and
/// their addresses for cudaLaunchCooperativeKernel (std::tuple without
/// <tuple>).
template <class... T>
struct ArgPack {
  void addresses(void**) {}
};
template <class H, class... T>
struct ArgPack<H, T...> {
  H head;
  ArgPack<T...> tail;
  template <class A, class... B>
  explicit ArgPack(A&& a, B&&... b) : head(static_cast<A&&>(a)), tail(static_cast<B&&>(b)...) {}
  void addresses(void** out) {
    out[0] = static_cast<void*>(&head);
    tail.addresses(out + 1);
  }
};

/// grid_size of the kernel at `kernel` (a function or a loaded kernel).
inline irgl_index grid_size_at(const void* kernel, irgl_index block, bool resident) {
  check_dims("irgl::grid_size", 1, block);
  int per_sm = 0, sms = 0;
  occupancy(kernel, block, &per_sm, &sms);
  return grid_of(block, per_sm, sms, resident);
}

/// Launches the kernel at `kernel` (a function or a loaded kernel), whose
/// parameters are KArgs, through the runtime API: cudaLaunchKernel, or with
/// `cooperative` cudaLaunchCooperativeKernel after checking that the grid's
/// blocks can all be co-resident.
template <class... KArgs, class... Args>
inline void launch_at(const void* kernel, bool cooperative, irgl_index grid, irgl_index block, Args&&... args) {
  static_assert(sizeof...(KArgs) == sizeof...(Args), "irgl::launch: wrong number of kernel arguments");
  check_dims(cooperative ? "irgl::launch_cooperative" : "irgl::launch", grid, block);
  if (grid == 0) return;
  if (cooperative) {
    int supported = 0, per_sm = 0, sms = 0;
    occupancy(kernel, block, &per_sm, &sms, &supported);
    check_coresident(grid, block, per_sm, sms, supported != 0);
  }
  ArgPack<typename std::decay<KArgs>::type...> values(static_cast<Args&&>(args)...);
  void* ptrs[sizeof...(KArgs) + 1] = {nullptr};
  values.addresses(ptrs);
  const dim3 blocks(static_cast<unsigned>(grid)), threads(static_cast<unsigned>(block));
  const cudaError_t err = cooperative ? cudaLaunchCooperativeKernel(kernel, blocks, threads, ptrs, 0, 0)
                                      : cudaLaunchKernel(kernel, blocks, threads, ptrs, 0, 0);
  check_launch(cooperative ? "cooperative kernel launch" : "kernel launch", grid, block, err);
}

/// Loads a program's device code (a fatbinary: IRGL_PROGRAM_DEVICE_CODE) as
/// a CUDA library; its handle. Throws irgl::Error.
IRGL_HOST_API void* load_library(const void* fatbin);
/// The kernel `name` of a library from load_library, as the address the
/// runtime API takes (a cudaKernel_t). Throws irgl::Error if there is none.
IRGL_HOST_API const void* library_kernel(void* library, const char* name);

}  // namespace detail

/// A kernel of a program whose host code is compiled apart from its device
/// code (by the host compiler, with IRGL_HOST_ONLY): irgl::launch,
/// launch_cooperative, grid_size and kernel_address take it as they take a
/// __global__ function. Declared by IRGL_KERNEL_REF; `address` loads the
/// program's device code at its first use.
template <class... KArgs>
struct KernelRef {
  const void* (*address)();
};

/// Number of blocks to launch `kernel` with `block` threads: blocks per SM
/// (occupancy API, cached per kernel and block) x number of SMs, i.e. one
/// full wave. With `resident` (grid-barrier kernels) every one of these
/// blocks can be co-resident; throws irgl::Error if not even one block fits.
/// Without `resident` the result is at least 1.
template <class... KArgs>
inline irgl_index grid_size(void (*kernel)(KArgs...), irgl_index block, bool resident) {
  return detail::grid_size_at(reinterpret_cast<const void*>(kernel), block, resident);
}
/// grid_size of a kernel the program loads from its device code (KernelRef).
template <class... KArgs>
inline irgl_index grid_size(const KernelRef<KArgs...>& kernel, irgl_index block, bool resident) {
  return detail::grid_size_at(kernel.address(), block, resident);
}

/// The address the runtime API takes for a kernel (cudaFuncGetAttributes):
/// the function itself, or a loaded kernel's handle (KernelRef).
template <class... KArgs>
inline const void* kernel_address(void (*kernel)(KArgs...)) {
  return reinterpret_cast<const void*>(kernel);
}
template <class... KArgs>
inline const void* kernel_address(const KernelRef<KArgs...>& kernel) {
  return kernel.address();
}

#ifdef __CUDACC__  // the runtime library, built by a host compiler, launches no kernel
/// Launches `kernel<<<grid, block>>>(args...)` and checks the launch error
/// (the kernel itself runs asynchronously; its errors surface at the next
/// synchronizing runtime call). A grid of 0 blocks launches nothing.
template <class... KArgs, class... Args>
inline void launch(void (*kernel)(KArgs...), irgl_index grid, irgl_index block, Args&&... args) {
  static_assert(sizeof...(KArgs) == sizeof...(Args), "irgl::launch: wrong number of kernel arguments");
  detail::check_dims("irgl::launch", grid, block);
  if (grid == 0) return;
  kernel<<<static_cast<unsigned>(grid), static_cast<unsigned>(block)>>>(static_cast<Args&&>(args)...);
  detail::check_launch("kernel launch", grid, block, cudaSuccess);
}
#endif

/// launch of a kernel the program loads from its device code (KernelRef),
/// through cudaLaunchKernel: what `<<<grid, block>>>` does.
template <class... KArgs, class... Args>
inline void launch(const KernelRef<KArgs...>& kernel, irgl_index grid, irgl_index block, Args&&... args) {
  detail::launch_at<KArgs...>(kernel.address(), false, grid, block, static_cast<Args&&>(args)...);
}

/// Launches a grid-barrier kernel with cudaLaunchCooperativeKernel. Throws
/// irgl::Error (never hangs) if the device does not support cooperative
/// launches or if `grid` blocks cannot all be co-resident.
template <class... KArgs, class... Args>
inline void launch_cooperative(void (*kernel)(KArgs...), irgl_index grid, irgl_index block,
                               Args&&... args) {
  detail::launch_at<KArgs...>(reinterpret_cast<const void*>(kernel), true, grid, block,
                              static_cast<Args&&>(args)...);
}
/// launch_cooperative of a kernel the program loads from its device code
/// (KernelRef).
template <class... KArgs, class... Args>
inline void launch_cooperative(const KernelRef<KArgs...>& kernel, irgl_index grid, irgl_index block,
                               Args&&... args) {
  detail::launch_at<KArgs...>(kernel.address(), true, grid, block, static_cast<Args&&>(args)...);
}

/// In a program's host-only pass (IRGL_HOST_ONLY, the host compiler): its
/// device code, the fatbinary that the build links beside the host code as
/// `irgl_program_fatbin`, loaded at the first use of one of its kernels. The
/// loader is the program's own (internal linkage), as is each kernel's.
#define IRGL_PROGRAM_DEVICE_CODE()                                                                 \
  extern "C" __attribute__((visibility("hidden"))) const unsigned char irgl_program_fatbin[];     \
  static const void* irgl_program_kernel(const char* name) {                                     \
    static void* const library = ::irgl::detail::load_library(irgl_program_fatbin);              \
    return ::irgl::detail::library_kernel(library, name);                                        \
  }
/// A kernel `name` with parameters `...` of the program's device code
/// (irgl::KernelRef), under the name its launches use.
#define IRGL_KERNEL_REF(name, ...)                                                                 \
  static const void* irgl_kernel_address_##name() {                                              \
    static const void* const kernel = irgl_program_kernel(#name);                                 \
    return kernel;                                                                                \
  }                                                                                               \
  static constexpr ::irgl::KernelRef<__VA_ARGS__> name{&irgl_kernel_address_##name};

/// Allocates n zero-initialized elements of T on the device (n >= 0; a
/// non-null pointer even for n == 0). Throws irgl::Error.
template <class T>
inline T* device_alloc(irgl_index n) {
  return static_cast<T*>(detail::device_elems(sizeof(T), n));
}

}  // namespace irgl

#if IRGL_HOST_IMPL
namespace irgl {
namespace detail {

/// Holds a pthread mutex for its scope (std::lock_guard without <mutex>).
class Locked {
 public:
  explicit Locked(pthread_mutex_t& mutex) : mutex_(mutex) { pthread_mutex_lock(&mutex_); }
  ~Locked() { pthread_mutex_unlock(&mutex_); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  pthread_mutex_t& mutex_;
};

IRGL_HOST_API void fail_launch(const char* what, irgl_index grid, irgl_index block, cudaError_t err) {
  if (err == cudaErrorCooperativeLaunchTooLarge)
    throw Error("irgl::launch_cooperative: a grid of " + std::to_string(static_cast<long long>(grid)) +
                " blocks cannot be co-resident (cudaErrorCooperativeLaunchTooLarge)");
  throw Error(std::string(what) + " of " + std::to_string(static_cast<long long>(grid)) + " blocks x " +
              std::to_string(static_cast<long long>(block)) + " threads failed: " + cudaGetErrorString(err));
}

IRGL_HOST_API void* load_library(const void* fatbin) {
  cudaLibrary_t library = nullptr;
  const cudaError_t err = cudaLibraryLoadData(&library, fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(std::string("loading the program's device code (cudaLibraryLoadData): ") + cudaGetErrorString(err));
  }
  return static_cast<void*>(library);
}

IRGL_HOST_API const void* library_kernel(void* library, const char* name) {
  // A kernel of C++ linkage has a mangled name: _Z, the name's length, the
  // name, its parameters; the program's kernels are not overloaded.
  const cudaLibrary_t lib = static_cast<cudaLibrary_t>(library);
  unsigned count = 0;
  IRGL_CHECK(cudaLibraryGetKernelCount(&count, lib));
  std::vector<cudaKernel_t> kernels(count);
  if (count > 0) IRGL_CHECK(cudaLibraryEnumerateKernels(kernels.data(), count, lib));
  const std::string mangled = "_Z" + std::to_string(std::strlen(name)) + name;
  for (cudaKernel_t kernel : kernels) {
    const char* found = nullptr;
    IRGL_CHECK(cudaFuncGetName(&found, reinterpret_cast<const void*>(kernel)));
    if (found && (std::strcmp(found, name) == 0 || std::strncmp(found, mangled.c_str(), mangled.size()) == 0))
      return reinterpret_cast<const void*>(kernel);
  }
  throw Error(std::string("the program's device code has no kernel '") + name + "'");
}

/// Rejects launch dimensions that do not fit a dim3.
IRGL_HOST_API void check_dims(const char* what, irgl_index grid, irgl_index block) {
  const long long g = grid, b = block, max_grid = 0x7fffffffLL;
  if (g < 0 || b <= 0 || g > max_grid || b > 1024)
    throw Error(std::string(what) + ": invalid launch configuration (" +
                std::to_string(static_cast<long long>(grid)) + " blocks x " +
                std::to_string(static_cast<long long>(block)) + " threads)");
}

IRGL_HOST_API irgl_index grid_of(irgl_index block, int per_sm, int sms, bool resident) {
  if (per_sm <= 0) {
    if (!resident) return 1;
    throw Error("irgl::grid_size: no block of " + std::to_string(static_cast<long long>(block)) +
                " threads of this kernel fits on an SM (too many registers or too much shared memory)");
  }
  return static_cast<irgl_index>(per_sm) * static_cast<irgl_index>(sms);
}

IRGL_HOST_API void check_coresident(irgl_index grid, irgl_index block, int per_sm, int sms, bool supported) {
  if (!supported) throw Error("irgl::launch_cooperative: the device does not support cooperative launches");
  const long long max_blocks = static_cast<long long>(per_sm) * sms;
  if (static_cast<long long>(grid) > max_blocks)
    throw Error("irgl::launch_cooperative: a grid of " + std::to_string(static_cast<long long>(grid)) +
                " blocks x " + std::to_string(static_cast<long long>(block)) +
                " threads cannot be co-resident: at most " + std::to_string(max_blocks) + " blocks (" +
                std::to_string(per_sm) + " per SM x " + std::to_string(sms) +
                " SMs) fit; use irgl::grid_size(kernel, block, true)");
}

IRGL_HOST_API void* device_elems(size_t elem, irgl_index n) {
  if (n < 0) throw Error("irgl::device_alloc: negative element count " + std::to_string(static_cast<long long>(n)));
  const size_t bytes = elem * (n > 0 ? static_cast<size_t>(n) : size_t(1));
  void* p = nullptr;
  IRGL_CHECK(cudaMalloc(&p, bytes));
  cudaError_t err = cudaMemset(p, 0, bytes);
  if (err != cudaSuccess) {
    cudaFree(p);
    IRGL_CHECK(err);
  }
  return p;
}

}  // namespace detail
}  // namespace irgl
#endif  // IRGL_HOST_IMPL

namespace irgl {

/// Allocates `bytes` (at least 1) zero-initialized bytes of per-call scratch
/// memory (below). Throws irgl::Error.
IRGL_HOST_API void* scratch_bytes(size_t bytes, bool zeroed = true);
/// Frees scratch memory (null is a no-op; stream ordered; never throws).
IRGL_HOST_API void scratch_free(const void* p);

/// n zero-initialized elements of T of scratch memory (see scratch_bytes).
template <class T>
inline T* scratch_alloc(irgl_index n) {
  return static_cast<T*>(detail::scratch_elems(sizeof(T), n));
}

}  // namespace irgl

#if IRGL_HOST_IMPL
namespace irgl {
namespace detail {

/// Whether `device` has stream-ordered memory pools; the first time, its
/// default pool is told to keep freed memory (release threshold: never) so
/// that later scratch allocations are served from it without the driver.
inline bool scratch_pool(int device) {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  static std::map<int, bool> ready;
  Locked lock(mutex);
  auto it = ready.find(device);
  if (it != ready.end()) return it->second;
  int supported = 0;
  bool ok = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess &&
            supported != 0;
  if (ok) {
    cudaMemPool_t pool;
    uint64_t keep = ~uint64_t(0);
    ok = cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
         cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
  }
  (void)cudaGetLastError();
  ready[device] = ok;
  return ok;
}

#ifndef IRGL_SCRATCH_SLAB
#ifdef IRGL_DISTRIBUTED
#define IRGL_SCRATCH_SLAB 0  // NCCL's stream is not ordered with the slab's clearing
#else
#define IRGL_SCRATCH_SLAB 1
#endif
#endif

/// A host thread's slab of zeroed scratch memory on one device. The zeroed
/// allocations of a host call (status words, carried results, cells,
/// worklist tails, counters, a zero-filled `memref.alloc` such as SSSP's
/// round stamps) are carved from it one after another, with no driver call;
/// when the outermost call ends and every piece it took is free again, the
/// bytes used are marked dirty, and the next piece taken (in the next call,
/// before its kernels) first clears them with one memset on the default
/// stream (ordered after the earlier calls' kernels). That replaces a pool
/// allocation, a memset and a free per piece: about 2 us of host time each
/// for a small piece and 10-20 us for a node array of a million nodes, the
/// bulk of a search that reaches nothing. The memset is enqueued before a
/// call's launches rather than after its last synchronization, where a
/// caller that synchronizes would wait for it (5 us of a 50 us empty BFS on
/// an H100). The slab starts at kFirstBytes and grows, at the first piece of
/// a call, to what the largest earlier call asked for (at most kMaxBytes; a
/// piece that does not fit comes from the pool), so a program's node arrays
/// come from it from its second call on.
struct ScratchSlab {
  static constexpr size_t kFirstBytes = size_t(1) << 18;  // 256 KiB a device and thread at first
  static constexpr size_t kMaxBytes = size_t(1) << 26;    // grown to at most 64 MiB
  static constexpr size_t kAlign = 256;                   // as cudaMalloc aligns
  char* base = nullptr;
  size_t bytes = 0;       // its size
  size_t used = 0;        // bytes handed out since the last clearing
  size_t dirty = 0;       // bytes below it that earlier calls used: cleared before the next piece
  size_t asked = 0;       // zeroed bytes asked for (slab or pool) in this outermost call
  size_t wanted = 0;      // the most an outermost call asked for: the size to grow to
  size_t limit = kMaxBytes;  // the most it grows to (its size once the driver refused more)
  long live = 0;          // pieces handed out and not freed
  long live_at_call = 0;  // `live` when the outermost call began
  bool broken = false;    // creating or clearing it failed: not used again
  void* items = nullptr;  // a destroyed pipe's items, kept for the next pipe (take_items)
  size_t items_bytes = 0;
  ~ScratchSlab() {  // at thread exit; errors (a torn-down context) ignored
    if (base) (void)cudaFree(base);
    if (items) (void)cudaFree(items);
  }
};

constexpr int kSlabDevices = 16;

/// The calling thread's slabs, one per device id below kSlabDevices.
inline ScratchSlab* thread_slabs() {
  thread_local ScratchSlab slabs[kSlabDevices];
  return slabs;
}

/// Nesting depth of irgl::guard on this thread (the outermost call clears).
inline int& call_depth() {
  thread_local int depth = 0;
  return depth;
}

/// Gives slab `s` a zeroed block of `bytes` in place of its old one (while
/// no piece of it is live: freeing the old one waits for the kernels that
/// used it). Where the driver refuses, a slab that had a block keeps it and
/// stops growing; one that had none is broken. False if `s` has no new block.
inline bool slab_create(ScratchSlab& s, size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess || cudaMemset(p, 0, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    if (p) (void)cudaFree(p);
    if (s.base)
      s.limit = s.bytes;  // no more growing: device memory is short
    else
      s.broken = true;
    return false;
  }
  if (s.base) (void)cudaFree(s.base);
  s.base = static_cast<char*>(p);
  s.bytes = bytes;
  s.used = s.dirty = 0;
  return true;
}

/// A zeroed piece of `bytes` from this thread's slab of `device`, or null
/// (larger than the slab may grow, slab full or unusable, slab disabled).
/// The first piece of a call grows the slab to what an earlier call asked
/// for.
inline void* slab_take(size_t bytes, int device) {
  if (!IRGL_SCRATCH_SLAB || device < 0 || device >= kSlabDevices) return nullptr;
  ScratchSlab& s = thread_slabs()[device];
  const size_t need = (bytes + ScratchSlab::kAlign - 1) / ScratchSlab::kAlign * ScratchSlab::kAlign;
  if (s.broken || need > ScratchSlab::kMaxBytes) return nullptr;
  s.asked = s.asked + need < ScratchSlab::kMaxBytes ? s.asked + need : ScratchSlab::kMaxBytes;
  if (s.used == 0 && s.live == 0) {
    size_t size = s.wanted > need ? s.wanted : need;
    size = size > ScratchSlab::kFirstBytes ? size : ScratchSlab::kFirstBytes;
    size = size < s.limit ? size : s.limit;
    if (s.bytes < size && !slab_create(s, size) && !s.base) return nullptr;
  }
  if (s.dirty) {
    if (cudaMemsetAsync(s.base, 0, s.dirty, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      s.broken = true;  // its bytes may not be zero: never handed out again
      return nullptr;
    }
    s.dirty = 0;
  }
  if (s.used + need > s.bytes) return nullptr;
  char* p = s.base + s.used;
  s.used += need;
  ++s.live;
  return p;
}

/// Returns a piece to this thread's slab; false if `p` is not from one.
inline bool slab_give(const void* p) {
  ScratchSlab* slabs = thread_slabs();
  const char* c = static_cast<const char*>(p);
  for (int d = 0; d < kSlabDevices; ++d) {
    ScratchSlab& s = slabs[d];
    if (s.base && c >= s.base && c < s.base + s.bytes) {
      --s.live;
      return true;
    }
  }
  return false;
}

inline void call_begin() noexcept {
  if (call_depth()++ != 0) return;
  ScratchSlab* slabs = thread_slabs();
  for (int d = 0; d < kSlabDevices; ++d) slabs[d].live_at_call = slabs[d].live;
}

/// End of a guarded call: at the outermost one, a failed call's pieces are
/// forgotten (its frees were skipped by the exception), and a slab whose
/// pieces are all free is marked dirty for the next call, which clears it
/// before it takes a piece (slab_take). No driver call here.
inline void call_end(bool failed) noexcept {
  if (--call_depth() != 0) return;
  ScratchSlab* slabs = thread_slabs();
  for (int d = 0; d < kSlabDevices; ++d) {
    ScratchSlab& s = slabs[d];
    if (failed) s.live = s.live_at_call;
    s.wanted = s.asked > s.wanted ? s.asked : s.wanted;
    s.asked = 0;
    if (s.used == 0 || s.live != 0 || s.broken) continue;
    s.dirty = s.used > s.dirty ? s.used : s.dirty;
    s.used = 0;
  }
}

}  // namespace detail

/// Allocates `bytes` (at least 1) zero-initialized bytes of per-call scratch
/// memory (cells, worklists, carried results, memref.alloc in host code;
/// `zeroed=false` skips the clearing where every byte is written before it
/// is read, as worklist items are):
/// stream ordered on the default stream from the device's memory pool where
/// the device has one (no cudaMalloc/cudaFree per host call), else
/// cudaMalloc. Free with scratch_free. Throws irgl::Error.
IRGL_HOST_API void* scratch_bytes(size_t bytes, bool zeroed) {
  if (bytes == 0) bytes = 1;
  int device = 0;
  IRGL_CHECK(cudaGetDevice(&device));
  if (zeroed)
    if (void* piece = detail::slab_take(bytes, device)) return piece;
  if (!detail::scratch_pool(device)) return device_alloc<char>(static_cast<irgl_index>(bytes));
  void* p = nullptr;
  IRGL_CHECK(cudaMallocAsync(&p, bytes, 0));
  if (!zeroed) return p;
  cudaError_t err = cudaMemsetAsync(p, 0, bytes, 0);
  if (err != cudaSuccess) {
    cudaFreeAsync(p, 0);
    IRGL_CHECK(err);
  }
  return p;
}

/// Frees scratch memory (null is a no-op; stream ordered; never throws).
IRGL_HOST_API void scratch_free(const void* p) {
  if (!p || detail::slab_give(p)) return;
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess && detail::scratch_pool(device))
    cudaFreeAsync(const_cast<void*>(p), 0);
  else
    cudaFree(const_cast<void*>(p));
  (void)cudaGetLastError();
}

#ifndef IRGL_PINNED_READS
#define IRGL_PINNED_READS 1
#endif

namespace detail {

/// A host thread's page-locked buffer for small device-to-host reads.
struct PinnedBuffer {
  static constexpr size_t kBytes = 256;
  void* data = nullptr;
  bool broken = false;
  ~PinnedBuffer() {
    if (data) (void)cudaFreeHost(data);
  }
};

#ifdef IRGL_DISTRIBUTED
/// Waits (bounded) for a deferred NCCL step of several GPUs (defined in the
/// IRGL_DISTRIBUTED section below).
inline void dist_settle();
#define IRGL_DIST_SETTLE() ::irgl::detail::dist_settle()
/// The same in a function that does not throw (its error is stored).
#define IRGL_DIST_SETTLE_QUIETLY() (void)::irgl::guard([] { ::irgl::detail::dist_settle(); })
#else
#define IRGL_DIST_SETTLE() ((void)0)
#define IRGL_DIST_SETTLE_QUIETLY() ((void)0)
#endif

/// Copies `bytes` from device `src` to host `dst` on the default stream and
/// waits for it (so for the kernels before it, surfacing their errors), as
/// cudaMemcpy does. A small copy goes through a page-locked buffer: DMA
/// straight into it, without the driver's staging of pageable memory.
/// Throws irgl::Error.
inline void read_device(void* dst, const void* src, size_t bytes) {
  IRGL_DIST_SETTLE();  // a deferred NCCL step first, with its bounded wait
  thread_local PinnedBuffer pinned;
  if (IRGL_PINNED_READS && bytes <= PinnedBuffer::kBytes && !pinned.broken) {
    if (!pinned.data && cudaHostAlloc(&pinned.data, PinnedBuffer::kBytes, cudaHostAllocPortable) != cudaSuccess) {
      (void)cudaGetLastError();
      pinned.data = nullptr;
      pinned.broken = true;
    }
    if (pinned.data) {
      IRGL_CHECK(cudaMemcpyAsync(pinned.data, src, bytes, cudaMemcpyDeviceToHost, 0));
      IRGL_CHECK(cudaStreamSynchronize(0));
      std::memcpy(dst, pinned.data, bytes);
      return;
    }
  }
  IRGL_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

IRGL_HOST_API void* scratch_elems(size_t elem, irgl_index n) {
  if (n < 0) throw Error("irgl::scratch_alloc: negative element count " + std::to_string(static_cast<long long>(n)));
  return scratch_bytes(elem * static_cast<size_t>(n));
}

IRGL_HOST_API int guarded(void (*fn)(void*), void* ctx) noexcept {
  call_begin();
  int rc = 1;
  try {
    fn(ctx);
    rc = 0;
  } catch (const std::exception& e) {
    try {
      set_last_error(e.what());
    } catch (...) {
    }
  } catch (...) {
    try {
      set_last_error("unknown C++ exception");
    } catch (...) {
    }
  }
  call_end(rc != 0);
  return rc;
}

IRGL_HOST_API void fail_cuda(cudaError_t err, const char* where) {
  (void)cudaGetLastError();
  throw Error(std::string(where) + ": " + cudaGetErrorString(err));
}

}  // namespace detail
}  // namespace irgl
#endif  // IRGL_HOST_IMPL
#endif  // IRGL_HOST_CODE

#if IRGL_HOST_CODE  // host only: a program's device pass skips it
/// Allocates n zero-initialized elements of T on the device (memref.alloc in
/// host code: irgl_alloc<int32_t>(n)); never null, even for n == 0. Free with
/// irgl_free. Throws irgl::Error.
template <class T>
inline T* irgl_alloc(irgl_index n) {
  return irgl::scratch_alloc<T>(n);
}

/// Frees device memory from irgl_alloc (memref.dealloc); null is a no-op.
IRGL_HOST_API void irgl_free(const void* p);
/// Creates a pipe context with empty in/out/retry worklists of `capacity`
/// items each. Throws irgl::Error.
IRGL_HOST_API irgl::Pipe* irgl_pipe_create(irgl_index capacity);
/// Frees a pipe context and its worklists (null is a no-op; never throws).
IRGL_HOST_API void irgl_pipe_destroy(irgl::Pipe* p);
/// The current `in` worklist (pop side) as a device handle.
IRGL_HOST_API irgl::Worklist irgl_pipe_in(irgl::Pipe* p);
/// The current `out` worklist (push side) as a device handle.
IRGL_HOST_API irgl::Worklist irgl_pipe_out(irgl::Pipe* p);
/// The current `retry` worklist as a device handle.
IRGL_HOST_API irgl::Worklist irgl_pipe_retry(irgl::Pipe* p);
/// Appends v to `in` from the host (synchronizing; for initial worklists).
/// Throws the worklist overflow error if `in` is full.
IRGL_HOST_API void irgl_pipe_push_initial(irgl::Pipe* p, irgl_index v);
/// in := dev[0:n] (a device array of int32). Throws if n > capacity.
IRGL_HOST_API void irgl_pipe_init_from_array_i32(irgl::Pipe* p, const int32_t* dev, irgl_index n);
/// in := dev[0:n] (a device array of irgl_index). Throws if n > capacity.
IRGL_HOST_API void irgl_pipe_init_from_array_index(irgl::Pipe* p, const irgl_index* dev, irgl_index n);
/// After an invocation: in := out, out := empty (the old in's storage is
/// reused). Synchronizes; throws the worklist overflow error if a worklist
/// overflowed (and any pending asynchronous CUDA error).
IRGL_HOST_API void irgl_pipe_advance(irgl::Pipe* p);
/// After an invocation that used retry: in := retry, retry := empty, out is
/// kept; the new `in` is one retry round further than the old one.
/// Synchronizes; throws the worklist overflow error like advance.
IRGL_HOST_API void irgl_pipe_advance_retry(irgl::Pipe* p);
/// Number of items in `in` (copies the tail to the host; synchronizes).
/// Uses the size read by the last advance when `in` has not changed since.
IRGL_HOST_API irgl_index irgl_pipe_in_size(irgl::Pipe* p);
/// Number of items in `out` (clamped to the capacity; synchronizes).
IRGL_HOST_API irgl_index irgl_pipe_out_size(irgl::Pipe* p);
/// Number of items in `retry` (clamped to the capacity; synchronizes).
IRGL_HOST_API irgl_index irgl_pipe_retry_size(irgl::Pipe* p);
/// The grid for a launch on `in` in its retry round r (retry backoff): in
/// round 0 `grid`; in round r >= 1 just enough blocks of `block` threads for
/// ceil(size(in) / 2^r) threads (at least 1, at most `grid`), so each thread
/// gets a contiguous chunk of about 2^r items (irgl_backoff_chunk).
IRGL_HOST_API irgl_index irgl_pipe_backoff_grid(irgl::Pipe* p, irgl_index grid, irgl_index block);
/// Creates an Any (any=true) or All (any=false) cell, already reset.
IRGL_HOST_API irgl::Cell irgl_cell_create(bool any);
/// Resets a cell before a launch: Any -> false (0), All -> true (1).
IRGL_HOST_API void irgl_cell_reset(irgl::Cell c);
/// Reads a cell after the launch (synchronizes; surfaces kernel errors).
IRGL_HOST_API bool irgl_cell_read(irgl::Cell c);
/// Frees a cell (never throws).
IRGL_HOST_API void irgl_cell_destroy(irgl::Cell c);

#if IRGL_HOST_IMPL
namespace irgl {
namespace detail {

/// Fills n 32-bit words at device address p with `value` on the default
/// stream, asynchronously (cuMemsetD32Async, found through the runtime's
/// driver entry point: the runtime library holds no kernels and does not
/// link libcuda). Throws irgl::Error.
inline void fill32_async(void* p, uint32_t value, size_t n) {
  using Fill = int (*)(unsigned long long, unsigned int, size_t, void*);  // CUresult (CUdeviceptr, ..., CUstream)
  static const Fill fill = [] {
    void* fn = nullptr;
#if CUDART_VERSION >= 12000
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuMemsetD32Async", &fn, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t err = cudaGetDriverEntryPoint("cuMemsetD32Async", &fn, cudaEnableDefault, &found);
#endif
    const bool ok = err == cudaSuccess && found == cudaDriverEntryPointSuccess;
#else  // CUDA 11: no query result
    const bool ok = cudaGetDriverEntryPoint("cuMemsetD32Async", &fn, cudaEnableDefault) == cudaSuccess;
#endif
    (void)cudaGetLastError();
    return ok ? reinterpret_cast<Fill>(fn) : nullptr;
  }();
  if (!fill) throw Error("cuMemsetD32Async: not available through cudaGetDriverEntryPoint");
  const int rc = fill(static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)), value, n, nullptr);
  if (rc != 0) throw Error("cuMemsetD32Async: CUresult " + std::to_string(rc));
}

/// Stores `value` into the irgl_index at device address p, asynchronously.
inline void store_index_async(irgl_index* p, irgl_index value) {
  const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(value));
  fill32_async(p, static_cast<uint32_t>(bits), 1);
  if constexpr (sizeof(irgl_index) == 8) fill32_async(reinterpret_cast<uint32_t*>(p) + 1, static_cast<uint32_t>(bits >> 32), 1);
}

/// Host view of one worklist's device meta block (tail + overflow flag).
struct Meta {
  long long tail;
  int overflow;
};

/// Byte offset of wl's meta block inside p's meta storage.
inline size_t meta_offset(const Pipe* p, const Worklist& wl) {
  return static_cast<size_t>(reinterpret_cast<char*>(wl.tail) - p->meta_storage);
}

/// Reads the meta blocks of all three worklists (one synchronizing copy).
inline void read_meta(const Pipe* p, unsigned char (&raw)[3 * Pipe::kMetaBytes]) {
  read_device(raw, p->meta_storage, sizeof(raw));
}

/// Decodes one worklist's meta from a raw copy of the meta storage.
inline Meta decode_meta(const Pipe* p, const Worklist& wl, const unsigned char* raw) {
  const size_t off = meta_offset(p, wl);
  irgl_index tail;
  int flag;
  std::memcpy(&tail, raw + off, sizeof(tail));
  std::memcpy(&flag, raw + off + 8, sizeof(flag));
  return Meta{static_cast<long long>(tail), flag};
}

/// Sets a worklist's tail (and clears its overflow flag) from the host.
inline void write_tail(Pipe* p, const Worklist& wl, irgl_index tail) {
  unsigned char raw[Pipe::kMetaBytes] = {};
  std::memcpy(raw, &tail, sizeof(tail));
  IRGL_CHECK(cudaMemcpy(p->meta_storage + meta_offset(p, wl), raw, sizeof(raw), cudaMemcpyHostToDevice));
}

/// Empties a worklist (tail = 0, flag = 0) asynchronously.
inline void clear_async(Pipe* p, const Worklist& wl) {
  IRGL_CHECK(cudaMemsetAsync(p->meta_storage + meta_offset(p, wl), 0, Pipe::kMetaBytes, 0));
}

/// Reads one worklist's size: its tail clamped to the capacity (synchronizes).
inline irgl_index read_size(const Pipe* p, const Worklist& wl) {
  irgl_index tail = 0;
  read_device(&tail, wl.tail, sizeof(tail));
  return (tail < 0 || tail > p->capacity) ? p->capacity : tail;  // < 0: the counter wrapped
}

/// Throws the overflow error if any worklist of p has overflowed; returns the
/// size of `next`, the worklist that becomes `in` (clamped to the capacity).
inline irgl_index check_overflow(const Pipe* p, const Worklist& next) {
  unsigned char raw[3 * Pipe::kMetaBytes];
  read_meta(p, raw);
  const Worklist* wls[3] = {&p->in, &p->out, &p->retry};
  const char* names[3] = {"in", "out", "retry"};
  for (int k = 0; k < 3; ++k) {
    const Meta m = decode_meta(p, *wls[k], raw);
    if (m.overflow)
      throw Error("worklist overflow: capacity " + std::to_string(static_cast<long long>(p->capacity)) +
                  " exceeded; the " + names[k] + " worklist received " + std::to_string(m.tail) +
                  " pushes in one invocation (pushes past the capacity were dropped); "
                  "increase the worklist size (wlinit size / irgl_pipe_create capacity)");
  }
  const long long tail = decode_meta(p, next, raw).tail;
  return (tail < 0 || tail > p->capacity) ? p->capacity : static_cast<irgl_index>(tail);
}

}  // namespace detail
}  // namespace irgl


/// Frees device memory from irgl_alloc (memref.dealloc); null is a no-op.
IRGL_HOST_API void irgl_free(const void* p) {
  irgl::scratch_free(p);
}

// ---------------------------------------------------------------------------
// Pipes (host)
// ---------------------------------------------------------------------------

namespace irgl {
namespace detail {
/// The items of a host thread's last destroyed pipe on each device are kept
/// in its slab for its next pipe: a search that reaches nothing then makes
/// no pool call for them (a stream-ordered allocation and free of 3 x
/// capacity items took 5 us of a 55 us empty BFS on an H100). The items are
/// never read before they are written, and every kernel runs on the default
/// stream, so the next call's kernels are ordered after the last one's. Off
/// where the slab is (several GPUs: NCCL's stream).
///
/// `bytes` of unzeroed scratch for pipe items: the kept block where it fits.
inline void* take_items(size_t bytes) {
  int device = 0;
  if (IRGL_SCRATCH_SLAB && cudaGetDevice(&device) == cudaSuccess && device >= 0 && device < kSlabDevices) {
    ScratchSlab& slab = thread_slabs()[device];
    if (slab.items && slab.items_bytes >= bytes) {
      void* p = slab.items;
      slab.items = nullptr;
      slab.items_bytes = 0;
      return p;
    }
  }
  (void)cudaGetLastError();
  return scratch_bytes(bytes, false);
}
/// Gives pipe items back: kept in the slab if larger than the block kept
/// there, else freed (never throws).
inline void give_items(void* p, size_t bytes) {
  if (!p) return;
  int device = 0;
  if (IRGL_SCRATCH_SLAB && cudaGetDevice(&device) == cudaSuccess && device >= 0 && device < kSlabDevices) {
    ScratchSlab& slab = thread_slabs()[device];
    if (bytes > slab.items_bytes) {
      if (slab.items) scratch_free(slab.items);
      slab.items = p;
      slab.items_bytes = bytes;
      return;
    }
  }
  (void)cudaGetLastError();
  scratch_free(p);
}
}  // namespace detail
}  // namespace irgl

/// Creates a pipe context with empty in/out/retry worklists of `capacity`
/// items each. Throws irgl::Error.
IRGL_HOST_API irgl::Pipe* irgl_pipe_create(irgl_index capacity) {
  if (capacity < 0)
    throw irgl::Error("irgl_pipe_create: negative capacity " + std::to_string(static_cast<long long>(capacity)));
  irgl::Pipe* p = new irgl::Pipe();
  p->capacity = capacity;
  p->items_storage = nullptr;
  p->meta_storage = nullptr;
  try {
    const size_t n = capacity > 0 ? static_cast<size_t>(capacity) : size_t(1);
    // items are written before they are read (a slot below a tail was
    // pushed), so they are not cleared: on RMAT 18 that is 91 MB of memset
    // per Pipe; the tails are
    p->items_bytes = 3 * n * sizeof(int32_t);
    p->items_storage = static_cast<int32_t*>(irgl::detail::take_items(p->items_bytes));
    p->meta_storage = static_cast<char*>(irgl::scratch_bytes(3 * irgl::Pipe::kMetaBytes));
  } catch (...) {
    irgl::detail::give_items(p->items_storage, p->items_bytes);
    irgl::scratch_free(p->meta_storage);
    delete p;
    throw;
  }
  irgl::Worklist* wls[3] = {&p->in, &p->out, &p->retry};
  for (int k = 0; k < 3; ++k) {
    const size_t n = capacity > 0 ? static_cast<size_t>(capacity) : size_t(1);
    wls[k]->items = p->items_storage + k * n;
    wls[k]->tail = reinterpret_cast<irgl_index*>(p->meta_storage + k * irgl::Pipe::kMetaBytes);
    wls[k]->overflow = reinterpret_cast<int*>(p->meta_storage + k * irgl::Pipe::kMetaBytes + 8);
    wls[k]->capacity = capacity;
  }
  p->in_size = 0;  // the meta storage was cleared: every tail is 0
  return p;
}

/// Frees a pipe context and its worklists (null is a no-op; never throws).
IRGL_HOST_API void irgl_pipe_destroy(irgl::Pipe* p) {
  if (!p) return;
  irgl::detail::give_items(p->items_storage, p->items_bytes);
  irgl::scratch_free(p->meta_storage);
  delete p;
}

/// The current `in` worklist (pop side) as a device handle.
IRGL_HOST_API irgl::Worklist irgl_pipe_in(irgl::Pipe* p) { return p->in; }
/// The current `out` worklist (push side) as a device handle.
IRGL_HOST_API irgl::Worklist irgl_pipe_out(irgl::Pipe* p) { return p->out; }
/// The current `retry` worklist as a device handle.
IRGL_HOST_API irgl::Worklist irgl_pipe_retry(irgl::Pipe* p) { return p->retry; }

/// Appends v to `in` from the host (synchronizing; for initial worklists).
/// Throws the worklist overflow error if `in` is full.
IRGL_HOST_API void irgl_pipe_push_initial(irgl::Pipe* p, irgl_index v) {
  const irgl_index n = p->in_size >= 0 ? p->in_size : irgl::detail::read_size(p, p->in);
  if (n >= p->capacity)
    throw irgl::Error("worklist overflow: capacity " + std::to_string(static_cast<long long>(p->capacity)) +
                      " exceeded; by the initial items of the in worklist");
  // asynchronous 32-bit fills write the item, the tail and the overflow
  // flag: no synchronizing copy before the first launch
  irgl::detail::fill32_async(p->in.items + n, static_cast<uint32_t>(static_cast<int32_t>(v)), 1);
  irgl::detail::store_index_async(p->in.tail, n + 1);
  irgl::detail::fill32_async(p->in.overflow, 0, 1);
  p->in_size = n + 1;
}

namespace irgl {
namespace detail {

/// in := dev[0:n] for a device array of 32- or 64-bit integers (64-bit items
/// are narrowed to int32: a strided copy of each item's low 4 bytes, the
/// int32 value of any item below 2^31 on the little-endian hosts and GPUs
/// CUDA runs on). Throws if n > capacity.
template <class T>
inline void init_from_array(Pipe* p, const T* dev, irgl_index n) {
  if (n < 0 || n > p->capacity)
    throw Error("worklist overflow: capacity " + std::to_string(static_cast<long long>(p->capacity)) +
                " exceeded; initializing the in worklist from an array of " +
                std::to_string(static_cast<long long>(n)) + " items");
  if (n > 0) {
    if constexpr (sizeof(T) == sizeof(int32_t)) {
      IRGL_CHECK(cudaMemcpyAsync(p->in.items, dev, static_cast<size_t>(n) * sizeof(int32_t),
                                 cudaMemcpyDeviceToDevice, 0));
    } else {
      IRGL_CHECK(cudaMemcpy2DAsync(p->in.items, sizeof(int32_t), dev, sizeof(T), sizeof(int32_t),
                                   static_cast<size_t>(n), cudaMemcpyDeviceToDevice, 0));
    }
  }
  write_tail(p, p->in, n);
  p->in_size = n;
}

}  // namespace detail
}  // namespace irgl

/// in := dev[0:n] (a device array of int32). Throws if n > capacity.
IRGL_HOST_API void irgl_pipe_init_from_array_i32(irgl::Pipe* p, const int32_t* dev, irgl_index n) {
  irgl::detail::init_from_array<int32_t>(p, dev, n);
}

/// in := dev[0:n] (a device array of irgl_index). Throws if n > capacity.
IRGL_HOST_API void irgl_pipe_init_from_array_index(irgl::Pipe* p, const irgl_index* dev, irgl_index n) {
  irgl::detail::init_from_array<irgl_index>(p, dev, n);
}

/// After an invocation: in := out, out := empty (the old in's storage is
/// reused). Synchronizes; throws the worklist overflow error if a worklist
/// overflowed (and any pending asynchronous CUDA error).
IRGL_HOST_API void irgl_pipe_advance(irgl::Pipe* p) {
  const irgl_index next = irgl::detail::check_overflow(p, p->out);
  std::swap(p->in, p->out);
  irgl::detail::clear_async(p, p->out);
  p->in_size = next;
  p->in.retry_round = 0;
  p->out.retry_round = 0;
}

/// After an invocation that used retry: in := retry, retry := empty, out is
/// kept; the new `in` is one retry round further than the old one.
/// Synchronizes; throws the worklist overflow error like advance.
IRGL_HOST_API void irgl_pipe_advance_retry(irgl::Pipe* p) {
  const irgl_index next = irgl::detail::check_overflow(p, p->retry);
  const irgl::Worklist old_in = p->in;
  p->in = irgl_wl_next_round(p->retry, old_in);
  p->retry = irgl_wl_first_round(old_in);
  irgl::detail::clear_async(p, p->retry);
  p->in_size = next;
}


/// Number of items in `in` (copies the tail to the host; synchronizes).
/// Uses the size read by the last advance when `in` has not changed since.
IRGL_HOST_API irgl_index irgl_pipe_in_size(irgl::Pipe* p) {
  if (p->in_size < 0) p->in_size = irgl::detail::read_size(p, p->in);
  return p->in_size;
}
/// Number of items in `out` (clamped to the capacity; synchronizes).
IRGL_HOST_API irgl_index irgl_pipe_out_size(irgl::Pipe* p) { return irgl::detail::read_size(p, p->out); }
/// Number of items in `retry` (clamped to the capacity; synchronizes).
IRGL_HOST_API irgl_index irgl_pipe_retry_size(irgl::Pipe* p) { return irgl::detail::read_size(p, p->retry); }

/// The grid for a launch on `in` in its retry round r (retry backoff): in
/// round 0 `grid`; in round r >= 1 just enough blocks of `block` threads for
/// ceil(size(in) / 2^r) threads (at least 1, at most `grid`), so each thread
/// gets a contiguous chunk of about 2^r items (irgl_backoff_chunk).
IRGL_HOST_API irgl_index irgl_pipe_backoff_grid(irgl::Pipe* p, irgl_index grid, irgl_index block) {
  const irgl_index round = p->in.retry_round;
  if (round <= 0 || block <= 0) return grid;
  const irgl_index size = irgl_pipe_in_size(p);
  const irgl_index chunk = irgl_backoff_chunk(round, 1);
  const irgl_index threads = (size + chunk - 1) / chunk;
  const irgl_index blocks = (threads + block - 1) / block;
  return blocks < 1 ? 1 : (blocks < grid ? blocks : grid);
}

// ---------------------------------------------------------------------------
// Cells (host)
// ---------------------------------------------------------------------------

/// Creates an Any (any=true) or All (any=false) cell, already reset.
IRGL_HOST_API irgl::Cell irgl_cell_create(bool any) {
  irgl::Cell c;
  c.any = any;
  c.flag = irgl::scratch_alloc<int>(1);
  const int init = any ? 0 : 1;
  cudaError_t err = cudaMemcpy(c.flag, &init, sizeof(int), cudaMemcpyHostToDevice);
  if (err != cudaSuccess) {
    irgl::scratch_free(c.flag);
    IRGL_CHECK(err);
  }
  return c;
}

/// Resets a cell before a launch: Any -> false (0), All -> true (1).
IRGL_HOST_API void irgl_cell_reset(irgl::Cell c) {
  const int init = c.any ? 0 : 1;
  IRGL_CHECK(cudaMemcpy(c.flag, &init, sizeof(int), cudaMemcpyHostToDevice));
}

/// Reads a cell after the launch (synchronizes; surfaces kernel errors).
IRGL_HOST_API bool irgl_cell_read(irgl::Cell c) {
  int v = 0;
  irgl::detail::read_device(&v, c.flag, sizeof(int));
  return v != 0;
}

/// Frees a cell (never throws).
IRGL_HOST_API void irgl_cell_destroy(irgl::Cell c) {
  irgl::scratch_free(c.flag);
}

// ---------------------------------------------------------------------------
// extern "C" ABI for Python (ctypes). Integer returns: 0 = ok, 1 = error
// (message in irgl_last_error()); pointer returns: nullptr = error.
// ---------------------------------------------------------------------------

/// The message stored by the last failed extern "C" call of this thread.
IRGL_EXPORT const char* irgl_last_error() { return irgl::last_error_storage().c_str(); }

/// Validates a host CSR graph (int64 arrays: row_start[nnodes+1],
/// edge_dst[nedges], optional int32 weights[nedges]), converts it to
/// irgl_index and uploads it. Returns an irgl::Graph* (as void*) or nullptr
/// after storing why (not monotone, wrong ends, dst out of range, too large
/// for irgl_index, CUDA error).
IRGL_EXPORT void* irgl_graph_create(int64_t nnodes, int64_t nedges, const int64_t* row_start,
                                    const int64_t* edge_dst, const int32_t* weights_or_null) {
  irgl::Graph* result = nullptr;
  irgl::guard([&] {
    const int64_t limit = static_cast<int64_t>(std::numeric_limits<irgl_index>::max()) - 1;
    if (nnodes < 0 || nedges < 0)
      throw irgl::Error("irgl_graph_create: negative node or edge count");
    if (nnodes > limit || nedges > limit)
      throw irgl::Error("irgl_graph_create: " + std::to_string(nnodes) + " nodes / " + std::to_string(nedges) +
                        " edges do not fit irgl_index (" + std::to_string(sizeof(irgl_index) * 8) +
                        " bits); compile with IRGL_INDEX_BITS=64");
    if (!row_start) throw irgl::Error("irgl_graph_create: row_start is null");
    if (nedges > 0 && !edge_dst) throw irgl::Error("irgl_graph_create: edge_dst is null");
    if (row_start[0] != 0)
      throw irgl::Error("irgl_graph_create: row_start[0] is " + std::to_string(row_start[0]) + ", not 0");
    if (row_start[nnodes] != nedges)
      throw irgl::Error("irgl_graph_create: row_start[" + std::to_string(nnodes) + "] is " +
                        std::to_string(row_start[nnodes]) + ", not the edge count " + std::to_string(nedges));
    std::vector<irgl_index> rs(static_cast<size_t>(nnodes) + 1), dst(static_cast<size_t>(nedges));
    int64_t max_degree = 0;
    for (int64_t n = 0; n <= nnodes; ++n) {
      if (n > 0 && row_start[n] < row_start[n - 1])
        throw irgl::Error("irgl_graph_create: row_start is not monotone at node " + std::to_string(n - 1) + " (" +
                          std::to_string(row_start[n - 1]) + " > " + std::to_string(row_start[n]) + ")");
      if (n > 0 && row_start[n] - row_start[n - 1] > max_degree) max_degree = row_start[n] - row_start[n - 1];
      rs[static_cast<size_t>(n)] = static_cast<irgl_index>(row_start[n]);
    }
    for (int64_t e = 0; e < nedges; ++e) {
      if (edge_dst[e] < 0 || edge_dst[e] >= nnodes)
        throw irgl::Error("irgl_graph_create: edge " + std::to_string(e) + " has destination " +
                          std::to_string(edge_dst[e]) + ", outside [0, " + std::to_string(nnodes) + ")");
      dst[static_cast<size_t>(e)] = static_cast<irgl_index>(edge_dst[e]);
    }
    std::vector<int32_t> ones;
    if (!weights_or_null) ones.assign(static_cast<size_t>(nedges), 1);
    const int32_t* w = weights_or_null ? weights_or_null : ones.data();

    irgl::Graph g;
    g.nnodes = static_cast<irgl_index>(nnodes);
    g.nedges = static_cast<irgl_index>(nedges);
    g.max_degree = static_cast<irgl_index>(max_degree);
    g.row_start = nullptr;
    g.edge_dst = nullptr;
    g.edge_weight = nullptr;
    try {
      g.row_start = irgl::device_alloc<irgl_index>(g.nnodes + 1);
      g.edge_dst = irgl::device_alloc<irgl_index>(g.nedges);
      g.edge_weight = irgl::device_alloc<int32_t>(g.nedges);
      IRGL_CHECK(cudaMemcpy(g.row_start, rs.data(), rs.size() * sizeof(irgl_index), cudaMemcpyHostToDevice));
      if (nedges > 0) {
        IRGL_CHECK(cudaMemcpy(g.edge_dst, dst.data(), dst.size() * sizeof(irgl_index), cudaMemcpyHostToDevice));
        IRGL_CHECK(cudaMemcpy(g.edge_weight, w, static_cast<size_t>(nedges) * sizeof(int32_t),
                              cudaMemcpyHostToDevice));
      }
    } catch (...) {
      cudaFree(g.row_start);
      cudaFree(g.edge_dst);
      cudaFree(g.edge_weight);
      (void)cudaGetLastError();
      throw;
    }
    result = new irgl::Graph(g);
  });
  return result;
}

/// Frees a graph from irgl_graph_create (null is a no-op).
IRGL_EXPORT void irgl_graph_destroy(void* graph) {
  irgl::Graph* g = static_cast<irgl::Graph*>(graph);
  if (!g) return;
  IRGL_DIST_SETTLE_QUIETLY();  // cudaFree waits for the device
  cudaFree(g->row_start);
  cudaFree(g->edge_dst);
  cudaFree(g->edge_weight);
  (void)cudaGetLastError();
  delete g;
}

/// cudaMalloc of `bytes` bytes; nullptr (and a stored message) on failure.
IRGL_EXPORT void* irgl_device_alloc(int64_t bytes) {
  void* p = nullptr;
  if (irgl::guard([&] {
        if (bytes < 0) throw irgl::Error("irgl_device_alloc: negative size");
        IRGL_CHECK(cudaMalloc(&p, bytes > 0 ? static_cast<size_t>(bytes) : size_t(1)));
      }))
    return nullptr;
  return p;
}

/// cudaFree (null is a no-op).
IRGL_EXPORT void irgl_device_free(void* p) {
  IRGL_DIST_SETTLE_QUIETLY();  // cudaFree waits for the device
  if (p) cudaFree(p);
  (void)cudaGetLastError();
}

/// Copies `bytes` bytes from host `src` to device `dst`; 0 = ok, 1 = error.
IRGL_EXPORT int irgl_copy_to_device(void* dst, const void* src, int64_t bytes) {
  return irgl::guard([&] {
    if (bytes < 0) throw irgl::Error("irgl_copy_to_device: negative size");
    IRGL_DIST_SETTLE();
    if (bytes > 0) IRGL_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice));
  });
}

/// Copies `bytes` bytes from device `src` to host `dst`; 0 = ok, 1 = error.
IRGL_EXPORT int irgl_copy_to_host(void* dst, const void* src, int64_t bytes) {
  return irgl::guard([&] {
    if (bytes < 0) throw irgl::Error("irgl_copy_to_host: negative size");
    IRGL_DIST_SETTLE();
    if (bytes > 0) IRGL_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost));
  });
}

IRGL_HOST_API int32_t* irgl_outline_status();
IRGL_HOST_API void irgl_outline_status_release(int32_t* status);

/// Pays the process's one-time set-up before the first host call instead of
/// inside it (Program does this when it loads the library): the CUDA context,
/// the first stream-ordered allocation from the device's memory pool (about
/// 5 ms once per process on an H200, against 1 us after), and the calling
/// thread's resources that host calls make at their first use: the status
/// word in mapped host memory of a control kernel (1.0-1.4 ms of a first
/// search on an H200), the page-locked buffer of small reads and the slab of
/// small scratch. 0 = ok, 1 = error (message stored).
IRGL_EXPORT int irgl_warm_up() {
  return irgl::guard([] {
    IRGL_CHECK(cudaFree(nullptr));  // creates the context
    void* block = irgl::scratch_bytes(1 << 20, false);
    int32_t word = 0;
    try {
      irgl::detail::read_device(&word, block, sizeof(word));  // the page-locked buffer
      irgl::scratch_free(irgl::scratch_bytes(sizeof(word), true));  // the slab
      irgl_outline_status_release(irgl_outline_status());  // the mapped status word
    } catch (...) {
      irgl::scratch_free(block);
      throw;
    }
    irgl::scratch_free(block);
    IRGL_CHECK(cudaDeviceSynchronize());
  });
}

/// cudaDeviceSynchronize; 0 = ok, 1 = error (e.g. a kernel fault).
IRGL_EXPORT int irgl_device_synchronize() {
  return irgl::guard([] {
    IRGL_DIST_SETTLE();  // several GPUs: a deferred step's wait stays bounded
    IRGL_CHECK(cudaDeviceSynchronize());
  });
}

/// The device's memory: out[0] bytes in use (total - free, every
/// allocation of every context on it), out[1] its total; 0 = ok, 1 = error.
IRGL_EXPORT int irgl_device_memory(int64_t* out) {
  return irgl::guard([&] {
    size_t free_bytes = 0, total_bytes = 0;
    IRGL_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    out[0] = static_cast<int64_t>(total_bytes - free_bytes);
    out[1] = static_cast<int64_t>(total_bytes);
  });
}

#ifdef IRGL_COUNT_EDGES
namespace irgl {
namespace detail {
/// A counting build's device counter `counter` (a word or an array of
/// them) into `out` once the device is done, then zero. Throws irgl::Error.
template <class Counter>
inline void take_counter(unsigned long long* out, const Counter& counter) {
  static const Counter zero{};
  IRGL_CHECK(cudaDeviceSynchronize());
  IRGL_CHECK(cudaMemcpyFromSymbol(out, counter, sizeof(Counter)));
  IRGL_CHECK(cudaMemcpyToSymbol(counter, &zero, sizeof(Counter)));
}
}  // namespace detail
}  // namespace irgl

/// A counting build's edge reads since the last call (see irgl_edge_reads),
/// then zero; synchronizes. 0 = ok, 1 = error.
extern "C" __attribute__((used, visibility("default"))) int irgl_edge_reads_take(unsigned long long* out) {
  return irgl::guard([&] { irgl::detail::take_counter(out, irgl_edge_reads); });
}

/// A counting build's synchronization steps since the last call, then zero;
/// synchronizes. out[0]: kernel launches, out[1]: grid barriers passed,
/// out[2]: rounds block 0 took alone (the small-worklist mode). 0 = ok,
/// 1 = error.
extern "C" __attribute__((used, visibility("default"))) int irgl_steps_take(unsigned long long* out) {
  return irgl::guard([&] {
    unsigned long long device[3] = {0, 0, 0};
    irgl::detail::take_counter(device, irgl_step_counts);
    out[0] = irgl::detail::launches();
    out[1] = device[0];
    out[2] = device[1] > device[2] ? device[1] - device[2] : 0;
    irgl::detail::launches() = 0;
  });
}
/// A counting build's span since the last call (see irgl_span_total): for
/// every step, the most edges one thread read, summed; then zero;
/// synchronizes. 0 = ok, 1 = error.
extern "C" __attribute__((used, visibility("default"))) int irgl_span_take(unsigned long long* out) {
  return irgl::guard([&] { irgl::detail::take_counter(out, irgl_span_total); });
}
#endif

/// Name of the current CUDA device, or nullptr (message stored) if none.
IRGL_EXPORT const char* irgl_device_name() {
  thread_local std::string name;
  if (irgl::guard([&] {
        int device = 0;
        IRGL_CHECK(cudaGetDevice(&device));
        cudaDeviceProp prop;
        IRGL_CHECK(cudaGetDeviceProperties(&prop, device));
        name = prop.name;
      }))
    return nullptr;
  return name.c_str();
}
#endif  // IRGL_HOST_IMPL
#endif  // IRGL_HOST_CODE

// ---------------------------------------------------------------------------
// Reductions of an edge loop (irgl.forall ... reduce(kind, init : T)) across
// the threads that share a node's edges (nested parallelism): each lane
// accumulates a partial; these combine the partials without atomics.
// ---------------------------------------------------------------------------

namespace irgl {
namespace detail {

struct ReduceAdd {
  template <class T>
  __device__ __forceinline__ static T apply(T a, T b) { return a + b; }
};
struct ReduceMin {
  template <class T>
  __device__ __forceinline__ static T apply(T a, T b) { return b < a ? b : a; }
  __device__ __forceinline__ static float apply(float a, float b) { return fminf(a, b); }
  __device__ __forceinline__ static double apply(double a, double b) { return fmin(a, b); }
};
struct ReduceMax {
  template <class T>
  __device__ __forceinline__ static T apply(T a, T b) { return a < b ? b : a; }
  __device__ __forceinline__ static float apply(float a, float b) { return fmaxf(a, b); }
  __device__ __forceinline__ static double apply(double a, double b) { return fmax(a, b); }
};
struct ReduceOr {
  template <class T>
  __device__ __forceinline__ static T apply(T a, T b) { return a | b; }
};
struct ReduceAnd {
  template <class T>
  __device__ __forceinline__ static T apply(T a, T b) { return a & b; }
};
struct ReduceXor {
  template <class T>
  __device__ __forceinline__ static T apply(T a, T b) { return a ^ b; }
};

/// The total of `v` over the lanes of `mask`, on every lane of `mask`: a
/// butterfly of shuffles for a full warp (every lane gets the bitwise same
/// result), else one shuffle per lane of the mask, in lane order.
template <class Op, class T>
__device__ __forceinline__ T warp_reduce(unsigned mask, T v) {
  if (mask == 0xffffffffu) {
    for (int offset = 16; offset > 0; offset >>= 1)
      v = Op::apply(v, __shfl_xor_sync(mask, v, offset));
    return v;
  }
  unsigned rest = mask;
  T total = __shfl_sync(mask, v, __ffs(rest) - 1);
  rest &= rest - 1u;
  while (rest != 0u) {
    total = Op::apply(total, __shfl_sync(mask, v, __ffs(rest) - 1));
    rest &= rest - 1u;
  }
  return total;
}

/// The total of `v` over the block, on every thread (block-uniform call):
/// warp totals go through shared memory, each thread combines them in warp
/// order.
template <class Op, class T>
__device__ __forceinline__ T block_reduce(T v) {
  __shared__ T parts[32];
  const unsigned warp = threadIdx.x / 32u;
  const unsigned first = warp * 32u;
  const unsigned lanes = blockDim.x - first < 32u ? blockDim.x - first : 32u;
  const unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
  v = warp_reduce<Op>(mask, v);
  if (lane_id() == 0u) parts[warp] = v;
  __syncthreads();
  T total = parts[0];
  const unsigned warps = (blockDim.x + 31u) / 32u;
  for (unsigned w = 1; w < warps; ++w) total = Op::apply(total, parts[w]);
  __syncthreads();
  return total;
}

}  // namespace detail
}  // namespace irgl

/// irgl_warp_reduce_<kind>_<T>(mask, v): the total over the lanes of mask;
/// irgl_block_reduce_<kind>_<T>(v): the total over the block (every thread of
/// the block calls it at the same point). One function per kind and type.
#define IRGL_REDUCE_ADD(SUFFIX, T)                                                    \
  __device__ __forceinline__ T irgl_warp_reduce_add_##SUFFIX(int32_t mask, T v) {        \
    return irgl::detail::warp_reduce<irgl::detail::ReduceAdd>(static_cast<unsigned>(mask), v); \
  }                                                                                     \
  __device__ __forceinline__ T irgl_block_reduce_add_##SUFFIX(T v) {                    \
    return irgl::detail::block_reduce<irgl::detail::ReduceAdd>(v);                           \
  }
#define IRGL_REDUCE_MIN(SUFFIX, T)                                                    \
  __device__ __forceinline__ T irgl_warp_reduce_min_##SUFFIX(int32_t mask, T v) {        \
    return irgl::detail::warp_reduce<irgl::detail::ReduceMin>(static_cast<unsigned>(mask), v); \
  }                                                                                     \
  __device__ __forceinline__ T irgl_block_reduce_min_##SUFFIX(T v) {                    \
    return irgl::detail::block_reduce<irgl::detail::ReduceMin>(v);                           \
  }
#define IRGL_REDUCE_MAX(SUFFIX, T)                                                    \
  __device__ __forceinline__ T irgl_warp_reduce_max_##SUFFIX(int32_t mask, T v) {        \
    return irgl::detail::warp_reduce<irgl::detail::ReduceMax>(static_cast<unsigned>(mask), v); \
  }                                                                                     \
  __device__ __forceinline__ T irgl_block_reduce_max_##SUFFIX(T v) {                    \
    return irgl::detail::block_reduce<irgl::detail::ReduceMax>(v);                           \
  }
IRGL_REDUCE_ADD(index, irgl_index)
IRGL_REDUCE_ADD(i32, int32_t)
IRGL_REDUCE_ADD(i64, int64_t)
IRGL_REDUCE_ADD(f32, float)
IRGL_REDUCE_ADD(f64, double)
#undef IRGL_REDUCE_ADD
IRGL_REDUCE_MIN(index, irgl_index)
IRGL_REDUCE_MIN(i32, int32_t)
IRGL_REDUCE_MIN(i64, int64_t)
IRGL_REDUCE_MIN(f32, float)
IRGL_REDUCE_MIN(f64, double)
#undef IRGL_REDUCE_MIN
IRGL_REDUCE_MAX(index, irgl_index)
IRGL_REDUCE_MAX(i32, int32_t)
IRGL_REDUCE_MAX(i64, int64_t)
IRGL_REDUCE_MAX(f32, float)
IRGL_REDUCE_MAX(f64, double)
#undef IRGL_REDUCE_MAX

/// irgl_warp_reduce_<or|and|xor>_<T>(mask, v): the bitwise total over the
/// lanes of mask; irgl_block_reduce_<or|and|xor>_<T>(v): over the block
/// (block-uniform). For a reduction loop that a warp or a block splits
/// (convert-irgl-exclusive `warp_alone`). Integers only.
#define IRGL_REDUCE_BITWISE(SUFFIX, T)                                                   \
  __device__ __forceinline__ T irgl_warp_reduce_or_##SUFFIX(int32_t mask, T v) {          \
    return irgl::detail::warp_reduce<irgl::detail::ReduceOr>(static_cast<unsigned>(mask), v);  \
  }                                                                                       \
  __device__ __forceinline__ T irgl_warp_reduce_and_##SUFFIX(int32_t mask, T v) {         \
    return irgl::detail::warp_reduce<irgl::detail::ReduceAnd>(static_cast<unsigned>(mask), v); \
  }                                                                                       \
  __device__ __forceinline__ T irgl_warp_reduce_xor_##SUFFIX(int32_t mask, T v) {         \
    return irgl::detail::warp_reduce<irgl::detail::ReduceXor>(static_cast<unsigned>(mask), v); \
  }                                                                                       \
  __device__ __forceinline__ T irgl_block_reduce_or_##SUFFIX(T v) {                        \
    return irgl::detail::block_reduce<irgl::detail::ReduceOr>(v);                         \
  }                                                                                       \
  __device__ __forceinline__ T irgl_block_reduce_and_##SUFFIX(T v) {                       \
    return irgl::detail::block_reduce<irgl::detail::ReduceAnd>(v);                        \
  }                                                                                       \
  __device__ __forceinline__ T irgl_block_reduce_xor_##SUFFIX(T v) {                       \
    return irgl::detail::block_reduce<irgl::detail::ReduceXor>(v);                        \
  }
IRGL_REDUCE_BITWISE(index, irgl_index)
IRGL_REDUCE_BITWISE(i32, int32_t)
IRGL_REDUCE_BITWISE(i64, int64_t)
#undef IRGL_REDUCE_BITWISE

/// __syncwarp over the lanes of `mask`: orders the memory accesses of a
/// warp that runs one thread's code together (convert-irgl-exclusive
/// `warp_alone`) around the one lane's writes.
__device__ __forceinline__ void irgl_warp_sync(int32_t mask) { __syncwarp(static_cast<unsigned>(mask)); }

/// __syncthreads: the same around the one thread's writes where the whole
/// block runs one thread's code (block-uniform).
__device__ __forceinline__ void irgl_block_sync() { __syncthreads(); }

// A reducing edge loop in the grid phase: the donor starts its job's
// accumulator at the reduction's identity (irgl_grid_acc_init_<T>, before
// irgl_grid_publish); each block that walked a chunk combines its block total
// into it (irgl_grid_combine_<kind>_<T>, block-uniform, thread 0 with a
// compare-and-swap loop, before irgl_grid_done counts the chunk); the donor
// takes the result once every chunk is done (irgl_grid_finish_<T>, which then
// frees the slot).
namespace irgl {
namespace detail {
template <class Op, class T>
__device__ __forceinline__ void grid_combine(int32_t slot, T v) {
  if (threadIdx.x != 0) return;
  unsigned long long* p = &grid_jobs[slot].acc;
  unsigned long long old = grid_word(p);
  while (true) {
    const unsigned long long next = grid_bits<T>(Op::apply(grid_value<T>(old), v));
    const unsigned long long seen = atomicCAS(p, old, next);
    if (seen == old) return;
    old = seen;
  }
}
}  // namespace detail
}  // namespace irgl

#define IRGL_GRID_REDUCE(SUFFIX, T)                                                            \
  __device__ __forceinline__ void irgl_grid_acc_init_##SUFFIX(int32_t slot, T v) {              \
    irgl::detail::grid_jobs[slot].acc = irgl::detail::grid_bits<T>(v);                          \
  }                                                                                            \
  __device__ __forceinline__ void irgl_grid_combine_add_##SUFFIX(int32_t slot, T v) {           \
    irgl::detail::grid_combine<irgl::detail::ReduceAdd, T>(slot, v);                            \
  }                                                                                            \
  __device__ __forceinline__ void irgl_grid_combine_min_##SUFFIX(int32_t slot, T v) {           \
    irgl::detail::grid_combine<irgl::detail::ReduceMin, T>(slot, v);                            \
  }                                                                                            \
  __device__ __forceinline__ void irgl_grid_combine_max_##SUFFIX(int32_t slot, T v) {           \
    irgl::detail::grid_combine<irgl::detail::ReduceMax, T>(slot, v);                            \
  }                                                                                            \
  __device__ __forceinline__ T irgl_grid_finish_##SUFFIX(int32_t slot) {                         \
    irgl::detail::grid_wait(slot);                                                              \
    const T v = irgl::detail::grid_value<T>(irgl::detail::grid_word(&irgl::detail::grid_jobs[slot].acc)); \
    irgl::detail::grid_free(slot);                                                              \
    return v;                                                                                   \
  }
IRGL_GRID_REDUCE(index, irgl_index)
IRGL_GRID_REDUCE(i32, int32_t)
IRGL_GRID_REDUCE(i64, int64_t)
IRGL_GRID_REDUCE(f32, float)
IRGL_GRID_REDUCE(f64, double)
#undef IRGL_GRID_REDUCE

// ---------------------------------------------------------------------------
// Warp gather of small edge lists (convert-irgl-nested-edges{warp_gather}):
// the lanes of a warp lay their small edge lists end to end (an exclusive
// scan of the degrees) and walk the concatenation 32 edges at a time, so a
// warp takes sum(degree) / 32 steps instead of max(degree). Every lane of
// `mask` calls these at the same point; its lanes are 0..n-1 (the uniform
// rounds of convert-irgl-loops reach them with whole warps).

/// The sum of `d` over the lanes below this one.
__device__ __forceinline__ irgl_index irgl_warp_exscan_index(int32_t mask, irgl_index d) {
  const unsigned m = static_cast<unsigned>(mask);
  const unsigned lane = irgl::detail::lane_id();
  irgl_index x = d;
  for (unsigned s = 1; s < 32u; s <<= 1) {
    const irgl_index up = __shfl_up_sync(m, x, s);
    if (lane >= s) x += up;
  }
  return x - d;
}

/// The first lane whose `end` (the scan's inclusive value) exceeds `k`: the
/// lane that owns the concatenation's k-th edge (the last lane when none).
__device__ __forceinline__ int32_t irgl_warp_owner(int32_t mask, irgl_index end, irgl_index k) {
  const unsigned m = static_cast<unsigned>(mask);
  int lo = 0, hi = __popc(m) - 1;
#pragma unroll
  for (int step = 0; step < 5; ++step) {
    const int mid = (lo + hi) >> 1;
    const irgl_index x = __shfl_sync(m, end, mid);
    if (x > k) hi = mid;
    else lo = mid + 1 < hi ? mid + 1 : hi;
  }
  return lo;
}

namespace irgl {
namespace detail {
/// One gather step's values `v` (lane r holds the value of edge base + r,
/// owned by lane `owner`), combined per owner: a segmented scan, then each
/// lane takes the total of its own edges [lo, hi) in this step (`none` when
/// it has none here).
template <class Op, class T>
__device__ __forceinline__ T warp_segment(unsigned mask, T v, int32_t owner, irgl_index lo,
                                          irgl_index hi, irgl_index base, T none) {
  const unsigned lane = lane_id();
  for (unsigned s = 1; s < 32u; s <<= 1) {
    const T up = __shfl_up_sync(mask, v, s);
    const int32_t up_owner = __shfl_up_sync(mask, owner, s);
    if (lane >= s && up_owner == owner) v = Op::apply(v, up);
  }
  const irgl_index width = static_cast<irgl_index>(__popc(mask));
  const irgl_index start = lo > base ? lo : base;
  const irgl_index stop = hi < base + width ? hi : base + width;
  const bool mine = start < stop;
  const int tail = mine ? static_cast<int>(stop - 1 - base) : static_cast<int>(lane);
  const T got = __shfl_sync(mask, v, tail);
  return mine ? got : none;
}
}  // namespace detail
}  // namespace irgl

/// irgl_warp_segment_<kind>_<T>(mask, v, owner, lo, hi, base, none): see
/// irgl::detail::warp_segment. One function per kind and type.
#define IRGL_SEGMENT_ADD(SUFFIX, T)                                                        \
  __device__ __forceinline__ T irgl_warp_segment_add_##SUFFIX(int32_t mask, T v, int32_t owner, irgl_index lo, irgl_index hi, irgl_index base, T none) { \
    return irgl::detail::warp_segment<irgl::detail::ReduceAdd>(static_cast<unsigned>(mask), v, owner, lo, hi, base, none); \
  }
IRGL_SEGMENT_ADD(index, irgl_index)
IRGL_SEGMENT_ADD(i32, int32_t)
IRGL_SEGMENT_ADD(i64, int64_t)
IRGL_SEGMENT_ADD(f32, float)
IRGL_SEGMENT_ADD(f64, double)
#undef IRGL_SEGMENT_ADD
#define IRGL_SEGMENT_MIN(SUFFIX, T)                                                        \
  __device__ __forceinline__ T irgl_warp_segment_min_##SUFFIX(int32_t mask, T v, int32_t owner, irgl_index lo, irgl_index hi, irgl_index base, T none) { \
    return irgl::detail::warp_segment<irgl::detail::ReduceMin>(static_cast<unsigned>(mask), v, owner, lo, hi, base, none); \
  }
IRGL_SEGMENT_MIN(index, irgl_index)
IRGL_SEGMENT_MIN(i32, int32_t)
IRGL_SEGMENT_MIN(i64, int64_t)
IRGL_SEGMENT_MIN(f32, float)
IRGL_SEGMENT_MIN(f64, double)
#undef IRGL_SEGMENT_MIN
#define IRGL_SEGMENT_MAX(SUFFIX, T)                                                        \
  __device__ __forceinline__ T irgl_warp_segment_max_##SUFFIX(int32_t mask, T v, int32_t owner, irgl_index lo, irgl_index hi, irgl_index base, T none) { \
    return irgl::detail::warp_segment<irgl::detail::ReduceMax>(static_cast<unsigned>(mask), v, owner, lo, hi, base, none); \
  }
IRGL_SEGMENT_MAX(index, irgl_index)
IRGL_SEGMENT_MAX(i32, int32_t)
IRGL_SEGMENT_MAX(i64, int64_t)
IRGL_SEGMENT_MAX(f32, float)
IRGL_SEGMENT_MAX(f64, double)
#undef IRGL_SEGMENT_MAX

// ---------------------------------------------------------------------------
// Outlined iterations (irgl-outline-iterations): an Iterate or Pipe runs as
// one cooperative control kernel. Every thread of the grid executes the same
// control flow and holds the same handles; the invoked kernels run as device
// functions separated by irgl_grid_sync(). The control kernel rotates four
// worklists (in, out, retry and a spare that is emptied by thread 0 during
// the step before it is used, so one barrier per invocation suffices) and
// triple-buffers each Any/All cell (a slot is reset two steps before reuse).
// ---------------------------------------------------------------------------

/// Is the caller global thread 0 (the one that performs single writes)?
__device__ __forceinline__ bool irgl_is_first_thread() {
  return blockIdx.x == 0 && threadIdx.x == 0;
}

/// Empties `wl` (tail and overflow flag) from global thread 0. Nothing may
/// read or push to `wl` until the next grid barrier.
__device__ __forceinline__ void irgl_ctl_clear(irgl::Worklist wl) {
  if (irgl_is_first_thread()) {
    *reinterpret_cast<volatile irgl_index*>(wl.tail) = 0;
    *reinterpret_cast<volatile int*>(wl.overflow) = 0;
  }
}

/// After a grid barrier: the number of items in `wl` (at most its capacity),
/// or 0 once it has overflowed (an overflowed worklist stops every loop;
/// irgl_ctl_size_check records it). Thread 0 of each block reads the tail and
/// broadcasts it through shared memory, so a step costs one memory request
/// per block, not one per warp; the control kernel passes the value on to
/// the device body (in a register) instead of every thread reading the tail.
/// Block-uniform call (the control loop's control flow is grid-uniform).
__device__ __forceinline__ irgl_index irgl_ctl_size(irgl::Worklist wl) {
  __shared__ irgl_index size;
  __syncthreads();  // the previous call's readers are done
  if (threadIdx.x == 0) {
    const irgl_index t = *reinterpret_cast<volatile irgl_index*>(wl.tail);
    const int flag = *reinterpret_cast<volatile int*>(wl.overflow);
    size = flag != 0 ? 0 : (t < wl.capacity ? t : wl.capacity);
  }
  __syncthreads();
  return size;
}

/// Slot `epoch` mod 3 of a triple-buffered cell (irgl_cell_create_slots).
__device__ __forceinline__ irgl::Cell irgl_ctl_cell_slot(irgl::Cell c, irgl_index epoch) {
  irgl::Cell slot;
  slot.flag = c.flag + static_cast<int>(epoch % 3);
  slot.any = c.any;
  return slot;
}

/// Resets the slot of step `epoch + 1` (global thread 0): it was last read
/// before the previous grid barrier and is next written after the next one.
__device__ __forceinline__ void irgl_ctl_cell_prepare(irgl::Cell c, irgl_index epoch) {
  if (irgl_is_first_thread())
    *reinterpret_cast<volatile int*>(c.flag + static_cast<int>((epoch + 1) % 3)) = c.any ? 0 : 1;
}

/// The value of a cell slot after the grid barrier that ends its step (read
/// by thread 0 of each block and broadcast; block-uniform call).
__device__ __forceinline__ bool irgl_ctl_cell_value(irgl::Cell slot) {
  __shared__ int value;
  __syncthreads();
  if (threadIdx.x == 0) value = *reinterpret_cast<volatile int*>(slot.flag);
  __syncthreads();
  return value != 0;
}

// Small-worklist mode (irgl-outline-iterations `small_worklist`): while the
// worklist of a control loop holds few items, block 0 alone runs its rounds,
// each step ended by irgl_ctl_size_check() instead of a grid barrier, while every
// other block waits at one grid barrier. A grid barrier first lets every
// block finish reading the last grid step's results (block 0's second step
// resets them: the spare is cleared and cell slots are reset one step
// ahead). Before the waiting barrier thread 0 stores the loop state
// (handles, sizes, carried values) in device memory (plain stores: the grid
// barrier orders them before every load after it); after it every thread
// loads it. The next episode's first barrier keeps block 0 from overwriting
// it before every block has read it.

/// Thread 0 of a block records a worklist step in the profile and counting
/// builds (their block-0 and block-1 counters); nothing otherwise.
__device__ __forceinline__ void irgl_ctl_note_step() {
#ifdef IRGL_PROFILE_CONTROL
  if (blockIdx.x < 2) irgl_profile[6 + blockIdx.x] += 1;
#endif
#ifdef IRGL_COUNT_EDGES
  if (blockIdx.x < 2) irgl_step_counts[1 + blockIdx.x] += 1;
#endif
}

/// The end of a worklist kernel's step (after its grid barrier, or in the
/// small-worklist mode its block barrier): a block barrier (in the
/// small-worklist mode the step's own: every push of the block is visible
/// after it), then the size of `wl` as irgl_ctl_size computes it, and an
/// overflow of `wl` recorded in status[0] by block 0 (so that the host
/// reports it after the control kernel), with one memory request (tail and
/// overflow flag share a 16-byte line) by thread 0, broadcast through shared
/// memory. Block-uniform call.
__device__ __forceinline__ irgl_index irgl_ctl_size_check(irgl::Worklist wl, int32_t* status) {
  __shared__ irgl_index size;
#ifdef IRGL_COUNT_EDGES
  if (blockIdx.x == 0) irgl_span_publish(&irgl_span_block_step);  // a lone round's reads
#endif
  __syncthreads();  // the step's barrier; also the previous call's readers are done
  if (threadIdx.x == 0) {
    const irgl_index t = *reinterpret_cast<volatile irgl_index*>(wl.tail);
    const int flag = *reinterpret_cast<volatile int*>(wl.overflow);
    if (flag != 0 && blockIdx.x == 0) *reinterpret_cast<volatile int32_t*>(status) = 1;
    size = flag != 0 ? 0 : (t < wl.capacity ? t : wl.capacity);
    irgl_ctl_note_step();
#ifdef IRGL_COUNT_EDGES
    if (blockIdx.x == 0) irgl_span_close(&irgl_span_block_step);
#endif
  }
  __syncthreads();
  return size;
}

/// The losers in `wl` after a drain's window of `k` items that held `lost`
/// before it, for a kernel whose only retries are its lost Exclusives
/// (irgl-outline-iterations: `_Drain.lone_wins`): a window of one item is a
/// launch with one contender, which claims nothing and wins, so it retried
/// nothing and the losers are still `lost` (the step's block barrier, no
/// read of the tail); a larger window reads them with irgl_ctl_size_check.
/// Block-uniform call.
__device__ __forceinline__ irgl_index irgl_ctl_drain_losers(irgl::Worklist wl, int32_t* status, irgl_index k,
                                                           irgl_index lost) {
  if (k != 1) return irgl_ctl_size_check(wl, status);
  __syncthreads();  // the step's barrier, as in irgl_ctl_size_check
  if (threadIdx.x == 0) irgl_ctl_note_step();
  return lost;
}

// Time limit of the small-worklist mode (irgl-outline-iterations
// `small_worklist_us`): a step of block 0 that takes longer than the limit
// ends the mode for the rest of the control kernel (status[1] = 1); the
// steps are stamped with irgl_ctl_clock (above).

/// After a step of block 0 in the small-worklist mode that thread 0 began at
/// `start` (irgl_ctl_clock): whether it took at most `limit_ns`. If not,
/// thread 0 sets status[1], which ends the mode for the rest of the control
/// kernel (every block reads it after the exit's grid barrier). Thread 0's
/// verdict is broadcast through shared memory. Block-uniform call.
__device__ __forceinline__ bool irgl_ctl_small_quick(int64_t start, int64_t limit_ns, int32_t* status) {
  __shared__ int quick;
  __syncthreads();  // the previous call's readers are done
  if (threadIdx.x == 0) {
    quick = irgl_ctl_clock() - start <= limit_ns;
    if (!quick) *reinterpret_cast<volatile int32_t*>(status + 1) = 1;
  }
  __syncthreads();
  return quick != 0;
}

/// After a grid barrier: whether the small-worklist mode may still be
/// entered (no step hit the time limit; status[1] unset). Every block reads
/// the same value between two grid barriers.
__device__ __forceinline__ bool irgl_ctl_small_allowed(const int32_t* status) {
  return *reinterpret_cast<const volatile int32_t*>(status + 1) == 0;
}

/// At a round boundary of the small-worklist mode, where the loop's kernels
/// take a graph (irgl-outline-iterations `small_worklist_edges`): whether
/// the `size` items of `wl` (block-uniform) are few enough for block 0
/// alone, at most `max_items` of them whose out-degrees in `g` add up to
/// at most `max_edges`. A few hubs among a small frontier (RMAT's second
/// level from a leaf) would have one block walk their edges while the grid
/// waits; the grid shares them instead. Each block sums the degrees of the
/// same items itself (at most `max_items` loads of the row offsets), so
/// every block decides alike; where `size` items of the graph's largest
/// degree fit (a grid's, a chain's), nothing is loaded: the sum's chain of
/// loads cost a grid BFS 23% and a chain's SSSP 23% on an H200. Block-uniform
/// call.
__device__ __forceinline__ bool irgl_ctl_small_fits(irgl::Worklist wl, irgl_index size, irgl_index max_items,
                                                    irgl::Graph g, int64_t max_edges) {
  if (size > max_items) return false;
  if (static_cast<unsigned long long>(size) * static_cast<unsigned long long>(g.max_degree) <=
      static_cast<unsigned long long>(max_edges))
    return true;
  __shared__ unsigned long long edges;
  __syncthreads();  // the previous call's readers are done
  if (threadIdx.x == 0) edges = 0;
  __syncthreads();
  unsigned long long mine = 0;
  for (irgl_index i = threadIdx.x; i < size; i += blockDim.x) {
    const irgl_index n = wl.items[i];
    mine += static_cast<unsigned long long>(irgl_graph_degree(g, n));
  }
  if (mine != 0) atomicAdd_block(&edges, mine);
  __syncthreads();
  return edges <= static_cast<unsigned long long>(max_edges);
}

// Retry drain (irgl-outline-iterations `retry_drain`): once a retry round of
// a kernel that retries its lost Exclusives is a storm (at most one in 16
// of the attempted items won, and at most 256), block 0
// alone attempts the retried items in windows: a window of k items is one
// call of the device body on `irgl_wl_window(retry, head)` with size k and a
// grid of one block, whose Exclusive phases end in __syncthreads
// (irgl_sync_blocks). The next window holds twice the items that won
// (irgl_ctl_drain_window): one window per winner where contenders share an
// element (a hub's neighbourhood: every one of them claims the hub), a
// whole block where they do not, so the losers' wasted attempts stay about
// as many as the winners. The losers of a pass over the retried items go
// back to the front of the retried list (irgl_ctl_drain_move) for the next
// pass, so every block keeps the same worklist handles.

// A drain's team (irgl-outline-iterations `retry_drain_blocks`): blocks
// 0 .. team - 1 of a cooperative launch take a window together, with team
// barriers (a counter and a generation in device memory) between the
// Exclusive's phases. One block alone is bound by its SM's memory requests:
// a window of RMAT's core (about 300 contenders, 25,000 claimed cells, each
// stored, read and raised) took 170 us on one SM.
static __device__ unsigned irgl_team_arrived;
static __device__ unsigned irgl_team_generation;

/// A barrier of blocks 0 .. `blocks` - 1 (all co-resident; every thread of
/// each calls it): the block's threads meet, thread 0 arrives on the
/// counter (the last one resets it and bumps the generation) and waits for
/// the generation to change; fences on both sides order the blocks' memory
/// operations before and after it, as a grid barrier does.
__device__ __forceinline__ void irgl_team_sync(irgl_index blocks) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned* generation = &irgl_team_generation;
    const unsigned seen = *generation;  // before arriving: the last arrival bumps it
    __threadfence();
    if (atomicAdd(&irgl_team_arrived, 1u) == static_cast<unsigned>(blocks) - 1u) {
      *reinterpret_cast<volatile unsigned*>(&irgl_team_arrived) = 0u;
      __threadfence();
      atomicAdd(&irgl_team_generation, 1u);
    } else {
      while (*generation == seen) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

/// The barrier between an Exclusive's phases in a device body that takes
/// its grid: a block barrier where block 0 runs it alone (`blocks` == 1),
/// a team barrier where the first `blocks` blocks of the grid run it (a
/// drain's window), else a grid barrier.
__device__ __forceinline__ void irgl_sync_blocks(irgl_index blocks) {
  if (blocks == 1) {
    __syncthreads();
  } else if (blocks < static_cast<irgl_index>(gridDim.x)) {
    irgl_team_sync(blocks);
  } else {
    irgl_grid_sync();
  }
}

/// The items of `wl` from `head` on, as a worklist to pop from (items i of
/// the result is item head + i of `wl`; never push to it).
__device__ __forceinline__ irgl::Worklist irgl_wl_window(irgl::Worklist wl, irgl_index head) {
  irgl::Worklist view = wl;
  view.items = wl.items + head;
  view.capacity = wl.capacity - head;
  return view;
}

namespace irgl {
/// At most one in kDrainProgress of a storm's attempted items won (a chain
/// of neighbourhoods retries most of a round too, but a third of it or more
/// wins; contenders for one element let one of them win a round) ...
constexpr irgl_index kDrainProgress = 16;
/// ... and at most kDrainWinners (a random graph's round lets one in
/// hundreds win, but thousands of them: the grid is faster there). 256
/// since Exclusives claim their footprints (colour on RMAT-20, one H200:
/// 1.54 s with 64, 1.06 s with 256; RMAT-16/18, stars and hubs alike);
/// `-DIRGL_DRAIN_WINNERS=N` sets it.
#ifndef IRGL_DRAIN_WINNERS
#define IRGL_DRAIN_WINNERS 256
#endif
constexpr irgl_index kDrainWinners = IRGL_DRAIN_WINNERS;

/// Whether a retry round of `attempted` items that retried `retried` is a
/// storm.
__host__ __device__ __forceinline__ bool drain_storm(irgl_index retried, irgl_index attempted) {
  const irgl_index won = attempted - retried;
  return won <= kDrainWinners && kDrainProgress * won <= attempted;
}

/// The next window of a drain after one in which `won` items won: twice
/// the winners, at least 1, at most `cap`.
__host__ __device__ __forceinline__ irgl_index drain_window(irgl_index won, irgl_index cap) {
  const irgl_index next = won > 0 ? 2 * won : 1;
  return next < cap ? next : cap;
}

/// Solo streaks (irgl-outline-iterations `retry_drain_solo`): after a window
/// of k >= 2 items let at most one win, the next `streak` windows hold one
/// item each (a launch's only contender claims nothing and wins), then a
/// window of two probes again; the streak doubles (at most `cap`) while the
/// probes find contention and falls back to 1 once one lets both win.
/// drain_next: the next window's size after a window of `k` items of which
/// `won` won, `left` one-item windows of the streak counted before it.
__host__ __device__ __forceinline__ irgl_index drain_next(irgl_index won, irgl_index k, irgl_index left,
                                                          irgl_index cap) {
  if (k == 1) return left > 1 ? 1 : (cap < 2 ? cap : 2);
  return won <= 1 ? 1 : drain_window(won, cap);
}

/// The one-item windows left of the streak after that window.
__host__ __device__ __forceinline__ irgl_index drain_left(irgl_index won, irgl_index k, irgl_index streak,
                                                          irgl_index left) {
  if (k == 1) return left > 1 ? left - 1 : 0;
  return won <= 1 ? streak : 0;
}

/// The next streak's length after that window.
__host__ __device__ __forceinline__ irgl_index drain_streak(irgl_index won, irgl_index k, irgl_index streak,
                                                            irgl_index cap) {
  if (k == 1) return streak;
  if (won >= 2) return 1;
  return 2 * streak < cap ? 2 * streak : cap;
}
}  // namespace irgl

/// irgl::drain_next with a block's threads as the cap.
__device__ __forceinline__ irgl_index irgl_ctl_drain_next(irgl_index won, irgl_index k, irgl_index left) {
  return irgl::drain_next(won, k, left, static_cast<irgl_index>(blockDim.x));
}

/// irgl::drain_left.
__device__ __forceinline__ irgl_index irgl_ctl_drain_left(irgl_index won, irgl_index k, irgl_index streak,
                                                          irgl_index left) {
  return irgl::drain_left(won, k, streak, left);
}

/// irgl::drain_streak with a block's threads as the cap.
__device__ __forceinline__ irgl_index irgl_ctl_drain_streak(irgl_index won, irgl_index k, irgl_index streak) {
  return irgl::drain_streak(won, k, streak, static_cast<irgl_index>(blockDim.x));
}

/// Whether the retry round that just ended is a storm that block 0 drains
/// (irgl::drain_storm). Grid-uniform.
__device__ __forceinline__ bool irgl_ctl_drain_storm(irgl_index retried, irgl_index attempted) {
  return irgl::drain_storm(retried, attempted);
}

/// The size of the next window of a drain (irgl::drain_window, at most a
/// block's threads).
__device__ __forceinline__ irgl_index irgl_ctl_drain_window(irgl_index won) {
  return irgl::drain_window(won, static_cast<irgl_index>(blockDim.x));
}

/// Block 0 between two passes of a drain: the `m` losers of the pass that
/// ended (the items of `losers`) become the items of `retried` (whose pass
/// is over), and `losers` is emptied. Block-uniform call; both are ready
/// after it.
__device__ __forceinline__ void irgl_ctl_drain_move(irgl::Worklist retried, irgl::Worklist losers, irgl_index m) {
  __syncthreads();  // every pop of the pass and the size read are done
  for (irgl_index i = threadIdx.x; i < m; i += blockDim.x) retried.items[i] = losers.items[i];
  if (threadIdx.x == 0) {
    *reinterpret_cast<volatile irgl_index*>(retried.tail) = m;
    *reinterpret_cast<volatile irgl_index*>(losers.tail) = 0;
  }
  __syncthreads();
}

// Drains by a team of blocks (`retry_drain_blocks` > 1): the team takes a
// window while windows hold at least IRGL_DRAIN_TEAM_ITEMS items; from the
// first window that holds fewer, block 0 goes on alone (the other blocks
// leave for the grid barrier after the drain). 1 (the default): the team
// takes every window. A team window costs four team barriers (a few us)
// where block 0 alone pays block barriers, and the team's SMs share its
// claims' memory requests; colour on an H200: RMAT-18 106 -> 37 ms and
// RMAT-20 424 -> 97 ms with the team throughout, 50 and 205 ms with 16
// items, 81 and 256 ms with 64 (RMAT's windows shrink below 64 long before
// the drain ends and grow again), while a star's 100 windows of 1,024
// leaves of one edge each lose 0.7 ms to the barriers whatever the rule.
#ifndef IRGL_DRAIN_TEAM_ITEMS
#define IRGL_DRAIN_TEAM_ITEMS 1
#endif

/// The team of a drain's next window of `want` items: `team` while windows
/// hold at least IRGL_DRAIN_TEAM_ITEMS items, else 1. Block-uniform.
__device__ __forceinline__ irgl_index irgl_ctl_drain_team(irgl_index team, irgl_index want) {
  return want >= IRGL_DRAIN_TEAM_ITEMS ? team : 1;
}

/// The team of a drain's first window of `want` items: `blocks` blocks, at
/// most the grid's (irgl_ctl_drain_team). Grid-uniform.
__device__ __forceinline__ irgl_index irgl_ctl_drain_team_start(irgl_index blocks, irgl_index want) {
  const irgl_index grid = static_cast<irgl_index>(gridDim.x);
  const irgl_index team = irgl_ctl_drain_team(blocks < grid ? blocks : grid, want);
  return team;
}

/// Whether this block is in the drain's team of `team` blocks.
__device__ __forceinline__ bool irgl_ctl_drain_member(irgl_index team) {
  return static_cast<irgl_index>(blockIdx.x) < team;
}

/// irgl_ctl_size_check of the losers after a window taken by `team`
/// blocks: a team barrier first (every push of the window is in). The
/// team's blocks read the same size: the next window's pushes come after
/// its body's barriers. Team-uniform call.
__device__ __forceinline__ irgl_index irgl_ctl_team_size_check(irgl::Worklist wl, int32_t* status,
                                                              irgl_index team) {
  if (team > 1) irgl_sync_blocks(team);
  const irgl_index size = irgl_ctl_size_check(wl, status);
  return size;
}

/// irgl_ctl_drain_losers after a window taken by `team` blocks.
/// Team-uniform call.
__device__ __forceinline__ irgl_index irgl_ctl_team_drain_losers(irgl::Worklist wl, int32_t* status,
                                                                irgl_index k, irgl_index lost, irgl_index team) {
  if (team > 1) irgl_sync_blocks(team);
  const irgl_index now = irgl_ctl_drain_losers(wl, status, k, lost);
  return now;
}

/// irgl_ctl_drain_move by a team of `team` blocks (the copy strided over
/// them); a block outside the team (one that left it) returns at once.
__device__ __forceinline__ void irgl_ctl_team_drain_move(irgl::Worklist retried, irgl::Worklist losers,
                                                        irgl_index m, irgl_index team) {
  if (team <= 1) {
    if (blockIdx.x == 0) irgl_ctl_drain_move(retried, losers, m);
    return;
  }
  if (!irgl_ctl_drain_member(team)) return;
  irgl_sync_blocks(team);  // every pop of the pass and the size read are done
  const irgl_index threads = team * static_cast<irgl_index>(blockDim.x);
  for (irgl_index i = static_cast<irgl_index>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += threads)
    retried.items[i] = losers.items[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *reinterpret_cast<volatile irgl_index*>(retried.tail) = m;
    *reinterpret_cast<volatile irgl_index*>(losers.tail) = 0;
  }
  irgl_sync_blocks(team);
}

#if IRGL_HOST_CODE  // host only: a program's device pass skips it
/// Creates an empty worklist of `capacity` items outside any pipe (the
/// control kernel's spare). Free with irgl_wl_destroy. Throws irgl::Error.
IRGL_HOST_API irgl::Worklist irgl_wl_create(irgl_index capacity);
/// Frees a worklist from irgl_wl_create (never throws).
IRGL_HOST_API void irgl_wl_destroy(irgl::Worklist wl);
/// Creates a triple-buffered Any (any=true) or All cell for a control
/// kernel: three flags, all reset. Free with irgl_cell_destroy.
IRGL_HOST_API irgl::Cell irgl_cell_create_slots(bool any);
/// The one-word status of a control kernel (0: no worklist overflowed): the
/// host thread's word of page-locked memory mapped into the device, so that
/// irgl_outline_finish reads it after the synchronization without a copy;
/// device scratch where mapped memory cannot be had. Pass it to
/// irgl_outline_finish, then release it with irgl_outline_status_release.
/// Throws irgl::Error.
IRGL_HOST_API int32_t* irgl_outline_status();
/// Releases a status from irgl_outline_status (never throws).
IRGL_HOST_API void irgl_outline_status_release(int32_t* status);
/// After a control kernel: synchronizes (surfacing its errors) and throws the
/// worklist overflow error if the control kernel recorded one in status[0].
IRGL_HOST_API void irgl_outline_finish(const int32_t* status);

#if IRGL_HOST_IMPL
/// Creates an empty worklist of `capacity` items outside any pipe (the
/// control kernel's spare). Free with irgl_wl_destroy. Throws irgl::Error.
IRGL_HOST_API irgl::Worklist irgl_wl_create(irgl_index capacity) {
  if (capacity < 0)
    throw irgl::Error("irgl_wl_create: negative capacity " + std::to_string(static_cast<long long>(capacity)));
  irgl::Worklist wl;
  wl.capacity = capacity;
  wl.items = irgl::scratch_alloc<int32_t>(capacity > 0 ? capacity : 1);
  char* meta = nullptr;
  try {
    meta = irgl::scratch_alloc<char>(static_cast<irgl_index>(irgl::Pipe::kMetaBytes));
  } catch (...) {
    irgl::scratch_free(wl.items);
    throw;
  }
  wl.tail = reinterpret_cast<irgl_index*>(meta);
  wl.overflow = reinterpret_cast<int*>(meta + 8);
  return wl;
}

/// Frees a worklist from irgl_wl_create (never throws).
IRGL_HOST_API void irgl_wl_destroy(irgl::Worklist wl) {
  irgl::scratch_free(wl.items);
  irgl::scratch_free(wl.tail);
}

/// Creates a triple-buffered Any (any=true) or All cell for a control
/// kernel: three flags, all reset. Free with irgl_cell_destroy.
IRGL_HOST_API irgl::Cell irgl_cell_create_slots(bool any) {
  irgl::Cell c;
  c.any = any;
  c.flag = irgl::scratch_alloc<int>(3);  // cleared: an Any cell's reset state
  if (!any) {
    try {
      irgl::detail::fill32_async(c.flag, 1, 3);
    } catch (...) {
      irgl::scratch_free(c.flag);
      throw;
    }
  }
  return c;
}

namespace irgl {
namespace detail {
/// A host thread's mapped status word (irgl_outline_status).
struct MappedStatus {
  volatile int32_t* host = nullptr;
  int32_t* device = nullptr;
  bool broken = false;
  ~MappedStatus() {
    if (host) (void)cudaFreeHost(const_cast<int32_t*>(host));
  }
};
inline MappedStatus& mapped_status() {
  thread_local MappedStatus status;
  if (!status.host && !status.broken) {
    void* p = nullptr;
    void* d = nullptr;
    if (cudaHostAlloc(&p, sizeof(int32_t), cudaHostAllocMapped | cudaHostAllocPortable) == cudaSuccess &&
        cudaHostGetDevicePointer(&d, p, 0) == cudaSuccess) {
      status.host = static_cast<volatile int32_t*>(p);
      status.device = static_cast<int32_t*>(d);
    } else {
      if (p) (void)cudaFreeHost(p);
      status.broken = true;
    }
    (void)cudaGetLastError();
  }
  return status;
}
}  // namespace detail
}  // namespace irgl

IRGL_HOST_API int32_t* irgl_outline_status() {
  irgl::detail::MappedStatus& mapped = irgl::detail::mapped_status();
  if (!IRGL_PINNED_READS || mapped.broken) return irgl::scratch_alloc<int32_t>(1);
  *mapped.host = 0;  // the last control kernel on this thread is done (its finish synchronized)
  return mapped.device;
}

IRGL_HOST_API void irgl_outline_status_release(int32_t* status) {
  if (status != irgl::detail::mapped_status().device) irgl::scratch_free(status);
}

/// After a control kernel: synchronizes (surfacing its errors) and throws the
/// worklist overflow error if the control kernel recorded one in status[0].
IRGL_HOST_API void irgl_outline_finish(const int32_t* status) {
  int32_t flag = 0;
  irgl::detail::MappedStatus& mapped = irgl::detail::mapped_status();
  if (mapped.device && status == mapped.device) {
    IRGL_DIST_SETTLE();  // a deferred NCCL step first, with its bounded wait
    IRGL_CHECK(cudaStreamSynchronize(0));
    flag = *mapped.host;
  } else {
    irgl::detail::read_device(&flag, status, sizeof(flag));
  }
#ifdef IRGL_PROFILE_CONTROL
  unsigned long long prof[8] = {};
  IRGL_CHECK(cudaMemcpyFromSymbol(prof, irgl_profile, sizeof(prof)));
  if (prof[1] > 0 && prof[4 + (prof[1] - 1) % 2] != ~0ull) prof[3] += prof[4 + (prof[1] - 1) % 2];
  const unsigned long long reset[8] = {0, 0, 0, 0, ~0ull, ~0ull, 0, 0};
  IRGL_CHECK(cudaMemcpyToSymbol(irgl_profile, reset, sizeof(reset)));
  static const std::vector<unsigned long long> zeros(IRGL_PROFILE_BLOCKS, 0);
  IRGL_CHECK(cudaMemcpyToSymbol(irgl_profile_barriers, zeros.data(), sizeof(unsigned long long) * IRGL_PROFILE_BLOCKS));
  if (prof[1] > 0 && prof[2] > 0)
    std::fprintf(stderr,
                 "irgl profile: %llu grid barriers of %llu blocks, %.0f ns per barrier for the last block "
                 "to arrive, %.0f ns per barrier and block (barrier and wait), %.3f ms in all per block, "
                 "%llu small-worklist steps\n",
                 prof[1], prof[2], static_cast<double>(prof[3]) / prof[1],
                 static_cast<double>(prof[0]) / (prof[1] * prof[2]), static_cast<double>(prof[0]) / prof[2] / 1e6,
                 prof[2] > 1 ? prof[6] - prof[7] : 0ull);
#endif
  if (flag != 0)
    throw irgl::Error("worklist overflow in an outlined iteration: a worklist received more pushes than its "
                      "capacity in one invocation (pushes past the capacity were dropped); increase the "
                      "worklist size (wlinit size / irgl_pipe_create capacity)");
}

#endif  // IRGL_HOST_IMPL

// The element accesses below are defined (IRGL_HOST_IMPL) or declared.
#if IRGL_HOST_IMPL
#define IRGL_HOST_BODY(...) __VA_ARGS__
#else
#define IRGL_HOST_BODY(...) ;
#endif

/// Reads p[0] from device memory (a control kernel's carried result).
#define IRGL_DEVICE_READ(SUFFIX, T)                    \
  IRGL_HOST_API T irgl_device_read_##SUFFIX(const T* p) \
  IRGL_HOST_BODY({                                     \
    T v{};                                             \
    irgl::detail::read_device(&v, p, sizeof(T));       \
    return v;                                          \
  })
IRGL_DEVICE_READ(i1, bool)
IRGL_DEVICE_READ(i8, int8_t)
IRGL_DEVICE_READ(i16, int16_t)
IRGL_DEVICE_READ(i32, int32_t)
IRGL_DEVICE_READ(i64, int64_t)
IRGL_DEVICE_READ(index, irgl_index)
IRGL_DEVICE_READ(f32, float)
IRGL_DEVICE_READ(f64, double)
#undef IRGL_DEVICE_READ

// Host code's element accesses of device arrays (convert-irgl-host-memory:
// a `memref.load`/`memref.store` in a host kernel). Each copies one element
// with cudaMemcpy on the default stream, so it waits for the kernels launched
// before it and surfaces their errors; throws irgl::Error.

/// Reads p[i] from device memory.
#define IRGL_DEVICE_LOAD(SUFFIX, T)                                  \
  IRGL_HOST_API T irgl_device_load_##SUFFIX(const T* p, irgl_index i) \
  IRGL_HOST_BODY({                                                   \
    T v{};                                                           \
    irgl::detail::read_device(&v, p + i, sizeof(T));                 \
    return v;                                                        \
  })
/// Writes v to p[i] in device memory.
#define IRGL_DEVICE_STORE(SUFFIX, T)                                      \
  IRGL_HOST_API void irgl_device_store_##SUFFIX(T* p, irgl_index i, T v)   \
  IRGL_HOST_BODY({                                                        \
    IRGL_CHECK(cudaMemcpy(p + i, &v, sizeof(T), cudaMemcpyHostToDevice)); \
  })
IRGL_DEVICE_LOAD(i1, bool)
IRGL_DEVICE_LOAD(i8, int8_t)
IRGL_DEVICE_LOAD(i16, int16_t)
IRGL_DEVICE_LOAD(i32, int32_t)
IRGL_DEVICE_LOAD(i64, int64_t)
IRGL_DEVICE_LOAD(index, irgl_index)
IRGL_DEVICE_LOAD(f32, float)
IRGL_DEVICE_LOAD(f64, double)
IRGL_DEVICE_STORE(i1, bool)
IRGL_DEVICE_STORE(i8, int8_t)
IRGL_DEVICE_STORE(i16, int16_t)
IRGL_DEVICE_STORE(i32, int32_t)
IRGL_DEVICE_STORE(i64, int64_t)
IRGL_DEVICE_STORE(index, irgl_index)
IRGL_DEVICE_STORE(f32, float)
IRGL_DEVICE_STORE(f64, double)
#undef IRGL_DEVICE_STORE
#undef IRGL_DEVICE_LOAD
#undef IRGL_HOST_BODY
#endif  // IRGL_HOST_CODE

// ---------------------------------------------------------------------------
// Several GPUs (IRGL_DISTRIBUTED): the irgl_dist ops over NCCL
// ---------------------------------------------------------------------------
//
// Compiled only when IRGL_DISTRIBUTED is defined (the cuda target defines it
// for a module lowered with lower-irgl{distribute=oec|cvc}), so single-GPU
// builds need no NCCL. One process per GPU; the process's rank state below
// is set up by the runner (irgl_runner/distributed.py) through the extern "C"
// functions irgl_dist_get_unique_id / irgl_dist_init / irgl_dist_setup, then
// the lowered host code calls the irgl_dist_* functions, which implement the
// contract of irgl_dialect/distributed.py:
//
//   sync_nodes      reduce: every mirror listed for a peer is gathered into a
//                   send buffer (add: its change since the agreed copy; set:
//                   its value and a changed flag), ncclSend/ncclRecv grouped
//                   per peer, combined into the masters one peer at a time
//                   (no atomics); broadcast: every listed master to its
//                   mirrors (assign). All listed entries move, not only the
//                   updated ones (min/max/add are unchanged by unchanged
//                   entries, set only takes flagged ones).
//   allreduce_cells min/max: ncclAllReduce in place; add/set: ncclAllGather of
//                   the copies, combined against the agreed copy.
//   allreduce       one value, ncclAllReduce.
//   sync_worklist   `in` as a mark per local node; a changed-flag per listed
//                   mirror sent to its owner (dense flags, not ids), masters
//                   marked; under cvc the marked masters' flags go back to
//                   the mirrors that hold edges; `in` is rebuilt from the
//                   marks (each node once, in no particular order).
//
// The agreed copy of an array synchronized with add or set is a device
// snapshot the runtime keeps by pointer: taken by irgl_dist_track (the
// runner tracks every array argument before a call, the lowered code every
// array it allocates) and after every synchronization.
//
// NCCL runs on a stream of its own; the host waits for it by polling
// (cudaStreamQuery, ncclCommGetAsyncError) for at most the timeout given to
// irgl_dist_init: a rank that died or never arrived makes every other rank
// abort its communicator and fail with an error naming the collective,
// instead of hanging. The communicator is non-blocking (config.blocking = 0)
// so that its creation is bounded the same way.
#ifdef IRGL_DISTRIBUTED
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>

/// Local id -> global id of the rank's nodes (device; irgl_dist_global_id).
__device__ int64_t* irgl_dist_l2g_device;
/// The rank's master count (device; irgl_dist_num_masters).
__device__ irgl_index irgl_dist_num_masters_device;
/// One byte a mirror (local id - masters): pushed without a worklist slot
/// (device; irgl_dist_push_mirror), taken by the next worklist exchange.
__device__ unsigned char* irgl_dist_pushed_device;

namespace irgl {
namespace dist {

/// Lists whose entries take at least this many bytes (4 each) move only
/// their changed entries (update tracking); smaller ones move whole, which
/// costs less than the host round trip that exchanges the counts.
constexpr int64_t kTrackBytes = int64_t(8) << 20;

/// Reduction codes (the irgl_dist.reduction enum, in this order).
enum Red : int { kMin = 0, kMax = 1, kMinU = 2, kMaxU = 3, kAdd = 4, kSet = 5, kOr = 6, kAnd = 7 };

/// A device snapshot: the agreed copy of a tracked array.
struct Snapshot {
  void* data = nullptr;
  size_t bytes = 0;
  bool agreed = false;  // equal on every replica (update tracking may use it)
};

/// The process's rank: communicator, partition lists, scratch buffers.
struct State {
  bool ready = false;     // irgl_dist_init done
  bool partition = false; // irgl_dist_setup done
  int rank = 0, world = 1;
  double timeout_s = 300.0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  bool cvc = false;
  int64_t num_local = 0, num_masters = 0, master_offset = 0;
  // folded master blocks (irgl_dist_fold): the blocks' bounds in global ids
  // and where each starts in partition ids, in which master_offset counts
  std::vector<int64_t> fold_bounds, fold_starts;
  int64_t* l2g = nullptr;                     // device, num_local
  irgl_index* mirrors = nullptr;              // device: mirrors_owned_by, concatenated by peer
  irgl_index* masters = nullptr;              // device: masters_mirrored_on, concatenated by peer
  unsigned char* has_edges = nullptr;         // device, num_local
  std::vector<int64_t> mir_off, mir_cnt;      // per peer, into `mirrors`
  std::vector<int64_t> mas_off, mas_cnt;      // per peer, into `masters`
  int64_t total_mirrors = 0, total_masters = 0;
  char* send = nullptr;                       // 8 * max(total) bytes
  char* recv = nullptr;
  unsigned char* send_flags = nullptr;        // max(total) bytes
  unsigned char* pushed = nullptr;            // total_mirrors bytes: irgl_dist_push_mirror's flags
  unsigned char* recv_flags = nullptr;
  unsigned char* mark = nullptr;              // num_local
  char* value = nullptr;                      // 16 bytes: one all-reduced value
  // update tracking: entries that changed go as (position, value) pairs
  int32_t* send_pos = nullptr;                // max(total) positions
  int32_t* recv_pos = nullptr;
  char* send_dense = nullptr;                 // 8 * max(total) bytes: whole segments
  int32_t* late_send_pos = nullptr;           // late broadcasts (late_buffers): masters' positions
  int32_t* late_recv_pos = nullptr;           // ... the mirrors' positions
  char* late_recv = nullptr;                  // ... the mirrors' values (8 * max(total) bytes)
  int64_t* mir_off_dev = nullptr;             // device, world + 1: segment starts, then the total
  int64_t* mas_off_dev = nullptr;
  int64_t* row = nullptr;                     // device, world: this rank's count per peer
  int64_t* matrix = nullptr;                  // device, world * world: every rank's row
  int64_t* matrix_host = nullptr;             // pinned copy of matrix
  bool track_updates = true;                  // only changed entries move (see irgl_dist_setup)
  cudaEvent_t ready_event = nullptr;          // the default stream's work before a step
  cudaEvent_t start_event = nullptr;          // the rank's stream: a step's communication starts
  cudaEvent_t end_event = nullptr;            // ... and is done (device time of communication)
  cudaEvent_t done_event = nullptr;           // a deferred step's end, awaited by the default stream
  const char* pending = nullptr;              // a deferred step not yet awaited on the host (its name)
  // sync_worklist's global count of `in`, for the termination test after it
  const void* total_pipe = nullptr;           // the pipe, while its `in` is unchanged
  const void* total_items = nullptr;
  int64_t total_local = -1, total = 0;
  int64_t* counts_host = nullptr;             // pinned, 2: the local and the global count
  // hot nodes (irgl_dist_hot): after a round that activated hot_min_active
  // masters, a reduce-only exchange refreshes every rank's copies of these
  // nodes with one all-gather of their masters' values; the list is `world`
  // groups of hot_count / world entries, group q rank q's masters
  irgl_index* hot = nullptr;                  // device, hot_count: local id or -1 (not local)
  int64_t hot_count = 0, hot_min_active = 0;
  char* hot_buf = nullptr;                    // 8 * hot_count bytes: the all-gathered values
  std::map<const void*, Snapshot> snapshots;
  // communication counters (irgl_dist_stats)
  double bytes_sent = 0, seconds = 0, collectives = 0, termination_tests = 0;
  // IRGL_DIST_PROFILE=1: host seconds and calls per operation, printed by
  // irgl_dist_finalize; =2 also waits for the default stream before each
  // step and counts that wait apart ("before OP": the kernels and deferred
  // steps queued since the last step; it removes their overlap with it);
  // =3 also prints every step as it ends (a trace: rank, step, its wait
  // before, its host time, sync_worklist's local and global counts)
  bool profile = false;
  bool profile_waits = false;
  bool profile_trace = false;
  std::chrono::steady_clock::time_point trace_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point trace_last = trace_start;  // the last traced step's end
  const char* profiled = nullptr;  // the operation being profiled
  double waited = 0;               // its wait before the step (=2), not its own
  std::map<std::string, std::pair<double, double>> host_profile;
  // =3: events on the rank's stream at the phases of a worklist exchange
  // (mark_phase), printed as device times once the step's wait is over
  std::vector<std::pair<const char*, cudaEvent_t>> phases;
  size_t phases_used = 0;
};

inline State& state() {
  static State s;
  return s;
}

/// Milliseconds since the rank's state was made (IRGL_DIST_PROFILE=3's trace).
inline double trace_ms(const State& s) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s.trace_start).count();
}

/// IRGL_DIST_PROFILE=3: records the end of a phase of the step on the
/// rank's stream (print_phases reports the device time between marks).
inline void mark_phase(State& s, const char* name) {
  if (!s.profile_trace) return;
  if (s.phases_used == s.phases.size()) {
    cudaEvent_t e = nullptr;
    IRGL_CHECK(cudaEventCreate(&e));
    s.phases.emplace_back(name, e);
  }
  s.phases[s.phases_used].first = name;
  IRGL_CHECK(cudaEventRecord(s.phases[s.phases_used].second, s.stream));
  s.phases_used += 1;
}

/// Prints the device time of each phase marked since the step began (the
/// rank's stream must have reached the last mark) and starts again.
inline void print_phases(State& s) {
  if (!s.profile_trace) return;
  std::string line;
  for (size_t i = 1; i < s.phases_used; ++i) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, s.phases[i - 1].second, s.phases[i].second) != cudaSuccess) ms = -1;
    line += std::string(" ") + s.phases[i].first + " " + std::to_string(ms);
  }
  if (!line.empty()) std::fprintf(stderr, "irgl-dist trace: rank %d phases (ms):%s\n", s.rank, line.c_str());
  s.phases_used = 0;
}

/// Adds the host time of a scope to the operation's profile entry.
struct Profiled {
  State& s;
  const char* name;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  Profiled(State& state, const char* op) : s(state), name(op) {
    s.profiled = op;
    s.waited = 0;
  }
  Profiled(const Profiled&) = delete;
  Profiled& operator=(const Profiled&) = delete;
  ~Profiled() {
    if (!s.profile) return;
    auto& entry = s.host_profile[name];
    const double own = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - s.waited;
    entry.first += own;
    entry.second += 1;
    if (s.profile_trace) {  // after: since the last step ended (the kernels launched and run between)
      const double after = std::chrono::duration<double, std::milli>(t0 - s.trace_last).count();
      std::fprintf(stderr, "irgl-dist trace: rank %d at %.3f ms: %s: after %.3f ms, before %.3f ms, own %.3f ms\n",
                   s.rank, trace_ms(s), name, after, s.waited * 1e3, own * 1e3);
      s.trace_last = std::chrono::steady_clock::now();
    }
    s.waited = 0;
  }
};

inline std::string where() {
  return "rank " + std::to_string(state().rank) + " of " + std::to_string(state().world) + ": ";
}

inline State& ready_state() {
  State& s = state();
  if (!s.ready || !s.partition)
    throw Error("irgl_dist: this program was distributed (lower-irgl{distribute=...}) and must run "
                "through irgl_runner.distributed (one process per GPU, irgl_dist_init and "
                "irgl_dist_setup first)");
  return s;
}

/// Aborts the communicator after a failure (a dead peer must not hang us).
inline void abort_comm(State& s) {
  if (s.comm != nullptr) {
    ncclCommAbort(s.comm);
    s.comm = nullptr;
  }
  s.ready = false;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Waits (bounded) until a non-blocking NCCL call `r` has taken effect.
inline void nccl_done(State& s, ncclResult_t r, const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  while (r == ncclInProgress) {
    if (seconds_since(t0) > s.timeout_s) {
      abort_comm(s);
      throw Error(where() + what + ": NCCL did not finish within " + std::to_string(s.timeout_s) +
                  " s (IRGL_DIST_TIMEOUT): a rank died, never started or is stuck");
    }
    std::this_thread::yield();
    if (ncclCommGetAsyncError(s.comm, &r) != ncclSuccess) break;
  }
  if (r != ncclSuccess) {
    const std::string message = ncclGetErrorString(r);
    const char* last = s.comm != nullptr ? ncclGetLastError(s.comm) : nullptr;
    abort_comm(s);
    throw Error(where() + what + ": NCCL error: " + message + (last && *last ? std::string(" (") + last + ")" : ""));
  }
}

/// Waits (bounded) for everything queued on the rank's stream; counts the
/// stream's time since the step began (or the previous wait) as time in
/// communication.
inline void wait_stream(State& s, const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  if (s.end_event != nullptr) IRGL_CHECK(cudaEventRecord(s.end_event, s.stream));
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s.stream);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      abort_comm(s);
      IRGL_CHECK(e);
    }
    ncclResult_t async = ncclSuccess;
    if (s.comm != nullptr && ncclCommGetAsyncError(s.comm, &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress)
      nccl_done(s, async, what);
    const double waited = seconds_since(t0);
    if (waited > s.timeout_s) {
      abort_comm(s);
      throw Error(where() + what + ": the collective did not complete within " + std::to_string(s.timeout_s) +
                  " s (IRGL_DIST_TIMEOUT): a rank died, never started or is stuck");
    }
    // spin for the first milliseconds (a round's step takes microseconds),
    // then poll gently
    if (waited < 2e-3) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  s.pending = nullptr;
  if (s.end_event != nullptr) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, s.start_event, s.end_event) == cudaSuccess) s.seconds += ms * 1e-3;
    IRGL_CHECK(cudaEventRecord(s.start_event, s.stream));
  } else {
    s.seconds += seconds_since(t0);
  }
}

/// Starts a step: the rank's stream waits (on the device, not the host)
/// for the default stream's kernels, which wrote what is sent; counters.
inline void begin(State& s) {
  if (s.profile_waits) {  // IRGL_DIST_PROFILE=2: the work queued before the step
    const auto t0 = std::chrono::steady_clock::now();
    IRGL_CHECK(cudaStreamSynchronize(0));
    auto& entry = s.host_profile[std::string("before ") + (s.profiled ? s.profiled : "a step")];
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    entry.first += dt;
    entry.second += 1;
    s.waited += dt;
  }
  if (s.ready_event == nullptr) {
    IRGL_CHECK(cudaEventCreateWithFlags(&s.ready_event, cudaEventDisableTiming));
    IRGL_CHECK(cudaEventCreateWithFlags(&s.done_event, cudaEventDisableTiming));
    IRGL_CHECK(cudaEventCreate(&s.start_event));
    IRGL_CHECK(cudaEventCreate(&s.end_event));
  }
  IRGL_CHECK(cudaEventRecord(s.ready_event, 0));
  IRGL_CHECK(cudaStreamWaitEvent(s.stream, s.ready_event, 0));
  s.phases_used = 0;
  mark_phase(s, "start");  // the kernels before the step are done
  if (s.pending == nullptr) IRGL_CHECK(cudaEventRecord(s.start_event, s.stream));  // else: counted from there
  s.collectives += 1;
  s.total_pipe = nullptr;  // another step: sync_worklist's count is not the last one
}

/// Ends a step without a host wait: the default stream's next work waits,
/// on the device, for the rank's stream. The step is awaited (bounded, its
/// errors raised) by the next step that waits, or by the next host read of
/// device memory (irgl::detail::read_device calls settle), so that a round
/// queues its synchronizations back to back and waits once.
inline void defer(State& s, const char* what) {
  IRGL_CHECK(cudaEventRecord(s.done_event, s.stream));
  IRGL_CHECK(cudaStreamWaitEvent(0, s.done_event, 0));
  s.pending = what;
}

/// Waits (bounded) for a deferred step, if one is pending.
inline void settle(State& s) {
  if (s.pending != nullptr) wait_stream(s, s.pending);
}

inline void group_start(State& s, const char* what) { nccl_done(s, ncclGroupStart(), what); }
inline void group_end(State& s, const char* what) { nccl_done(s, ncclGroupEnd(), what); }

/// Per peer: send `count[q]` elements of `bytes` from send + off[q], receive
/// rcount[q] into recv + roff[q] (grouped; skipped where zero).
inline void exchange(State& s, const void* send, const std::vector<int64_t>& off, const std::vector<int64_t>& count,
                     void* recv, const std::vector<int64_t>& roff, const std::vector<int64_t>& rcount, size_t bytes,
                     const char* what) {
  group_start(s, what);
  for (int q = 0; q < s.world; ++q) {
    if (q == s.rank) continue;
    if (count[q] > 0) {
      nccl_done(s,
                ncclSend(static_cast<const char*>(send) + off[q] * bytes, static_cast<size_t>(count[q]) * bytes,
                         ncclChar, q, s.comm, s.stream),
                what);
      s.bytes_sent += static_cast<double>(count[q]) * bytes;
    }
    if (rcount[q] > 0)
      nccl_done(s,
                ncclRecv(static_cast<char*>(recv) + roff[q] * bytes, static_cast<size_t>(rcount[q]) * bytes, ncclChar,
                         q, s.comm, s.stream),
                what);
  }
  group_end(s, what);
}

inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

#define IRGL_DIST_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(blockDim.x) * gridDim.x)

/// The unsigned counterpart of an integer type (minu/maxu); floats stay.
template <class T, bool = std::is_integral<T>::value>
struct Unsigned {
  typedef typename std::make_unsigned<T>::type type;
};
template <class T>
struct Unsigned<T, false> {
  typedef T type;
};

/// `old` combined with `v` by the reduction (min, max, minu, maxu, add: v is
/// a change, set: v).
template <class T>
__device__ __forceinline__ T combine(int red, T old, T v) {
  typedef typename Unsigned<T>::type U;
  switch (red) {
    case kMin: return v < old ? v : old;
    case kMax: return v > old ? v : old;
    case kMinU: return static_cast<U>(v) < static_cast<U>(old) ? v : old;
    case kMaxU: return static_cast<U>(v) > static_cast<U>(old) ? v : old;
    case kAdd: return old + v;
    default: return v;
  }
}

/// send[i] = a[ids[i]] (add: minus its snapshot; set: flags[i] = changed).
template <class T>
__global__ void gather_kernel(const T* a, const T* snap, const irgl_index* ids, int64_t n, int red, T* send,
                              unsigned char* flags) {
  IRGL_DIST_GRID_LOOP(i, n) {
    const irgl_index m = ids[i];
    const T v = a[m];
    if (red == kAdd) {
      send[i] = v - snap[m];
    } else {
      send[i] = v;
      if (red == kSet) flags[i] = !(v == snap[m]);
    }
  }
}

/// a[ids[i]] = combine(a[ids[i]], recv[i]) (set: where flagged).
template <class T>
__global__ void reduce_kernel(T* a, const irgl_index* ids, int64_t n, int red, const T* recv,
                              const unsigned char* flags) {
  IRGL_DIST_GRID_LOOP(i, n) {
    if (red == kSet && !flags[i]) continue;
    const irgl_index m = ids[i];
    a[m] = combine<T>(red, a[m], recv[i]);
  }
}

/// a[ids[i]] = recv[i].
template <class T>
__global__ void assign_kernel(T* a, const irgl_index* ids, int64_t n, const T* recv) {
  IRGL_DIST_GRID_LOOP(i, n) { a[ids[i]] = recv[i]; }
}

// -- update tracking: only changed entries move -----------------------------
//
// A list (mirrors or masters, concatenated by peer) is compacted per peer:
// the entries whose value differs from the agreed copy become (position in
// the peer's segment, value or change) pairs, counted per peer in `row`.
// The ranks all-gather their rows (one bounded host wait) so that every
// send has its matching receive; a segment where most entries changed goes
// whole instead (the same choice on both sides: `goes_whole`).

/// The peer whose segment holds entry i (off: world + 1 segment starts).
__device__ __forceinline__ int peer_of(const int64_t* off, int world, int64_t i) {
  int q = 0;
  while (q + 1 < world && i >= off[q + 1]) ++q;
  return q;
}

/// This thread's slot among peer q's entries (warp-aggregated atomics).
__device__ __forceinline__ int64_t claim_slot(int64_t* row, int q) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, q);
  const int leader = __ffs(peers) - 1;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  unsigned long long base = 0;
  if (lane == leader)
    base = atomicAdd(reinterpret_cast<unsigned long long*>(row + q), static_cast<unsigned long long>(__popc(peers)));
  base = __shfl_sync(peers, base, leader);
  return static_cast<int64_t>(base) + __popc(peers & ((1u << lane) - 1u));
}

/// Peers whose slots a block claims together (block_claim); more ranks
/// claim per warp.
constexpr int kBlockClaimPeers = 64;

/// The block's slots of one tile (an entry a thread, every thread of the
/// block calling): q is the thread's peer, or -1 for none; returns its slot
/// among peer q's entries (-1 for none). One atomic on `row` per block and
/// peer instead of one per warp: a round's compaction of millions of
/// changed entries otherwise queues on the world's few counters.
__device__ __forceinline__ int64_t block_claim(int64_t* row, int q, int world) {
  if (world > kBlockClaimPeers) {
    int64_t slot = -1;
    if (q >= 0) slot = claim_slot(row, q);
    return slot;
  }
  if (!__syncthreads_or(q >= 0)) return -1;  // most tiles of a small round: nothing changed
  __shared__ unsigned counts[kBlockClaimPeers];
  __shared__ unsigned long long bases[kBlockClaimPeers];
  for (int t = static_cast<int>(threadIdx.x); t < world; t += static_cast<int>(blockDim.x)) counts[t] = 0;
  __syncthreads();
  unsigned local = 0;
  if (q >= 0) {  // one shared atomic per warp and peer
    const unsigned peers = __match_any_sync(__activemask(), q);
    const int leader = __ffs(peers) - 1;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    if (lane == leader) local = atomicAdd(&counts[q], static_cast<unsigned>(__popc(peers)));
    local = __shfl_sync(peers, local, leader) + __popc(peers & ((1u << lane) - 1u));
  }
  __syncthreads();
  for (int t = static_cast<int>(threadIdx.x); t < world; t += static_cast<int>(blockDim.x))
    if (counts[t] > 0) bases[t] = atomicAdd(reinterpret_cast<unsigned long long*>(row + t), static_cast<unsigned long long>(counts[t]));
  __syncthreads();
  const int64_t slot = q >= 0 ? static_cast<int64_t>(bases[q]) + local : -1;
  __syncthreads();  // the next tile's counts
  return slot;
}

/// A grid-stride loop whose every iteration the whole block runs (tiles of
/// blockDim entries; i may be past n in the last one): for block_claim.
#define IRGL_DIST_TILE_LOOP(i, n)                                                                      \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i - threadIdx.x < (n);          \
       i += int64_t(blockDim.x) * gridDim.x)

/// The entries i < n of a per-peer list whose a[ids[i]] differs from the
/// agreed copy, compacted per peer: pos = i - off[q], val = the value (or,
/// `change`, the value minus the agreed one).
template <class T>
__global__ void compact_changed_kernel(const T* a, const T* snap, const irgl_index* ids, int64_t n,
                                       const int64_t* off, int world, bool change, int64_t* row, int32_t* pos,
                                       T* val) {
  IRGL_DIST_TILE_LOOP(i, n) {
    int q = -1;
    T v{}, old{};
    if (i < n) {
      const irgl_index m = ids[i];
      v = a[m];
      old = snap[m];
      if (!(v == old)) q = peer_of(off, world, i);
    }
    const int64_t slot = block_claim(row, q, world);
    if (q >= 0) {
      const int64_t at = off[q] + slot;
      pos[at] = static_cast<int32_t>(i - off[q]);
      val[at] = change ? static_cast<T>(v - old) : v;
    }
  }
}

/// a[ids[pos[i]]] = combine(a[...], val[i]) for i < n (one peer's pairs).
template <class T>
__global__ void apply_pairs_kernel(T* a, const irgl_index* ids, const int32_t* pos, const T* val, int64_t n,
                                   int red) {
  IRGL_DIST_GRID_LOOP(i, n) {
    const irgl_index m = ids[pos[i]];
    a[m] = combine<T>(red, a[m], val[i]);
  }
}

/// The identity of reduction `red` (min, max, minu, maxu): what the hot
/// nodes' gather writes for a hole in the list (host code: the kernels take
/// it as an argument).
template <class T>
inline T identity_of(int red) {
  typedef typename Unsigned<T>::type U;
  const bool inf = std::numeric_limits<T>::has_infinity;
  switch (red) {
    case kMin: return inf ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    case kMax: return inf ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    case kMinU: return static_cast<T>(std::numeric_limits<U>::max());
    default: return static_cast<T>(0);  // kMaxU
  }
}

/// buf[i] = a[hot[i]], or `identity` (the reduction's) where hot[i] is not local.
template <class T>
__global__ void hot_gather_kernel(const T* a, const irgl_index* hot, int64_t n, T identity, T* buf) {
  IRGL_DIST_GRID_LOOP(i, n) {
    const irgl_index m = hot[i];
    buf[i] = m >= 0 ? a[m] : identity;
  }
}

/// The mirrors among the hot nodes take the all-gathered buf with `red`, and
/// so does the rank's last copy of them (snap, if any): what their masters
/// hold, which a later exchange need not send again.
template <class T>
__global__ void hot_scatter_kernel(T* a, T* snap, const irgl_index* hot, int64_t n, int64_t masters, const T* buf,
                                   int red) {
  IRGL_DIST_GRID_LOOP(i, n) {
    const irgl_index m = hot[i];
    if (m < masters) continue;  // not local, or a master (which holds buf[i])
    const T v = combine<T>(red, a[m], buf[i]);
    a[m] = v;
    if (snap != nullptr) snap[m] = v;
  }
}

/// The flagged entries i < n of a per-peer list, as positions per peer.
__global__ void compact_flags_kernel(const unsigned char* flags, int64_t n, const int64_t* off, int world,
                                     int64_t* row, int32_t* pos) {
  IRGL_DIST_TILE_LOOP(i, n) {
    const int q = i < n && flags[i] ? peer_of(off, world, i) : -1;
    const int64_t slot = block_claim(row, q, world);
    if (q >= 0) pos[off[q] + slot] = static_cast<int32_t>(i - off[q]);
  }
}

/// flags[pos[i]] = 1 for i < n.
__global__ void scatter_flags_kernel(const int32_t* pos, int64_t n, unsigned char* flags) {
  IRGL_DIST_GRID_LOOP(i, n) { flags[pos[i]] = 1; }
}

/// sync_worklist reduce: the mirrors i < n (local id first + i) whose value
/// differs from the rank's last copy, compacted per peer as (position in the
/// peer's segment, with bit 31 set where flags[i]: the mirror was pushed;
/// value); the last copy takes the value (only mirrors are compared, so no
/// copy of the whole array follows).
template <class T>
__global__ void compact_pushed_kernel(const T* a, T* snap, int64_t first, int64_t n, const int64_t* off, int world,
                                      const unsigned char* flags, int64_t* row, int32_t* pos, T* val) {
  IRGL_DIST_TILE_LOOP(i, n) {
    int q = -1;
    T v{};
    if (i < n) {
      const int64_t m = first + i;  // the mirrors: the local ids after the masters, in order
      v = a[m];
      if (!(v == snap[m])) {
        snap[m] = v;
        q = peer_of(off, world, i);
      }
    }
    const int64_t slot = block_claim(row, q, world);
    if (q >= 0) {
      const int64_t at = off[q] + slot;
      pos[at] = static_cast<int32_t>(static_cast<uint32_t>(i - off[q]) | (flags[i] ? 0x80000000u : 0u));
      val[at] = v;
    }
  }
}

/// sync_worklist reduce, one peer's entries i < n into the masters ids[...]:
/// the master takes val[i] where it improves it (red) and is marked where
/// that mirror was pushed. Pairs: pos[i] (bit 31: pushed); else entry i of
/// the peer's list with flags[i].
template <class T>
__global__ void apply_pushed_kernel(T* a, const irgl_index* ids, const int32_t* pos, const T* val, int64_t n, int red,
                                    const unsigned char* flags, unsigned char* mark) {
  IRGL_DIST_GRID_LOOP(i, n) {
    const uint32_t p = pos != nullptr ? static_cast<uint32_t>(pos[i]) : static_cast<uint32_t>(i);
    const bool pushed = pos != nullptr ? (p & 0x80000000u) != 0 : flags[i] != 0;
    const irgl_index m = ids[p & 0x7fffffffu];
    const T old = a[m];
    const T v = combine<T>(red, old, val[i]);
    if (!(v == old)) {
      a[m] = v;
      if (pushed) mark[m] = 1;
    }
  }
}

/// Every rank's count per peer (s.row, zeroed before the compaction) into
/// s.matrix_host: matrix_host[r * world + q] is what r sends q (`width`
/// lists a rank: matrix_host[(r * width + k) * world + q] for list k).
inline void share_counts(State& s, const char* what, int width = 1) {
  const size_t n = static_cast<size_t>(width) * s.world;
  mark_phase(s, "compact");
  nccl_done(s, ncclAllGather(s.row, s.matrix, n, ncclInt64, s.comm, s.stream), what);
  s.bytes_sent += 8.0 * n * (s.world - 1);
  IRGL_CHECK(cudaMemcpyAsync(s.matrix_host, s.matrix, sizeof(int64_t) * n * s.world, cudaMemcpyDeviceToHost,
                             s.stream));
  mark_phase(s, "counts");
  wait_stream(s, what);
}

/// The buffers of late broadcasts (sync_worklist reduce ... late_broadcast),
/// made at the first one.
inline void late_buffers(State& s) {
  if (s.late_recv != nullptr) return;
  const int64_t most = std::max<int64_t>(std::max(s.total_mirrors, s.total_masters), 1);
  s.late_send_pos = scratch_alloc<int32_t>(static_cast<irgl_index>(most));
  s.late_recv_pos = scratch_alloc<int32_t>(static_cast<irgl_index>(most));
  s.late_recv = scratch_alloc<char>(static_cast<irgl_index>(8 * most));
}

/// Sends peer q n (position, value) pairs (inside the caller's group).
template <class T>
inline void send_pairs(State& s, const int32_t* pos, const T* val, int64_t n, int q, const char* what) {
  nccl_done(s, ncclSend(pos, static_cast<size_t>(n) * 4, ncclChar, q, s.comm, s.stream), what);
  nccl_done(s, ncclSend(val, static_cast<size_t>(n) * sizeof(T), ncclChar, q, s.comm, s.stream), what);
  s.bytes_sent += static_cast<double>(n) * (4 + sizeof(T));
}

/// Receives n (position, value) pairs from peer q (inside the caller's group).
template <class T>
inline void recv_pairs(State& s, int32_t* pos, T* val, int64_t n, int q, const char* what) {
  nccl_done(s, ncclRecv(pos, static_cast<size_t>(n) * 4, ncclChar, q, s.comm, s.stream), what);
  nccl_done(s, ncclRecv(val, static_cast<size_t>(n) * sizeof(T), ncclChar, q, s.comm, s.stream), what);
}

/// What rank `from` sends rank `to` (after share_counts).
inline int64_t sent(const State& s, int from, int to) { return s.matrix_host[static_cast<int64_t>(from) * s.world + to]; }

/// Whether `count` changed entries of a segment of `length` go as the whole
/// segment (`whole` bytes each) rather than as pairs (`pair` bytes each).
inline bool goes_whole(int64_t count, int64_t length, size_t pair, size_t whole) {
  return static_cast<double>(count) * pair >= static_cast<double>(length) * whole;
}

/// Sends each peer q the flagged entries of its segment of `flags` (off,
/// cnt) and receives the peers' into `out` (roff, rcnt, rtotal entries;
/// zeroed first): as positions, or the whole segment where most are flagged.
inline void exchange_flags(State& s, const unsigned char* flags, const int64_t* off_dev,
                           const std::vector<int64_t>& off, const std::vector<int64_t>& cnt, int64_t total,
                           unsigned char* out, const std::vector<int64_t>& roff, const std::vector<int64_t>& rcnt,
                           int64_t rtotal, const char* what) {
  IRGL_CHECK(cudaMemsetAsync(s.row, 0, sizeof(int64_t) * s.world, s.stream));
  if (total > 0)
    compact_flags_kernel<<<blocks_for(total), 256, 0, s.stream>>>(flags, total, off_dev, s.world, s.row, s.send_pos);
  IRGL_CHECK(cudaGetLastError());
  share_counts(s, what);
  if (rtotal > 0) IRGL_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(rtotal), s.stream));
  group_start(s, what);
  for (int q = 0; q < s.world; ++q) {
    if (q == s.rank) continue;
    const int64_t c_out = sent(s, s.rank, q), c_in = sent(s, q, s.rank);
    if (c_out > 0) {
      const bool whole = goes_whole(c_out, cnt[q], 4, 1);
      const size_t bytes = whole ? static_cast<size_t>(cnt[q]) : static_cast<size_t>(c_out) * 4;
      const void* from = whole ? static_cast<const void*>(flags + off[q]) : static_cast<const void*>(s.send_pos + off[q]);
      nccl_done(s, ncclSend(from, bytes, ncclChar, q, s.comm, s.stream), what);
      s.bytes_sent += static_cast<double>(bytes);
    }
    if (c_in > 0) {
      const bool whole = goes_whole(c_in, rcnt[q], 4, 1);
      const size_t bytes = whole ? static_cast<size_t>(rcnt[q]) : static_cast<size_t>(c_in) * 4;
      void* into = whole ? static_cast<void*>(out + roff[q]) : static_cast<void*>(s.recv_pos + roff[q]);
      nccl_done(s, ncclRecv(into, bytes, ncclChar, q, s.comm, s.stream), what);
    }
  }
  group_end(s, what);
  mark_phase(s, "pairs");
  for (int q = 0; q < s.world; ++q) {
    const int64_t c_in = q == s.rank ? 0 : sent(s, q, s.rank);
    if (c_in > 0 && !goes_whole(c_in, rcnt[q], 4, 1))
      scatter_flags_kernel<<<blocks_for(c_in), 256, 0, s.stream>>>(s.recv_pos + roff[q], c_in, out + roff[q]);
  }
  IRGL_CHECK(cudaGetLastError());
}

/// One direction of a tracked sync_nodes: the entries of `ids` (by peer:
/// off, cnt) that changed since the agreed copy go to the peers, whose
/// entries of `rids` (roff, rcnt) take them with `red` (add: changes).
/// Whole segments go where most changed (never for set: an unchanged
/// entry must not overwrite another peer's change).
template <class T>
inline void push_changes(State& s, T* a, const T* snap, const irgl_index* ids, const int64_t* off_dev,
                         const std::vector<int64_t>& off, const std::vector<int64_t>& cnt, int64_t total,
                         const irgl_index* rids, const std::vector<int64_t>& roff, const std::vector<int64_t>& rcnt,
                         int red, bool may_go_whole, const char* what) {
  T* send = reinterpret_cast<T*>(s.send);
  T* recv = reinterpret_cast<T*>(s.recv);
  T* dense = reinterpret_cast<T*>(s.send_dense);
  IRGL_CHECK(cudaMemsetAsync(s.row, 0, sizeof(int64_t) * s.world, s.stream));
  if (total > 0)
    compact_changed_kernel<T><<<blocks_for(total), 256, 0, s.stream>>>(a, snap, ids, total, off_dev, s.world,
                                                                       red == kAdd, s.row, s.send_pos, send);
  IRGL_CHECK(cudaGetLastError());
  share_counts(s, what);
  auto whole = [&](int64_t count, int64_t length) {
    return may_go_whole && goes_whole(count, length, 4 + sizeof(T), sizeof(T));
  };
  for (int q = 0; q < s.world; ++q) {  // whole segments: every entry's value (add: change)
    const int64_t c_out = q == s.rank ? 0 : sent(s, s.rank, q);
    if (c_out > 0 && whole(c_out, cnt[q]))
      gather_kernel<T><<<blocks_for(cnt[q]), 256, 0, s.stream>>>(a, snap, ids + off[q], cnt[q], red == kAdd ? kAdd : kMin,
                                                                 dense + off[q], nullptr);
  }
  IRGL_CHECK(cudaGetLastError());
  group_start(s, what);
  for (int q = 0; q < s.world; ++q) {
    if (q == s.rank) continue;
    const int64_t c_out = sent(s, s.rank, q), c_in = sent(s, q, s.rank);
    if (c_out > 0) {
      if (whole(c_out, cnt[q])) {
        nccl_done(s, ncclSend(dense + off[q], static_cast<size_t>(cnt[q]) * sizeof(T), ncclChar, q, s.comm, s.stream),
                  what);
        s.bytes_sent += static_cast<double>(cnt[q]) * sizeof(T);
      } else {
        send_pairs<T>(s, s.send_pos + off[q], send + off[q], c_out, q, what);
      }
    }
    if (c_in > 0) {
      if (whole(c_in, rcnt[q])) {
        nccl_done(s, ncclRecv(recv + roff[q], static_cast<size_t>(rcnt[q]) * sizeof(T), ncclChar, q, s.comm, s.stream),
                  what);
      } else {
        recv_pairs<T>(s, s.recv_pos + roff[q], recv + roff[q], c_in, q, what);
      }
    }
  }
  group_end(s, what);
  mark_phase(s, "pairs");
  for (int q = 0; q < s.world; ++q) {  // one peer at a time: an entry may come from several
    const int64_t c_in = q == s.rank ? 0 : sent(s, q, s.rank);
    if (c_in == 0) continue;
    if (whole(c_in, rcnt[q]) && red == kSet)  // a broadcast: each entry has one master
      assign_kernel<T><<<blocks_for(rcnt[q]), 256, 0, s.stream>>>(a, rids + roff[q], rcnt[q], recv + roff[q]);
    else if (whole(c_in, rcnt[q]))
      reduce_kernel<T><<<blocks_for(rcnt[q]), 256, 0, s.stream>>>(a, rids + roff[q], rcnt[q], red, recv + roff[q],
                                                                  nullptr);
    else
      apply_pairs_kernel<T><<<blocks_for(c_in), 256, 0, s.stream>>>(a, rids + roff[q], s.recv_pos + roff[q],
                                                                    recv + roff[q], c_in, red);
  }
  IRGL_CHECK(cudaGetLastError());
}

/// The agreed copy of a tracked array (throws if it is not tracked).
inline void* snapshot_of(State& s, const void* a, size_t bytes, const char* what) {
  auto it = s.snapshots.find(a);
  if (it == s.snapshots.end() || it->second.bytes < bytes)
    throw Error(where() + what + ": the array has no agreed copy: it was neither an argument of the call "
                "(the runner tracks those) nor allocated by the distributed program");
  return it->second.data;
}

/// snapshot := a (on the rank's stream, or with `on_default` on the default
/// stream, after the kernels queued there).
inline void refresh(State& s, const void* a, void* snap, size_t bytes, bool on_default = false) {
  const cudaStream_t stream = on_default ? cudaStream_t{0} : s.stream;
  if (bytes > 0) IRGL_CHECK(cudaMemcpyAsync(snap, a, bytes, cudaMemcpyDeviceToDevice, stream));
}

/// irgl_dist.sync_nodes with update tracking: mirrors that changed since
/// the agreed copy go to their masters (reduce), masters that changed go
/// to their mirrors (broadcast); the agreed copy is then taken again.
template <class T>
inline void sync_nodes_tracked(T* a, T* snap, int red) {
  State& s = ready_state();
  const char* what = "irgl_dist.sync_nodes";
  const size_t bytes = static_cast<size_t>(s.num_local) * sizeof(T);
  begin(s);
  push_changes<T>(s, a, snap, s.mirrors, s.mir_off_dev, s.mir_off, s.mir_cnt, s.total_mirrors, s.masters, s.mas_off,
                  s.mas_cnt, red, red != kSet, what);
  push_changes<T>(s, a, snap, s.masters, s.mas_off_dev, s.mas_off, s.mas_cnt, s.total_masters, s.mirrors, s.mir_off,
                  s.mir_cnt, kSet, true, what);
  refresh(s, a, snap, bytes);
  defer(s, what);
}

/// The broadcast of a dense sync_nodes (after begin): every listed master
/// to its mirrors; the result is the agreed copy (min/max too); deferred.
template <class T>
inline void broadcast_dense(State& s, T* a, const char* what) {
  const size_t bytes = static_cast<size_t>(s.num_local) * sizeof(T);
  T* send = reinterpret_cast<T*>(s.send);
  T* recv = reinterpret_cast<T*>(s.recv);
  if (s.total_masters > 0)
    gather_kernel<T><<<blocks_for(s.total_masters), 256, 0, s.stream>>>(a, nullptr, s.masters, s.total_masters,
                                                                          kMin, send, nullptr);
  IRGL_CHECK(cudaGetLastError());
  exchange(s, send, s.mas_off, s.mas_cnt, recv, s.mir_off, s.mir_cnt, sizeof(T), what);
  if (s.total_mirrors > 0)
    assign_kernel<T><<<blocks_for(s.total_mirrors), 256, 0, s.stream>>>(a, s.mirrors, s.total_mirrors, recv);
  IRGL_CHECK(cudaGetLastError());
  auto it = s.snapshots.find(a);
  if (it != s.snapshots.end() && it->second.bytes >= bytes) {
    refresh(s, a, it->second.data, bytes);
    it->second.agreed = true;
  }
  defer(s, what);
}

/// irgl_dist.sync_nodes moving every listed entry (add and set need the
/// agreed copy: changes, changed flags).
template <class T>
inline void sync_nodes_dense(T* a, int red) {
  State& s = ready_state();
  const char* what = "irgl_dist.sync_nodes";
  static_assert(sizeof(T) <= 8, "node array elements are at most 8 bytes");
  const size_t bytes = static_cast<size_t>(s.num_local) * sizeof(T);
  T* snap = (red == kAdd || red == kSet) ? static_cast<T*>(snapshot_of(s, a, bytes, what)) : nullptr;
  begin(s);
  T* send = reinterpret_cast<T*>(s.send);
  T* recv = reinterpret_cast<T*>(s.recv);
  // reduce: mirrors -> masters
  if (s.total_mirrors > 0)
    gather_kernel<T><<<blocks_for(s.total_mirrors), 256, 0, s.stream>>>(a, snap, s.mirrors, s.total_mirrors, red,
                                                                          send, s.send_flags);
  IRGL_CHECK(cudaGetLastError());
  exchange(s, send, s.mir_off, s.mir_cnt, recv, s.mas_off, s.mas_cnt, sizeof(T), what);
  if (red == kSet)
    exchange(s, s.send_flags, s.mir_off, s.mir_cnt, s.recv_flags, s.mas_off, s.mas_cnt, 1, what);
  for (int q = 0; q < s.world; ++q) {  // one peer at a time: a master may be mirrored on several
    if (q == s.rank || s.mas_cnt[q] == 0) continue;
    reduce_kernel<T><<<blocks_for(s.mas_cnt[q]), 256, 0, s.stream>>>(
        a, s.masters + s.mas_off[q], s.mas_cnt[q], red, recv + s.mas_off[q], s.recv_flags + s.mas_off[q]);
  }
  IRGL_CHECK(cudaGetLastError());
  broadcast_dense<T>(s, a, what);
}

/// irgl_dist.sync_nodes ... set masters_only on a node array of T: only
/// masters were written, so only the broadcast runs (tracked: the masters
/// changed since the agreed copy; else every listed master).
template <class T>
inline void broadcast_nodes(T* a) {
  State& s = ready_state();
  const Profiled timed{s, "broadcast_nodes"};
  const char* what = "irgl_dist.sync_nodes (masters only)";
  const size_t bytes = static_cast<size_t>(s.num_local) * sizeof(T);
  auto it = s.snapshots.find(a);
  const bool tracked = s.track_updates && s.world > 1 && it != s.snapshots.end() && it->second.agreed &&
                       it->second.bytes >= bytes;
  begin(s);
  if (!tracked) {
    broadcast_dense<T>(s, a, what);
    return;
  }
  T* snap = static_cast<T*>(it->second.data);
  push_changes<T>(s, a, snap, s.masters, s.mas_off_dev, s.mas_off, s.mas_cnt, s.total_masters, s.mirrors, s.mir_off,
                  s.mir_cnt, kSet, true, what);
  refresh(s, a, snap, bytes);
  defer(s, what);
}

/// irgl_dist.sync_nodes ... set agreed on a node array of T: a kernel over
/// the mirrors wrote them with their masters' values, so nothing moves; the
/// array's contents become its agreed copy (on the default stream, after
/// that kernel), as after a broadcast.
template <class T>
inline void agree_nodes(T* a) {
  State& s = ready_state();
  const Profiled timed{s, "agree_nodes"};
  const size_t bytes = static_cast<size_t>(s.num_local) * sizeof(T);
  auto it = s.snapshots.find(a);
  if (it == s.snapshots.end() || it->second.bytes < bytes) return;  // not tracked: nothing to record
  refresh(s, a, it->second.data, bytes, true);  // after the mirrors' kernel
  it->second.agreed = true;
}

/// irgl_dist.sync_nodes on a node array of T (num_local entries): tracked
/// where the array has an agreed copy (unless IRGL_DIST_TRACK=0), else
/// every listed entry moves (the first sync of an array the program
/// allocated: its replicas start out different).
template <class T>
inline void sync_nodes(T* a, int red) {
  State& s = ready_state();
  const Profiled timed{s, "sync_nodes"};
  static_assert(sizeof(T) <= 8, "node array elements are at most 8 bytes");
  if (s.track_updates && s.world > 1) {
    auto it = s.snapshots.find(a);
    if (it != s.snapshots.end() && it->second.agreed &&
        it->second.bytes >= static_cast<size_t>(s.num_local) * sizeof(T)) {
      sync_nodes_tracked<T>(a, static_cast<T*>(it->second.data), red);
      return;
    }
  }
  sync_nodes_dense<T>(a, red);
}

template <class T>
inline ncclDataType_t nccl_type(bool is_unsigned) {
  if (std::is_same<T, float>::value) return ncclFloat32;
  if (std::is_same<T, double>::value) return ncclFloat64;
  if (sizeof(T) == 1) return is_unsigned ? ncclUint8 : ncclInt8;
  if (sizeof(T) == 4) return is_unsigned ? ncclUint32 : ncclInt32;
  return is_unsigned ? ncclUint64 : ncclInt64;
}

/// Whether reduction `red` compares its values as unsigned.
inline bool unsigned_red(int red) { return red == kMinU || red == kMaxU; }

inline ncclRedOp_t nccl_op(int red) {
  switch (red) {
    case kMin: case kMinU: case kAnd: return ncclMin;
    case kMax: case kMaxU: case kOr: return ncclMax;
    default: return ncclSum;
  }
}

/// result[i] = snap[i] + sum over ranks of (copy[i] - snap[i]) (add), or the
/// last copy that differs from snap[i] (set).
template <class T>
__global__ void cells_kernel(T* a, T* snap, const T* copies, int64_t n, int world, int red) {
  IRGL_DIST_GRID_LOOP(i, n) {
    T r = snap[i];
    for (int q = 0; q < world; ++q) {
      const T c = copies[q * n + i];
      if (red == kAdd) r = r + (c - snap[i]);
      else if (!(c == snap[i])) r = c;
    }
    a[i] = r;
    snap[i] = r;
  }
}

/// irgl_dist.allreduce_cells on a replicated array of n T.
template <class T>
inline void allreduce_cells(T* a, irgl_index n, int red) {
  State& s = ready_state();
  const Profiled timed{s, "allreduce_cells"};
  const char* what = "irgl_dist.allreduce_cells";
  if (n <= 0) return;
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  begin(s);
  if (red == kAdd || red == kSet) {
    T* snap = static_cast<T*>(snapshot_of(s, a, bytes, what));
    T* copies = static_cast<T*>(scratch_bytes(bytes * s.world, false));
    try {
      nccl_done(s, ncclAllGather(a, copies, bytes, ncclChar, s.comm, s.stream), what);
      s.bytes_sent += static_cast<double>(bytes) * (s.world - 1);
      cells_kernel<T><<<blocks_for(n), 256, 0, s.stream>>>(a, snap, copies, n, s.world, red);
      IRGL_CHECK(cudaGetLastError());
      s.snapshots.find(a)->second.agreed = true;
      wait_stream(s, what);
    } catch (...) {
      scratch_free(copies);
      throw;
    }
    scratch_free(copies);
    return;
  }
  nccl_done(s, ncclAllReduce(a, a, static_cast<size_t>(n), nccl_type<T>(unsigned_red(red)), nccl_op(red), s.comm,
                             s.stream),
            what);
  s.bytes_sent += static_cast<double>(bytes) * (s.world - 1);
  auto it = s.snapshots.find(a);
  if (it != s.snapshots.end() && it->second.bytes >= bytes) {
    refresh(s, a, it->second.data, bytes);
    it->second.agreed = true;
  }
  defer(s, what);
}

/// irgl_dist.allreduce of one host value.
template <class T>
inline T allreduce_value(T v, int red) {
  State& s = ready_state();
  const Profiled timed{s, "allreduce"};
  const char* what = "irgl_dist.allreduce";
  begin(s);
  IRGL_CHECK(cudaMemcpyAsync(s.value, &v, sizeof(T), cudaMemcpyHostToDevice, s.stream));
  const bool is_unsigned = unsigned_red(red) || std::is_same<T, bool>::value;
  nccl_done(s, ncclAllReduce(s.value, s.value, 1, nccl_type<T>(is_unsigned), nccl_op(red), s.comm, s.stream), what);
  s.bytes_sent += static_cast<double>(sizeof(T)) * (s.world - 1);
  T out{};
  IRGL_CHECK(cudaMemcpyAsync(&out, s.value, sizeof(T), cudaMemcpyDeviceToHost, s.stream));
  wait_stream(s, what);
  return out;
}

/// counts[0] = *tail (the rebuilt worklist's size).
__global__ void count_kernel(const irgl_index* tail, int64_t* counts) { counts[0] = static_cast<int64_t>(*tail); }

/// Marks `in`'s items: masters in mark, mirrors (unless `initial`: dropped)
/// in flags at their position among the listed mirrors (local id - masters).
__global__ void mark_items_kernel(const int32_t* items, int64_t n, int64_t masters, int64_t local, bool initial,
                                  unsigned char* mark, unsigned char* flags) {
  IRGL_DIST_GRID_LOOP(i, n) {
    const int64_t v = items[i];
    if (v >= 0 && v < masters) mark[v] = 1;
    else if (!initial && v >= masters && v < local) flags[v - masters] = 1;
  }
}

/// flags := the mirrors pushed without a slot (irgl_dist_push_mirror; none
/// where `initial`: a first worklist drops mirrors), which are cleared for
/// the next round. Four bytes a thread; the pointers are scratch
/// allocations, so aligned.
__global__ void take_pushed_kernel(unsigned char* pushed, unsigned char* flags, int64_t n, bool initial) {
  const int64_t words = n / 4;
  auto* pushed_words = reinterpret_cast<uint32_t*>(pushed);
  auto* flag_words = reinterpret_cast<uint32_t*>(flags);
  IRGL_DIST_GRID_LOOP(i, words) {
    const uint32_t w = pushed_words[i];
    flag_words[i] = initial ? 0u : w;
    if (w != 0) pushed_words[i] = 0;
  }
  if (blockIdx.x == 0 && threadIdx.x < 4) {
    const int64_t i = words * 4 + threadIdx.x;
    if (i < n) {
      const unsigned char b = pushed[i];
      flags[i] = initial ? 0 : b;
      if (b != 0) pushed[i] = 0;
    }
  }
}

/// mark[ids[i]] = 1 where flags[i] (and, with has_edges, the node has edges).
__global__ void mark_flagged_kernel(const irgl_index* ids, int64_t n, const unsigned char* flags,
                                    const unsigned char* has_edges, unsigned char* mark) {
  IRGL_DIST_GRID_LOOP(i, n) {
    if (flags[i] && (has_edges == nullptr || has_edges[ids[i]])) mark[ids[i]] = 1;
  }
}

/// flags[i] = mark[ids[i]].
__global__ void flags_of_kernel(const irgl_index* ids, int64_t n, const unsigned char* mark, unsigned char* flags) {
  IRGL_DIST_GRID_LOOP(i, n) { flags[i] = mark[ids[i]]; }
}

/// The nonzero bytes of a word, as their top bits.
__device__ __forceinline__ unsigned nonzero_bytes(unsigned w) {
  return (((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u;
}

/// in := the marked local nodes (tail counts them, each node once, in no
/// particular order), 16 marks a thread read as one uint4 (mark 16-byte
/// aligned) and one atomic on tail per warp and iteration: a round's rebuild
/// reads the rank's every mark.
__global__ void rebuild16_kernel(const unsigned char* mark, int64_t n, int32_t* items, irgl_index* tail) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int64_t chunks = (n + 15) / 16;
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t warp = blockIdx.x * int64_t(blockDim.x) + (threadIdx.x & ~31u); warp < chunks; warp += stride) {
    const int64_t c = warp + lane;  // every lane of the warp runs each iteration
    unsigned w[4] = {0, 0, 0, 0};
    if (c < chunks) {
      if ((c + 1) * 16 <= n) {
        const uint4 v = reinterpret_cast<const uint4*>(mark)[c];
        w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
      } else {
        for (int k = 0; c * 16 + k < n; ++k)
          if (mark[c * 16 + k]) w[k / 4] |= 1u << (8 * (k % 4));
      }
    }
    int count = 0;
    for (int k = 0; k < 4; ++k) {
      w[k] = nonzero_bytes(w[k]);
      count += __popc(w[k]);
    }
    int upto = count;  // inclusive prefix over the warp's lanes
    for (int d = 1; d < 32; d <<= 1) {
      const int t = __shfl_up_sync(0xffffffffu, upto, d);
      if (lane >= d) upto += t;
    }
    const int total = __shfl_sync(0xffffffffu, upto, 31);
    if (total == 0) continue;
    irgl_index base = 0;
    if (lane == 31) base = detail::atomic_add_index(tail, static_cast<irgl_index>(total));
    base = __shfl_sync(0xffffffffu, base, 31);
    irgl_index at = base + (upto - count);
    for (int k = 0; k < 4; ++k)
      for (unsigned bits = w[k]; bits != 0; bits &= bits - 1)
        items[at++] = static_cast<int32_t>(c * 16 + k * 4 + (__ffs(bits) - 1) / 8);
  }
}

/// The end of a worklist exchange: `in` rebuilt from the marks, its count
/// and the count's sum over the ranks (the termination test that follows,
/// irgl_dist_pipe_in_total) read with the step's one wait.
inline void rebuild_worklist(State& s, Pipe* p, const char* what) {
  IRGL_CHECK(cudaMemsetAsync(p->in.tail, 0, sizeof(irgl_index), s.stream));
  mark_phase(s, "apply");
  // s.mark is scratch, whose blocks are 256-byte aligned (ScratchSlab::kAlign)
  rebuild16_kernel<<<blocks_for((s.num_local + 15) / 16), 256, 0, s.stream>>>(s.mark, s.num_local, p->in.items,
                                                                           p->in.tail);
  IRGL_CHECK(cudaGetLastError());
  int64_t* counts = reinterpret_cast<int64_t*>(s.value);
  count_kernel<<<1, 1, 0, s.stream>>>(p->in.tail, counts);
  IRGL_CHECK(cudaGetLastError());
  mark_phase(s, "rebuild");
  nccl_done(s, ncclAllReduce(counts, counts + 1, 1, ncclInt64, ncclSum, s.comm, s.stream), what);
  s.bytes_sent += 8.0 * (s.world - 1);
  IRGL_CHECK(cudaMemcpyAsync(s.counts_host, counts, 2 * sizeof(int64_t), cudaMemcpyDeviceToHost, s.stream));
  mark_phase(s, "total");
  wait_stream(s, what);
  print_phases(s);
  p->in_size = static_cast<irgl_index>(s.counts_host[0]);
  p->in.retry_round = 0;
  s.total_pipe = p;
  s.total_items = p->in.items;
  s.total_local = s.counts_host[0];
  s.total = s.counts_host[1];
  if (s.profile_trace)
    std::fprintf(stderr, "irgl-dist trace: rank %d at %.3f ms: worklist %lld of %lld\n", s.rank, trace_ms(s),
                 static_cast<long long>(s.total_local), static_cast<long long>(s.total));
}

/// Marks `in`'s items for a worklist exchange (mark: masters; send_flags:
/// the listed mirrors pushed), after the capacity check.
inline void mark_worklist(State& s, Pipe* p, bool initial, const char* what) {
  if (s.num_local > p->capacity)
    throw Error(where() + what + ": the worklist capacity " + std::to_string(static_cast<long long>(p->capacity)) +
                " is below the rank's " + std::to_string(static_cast<long long>(s.num_local)) + " local nodes");
  const irgl_index n = irgl_pipe_in_size(p);
  begin(s);
  IRGL_CHECK(cudaMemsetAsync(s.mark, 0, static_cast<size_t>(s.num_local), s.stream));
  if (s.total_mirrors > 0)  // the mirrors the round pushed without a slot, then those in `in`
    take_pushed_kernel<<<blocks_for((s.total_mirrors + 3) / 4), 256, 0, s.stream>>>(s.pushed, s.send_flags,
                                                                                  s.total_mirrors, initial);
  if (n > 0)
    mark_items_kernel<<<blocks_for(n), 256, 0, s.stream>>>(p->in.items, n, s.num_masters, s.num_local, initial,
                                                          s.mark, s.send_flags);
  IRGL_CHECK(cudaGetLastError());
  mark_phase(s, "mark");
}

/// The first worklist of an Iterate/Pipe across ranks that has no initial
/// items: p was just created, so its `in` is empty on every rank and nothing
/// is exchanged; its global size (0) is recorded for the termination test.
inline void empty_worklist(Pipe* p) {
  State& s = ready_state();
  const char* what = "the initial worklist of an irgl.iterate/irgl.pipe across ranks";
  if (irgl_pipe_in_size(p) != 0)
    throw Error(where() + what + ": an Iterate/Pipe without initial items found its new worklist holding " +
                std::to_string(static_cast<long long>(irgl_pipe_in_size(p))) + " items");
  s.total_pipe = p;
  s.total_items = p->in.items;
  s.total_local = 0;
  s.total = 0;
}

/// One direction of a worklist exchange: `s.send_flags` (entries by peer:
/// off, cnt; `total` of them, their offsets also at off_dev) go to the
/// peers, whose flags (roff, rcnt; `rtotal`) mark their nodes `rids` (with
/// has_edges: only nodes that hold edges).
inline void send_worklist_flags(State& s, const int64_t* off_dev, const std::vector<int64_t>& off,
                                const std::vector<int64_t>& cnt, int64_t total, const std::vector<int64_t>& roff,
                                const std::vector<int64_t>& rcnt, const irgl_index* rids, int64_t rtotal,
                                const unsigned char* has_edges, const char* what) {
  if (s.track_updates)
    exchange_flags(s, s.send_flags, off_dev, off, cnt, total, s.recv_flags, roff, rcnt, rtotal, what);
  else
    exchange(s, s.send_flags, off, cnt, s.recv_flags, roff, rcnt, 1, what);
  if (rtotal > 0)
    mark_flagged_kernel<<<blocks_for(rtotal), 256, 0, s.stream>>>(rids, rtotal, s.recv_flags, has_edges, s.mark);
  IRGL_CHECK(cudaGetLastError());
}

/// irgl_dist.sync_worklist on the `in` worklist of p. With `initial` (the
/// first worklist of an Iterate/Pipe across ranks, or one whose kernel
/// pushed every node it visits, so each rank pushed all its masters) the
/// mirror items are dropped instead of sent: no mirror flag is set, so the
/// exchange towards the masters is skipped (under a vertex-cut the masters
/// still activate their mirrors).
inline void sync_worklist(Pipe* p, bool initial, const char* what) {
  State& s = ready_state();
  const Profiled timed{s, "sync_worklist"};
  mark_worklist(s, p, initial, what);
  if (!initial)  // pushed mirrors to their masters
    send_worklist_flags(s, s.mir_off_dev, s.mir_off, s.mir_cnt, s.total_mirrors, s.mas_off, s.mas_cnt, s.masters,
                        s.total_masters, nullptr, what);
  if (s.cvc) {  // masters activate their mirrors that hold edges
    if (s.total_masters > 0)
      flags_of_kernel<<<blocks_for(s.total_masters), 256, 0, s.stream>>>(s.masters, s.total_masters, s.mark,
                                                                        s.send_flags);
    IRGL_CHECK(cudaGetLastError());
    send_worklist_flags(s, s.mas_off_dev, s.mas_off, s.mas_cnt, s.total_masters, s.mir_off, s.mir_cnt, s.mirrors,
                        s.total_mirrors, s.has_edges, what);
  }
  rebuild_worklist(s, p, what);
}

/// After a reduce-only exchange: every rank's copies of the hot nodes take
/// their masters' values (each master holds the best of its copies then, as
/// every changed mirror was sent), so the next round's filters on the other
/// ranks stop passing for edges into a node one rank already improved. One
/// all-gather: rank q's group of the list carries its masters' values.
/// Deferred: the default stream waits for it on the device. `snap`: the
/// rank's last copy (update tracking), whose mirror entries take the values
/// too, so they are not sent back.
template <class T>
inline void refresh_hot(State& s, T* a, T* snap, int red) {
  const char* what = "irgl_dist.sync_worklist reduce (refreshing the hot nodes)";
  const int64_t group = s.hot_count / s.world;
  T* buf = reinterpret_cast<T*>(s.hot_buf);
  T* mine = buf + group * s.rank;
  hot_gather_kernel<T><<<blocks_for(group), 256, 0, s.stream>>>(a, s.hot + group * s.rank, group,
                                                                identity_of<T>(red), mine);
  IRGL_CHECK(cudaGetLastError());
  nccl_done(s, ncclAllGather(mine, buf, static_cast<size_t>(group) * sizeof(T), ncclChar, s.comm, s.stream), what);
  s.bytes_sent += static_cast<double>(group) * sizeof(T) * (s.world - 1);
  s.collectives += 1;
  hot_scatter_kernel<T><<<blocks_for(s.hot_count), 256, 0, s.stream>>>(a, snap, s.hot, s.hot_count, s.num_masters,
                                                                       buf, red);
  IRGL_CHECK(cudaGetLastError());
  defer(s, what);
  if (s.profile_trace)
    std::fprintf(stderr, "irgl-dist trace: rank %d at %.3f ms: hot nodes refreshed: %lld\n", s.rank, trace_ms(s),
                 static_cast<long long>(s.hot_count));
}

/// irgl_dist.sync_worklist reduce %a (min/max): the updated mirrors of `a`
/// go to their masters with a pushed bit, in the worklist's one exchange; a
/// master takes a value where it improves it and is activated where that
/// value's mirror was pushed; nothing is broadcast back (mirrors lag their
/// masters; irgl-distribute proved that they are read only as filters).
/// Tracked: (position | pushed << 31, value) pairs of the mirrors changed
/// since the rank's last copy; else every listed mirror's value and flag.
/// `late` (late_broadcast): the same exchange carries the masters changed
/// since the rank's previous one (tracked: the last copy's master entries
/// hold what was sent; else every listed master) to their mirrors, which
/// take them with `red`.
template <class T>
inline void sync_worklist_reduce(Pipe* p, T* a, int red, bool late) {
  State& s = ready_state();
  const Profiled timed{s, "sync_worklist_reduce"};
  const char* what = "irgl_dist.sync_worklist reduce";
  if (s.cvc)
    throw Error(where() + what + ": reduce-only synchronization needs an edge-cut (a popped mirror holds edges under "
                "a vertex-cut)");
  const size_t bytes = static_cast<size_t>(s.num_local) * sizeof(T);
  auto it = s.snapshots.find(a);
  const bool tracked = s.track_updates && s.world > 1 && it != s.snapshots.end() && it->second.bytes >= bytes;
  if (tracked)
    for (int q = 0; q < s.world; ++q)
      if (s.mir_cnt[q] >= (int64_t(1) << 31) || s.mas_cnt[q] >= (int64_t(1) << 31))
        throw Error(where() + what + ": a rank shares 2^31 or more nodes with rank " + std::to_string(q) +
                    ", more than a pair's 31-bit position holds");
  if (late) late_buffers(s);
  mark_worklist(s, p, false, what);
  T* send = reinterpret_cast<T*>(s.send);
  T* recv = reinterpret_cast<T*>(s.recv);
  T* late_send = reinterpret_cast<T*>(s.send_dense);  // the masters' values (late)
  T* late_recv = reinterpret_cast<T*>(s.late_recv);   // ... as the mirrors receive them
  if (tracked) {
    T* snap = static_cast<T*>(it->second.data);
    const int width = late ? 2 : 1;  // counts: mirrors to owners, then masters to mirrors
    IRGL_CHECK(cudaMemsetAsync(s.row, 0, sizeof(int64_t) * width * s.world, s.stream));
    if (s.total_mirrors > 0)
      compact_pushed_kernel<T><<<blocks_for(s.total_mirrors), 256, 0, s.stream>>>(
          a, snap, s.num_masters, s.total_mirrors, s.mir_off_dev, s.world, s.send_flags, s.row, s.send_pos, send);
    if (late && s.total_masters > 0)
      compact_changed_kernel<T><<<blocks_for(s.total_masters), 256, 0, s.stream>>>(
          a, snap, s.masters, s.total_masters, s.mas_off_dev, s.world, false, s.row + s.world, s.late_send_pos,
          late_send);
    IRGL_CHECK(cudaGetLastError());
    share_counts(s, what, width);
    auto count = [&](int from, int column) {
      return s.matrix_host[static_cast<int64_t>(from) * width * s.world + column];
    };
    group_start(s, what);
    for (int q = 0; q < s.world; ++q) {
      if (q == s.rank) continue;
      const int64_t c_out = count(s.rank, q), c_in = count(q, s.rank);
      if (c_out > 0) send_pairs<T>(s, s.send_pos + s.mir_off[q], send + s.mir_off[q], c_out, q, what);
      if (c_in > 0) recv_pairs<T>(s, s.recv_pos + s.mas_off[q], recv + s.mas_off[q], c_in, q, what);
      if (!late) continue;
      const int64_t b_out = count(s.rank, s.world + q), b_in = count(q, s.world + s.rank);
      if (b_out > 0) send_pairs<T>(s, s.late_send_pos + s.mas_off[q], late_send + s.mas_off[q], b_out, q, what);
      if (b_in > 0) recv_pairs<T>(s, s.late_recv_pos + s.mir_off[q], late_recv + s.mir_off[q], b_in, q, what);
    }
    group_end(s, what);
    mark_phase(s, "pairs");
    for (int q = 0; q < s.world; ++q) {  // one peer at a time: a master may be mirrored on several
      if (q == s.rank) continue;
      const int64_t c_in = count(q, s.rank);
      if (c_in > 0)
        apply_pushed_kernel<T><<<blocks_for(c_in), 256, 0, s.stream>>>(
            a, s.masters + s.mas_off[q], s.recv_pos + s.mas_off[q], recv + s.mas_off[q], c_in, red, nullptr, s.mark);
      if (!late) continue;
      const int64_t b_out = count(s.rank, s.world + q), b_in = count(q, s.world + s.rank);
      if (b_out > 0)  // what the mirrors on q now hold at least: the masters' last sent values
        apply_pairs_kernel<T><<<blocks_for(b_out), 256, 0, s.stream>>>(
            snap, s.masters + s.mas_off[q], s.late_send_pos + s.mas_off[q], late_send + s.mas_off[q], b_out, kSet);
      if (b_in > 0)
        for (T* into : {a, snap})  // the mirrors (and their last copy) take their masters' values
          apply_pairs_kernel<T><<<blocks_for(b_in), 256, 0, s.stream>>>(
              into, s.mirrors + s.mir_off[q], s.late_recv_pos + s.mir_off[q], late_recv + s.mir_off[q], b_in, red);
    }
  } else {
    if (s.total_mirrors > 0)
      gather_kernel<T><<<blocks_for(s.total_mirrors), 256, 0, s.stream>>>(a, nullptr, s.mirrors, s.total_mirrors,
                                                                            kMin, send, nullptr);
    if (late && s.total_masters > 0)
      gather_kernel<T><<<blocks_for(s.total_masters), 256, 0, s.stream>>>(a, nullptr, s.masters, s.total_masters,
                                                                            kMin, late_send, nullptr);
    IRGL_CHECK(cudaGetLastError());
    exchange(s, send, s.mir_off, s.mir_cnt, recv, s.mas_off, s.mas_cnt, sizeof(T), what);
    exchange(s, s.send_flags, s.mir_off, s.mir_cnt, s.recv_flags, s.mas_off, s.mas_cnt, 1, what);
    if (late) exchange(s, late_send, s.mas_off, s.mas_cnt, late_recv, s.mir_off, s.mir_cnt, sizeof(T), what);
    for (int q = 0; q < s.world; ++q) {
      if (q == s.rank) continue;
      if (s.mas_cnt[q] > 0)
        apply_pushed_kernel<T><<<blocks_for(s.mas_cnt[q]), 256, 0, s.stream>>>(
            a, s.masters + s.mas_off[q], nullptr, recv + s.mas_off[q], s.mas_cnt[q], red, s.recv_flags + s.mas_off[q],
            s.mark);
      if (late && s.mir_cnt[q] > 0)
        reduce_kernel<T><<<blocks_for(s.mir_cnt[q]), 256, 0, s.stream>>>(a, s.mirrors + s.mir_off[q], s.mir_cnt[q], red,
                                                                          late_recv + s.mir_off[q], nullptr);
    }
  }
  IRGL_CHECK(cudaGetLastError());
  if (it != s.snapshots.end() && it->second.bytes >= bytes) {
    // the next round's changes are since now (tracked: the compaction took
    // the mirrors' values, the only entries compared, and the masters'
    // entries hold what was last sent; so the copy no longer counts as agreed)
    if (!tracked) refresh(s, a, it->second.data, bytes);
    it->second.agreed = false;  // mirrors lag their masters
  }
  rebuild_worklist(s, p, what);
  if (!late && s.hot_count > 0 && s.world > 1 && s.total >= s.hot_min_active)
    refresh_hot<T>(s, a, tracked ? static_cast<T*>(it->second.data) : nullptr, red);
}

/// The sum over the ranks of the size of p's `in` (a termination test): the
/// count sync_worklist just took where nothing has changed `in` or
/// communicated since, else an all-reduce of the size.
inline irgl_index pipe_in_total(Pipe* p) {
  State& s = ready_state();
  s.termination_tests += 1;
  const irgl_index local = irgl_pipe_in_size(p);
  if (s.total_pipe == p && s.total_items == p->in.items && s.total_local == local) {
    s.total_pipe = nullptr;
    return static_cast<irgl_index>(s.total);
  }
  return allreduce_value<irgl_index>(local, kAdd);
}

/// Takes the copy of `bytes` bytes of device array `a` that later
/// synchronizations compare with (see irgl_dist_track); `agreed`: every
/// rank's replicas hold the same values (an argument the runner
/// scattered), not so for an array the program just allocated.
inline void track(const void* a, int64_t bytes, bool agreed) {
  State& s = state();
  Snapshot& snap = s.snapshots[a];
  snap.agreed = agreed;
  if (snap.data == nullptr || snap.bytes < static_cast<size_t>(bytes)) {
    scratch_free(snap.data);
    snap.data = nullptr;
    snap.data = scratch_bytes(static_cast<size_t>(bytes > 0 ? bytes : 1), false);
    snap.bytes = static_cast<size_t>(bytes);
  }
  if (bytes > 0) IRGL_CHECK(cudaMemcpy(snap.data, a, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice));
}

/// Frees the hot nodes' list and buffer (never throws).
inline void free_hot(State& s) {
  scratch_free(s.hot);
  scratch_free(s.hot_buf);
  s.hot = nullptr;
  s.hot_buf = nullptr;
  s.hot_count = s.hot_min_active = 0;
}

/// Frees the partition's buffers and snapshots (never throws).
inline void free_partition(State& s) {
  for (void* ptr : {static_cast<void*>(s.l2g), static_cast<void*>(s.mirrors), static_cast<void*>(s.masters),
                    static_cast<void*>(s.has_edges), static_cast<void*>(s.send), static_cast<void*>(s.recv),
                    static_cast<void*>(s.send_flags), static_cast<void*>(s.recv_flags), static_cast<void*>(s.mark),
                    static_cast<void*>(s.value), static_cast<void*>(s.send_pos), static_cast<void*>(s.recv_pos),
                    static_cast<void*>(s.send_dense), static_cast<void*>(s.mir_off_dev),
                    static_cast<void*>(s.mas_off_dev), static_cast<void*>(s.row), static_cast<void*>(s.matrix),
                    static_cast<void*>(s.late_send_pos), static_cast<void*>(s.late_recv_pos),
                    static_cast<void*>(s.late_recv), static_cast<void*>(s.pushed)})
    scratch_free(ptr);
  free_hot(s);
  if (s.matrix_host != nullptr) cudaFreeHost(s.matrix_host);
  if (s.counts_host != nullptr) cudaFreeHost(s.counts_host);
  s.matrix_host = nullptr;
  s.counts_host = nullptr;
  s.fold_bounds.clear();  // irgl_dist_fold again after the next setup
  s.fold_starts.clear();
  s.total_pipe = nullptr;
  s.send_pos = s.recv_pos = nullptr;
  s.send_dense = nullptr;
  s.late_send_pos = s.late_recv_pos = nullptr;
  s.late_recv = nullptr;
  s.mir_off_dev = s.mas_off_dev = s.row = s.matrix = nullptr;
  s.l2g = nullptr;
  s.mirrors = s.masters = nullptr;
  s.has_edges = s.send_flags = s.recv_flags = s.mark = s.pushed = nullptr;
  s.send = s.recv = s.value = nullptr;
  for (auto& entry : s.snapshots) scratch_free(entry.second.data);
  s.snapshots.clear();
  s.partition = false;
}

/// A device copy of n host int64 values as irgl_index.
inline irgl_index* upload_ids(const int64_t* host, int64_t n) {
  std::vector<irgl_index> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = static_cast<irgl_index>(host[i]);
  irgl_index* dev = scratch_alloc<irgl_index>(n > 0 ? static_cast<irgl_index>(n) : 1);
  if (n > 0) IRGL_CHECK(cudaMemcpy(dev, ids.data(), static_cast<size_t>(n) * sizeof(irgl_index), cudaMemcpyHostToDevice));
  return dev;
}

}  // namespace dist

namespace detail {
inline void dist_settle() {
  dist::State& s = dist::state();
  if (s.comm != nullptr) dist::settle(s);
}
}  // namespace detail
}  // namespace irgl

// -- called by the lowered code (irgl_dialect/runtime_library.py) ------------

/// The local id of global node g: its master's on the owner, all ones elsewhere.
inline irgl_index irgl_dist_local_node(irgl_index g) {
  const irgl::dist::State& s = irgl::dist::ready_state();
  int64_t id = static_cast<int64_t>(g);
  if (!s.fold_bounds.empty()) {  // folded blocks: the node's partition id
    if (id < 0 || id >= s.fold_bounds.back()) return static_cast<irgl_index>(-1);
    const size_t block = static_cast<size_t>(
        std::upper_bound(s.fold_bounds.begin(), s.fold_bounds.end(), id) - s.fold_bounds.begin() - 1);
    id = s.fold_starts[block] + id - s.fold_bounds[block];
  }
  const int64_t local = id - s.master_offset;
  return (local >= 0 && local < s.num_masters) ? static_cast<irgl_index>(local) : static_cast<irgl_index>(-1);
}

/// The number of the rank's masters, local ids 0 .. num_masters - 1: what a
/// ForAll over nodes runs over (irgl.graph.num_nodes counts the mirrors too).
__host__ __device__ __forceinline__ irgl_index irgl_dist_num_masters() {
#ifdef __CUDA_ARCH__
  return irgl_dist_num_masters_device;
#else
  return static_cast<irgl_index>(irgl::dist::ready_state().num_masters);
#endif
}

/// Pushes mirror n (local id; a master is ignored) without a worklist slot:
/// the next worklist exchange sends its master the pushed bit a push of n
/// would (device code; irgl_dist.push_mirror).
__device__ __forceinline__ void irgl_dist_push_mirror(irgl_index n) {
  const irgl_index masters = irgl_dist_num_masters_device;
  if (n >= masters) irgl_dist_pushed_device[n - masters] = 1;
}

/// The global id of local node n (device code).
__device__ __forceinline__ irgl_index irgl_dist_global_id(irgl_index n) {
  return static_cast<irgl_index>(irgl_dist_l2g_device[n]);
}

/// Synchronizes the `in` worklist of a pipe (irgl_dist.sync_worklist).
inline void irgl_dist_sync_worklist(irgl::Pipe* p) { irgl::dist::sync_worklist(p, false, "irgl_dist.sync_worklist"); }
/// The same after a kernel that pushed every node it visits
/// (irgl_dist.sync_worklist every_master): each rank keeps its own masters,
/// the mirror items are dropped, nothing goes to the masters.
inline void irgl_dist_sync_worklist_every_master(irgl::Pipe* p) {
  irgl::dist::sync_worklist(p, true, "irgl_dist.sync_worklist every_master");
}
/// Distributes the initial `in` worklist of an Iterate/Pipe across ranks.
inline void irgl_dist_initial_worklist(irgl::Pipe* p) {
  irgl::dist::sync_worklist(p, true, "the initial worklist of an irgl.iterate/irgl.pipe across ranks");
}
/// The same for an Iterate/Pipe without initial items (no exchange).
inline void irgl_dist_empty_worklist(irgl::Pipe* p) { irgl::dist::empty_worklist(p); }
/// The size of a pipe's `in` summed over the ranks (a termination test).
inline irgl_index irgl_dist_pipe_in_total(irgl::Pipe* p) { return irgl::dist::pipe_in_total(p); }

/// irgl_dist.sync_nodes / allreduce_cells / tracking, per element type.
#define IRGL_DIST_ARRAY(SUFFIX, T)                                                     \
  inline void irgl_dist_sync_nodes_##SUFFIX(T* a, int32_t red) {                       \
    irgl::dist::sync_nodes<T>(a, red);                                                 \
  }                                                                                    \
  inline void irgl_dist_sync_worklist_reduce_##SUFFIX(irgl::Pipe* p, T* a, int32_t red, bool late) { \
    irgl::dist::sync_worklist_reduce<T>(p, a, red, late);                              \
  }                                                                                    \
  inline void irgl_dist_broadcast_nodes_##SUFFIX(T* a) { irgl::dist::broadcast_nodes<T>(a); } \
  inline void irgl_dist_agree_nodes_##SUFFIX(T* a) { irgl::dist::agree_nodes<T>(a); }   \
  inline void irgl_dist_allreduce_cells_##SUFFIX(T* a, irgl_index n, int32_t red) {    \
    irgl::dist::allreduce_cells<T>(a, n, red);                                         \
  }                                                                                    \
  inline void irgl_dist_track_##SUFFIX(T* a, irgl_index n) {                           \
    irgl::dist::track(a, static_cast<int64_t>(n) * static_cast<int64_t>(sizeof(T)), false); \
  }
/// irgl_dist.allreduce of a host value, per type.
#define IRGL_DIST_VALUE(SUFFIX, T)                                                     \
  inline T irgl_dist_allreduce_##SUFFIX(T v, int32_t red) {                            \
    irgl::dist::state().termination_tests += 1;                                        \
    return irgl::dist::allreduce_value<T>(v, red);                                     \
  }

// -- called by the runner through ctypes ---------------------------------------

/// Writes a fresh NCCL unique id (NCCL_UNIQUE_ID_BYTES = 128 bytes) to out.
IRGL_EXPORT int irgl_dist_get_unique_id(char* out) {
  return irgl::guard([&] {
    ncclUniqueId id;
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) throw irgl::Error(std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
    std::memcpy(out, id.internal, sizeof(id.internal));
  });
}

/// Joins the communicator: this process is `rank` of `world`, on CUDA device
/// `device`, with the unique id rank 0 made; NCCL calls wait at most
/// timeout_s seconds. Call before anything else touches the GPU.
IRGL_EXPORT int irgl_dist_init(int rank, int world, int device, const char* unique_id, double timeout_s) {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::state();
    if (s.ready) throw irgl::Error("irgl_dist_init: already initialized");
    if (world < 1 || rank < 0 || rank >= world)
      throw irgl::Error("irgl_dist_init: rank " + std::to_string(rank) + " out of range for world size " +
                        std::to_string(world));
    s.rank = rank;
    s.world = world;
    s.timeout_s = timeout_s > 0 ? timeout_s : 300.0;
    IRGL_CHECK(cudaSetDevice(device));
    if (s.stream == nullptr) IRGL_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    ncclUniqueId id;
    std::memcpy(id.internal, unique_id, sizeof(id.internal));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    const char* profile = std::getenv("IRGL_DIST_PROFILE");
    const bool known = profile != nullptr && profile[0] >= '1' && profile[0] <= '3' && profile[1] == 0;
    const int level = known ? profile[0] - '0' : 0;
    s.profile = level >= 1;
    s.profile_waits = level >= 2;
    s.profile_trace = level == 3;
    const char* blocking = std::getenv("IRGL_DIST_BLOCKING");
    if (blocking == nullptr || std::strcmp(blocking, "0") != 0) {
      // A blocking communicator: its calls enqueue at once (a non-blocking
      // one hands them to a thread: ~2x the time of a round on 2 GPUs).
      // Its creation, the only call that waits for the other ranks (the
      // runner sets NCCL_RUNTIME_CONNECT=0: every connection is made
      // here), runs on a thread of its own, bounded by the timeout; a
      // stuck creation leaves that thread behind and fails this rank.
      config.blocking = 1;
      auto done = std::make_shared<std::promise<std::pair<ncclResult_t, ncclComm_t>>>();
      std::future<std::pair<ncclResult_t, ncclComm_t>> result = done->get_future();
      std::thread([done, world, id, rank, device, config]() mutable {
        ncclComm_t comm = nullptr;
        ncclResult_t r = cudaSetDevice(device) == cudaSuccess ? ncclCommInitRankConfig(&comm, world, id, rank, &config)
                                                              : ncclUnhandledCudaError;
        done->set_value({r, comm});
      }).detach();
      if (result.wait_for(std::chrono::duration<double>(s.timeout_s)) != std::future_status::ready)
        throw irgl::Error(irgl::dist::where() + "creating the NCCL communicator: not done within " +
                          std::to_string(s.timeout_s) +
                          " s (IRGL_DIST_TIMEOUT): a rank died, never started or is stuck");
      const auto made = result.get();
      if (made.first != ncclSuccess)
        throw irgl::Error(irgl::dist::where() + "ncclCommInitRankConfig: " + ncclGetErrorString(made.first));
      s.comm = made.second;
      s.ready = true;
      return;
    }
    config.blocking = 0;  // IRGL_DIST_BLOCKING=0: every call bounded by the timeout
    ncclResult_t r = ncclCommInitRankConfig(&s.comm, world, id, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      s.comm = nullptr;
      throw irgl::Error(irgl::dist::where() + "ncclCommInitRankConfig: " + ncclGetErrorString(r));
    }
    if (r == ncclInProgress) ncclCommGetAsyncError(s.comm, &r);
    irgl::dist::nccl_done(s, r, "creating the NCCL communicator");
    s.ready = true;
  });
}

/// Folded master blocks (irgl_runner/partition_fold.py): `blocks` + 1 bounds
/// of the 2P id blocks; block order 0, 2P-1, 1, 2P-2, ... numbers the
/// partition ids that irgl_dist_setup's master_offset counts in. Call it
/// after irgl_dist_setup; irgl_dist_local_node then folds a global id first.
IRGL_EXPORT int irgl_dist_fold(int64_t blocks, const int64_t* bounds) {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::ready_state();
    if (blocks < 0 || blocks % 2 != 0) throw irgl::Error("irgl_dist_fold: an even number of blocks");
    s.fold_bounds.assign(bounds, bounds + (blocks > 0 ? blocks + 1 : 0));
    s.fold_starts.assign(static_cast<size_t>(blocks), 0);
    int64_t start = 0;
    for (int64_t k = 0; k < blocks; ++k) {  // the k-th block in partition ids
      const int64_t b = k % 2 == 0 ? k / 2 : blocks - 1 - k / 2;
      s.fold_starts[static_cast<size_t>(b)] = start;
      start += s.fold_bounds[static_cast<size_t>(b) + 1] - s.fold_bounds[static_cast<size_t>(b)];
    }
  });
}

/// Installs the rank's partition: local/master counts, the global id of
/// every local node, per peer the mirrors it owns and the masters it mirrors
/// (counts[world] then the concatenated local ids), which local nodes have
/// edges, and the policy (cvc: masters activate their mirrors).
IRGL_EXPORT int irgl_dist_setup(int64_t num_local, int64_t num_masters, int64_t master_offset, const int64_t* l2g,
                                const int64_t* mirror_counts, const int64_t* mirrors, const int64_t* master_counts,
                                const int64_t* masters, const unsigned char* has_edges, int cvc) {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::state();
    if (!s.ready) throw irgl::Error("irgl_dist_setup: call irgl_dist_init first");
    irgl::dist::free_partition(s);
    s.num_local = num_local;
    s.num_masters = num_masters;
    s.master_offset = master_offset;
    s.cvc = cvc != 0;
    s.mir_off.assign(s.world, 0);
    s.mir_cnt.assign(mirror_counts, mirror_counts + s.world);
    s.mas_off.assign(s.world, 0);
    s.mas_cnt.assign(master_counts, master_counts + s.world);
    s.total_mirrors = s.total_masters = 0;
    for (int q = 0; q < s.world; ++q) {
      s.mir_off[q] = s.total_mirrors;
      s.mas_off[q] = s.total_masters;
      s.total_mirrors += s.mir_cnt[q];
      s.total_masters += s.mas_cnt[q];
    }
    // sync_worklist finds a mirror's slot as (local id - masters)
    if (s.total_mirrors != num_local - num_masters)
      throw irgl::Error("irgl_dist_setup: the mirror lists must name every mirror once");
    for (int64_t i = 0; i < s.total_mirrors; ++i)
      if (mirrors[i] != num_masters + i)
        throw irgl::Error("irgl_dist_setup: the mirror lists must be the local ids after the masters, in order");
    s.l2g = irgl::scratch_alloc<int64_t>(static_cast<irgl_index>(num_local > 0 ? num_local : 1));
    if (num_local > 0)
      IRGL_CHECK(cudaMemcpy(s.l2g, l2g, static_cast<size_t>(num_local) * 8, cudaMemcpyHostToDevice));
    IRGL_CHECK(cudaMemcpyToSymbol(irgl_dist_l2g_device, &s.l2g, sizeof(s.l2g)));
    const irgl_index masters_index = static_cast<irgl_index>(num_masters);
    IRGL_CHECK(cudaMemcpyToSymbol(irgl_dist_num_masters_device, &masters_index, sizeof(masters_index)));
    s.mirrors = irgl::dist::upload_ids(mirrors, s.total_mirrors);
    s.masters = irgl::dist::upload_ids(masters, s.total_masters);
    s.has_edges = irgl::scratch_alloc<unsigned char>(static_cast<irgl_index>(num_local > 0 ? num_local : 1));
    if (num_local > 0) IRGL_CHECK(cudaMemcpy(s.has_edges, has_edges, static_cast<size_t>(num_local), cudaMemcpyHostToDevice));
    const int64_t most = std::max<int64_t>(std::max(s.total_mirrors, s.total_masters), 1);
    s.send = static_cast<char*>(irgl::scratch_bytes(static_cast<size_t>(most) * 8, false));
    s.recv = static_cast<char*>(irgl::scratch_bytes(static_cast<size_t>(most) * 8, false));
    s.send_flags = irgl::scratch_alloc<unsigned char>(static_cast<irgl_index>(most));
    s.recv_flags = irgl::scratch_alloc<unsigned char>(static_cast<irgl_index>(most));
    s.pushed = irgl::scratch_alloc<unsigned char>(static_cast<irgl_index>(std::max<int64_t>(s.total_mirrors, 1)));
    IRGL_CHECK(cudaMemcpyToSymbol(irgl_dist_pushed_device, &s.pushed, sizeof(s.pushed)));
    s.mark = irgl::scratch_alloc<unsigned char>(static_cast<irgl_index>(num_local > 0 ? num_local : 1));
    s.value = static_cast<char*>(irgl::scratch_bytes(16));
    s.send_pos = irgl::scratch_alloc<int32_t>(static_cast<irgl_index>(most));
    s.recv_pos = irgl::scratch_alloc<int32_t>(static_cast<irgl_index>(most));
    s.send_dense = static_cast<char*>(irgl::scratch_bytes(static_cast<size_t>(most) * 8, false));
    std::vector<int64_t> mir_bounds(s.mir_off), mas_bounds(s.mas_off);
    mir_bounds.push_back(s.total_mirrors);
    mas_bounds.push_back(s.total_masters);
    s.mir_off_dev = irgl::scratch_alloc<int64_t>(static_cast<irgl_index>(s.world + 1));
    s.mas_off_dev = irgl::scratch_alloc<int64_t>(static_cast<irgl_index>(s.world + 1));
    IRGL_CHECK(cudaMemcpy(s.mir_off_dev, mir_bounds.data(), 8 * mir_bounds.size(), cudaMemcpyHostToDevice));
    IRGL_CHECK(cudaMemcpy(s.mas_off_dev, mas_bounds.data(), 8 * mas_bounds.size(), cudaMemcpyHostToDevice));
    // two lists a rank at most (sync_worklist reduce ... late_broadcast)
    s.row = irgl::scratch_alloc<int64_t>(static_cast<irgl_index>(2 * s.world));
    s.matrix = irgl::scratch_alloc<int64_t>(static_cast<irgl_index>(2 * s.world * s.world));
    IRGL_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.matrix_host), 16 * static_cast<size_t>(s.world * s.world)));
    IRGL_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.counts_host), 2 * sizeof(int64_t)));
    s.partition = true;
    // Update tracking costs a host round trip per direction (the counts);
    // it pays where a whole list takes longer than that to send. Every rank
    // must choose alike: the largest list decides (IRGL_DIST_TRACK=0/1
    // forces a choice).
    const char* track = std::getenv("IRGL_DIST_TRACK");
    if (track != nullptr && (std::strcmp(track, "0") == 0 || std::strcmp(track, "1") == 0)) {
      s.track_updates = track[0] == '1';
    } else {
      const int64_t largest = irgl::dist::allreduce_value<int64_t>(most, irgl::dist::kMax);
      s.track_updates = largest * 4 >= irgl::dist::kTrackBytes;
    }
  });
}

/// The hot nodes (irgl_runner.partition.hot_nodes, laid out by hot_groups):
/// `count` entries in `world` groups of one size, group q the nodes rank q
/// masters, each entry its local id here or -1 where the rank holds no copy
/// (so a master in this rank's group, else a mirror or -1). Call it after
/// irgl_dist_setup (0: none); reduce-only exchanges then refresh their
/// copies after each round that activates at least `min_active` masters.
IRGL_EXPORT int irgl_dist_hot(int64_t count, const int64_t* local_ids, int64_t min_active) {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::ready_state();
    if (count < 0 || count % s.world != 0)
      throw irgl::Error("irgl_dist_hot: the count " + std::to_string(static_cast<long long>(count)) +
                        " is not a multiple of the " + std::to_string(s.world) + " ranks");
    const int64_t group = count / s.world;
    for (int64_t i = 0; i < count; ++i) {
      const bool mine = i / group == s.rank;
      const int64_t id = local_ids[i];
      if (id != -1 && (mine ? id < 0 || id >= s.num_masters : id < s.num_masters || id >= s.num_local))
        throw irgl::Error("irgl_dist_hot: entry " + std::to_string(static_cast<long long>(i)) + " is neither " +
                          (mine ? "a master" : "a mirror") + " here nor -1");
    }
    irgl::dist::free_hot(s);
    if (count == 0) return;
    s.hot = irgl::dist::upload_ids(local_ids, count);
    s.hot_buf = static_cast<char*>(irgl::scratch_bytes(static_cast<size_t>(count) * 8, false));
    s.hot_count = count;
    s.hot_min_active = min_active > 0 ? min_active : 1;
  });
}

/// Takes the agreed copy of a device array of `bytes` bytes (the runner
/// calls it for every array argument before a call; lowered code for every
/// array a distributed program allocates).
IRGL_EXPORT int irgl_dist_track(const void* a, int64_t bytes) {
  return irgl::guard([&] { irgl::dist::track(a, bytes, true); });
}

/// Every rank gets the global array of a node array's masters: rank r's
/// first counts[r] elements (of elem_bytes) land at offsets[r] of `global`.
IRGL_EXPORT int irgl_dist_allgather_masters(const void* local, void* global, int64_t elem_bytes,
                                            const int64_t* counts, const int64_t* offsets) {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::ready_state();
    const char* what = "gathering the masters' results";
    irgl::dist::begin(s);
    irgl::dist::group_start(s, what);
    for (int r = 0; r < s.world; ++r) {
      if (counts[r] <= 0) continue;
      irgl::dist::nccl_done(
          s,
          ncclBroadcast(local, static_cast<char*>(global) + offsets[r] * elem_bytes,
                        static_cast<size_t>(counts[r] * elem_bytes), ncclChar, r, s.comm, s.stream),
          what);
    }
    irgl::dist::group_end(s, what);
    irgl::dist::wait_stream(s, what);
  });
}

/// A barrier over all ranks (bounded by the timeout).
IRGL_EXPORT int irgl_dist_barrier() {
  return irgl::guard([&] { (void)irgl::dist::allreduce_value<int32_t>(1, irgl::dist::kAdd); });
}

/// *out = the largest of the ranks' `value` (bounded by the timeout).
IRGL_EXPORT int irgl_dist_max_int64(int64_t value, int64_t* out) {
  return irgl::guard([&] { *out = irgl::dist::allreduce_value<int64_t>(value, irgl::dist::kMax); });
}

/// Communication counters since init: bytes sent, collective steps, seconds
/// waited for NCCL, all-reduced host values (the rounds' termination
/// tests) (out[0..3]).
IRGL_EXPORT int irgl_dist_stats(double* out) {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::state();
    if (s.comm != nullptr) irgl::dist::settle(s);
    out[0] = s.bytes_sent;
    out[1] = s.collectives;
    out[2] = s.seconds;
    out[3] = s.termination_tests;
  });
}

/// Frees the partition and destroys the communicator (never blocks for
/// longer than the timeout).
IRGL_EXPORT int irgl_dist_finalize() {
  return irgl::guard([&] {
    irgl::dist::State& s = irgl::dist::state();
    for (const auto& entry : s.host_profile)
      std::fprintf(stderr, "irgl_dist profile: rank %d: %s: %.0f calls, %.3f ms host time, %.1f us per call\n", s.rank,
                   entry.first.c_str(), entry.second.second, entry.second.first * 1e3,
                   entry.second.first * 1e6 / (entry.second.second > 0 ? entry.second.second : 1));
    if (s.comm != nullptr) irgl::dist::settle(s);
    irgl::dist::free_partition(s);
    if (s.comm != nullptr) {
      irgl::dist::nccl_done(s, ncclCommFinalize(s.comm), "finalizing the NCCL communicator");
      ncclCommDestroy(s.comm);
      s.comm = nullptr;
    }
    s.ready = false;
  });
}

IRGL_DIST_ARRAY(i32, int32_t)
IRGL_DIST_ARRAY(i64, int64_t)
IRGL_DIST_ARRAY(f32, float)
IRGL_DIST_ARRAY(f64, double)
IRGL_DIST_VALUE(i1, bool)
IRGL_DIST_VALUE(i32, int32_t)
IRGL_DIST_VALUE(i64, int64_t)
IRGL_DIST_VALUE(f32, float)
IRGL_DIST_VALUE(f64, double)
IRGL_DIST_ARRAY(index, irgl_index)
IRGL_DIST_VALUE(index, irgl_index)
#undef IRGL_DIST_ARRAY
#undef IRGL_DIST_VALUE
#undef IRGL_DIST_GRID_LOOP
#endif  // IRGL_DISTRIBUTED

#ifdef IRGL_COUNT_EDGES
// The program's atomic read-modify-writes in a counting build (for
// measuring work, never for timing): every atomicAdd/Min/Max/Exch/CAS/Or/
// And/Xor that the program's code calls after this point (memref.atomic_rmw,
// C text) also adds one to irgl_atomic_count; the runtime's own atomics
// above (worklist tails, locks, counters) are not counted. SSSP's atomic
// minimums (a distance improved) and stamp exchanges (a push) are its
// updates, whose number differs between sources of equal edges. Read and
// reset by irgl_atomics_take.
__device__ unsigned long long irgl_atomic_count;
__device__ __forceinline__ void irgl_count_atomic() { ::atomicAdd(&irgl_atomic_count, 1ull); }
#define atomicAdd(...) (irgl_count_atomic(), ::atomicAdd(__VA_ARGS__))
#define atomicMin(...) (irgl_count_atomic(), ::atomicMin(__VA_ARGS__))
#define atomicMax(...) (irgl_count_atomic(), ::atomicMax(__VA_ARGS__))
#define atomicExch(...) (irgl_count_atomic(), ::atomicExch(__VA_ARGS__))
#define atomicCAS(...) (irgl_count_atomic(), ::atomicCAS(__VA_ARGS__))
#define atomicOr(...) (irgl_count_atomic(), ::atomicOr(__VA_ARGS__))
#define atomicAnd(...) (irgl_count_atomic(), ::atomicAnd(__VA_ARGS__))
#define atomicXor(...) (irgl_count_atomic(), ::atomicXor(__VA_ARGS__))
#if IRGL_HOST_CODE
/// A counting build's atomics of the program since the last call (see
/// irgl_atomic_count), then zero; synchronizes. 0 = ok, 1 = error.
extern "C" __attribute__((used, visibility("default"))) int irgl_atomics_take(unsigned long long* out) {
  return irgl::guard([&] { irgl::detail::take_counter(out, irgl_atomic_count); });
}
#endif
#endif  // IRGL_COUNT_EDGES
