// GPU tests of Any/All reduction cells, the graph ABI (validation, upload,
// device accessors) and the extern "C" helpers.
#include "test_common.cuh"

#include <algorithm>

static const int N = 1 << 20;

/// Thread i reduces (i == hit) into the cell; hit < 0 means never true.
__global__ void reduce_eq(irgl::Cell c, int hit, int n) {
  int i = irgl_global_thread_id();
  if (i < n) irgl_cell_reduce(c, i == hit);
}

/// Thread i reduces (i != miss) into the cell.
__global__ void reduce_ne(irgl::Cell c, int miss, int n) {
  int i = irgl_global_thread_id();
  if (i < n) irgl_cell_reduce(c, i != miss);
}

/// out[n] = degree(n) * 1000 + sum of dst + sum of weights of node n.
__global__ void graph_summary(irgl::Graph g, long long* out) {
  for (irgl_index n = irgl_global_thread_id(); n < irgl_graph_num_nodes(g); n += irgl_global_num_threads()) {
    long long acc = irgl_graph_degree(g, n) * 1000LL;
    for (irgl_index e = irgl_graph_first_edge(g, n); e < irgl_graph_last_edge(g, n); ++e)
      acc += irgl_graph_edge_dst(g, e) + 100LL * irgl_graph_edge_weight(g, e);
    out[n] = acc;
  }
  if (irgl_global_thread_id() == 0) out[irgl_graph_num_nodes(g)] = irgl_graph_num_edges(g);
}

int main() {
  run_test("Any cell", [] {
    irgl::Cell c = irgl_cell_create(true);
    EXPECT(!irgl_cell_read(c), "fresh Any cell is true");
    irgl::launch(reduce_eq, N / 256, 256, c, -1, N);
    EXPECT(!irgl_cell_read(c), "Any of all-false is true");
    irgl::launch(reduce_eq, N / 256, 256, c, N - 5, N);
    EXPECT(irgl_cell_read(c), "Any with one true is false");
    irgl_cell_reset(c);
    EXPECT(!irgl_cell_read(c), "reset Any cell is true");
    irgl_cell_destroy(c);
  });

  run_test("All cell", [] {
    irgl::Cell c = irgl_cell_create(false);
    EXPECT(irgl_cell_read(c), "fresh All cell is false");
    irgl::launch(reduce_ne, N / 256, 256, c, -1, N);
    EXPECT(irgl_cell_read(c), "All of all-true is false");
    irgl::launch(reduce_ne, N / 256, 256, c, 12345, N);
    EXPECT(!irgl_cell_read(c), "All with one false is true");
    irgl_cell_reset(c);
    EXPECT(irgl_cell_read(c), "reset All cell is false");
    irgl_cell_destroy(c);
  });

  run_test("graph create, accessors, destroy", [] {
    // 0 -> 1 (w 5), 0 -> 2 (w 6), 2 -> 0 (w 7); node 1 has no edges.
    std::vector<int64_t> rs = {0, 2, 2, 3}, dst = {1, 2, 0};
    std::vector<int32_t> w = {5, 6, 7};
    void* h = irgl_graph_create(3, 3, rs.data(), dst.data(), w.data());
    EXPECT(h != nullptr, "create failed: %s", irgl_last_error());
    if (!h) return;
    irgl::Graph g = *static_cast<irgl::Graph*>(h);
    EXPECT(irgl_graph_num_nodes(g) == 3 && irgl_graph_num_edges(g) == 3, "sizes");
    EXPECT(irgl_graph_capacity(g) == 4, "capacity %d", (int)irgl_graph_capacity(g));
    long long* out = reinterpret_cast<long long*>(irgl_alloc<int64_t>(4));
    irgl::launch(graph_summary, 1, 64, g, out);
    std::vector<long long> s = to_host(out, 4);
    EXPECT(s[0] == 2000 + 3 + 1100 && s[1] == 0 && s[2] == 1000 + 0 + 700 && s[3] == 3,
           "summary %lld %lld %lld %lld", s[0], s[1], s[2], s[3]);
    irgl_graph_destroy(h);
    void* u = irgl_graph_create(3, 3, rs.data(), dst.data(), nullptr);  // unweighted: all 1
    EXPECT(u != nullptr, "unweighted create failed: %s", irgl_last_error());
    irgl::launch(graph_summary, 1, 64, *static_cast<irgl::Graph*>(u), out);
    s = to_host(out, 4);
    EXPECT(s[0] == 2000 + 3 + 200 && s[2] == 1000 + 100, "unweighted summary %lld %lld", s[0], s[2]);
    irgl_graph_destroy(u);
    void* empty = irgl_graph_create(0, 0, rs.data(), nullptr, nullptr);
    EXPECT(empty != nullptr, "empty graph: %s", irgl_last_error());
    irgl_graph_destroy(empty);
    irgl_free(out);
  });

  run_test("graph validation", [] {
    std::vector<int64_t> dst = {1, 2, 0};
    std::vector<int64_t> not_monotone = {0, 2, 1, 3}, bad_start = {1, 2, 2, 3}, bad_end = {0, 2, 2, 2};
    std::vector<int64_t> ok = {0, 2, 2, 3}, bad_dst = {1, 3, 0};
    struct Case {
      const int64_t* rs;
      const int64_t* dst;
      const char* needle;
    } cases[] = {{not_monotone.data(), dst.data(), "monotone"},
                 {bad_start.data(), dst.data(), "row_start[0]"},
                 {bad_end.data(), dst.data(), "row_start[3]"},
                 {ok.data(), bad_dst.data(), "destination 3"}};
    for (const Case& c : cases) {
      void* g = irgl_graph_create(3, 3, c.rs, c.dst, nullptr);
      EXPECT(g == nullptr, "invalid graph accepted (%s)", c.needle);
      EXPECT(std::string(irgl_last_error()).find(c.needle) != std::string::npos, "message '%s' lacks '%s'",
             irgl_last_error(), c.needle);
      irgl_graph_destroy(g);
    }
    EXPECT(irgl_graph_create(-1, 0, ok.data(), nullptr, nullptr) == nullptr, "negative node count accepted");
  });

  run_test("extern C helpers", [] {
    const char* name = irgl_device_name();
    EXPECT(name != nullptr && name[0] != 0, "device name: %s", irgl_last_error());
    void* d = irgl_device_alloc(64);
    EXPECT(d != nullptr, "alloc: %s", irgl_last_error());
    int src[16], back[16];
    for (int k = 0; k < 16; ++k) src[k] = k * k;
    EXPECT(irgl_copy_to_device(d, src, sizeof(src)) == 0, "copy_to_device: %s", irgl_last_error());
    EXPECT(irgl_copy_to_host(back, d, sizeof(back)) == 0, "copy_to_host: %s", irgl_last_error());
    EXPECT(std::equal(src, src + 16, back), "round trip differs");
    EXPECT(irgl_copy_to_host(back, d, -1) == 1, "negative copy returned 0");
    EXPECT(irgl_device_alloc(-1) == nullptr, "negative alloc accepted");
    EXPECT(irgl_device_alloc(int64_t(1) << 60) == nullptr, "an exabyte allocation succeeded");
    EXPECT(std::string(irgl_last_error()).find("cudaMalloc") != std::string::npos, "message '%s'",
           irgl_last_error());
    EXPECT(irgl_device_synchronize() == 0, "synchronize: %s", irgl_last_error());
    irgl_device_free(d);
  });

  return finish();
}
