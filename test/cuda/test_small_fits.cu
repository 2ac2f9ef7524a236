// GPU tests of irgl_ctl_small_fits, the small-worklist mode's test of a
// round boundary where the loop's kernels take a graph: at most `max_items`
// items whose out-degrees add up to at most `max_edges`, the same answer in
// every block, nothing loaded where the items at the graph's largest degree
// fit.
#include "test_common.cuh"

#include <vector>

static const int BLOCKS = 5;
static const int BLOCK = 256;

/// Every block asks once (and again right after, to check that one call's
/// readers are done before the next call resets the shared sum); thread 0
/// records both answers.
__global__ void ask(irgl::Worklist wl, irgl_index size, irgl_index max_items, irgl::Graph g,
                    int64_t max_edges, int32_t* answers) {
  const bool first = irgl_ctl_small_fits(wl, size, max_items, g, max_edges);
  const bool second = irgl_ctl_small_fits(wl, size, max_items, g, max_edges);
  if (threadIdx.x == 0) {
    answers[2 * blockIdx.x] = first;
    answers[2 * blockIdx.x + 1] = second;
  }
}

/// A hub (node 0) joined to nodes 1..leaves, and a path among the leaves:
/// node 0 has degree `leaves`, node 1 and the last leaf 2, the others 3.
static std::vector<int64_t> hub_rows(int leaves, std::vector<int64_t>& dst) {
  std::vector<std::vector<int64_t>> adj(leaves + 1);
  for (int v = 1; v <= leaves; ++v) {
    adj[0].push_back(v);
    adj[v].push_back(0);
    if (v > 1) adj[v].push_back(v - 1);
    if (v < leaves) adj[v].push_back(v + 1);
  }
  std::vector<int64_t> rs = {0};
  for (const auto& a : adj) {
    dst.insert(dst.end(), a.begin(), a.end());
    rs.push_back(static_cast<int64_t>(dst.size()));
  }
  return rs;
}

/// The answers of every block for these items, or {} where they differ.
static std::vector<int32_t> answers_of(const std::vector<int32_t>& items, irgl_index max_items, irgl::Graph g,
                                       int64_t max_edges) {
  irgl::Worklist wl;
  wl.items = irgl_alloc<int32_t>(items.size() + 1);
  if (!items.empty())
    IRGL_CHECK(cudaMemcpy(wl.items, items.data(), items.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  wl.tail = irgl_alloc<irgl_index>(1);
  wl.overflow = reinterpret_cast<int*>(irgl_alloc<int32_t>(1));
  wl.capacity = static_cast<irgl_index>(items.size() + 1);
  int32_t* answers = irgl_alloc<int32_t>(2 * BLOCKS);
  irgl::launch(ask, BLOCKS, BLOCK, wl, static_cast<irgl_index>(items.size()), max_items, g, max_edges, answers);
  IRGL_CHECK(cudaDeviceSynchronize());
  std::vector<int32_t> got = to_host(answers, 2 * BLOCKS);
  irgl_free(wl.items);
  irgl_free(wl.tail);
  irgl_free(wl.overflow);
  irgl_free(answers);
  return got;
}

/// Whether every block gave `want` twice.
static bool all_are(const std::vector<int32_t>& got, bool want) {
  for (int32_t a : got)
    if (a != static_cast<int32_t>(want)) return false;
  return !got.empty();
}

int main() {
  const int leaves = 3000;  // more items than a block's threads: each thread sums several
  std::vector<int64_t> dst;
  std::vector<int64_t> rs = hub_rows(leaves, dst);
  void* h = irgl_graph_create(leaves + 1, static_cast<int64_t>(dst.size()), rs.data(), dst.data(), nullptr);
  if (!h) {
    std::fprintf(stderr, "graph: %s\n", irgl_last_error());
    return 1;
  }
  const irgl::Graph g = *static_cast<irgl::Graph*>(h);

  run_test("more items than the threshold do not fit", [&] {
    std::vector<int32_t> items = {1, 2, 3};
    EXPECT(all_are(answers_of(items, 2, g, 1 << 30), false), "3 items, threshold 2");
  });

  run_test("the items' degrees are summed against the bound", [&] {
    std::vector<int32_t> leaves_only;
    for (int v = 1; v <= leaves; ++v) leaves_only.push_back(v);  // 3 * 3000 - 2 edges
    const int64_t sum = 3 * leaves - 2;
    EXPECT(all_are(answers_of(leaves_only, leaves, g, sum), true), "exactly the sum");
    EXPECT(all_are(answers_of(leaves_only, leaves, g, sum - 1), false), "one edge under the sum");
    std::vector<int32_t> with_hub = {1, 0, 2};  // 2 + 3000 + 3 edges
    EXPECT(all_are(answers_of(with_hub, 16, g, 3005), true), "hub within 3005");
    EXPECT(all_are(answers_of(with_hub, 16, g, 3004), false), "hub over 3004");
  });

  run_test("no items, or items that fit at the largest degree, fit", [&] {
    EXPECT(all_are(answers_of({}, 16, g, 0), true), "no items");
    // 2 items x largest degree 3000 <= 6000: fits without a sum
    std::vector<int32_t> two = {0, 0};
    EXPECT(all_are(answers_of(two, 16, g, 6000), true), "two hubs within 6000");
    EXPECT(all_are(answers_of(two, 16, g, 5999), false), "two hubs over 5999");
  });

  irgl_graph_destroy(h);
  return finish();
}
