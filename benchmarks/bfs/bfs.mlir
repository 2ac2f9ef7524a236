// Level-by-level BFS with Iterate: the specification's listing (see
// examples/bfs.mlir), with an atomic exchange so that each node is pushed
// exactly once per level even when several parents discover it together.

// Every node starts unreached (level INF), the source at level 0.
irgl.kernel @init(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %l = arith.select %is_src, %zero, %inf : i32
    memref.store %l, %level[%n] : memref<?xi32>
  }
}

// Visit the neighbours of the current level, giving unreached ones LEVEL.
irgl.kernel @bfs(%g: !irgl.graph, %level: memref<?xi32>, %LEVEL: i32) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        // kind 2 = assign: atomicExch returns the previous level
        %old = "memref.atomic_rmw"(%LEVEL, %level, %dst) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi eq, %old, %inf : i32
        scf.if %first {
          irgl.wl.push %dst
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  irgl.invoke @init(%g, %level, %src) : (!irgl.graph, memref<?xi32>, index)
  %last = irgl.iterate @bfs(%g, %level, %lvl = %c1) : (!irgl.graph, memref<?xi32>, i32) initial [%src] {
    %next = arith.addi %lvl, %c1 : i32
    irgl.yield %next : i32
  }
}
