// BFS with Iterate, two ways; the host picks one by the graph's density.
//
// - `bfs`, level by level (the specification's listing, see
//   examples/bfs.mlir), with an atomic exchange so that each node is pushed
//   exactly once per level even when several parents discover it together:
//   for graphs with more than 4 edges per node on average (RMAT, random),
//   whose wide frontiers fill the GPU.
// - `bfs_two_hop`, two levels per round, for graphs with at most 4 edges
//   per node on average (grids, meshes, chains): their frontiers are small
//   and there are thousands of levels, so a round is latency, not work,
//   and half as many rounds is nearly half the time. Its Iterate runs in a
//   control kernel of 256 threads per SM (the kernel's launch bounds): 255
//   registers a thread for the four interleaved copies of its edge body.
//   On an H100 (benchmarks/RESULTS.md): 2048x2048 grid 19.8 -> 14.1 ms;
//   on RMAT 20 it would take 5 ms against 0.94 (each edge loads its
//   destination's row and edges), hence the choice.

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

// Two hops per round, for graphs of low degree (grids, meshes, chains:
// many levels, small frontiers). Label-correcting: a node is processed with
// its own level `ln` (loaded, not the round's), an edge (n, d) lowers d to
// ln + 1 with an atomic min, and when d has at most 4 edges the same thread
// also lowers d's neighbours w to ln + 2 and pushes each w it lowered; a
// larger d is pushed instead. Every level a node is lowered to is one its
// edges are relaxed with (in this thread for the second hop, through the
// worklist otherwise), so the levels end exact. The loads of d's edges are
// issued whether or not d is lowered (at a valid edge: d's, else (n, d)
// itself), so that the four copies of the edge loop's body overlap them.
irgl.kernel @bfs_two_hop(%g: !irgl.graph, %level: memref<?xi32>) launch_bounds(256, 1) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %small_degree = arith.constant 4 : index
  %k1 = arith.constant 1 : index
  %k2 = arith.constant 2 : index
  %k3 = arith.constant 3 : index
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
    %ln = memref.load %level[%n] : memref<?xi32>
    %l1 = arith.addi %ln, %c1 : i32
    %l2 = arith.addi %ln, %c2 : i32
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %ld = memref.load %level[%d] : memref<?xi32>
      %lower_d = arith.cmpi slt, %l1, %ld : i32
      %first = irgl.graph.first_edge %g[%d]
      %last = irgl.graph.last_edge %g[%d]
      %deg = arith.subi %last, %first : index
      %small = arith.cmpi ule, %deg, %small_degree : index
      %expand = arith.andi %lower_d, %small : i1
      // d's edge 0, if it has one
      %has0 = arith.cmpi ult, %first, %last : index
      %e0 = arith.select %has0, %first, %e : index
      %w0 = irgl.graph.edge_dst %g[%e0]
      %lw0 = memref.load %level[%w0] : memref<?xi32>
      %farther0 = arith.cmpi slt, %l2, %lw0 : i32
      %valid0 = arith.andi %expand, %has0 : i1
      %lower0 = arith.andi %valid0, %farther0 : i1
      // d's edge 1, if it has one
      %at1 = arith.addi %first, %k1 : index
      %has1 = arith.cmpi ult, %at1, %last : index
      %e1 = arith.select %has1, %at1, %e : index
      %w1 = irgl.graph.edge_dst %g[%e1]
      %lw1 = memref.load %level[%w1] : memref<?xi32>
      %farther1 = arith.cmpi slt, %l2, %lw1 : i32
      %valid1 = arith.andi %expand, %has1 : i1
      %lower1 = arith.andi %valid1, %farther1 : i1
      // d's edge 2, if it has one
      %at2 = arith.addi %first, %k2 : index
      %has2 = arith.cmpi ult, %at2, %last : index
      %e2 = arith.select %has2, %at2, %e : index
      %w2 = irgl.graph.edge_dst %g[%e2]
      %lw2 = memref.load %level[%w2] : memref<?xi32>
      %farther2 = arith.cmpi slt, %l2, %lw2 : i32
      %valid2 = arith.andi %expand, %has2 : i1
      %lower2 = arith.andi %valid2, %farther2 : i1
      // d's edge 3, if it has one
      %at3 = arith.addi %first, %k3 : index
      %has3 = arith.cmpi ult, %at3, %last : index
      %e3 = arith.select %has3, %at3, %e : index
      %w3 = irgl.graph.edge_dst %g[%e3]
      %lw3 = memref.load %level[%w3] : memref<?xi32>
      %farther3 = arith.cmpi slt, %l2, %lw3 : i32
      %valid3 = arith.andi %expand, %has3 : i1
      %lower3 = arith.andi %valid3, %farther3 : i1
      scf.if %lower_d {
        // kind 7 = mins: the previous level
        %old = "memref.atomic_rmw"(%l1, %level, %d) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %lowered = arith.cmpi slt, %l1, %old : i32
        %large = arith.cmpi ugt, %deg, %small_degree : index
        %push_d = arith.andi %lowered, %large : i1
        scf.if %push_d {
          irgl.wl.push %d
        }
      }
      scf.if %lower0 {
        %old0 = "memref.atomic_rmw"(%l2, %level, %w0) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %lowered0 = arith.cmpi slt, %l2, %old0 : i32
        scf.if %lowered0 {
          irgl.wl.push %w0
        }
      }
      scf.if %lower1 {
        %old1 = "memref.atomic_rmw"(%l2, %level, %w1) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %lowered1 = arith.cmpi slt, %l2, %old1 : i32
        scf.if %lowered1 {
          irgl.wl.push %w1
        }
      }
      scf.if %lower2 {
        %old2 = "memref.atomic_rmw"(%l2, %level, %w2) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %lowered2 = arith.cmpi slt, %l2, %old2 : i32
        scf.if %lowered2 {
          irgl.wl.push %w2
        }
      }
      scf.if %lower3 {
        %old3 = "memref.atomic_rmw"(%l2, %level, %w3) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %lowered3 = arith.cmpi slt, %l2, %old3 : i32
        scf.if %lowered3 {
          irgl.wl.push %w3
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : index
  irgl.invoke @init(%g, %level, %src) : (!irgl.graph, memref<?xi32>, index)
  %nn = irgl.graph.num_nodes %g
  %ne = irgl.graph.num_edges %g
  %low = arith.muli %nn, %c4 : index
  %sparse = arith.cmpi ule, %ne, %low : index
  scf.if %sparse {
    irgl.iterate @bfs_two_hop(%g, %level) : (!irgl.graph, memref<?xi32>) initial [%src] {
    }
  } else {
    %last = irgl.iterate @bfs(%g, %level, %lvl = %c1) : (!irgl.graph, memref<?xi32>, i32) initial [%src] {
      %next = arith.addi %lvl, %c1 : i32
      irgl.yield %next : i32
    }
  }
}
