// The CPU driver of benchmarks/dmr/cpu.py, compiled after the file-scope C
// of dmr.mlir (dmr_mesh.cuh: the dmr_* helpers and DMR_* constants).
#include <algorithm>
#include <vector>

struct DmrSlot {
  int t, status, lock[DMR_CAV], info[DMR_INFO];
  double pt[2];
};

static bool dmr_all_mine(const int* claims, const DmrSlot& s, int prio) {
  for (int k = 0; k < (s.status > 0 ? s.status : 0); ++k)
    if (claims[s.lock[k]] != prio) return false;
  return true;
}

/* @refine on one worklist, `threads` items per round as on the GPU: all build
   their cavity, claim (race in a shuffled order, losers raise, check) and the
   winners re-triangulate; the losers are retried. Pushes go to `out`. */
static void dmr_invoke_refine(double* xy, int* tri, int* nbr, int* flags, int* meta, int* claims,
                              std::vector<int> in, std::vector<int>& out, int threads, unsigned& rng) {
  std::vector<int> retry;
  while (!in.empty()) {
    retry.clear();
    for (size_t first = 0; first < in.size(); first += threads) {
      int n = (int)std::min(in.size() - first, (size_t)threads);
      std::vector<DmrSlot> s(n);
      std::vector<int> order(n);
      for (int i = 0; i < n; ++i) {
        DmrSlot& x = s[i];
        x.t = in[first + i];
        x.status = dmr_build_cavity(x.t, xy, tri, nbr, flags, x.lock, x.info, x.pt);
        if (x.status == DMR_TOO_BIG && dmr_postpone(flags, meta, x.t)) out.push_back(x.t);
        if (x.status == DMR_FAILED) dmr_fetch_add(&meta[DMR_GAVE_UP], 1);
        order[i] = i;
      }
      for (int i = n - 1; i > 0; --i) {
        rng = rng * 1103515245u + 12345u;
        std::swap(order[i], order[(rng >> 8) % (unsigned)(i + 1)]);
      }
      for (int i : order)
        for (int k = 0; k < (s[i].status > 0 ? s[i].status : 0); ++k) claims[s[i].lock[k]] = i + 1;
      for (int i : order)
        if (!dmr_all_mine(claims, s[i], i + 1))
          for (int k = 0; k < s[i].status; ++k)
            claims[s[i].lock[k]] = std::max(claims[s[i].lock[k]], i + 1);
      for (int i = 0; i < n; ++i) {
        DmrSlot& x = s[i];
        if (!dmr_all_mine(claims, x, i + 1)) {
          retry.push_back(x.t);
          continue;
        }
        if (x.status <= 0) continue;
        int base = dmr_retriangulate(xy, tri, nbr, flags, meta, x.lock, x.info, x.pt);
        if (base < 0) continue;
        for (int t = base; t < base + x.info[5]; ++t)
          if (dmr_is_bad(xy, tri, t)) out.push_back(t);
        if (!(flags[x.t] & DMR_DELETED)) out.push_back(x.t);
      }
    }
    in.swap(retry);
  }
}

/* The Pipe of @main: returns the number of live bad triangles left. */
extern "C" int dmr_cpu_refine(double* xy, int* tri, int* nbr, int* flags, int* meta, int* claims,
                              int threads) {
  std::vector<int> work, next;
  unsigned rng = 12345u;
  for (int t = 0; t < dmr_num_triangles(meta); ++t)
    if (dmr_alive_and_bad(xy, tri, flags, t)) work.push_back(t);
  meta[DMR_INITIAL_BAD] = (int)work.size();
  while (!work.empty() && !meta[DMR_OVERFLOW]) {
    next.clear();
    dmr_invoke_refine(xy, tri, nbr, flags, meta, claims, work, next, threads, rng);
    work.swap(next);
  }
  int bad = 0;
  for (int t = 0; t < dmr_num_triangles(meta); ++t) bad += dmr_alive_and_bad(xy, tri, flags, t);
  meta[DMR_NBAD] = bad;
  return bad;
}
