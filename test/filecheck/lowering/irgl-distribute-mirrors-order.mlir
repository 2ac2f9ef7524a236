// RUN: irgl-opt %s -p irgl-distribute | filecheck %s

// The mirrors' copy of a writer whose comparison of the node with a node-id
// argument comes before the node's use as data: one global id, first in the
// body, serves both (it was used before its definition).
irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>, %label: memref<?xi32>, %src: index) {
  %zero = arith.constant 0 : i32
  %inf = arith.constant 1000 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %d = arith.select %is_src, %zero, %inf : i32
    memref.store %d, %dist[%n] : memref<?xi32>
    %self = arith.index_cast %n : index to i32
    memref.store %self, %label[%n] : memref<?xi32>
  }
}
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %label: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %l = memref.load %label[%n] : memref<?xi32>
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %o = "memref.atomic_rmw"(%l, %label, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %p = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %label: memref<?xi32>, %src: index) {
  irgl.invoke @init(%g, %dist, %label, %src) : (!irgl.graph, memref<?xi32>, memref<?xi32>, index)
  irgl.iterate @relax(%g, %dist, %label) : (!irgl.graph, memref<?xi32>, memref<?xi32>) initial [%src] {
  }
}

// CHECK:      irgl.kernel @init_mirrors(%g: !irgl.graph, %dist: memref<?xi32>, %label: memref<?xi32>, %src: index) {
// CHECK:        irgl.forall %n in nodes(%g) attributes {irgl_dist.mirrors} {
// CHECK-NEXT:     %n_global = irgl_dist.global_id %g[%n]
// CHECK-NEXT:     %is_src = arith.cmpi eq, %n_global, %src : index
// CHECK-NEXT:     %d = arith.select %is_src, %zero, %inf : i32
// CHECK-NEXT:     memref.store %d, %dist[%n] : memref<?xi32>
// CHECK-NEXT:     %self = arith.index_cast %n_global : index to i32
// CHECK-NEXT:     memref.store %self, %label[%n] : memref<?xi32>
// CHECK-NEXT:   }
// CHECK:      irgl.invoke @init_mirrors(%g, %dist, %label, %src)
// CHECK-NEXT: irgl_dist.sync_nodes %dist set agreed
// CHECK-NEXT: irgl_dist.sync_nodes %label set agreed
