// GPU tests of the spin lock (irgl_lock_try_i32 / irgl_lock_release_i32, the Atomic
// construct) and the ticket locks (irgl_ticket_acquire_i64 / _i32 and their
// releases) under heavy contention: 1M threads, 16 locks, non-atomic
// read-modify-writes of two fields inside the critical section; the 32-bit
// ticket lock also with every thread on one lock (more than its 65535 tickets). Lanes of one warp share locks, so this
// also checks the divergence-safe retry loop under independent scheduling.
#include "test_common.cuh"

static const int N = 1 << 20;
static const int LOCKS = 16;

/// Blocking Atomic: the divergence-safe retry loop the lowering emits.
__global__ void spin_critical(int32_t* locks, int* count, long long* sum, int n) {
  int i = irgl_global_thread_id();
  if (i >= n) return;
  int l = i % LOCKS;
  bool done = false;
  while (!done) {
    if (irgl_lock_try_i32(locks, l)) {
      count[l] = count[l] + 1;  // plain loads and stores
      sum[l] = sum[l] + i;
      irgl_lock_release_i32(locks, l);
      done = true;
    }
  }
}

/// Non-blocking Atomic with Else: one attempt; failures are counted.
__global__ void try_once(int32_t* locks, int* count, int* failed, int n) {
  int i = irgl_global_thread_id();
  if (i >= n) return;
  int l = i % LOCKS;
  if (irgl_lock_try_i32(locks, l)) {
    count[l] = count[l] + 1;
    irgl_lock_release_i32(locks, l);
  } else {
    atomicAdd(failed, 1);
  }
}

/// Blocking Atomic with the ticket lock (64-bit words).
__global__ void ticket_critical(int64_t* locks, int* count, long long* sum, int n) {
  int i = irgl_global_thread_id();
  if (i >= n) return;
  int l = i % LOCKS;
  irgl_ticket_acquire_i64(locks, l);
  count[l] = count[l] + 1;
  sum[l] = sum[l] + i;
  irgl_ticket_release_i64(locks, l);
}

/// Blocking Atomic with the ticket lock in 32-bit words, on `locks` locks.
__global__ void ticket32_critical(int32_t* locks, int* count, long long* sum, int n,
                                  int nlocks) {
  int i = irgl_global_thread_id();
  if (i >= n) return;
  int l = i % nlocks;
  irgl_ticket_acquire_i32(locks, l);
  count[l] = count[l] + 1;
  sum[l] = sum[l] + i;
  irgl_ticket_release_i32(locks, l);
}

static void check_totals(const int* count, const long long* sum, const char* what) {
  std::vector<int> c = to_host(count, LOCKS);
  std::vector<long long> s = to_host(sum, LOCKS);
  for (int l = 0; l < LOCKS; ++l) {
    long long expect_sum = 0;
    int expect_count = 0;
    for (int i = l; i < N; i += LOCKS) {
      expect_sum += i;
      ++expect_count;
    }
    EXPECT(c[l] == expect_count, "%s: lock %d count %d, expected %d", what, l, c[l], expect_count);
    EXPECT(s[l] == expect_sum, "%s: lock %d sum %lld, expected %lld", what, l, s[l], expect_sum);
  }
}

int main() {
  run_test("spin lock: exact totals under contention", [] {
    int32_t* locks = irgl_alloc<int32_t>(LOCKS);
    int* count = irgl_alloc<int32_t>(LOCKS);
    long long* sum = reinterpret_cast<long long*>(irgl_alloc<int64_t>(LOCKS));
    irgl::launch(spin_critical, N / 256, 256, locks, count, sum, N);
    IRGL_CHECK(cudaDeviceSynchronize());
    check_totals(count, sum, "spin");
    std::vector<int32_t> l = to_host(locks, LOCKS);
    for (int k = 0; k < LOCKS; ++k) EXPECT(l[k] == 0, "lock %d left held (%d)", k, l[k]);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(sum);
  });

  run_test("try lock: successes plus failures = threads", [] {
    int32_t* locks = irgl_alloc<int32_t>(LOCKS);
    int* count = irgl_alloc<int32_t>(LOCKS);
    int* failed = irgl_alloc<int32_t>(1);
    irgl::launch(try_once, N / 256, 256, locks, count, failed, N);
    std::vector<int> c = to_host(count, LOCKS);
    long long total = to_host(failed, 1)[0];
    for (int x : c) total += x;
    EXPECT(total == N, "successes + failures = %lld", total);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(failed);
  });

  run_test("ticket lock: exact totals under contention", [] {
    int64_t* locks = irgl_alloc<int64_t>(LOCKS);
    int* count = irgl_alloc<int32_t>(LOCKS);
    long long* sum = reinterpret_cast<long long*>(irgl_alloc<int64_t>(LOCKS));
    irgl::launch(ticket_critical, N / 256, 256, locks, count, sum, N);
    IRGL_CHECK(cudaDeviceSynchronize());
    check_totals(count, sum, "ticket");
    std::vector<int64_t> l = to_host(locks, LOCKS);
    const uint64_t per = N / LOCKS;
    for (int k = 0; k < LOCKS; ++k)
      EXPECT(static_cast<uint64_t>(l[k]) == ((per << 32) | per), "ticket word %d = %llx", k,
             (unsigned long long)l[k]);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(sum);
  });

  run_test("ticket lock: 32-bit wrap of the ticket counters", [] {
    int64_t* locks = irgl_alloc<int64_t>(LOCKS);
    int* count = irgl_alloc<int32_t>(LOCKS);
    long long* sum = reinterpret_cast<long long*>(irgl_alloc<int64_t>(LOCKS));
    // next = serving = 2^32 - 100: both halves wrap during the run.
    const uint64_t start = 0xffffffffull - 99;
    std::vector<int64_t> init(LOCKS, static_cast<int64_t>((start << 32) | start));
    IRGL_CHECK(cudaMemcpy(locks, init.data(), LOCKS * sizeof(int64_t), cudaMemcpyHostToDevice));
    irgl::launch(ticket_critical, N / 256, 256, locks, count, sum, N);
    IRGL_CHECK(cudaDeviceSynchronize());
    check_totals(count, sum, "ticket wrap");
    std::vector<int64_t> l = to_host(locks, LOCKS);
    const uint64_t end = (start + N / LOCKS) & 0xffffffffull;
    for (int k = 0; k < LOCKS; ++k)
      EXPECT(static_cast<uint64_t>(l[k]) == ((end << 32) | end), "ticket word %d = %llx", k,
             (unsigned long long)l[k]);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(sum);
  });

  run_test("32-bit ticket lock: exact totals under contention", [] {
    int32_t* locks = irgl_alloc<int32_t>(LOCKS);
    int* count = irgl_alloc<int32_t>(LOCKS);
    long long* sum = reinterpret_cast<long long*>(irgl_alloc<int64_t>(LOCKS));
    irgl::launch(ticket32_critical, N / 256, 256, locks, count, sum, N, LOCKS);
    IRGL_CHECK(cudaDeviceSynchronize());
    check_totals(count, sum, "ticket32");
    std::vector<int32_t> l = to_host(locks, LOCKS);
    const uint32_t per = (N / LOCKS) & 0xffffu;  // both halves wrap
    for (int k = 0; k < LOCKS; ++k)
      EXPECT(static_cast<uint32_t>(l[k]) == ((per << 16) | per), "ticket32 word %d = %x", k,
             (unsigned)l[k]);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(sum);
  });

  run_test("32-bit ticket lock: 16-bit wrap of the ticket counters", [] {
    int32_t* locks = irgl_alloc<int32_t>(LOCKS);
    int* count = irgl_alloc<int32_t>(LOCKS);
    long long* sum = reinterpret_cast<long long*>(irgl_alloc<int64_t>(LOCKS));
    // next = serving = 2^16 - 100: both halves wrap during the run.
    const uint32_t start = 0xffffu - 99;
    std::vector<int32_t> init(LOCKS, static_cast<int32_t>((start << 16) | start));
    IRGL_CHECK(cudaMemcpy(locks, init.data(), LOCKS * sizeof(int32_t), cudaMemcpyHostToDevice));
    const int n = 1 << 16;  // 4096 per lock
    irgl::launch(ticket32_critical, n / 256, 256, locks, count, sum, n, LOCKS);
    IRGL_CHECK(cudaDeviceSynchronize());
    std::vector<int> c = to_host(count, LOCKS);
    for (int k = 0; k < LOCKS; ++k)
      EXPECT(c[k] == n / LOCKS, "ticket32 wrap: lock %d count %d", k, c[k]);
    std::vector<int32_t> l = to_host(locks, LOCKS);
    const uint32_t end = (start + n / LOCKS) & 0xffffu;
    for (int k = 0; k < LOCKS; ++k)
      EXPECT(static_cast<uint32_t>(l[k]) == ((end << 16) | end), "ticket32 word %d = %x", k,
             (unsigned)l[k]);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(sum);
  });

  run_test("32-bit ticket lock: more threads on one lock than tickets", [] {
    // every resident thread queues on one lock: more than 65535 at once, so
    // taking a ticket must wait while all 16-bit tickets are out
    int32_t* locks = irgl_alloc<int32_t>(1);
    int* count = irgl_alloc<int32_t>(1);
    long long* sum = reinterpret_cast<long long*>(irgl_alloc<int64_t>(1));
    const int n = 1 << 19;
    irgl::launch(ticket32_critical, n / 256, 256, locks, count, sum, n, 1);
    IRGL_CHECK(cudaDeviceSynchronize());
    std::vector<int> c = to_host(count, 1);
    std::vector<long long> s = to_host(sum, 1);
    const long long expect = static_cast<long long>(n) * (n - 1) / 2;
    EXPECT(c[0] == n, "one lock: count %d, expected %d", c[0], n);
    EXPECT(s[0] == expect, "one lock: sum %lld, expected %lld", s[0], expect);
    std::vector<int32_t> l = to_host(locks, 1);
    EXPECT(l[0] == 0, "one lock: word %x, expected 0 (2^19 tickets wrap)", (unsigned)l[0]);
    irgl_free(locks);
    irgl_free(count);
    irgl_free(sum);
  });

  return finish();
}
