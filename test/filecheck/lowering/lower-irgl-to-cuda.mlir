// RUN: irgl-opt %s -p 'lower-irgl{outline=false}' -t 'cuda{inline-runtime=false}' | filecheck %s

// The whole pipeline on the kernel and orchestration constructs: what the
// emitted CUDA of each looks like.

irgl.kernel @atomics(%g: !irgl.graph, %locks: memref<?xi32>, %x: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    irgl.atomic %locks[%n] : memref<?xi32> {
      %v = memref.load %x[%n] : memref<?xi32>
      memref.store %v, %x[%n] : memref<?xi32>
    }
    %t = arith.constant true
    irgl.reduce_and_return %t
  }
}
irgl.kernel @claims(%claims: memref<?xi32>, %items: memref<4xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
    }
  }
}
irgl.kernel @work(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %m = irgl.wl.pop %i
    irgl.retry %m
  }
}
irgl.kernel host @main(%g: !irgl.graph, %locks: memref<?xi32>, %x: memref<?xi32>, %claims: memref<?xi32>, %items: memref<4xindex>, %n: index, %src: index) {
  irgl.iterate while any @atomics(%g, %locks, %x) : (!irgl.graph, memref<?xi32>, memref<?xi32>) {
  }
  irgl.invoke @claims(%claims, %items, %n) : (memref<?xi32>, memref<4xindex>, index)
  irgl.pipe initial [%src] {
    irgl.invoke @work(%g) : (!irgl.graph)
  }
}

// Blocking Atomic: the divergence-safe acquire loop; ReduceAndReturn reduces
// into the kernel's cell.
// CHECK-LABEL: __global__ void atomics(irgl::Graph g,
// CHECK-SAME:    int32_t* locks, int32_t* x, irgl::Cell [[CELL:v[0-9]+]])
// CHECK:         for (irgl_index n = {{.*}}; n < {{.*}}; n += {{.*}}) {
// CHECK-NEXT:      bool [[DONE:v[0-9]+]] = false;
// CHECK-NEXT:      while (true) {
// CHECK-NEXT:        bool [[GO:v[0-9]+]] = [[DONE]] ^ true;
// CHECK-NEXT:        if (![[GO]]) break;
// CHECK-NEXT:        bool [[GOT:v[0-9]+]] = irgl_lock_try_i32(locks, n);
// CHECK-NEXT:        if ([[GOT]]) {
// CHECK-NEXT:          int32_t v = x[n];
// CHECK-NEXT:          x[n] = v;
// CHECK-NEXT:          irgl_lock_release_i32(locks, n);
// CHECK-NEXT:        }
// CHECK-NEXT:        [[DONE]] = [[GOT]];
// CHECK-NEXT:      }
// CHECK-NEXT:      irgl_cell_reduce([[CELL]], true);

// Exclusive: uniform rounds, the race, priority-check and check phases
// separated by grid barriers.
// CHECK-LABEL: __global__ void claims(int32_t* claims_1,
// CHECK:         irgl_claim_write(
// CHECK:         irgl_grid_sync();
// CHECK:         irgl_claim_read(
// CHECK:         irgl_claim_raise(
// CHECK:         irgl_grid_sync();
// CHECK:         irgl_claim_read(
// CHECK:         irgl_grid_sync();

// Retry pushes to the retry worklist.
// CHECK-LABEL: __global__ void work(irgl::Graph g,
// CHECK-SAME:    irgl::Worklist {{v[0-9]+}}, irgl::Worklist {{v[0-9]+}}, irgl::Worklist [[RETRY:v[0-9]+]])
// CHECK:         irgl_wl_push([[RETRY]], m);

// Host: Iterate While Any loops on the cell; the Exclusive kernel gets a
// co-resident cooperative launch; the Pipe re-launches on retried items, then
// swaps in and out.
// CHECK-LABEL: static void irgl_host_main(irgl::Graph g,
// CHECK:         irgl::Cell [[C:v[0-9]+]] = irgl_cell_create(true);
// CHECK:         while (true) {
// CHECK:           irgl_cell_reset([[C]]);
// CHECK:           irgl::launch(atomics, {{.*}}, 256, g, locks, x, [[C]]);
// CHECK:           irgl_cell_read([[C]]);
// CHECK:         irgl::grid_size(claims, 256, true);
// CHECK-NEXT:    irgl::launch_cooperative(claims,
// CHECK:         irgl::Pipe* [[P:v[0-9]+]] = irgl_pipe_create(
// CHECK-NEXT:    irgl_pipe_push_initial([[P]], src);
// CHECK:           irgl::launch(work,
// CHECK-NEXT:      while (true) {
// CHECK-NEXT:        irgl_index {{v[0-9]+}} = irgl_pipe_retry_size([[P]]);
// CHECK:             irgl_pipe_advance_retry([[P]]);
// CHECK:             irgl::launch(work,
// CHECK:           irgl_pipe_advance([[P]]);
// CHECK:         irgl_pipe_destroy([[P]]);
// CHECK-NEXT:    irgl_cell_destroy([[C]]);
// CHECK:       extern "C" int irgl_entry_main(void* g,
