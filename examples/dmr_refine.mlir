// Delaunay mesh refinement: the Refine kernel of the specification's
// "Simplified Refine kernel" listing, iterated over the bad triangles.
//
// The geometry (cavity search, re-triangulation, the quality test) is C code
// in dmr_mesh.cuh beside this file (inlined by irgl.cinclude); the IR shows
// what the compiler must know: the worklist, the per-thread cavity array, the
// Exclusive over the cavity's triangles (mesh_claims has one cell per
// triangle) and the grid barrier.

irgl.names ["DMR_MAX_CAVITY"]
irgl.cinclude "dmr_mesh.cuh"

// A triangle is alive while it has not been deleted by a re-triangulation
// (a device kernel: a CUDA __device__ function, called from C text).
irgl.kernel device @is_alive(%is_del: memref<?xi32>, %t: index) -> i1 {
  %zero = arith.constant 0 : i32
  %del = memref.load %is_del[%t] : memref<?xi32>
  %alive = arith.cmpi eq, %del, %zero : i32
  irgl.return %alive : i1
}

irgl.kernel @refine(%mesh: memref<?xf32>, %mesh_claims: memref<?xi32>, %is_del: memref<?xi32>, %is_bad: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  irgl.forall %btidx in worklist {
    %bad_triangle = irgl.wl.pop %btidx
    // build_cavity(bad_triangle, &cavity_size, &cavity); a triangle deleted
    // by an earlier refinement has an empty cavity.
    %alive = irgl.cexpr "is_alive($0, $1)" (%is_del, %bad_triangle : memref<?xi32>, index) : i1
    %cavity = memref.alloca() : memref<64xindex>
    %cavity_size_cell = memref.alloca() : memref<index>
    memref.store %c0, %cavity_size_cell[] : memref<index>
    scf.if %alive {
      irgl.cblock "build_cavity($0, $1, $2, $3, DMR_MAX_CAVITY);" (%mesh, %bad_triangle, %cavity_size_cell, %cavity : memref<?xf32>, index, memref<index>, memref<64xindex>) reads(%mesh, %is_del : memref<?xf32>, memref<?xi32>) writes(%cavity_size_cell, %cavity : memref<index>, memref<64xindex>)
    }
    %cavity_size = memref.load %cavity_size_cell[] : memref<index>
    // Lock every triangle of the cavity, or none: the winner re-triangulates,
    // a loser retries its bad triangle when the kernel is re-invoked.
    irgl.exclusive %mesh_claims array(%cavity[%cavity_size]) : memref<?xi32>, memref<64xindex> {
      scf.if %alive {
        // delete_cavity(...); create new triangles, then push the new bad ones.
        %created = memref.alloca() : memref<64xindex>
        %ncreated_cell = memref.alloca() : memref<index>
        irgl.cblock "retriangulate($0, $1, $2, $3, $4, $5, $6);" (%mesh, %is_del, %is_bad, %cavity, %cavity_size, %created, %ncreated_cell : memref<?xf32>, memref<?xi32>, memref<?xi32>, memref<64xindex>, index, memref<64xindex>, memref<index>) reads(%cavity : memref<64xindex>) writes(%mesh, %is_del, %is_bad, %created, %ncreated_cell : memref<?xf32>, memref<?xi32>, memref<?xi32>, memref<64xindex>, memref<index>)
        %ncreated = memref.load %ncreated_cell[] : memref<index>
        irgl.for %i in range(%c0, %ncreated) {
          %t = memref.load %created[%i] : memref<64xindex>
          %bad = memref.load %is_bad[%t] : memref<?xi32>
          %still_bad = arith.cmpi ne, %bad, %zero : i32
          scf.if %still_bad {
            irgl.wl.push %t
          }
        }
      }
    } else {
      irgl.retry %bad_triangle
    }
    irgl.sync_running_threads
  }
}

// Refine until no bad triangle is left; the worklist starts with the bad
// triangles of the input mesh and never holds more than `capacity` items.
irgl.kernel host @main(%mesh: memref<?xf32>, %mesh_claims: memref<?xi32>, %is_del: memref<?xi32>, %is_bad: memref<?xi32>, %bad_triangles: memref<?xindex>, %nbad: index, %capacity: index) {
  irgl.iterate @refine(%mesh, %mesh_claims, %is_del, %is_bad) : (memref<?xf32>, memref<?xi32>, memref<?xi32>, memref<?xi32>) initial %bad_triangles[%nbad] : memref<?xindex> capacity %capacity {
  }
}
