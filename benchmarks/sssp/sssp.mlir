// Data-driven single-source shortest paths: Bellman-Ford with a worklist,
// in distance windows (near-far). A phase relaxes only nodes whose distance
// lies below the window's upper bound `hi`; an improvement at or beyond it
// is left "far" (not pushed). When the phase's worklist runs dry, every node
// below `hi` is settled; the next window starts at `hi` and ends `delta`
// above the smallest far distance, and its nodes are pushed by a scan. So a
// node is relaxed a few times per window instead of once per improvement
// (a synchronous model of the 2048x2048 grid with weights in [1, 64] and
// windows 2048 wide: 14x fewer edge relaxations than one unbounded window,
// for 8% more rounds).
//
// Within a phase a node is pushed at most once per round: `stamp` holds the
// last round that pushed it. Every thread whose candidate beats the distance
// it loaded (and lies below `hi`) issues its atomic min and, beside it, an
// atomic exchange of the stamp; the first exchange of the round pushes,
// whether or not its own min was the one that won. That is enough: a
// thread that lowers a distance below `hi` always exchanges the stamp, so a
// node lowered this round is pushed once, and the next round reads its
// distance after the grid barrier, when every min of this round is in (a
// push whose thread did not lower it only repeats work). So no atomic waits
// for another, and no thread waits for the min's result. Rounds restart at 1 every phase, so the scan that
// ends a phase clears the stamps. An edge whose candidate distance does not
// beat the current one costs a load, not an atomic.
//
// `win` holds the window: win[0] = lo, win[1] = hi, win[2] = the smallest
// far distance found by the last scan (INF when there is none).

// Every node starts unreached (INF), the source at 0 and pushed if it has
// edges (the first worklist of the Pipe @main runs this kernel in: it is the
// control kernel's first step, not a launch of its own; a source without
// edges leaves the search with nothing to relax: no round, and @main
// skips the window's steps; under a vertex-cut
// irgl-distribute pushes the source whatever its degree, which on a rank is
// only the rank's share of its edges); the first window is [0, delta). No
// node is stamped yet: @main's allocation of `stamp` is zero-filled (rounds
// count from 1).
irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>, %win: memref<?xi32>, %src: index, %delta: i32) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %d = arith.select %is_src, %zero, %inf : i32
    memref.store %d, %dist[%n] : memref<?xi32>
    scf.if %is_src {
      %deg_src = irgl.graph.degree %g[%n]
      %has_edges = arith.cmpi ne, %deg_src, %c0 : index
      scf.if %has_edges {
        irgl.wl.push %n
      }
      memref.store %zero, %win[%c0] : memref<?xi32>
      memref.store %delta, %win[%c1] : memref<?xi32>
      memref.store %inf, %win[%c2] : memref<?xi32>
    }
  }
}

// Round ROUND (from 1) of a phase: relax the edges of every node on the
// worklist; push a neighbour whose distance drops below the window's end.
// Two 256-thread blocks per SM (launch bounds, which the control kernel
// that runs the Pipe adopts): 128 registers a thread instead of 64 and no
// spills. On an H100 against 1024 threads per SM: grid 29.9 -> 23.2 ms, but
// RMAT 20 1.53 -> 1.90 ms (its large rounds want the threads; the grid's
// target decides, see benchmarks/RESULTS.md).
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %win: memref<?xi32>, %ROUND: i32) launch_bounds(256, 2) {
  %c1 = arith.constant 1 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    %hi = memref.load %win[%c1] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %nd = arith.addi %d, %w : i32
      %cur = memref.load %dist[%dst] : memref<?xi32>
      %shorter = arith.cmpi slt, %nd, %cur : i32
      scf.if %shorter {
        // atomic min (kind 7 = mins); nothing waits for its result
        %old = "memref.atomic_rmw"(%nd, %dist, %dst) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %near = arith.cmpi slt, %nd, %hi : i32
        scf.if %near {
          // kind 2 = assign: the first thread of this round to get here
          // pushes (issued beside the min, not after it)
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

// End of a phase (every node below hi is settled): find the smallest far
// distance (reached, at or beyond hi) and clear the round stamps. Runs only
// after a phase that ran a round (see @main).
irgl.kernel @find_far(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %win: memref<?xi32>) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
    %d = memref.load %dist[%n] : memref<?xi32>
    %hi = memref.load %win[%c1] : memref<?xi32>
    %far = arith.cmpi sge, %d, %hi : i32
    %reached = arith.cmpi slt, %d, %inf : i32
    %candidate = arith.andi %far, %reached : i1
    scf.if %candidate {
      // most far nodes see a smaller minimum already and skip the atomic
      %best = memref.load %win[%c2] : memref<?xi32>
      %smaller = arith.cmpi slt, %d, %best : i32
      scf.if %smaller {
        %old = "memref.atomic_rmw"(%d, %win, %c2) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      }
    }
  }
}

// The next window (one thread): [hi, min(far + delta, INF)); the far
// minimum is reset for the next phase. No far node: the window is empty,
// written [INF, INF) so that @split reads no distance.
irgl.kernel @advance(%win: memref<?xi32>, %delta: i32) {
  %inf = arith.constant 1073741823 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  irgl.forall %i in range(%c0, %c1) {
    %hi = memref.load %win[%c1] : memref<?xi32>
    %far = memref.load %win[%c2] : memref<?xi32>
    %room = arith.subi %inf, %delta : i32
    %fits = arith.cmpi slt, %far, %room : i32
    %end = arith.addi %far, %delta : i32
    %next = arith.select %fits, %end, %inf : i32
    %none = arith.cmpi eq, %far, %inf : i32
    %lo = arith.select %none, %inf, %hi : i32
    memref.store %lo, %win[%c0] : memref<?xi32>
    memref.store %next, %win[%c1] : memref<?xi32>
    memref.store %inf, %win[%c2] : memref<?xi32>
  }
}

// Push every node of the new window [lo, hi); an empty window (the last
// phase's) reads nothing.
irgl.kernel @split(%g: !irgl.graph, %dist: memref<?xi32>, %win: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %n in nodes(%g) {
    %lo = memref.load %win[%c0] : memref<?xi32>
    %hi = memref.load %win[%c1] : memref<?xi32>
    %open = arith.cmpi slt, %lo, %hi : i32
    scf.if %open {
      %d = memref.load %dist[%n] : memref<?xi32>
      %above = arith.cmpi sge, %d, %lo : i32
      %below = arith.cmpi slt, %d, %hi : i32
      %inside = arith.andi %above, %below : i1
      scf.if %inside {
        irgl.wl.push %n
      }
    }
  }
}

// DELTA is the windows' width, at least 1; any width gives the exact
// distances. The runner (benchmarks/sssp/app.py, `window`) passes 64, the
// heaviest edge of the benchmark graphs, on graphs of mean degree 8 or more
// without hubs (uniform random: few levels, where a narrow window relaxes a
// node about once), and 2048 on the others (grids, paths, stars: many
// levels, where narrow windows multiply the phases; RMAT: no gain).
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index, %delta: i32) {
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : index
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  %win = memref.alloc(%c3) : memref<?xi32>
  irgl.pipe once {
    irgl.invoke @init(%g, %dist, %win, %src, %delta) : (!irgl.graph, memref<?xi32>, memref<?xi32>, index, i32)
    // One pass per window, while the scan finds nodes to push.
    irgl.pipe {
      %rounds = irgl.iterate @relax(%g, %dist, %stamp, %win, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, i32) {
        %next = arith.addi %round, %c1 : i32
        irgl.yield %next : i32
      }
      // Only the first phase can run no round (later ones start from the
      // nodes @split pushed), from a source without edges: then only the
      // source is reached, nothing is far, and no stamp was set, so the
      // search ends without the window's steps (their passes over the
      // nodes and grid barriers: 4-8 us of an empty search on an H200).
      %ran = arith.cmpi ne, %rounds, %c1 : i32
      scf.if %ran {
        irgl.invoke @find_far(%g, %dist, %stamp, %win) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>)
        irgl.invoke @advance(%win, %delta) : (memref<?xi32>, i32)
        irgl.invoke @split(%g, %dist, %win) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
      }
    }
  }
  memref.dealloc %win : memref<?xi32>
  memref.dealloc %stamp : memref<?xi32>
}
