// Data-driven single-source shortest paths (Bellman-Ford with a worklist).
// A node whose distance drops is pushed; its edges are relaxed next round.

irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %d = arith.select %is_src, %zero, %inf : i32
    memref.store %d, %dist[%n] : memref<?xi32>
  }
}

irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %nd = arith.addi %d, %w : i32
      // atomic min (kind 7 = mins); the old value tells whether we improved it
      %old = "memref.atomic_rmw"(%nd, %dist, %dst) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %better = arith.cmpi slt, %nd, %old : i32
      scf.if %better {
        irgl.wl.push %dst
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.invoke @init(%g, %dist, %src) : (!irgl.graph, memref<?xi32>, index)
  irgl.iterate @relax(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}
