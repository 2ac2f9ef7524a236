// Shared helpers of the runtime's GPU unit tests (test/cuda/*.cu).
// Each test program prints "PASS" and exits 0, or prints every failed check
// and exits 1.
#pragma once

#include "../../cuda_emitter/runtime/irgl_runtime.cuh"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

/// Number of failed checks so far.
static int g_failures = 0;

/// Records (and prints) a failed check without stopping the program.
#define EXPECT(cond, ...)                                                 \
  do {                                                                    \
    if (!(cond)) {                                                        \
      ++g_failures;                                                       \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                  \
      std::fprintf(stderr, "\n");                                         \
    }                                                                     \
  } while (0)

/// Runs one named test body, turning an escaped exception into a failure.
template <class F>
static void run_test(const char* name, F&& body) {
  const int before = g_failures;
  try {
    body();
  } catch (const std::exception& e) {
    ++g_failures;
    std::fprintf(stderr, "FAIL %s: unexpected exception: %s\n", name, e.what());
  }
  std::printf("%s %s\n", g_failures == before ? "ok  " : "FAIL", name);
  std::fflush(stdout);
}

/// Prints PASS and returns 0, or the failure count and returns 1.
static int finish() {
  if (g_failures == 0) {
    std::printf("PASS\n");
    return 0;
  }
  std::printf("FAILED: %d check(s)\n", g_failures);
  return 1;
}

/// A device copy of a host vector (cudaMalloc'd, at least one element; the
/// caller frees it).
template <class T>
static T* to_device(const std::vector<T>& host) {
  T* dev = nullptr;
  IRGL_CHECK(cudaMalloc(&dev, sizeof(T) * (host.empty() ? 1 : host.size())));
  if (!host.empty()) IRGL_CHECK(cudaMemcpy(dev, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  return dev;
}

/// Copies n elements of a device array to a host vector.
template <class T>
static std::vector<T> to_host(const T* dev, size_t n) {
  std::vector<T> h(n);
  if (n) IRGL_CHECK(cudaMemcpy(h.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
