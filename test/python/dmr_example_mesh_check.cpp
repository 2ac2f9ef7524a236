// Sequential host check of examples/dmr_mesh.cuh (test_examples_compile.py):
// refine the unit square (two triangles) until no triangle is bad, with the
// retriangulate() of dmr_refine.mlir (or, with -DUSE_PIPE, of dmr_pipe.mlir),
// then check that the mesh is conforming, counter-clockwise, covers the square
// and has no bad triangle left. Prints the triangle count.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>
#define __device__
typedef int64_t irgl_index;
static float atomicAdd(float* p, float v) { float old = *p; *p = old + v; return old; }
#include "dmr_mesh.cuh"

int main() {
  const irgl_index cap = 100000;
  std::vector<float> mesh(DMR_HEADER + DMR_STRIDE * cap, 0.0f);
  std::vector<int32_t> is_del(cap, 0), is_bad(cap, 0), is_new(cap, 0);
  mesh[DMR_NTRI] = 2;
  mesh[DMR_TCAP] = (float)cap;
  dmr_set(mesh.data(), 0, 0, 0, 1, 0, 1, 1, -1, -1, 1);
  dmr_set(mesh.data(), 1, 0, 0, 1, 1, 0, 1, 0, -1, -1);
  std::vector<irgl_index> work = {0, 1};
  long steps = 0;
  while (!work.empty()) {
    irgl_index t = work.back();
    work.pop_back();
    if (is_del[t] || !triangle_is_bad(mesh.data(), t)) continue;
    irgl_index cavity[64], size = 0;
    build_cavity(mesh.data(), t, &size, cavity, DMR_MAX_CAVITY);
    if (size == 0) { std::printf("empty cavity\n"); return 1; }
#ifdef USE_PIPE
    retriangulate(mesh.data(), is_del.data(), is_new.data(), cavity, size);
    for (irgl_index u = 0; u < (irgl_index)mesh[DMR_NTRI]; ++u)
      if (is_new[u]) { is_new[u] = 0; if (triangle_is_bad(mesh.data(), u)) work.push_back(u); }
#else
    irgl_index created[64], ncreated = 0;
    retriangulate(mesh.data(), is_del.data(), is_bad.data(), cavity, size, created, &ncreated);
    for (irgl_index i = 0; i < ncreated; ++i)
      if (is_bad[created[i]] || created[i] == t) work.push_back(created[i]);
#endif
    ++steps;
  }
  irgl_index n = (irgl_index)mesh[DMR_NTRI], live = 0;
  double area = 0;
  for (irgl_index t = 0; t < n; ++t) {
    if (is_del[t]) continue;
    ++live;
    if (triangle_is_bad(mesh.data(), t)) { std::printf("bad left: %ld\n", (long)t); return 1; }
    float* p = mesh.data() + DMR_TRI(t);
    double a = 0.5 * ((p[2] - p[0]) * (p[5] - p[1]) - (p[4] - p[0]) * (p[3] - p[1]));
    if (!(a > 0)) { std::printf("not ccw: %ld\n", (long)t); return 1; }
    area += a;
    for (int i = 0; i < 3; ++i) {
      irgl_index o = dmr_nbr(mesh.data(), t, i);
      if (o < 0) continue;
      int j = dmr_edge_to(mesh.data(), o, t);
      if (is_del[o] || j < 0) { std::printf("broken link %ld-%ld\n", (long)t, (long)o); return 1; }
      int i1 = (i + 1) % 3, j1 = (j + 1) % 3;
      if (dmr_x(mesh.data(), t, i) != dmr_x(mesh.data(), o, j1) || dmr_y(mesh.data(), t, i) != dmr_y(mesh.data(), o, j1) ||
          dmr_x(mesh.data(), t, i1) != dmr_x(mesh.data(), o, j) || dmr_y(mesh.data(), t, i1) != dmr_y(mesh.data(), o, j)) {
        std::printf("edge mismatch %ld-%ld\n", (long)t, (long)o); return 1;
      }
    }
  }
  std::printf("live=%ld steps=%ld area=%.6f\n", (long)live, steps, area);
  return std::fabs(area - 1.0) < 1e-4 ? 0 : 1;
}
