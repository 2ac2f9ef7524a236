// Delaunay mesh refinement (DMR) in IrGL: the specification's refine kernel
// (Exclusive over a cavity) and Pipe listing.
//
// The mesh lives in flat device arrays (benchmarks/dmr/mesh.py builds them):
//   xy     f64[2 * point capacity]     point coordinates
//   tri    i32[3 * triangle capacity]  counter-clockwise vertex ids
//   nbr    i32[3 * triangle capacity]  triangle across edge (tri[3t+i], tri[3t+(i+1)%3]), -1 on the boundary
//   flags  i32[triangle capacity]      bit 0: deleted (slots not in use are deleted); the rest counts postponements
//   meta   i32[16]                     counters (DMR_NTRI, DMR_NPTS, ... below)
//   claims i32[3 * triangle capacity]  the claim array of the Exclusive: one cell per edge (dmr_edge_id)
// A triangle is bad if its smallest angle is below 30 degrees. A bad triangle
// gets its off-center inserted (Ungor: the circumcenter, or a point between it
// and the shortest edge when the circumcenter is far; Bowyer-Watson cavity,
// re-triangulated as a fan), except that when that point lies outside the
// domain or encroaches a domain-boundary edge of its cavity, that boundary
// edge is split at its midpoint instead (Ruppert). New triangles and points
// are allocated with atomicAdd on the counters; running out of capacity sets
// DMR_OVERFLOW, leaves the mesh unchanged and makes @main fail.
//
// The geometry is C (the escape hatch) in dmr_mesh.cuh, __host__ __device__ so that
// benchmarks/dmr/cpu.py can run the same code sequentially on the CPU.

// DMR device helpers (the C escape hatch of dmr.mlir): dmr_mesh.cuh, beside
// this file, is inlined into the emitted CUDA.
irgl.cinclude "dmr_mesh.cuh"

// Push every live bad triangle and count them in meta[DMR_NBAD]. The
// triangles are visited in a scattered order (dmr_scatter), so that the
// worklist's order, which is the Exclusive's priority order in @refine, is
// not the spatially coherent order of the triangle ids.
irgl.kernel @identify_bad_triangles(%xy: memref<?xf64>, %tri: memref<?xi32>, %flags: memref<?xi32>, %meta: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %ntri = irgl.cexpr "dmr_num_triangles($0)" (%meta : memref<?xi32>) : index
  irgl.forall %i in range(%c0, %ntri) {
    %t = irgl.cexpr "dmr_scatter($0, $1)" (%i, %ntri : index, index) : index
    %bad = irgl.cexpr "dmr_alive_and_bad($0, $1, $2, $3)" (%xy, %tri, %flags, %t : memref<?xf64>, memref<?xi32>, memref<?xi32>, index) : i1
    scf.if %bad {
      irgl.cblock "atomicAdd(&$0[DMR_NBAD], 1);" (%meta : memref<?xi32>)
      irgl.wl.push %t
    }
  }
}

// Fix the bad triangles of the worklist. Each thread builds the cavity of its
// triangle (reading the mesh only), then all of them contend with Exclusive
// for the edges of their cavities (lock[info[0] ..], one claim cell per edge:
// two cavities conflict only if they share a triangle or an edge; two that
// only border the same outside triangle write different links of it, and the
// mesh stays Delaunay, since a point in the circumcircle of a triangle across
// a cavity's edge has that triangle in its own cavity); the winners
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
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
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
    %claim0_32 = memref.load %info[%c0] : memref<8xi32>
    %claim0 = arith.index_cast %claim0_32 : i32 to index
    %claim_end = arith.addi %claim0, %n : index
    irgl.exclusive %claims iterator(%lock[%claim0 to %claim_end step %c1]) : memref<?xi32>, memref<256xi32> {
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

// meta[DMR_NBAD] = 0, before a count (one thread).
irgl.kernel @reset_bad_count(%meta: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in range(%c0, %c1) {
    irgl.cblock "$0[DMR_NBAD] = 0;" (%meta : memref<?xi32>)
  }
}

// meta[DMR_INITIAL_BAD] = meta[DMR_NBAD], after the first count (one thread).
irgl.kernel @record_initial_bad(%meta: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in range(%c0, %c1) {
    irgl.cblock "$0[DMR_INITIAL_BAD] = $0[DMR_NBAD];" (%meta : memref<?xi32>)
  }
}

// The specification's DMR Pipe: find the bad triangles, refine until none is
// left (refine's pushes feed the next refine), then count again as a sanity
// check. Returns the number of bad triangles left; fails on a capacity
// overflow. %wlcap is the capacity of each worklist. The counters are reset
// and recorded by kernels, so that the whole Pipe runs on the device (one
// control kernel); the host reports them afterwards.
irgl.kernel host @main(%xy: memref<?xf64>, %tri: memref<?xi32>, %nbr: memref<?xi32>, %flags: memref<?xi32>, %meta: memref<?xi32>, %claims: memref<?xi32>, %wlcap: index) -> i32 {
  irgl.pipe once capacity %wlcap {
    irgl.invoke @reset_bad_count(%meta) : (memref<?xi32>)
    irgl.invoke @identify_bad_triangles(%xy, %tri, %flags, %meta) : (memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.invoke @record_initial_bad(%meta) : (memref<?xi32>)
    irgl.pipe {
      irgl.invoke @refine(%xy, %tri, %nbr, %flags, %meta, %claims) : (memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    }
    irgl.invoke @reset_bad_count(%meta) : (memref<?xi32>)
    irgl.invoke @identify_bad_triangles(%xy, %tri, %flags, %meta) : (memref<?xf64>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
  }
  irgl.cblock "fprintf(stderr, \"dmr: initial bad triangles: %d\\n\", dmr_host_get($0, DMR_INITIAL_BAD));" (%meta : memref<?xi32>)
  irgl.cblock "fprintf(stderr, \"dmr: final bad triangles: %d\\n\", dmr_host_get($0, DMR_NBAD));" (%meta : memref<?xi32>)
  irgl.cblock "dmr_host_check($0);" (%meta : memref<?xi32>)
  %bad = irgl.cexpr "dmr_host_get($0, DMR_NBAD)" (%meta : memref<?xi32>) : i32
  irgl.return %bad : i32
}
