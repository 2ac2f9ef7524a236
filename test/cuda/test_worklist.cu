// GPU tests of the worklist and pipe runtime: warp-aggregated push under
// divergence, pushes to different worklists from one call site, pop, overflow
// detection without out-of-bounds writes, and the pipe rotation functions.
#include "test_common.cuh"

#include <algorithm>

static const int N = 1 << 20;  // threads

/// How many items thread i pushes in divergent_push (0 to 5).
__host__ __device__ inline int extra_pushes(int i) { return i % 7 == 0 ? i % 5 : 0; }

/// Every thread whose id is not a multiple of 3 pushes its id; multiples of 7
/// additionally push (i % 5) items in a divergent loop.
__global__ void divergent_push(irgl::Worklist out, int n) {
  int i = irgl_global_thread_id();
  if (i >= n) return;
  if (i % 3 != 0) irgl_wl_push(out, i);
  for (int k = 0; k < extra_pushes(i); ++k) irgl_wl_push(out, n + 5 * i + k);
}

/// One call site, two worklists: odd ids to a, even ids to b.
__global__ void split_push(irgl::Worklist a, irgl::Worklist b, int n) {
  int i = irgl_global_thread_id();
  if (i >= n) return;
  irgl_wl_push((i & 1) ? a : b, i);
}

/// Pops every item of in (grid-stride) and pushes 2 * item + 1 to out.
__global__ void pop_push(irgl::Worklist in, irgl::Worklist out) {
  for (irgl_index i = irgl_global_thread_id(); i < irgl_wl_size(in); i += irgl_global_num_threads())
    irgl_wl_push(out, 2 * irgl_wl_item(in, i) + 1);
}

/// Every thread pushes its id (for the overflow tests).
__global__ void push_all(irgl::Worklist out, int n) {
  int i = irgl_global_thread_id();
  if (i < n && (i % 2 == 0 || i % 3 == 0)) irgl_wl_push(out, i);  // divergent
  if (i < n && !(i % 2 == 0 || i % 3 == 0)) irgl_wl_push(out, i);
}

static std::vector<int32_t> sorted_items(const irgl::Worklist& wl, irgl_index n) {
  std::vector<int32_t> v = to_host(wl.items, static_cast<size_t>(n));
  std::sort(v.begin(), v.end());
  return v;
}

int main() {
  run_test("divergent push gives exactly the pushed multiset", [] {
    std::vector<int32_t> expected;
    for (int i = 0; i < N; ++i) {
      if (i % 3 != 0) expected.push_back(i);
      for (int k = 0; k < extra_pushes(i); ++k) expected.push_back(N + 5 * i + k);
    }
    std::sort(expected.begin(), expected.end());
    irgl::Pipe* p = irgl_pipe_create(static_cast<irgl_index>(expected.size()) + 10);
    irgl::launch(divergent_push, N / 256, 256, irgl_pipe_out(p), N);
    EXPECT(irgl_pipe_out_size(p) == (irgl_index)expected.size(), "out size %d, expected %zu",
           (int)irgl_pipe_out_size(p), expected.size());
    irgl_pipe_advance(p);
    EXPECT(irgl_pipe_out_size(p) == 0, "out not cleared by advance");
    const irgl_index n = irgl_pipe_in_size(p);
    EXPECT(n == (irgl_index)expected.size(), "in size %d after advance", (int)n);
    EXPECT(sorted_items(irgl_pipe_in(p), n) == expected, "pushed multiset differs");
    // Pop the items and push 2x+1: the next in holds exactly that.
    irgl::launch(pop_push, 1000, 128, irgl_pipe_in(p), irgl_pipe_out(p));
    irgl_pipe_advance(p);
    std::vector<int32_t> twice;
    for (int32_t x : expected) twice.push_back(2 * x + 1);
    EXPECT(irgl_pipe_in_size(p) == n, "pop/push size %d", (int)irgl_pipe_in_size(p));
    EXPECT(sorted_items(irgl_pipe_in(p), n) == twice, "pop/push multiset differs");
    irgl_pipe_destroy(p);
  });

  run_test("one call site pushing to two worklists", [] {
    irgl::Pipe* p = irgl_pipe_create(N);
    irgl::launch(split_push, N / 128, 128, irgl_pipe_out(p), irgl_pipe_retry(p), N);
    EXPECT(irgl_pipe_out_size(p) == N / 2, "out size %d", (int)irgl_pipe_out_size(p));
    EXPECT(irgl_pipe_retry_size(p) == N / 2, "retry size %d", (int)irgl_pipe_retry_size(p));
    std::vector<int32_t> odd, even;
    for (int i = 0; i < N; ++i) (i & 1 ? odd : even).push_back(i);
    EXPECT(sorted_items(irgl_pipe_out(p), N / 2) == odd, "out holds other than the odd ids");
    EXPECT(sorted_items(irgl_pipe_retry(p), N / 2) == even, "retry holds other than the even ids");
    // advance_retry: in := retry, retry := empty, out kept.
    irgl_pipe_advance_retry(p);
    EXPECT(irgl_pipe_in_size(p) == N / 2, "in size after advance_retry %d", (int)irgl_pipe_in_size(p));
    EXPECT(irgl_pipe_retry_size(p) == 0, "retry not cleared");
    EXPECT(irgl_pipe_out_size(p) == N / 2, "out not kept by advance_retry");
    EXPECT(sorted_items(irgl_pipe_in(p), N / 2) == even, "in is not the old retry");
    irgl_pipe_destroy(p);
  });

  run_test("overflow sets the flag and never writes out of bounds", [] {
    const int cap = 1000, guard = 1 << 16;
    const int32_t canary = 0x7eadbeef;
    int32_t* buf = irgl_alloc<int32_t>(cap + guard);
    std::vector<int32_t> fill(cap + guard, canary);
    IRGL_CHECK(cudaMemcpy(buf, fill.data(), fill.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    irgl::Worklist wl;
    wl.items = buf;
    wl.tail = irgl_alloc<irgl_index>(1);
    wl.overflow = reinterpret_cast<int*>(irgl_alloc<int32_t>(1));
    wl.capacity = cap;
    irgl::launch(push_all, N / 256, 256, wl, N);
    std::vector<int32_t> h = to_host(buf, cap + guard);
    int flag = to_host(wl.overflow, 1)[0];
    irgl_index tail = to_host(wl.tail, 1)[0];
    EXPECT(flag == 1, "overflow flag %d", flag);
    EXPECT(tail == N, "tail %d (pushes attempted)", (int)tail);
    int bad_guard = 0;
    for (int k = cap; k < cap + guard; ++k) bad_guard += h[k] != canary;
    EXPECT(bad_guard == 0, "%d guard words overwritten", bad_guard);
    std::vector<int32_t> kept(h.begin(), h.begin() + cap);
    std::sort(kept.begin(), kept.end());
    bool valid = std::adjacent_find(kept.begin(), kept.end()) == kept.end() && kept.front() >= 0 &&
                 kept.back() < N;
    EXPECT(valid, "the %d kept items are not distinct pushed ids", cap);
    irgl_free(buf);
    irgl_free(wl.tail);
    irgl_free(wl.overflow);
  });

  run_test("pipe advance reports overflow as irgl::Error", [] {
    irgl::Pipe* p = irgl_pipe_create(1000);
    irgl::launch(push_all, N / 256, 256, irgl_pipe_out(p), N);
    EXPECT(irgl_pipe_out_size(p) == 1000, "out size not clamped: %d", (int)irgl_pipe_out_size(p));
    std::string msg;
    try {
      irgl_pipe_advance(p);
    } catch (const irgl::Error& e) {
      msg = e.what();
    }
    EXPECT(msg.rfind("worklist overflow: capacity 1000 exceeded", 0) == 0, "message: '%s'", msg.c_str());
    // guard() turns it into a return code and a stored message.
    int rc = irgl::guard([&] { irgl_pipe_advance(p); });
    EXPECT(rc == 1, "guard returned %d", rc);
    EXPECT(std::string(irgl_last_error()).find("worklist overflow") != std::string::npos, "last error '%s'",
           irgl_last_error());
    irgl_pipe_destroy(p);
    // The device is still usable.
    EXPECT(irgl_device_synchronize() == 0, "device unusable after overflow: %s", irgl_last_error());
  });

  run_test("initial worklists", [] {
    irgl::Pipe* p = irgl_pipe_create(8);
    irgl_pipe_push_initial(p, 5);
    irgl_pipe_push_initial(p, 7);
    EXPECT(irgl_pipe_in_size(p) == 2, "in size %d", (int)irgl_pipe_in_size(p));
    std::vector<int32_t> in = to_host(irgl_pipe_in(p).items, 2);
    EXPECT(in[0] == 5 && in[1] == 7, "in = [%d, %d]", in[0], in[1]);
    int32_t* a = irgl_alloc<int32_t>(8);
    std::vector<int32_t> src = {1, 2, 3, 4, 5, 6, 7, 8};
    IRGL_CHECK(cudaMemcpy(a, src.data(), 32, cudaMemcpyHostToDevice));
    irgl_pipe_init_from_array_i32(p, a, 8);
    EXPECT(irgl_pipe_in_size(p) == 8 && to_host(irgl_pipe_in(p).items, 8) == src, "init_from_array_i32");
    bool threw = false;
    try {
      irgl_pipe_push_initial(p, 9);
    } catch (const irgl::Error&) {
      threw = true;
    }
    EXPECT(threw, "push_initial past the capacity did not throw");
    irgl_index* ai = irgl_alloc<irgl_index>(3);
    std::vector<irgl_index> srci = {30, 20, 10};
    IRGL_CHECK(cudaMemcpy(ai, srci.data(), 3 * sizeof(irgl_index), cudaMemcpyHostToDevice));
    irgl_pipe_init_from_array_index(p, ai, 3);
    std::vector<int32_t> got = to_host(irgl_pipe_in(p).items, 3);
    EXPECT(irgl_pipe_in_size(p) == 3 && got[0] == 30 && got[1] == 20 && got[2] == 10,
           "init_from_array_index");
    threw = false;
    try {
      irgl_pipe_init_from_array_i32(p, a, 9);
    } catch (const irgl::Error&) {
      threw = true;
    }
    EXPECT(threw, "init_from_array past the capacity did not throw");
    irgl::launch(pop_push, 0, 128, irgl_pipe_in(p), irgl_pipe_out(p));  // 0 blocks: no-op
    EXPECT(irgl_pipe_out_size(p) == 0, "a 0-block launch ran");
    irgl_free(a);
    irgl_free(ai);
    irgl_pipe_destroy(p);
  });

  return finish();
}
