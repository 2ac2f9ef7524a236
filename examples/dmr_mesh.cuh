// dmr_mesh.cuh -- the mesh library of the two DMR examples (dmr_refine.mlir,
// dmr_pipe.mlir), which include it with `irgl.cinclude`; the compiler inlines
// it into the emitted CUDA, so each example's .cu compiles on its own.
//
// The examples are the specification's listings: what they show is the IR
// (worklist, per-thread cavity, Exclusive over the cavity, retry). This file
// gives them a small but complete geometry, Rivara's longest-edge bisection
// along the longest-edge propagation path (LEPP), not the Delaunay refinement
// of the benchmark (benchmarks/dmr/dmr_mesh.cuh has that, on its own mesh
// layout):
//
// - a triangle is bad while its longest edge is longer than DMR_MAX_EDGE (a
//   size criterion: bisection then always terminates);
// - the cavity of a bad triangle t is the terminal pair of its LEPP (walk to
//   the neighbour across the longest edge until that edge is the longest edge
//   of both triangles, or on the boundary), followed by the triangles around
//   the pair, and t itself: every triangle that re-triangulating the pair
//   reads or writes, so that disjoint cavities can be refined at once;
// - retriangulate() bisects the pair's shared edge at its midpoint: two
//   triangles become four (one becomes two on the boundary), and the mesh
//   stays conforming.
//
// Mesh layout, one float array (`mesh: memref<?xf32>`):
//   mesh[DMR_NTRI]  triangle slots in use (a float counter; exact below 2^24)
//   mesh[DMR_TCAP]  triangle capacity: the length of is_del, is_bad, is_new
//                   and mesh_claims (all zero-initialized by the host)
//   mesh[DMR_TRI(t) + 0..5]  x0 y0 x1 y1 x2 y2, counter-clockwise
//   mesh[DMR_TRI(t) + 6..8]  the triangle across edge (v_i, v_(i+1)), -1 on
//                            the boundary (small integers, exact as floats)
// New triangles take fresh slots; the two (or one) that were bisected are
// marked deleted in is_del. When the capacity is exhausted a pair is left as
// it is (its bad triangle is then dropped from the worklist).
//
// Only file-scope C, no `#include "..."` of other local files.

#ifndef DMR_MESH_CUH
#define DMR_MESH_CUH

// The length of the examples' cavity arrays (memref<64xindex>).
#define DMR_MAX_CAVITY 64
// The size criterion of the quality test.
#ifndef DMR_MAX_EDGE
#define DMR_MAX_EDGE 0.05f
#endif
// Steps of the LEPP walk before a bad triangle gives up (an empty cavity).
#define DMR_MAX_LEPP 32

#define DMR_NTRI 0
#define DMR_TCAP 1
#define DMR_HEADER 2
#define DMR_STRIDE 9
#define DMR_TRI(t) (DMR_HEADER + DMR_STRIDE * (irgl_index)(t))

__device__ inline float dmr_x(const float* mesh, irgl_index t, int i) {
  return mesh[DMR_TRI(t) + 2 * i];
}

__device__ inline float dmr_y(const float* mesh, irgl_index t, int i) {
  return mesh[DMR_TRI(t) + 2 * i + 1];
}

__device__ inline irgl_index dmr_nbr(const float* mesh, irgl_index t, int i) {
  return (irgl_index)mesh[DMR_TRI(t) + 6 + i];
}

// The squared length of edge i of t. Both triangles of an edge compute the
// same value (the same two points, only the signs of dx and dy differ).
__device__ inline float dmr_len2(const float* mesh, irgl_index t, int i) {
  int j = (i + 1) % 3;
  float dx = dmr_x(mesh, t, j) - dmr_x(mesh, t, i);
  float dy = dmr_y(mesh, t, j) - dmr_y(mesh, t, i);
  return dx * dx + dy * dy;
}

// True if edge i of t comes before edge j of u in the longest-edge order:
// longer first, ties broken by the midpoint, so that the two triangles of an
// edge agree on whether it is their longest.
__device__ inline bool dmr_edge_before(const float* mesh, irgl_index t, int i, irgl_index u,
                                              int j) {
  float li = dmr_len2(mesh, t, i), lj = dmr_len2(mesh, u, j);
  if (li != lj) return li > lj;
  int i1 = (i + 1) % 3, j1 = (j + 1) % 3;
  float mxi = dmr_x(mesh, t, i) + dmr_x(mesh, t, i1), mxj = dmr_x(mesh, u, j) + dmr_x(mesh, u, j1);
  if (mxi != mxj) return mxi > mxj;
  return dmr_y(mesh, t, i) + dmr_y(mesh, t, i1) > dmr_y(mesh, u, j) + dmr_y(mesh, u, j1);
}

// The index (0, 1, 2) of the longest edge of t.
__device__ inline int dmr_longest(const float* mesh, irgl_index t) {
  int best = 0;
  for (int i = 1; i < 3; ++i)
    if (dmr_edge_before(mesh, t, i, t, best)) best = i;
  return best;
}

// The edge of u that is shared with t, or -1.
__device__ inline int dmr_edge_to(const float* mesh, irgl_index u, irgl_index t) {
  for (int i = 0; i < 3; ++i)
    if (dmr_nbr(mesh, u, i) == t) return i;
  return -1;
}

__device__ inline bool triangle_is_bad(const float* mesh, irgl_index t) {
  return dmr_len2(mesh, t, dmr_longest(mesh, t)) > DMR_MAX_EDGE * DMR_MAX_EDGE;
}

__device__ inline void dmr_add(irgl_index* cavity, irgl_index* size, int max, irgl_index t) {
  if (t < 0) return;
  for (irgl_index k = 0; k < *size; ++k)
    if (cavity[k] == t) return;
  if (*size < max) cavity[(*size)++] = t;
}

// True if t's longest edge is a terminal edge: on the boundary, or also the
// longest edge of the triangle across it.
__device__ inline bool dmr_terminal(const float* mesh, irgl_index t) {
  irgl_index v = dmr_nbr(mesh, t, dmr_longest(mesh, t));
  return v < 0 || dmr_longest(mesh, v) == dmr_edge_to(mesh, v, t);
}

// The cavity of t (see the top of the file): t first, then the first
// triangle u of the terminal pair (unless u is t), its partner, and the
// triangles around the pair. retriangulate() finds u again from the cavity.
__device__ inline void build_cavity(const float* mesh, irgl_index t, irgl_index* cavity_size,
                                           irgl_index* cavity, int max) {
  *cavity_size = 0;
  if (max < 8) return;
  irgl_index u = t;
  for (int step = 0; step < DMR_MAX_LEPP; ++step) {
    if (dmr_terminal(mesh, u)) {
      irgl_index v = dmr_nbr(mesh, u, dmr_longest(mesh, u));
      dmr_add(cavity, cavity_size, max, t);
      dmr_add(cavity, cavity_size, max, u);
      dmr_add(cavity, cavity_size, max, v);
      for (int i = 0; i < 3; ++i) {
        dmr_add(cavity, cavity_size, max, dmr_nbr(mesh, u, i));
        if (v >= 0) dmr_add(cavity, cavity_size, max, dmr_nbr(mesh, v, i));
      }
      return;
    }
    u = dmr_nbr(mesh, u, dmr_longest(mesh, u));
  }
}

__device__ inline void dmr_set(float* mesh, irgl_index t, float ax, float ay, float bx, float by,
                                      float cx, float cy, irgl_index n0, irgl_index n1, irgl_index n2) {
  float* p = mesh + DMR_TRI(t);
  p[0] = ax, p[1] = ay, p[2] = bx, p[3] = by, p[4] = cx, p[5] = cy;
  p[6] = (float)n0, p[7] = (float)n1, p[8] = (float)n2;
}

// In the triangle across from `old` (if any), point back at `now` instead.
__device__ inline void dmr_relink(float* mesh, irgl_index outer, irgl_index old, irgl_index now) {
  if (outer < 0) return;
  int i = dmr_edge_to(mesh, outer, old);
  if (i >= 0) mesh[DMR_TRI(outer) + 6 + i] = (float)now;
}

// Bisect the terminal pair of the cavity; the new triangles' ids go to
// created[0..*ncreated) (at most 4). Returns false (and changes nothing) when
// the mesh is full or the cavity is empty. The cavity's triangles are locked,
// so what build_cavity() read of them still holds: the pair starts at t
// (cavity[0]) when t is terminal, else at cavity[1].
__device__ inline bool dmr_bisect(float* mesh, int32_t* is_del, const irgl_index* cavity,
                                         irgl_index cavity_size, irgl_index* created, int* ncreated) {
  *ncreated = 0;
  if (cavity_size == 0) return false;
  irgl_index t0 = dmr_terminal(mesh, cavity[0]) ? cavity[0] : cavity[1];
  int e0 = dmr_longest(mesh, t0);
  irgl_index t1 = dmr_nbr(mesh, t0, e0);
  int k = t1 < 0 ? 2 : 4;
  irgl_index base = (irgl_index)atomicAdd(&mesh[DMR_NTRI], (float)k);
  if (base + k > (irgl_index)mesh[DMR_TCAP]) return false;
  // t0 = (a, b, c) with the shared edge (a, b); t1 = (b, a, d).
  int a = e0, b = (e0 + 1) % 3, c = (e0 + 2) % 3;
  float ax = dmr_x(mesh, t0, a), ay = dmr_y(mesh, t0, a);
  float bx = dmr_x(mesh, t0, b), by = dmr_y(mesh, t0, b);
  float cx = dmr_x(mesh, t0, c), cy = dmr_y(mesh, t0, c);
  float mx = 0.5f * (ax + bx), my = 0.5f * (ay + by);
  irgl_index nbc = dmr_nbr(mesh, t0, b), nca = dmr_nbr(mesh, t0, c);
  irgl_index A = base, B = base + 1, A1 = t1 < 0 ? -1 : base + 2, B1 = t1 < 0 ? -1 : base + 3;
  dmr_set(mesh, A, ax, ay, mx, my, cx, cy, B1, B, nca);  // (a, m, c)
  dmr_set(mesh, B, mx, my, bx, by, cx, cy, A1, nbc, A);  // (m, b, c)
  dmr_relink(mesh, nca, t0, A);
  dmr_relink(mesh, nbc, t0, B);
  if (t1 >= 0) {
    int f = dmr_edge_to(mesh, t1, t0), d = (f + 2) % 3;
    float dx = dmr_x(mesh, t1, d), dy = dmr_y(mesh, t1, d);
    irgl_index ndb = dmr_nbr(mesh, t1, (f + 2) % 3), nad = dmr_nbr(mesh, t1, (f + 1) % 3);
    dmr_set(mesh, A1, bx, by, mx, my, dx, dy, B, B1, ndb);  // (b, m, d)
    dmr_set(mesh, B1, mx, my, ax, ay, dx, dy, A, nad, A1);  // (m, a, d)
    dmr_relink(mesh, ndb, t1, A1);
    dmr_relink(mesh, nad, t1, B1);
    is_del[t1] = 1;
  }
  is_del[t0] = 1;
  for (int i = 0; i < k; ++i) created[(*ncreated)++] = base + i;
  return true;
}

// dmr_refine.mlir: bisect, flag the new triangles in is_bad and list them in
// created; the bad triangle itself is listed again when it is still alive
// (its LEPP ended at another pair), so that it is refined once more.
__device__ inline void retriangulate(float* mesh, int32_t* is_del, int32_t* is_bad,
                                            const irgl_index* cavity, irgl_index cavity_size,
                                            irgl_index* created, irgl_index* ncreated) {
  int n = 0;
  *ncreated = 0;
  if (!dmr_bisect(mesh, is_del, cavity, cavity_size, created, &n)) return;
  for (int i = 0; i < n; ++i) is_bad[created[i]] = triangle_is_bad(mesh, created[i]);
  irgl_index t = cavity[0];
  if (!is_del[t]) created[n++] = t;
  *ncreated = n;
}

// dmr_pipe.mlir: bisect and flag the new triangles in is_new (and the bad
// triangle itself when it is still alive, so that it is examined again).
__device__ inline void retriangulate(float* mesh, int32_t* is_del, int32_t* is_new,
                                            const irgl_index* cavity, irgl_index cavity_size) {
  irgl_index created[4];
  int n = 0;
  if (!dmr_bisect(mesh, is_del, cavity, cavity_size, created, &n)) return;
  for (int i = 0; i < n; ++i) is_new[created[i]] = 1;
  irgl_index t = cavity[0];
  if (!is_del[t]) is_new[t] = 1;
}

#endif  // DMR_MESH_CUH
