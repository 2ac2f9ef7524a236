// Data-driven, push-style PageRank with residuals (float32, damping 0.85).
//
// It converges to the unnormalized PageRank of irgl_runner.reference.pagerank:
//   x[v] = (1 - d) + d * sum_{u -> v} x[u] / outdeg(u)
// (dangling nodes lose their share). Every node starts with rank 0 and
// residual 1 - d and is pushed. Processing a node moves its whole residual r
// into its rank (an atomic exchange with 0) and pushes d * r / outdeg(n) to
// each out-neighbour's residual (atomic add); a neighbour whose residual
// crosses the tolerance (old < tol <= new) is pushed. Each node is therefore
// at most once in a worklist, and when the worklist is empty every residual
// is below tol: rank is then within a factor (1 - tol / (1 - d)) of x from
// below (see benchmarks/pr/app.py).

irgl.kernel @init(%g: !irgl.graph, %rank: memref<?xf32>, %residual: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %teleport = arith.constant 0.15 : f32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %rank[%n] : memref<?xf32>
    memref.store %teleport, %residual[%n] : memref<?xf32>
    irgl.wl.push %n
  }
}

irgl.kernel @push_residual(%g: !irgl.graph, %rank: memref<?xf32>,
                           %residual: memref<?xf32>, %tol: f32) {
  %zero = arith.constant 0.0 : f32
  %damping = arith.constant 0.85 : f32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %pending = memref.load %residual[%n] : memref<?xf32>
    %active = arith.cmpf oge, %pending, %tol : f32
    // take the residual (kind 2 = assign: atomicExch), keeping what others
    // added since the load, and move it into the rank
    %r = scf.if %active -> (f32) {
      %taken = "memref.atomic_rmw"(%zero, %residual, %n) <{kind = 2 : i64}> : (f32, memref<?xf32>, index) -> f32
      %old_rank = memref.load %rank[%n] : memref<?xf32>
      %new_rank = arith.addf %old_rank, %taken : f32
      memref.store %new_rank, %rank[%n] : memref<?xf32>
      scf.yield %taken : f32
    } else {
      scf.yield %zero : f32
    }
    %deg = irgl.graph.degree %g[%n]
    %deg_i32 = arith.index_cast %deg : index to i32
    %deg_f = arith.sitofp %deg_i32 : i32 to f32
    %share = arith.mulf %damping, %r : f32
    // unused (no edges) when the degree is 0
    %contrib = arith.divf %share, %deg_f : f32
    // directly in the ForAll body, so that irgl-nested-parallelism can share
    // a high-degree node's edges across a warp or block
    irgl.forall %e in edges(%g, %n) {
      scf.if %active {
        %dst = irgl.graph.edge_dst %g[%e]
        // kind 0 = addf
        %old = "memref.atomic_rmw"(%contrib, %residual, %dst) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
        %new = arith.addf %old, %contrib : f32
        %was_below = arith.cmpf olt, %old, %tol : f32
        %now_above = arith.cmpf oge, %new, %tol : f32
        %crossed = arith.andi %was_below, %now_above : i1
        scf.if %crossed {
          irgl.wl.push %dst
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %rank: memref<?xf32>, %residual: memref<?xf32>,
                       %tol: f32) {
  irgl.pipe once {
    irgl.invoke @init(%g, %rank, %residual) : (!irgl.graph, memref<?xf32>, memref<?xf32>)
    irgl.iterate @push_residual(%g, %rank, %residual, %tol) : (!irgl.graph, memref<?xf32>, memref<?xf32>, f32) {
    }
  }
}
