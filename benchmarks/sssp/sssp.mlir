// Data-driven single-source shortest paths (Bellman-Ford with a worklist).
// A node whose distance drops is pushed; its edges are relaxed next round.
// Each node is pushed at most once per round: `stamp` holds the last round
// that pushed it (an atomic exchange decides which improvement pushes), so
// a node improved by several parents in one round is relaxed once in the
// next (with its distance as it is then). An edge whose candidate distance
// does not beat the current one costs a load, not an atomic.

// Every node starts unreached (INF), the source at 0; no node pushed yet.
irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %d = arith.select %is_src, %zero, %inf : i32
    memref.store %d, %dist[%n] : memref<?xi32>
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}

// Round ROUND (from 1): relax the edges of every node on the worklist.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %nd = arith.addi %d, %w : i32
      %cur = memref.load %dist[%dst] : memref<?xi32>
      %shorter = arith.cmpi slt, %nd, %cur : i32
      scf.if %shorter {
        // atomic min (kind 7 = mins); the old value tells whether we improved it
        %old = "memref.atomic_rmw"(%nd, %dist, %dst) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %better = arith.cmpi slt, %nd, %old : i32
        scf.if %better {
          // kind 2 = assign: the first improvement of this round pushes
          %last = "memref.atomic_rmw"(%ROUND, %stamp, %dst) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
          %first = arith.cmpi ne, %last, %ROUND : i32
          scf.if %first {
            irgl.wl.push %dst
          }
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @init(%g, %dist, %stamp, %src) : (!irgl.graph, memref<?xi32>, memref<?xi32>, index)
  %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) initial [%src] {
    %next = arith.addi %round, %c1 : i32
    irgl.yield %next : i32
  }
  memref.dealloc %stamp : memref<?xi32>
}
