// GPU unit test of the retry-backoff runtime: retry rounds counted in the
// `in` handle by the pipe (irgl_pipe_advance_retry / irgl_pipe_advance, through
// irgl_wl_next_round / irgl_wl_first_round), the grid
// of a re-launch (irgl_pipe_backoff_grid) and the chunk a kernel uses
// (irgl_backoff_chunk), read on the device from a kernel argument.
#include "test_common.cuh"

#include <vector>

/// out[0] := the retry round of `in`, out[1] := its chunk for `per_thread`.
__global__ void read_round(irgl::Worklist in, irgl_index per_thread, irgl_index* out) {
  if (irgl_global_thread_id() == 0) {
    const irgl_index round = irgl_wl_retry_round(in);
    out[0] = round;
    out[1] = irgl_backoff_chunk(round, per_thread);
  }
}

/// Pushes `n` items to `wl` (one per thread).
__global__ void push_n(irgl::Worklist wl, int n) {
  const irgl_index i = irgl_global_thread_id();
  if (i < n) irgl_wl_push(wl, i);
}

static std::vector<irgl_index> device_round(irgl::Pipe* p, irgl_index per_thread) {
  irgl_index* out = irgl_alloc<irgl_index>(2);
  irgl::launch(read_round, 1, 32, irgl_pipe_in(p), per_thread, out);
  std::vector<irgl_index> h(2);
  IRGL_CHECK(cudaMemcpy(h.data(), out, 2 * sizeof(irgl_index), cudaMemcpyDeviceToHost));
  irgl_free(out);
  return h;
}

int main() {
  run_test("pipe counts retry rounds in the in handle", [] {
    irgl::Pipe* p = irgl_pipe_create(100000);
    EXPECT(irgl_wl_retry_round(irgl_pipe_in(p)) == 0, "fresh pipe");
    irgl::launch(push_n, 40, 256, irgl_pipe_retry(p), 10000);
    irgl_pipe_advance_retry(p);
    EXPECT(irgl_wl_retry_round(irgl_pipe_in(p)) == 1, "after one retry swap: %d",
           (int)irgl_wl_retry_round(irgl_pipe_in(p)));
    EXPECT(irgl_wl_retry_round(irgl_pipe_retry(p)) == 0, "the new retry is round 0");
    std::vector<irgl_index> dev = device_round(p, 1);
    EXPECT(dev[0] == 1 && dev[1] == 2, "device: round %d chunk %d", (int)dev[0], (int)dev[1]);
    // 10000 items in round 1: 5000 threads, 20 blocks of 256 (at most 100)
    EXPECT(irgl_pipe_backoff_grid(p, 100, 256) == 20, "grid %d",
           (int)irgl_pipe_backoff_grid(p, 100, 256));
    EXPECT(irgl_pipe_backoff_grid(p, 7, 256) == 7, "capped by the first grid");
    irgl::launch(push_n, 40, 256, irgl_pipe_retry(p), 3000);
    irgl_pipe_advance_retry(p);
    EXPECT(irgl_wl_retry_round(irgl_pipe_in(p)) == 2, "after two retry swaps");
    dev = device_round(p, 3);
    EXPECT(dev[0] == 2 && dev[1] == 4, "device: round %d chunk %d", (int)dev[0], (int)dev[1]);
    // 3000 items in round 2: 750 threads, 3 blocks
    EXPECT(irgl_pipe_backoff_grid(p, 100, 256) == 3, "grid %d",
           (int)irgl_pipe_backoff_grid(p, 100, 256));
    irgl_pipe_advance(p);
    EXPECT(irgl_wl_retry_round(irgl_pipe_in(p)) == 0, "advance resets in");
    EXPECT(irgl_wl_retry_round(irgl_pipe_out(p)) == 0, "advance resets out");
    EXPECT(irgl_pipe_backoff_grid(p, 100, 256) == 100, "round 0 keeps the grid");
    irgl_pipe_destroy(p);
  });

  run_test("a single retried item gets one block", [] {
    irgl::Pipe* p = irgl_pipe_create(1000);
    irgl::launch(push_n, 1, 32, irgl_pipe_retry(p), 1);
    irgl_pipe_advance_retry(p);
    EXPECT(irgl_pipe_backoff_grid(p, 100, 1024) == 1, "grid %d",
           (int)irgl_pipe_backoff_grid(p, 100, 1024));
    irgl_pipe_destroy(p);
  });

  run_test("control-kernel round counting", [] {
    irgl::Worklist a{}, b{};
    b = irgl_wl_next_round(b, a);
    a = irgl_wl_next_round(a, b);
    EXPECT(irgl_wl_retry_round(a) == 2, "round %d", (int)irgl_wl_retry_round(a));
    EXPECT(irgl_wl_retry_round(irgl_wl_first_round(a)) == 0, "reset");
    EXPECT(irgl_backoff_chunk(100, 1) == (irgl_index(1) << IRGL_BACKOFF_MAX_SHIFT), "cap");
  });

  return finish();
}
