// RUN: irgl-opt %s --lower-irgl | filecheck %s
// RUN: irgl-opt %s -p lower-irgl | xdsl-opt | filecheck %s
// RUN: irgl-opt %repo/examples/bfs.mlir --lower-irgl | filecheck %s --check-prefix=BFS

// After lower-irgl no irgl op and no irgl type remains.
irgl.kernel @k(%g: !irgl.graph, %x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %w = irgl.graph.edge_weight %g[%n] : i32
    memref.store %w, %x[%n] : memref<?xi32>
    %t = arith.constant true
    irgl.reduce_and_return %t
  }
}
irgl.kernel host @main(%g: !irgl.graph, %x: memref<?xi32>, %src: index) {
  %c = arith.constant 0 : i32
  irgl.iterate until any @k(%g, %x) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-NOT: irgl.
// CHECK-NOT: !irgl.graph
// CHECK:     func.func @main
// CHECK:     "gpu.func"

// BFS-NOT: irgl.
// BFS: "gpu.func"
