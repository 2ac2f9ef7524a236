// RUN: irgl-opt %s --split-input-file -p convert-irgl-kernels,convert-irgl-loops | filecheck %s

// The outermost ForAll is a grid-stride loop over the worklist slots; the
// inner ForAll over a node's edges is a sequential loop; pop and push read
// `in` and append to `out`.
irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %d
    }
  }
}

// CHECK:      ^{{.*}}(%g: !irgl.graph, %[[IN:.*]]: !irgl_rt.worklist, %[[OUT:.*]]: !irgl_rt.worklist, %[[RETRY:.*]]: !irgl_rt.worklist):
// CHECK-NEXT:   %[[SIZE:.*]] = func.call @irgl_wl_size(%[[IN]])
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[BDIM:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[BID:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[FIRST:.*]] = arith.muli %[[BID]], %[[BDIM]]
// CHECK-NEXT:   %[[TX:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[TID:.*]] = arith.addi %[[FIRST]], %[[TX]]
// CHECK-NEXT:   %[[GDIM:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:   %[[NTHREADS:.*]] = arith.muli %[[GDIM]], %[[BDIM]]
// CHECK-NEXT:   %[[OFF:.*]] = arith.muli %[[TID]], %[[ONE]]
// CHECK-NEXT:   %[[START:.*]] = arith.addi %[[ZERO]], %[[OFF]]
// CHECK-NEXT:   %[[STRIDE:.*]] = arith.muli %[[NTHREADS]], %[[ONE]]
// CHECK-NEXT:   scf.for %i = %[[START]] to %[[SIZE]] step %[[STRIDE]] {
// CHECK-NEXT:     %n = func.call @irgl_wl_item(%[[IN]], %i)
// CHECK-NEXT:     %[[LO:.*]] = irgl.graph.first_edge %g[%n]
// CHECK-NEXT:     %[[HI:.*]] = irgl.graph.last_edge %g[%n]
// CHECK-NEXT:     %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:     scf.for %e = %[[LO]] to %[[HI]] step %[[STEP]] {
// CHECK-NEXT:       %d = irgl.graph.edge_dst %g[%e]
// CHECK-NEXT:       func.call @irgl_wl_push(%[[OUT]], %d)
// CHECK-NEXT:     }
// CHECK-NEXT:   } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}

// -----

// Retry appends to the retry worklist, a merging Retry to `out`, Respawn to
// the retry worklist; a host ForAll is a sequential loop over the nodes.
irgl.kernel @r(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.retry %n
    irgl.retry %n merge
    irgl.respawn %n
  }
}
irgl.kernel host @main(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
  }
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = irgl.graph.num_nodes %g
// CHECK-NEXT:    %[[O:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %n = %[[Z]] to %[[N]] step %[[O]] {
// CHECK-NEXT:    }
// CHECK:       ^{{.*}}(%g: !irgl.graph, %[[IN:.*]]: !irgl_rt.worklist, %[[OUT:.*]]: !irgl_rt.worklist, %[[RETRY:.*]]: !irgl_rt.worklist):
// CHECK:         %n = func.call @irgl_wl_item(%[[IN]], %i)
// CHECK-NEXT:    func.call @irgl_wl_push(%[[RETRY]], %n)
// CHECK-NEXT:    func.call @irgl_wl_push(%[[OUT]], %n)
// CHECK-NEXT:    func.call @irgl_wl_push(%[[RETRY]], %n)

// -----

// A ForAll whose body synchronizes the grid runs the same number of rounds
// on every thread; the work between barriers is guarded, and values used
// after a barrier become results of the guard (zero on idle threads).
irgl.kernel @s(%x: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    %v = memref.load %x[%i] : memref<?xi32>
    irgl.sync_running_threads
    memref.store %v, %x[%i] : memref<?xi32>
  }
}

// CHECK:         %[[SPAN:.*]] = arith.subi %n, %c0 : index
// CHECK-NEXT:    %[[COUNT:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK-NEXT:    %[[ROUNDS:.*]] = arith.ceildivsi %[[COUNT]], %{{.*}} : index
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %[[ROUNDS]] step %{{.*}} {
// CHECK:           %[[ACTIVE:.*]] = arith.cmpi slt, %{{.*}}, %[[COUNT]] : index
// CHECK:           %[[V:.*]] = scf.if %[[ACTIVE]] -> (i32) {
// CHECK-NEXT:        %v = memref.load %x[%{{.*}}] : memref<?xi32>
// CHECK-NEXT:        scf.yield %v : i32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:        scf.yield %[[Z]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      irgl.sync_running_threads
// CHECK-NEXT:      scf.if %[[ACTIVE]] {
// CHECK-NEXT:        memref.store %[[V]], %x[%{{.*}}] : memref<?xi32>
// CHECK-NEXT:      }
// CHECK-NEXT:    } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// -----

// A LocalBarrier directly in the outermost ForAll: the loop runs in uniform
// rounds, so every thread of a block reaches the barrier (__syncthreads()
// never runs in divergent code); the work around it is guarded.
irgl.kernel @stage(%g: !irgl.graph, %x: memref<?xi32>, %y: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %v = memref.load %x[%n] : memref<?xi32>
    irgl.local_barrier
    memref.store %v, %y[%n] : memref<?xi32>
  }
}

// CHECK-LABEL: ^bb0(%g: !irgl.graph, %x: memref<?xi32>, %y: memref<?xi32>):
// CHECK:         arith.ceildivsi
// CHECK-NEXT:    %[[ROUNDS:.*]] = arith.ceildivsi
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[ROUNDS]] step
// CHECK:           %[[ACTIVE:.*]] = arith.cmpi slt
// CHECK:           %[[V:.*]] = scf.if %[[ACTIVE]] -> (i32) {
// CHECK-NEXT:        %v = memref.load %x[%n]
// CHECK:             scf.yield %{{[0-9]+}} : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      irgl.local_barrier
// CHECK-NEXT:      scf.if %[[ACTIVE]] {
// CHECK-NEXT:        memref.store %[[V]], %y[%n]
// CHECK-NEXT:      }
// CHECK-NEXT:    } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// -----

// A grid barrier in a loop with a uniform trip count inside the outermost
// ForAll: the ForAll runs in uniform rounds, the loop runs on every thread
// (its bounds and the uniform values before it stay unguarded) and only the
// work between its barriers is guarded by "this round has an iteration".

irgl.kernel @smooth(%x: memref<?xi32>, %n: index, %rounds: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in range(%c0, %n) {
    %last = arith.subi %n, %c1 : index
    %next = arith.addi %i, %c1 : index
    %j = arith.minui %next, %last : index
    scf.for %r = %c0 to %rounds step %c1 {
      %a = memref.load %x[%i] : memref<?xi32>
      %b = memref.load %x[%j] : memref<?xi32>
      irgl.sync_running_threads
      %s = arith.addi %a, %b : i32
      memref.store %s, %x[%i] : memref<?xi32>
      irgl.sync_running_threads
    }
  }
}

// CHECK-LABEL: ^bb0(%x: memref<?xi32>, %n: index, %rounds: index):
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[ACTIVE:.*]] = arith.cmpi slt
// CHECK:           %last = arith.subi %n, %c1 : index
// CHECK-NEXT:      %[[J:.*]] = scf.if %[[ACTIVE]] -> (index) {
// CHECK:           scf.for %r = %c0 to %rounds step %c1 {
// CHECK-NEXT:        %{{.*}}, %{{.*}} = scf.if %[[ACTIVE]] -> (i32, i32) {
// CHECK:             irgl.sync_running_threads
// CHECK-NEXT:        scf.if %[[ACTIVE]] {
// CHECK:               memref.store
// CHECK:             irgl.sync_running_threads
// CHECK-NEXT:      }
// CHECK:         } {irgl_rt.forall = #irgl_rt.forall<uniform>}
