// Data-driven, push-style PageRank with residuals (float64, damping 0.85).
//
// It converges to the unnormalized PageRank of irgl_runner.reference.pagerank:
//   x[v] = (1 - d) + d * sum_{u -> v} x[u] / outdeg(u)
// (dangling nodes lose their share). Every node starts with rank 0 and
// residual 1 - d and is pushed. Processing a node moves the residual r it
// loaded into its rank (an atomic subtraction of r, which keeps what others
// added since the load) and pushes d * r / outdeg(n) to each out-neighbour's
// residual (atomic add); a neighbour whose residual crosses the tolerance
// (old < tol <= new) is pushed, and so is the node itself when what others
// added meanwhile already reaches tol. Each node is therefore at most once in
// a worklist, and when the worklist is empty every residual is below tol:
// rank is then within a factor (1 - tol / (1 - d)) of x from below (see
// benchmarks/pr/app.py).
//
// Ranks and residuals are float64: a hub's residual sums up to one
// contribution per in-edge between two visits, and in float32 the small ones
// vanish against the large running sum (a hub of 10^6 in-edges ends about 1%
// low); float64 keeps the sum within the tolerance on any graph.

irgl.kernel @init(%g: !irgl.graph, %rank: memref<?xf64>, %residual: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %teleport = arith.constant 0.15 : f64
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %rank[%n] : memref<?xf64>
    memref.store %teleport, %residual[%n] : memref<?xf64>
    irgl.wl.push %n
  }
}

// One 512-thread block per SM (launch bounds, which the control kernel that
// runs the Iterate adopts): 128 registers a thread instead of 64 and no
// spills. On an H100 against 1024 threads per SM: grid 64.9 -> 58.9 ms,
// RMAT 20 49.8 -> 43.0 ms (benchmarks/RESULTS.md).
irgl.kernel @push_residual(%g: !irgl.graph, %rank: memref<?xf64>,
                           %residual: memref<?xf64>, %tol: f64) launch_bounds(512, 1) {
  %zero = arith.constant 0.0 : f64
  %damping = arith.constant 0.85 : f64
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %pending = memref.load %residual[%n] : memref<?xf64>
    %active = arith.cmpf oge, %pending, %tol : f64
    // take the loaded residual: subtract it atomically (kind 0 = addf of
    // -pending), keeping what others added since the load, and move it into
    // the rank; if what they added already reaches tol, nobody else pushes
    // this node (they saw no crossing), so push it here
    %r = scf.if %active -> (f64) {
      %minus = arith.negf %pending : f64
      %before = "memref.atomic_rmw"(%minus, %residual, %n) <{kind = 0 : i64}> : (f64, memref<?xf64>, index) -> f64
      %left = arith.subf %before, %pending : f64
      %again = arith.cmpf oge, %left, %tol : f64
      scf.if %again {
        irgl.wl.push %n
      }
      %old_rank = memref.load %rank[%n] : memref<?xf64>
      %new_rank = arith.addf %old_rank, %pending : f64
      memref.store %new_rank, %rank[%n] : memref<?xf64>
      scf.yield %pending : f64
    } else {
      scf.yield %zero : f64
    }
    %deg = irgl.graph.degree %g[%n]
    %deg_i32 = arith.index_cast %deg : index to i32
    %deg_f = arith.sitofp %deg_i32 : i32 to f64
    %share = arith.mulf %damping, %r : f64
    // unused (no edges) when the degree is 0
    %contrib = arith.divf %share, %deg_f : f64
    // directly in the ForAll body, so that irgl-nested-parallelism can share
    // a high-degree node's edges across a warp or block
    irgl.forall %e in edges(%g, %n) {
      scf.if %active {
        %dst = irgl.graph.edge_dst %g[%e]
        // kind 0 = addf
        %old = "memref.atomic_rmw"(%contrib, %residual, %dst) <{kind = 0 : i64}> : (f64, memref<?xf64>, index) -> f64
        %new = arith.addf %old, %contrib : f64
        %was_below = arith.cmpf olt, %old, %tol : f64
        %now_above = arith.cmpf oge, %new, %tol : f64
        %crossed = arith.andi %was_below, %now_above : i1
        scf.if %crossed {
          irgl.wl.push %dst
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %rank: memref<?xf64>, %residual: memref<?xf64>,
                       %tol: f64) {
  irgl.pipe once {
    irgl.invoke @init(%g, %rank, %residual) : (!irgl.graph, memref<?xf64>, memref<?xf64>)
    irgl.iterate @push_residual(%g, %rank, %residual, %tol) : (!irgl.graph, memref<?xf64>, memref<?xf64>, f64) {
    }
  }
}
