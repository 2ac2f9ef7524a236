// Delaunay mesh refinement driven by Pipes: the specification's "Example of
// Pipe in DMR" listing.
//
//   Pipe Once {
//     Invoke identify_bad_triangles(mesh);
//     printf("initial bad: %d\n", ...);
//     Pipe {                       // looping
//       Invoke refine(mesh);
//       ...                        // other mesh maintenance code
//       Invoke incremental_id_bad_triangles(mesh);
//     }
//     Invoke identify_bad_triangles(mesh);
//     printf("final bad: %d\n", ...);
//   }
//
// The outer Pipe establishes the worklists: identify_bad_triangles fills it
// and the inner, looping Pipe inherits it, passing the worklist from refine
// to incremental_id_bad_triangles and back until it is empty. Geometry is C
// code in dmr_mesh.cuh beside this file (inlined by irgl.cinclude).

irgl.names ["DMR_MAX_CAVITY"]
irgl.cblock "#include <cstdio>"
irgl.cinclude "dmr_mesh.cuh"

// Push every live bad triangle and count them in nbad[0].
irgl.kernel @identify_bad_triangles(%mesh: memref<?xf32>, %is_del: memref<?xi32>, %is_bad: memref<?xi32>, %ntriangles: index, %nbad: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  irgl.forall %t in range(%c0, %ntriangles) {
    %del = memref.load %is_del[%t] : memref<?xi32>
    %alive = arith.cmpi eq, %del, %zero : i32
    scf.if %alive {
      %bad = irgl.cexpr "triangle_is_bad($0, $1)" (%mesh, %t : memref<?xf32>, index) : i1
      %flag = arith.extui %bad : i1 to i32
      memref.store %flag, %is_bad[%t] : memref<?xi32>
      scf.if %bad {
        irgl.wl.push %t
        // atomic add (kind 1 is addi); xDSL has no custom syntax for it
        %old = "memref.atomic_rmw"(%one, %nbad, %c0) <{kind = 1 : i64}> : (i32, memref<1xi32>, index) -> i32
      }
    }
  }
}

// The Refine kernel: lock the cavity of each bad triangle with Exclusive and
// re-triangulate it; new triangles are flagged in is_new.
irgl.kernel @refine(%mesh: memref<?xf32>, %mesh_claims: memref<?xi32>, %is_del: memref<?xi32>, %is_new: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  irgl.forall %btidx in worklist {
    %bad_triangle = irgl.wl.pop %btidx
    %del = memref.load %is_del[%bad_triangle] : memref<?xi32>
    %alive = arith.cmpi eq, %del, %zero : i32
    %cavity = memref.alloca() : memref<64xindex>
    %cavity_size_cell = memref.alloca() : memref<index>
    memref.store %c0, %cavity_size_cell[] : memref<index>
    scf.if %alive {
      irgl.cblock "build_cavity($0, $1, $2, $3, DMR_MAX_CAVITY);" (%mesh, %bad_triangle, %cavity_size_cell, %cavity : memref<?xf32>, index, memref<index>, memref<64xindex>) reads(%mesh, %is_del : memref<?xf32>, memref<?xi32>) writes(%cavity_size_cell, %cavity : memref<index>, memref<64xindex>)
    }
    %cavity_size = memref.load %cavity_size_cell[] : memref<index>
    irgl.exclusive %mesh_claims array(%cavity[%cavity_size]) : memref<?xi32>, memref<64xindex> {
      scf.if %alive {
        irgl.cblock "retriangulate($0, $1, $2, $3, $4);" (%mesh, %is_del, %is_new, %cavity, %cavity_size : memref<?xf32>, memref<?xi32>, memref<?xi32>, memref<64xindex>, index) reads(%cavity : memref<64xindex>) writes(%mesh, %is_del, %is_new : memref<?xf32>, memref<?xi32>, memref<?xi32>)
      }
    } else {
      irgl.retry %bad_triangle
    }
    irgl.sync_running_threads
  }
}

// Only among newly created triangles: push the bad ones, clear is_new.
irgl.kernel @incremental_id_bad_triangles(%mesh: memref<?xf32>, %is_new: memref<?xi32>, %is_bad: memref<?xi32>, %ntriangles: index) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  irgl.forall %t in range(%c0, %ntriangles) {
    %new = memref.load %is_new[%t] : memref<?xi32>
    %is_new_t = arith.cmpi ne, %new, %zero : i32
    scf.if %is_new_t {
      memref.store %zero, %is_new[%t] : memref<?xi32>
      %bad = irgl.cexpr "triangle_is_bad($0, $1)" (%mesh, %t : memref<?xf32>, index) : i1
      %flag = arith.extui %bad : i1 to i32
      memref.store %flag, %is_bad[%t] : memref<?xi32>
      scf.if %bad {
        irgl.wl.push %t
      }
    }
  }
}

// ntriangles bounds the triangle ids (the mesh has room for that many);
// capacity bounds the worklists.
irgl.kernel host @main(%mesh: memref<?xf32>, %mesh_claims: memref<?xi32>, %is_del: memref<?xi32>, %is_bad: memref<?xi32>, %is_new: memref<?xi32>, %ntriangles: index, %capacity: index) {
  // Zero-initialized device counters for the two sanity prints.
  %initial_bad = memref.alloc() : memref<1xi32>
  %final_bad = memref.alloc() : memref<1xi32>
  irgl.pipe once capacity %capacity {
    irgl.invoke @identify_bad_triangles(%mesh, %is_del, %is_bad, %ntriangles, %initial_bad) : (memref<?xf32>, memref<?xi32>, memref<?xi32>, index, memref<1xi32>)
    irgl.cblock "{ int32_t n = 0; irgl_copy_to_host(&n, $0, sizeof n); printf(\"initial bad: %d\\n\", n); }" (%initial_bad : memref<1xi32>) reads(%initial_bad : memref<1xi32>)
    // looping Pipe
    irgl.pipe {
      irgl.invoke @refine(%mesh, %mesh_claims, %is_del, %is_new) : (memref<?xf32>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
      // ... other mesh maintenance code
      // only among newly created triangles
      irgl.invoke @incremental_id_bad_triangles(%mesh, %is_new, %is_bad, %ntriangles) : (memref<?xf32>, memref<?xi32>, memref<?xi32>, index)
    }
    // sanity check
    irgl.invoke @identify_bad_triangles(%mesh, %is_del, %is_bad, %ntriangles, %final_bad) : (memref<?xf32>, memref<?xi32>, memref<?xi32>, index, memref<1xi32>)
    irgl.cblock "{ int32_t n = 0; irgl_copy_to_host(&n, $0, sizeof n); printf(\"final bad: %d\\n\", n); }" (%final_bad : memref<1xi32>) reads(%final_bad : memref<1xi32>)
  }
  memref.dealloc %initial_bad : memref<1xi32>
  memref.dealloc %final_bad : memref<1xi32>
}
