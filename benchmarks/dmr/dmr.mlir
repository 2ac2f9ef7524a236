// Delaunay mesh refinement (DMR) in IrGL: the specification's refine kernel
// (Exclusive over a cavity) and Pipe listing.
//
// The mesh lives in flat device arrays (benchmarks/dmr/mesh.py builds them):
//   xy     f64[2 * point capacity]     point coordinates
//   tri    i32[3 * triangle capacity]  counter-clockwise vertex ids
//   nbr    i32[3 * triangle capacity]  triangle across edge (tri[3t+i], tri[3t+(i+1)%3]), -1 on the boundary
//   flags  i32[triangle capacity]      bit 0: deleted (slots not in use are deleted); the rest counts postponements
//   meta   i32[16]                     counters (DMR_NTRI, DMR_NPTS, ... below)
//   claims i32[triangle capacity]      the claim array of the Exclusive
// A triangle is bad if its smallest angle is below 30 degrees. A bad triangle
// gets its circumcenter inserted (Bowyer-Watson cavity, re-triangulated as a
// fan), except that when the circumcenter lies outside the domain or
// encroaches a domain-boundary edge of its cavity, that boundary edge is split
// at its midpoint instead (Ruppert). New triangles and points are allocated
// with atomicAdd on the counters; running out of capacity sets DMR_OVERFLOW,
// leaves the mesh unchanged and makes @main fail.
//
// The geometry is C (the escape hatch), __host__ __device__ so that
// benchmarks/dmr/cpu.py can run the same code sequentially on the CPU.

// DMR device helpers (the C escape hatch of dmr.mlir).
irgl.cblock "#ifndef __CUDACC__"
irgl.cblock "#define __host__"
irgl.cblock "#define __device__"
irgl.cblock "#include <math.h>"
irgl.cblock "#endif"
irgl.cblock "#define DMR_HD __host__ __device__ static inline"
// meta[] slots
irgl.cblock "#define DMR_NTRI 0"
irgl.cblock "#define DMR_NPTS 1"
irgl.cblock "#define DMR_TCAP 2"
irgl.cblock "#define DMR_PCAP 3"
irgl.cblock "#define DMR_OVERFLOW 4"
irgl.cblock "#define DMR_NBAD 5"
irgl.cblock "#define DMR_GAVE_UP 6"
irgl.cblock "#define DMR_INSERTED 7"
irgl.cblock "#define DMR_SPLIT 8"
irgl.cblock "#define DMR_POSTPONED 9"
irgl.cblock "#define DMR_INITIAL_BAD 10"
irgl.cblock "#define DMR_META_SIZE 16"
// flags[t]: bit 0 deleted; flags[t] / DMR_TRY = times its cavity did not fit
irgl.cblock "#define DMR_DELETED 1"
irgl.cblock "#define DMR_TRY 256"
irgl.cblock "#define DMR_MAX_TRIES 8"
// lock[DMR_CAV]: the cavity triangles, then their outside neighbours (memref<256xi32> in the kernel)
irgl.cblock "#define DMR_CAV 256"
irgl.cblock "#define DMR_NB (DMR_CAV + 2)"
// info[8]: ncav, nlock, split edge (a, b) or (-1, -1), first new triangle, new triangles, new point
irgl.cblock "#define DMR_INFO 8"
// dmr_build_cavity results besides the lock count
irgl.cblock "#define DMR_TOO_BIG (-1)"
irgl.cblock "#define DMR_FAILED (-2)"
irgl.cblock "#define DMR_MAX_WALK (1 << 16)"
// a triangle is bad if its smallest angle is below 30 degrees: 2 cos(30) = sqrt(3)
irgl.cblock "#define DMR_TWO_COS_MIN_ANGLE 1.7320508075688772"

irgl.cblock "DMR_HD int dmr_fetch_add(int* p, int v) {"
irgl.cblock "#ifdef __CUDA_ARCH__"
irgl.cblock "  return atomicAdd(p, v);"
irgl.cblock "#else"
irgl.cblock "  int old = *p; *p = old + v; return old;"
irgl.cblock "#endif"
irgl.cblock "}"

// Twice the signed area of (a, b, p): > 0 when p is left of a->b. Evaluated in one canonical vertex order, so
// that orient(a, b, p) == -orient(b, a, p) exactly, whatever the rounding (the GPU contracts to FMA): the two
// triangles of an edge then never both see p outside it, and a visibility walk cannot bounce between them forever.
irgl.cblock "DMR_HD double dmr_orient(const double* xy, int a, int b, double px, double py) {"
irgl.cblock "  double sign = 1.0;"
irgl.cblock "  if (a > b) { int t = a; a = b; b = t; sign = -1.0; }"
irgl.cblock "  return sign * ((xy[2 * b] - xy[2 * a]) * (py - xy[2 * a + 1]) - (xy[2 * b + 1] - xy[2 * a + 1]) * (px - xy[2 * a]));"
irgl.cblock "}"

// Smallest angle below 30 degrees: the angle A opposite the shortest edge a has cos A = (b2 + c2 - a2) / (2 b c).
irgl.cblock "DMR_HD bool dmr_is_bad(const double* xy, const int* tri, int t) {"
irgl.cblock "  double l[3];"
irgl.cblock "  for (int i = 0; i < 3; ++i) {"
irgl.cblock "    int a = tri[3 * t + i], b = tri[3 * t + (i + 1) % 3];"
irgl.cblock "    double dx = xy[2 * b] - xy[2 * a], dy = xy[2 * b + 1] - xy[2 * a + 1];"
irgl.cblock "    l[i] = dx * dx + dy * dy;"
irgl.cblock "  }"
irgl.cblock "  int s = l[0] <= l[1] ? (l[0] <= l[2] ? 0 : 2) : (l[1] <= l[2] ? 1 : 2);"
irgl.cblock "  double b2 = l[(s + 1) % 3], c2 = l[(s + 2) % 3];"
irgl.cblock "  return b2 + c2 - l[s] > DMR_TWO_COS_MIN_ANGLE * sqrt(b2 * c2);"
irgl.cblock "}"

irgl.cblock "DMR_HD bool dmr_alive_and_bad(const double* xy, const int* tri, const int* flags, int t) {"
irgl.cblock "  return !(flags[t] & DMR_DELETED) && dmr_is_bad(xy, tri, t);"
irgl.cblock "}"

irgl.cblock "DMR_HD void dmr_circumcenter(const double* xy, const int* tri, int t, double* px, double* py) {"
irgl.cblock "  int a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];"
irgl.cblock "  double bx = xy[2 * b] - xy[2 * a], by = xy[2 * b + 1] - xy[2 * a + 1];"
irgl.cblock "  double cx = xy[2 * c] - xy[2 * a], cy = xy[2 * c + 1] - xy[2 * a + 1];"
irgl.cblock "  double b2 = bx * bx + by * by, c2 = cx * cx + cy * cy, d = 2.0 * (bx * cy - by * cx);"
irgl.cblock "  *px = xy[2 * a] + (cy * b2 - by * c2) / d;"
irgl.cblock "  *py = xy[2 * a + 1] + (bx * c2 - cx * b2) / d;"
irgl.cblock "}"

// Is p strictly inside the circumcircle of the (counter-clockwise) triangle t?
irgl.cblock "DMR_HD bool dmr_in_circle(const double* xy, const int* tri, int t, double px, double py) {"
irgl.cblock "  int a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];"
irgl.cblock "  double adx = xy[2 * a] - px, ady = xy[2 * a + 1] - py;"
irgl.cblock "  double bdx = xy[2 * b] - px, bdy = xy[2 * b + 1] - py;"
irgl.cblock "  double cdx = xy[2 * c] - px, cdy = xy[2 * c + 1] - py;"
irgl.cblock "  double det = (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) + (bdx * bdx + bdy * bdy) * (cdx * ady - adx * cdy) +"
irgl.cblock "               (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);"
irgl.cblock "  return det > 0.0;"
irgl.cblock "}"

// Does p lie in the closed diametral circle of the segment (a, b)?
irgl.cblock "DMR_HD bool dmr_encroaches(const double* xy, int a, int b, double px, double py) {"
irgl.cblock "  return (px - xy[2 * a]) * (px - xy[2 * b]) + (py - xy[2 * a + 1]) * (py - xy[2 * b + 1]) <= 0.0;"
irgl.cblock "}"

irgl.cblock "DMR_HD bool dmr_contains(const int* items, int n, int v) {"
irgl.cblock "  for (int i = 0; i < n; ++i)"
irgl.cblock "    if (items[i] == v) return true;"
irgl.cblock "  return false;"
irgl.cblock "}"

// Visibility walk from t towards p. Returns false if it does not end; else *s is the triangle containing p
// (*e = -1) or the triangle whose domain-boundary edge *e has p strictly outside.
irgl.cblock "DMR_HD bool dmr_locate(const double* xy, const int* tri, const int* nbr, int t, double px, double py, int* s, int* e) {"
irgl.cblock "  for (int step = 0; step < DMR_MAX_WALK; ++step) {"
irgl.cblock "    int out = -1;"
irgl.cblock "    for (int k = 0; k < 3 && out < 0; ++k) {"
irgl.cblock "      int j = (k + step) % 3;"
irgl.cblock "      if (dmr_orient(xy, tri[3 * t + j], tri[3 * t + (j + 1) % 3], px, py) < 0.0) out = j;"
irgl.cblock "    }"
irgl.cblock "    if (out < 0 || nbr[3 * t + out] < 0) {"
irgl.cblock "      *s = t;"
irgl.cblock "      *e = out;"
irgl.cblock "      return true;"
irgl.cblock "    }"
irgl.cblock "    t = nbr[3 * t + out];"
irgl.cblock "  }"
irgl.cblock "  return false;"
irgl.cblock "}"

// Bowyer-Watson cavity of p grown from s (always included): the connected triangles whose circumcircle contains p.
// Returns its size, or -1 if it exceeds DMR_CAV.
irgl.cblock "DMR_HD int dmr_grow(const double* xy, const int* tri, const int* nbr, int s, double px, double py, int* cav) {"
irgl.cblock "  int n = 1;"
irgl.cblock "  cav[0] = s;"
irgl.cblock "  for (int i = 0; i < n; ++i)"
irgl.cblock "    for (int j = 0; j < 3; ++j) {"
irgl.cblock "      int o = nbr[3 * cav[i] + j];"
irgl.cblock "      if (o < 0 || dmr_contains(cav, n, o) || !dmr_in_circle(xy, tri, o, px, py)) continue;"
irgl.cblock "      if (n == DMR_CAV) return -1;"
irgl.cblock "      cav[n++] = o;"
irgl.cblock "    }"
irgl.cblock "  return n;"
irgl.cblock "}"

// The boundary edges (u[i], v[i]) of the cavity, counter-clockwise, with the triangle o[i] across each (-1 on the
// domain boundary). Returns their number, or -1 if more than DMR_NB.
irgl.cblock "DMR_HD int dmr_boundary(const int* tri, const int* nbr, const int* cav, int ncav, int* u, int* v, int* o) {"
irgl.cblock "  int n = 0;"
irgl.cblock "  for (int i = 0; i < ncav; ++i)"
irgl.cblock "    for (int j = 0; j < 3; ++j) {"
irgl.cblock "      int t = cav[i], across = nbr[3 * t + j];"
irgl.cblock "      if (across >= 0 && dmr_contains(cav, ncav, across)) continue;"
irgl.cblock "      if (n == DMR_NB) return -1;"
irgl.cblock "      u[n] = tri[3 * t + j];"
irgl.cblock "      v[n] = tri[3 * t + (j + 1) % 3];"
irgl.cblock "      o[n] = across;"
irgl.cblock "      ++n;"
irgl.cblock "    }"
irgl.cblock "  return n;"
irgl.cblock "}"

// Can the cavity be re-triangulated as a fan around p? Every new triangle (u, v, p) must be positively oriented,
// the boundary a simple polygon (each vertex starts one edge) and every cavity vertex on it. The split edge
// (sa, sb), which contains p, gets no triangle.
irgl.cblock "DMR_HD bool dmr_star_shaped(const double* xy, const int* tri, const int* cav, int ncav, const int* u, const int* v,"
irgl.cblock "                            int nb, int sa, int sb, double px, double py) {"
irgl.cblock "  for (int i = 0; i < nb; ++i) {"
irgl.cblock "    if (dmr_contains(u, i, u[i])) return false;"
irgl.cblock "    if (u[i] == sa && v[i] == sb) continue;"
irgl.cblock "    double ux = xy[2 * u[i]] - px, uy = xy[2 * u[i] + 1] - py, vx = xy[2 * v[i]] - px, vy = xy[2 * v[i] + 1] - py;"
irgl.cblock "    double scale = sqrt((ux * ux + uy * uy) * (vx * vx + vy * vy));"
irgl.cblock "    if (!(dmr_orient(xy, u[i], v[i], px, py) > 1e-10 * scale)) return false;"
irgl.cblock "  }"
irgl.cblock "  for (int i = 0; i < 3 * ncav; ++i) {"
irgl.cblock "    int w = tri[3 * cav[i / 3] + i % 3];"
irgl.cblock "    if (!dmr_contains(u, nb, w) && !dmr_contains(v, nb, w)) return false;"
irgl.cblock "  }"
irgl.cblock "  return true;"
irgl.cblock "}"

// The cavity that inserts (px, py) to fix the bad triangle t, or, with `ruppert`, when the point lies outside the
// domain or encroaches a domain-boundary edge of its cavity, that edge's midpoint. Fills lock (the cavity, then its
// outside neighbours), info and pt (the new point). Returns the number of triangles to lock; DMR_TOO_BIG if the
// cavity does not fit; DMR_FAILED on a numerical failure. Reads the mesh only.
irgl.cblock "DMR_HD int dmr_cavity_at(int t, const double* xy, const int* tri, const int* nbr, double px, double py,"
irgl.cblock "                         bool ruppert, int* lock, int* info, double* pt) {"
irgl.cblock "  int s, e, ncav = 0;"
irgl.cblock "  if (!dmr_locate(xy, tri, nbr, t, px, py, &s, &e)) return DMR_FAILED;"
irgl.cblock "  if (e >= 0 && !ruppert) return DMR_FAILED;"
irgl.cblock "  if (e < 0) {"
irgl.cblock "    ncav = dmr_grow(xy, tri, nbr, s, px, py, lock);"
irgl.cblock "    if (ncav < 0) return DMR_TOO_BIG;"
irgl.cblock "    for (int i = 0; ruppert && i < 3 * ncav && e < 0; ++i) {"
irgl.cblock "      int k = lock[i / 3], j = i % 3;"
irgl.cblock "      if (nbr[3 * k + j] < 0 && dmr_encroaches(xy, tri[3 * k + j], tri[3 * k + (j + 1) % 3], px, py)) {"
irgl.cblock "        s = k;"
irgl.cblock "        e = j;"
irgl.cblock "      }"
irgl.cblock "    }"
irgl.cblock "  }"
irgl.cblock "  int sa = -1, sb = -1;"
irgl.cblock "  if (e >= 0) {"
irgl.cblock "    sa = tri[3 * s + e];"
irgl.cblock "    sb = tri[3 * s + (e + 1) % 3];"
irgl.cblock "    px = 0.5 * (xy[2 * sa] + xy[2 * sb]);"
irgl.cblock "    py = 0.5 * (xy[2 * sa + 1] + xy[2 * sb + 1]);"
irgl.cblock "    ncav = dmr_grow(xy, tri, nbr, s, px, py, lock);"
irgl.cblock "    if (ncav < 0) return DMR_TOO_BIG;"
irgl.cblock "  }"
irgl.cblock "  int u[DMR_NB], v[DMR_NB], o[DMR_NB];"
irgl.cblock "  int nb = dmr_boundary(tri, nbr, lock, ncav, u, v, o);"
irgl.cblock "  if (nb < 0) return DMR_TOO_BIG;"
irgl.cblock "  if (!dmr_star_shaped(xy, tri, lock, ncav, u, v, nb, sa, sb, px, py)) return DMR_FAILED;"
irgl.cblock "  int nlock = ncav;"
irgl.cblock "  for (int i = 0; i < nb; ++i) {"
irgl.cblock "    if (o[i] < 0 || dmr_contains(lock, nlock, o[i])) continue;"
irgl.cblock "    if (nlock == DMR_CAV) return DMR_TOO_BIG;"
irgl.cblock "    lock[nlock++] = o[i];"
irgl.cblock "  }"
irgl.cblock "  info[0] = ncav;"
irgl.cblock "  info[1] = nlock;"
irgl.cblock "  info[2] = sa;"
irgl.cblock "  info[3] = sb;"
irgl.cblock "  pt[0] = px;"
irgl.cblock "  pt[1] = py;"
irgl.cblock "  return nlock;"
irgl.cblock "}"

// The cavity for t's circumcenter (with Ruppert's boundary splits); when that fails numerically (a nearly
// degenerate fan), for points moved halfway to t's centroid and onto it: they lie in t's circumcircle too, so
// inserting them also removes t.
irgl.cblock "DMR_HD int dmr_build_cavity(int t, const double* xy, const int* tri, const int* nbr, const int* flags, int* lock,"
irgl.cblock "                            int* info, double* pt) {"
irgl.cblock "  if (!dmr_alive_and_bad(xy, tri, flags, t)) return 0;"
irgl.cblock "  double cx, cy;"
irgl.cblock "  dmr_circumcenter(xy, tri, t, &cx, &cy);"
irgl.cblock "  if (!isfinite(cx) || !isfinite(cy)) return DMR_FAILED;"
irgl.cblock "  double gx = 0.0, gy = 0.0;"
irgl.cblock "  for (int j = 0; j < 3; ++j) {"
irgl.cblock "    gx += xy[2 * tri[3 * t + j]] / 3.0;"
irgl.cblock "    gy += xy[2 * tri[3 * t + j] + 1] / 3.0;"
irgl.cblock "  }"
irgl.cblock "  int status = DMR_FAILED;"
irgl.cblock "  for (int attempt = 0; attempt < 3 && status == DMR_FAILED; ++attempt) {"
irgl.cblock "    double lam = 0.5 * attempt;"
irgl.cblock "    status = dmr_cavity_at(t, xy, tri, nbr, cx + lam * (gx - cx), cy + lam * (gy - cy), attempt == 0, lock, info, pt);"
irgl.cblock "  }"
irgl.cblock "  return status;"
irgl.cblock "}"

// Replace the cavity (locked by the caller) by a fan of new triangles around the new point, which are allocated
// with atomicAdd on the counters. Returns the first new triangle (info[5] of them, consecutive), or -1 when the
// capacity is exhausted (meta[DMR_OVERFLOW] is set and the mesh is left unchanged).
irgl.cblock "DMR_HD int dmr_retriangulate(double* xy, int* tri, int* nbr, int* flags, int* meta, const int* lock, int* info,"
irgl.cblock "                             const double* pt) {"
irgl.cblock "  int ncav = info[0], sa = info[2], sb = info[3];"
irgl.cblock "  int u[DMR_NB], v[DMR_NB], o[DMR_NB];"
irgl.cblock "  int nb = dmr_boundary(tri, nbr, lock, ncav, u, v, o), k = 0;"
irgl.cblock "  for (int i = 0; i < nb; ++i) {"
irgl.cblock "    if (u[i] == sa && v[i] == sb) continue;"
irgl.cblock "    u[k] = u[i];"
irgl.cblock "    v[k] = v[i];"
irgl.cblock "    o[k] = o[i];"
irgl.cblock "    ++k;"
irgl.cblock "  }"
irgl.cblock "  int p = dmr_fetch_add(&meta[DMR_NPTS], 1);"
irgl.cblock "  int base = dmr_fetch_add(&meta[DMR_NTRI], k);"
irgl.cblock "  if (p >= meta[DMR_PCAP] || base + k > meta[DMR_TCAP]) {"
irgl.cblock "    meta[DMR_OVERFLOW] = 1;"
irgl.cblock "    return -1;"
irgl.cblock "  }"
irgl.cblock "  xy[2 * p] = pt[0];"
irgl.cblock "  xy[2 * p + 1] = pt[1];"
irgl.cblock "  for (int i = 0; i < ncav; ++i) flags[lock[i]] |= DMR_DELETED;"
irgl.cblock "  for (int i = 0; i < k; ++i) {"
irgl.cblock "    int t = base + i;"
irgl.cblock "    tri[3 * t] = u[i];"
irgl.cblock "    tri[3 * t + 1] = v[i];"
irgl.cblock "    tri[3 * t + 2] = p;"
irgl.cblock "    nbr[3 * t] = o[i];"
irgl.cblock "    nbr[3 * t + 1] = nbr[3 * t + 2] = -1;"
irgl.cblock "    for (int j = 0; j < k; ++j) {"
irgl.cblock "      if (u[j] == v[i]) nbr[3 * t + 1] = base + j;"
irgl.cblock "      if (v[j] == u[i]) nbr[3 * t + 2] = base + j;"
irgl.cblock "    }"
irgl.cblock "    if (o[i] >= 0)"
irgl.cblock "      for (int j = 0; j < 3; ++j)"
irgl.cblock "        if (tri[3 * o[i] + j] == v[i] && tri[3 * o[i] + (j + 1) % 3] == u[i]) nbr[3 * o[i] + j] = t;"
irgl.cblock "    flags[t] = 0;"
irgl.cblock "  }"
irgl.cblock "  info[4] = base;"
irgl.cblock "  info[5] = k;"
irgl.cblock "  info[6] = p;"
irgl.cblock "  dmr_fetch_add(&meta[sa < 0 ? DMR_INSERTED : DMR_SPLIT], 1);"
irgl.cblock "  return base;"
irgl.cblock "}"

// The cavity of t did not fit: true if t should be retried later, false (counted as given up) after
// DMR_MAX_TRIES times.
irgl.cblock "DMR_HD bool dmr_postpone(int* flags, int* meta, int t) {"
irgl.cblock "  if (dmr_fetch_add(&flags[t], DMR_TRY) / DMR_TRY >= DMR_MAX_TRIES) {"
irgl.cblock "    dmr_fetch_add(&meta[DMR_GAVE_UP], 1);"
irgl.cblock "    return false;"
irgl.cblock "  }"
irgl.cblock "  dmr_fetch_add(&meta[DMR_POSTPONED], 1);"
irgl.cblock "  return true;"
irgl.cblock "}"

// The number of triangle slots in use (the counter may pass the capacity on overflow).
irgl.cblock "DMR_HD int dmr_num_triangles(const int* meta) {"
irgl.cblock "  return meta[DMR_NTRI] < meta[DMR_TCAP] ? meta[DMR_NTRI] : meta[DMR_TCAP];"
irgl.cblock "}"

irgl.cblock "#ifdef __CUDACC__"
// Host side: read or write one meta counter; fail after a capacity overflow.
irgl.cblock "static inline int dmr_host_get(const int* meta, int slot) {"
irgl.cblock "  int value = 0;"
irgl.cblock "  IRGL_CHECK(cudaMemcpy(&value, meta + slot, sizeof(int), cudaMemcpyDeviceToHost));"
irgl.cblock "  return value;"
irgl.cblock "}"
irgl.cblock "static inline void dmr_host_set(int* meta, int slot, int value) {"
irgl.cblock "  IRGL_CHECK(cudaMemcpy(meta + slot, &value, sizeof(int), cudaMemcpyHostToDevice));"
irgl.cblock "}"
irgl.cblock "static inline void dmr_host_check(const int* meta) {"
irgl.cblock "  if (dmr_host_get(meta, DMR_OVERFLOW))"
irgl.cblock "    throw irgl::Error(\"dmr: mesh capacity exceeded (more triangles or points than allocated)\");"
irgl.cblock "}"
irgl.cblock "#endif"

// Push every live bad triangle and count them in meta[DMR_NBAD].
irgl.kernel @identify_bad_triangles(%xy: memref<?xf64>, %tri: memref<?xi32>, %flags: memref<?xi32>, %meta: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %ntri = irgl.cexpr "dmr_num_triangles($0)" (%meta : memref<?xi32>) : index
  irgl.forall %t in range(%c0, %ntri) {
    %bad = irgl.cexpr "dmr_alive_and_bad($0, $1, $2, $3)" (%xy, %tri, %flags, %t : memref<?xf64>, memref<?xi32>, memref<?xi32>, index) : i1
    scf.if %bad {
      irgl.cblock "atomicAdd(&$0[DMR_NBAD], 1);" (%meta : memref<?xi32>)
      irgl.wl.push %t
    }
  }
}

// Fix the bad triangles of the worklist. Each thread builds the cavity of its
// triangle (reading the mesh only), then all of them contend for their
// cavities and the triangles around them with Exclusive; the winners
// re-triangulate and push the new bad triangles (and their own triangle if a
// boundary split left it alive); the losers go to the next invocation with
// them (retry merge: one launch per round of the Pipe instead of relaunching
// on the losers until none is left, which halves the launches). A cavity that does not fit
// the 256-entry lock array is postponed to the next invocation (at most
// DMR_MAX_TRIES times, then given up and counted).
irgl.kernel @refine(%xy: memref<?xf64>, %tri: memref<?xi32>, %nbr: memref<?xi32>, %flags: memref<?xi32>, %meta: memref<?xi32>, %claims: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  %too_big = arith.constant -1 : i32
  %failed = arith.constant -2 : i32
  %c5 = arith.constant 5 : index
  irgl.forall %slot in worklist {
    %lock = memref.alloca() : memref<256xi32>
    %info = memref.alloca() : memref<8xi32>
    %pt = memref.alloca() : memref<2xf64>
    %t = irgl.wl.pop %slot
    %status = irgl.cexpr "dmr_build_cavity($0, $1, $2, $3, $4, $5, $6, $7)" (%t, %xy, %tri, %nbr, %flags, %lock, %info, %pt : index, memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<256xi32>, memref<8xi32>, memref<2xf64>) : i32
    %go = arith.cmpi sgt, %status, %zero : i32
    %n32 = arith.maxsi %status, %zero : i32
    %n = arith.index_cast %n32 : i32 to index
    %is_too_big = arith.cmpi eq, %status, %too_big : i32
    scf.if %is_too_big {
      %again = irgl.cexpr "dmr_postpone($0, $1, $2)" (%flags, %meta, %t : memref<?xi32>, memref<?xi32>, index) : i1
      scf.if %again {
        irgl.retry %t merge
      }
    }
    %has_failed = arith.cmpi eq, %status, %failed : i32
    scf.if %has_failed {
      irgl.cblock "atomicAdd(&$0[DMR_GAVE_UP], 1);" (%meta : memref<?xi32>)
    }
    irgl.exclusive %claims array(%lock[%n]) : memref<?xi32>, memref<256xi32> {
      scf.if %go {
        %first = irgl.cexpr "dmr_retriangulate($0, $1, $2, $3, $4, $5, $6, $7)" (%xy, %tri, %nbr, %flags, %meta, %lock, %info, %pt : memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<256xi32>, memref<8xi32>, memref<2xf64>) : i32
        %done = arith.cmpi sge, %first, %zero : i32
        scf.if %done {
          %lo = arith.index_cast %first : i32 to index
          %count32 = memref.load %info[%c5] : memref<8xi32>
          %count = arith.index_cast %count32 : i32 to index
          %hi = arith.addi %lo, %count : index
          irgl.for %new in range(%lo, %hi) {
            %bad = irgl.cexpr "dmr_is_bad($0, $1, $2)" (%xy, %tri, %new : memref<?xf64>, memref<?xi32>, index) : i1
            scf.if %bad {
              irgl.wl.push %new
            }
          }
          %alive = irgl.cexpr "!($0[$1] & DMR_DELETED)" (%flags, %t : memref<?xi32>, index) : i1
          scf.if %alive {
            irgl.wl.push %t
          }
        }
      }
    } else {
      irgl.retry %t merge
    }
    irgl.sync_running_threads
  }
}

// The specification's DMR Pipe: find the bad triangles, refine until none is
// left (refine's pushes feed the next refine), then count again as a sanity
// check. Returns the number of bad triangles left; fails on a capacity
// overflow. %wlcap is the capacity of each worklist.
irgl.kernel host @main(%xy: memref<?xf64>, %tri: memref<?xi32>, %nbr: memref<?xi32>, %flags: memref<?xi32>, %meta: memref<?xi32>, %claims: memref<?xi32>, %wlcap: index) -> i32 {
  irgl.pipe once capacity %wlcap {
    irgl.cblock "dmr_host_set($0, DMR_NBAD, 0);" (%meta : memref<?xi32>)
    irgl.invoke @identify_bad_triangles(%xy, %tri, %flags, %meta) : (memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.cblock "dmr_host_set($0, DMR_INITIAL_BAD, dmr_host_get($0, DMR_NBAD));" (%meta : memref<?xi32>)
    irgl.cblock "fprintf(stderr, \"dmr: initial bad triangles: %d\\n\", dmr_host_get($0, DMR_NBAD));" (%meta : memref<?xi32>)
    irgl.pipe {
      irgl.invoke @refine(%xy, %tri, %nbr, %flags, %meta, %claims) : (memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    }
    irgl.cblock "dmr_host_set($0, DMR_NBAD, 0);" (%meta : memref<?xi32>)
    irgl.invoke @identify_bad_triangles(%xy, %tri, %flags, %meta) : (memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.cblock "fprintf(stderr, \"dmr: final bad triangles: %d\\n\", dmr_host_get($0, DMR_NBAD));" (%meta : memref<?xi32>)
  }
  irgl.cblock "dmr_host_check($0);" (%meta : memref<?xi32>)
  %bad = irgl.cexpr "dmr_host_get($0, DMR_NBAD)" (%meta : memref<?xi32>) : i32
  irgl.return %bad : i32
}
