// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops{warp_spread=true}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{outline=false}' -t 'cuda{inline-runtime=false}' | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{outline=false warp_spread=false}' -t 'cuda{inline-runtime=false}' | filecheck %s --check-prefix=CUDA-OFF

// Warp spread (convert-irgl-loops `warp_spread`, on in lower-irgl): the
// grid-stride loop over the worklist starts at the thread's position
// (w * grid_dim + k) * 32 + l (lane l of warp w of block k), not at its
// global id; the stride stays the number of threads. A warp still runs 32
// consecutive slots.
irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}

// CHECK:      ^{{.*}}(%g: !irgl.graph, %[[IN:.*]]: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist):
// CHECK:        "gpu.grid_dim"
// CHECK-NEXT:   %[[NTHREADS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   %[[W:.*]] = arith.constant 32 : index
// CHECK-NEXT:   %[[TX:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[LANE:.*]] = arith.remui %[[TX]], %[[W]] : index
// CHECK-NEXT:   %[[WARP:.*]] = arith.divui %[[TX]], %[[W]] : index
// CHECK-NEXT:   %[[GDIM:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[WG:.*]] = arith.muli %[[WARP]], %[[GDIM]] : index
// CHECK-NEXT:   %[[BID:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[CHUNK:.*]] = arith.addi %[[WG]], %[[BID]] : index
// CHECK-NEXT:   %[[FIRSTPOS:.*]] = arith.muli %[[CHUNK]], %[[W]] : index
// CHECK-NEXT:   %[[SPREAD:.*]] = arith.addi %[[FIRSTPOS]], %[[LANE]] : index
// A block size that is not a multiple of 32 (a kernel bounded below a
// warp) keeps the global id: the spread would leave holes.
// CHECK-NEXT:   %[[BDIM:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[PART:.*]] = arith.remui %[[BDIM]], %[[W]] : index
// CHECK-NEXT:   %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[WHOLE:.*]] = arith.cmpi eq, %[[PART]], %[[Z]] : index
// CHECK-NEXT:   %[[POS:.*]] = arith.select %[[WHOLE]], %[[SPREAD]], %[[TID:.*]] : index
// CHECK-NEXT:   %[[DELTA:.*]] = arith.muli %[[POS]], %{{.*}} : index
// CHECK-NEXT:   %[[START:.*]] = arith.addi %{{.*}}, %[[DELTA]] : index
// CHECK-NEXT:   %[[STRIDE:.*]] = arith.muli %[[NTHREADS]], %{{.*}} : index
// CHECK-NEXT:   scf.for %i = %[[START]] to %{{.*}} step %[[STRIDE]] {
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}

// Off (the pass's default): the position is the global id.
// OFF-NOT:      arith.divui
// OFF:          } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}

// CUDA:         __global__ void k(
// CUDA:           irgl_index [[LANE:v[0-9]+]] = (irgl_index)((uint32_t){{v[0-9]+}} % (uint32_t)32);
// CUDA-NEXT:      irgl_index [[WARP:v[0-9]+]] = (irgl_index)((uint32_t){{v[0-9]+}} / (uint32_t)32);
// CUDA-OFF-NOT:   % (uint32_t)32)

// -----

// Uniform rounds (the ForAll holds a barrier): round r runs slot
// r * nthreads + position.
irgl.kernel @u(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %one = arith.constant 1 : i32
    memref.store %one, %x[%n] : memref<?xi32>
    irgl.sync_running_threads
  }
}

// CHECK:       ^bb0(%x: memref<?xi32>, %{{.*}}: !irgl_rt.worklist
// CHECK:         "gpu.grid_dim"
// CHECK-NEXT:    %[[NTHREADS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         arith.divui
// CHECK:         %[[POS:.*]] = arith.select
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[R]], %[[NTHREADS]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[BASE]], %[[POS]] : index
// CHECK:         } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// -----

// A ForAll holding an Exclusive keeps the global id (its contenders'
// priorities follow the mapping).
irgl.kernel @x(%claims: memref<?xi32>, %items: memref<4xindex>, %out: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      %one = arith.constant 1 : i32
      memref.store %one, %out[%i] : memref<?xi32>
    } else {
      %two = arith.constant 2 : i32
      memref.store %two, %out[%i] : memref<?xi32>
    }
  }
}

// CHECK:       ^bb0(%claims: memref<?xi32>
// CHECK-NOT:     arith.divui
// CHECK:         irgl_rt.collective
// CHECK:         } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// -----

// A ForAll over the nodes (or a range) fills the grid anyway: not spread.
irgl.kernel @n(%g: !irgl.graph, %x: memref<?xi32>) {
  irgl.forall %v in nodes(%g) {
    %one = arith.constant 1 : i32
    memref.store %one, %x[%v] : memref<?xi32>
  }
}

// CHECK:       ^bb0(%g: !irgl.graph, %x: memref<?xi32>):
// CHECK-NOT:     arith.divui
// CHECK:         } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}
