// The CPU driver of benchmarks/dmr/cpu.py, compiled after the file-scope C
// of dmr.mlir (dmr_mesh.cuh: the dmr_* helpers and DMR_* constants).
//
// It runs what @main, @identify_bad_triangles and @refine do, with the
// kernels' launches simulated the way the lowering runs them on the GPU with
// `threads` threads. A launch over a worklist of W items is ceil(W / threads)
// rounds; in round r thread `tid` takes slot r * threads + tid and contends
// with priority tid + 1 (convert-irgl-loops' uniform rounds and
// convert-irgl-exclusive's claim protocol: after the race and the priority
// check every claim cell holds the highest priority that claimed it, so a
// thread wins if it holds every cell it claimed). Pushes, and the losers
// (`irgl.retry %t merge`), go to the next launch's worklist: the GPU appends
// them a warp at a time (warp-aggregated atomics) in the order the warps get
// there, modelled as warps in thread order (DMR_ORDER_THREADS) or in a random
// order, the losers' retries before the winners' pushes, which come after a
// re-triangulation (DMR_ORDER_WARPS).
#include <algorithm>
#include <vector>

enum { DMR_ORDER_THREADS = 0, DMR_ORDER_WARPS = 1 };
// What-if: priorities from a hash of the thread id instead of the thread id (not what the lowering does today).
enum { DMR_PRIORITY_SLOT = 0, DMR_PRIORITY_HASHED = 1 };

struct DmrSlot {
  int t, status, lock[DMR_CAV], info[DMR_INFO];
  double pt[2];
};

// Per-round counters written to the caller's log (DMR_LOG_FIELDS ints a round).
enum { DMR_LOG_LAUNCH, DMR_LOG_ITEMS, DMR_LOG_FIXED, DMR_LOG_NOOP, DMR_LOG_LOST, DMR_LOG_FIELDS };

struct DmrSim {
  int threads, order, priority;
  unsigned rng;
  int* rows;
  int capacity, count;

  void log(int launch, int items, int fixed, int noop, int lost) {
    if (rows && count < capacity) {
      int* r = rows + DMR_LOG_FIELDS * count;
      r[DMR_LOG_LAUNCH] = launch;
      r[DMR_LOG_ITEMS] = items;
      r[DMR_LOG_FIXED] = fixed;
      r[DMR_LOG_NOOP] = noop;
      r[DMR_LOG_LOST] = lost;
    }
    ++count;
  }
  int prio(int tid) const {
    return priority == DMR_PRIORITY_HASHED ? (int)(((unsigned)tid * 2654435761u) & 0x7fffffffu) + 1 : tid + 1;
  }
  // Append the pushes of each warp (groups[w]) to `out`, the warps in the modelled order.
  void append(std::vector<std::vector<int>>& groups, std::vector<int>& out) {
    std::vector<int> warps(groups.size());
    for (size_t w = 0; w < warps.size(); ++w) warps[w] = (int)w;
    if (order == DMR_ORDER_WARPS)
      for (size_t w = warps.size(); w > 1; --w) {
        rng = rng * 1103515245u + 12345u;
        std::swap(warps[w - 1], warps[(rng >> 8) % w]);
      }
    for (int w : warps) {
      out.insert(out.end(), groups[w].begin(), groups[w].end());
      groups[w].clear();
    }
  }
};

static int dmr_locks(const DmrSlot& s) { return s.status > 0 ? s.status : 0; }
// The claim cells of a slot: lock[info[0] ..] (dmr_build_cavity sets info[0] = 0 when there are none).
static const int* dmr_claimed(const DmrSlot& s) { return s.lock + s.info[0]; }

/* One launch of @refine over `in`; pushes go to `out`. */
static void dmr_invoke_refine(double* xy, int* tri, int* nbr, int* flags, int* meta, int* claims,
                              const std::vector<int>& in, std::vector<int>& out, int launch, DmrSim& sim) {
  std::vector<DmrSlot> s;
  int nwarps = (sim.threads + 31) / 32;
  std::vector<std::vector<int>> retried(nwarps), pushed(nwarps);
  for (size_t first = 0; first < in.size(); first += sim.threads) {
    int n = (int)std::min(in.size() - first, (size_t)sim.threads);
    s.resize(n);
    // every thread builds its cavity on the same mesh (the cavities that do not fit are postponed)
    for (int i = 0; i < n; ++i) {
      DmrSlot& x = s[i];
      x.t = in[first + i];
      x.status = dmr_build_cavity(x.t, xy, tri, nbr, flags, x.lock, x.info, x.pt);
      if (x.status == DMR_TOO_BIG && dmr_postpone(flags, meta, x.t)) retried[i / 32].push_back(x.t);
      if (x.status == DMR_FAILED) dmr_fetch_add(&meta[DMR_GAVE_UP], 1);
    }
    // race and priority check: each claimed cell ends with the highest priority that claimed it
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < dmr_locks(s[i]); ++k) claims[dmr_claimed(s[i])[k]] = 0;
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < dmr_locks(s[i]); ++k) {
        int& cell = claims[dmr_claimed(s[i])[k]];
        cell = std::max(cell, sim.prio(i));
      }
    // check: the winners re-triangulate, the losers are retried with the next launch
    int fixed = 0, noop = 0, lost = 0;
    for (int i = 0; i < n; ++i) {
      DmrSlot& x = s[i];
      bool won = true;
      for (int k = 0; k < dmr_locks(x) && won; ++k) won = claims[dmr_claimed(x)[k]] == sim.prio(i);
      if (!won) {
        ++lost;
        retried[i / 32].push_back(x.t);
        continue;
      }
      if (x.status <= 0) {
        ++noop;
        continue;
      }
      ++fixed;
      int base = dmr_retriangulate(xy, tri, nbr, flags, meta, x.lock, x.info, x.pt);
      if (base < 0) continue;
      for (int t = base; t < base + x.info[5]; ++t)
        if (dmr_is_bad(xy, tri, t)) pushed[i / 32].push_back(t);
      if (!(flags[x.t] & DMR_DELETED)) pushed[i / 32].push_back(x.t);
    }
    sim.append(retried, out);
    sim.append(pushed, out);
    sim.log(launch, n, fixed, noop, lost);
  }
}

/* @identify_bad_triangles: the live bad triangles, visited as dmr.mlir does (dmr_scatter). */
static void dmr_identify(const double* xy, const int* tri, const int* flags, const int* meta, std::vector<int>& out,
                         DmrSim& sim) {
  int ntri = dmr_num_triangles(meta), nwarps = (sim.threads + 31) / 32;
  std::vector<std::vector<int>> pushed(nwarps);
  for (int first = 0; first < ntri; first += sim.threads) {
    for (int i = first; i < ntri && i < first + sim.threads; ++i) {
      int t = dmr_scatter(i, ntri);
      if (dmr_alive_and_bad(xy, tri, flags, t)) pushed[(i - first) / 32].push_back(t);
    }
    sim.append(pushed, out);
  }
}

/* The Pipe of @main: returns the number of live bad triangles left. `log`
   (room for `log_capacity` rounds, may be null) gets DMR_LOG_FIELDS counters
   a round; *log_count is the number of rounds (also those without room). */
extern "C" int dmr_cpu_refine(double* xy, int* tri, int* nbr, int* flags, int* meta, int* claims, int threads,
                              int order, int priority, unsigned seed, int* log, int log_capacity, int* log_count) {
  DmrSim sim{threads, order, priority, seed, log, log_capacity, 0};
  std::vector<int> work, next;
  dmr_identify(xy, tri, flags, meta, work, sim);
  meta[DMR_INITIAL_BAD] = (int)work.size();
  for (int launch = 0; !work.empty() && !meta[DMR_OVERFLOW]; ++launch) {
    next.clear();
    dmr_invoke_refine(xy, tri, nbr, flags, meta, claims, work, next, launch, sim);
    work.swap(next);
  }
  if (log_count) *log_count = sim.count;
  int bad = 0;
  for (int t = 0; t < dmr_num_triangles(meta); ++t) bad += dmr_alive_and_bad(xy, tri, flags, t);
  meta[DMR_NBAD] = bad;
  return bad;
}
