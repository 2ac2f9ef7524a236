// dmr_mesh.cuh -- the geometry of Delaunay mesh refinement (DMR), the C of
// benchmarks/dmr/dmr.mlir (which includes it with `irgl.cinclude`; the
// compiler inlines it into the emitted CUDA, so the .cu compiles on its own).
//
// Everything here is __host__ __device__ (DMR_HD) so that benchmarks/dmr/cpu.py
// and the interpreter (irgl_interpreter/dmr.py) can build the same code with
// the host C++ compiler; the host-side helpers at the end are CUDA only.
// The mesh layout (xy, tri, nbr, flags, meta, claims) is described at the top
// of dmr.mlir.

#ifndef DMR_MESH_CUH
#define DMR_MESH_CUH

#ifndef __CUDACC__
#ifndef __host__  // (cuda_runtime.h defines both as nothing for a host compiler)
#define __host__
#define __device__
#endif
#include <math.h>
#endif
#define DMR_HD __host__ __device__ static inline
// meta[] slots
#define DMR_NTRI 0
#define DMR_NPTS 1
#define DMR_TCAP 2
#define DMR_PCAP 3
#define DMR_OVERFLOW 4
#define DMR_NBAD 5
#define DMR_GAVE_UP 6
#define DMR_INSERTED 7
#define DMR_SPLIT 8
#define DMR_POSTPONED 9
#define DMR_INITIAL_BAD 10
#define DMR_META_SIZE 16
// flags[t]: bit 0 deleted; flags[t] / DMR_TRY = times its cavity did not fit
#define DMR_DELETED 1
#define DMR_TRY 256
#define DMR_MAX_TRIES 8
// lock[DMR_CAV]: the cavity triangles, then the claim cells of their edges (memref<256xi32> in the kernel)
#define DMR_CAV 256
#define DMR_NB (DMR_CAV + 2)
// info[8]: ncav (= the first claim cell in lock), ncav + claims, split edge (a, b) or (-1, -1), first new triangle,
// new triangles, new point
#define DMR_INFO 8
// dmr_build_cavity results besides the lock count
#define DMR_TOO_BIG (-1)
#define DMR_FAILED (-2)
#define DMR_MAX_WALK (1 << 16)
// a triangle is bad if its smallest angle is below 30 degrees: 2 cos(30) = sqrt(3)
#define DMR_TWO_COS_MIN_ANGLE 1.7320508075688772
// the smallest angle (degrees) of the triangle an off-center makes with the shortest edge: above 30, so that it is
// good whatever the rounding
#define DMR_OFF_CENTER_ANGLE 30.5

DMR_HD int dmr_fetch_add(int* p, int v) {
#ifdef __CUDA_ARCH__
  return atomicAdd(p, v);
#else
  int old = *p; *p = old + v; return old;
#endif
}

// Twice the signed area of (a, b, p): > 0 when p is left of a->b. Evaluated in one canonical vertex order, so
// that orient(a, b, p) == -orient(b, a, p) exactly, whatever the rounding (the GPU contracts to FMA): the two
// triangles of an edge then never both see p outside it, and a visibility walk cannot bounce between them forever.
DMR_HD double dmr_orient(const double* xy, int a, int b, double px, double py) {
  double sign = 1.0;
  if (a > b) { int t = a; a = b; b = t; sign = -1.0; }
  return sign * ((xy[2 * b] - xy[2 * a]) * (py - xy[2 * a + 1]) - (xy[2 * b + 1] - xy[2 * a + 1]) * (px - xy[2 * a]));
}

// Smallest angle below 30 degrees: the angle A opposite the shortest edge a has cos A = (b2 + c2 - a2) / (2 b c).
DMR_HD bool dmr_is_bad(const double* xy, const int* tri, int t) {
  double l[3];
  for (int i = 0; i < 3; ++i) {
    int a = tri[3 * t + i], b = tri[3 * t + (i + 1) % 3];
    double dx = xy[2 * b] - xy[2 * a], dy = xy[2 * b + 1] - xy[2 * a + 1];
    l[i] = dx * dx + dy * dy;
  }
  int s = l[0] <= l[1] ? (l[0] <= l[2] ? 0 : 2) : (l[1] <= l[2] ? 1 : 2);
  double b2 = l[(s + 1) % 3], c2 = l[(s + 2) % 3];
  return b2 + c2 - l[s] > DMR_TWO_COS_MIN_ANGLE * sqrt(b2 * c2);
}

// A bijection of [0, n) that scatters neighbouring i far apart: i -> a i mod n, with a the first number from
// 0.618 n (the golden ratio: a low-discrepancy Weyl sequence) that is coprime to n. The worklist's order is the
// Exclusive's priority order (the priority is the thread's slot), and triangle ids are spatially coherent: pushed
// in id order, neighbouring bad triangles would get neighbouring priorities, and a chain of overlapping cavities
// with increasing priorities has a single winner.
DMR_HD int dmr_scatter(int i, int n) {
  long long a = (long long)(0.6180339887498949 * n) + 1;
  for (;; ++a) {
    long long x = a, y = n;
    while (y) { long long r = x % y; x = y; y = r; }
    if (x == 1) break;
  }
  return (int)(a * i % n);
}

DMR_HD bool dmr_alive_and_bad(const double* xy, const int* tri, const int* flags, int t) {
  return !(flags[t] & DMR_DELETED) && dmr_is_bad(xy, tri, t);
}

DMR_HD void dmr_circumcenter(const double* xy, const int* tri, int t, double* px, double* py) {
  int a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];
  double bx = xy[2 * b] - xy[2 * a], by = xy[2 * b + 1] - xy[2 * a + 1];
  double cx = xy[2 * c] - xy[2 * a], cy = xy[2 * c + 1] - xy[2 * a + 1];
  double b2 = bx * bx + by * by, c2 = cx * cx + cy * cy, d = 2.0 * (bx * cy - by * cx);
  *px = xy[2 * a] + (cy * b2 - by * c2) / d;
  *py = xy[2 * a + 1] + (bx * c2 - cx * b2) / d;
}

// Where to insert a point to fix the bad triangle t (Ungor's off-center): its circumcenter, unless that lies
// farther from the midpoint m of t's shortest edge pq than the apex of the isosceles triangle on pq with apex angle
// DMR_OFF_CENTER_ANGLE; then that apex, on the segment from m to the circumcenter (so inside t's circumcircle:
// inserting it removes t too). The triangle it makes with pq is good, its cavity is smaller than the
// circumcenter's, and refinement inserts about a third fewer points. Returns false if t is degenerate.
DMR_HD bool dmr_off_center(const double* xy, const int* tri, int t, double* px, double* py) {
  double cx, cy;
  dmr_circumcenter(xy, tri, t, &cx, &cy);
  if (!isfinite(cx) || !isfinite(cy)) return false;
  int s = 0;
  double shortest = 0.0;
  for (int j = 0; j < 3; ++j) {
    int a = tri[3 * t + j], b = tri[3 * t + (j + 1) % 3];
    double dx = xy[2 * b] - xy[2 * a], dy = xy[2 * b + 1] - xy[2 * a + 1];
    if (j == 0 || dx * dx + dy * dy < shortest) {
      shortest = dx * dx + dy * dy;
      s = j;
    }
  }
  int a = tri[3 * t + s], b = tri[3 * t + (s + 1) % 3];
  double mx = 0.5 * (xy[2 * a] + xy[2 * b]), my = 0.5 * (xy[2 * a + 1] + xy[2 * b + 1]);
  double apex = 0.5 * sqrt(shortest) / tan(0.5 * DMR_OFF_CENTER_ANGLE * 3.14159265358979323846 / 180.0);
  double d = sqrt((cx - mx) * (cx - mx) + (cy - my) * (cy - my));
  if (d > apex) {
    cx = mx + (cx - mx) * (apex / d);
    cy = my + (cy - my) * (apex / d);
  }
  *px = cx;
  *py = cy;
  return true;
}

// Is p strictly inside the circumcircle of the (counter-clockwise) triangle t?
DMR_HD bool dmr_in_circle(const double* xy, const int* tri, int t, double px, double py) {
  int a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];
  double adx = xy[2 * a] - px, ady = xy[2 * a + 1] - py;
  double bdx = xy[2 * b] - px, bdy = xy[2 * b + 1] - py;
  double cdx = xy[2 * c] - px, cdy = xy[2 * c + 1] - py;
  double det = (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) + (bdx * bdx + bdy * bdy) * (cdx * ady - adx * cdy) +
               (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);
  return det > 0.0;
}

// Does p lie in the closed diametral circle of the segment (a, b)?
DMR_HD bool dmr_encroaches(const double* xy, int a, int b, double px, double py) {
  return (px - xy[2 * a]) * (px - xy[2 * b]) + (py - xy[2 * a + 1]) * (py - xy[2 * b + 1]) <= 0.0;
}

DMR_HD bool dmr_contains(const int* items, int n, int v) {
  for (int i = 0; i < n; ++i)
    if (items[i] == v) return true;
  return false;
}

// The claim cell of edge j of triangle t: the smaller of its two numbers 3 t + j and 3 o + i (o the triangle
// across it, i the edge's index in o), so that both triangles of an edge name the same cell.
DMR_HD int dmr_edge_id(const int* nbr, int t, int j) {
  int id = 3 * t + j, o = nbr[id];
  if (o < 0) return id;
  for (int i = 0; i < 3; ++i)
    if (nbr[3 * o + i] == t) return 3 * o + i < id ? 3 * o + i : id;
  return id;
}

// Visibility walk from t towards p. Returns false if it does not end; else *s is the triangle containing p
// (*e = -1) or the triangle whose domain-boundary edge *e has p strictly outside.
DMR_HD bool dmr_locate(const double* xy, const int* tri, const int* nbr, int t, double px, double py, int* s, int* e) {
  for (int step = 0; step < DMR_MAX_WALK; ++step) {
    int out = -1;
    for (int k = 0; k < 3 && out < 0; ++k) {
      int j = (k + step) % 3;
      if (dmr_orient(xy, tri[3 * t + j], tri[3 * t + (j + 1) % 3], px, py) < 0.0) out = j;
    }
    if (out < 0 || nbr[3 * t + out] < 0) {
      *s = t;
      *e = out;
      return true;
    }
    t = nbr[3 * t + out];
  }
  return false;
}

// Bowyer-Watson cavity of p grown from s (always included): the connected triangles whose circumcircle contains p.
// Returns its size, or -1 if it exceeds DMR_CAV.
DMR_HD int dmr_grow(const double* xy, const int* tri, const int* nbr, int s, double px, double py, int* cav) {
  int n = 1;
  cav[0] = s;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j) {
      int o = nbr[3 * cav[i] + j];
      if (o < 0 || dmr_contains(cav, n, o) || !dmr_in_circle(xy, tri, o, px, py)) continue;
      if (n == DMR_CAV) return -1;
      cav[n++] = o;
    }
  return n;
}

// The boundary edges (u[i], v[i]) of the cavity, counter-clockwise, with the triangle o[i] across each (-1 on the
// domain boundary). Returns their number, or -1 if more than DMR_NB.
DMR_HD int dmr_boundary(const int* tri, const int* nbr, const int* cav, int ncav, int* u, int* v, int* o) {
  int n = 0;
  for (int i = 0; i < ncav; ++i)
    for (int j = 0; j < 3; ++j) {
      int t = cav[i], across = nbr[3 * t + j];
      if (across >= 0 && dmr_contains(cav, ncav, across)) continue;
      if (n == DMR_NB) return -1;
      u[n] = tri[3 * t + j];
      v[n] = tri[3 * t + (j + 1) % 3];
      o[n] = across;
      ++n;
    }
  return n;
}

// Can the cavity be re-triangulated as a fan around p? Every new triangle (u, v, p) must be positively oriented,
// the boundary a simple polygon (each vertex starts one edge) and every cavity vertex on it. The split edge
// (sa, sb), which contains p, gets no triangle.
DMR_HD bool dmr_star_shaped(const double* xy, const int* tri, const int* cav, int ncav, const int* u, const int* v,
                            int nb, int sa, int sb, double px, double py) {
  for (int i = 0; i < nb; ++i) {
    if (dmr_contains(u, i, u[i])) return false;
    if (u[i] == sa && v[i] == sb) continue;
    double ux = xy[2 * u[i]] - px, uy = xy[2 * u[i] + 1] - py, vx = xy[2 * v[i]] - px, vy = xy[2 * v[i] + 1] - py;
    double scale = sqrt((ux * ux + uy * uy) * (vx * vx + vy * vy));
    if (!(dmr_orient(xy, u[i], v[i], px, py) > 1e-10 * scale)) return false;
  }
  for (int i = 0; i < 3 * ncav; ++i) {
    int w = tri[3 * cav[i / 3] + i % 3];
    if (!dmr_contains(u, nb, w) && !dmr_contains(v, nb, w)) return false;
  }
  return true;
}

// The cavity that inserts (px, py) to fix the bad triangle t, or, with `ruppert`, when the point lies outside the
// domain or encroaches a domain-boundary edge of its cavity, that edge's midpoint. Fills lock (the cavity, then the
// claim cells of its edges, inner and boundary: re-triangulating writes the cavity and the links of the outside
// triangles across its boundary edges, so two cavities that share no edge touch disjoint data), info and pt (the
// new point). Returns the number of claim cells (at lock + info[0]); DMR_TOO_BIG if the cavity does not fit;
// DMR_FAILED on a numerical failure. Reads the mesh only.
DMR_HD int dmr_cavity_at(int t, const double* xy, const int* tri, const int* nbr, double px, double py,
                         bool ruppert, int* lock, int* info, double* pt) {
  int s, e, ncav = 0;
  if (!dmr_locate(xy, tri, nbr, t, px, py, &s, &e)) return DMR_FAILED;
  if (e >= 0 && !ruppert) return DMR_FAILED;
  if (e < 0) {
    ncav = dmr_grow(xy, tri, nbr, s, px, py, lock);
    if (ncav < 0) return DMR_TOO_BIG;
    for (int i = 0; ruppert && i < 3 * ncav && e < 0; ++i) {
      int k = lock[i / 3], j = i % 3;
      if (nbr[3 * k + j] < 0 && dmr_encroaches(xy, tri[3 * k + j], tri[3 * k + (j + 1) % 3], px, py)) {
        s = k;
        e = j;
      }
    }
  }
  int sa = -1, sb = -1;
  if (e >= 0) {
    sa = tri[3 * s + e];
    sb = tri[3 * s + (e + 1) % 3];
    px = 0.5 * (xy[2 * sa] + xy[2 * sb]);
    py = 0.5 * (xy[2 * sa + 1] + xy[2 * sb + 1]);
    ncav = dmr_grow(xy, tri, nbr, s, px, py, lock);
    if (ncav < 0) return DMR_TOO_BIG;
  }
  int u[DMR_NB], v[DMR_NB], o[DMR_NB];
  int nb = dmr_boundary(tri, nbr, lock, ncav, u, v, o);
  if (nb < 0) return DMR_TOO_BIG;
  if (!dmr_star_shaped(xy, tri, lock, ncav, u, v, nb, sa, sb, px, py)) return DMR_FAILED;
  int nlock = ncav;
  for (int i = 0; i < 3 * ncav; ++i) {
    int k = lock[i / 3], j = i % 3, across = nbr[3 * k + j];
    if (across >= 0 && across < k && dmr_contains(lock, ncav, across)) continue;  // claimed from the other side
    if (nlock == DMR_CAV) return DMR_TOO_BIG;
    lock[nlock++] = dmr_edge_id(nbr, k, j);
  }
  info[0] = ncav;
  info[1] = nlock;
  info[2] = sa;
  info[3] = sb;
  pt[0] = px;
  pt[1] = py;
  return nlock - ncav;
}

// The cavity for t's off-center (with Ruppert's boundary splits); when that fails numerically (a nearly degenerate
// fan), for points moved halfway to t's centroid and onto it: they lie in t's circumcircle too, so inserting them
// also removes t.
DMR_HD int dmr_build_cavity(int t, const double* xy, const int* tri, const int* nbr, const int* flags, int* lock,
                            int* info, double* pt) {
  info[0] = 0;
  if (!dmr_alive_and_bad(xy, tri, flags, t)) return 0;
  double cx, cy;
  if (!dmr_off_center(xy, tri, t, &cx, &cy)) return DMR_FAILED;
  double gx = 0.0, gy = 0.0;
  for (int j = 0; j < 3; ++j) {
    gx += xy[2 * tri[3 * t + j]] / 3.0;
    gy += xy[2 * tri[3 * t + j] + 1] / 3.0;
  }
  int status = DMR_FAILED;
  for (int attempt = 0; attempt < 3 && status == DMR_FAILED; ++attempt) {
    double lam = 0.5 * attempt;
    status = dmr_cavity_at(t, xy, tri, nbr, cx + lam * (gx - cx), cy + lam * (gy - cy), attempt == 0, lock, info, pt);
  }
  return status;
}

// Replace the cavity (locked by the caller) by a fan of new triangles around the new point, which are allocated
// with atomicAdd on the counters. Returns the first new triangle (info[5] of them, consecutive), or -1 when the
// capacity is exhausted (meta[DMR_OVERFLOW] is set and the mesh is left unchanged).
DMR_HD int dmr_retriangulate(double* xy, int* tri, int* nbr, int* flags, int* meta, const int* lock, int* info,
                             const double* pt) {
  int ncav = info[0], sa = info[2], sb = info[3];
  int u[DMR_NB], v[DMR_NB], o[DMR_NB];
  int nb = dmr_boundary(tri, nbr, lock, ncav, u, v, o), k = 0;
  for (int i = 0; i < nb; ++i) {
    if (u[i] == sa && v[i] == sb) continue;
    u[k] = u[i];
    v[k] = v[i];
    o[k] = o[i];
    ++k;
  }
  int p = dmr_fetch_add(&meta[DMR_NPTS], 1);
  int base = dmr_fetch_add(&meta[DMR_NTRI], k);
  if (p >= meta[DMR_PCAP] || base + k > meta[DMR_TCAP]) {
    meta[DMR_OVERFLOW] = 1;
    return -1;
  }
  xy[2 * p] = pt[0];
  xy[2 * p + 1] = pt[1];
  for (int i = 0; i < ncav; ++i) flags[lock[i]] |= DMR_DELETED;
  for (int i = 0; i < k; ++i) {
    int t = base + i;
    tri[3 * t] = u[i];
    tri[3 * t + 1] = v[i];
    tri[3 * t + 2] = p;
    nbr[3 * t] = o[i];
    nbr[3 * t + 1] = nbr[3 * t + 2] = -1;
    for (int j = 0; j < k; ++j) {
      if (u[j] == v[i]) nbr[3 * t + 1] = base + j;
      if (v[j] == u[i]) nbr[3 * t + 2] = base + j;
    }
    if (o[i] >= 0)
      for (int j = 0; j < 3; ++j)
        if (tri[3 * o[i] + j] == v[i] && tri[3 * o[i] + (j + 1) % 3] == u[i]) nbr[3 * o[i] + j] = t;
    flags[t] = 0;
  }
  info[4] = base;
  info[5] = k;
  info[6] = p;
  dmr_fetch_add(&meta[sa < 0 ? DMR_INSERTED : DMR_SPLIT], 1);
  return base;
}

// The cavity of t did not fit: true if t should be retried later, false (counted as given up) after
// DMR_MAX_TRIES times.
DMR_HD bool dmr_postpone(int* flags, int* meta, int t) {
  if (dmr_fetch_add(&flags[t], DMR_TRY) / DMR_TRY >= DMR_MAX_TRIES) {
    dmr_fetch_add(&meta[DMR_GAVE_UP], 1);
    return false;
  }
  dmr_fetch_add(&meta[DMR_POSTPONED], 1);
  return true;
}

// The number of triangle slots in use (the counter may pass the capacity on overflow).
DMR_HD int dmr_num_triangles(const int* meta) {
  return meta[DMR_NTRI] < meta[DMR_TCAP] ? meta[DMR_NTRI] : meta[DMR_TCAP];
}

#if defined(__CUDACC__) || defined(IRGL_HOST_ONLY)  // with the CUDA runtime's API
// Host side: read or write one meta counter; fail after a capacity overflow.
static inline int dmr_host_get(const int* meta, int slot) {
  int value = 0;
  IRGL_CHECK(cudaMemcpy(&value, meta + slot, sizeof(int), cudaMemcpyDeviceToHost));
  return value;
}
static inline void dmr_host_set(int* meta, int slot, int value) {
  IRGL_CHECK(cudaMemcpy(meta + slot, &value, sizeof(int), cudaMemcpyHostToDevice));
}
static inline void dmr_host_check(const int* meta) {
  if (dmr_host_get(meta, DMR_OVERFLOW))
    throw irgl::Error("dmr: mesh capacity exceeded (more triangles or points than allocated)");
}
#endif

#endif  // DMR_MESH_CUH
