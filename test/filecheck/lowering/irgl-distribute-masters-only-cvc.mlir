// RUN: irgl-opt %s -p "irgl-distribute{policy=cvc}" | filecheck %s

// Under a vertex-cut too, a store at the ForAll's node is the owner's: its
// sync is only a broadcast (masters_only).
irgl.kernel @own(%g: !irgl.graph, %a: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    %v = memref.load %a[%n] : memref<?xi32>
    %w = arith.addi %v, %one : i32
    memref.store %w, %a[%n] : memref<?xi32>
  }
}
irgl.kernel @read(%g: !irgl.graph, %a: memref<?xi32>, %b: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %x = memref.load %a[%d] : memref<?xi32>
      %o = "memref.atomic_rmw"(%x, %b, %d) <{kind = 8 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %b: memref<?xi32>, %src: index) {
  irgl.invoke @own(%g, %a) : (!irgl.graph, memref<?xi32>)
  irgl.iterate @read(%g, %a, %b) : (!irgl.graph, memref<?xi32>, memref<?xi32>) initial [%src] {
  }
}

// CHECK:      irgl.invoke @own(%g, %a)
// CHECK-NEXT: irgl_dist.sync_nodes %a set masters_only : memref<?xi32>
// CHECK:      irgl.iterate @read
// CHECK-NEXT:   irgl_dist.sync_nodes %b minu : memref<?xi32>
