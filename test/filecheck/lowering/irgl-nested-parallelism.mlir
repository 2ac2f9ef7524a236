// RUN: irgl-opt %s -p convert-irgl-kernels,irgl-nested-parallelism | filecheck %s --check-prefix=MARK
// RUN: irgl-opt %s -p convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges | filecheck %s
// RUN: irgl-opt %s -p convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops | filecheck %s --check-prefix=LOOPS

// An edge loop directly in the outermost ForAll is marked; one nested in an
// scf.if is not; a kernel with a grid barrier is left alone.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %dst) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
irgl.kernel @guarded(%g: !irgl.graph, %c: i1) {
  irgl.forall %n in nodes(%g) {
    scf.if %c {
      irgl.forall %e in edges(%g, %n) {
      }
    }
  }
}
irgl.kernel @synced(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
    }
    irgl.sync_running_threads
  }
}

// MARK:      irgl.forall %e in edges(%g, %n) attributes {irgl_rt.nested_edges = #irgl_rt.nested_edges}
// MARK-NOT:  irgl_rt.nested_edges

// convert-irgl-loops: uniform rounds; the marked loop is wrapped in
// irgl_rt.collective (whether this thread has an iteration, its rank) for
// convert-irgl-nested-edges.
// LOOPS:        scf.for
// LOOPS:          %[[ACTIVE:.*]] = arith.cmpi slt
// LOOPS:          irgl_rt.collective active(%[[ACTIVE]]) rank(%{{.*}}) {
// LOOPS-NEXT:       irgl.forall %e in edges(%g, %{{.*}}) attributes {irgl_rt.nested_edges = #irgl_rt.nested_edges} {
// LOOPS:          } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// The marked loop: uniform rounds; the pop and load guarded by "active";
// then the block phase (elect, broadcast the owner's range and %d, all
// threads share its edges), the warp phase (ballot over the mask taken once,
// shuffles), and the thread phase for small nodes.
// CHECK:        scf.for %{{.*}} = %{{.*}} to %[[ROUNDS:.*]] step %{{.*}} {
// CHECK:          %[[ACTIVE:.*]] = arith.cmpi slt
// CHECK:          %[[N:.*]], %[[D:.*]] = scf.if %[[ACTIVE]] -> (index, i32) {
// CHECK:            %n = func.call @irgl_wl_item
// CHECK:            %d = memref.load %dist[%n]
// CHECK:          %[[LO:.*]], %[[HI:.*]] = scf.if %[[ACTIVE]] -> (index, index) {
// CHECK-NEXT:       irgl.graph.first_edge %g[%[[N]]]
// CHECK-NEXT:       irgl.graph.last_edge %g[%[[N]]]
// CHECK:          %[[DEG:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:          scf.while
// CHECK:            %[[OWNER:.*]] = func.call @irgl_block_elect
// CHECK:          } do {
// CHECK:            func.call @irgl_block_bcast_i32(%[[D]],
// CHECK:            func.call @irgl_block_bcast_index(%[[LO]],
// CHECK:            scf.for
// CHECK:              irgl.graph.edge_dst
// CHECK:          %[[MASK:.*]] = func.call @irgl_warp_active()
// CHECK:          scf.while
// CHECK:            func.call @irgl_warp_ballot(%[[MASK]],
// CHECK:          } do {
// CHECK:            func.call @irgl_warp_shfl_i32(%[[MASK]], %[[D]],
// CHECK:            scf.for
// CHECK:          scf.if %{{.*}} {
// CHECK-NEXT:       scf.for %e = %[[LO]] to %[[HI]]
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<uniform>}
