// RUN: irgl-opt %s -p "irgl-distribute{policy=oec}" | filecheck %s --check-prefix=OEC
// RUN: not irgl-opt %s -p "irgl-distribute{policy=cvc}" 2>&1 | filecheck %s --check-prefix=CVC

// A store at the ForAll's node lands on the writer's masters under either
// policy: the sync is only a broadcast (masters_only). A store at the popped
// node does so under an edge-cut (under a vertex-cut a mirror may be popped:
// such a store is refused; irgl-distribute-masters-only-cvc.mlir). An atomic at a neighbour is never masters_only.
irgl.kernel @own(%g: !irgl.graph, %a: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    %v = memref.load %a[%n] : memref<?xi32>
    %w = arith.addi %v, %one : i32
    memref.store %w, %a[%n] : memref<?xi32>
  }
}
irgl.kernel @popped(%g: !irgl.graph, %a: memref<?xi32>, %b: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %v = memref.load %a[%n] : memref<?xi32>
    memref.store %v, %b[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %x = memref.load %b[%d] : memref<?xi32>
      %y = memref.load %a[%d] : memref<?xi32>
      %m = arith.minsi %x, %y : i32
      %o = "memref.atomic_rmw"(%m, %a, %d) <{kind = 8 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %b: memref<?xi32>, %src: index) {
  irgl.invoke @own(%g, %a) : (!irgl.graph, memref<?xi32>)
  irgl.iterate @popped(%g, %a, %b) : (!irgl.graph, memref<?xi32>, memref<?xi32>) initial [%src] {
  }
}

// OEC:      irgl.invoke @own(%g, %a)
// OEC-NEXT: irgl_dist.sync_nodes %a set masters_only : memref<?xi32>
// OEC:      irgl.iterate @popped
// OEC-NEXT:   irgl_dist.sync_nodes %a minu : memref<?xi32>
// OEC-NEXT:   irgl_dist.sync_nodes %b set masters_only : memref<?xi32>

// CVC: under a vertex-cut a popped node may be a mirror
