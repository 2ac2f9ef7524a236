// BFS with Iterate, two ways; the host picks one by the graph's density.
//
// - graphs with more than 4 edges per node on average (RMAT, random):
//   direction-optimizing BFS (Beamer, Asanovic and Patterson, SC 2012).
//   `bfs` runs level by level from a worklist (the specification's listing,
//   see examples/bfs.mlir, with an atomic exchange so that each node is
//   pushed exactly once per level even when several parents discover it
//   together) while the frontier is light; once the edges of a frontier
//   exceed 1/4 of the graph's, `bfs_bottom_up` takes over: every unreached
//   node scans its own edges for a parent on the last level and stops at
//   the first. On RMAT 20 from its hub that turns the 22 million edges of
//   the second level and the 9 million of the third into 0.8 million edge
//   reads: 0.94 -> 0.45-0.61 ms on an H100. A node of more than 1/4 of
//   the edges (a star's hub) is never expanded top-down: the level it
//   would fill is done bottom-up, every other node looking for its parent
//   at once, instead of one block walking the hub's edges.
// - `bfs_two_hop`, two levels per round, for graphs with at most 4 edges
//   per node on average and no node of more than 1/4 of the edges (grids,
//   meshes, chains; stars take the first way): their frontiers are small
//   and there are thousands of levels, so a round is latency, not work,
//   and half as many rounds is nearly half the time. Its Iterate runs in a
//   control kernel of 256 threads per SM (the kernel's launch bounds): 255
//   registers a thread for the four interleaved copies of its edge body.
//   On an H100 (benchmarks/RESULTS.md): 2048x2048 grid 19.8 -> 14.1 ms;
//   on RMAT 20 it would take 5 ms against 0.94 for level by level (each
//   edge loads its destination's row and edges), hence the choice.

// Every node starts unreached (level INF), the source at level 0 and pushed
// if it has edges (a source with none leaves the first worklist empty: the
// search ends at its first size check, with no round of block 0 and two
// grid barriers fewer; 10 us of an empty 46 us BFS on an H100); node n
// below 1025 also zeroes the frontier counters of `bfs` (2 levels x 32
// counters, 16 i64 apart) and the heavy-frontier flag after them, and node 0
// the ones past the last node of a smaller graph (one thread storing all
// 1025 would keep the kernel running for microseconds: a search that
// reaches nothing is mostly this kernel and the launches).
irgl.kernel @init(%g: !irgl.graph, %level: memref<?xi32>, %src: index,
                  %frontier_edges: memref<?xi64>) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  %zero64 = arith.constant 0 : i64
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k1025 = arith.constant 1025 : index
  %nn = irgl.graph.num_nodes %g
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %l = arith.select %is_src, %zero, %inf : i32
    memref.store %l, %level[%n] : memref<?xi32>
    scf.if %is_src {
      %deg_src = irgl.graph.degree %g[%n]
      %has_edges = arith.cmpi ne, %deg_src, %k0 : index
      scf.if %has_edges {
        irgl.wl.push %n
      }
    }
    %is_counter = arith.cmpi ult, %n, %k1025 : index
    scf.if %is_counter {
      memref.store %zero64, %frontier_edges[%n] : memref<?xi64>
    }
    %is_first = arith.cmpi eq, %n, %k0 : index
    scf.if %is_first {
      scf.for %i = %nn to %k1025 step %k1 {
        memref.store %zero64, %frontier_edges[%i] : memref<?xi64>
      }
    }
  }
}

// Visit the neighbours of the current level, giving unreached ones LEVEL,
// and estimate the edges of the new frontier from a sample: a pushed node
// whose 32-bit Fibonacci hash h has h * sample_every < 2^32 (1 node in
// sample_every) adds sample_every times its degree to one of this level's
// 32 counters (5 bits of h pick it; each counter on its own 128-byte line,
// 16 i64 apart, so the atomics spread over the L2). Counting every push on
// RMAT 20 costs more than the bottom-up levels save (benchmarks/RESULTS.md),
// hence the sample; the host samples small graphs fully. A count that goes
// past limit / 32 returns true: the frontier's edges may exceed `limit` (if
// the total does, one counter is past its share), which ends the Iterate
// (`until any`) and hands the next level to `bfs_bottom_up`; the flag after
// the counters says which level, 4 * LEVEL + 1 (an atomic max: a later level
// is larger), so the host reads it alone. The first item zeroes the other
// level's counters (used by the previous invocation, next by the following
// one).
irgl.kernel @bfs(%g: !irgl.graph, %level: memref<?xi32>, %LEVEL: i32,
                 %frontier_edges: memref<?xi64>, %limit: i64, %sample_every: i64) {
  %inf = arith.constant 1073741823 : i32
  %one = arith.constant 1 : i32
  %two = arith.constant 2 : i32
  %zero64 = arith.constant 0 : i64
  %one64 = arith.constant 1 : i64
  %two64 = arith.constant 2 : i64
  %k32_64 = arith.constant 32 : i64
  %golden = arith.constant 2654435769 : i64
  %low32 = arith.constant 4294967295 : i64
  %two32 = arith.constant 4294967296 : i64
  %k22 = arith.constant 22 : i64
  %k31_64 = arith.constant 31 : i64
  %k16_64 = arith.constant 16 : i64
  %k0 = arith.constant 0 : index
  %k16 = arith.constant 16 : index
  %k512 = arith.constant 512 : index
  %k1024 = arith.constant 1024 : index
  %this_slot = arith.remui %LEVEL, %two : i32
  %next = arith.addi %LEVEL, %one : i32
  %next_slot = arith.remui %next, %two : i32
  %this_i = arith.index_cast %this_slot : i32 to index
  %next_i = arith.index_cast %next_slot : i32 to index
  %this_base = arith.muli %this_i, %k512 : index
  %next_base = arith.muli %next_i, %k512 : index
  %share = arith.divui %limit, %k32_64 : i64
  %level64 = arith.extsi %LEVEL : i32 to i64
  %four64 = arith.constant 4 : i64
  %level4 = arith.muli %level64, %four64 : i64
  %heavy_mark = arith.addi %level4, %one64 : i64
  %huge_mark = arith.addi %level4, %two64 : i64
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
    %is_first = arith.cmpi eq, %wlidx, %k0 : index
    scf.if %is_first {
      scf.for %i = %k0 to %k512 step %k16 {
        %at = arith.addi %next_base, %i : index
        memref.store %zero64, %frontier_edges[%at] : memref<?xi64>
      }
    }
    // A node with more than `limit` edges is left to the bottom-up pass:
    // it is the frontier's heaviest part on its own, and one block would
    // walk its edges while the rest of the grid idles (a star's hub). Its
    // edge loop skips every edge, 4 * LEVEL + 2 in the flag ends the Iterate
    // (below), and the host runs bottom-up from this LEVEL (4 * LEVEL + 1:
    // from the next).
    %deg_n = irgl.graph.degree %g[%n]
    %deg_n64 = arith.index_cast %deg_n : index to i64
    %huge = arith.cmpi ugt, %deg_n64, %limit : i64
    %light = arith.cmpi ule, %deg_n64, %limit : i64
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen_any = arith.cmpi eq, %l, %inf : i32
      %unseen = arith.andi %unseen_any, %light : i1
      scf.if %unseen {
        // kind 2 = assign: atomicExch returns the previous level
        %old = "memref.atomic_rmw"(%LEVEL, %level, %dst) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi eq, %old, %inf : i32
        scf.if %first {
          irgl.wl.push %dst
          %dst64 = arith.index_cast %dst : index to i64
          %product = arith.muli %dst64, %golden : i64
          %hash = arith.andi %product, %low32 : i64
          %scaled = arith.muli %hash, %sample_every : i64
          %sampled = arith.cmpi ult, %scaled, %two32 : i64
          scf.if %sampled {
            %deg = irgl.graph.degree %g[%dst]
            %deg64 = arith.index_cast %deg : index to i64
            %weight = arith.muli %deg64, %sample_every : i64
            %bits = arith.shrui %hash, %k22 : i64
            %lane = arith.andi %bits, %k31_64 : i64
            %offset64 = arith.muli %lane, %k16_64 : i64
            %offset = arith.index_cast %offset64 : i64 to index
            %at = arith.addi %this_base, %offset : index
            // kind 1 = addi: the counter before this sample
            %before = "memref.atomic_rmw"(%weight, %frontier_edges, %at) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
            %after = arith.addi %before, %weight : i64
            %heavy = arith.cmpi ugt, %after, %share : i64
            scf.if %heavy {
              %was = "memref.atomic_rmw"(%heavy_mark, %frontier_edges, %k1024) <{kind = 4 : i64}> : (i64, memref<?xi64>, index) -> i64
            }
            irgl.reduce_and_return %heavy
          }
        }
      }
    }
    scf.if %huge {
      // kind 4 = maxs: 4 * LEVEL + 2 stays whatever else this level stores
      %was = "memref.atomic_rmw"(%huge_mark, %frontier_edges, %k1024) <{kind = 4 : i64}> : (i64, memref<?xi64>, index) -> i64
      irgl.reduce_and_return %huge
    }
  }
}

// One level bottom-up: every unreached node looks through its edges for a
// neighbour on level LEVEL - 1 and stops at the first; if it finds one it
// takes LEVEL and returns true (the Iterate goes on while any node does).
// A node writes only its own level, and LEVEL never equals LEVEL - 1, so
// the nodes of one pass need not see each other. LEVEL is pass PASS (from
// 0) after the level the heavy-frontier flag names (see @bfs: from L for
// 4 * L + 2, from L + 1 for 4 * L + 1); a flag of 0 (the top-down levels
// ran dry: a source whose component is small, an isolated source) makes
// the pass do nothing and return false, since a bottom-up pass would read
// the edges of every unreached node, the whole graph.
irgl.kernel @bfs_bottom_up(%g: !irgl.graph, %level: memref<?xi32>,
                           %frontier_edges: memref<?xi64>, %PASS: i32) {
  %inf = arith.constant 1073741823 : i32
  %one = arith.constant 1 : i32
  %true = arith.constant true
  %false = arith.constant false
  %k1 = arith.constant 1 : index
  %k1024 = arith.constant 1024 : index
  %zero64 = arith.constant 0 : i64
  %two64 = arith.constant 2 : i64
  %three64 = arith.constant 3 : i64
  %flag = memref.load %frontier_edges[%k1024] : memref<?xi64>
  %heavy = arith.cmpi ne, %flag, %zero64 : i64
  %why = arith.andi %flag, %three64 : i64
  %left = arith.cmpi eq, %why, %two64 : i64
  %at64 = arith.shrui %flag, %two64 : i64
  %at = arith.trunci %at64 : i64 to i32
  %below = arith.addi %at, %one : i32
  %start = arith.select %left, %at, %below : i32
  %LEVEL = arith.addi %start, %PASS : i32
  %parent_level = arith.subi %LEVEL, %one : i32
  irgl.forall %n in nodes(%g) {
    scf.if %heavy {
      %l = memref.load %level[%n] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        %first = irgl.graph.first_edge %g[%n]
        %last = irgl.graph.last_edge %g[%n]
        %stop = scf.while (%e = %first) : (index) -> index {
          %in_row = arith.cmpi ult, %e, %last : index
          %searching = scf.if %in_row -> (i1) {
            %d = irgl.graph.edge_dst %g[%e]
            %ld = memref.load %level[%d] : memref<?xi32>
            %not_parent = arith.cmpi ne, %ld, %parent_level : i32
            scf.yield %not_parent : i1
          } else {
            scf.yield %false : i1
          }
          scf.condition(%searching) %e : index
        } do {
        ^bb0(%e: index):
          %e_next = arith.addi %e, %k1 : index
          scf.yield %e_next : index
        }
        %found = arith.cmpi ult, %stop, %last : index
        scf.if %found {
          memref.store %LEVEL, %level[%n] : memref<?xi32>
          irgl.reduce_and_return %true
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
  %c1024 = arith.constant 1024 : index
  %c1025 = arith.constant 1025 : index
  %frontier_edges = memref.alloc(%c1025) : memref<?xi64>
  %nn = irgl.graph.num_nodes %g
  %ne = irgl.graph.num_edges %g
  %low = arith.muli %nn, %c4 : index
  %few_edges = arith.cmpi ule, %ne, %low : index
  // not a star or a hub graph: a node of more than 1/4 of the edges is for
  // the direction-optimizing path, which hands it to the bottom-up pass
  %quarter = arith.divui %ne, %c4 : index
  %dmax = irgl.graph.max_degree %g
  %no_hub = arith.cmpi ule, %dmax, %quarter : index
  %sparse = arith.andi %few_edges, %no_hub : i1
  // Each way is one Pipe: @init (which pushes the source) and the Iterates
  // run in one control kernel, one launch and one read (its status) for
  // the whole search; a search that reaches nothing is its launches and
  // reads. The two control kernels' block sizes differ, so the second runs
  // a copy of @init.
  scf.if %sparse {
    irgl.pipe once {
      irgl.invoke @init(%g, %level, %src, %frontier_edges) : (!irgl.graph, memref<?xi32>, index, memref<?xi64>)
      irgl.iterate @bfs_two_hop(%g, %level) : (!irgl.graph, memref<?xi32>) {
      }
    }
  } else {
    // top-down while a frontier's edges stay within 1/4 of the graph's,
    // estimated from 1 pushed node in nn / 32768 (at least 1, at most 32)
    %limit_index = arith.divui %ne, %c4 : index
    %limit = arith.index_cast %limit_index : index to i64
    %c1i = arith.constant 1 : index
    %c32i = arith.constant 32 : index
    %c32768 = arith.constant 32768 : index
    %every_raw = arith.divui %nn, %c32768 : index
    %every_low = arith.maxui %every_raw, %c1i : index
    %every_index = arith.minui %every_low, %c32i : index
    %sample_every = arith.index_cast %every_index : index to i64
    // Then, in the same control kernel, bottom-up after the heavy frontier
    // if there was one: @bfs_bottom_up reads the flag @bfs left, and a flag
    // of 0 makes its one pass do nothing.
    %c0 = arith.constant 0 : i32
    irgl.pipe once {
      irgl.invoke @init(%g, %level, %src, %frontier_edges) : (!irgl.graph, memref<?xi32>, index, memref<?xi64>)
      %after = irgl.iterate until any @bfs(%g, %level, %lvl = %c1, %frontier_edges, %limit, %sample_every)
          : (!irgl.graph, memref<?xi32>, i32, memref<?xi64>, i64, i64) {
        %next = arith.addi %lvl, %c1 : i32
        irgl.yield %next : i32
      }
      %passes = irgl.iterate while any @bfs_bottom_up(%g, %level, %frontier_edges, %pass = %c0)
          : (!irgl.graph, memref<?xi32>, memref<?xi64>, i32) {
        %next = arith.addi %pass, %c1 : i32
        irgl.yield %next : i32
      }
    }
  }
  memref.dealloc %frontier_edges : memref<?xi64>
}
