// Topology-driven pull PageRank (Jacobi on residuals, float64, damping 0.85).
//
// It converges to the unnormalized PageRank of irgl_runner.reference.pagerank,
//   x[v] = (1 - d) + d * sum_{u -> v} x[u] / outdeg(u),
// like benchmarks/pr (the residual push version), on a symmetric graph (the
// out-edges of a node are its in-edges, so a node pulls over its own edges).
// It keeps x = rank + M r with M = (I - d A^T D^-1)^-1 and the residuals r:
// every round, for each node n at once,
//   rank[n] += r[n];   r'[n] = d * sum_{u -> n} r[u] / outdeg(u)
// which keeps the invariant and shrinks r by about d per round. The round
// reports (ReduceAndReturn, aggregated `any`) whether some |r'[n]| >= tol,
// and the Iterate stops at the first round where none is: then |r| < tol and
// x - rank = M r (benchmarks/pr_pull/app.py passes tol = tolerance * n, the
// tolerance on normalized ranks, and checks exactly that).
//
// It starts from a uniform guess u: rank 0 and residual u, and the first
// round adds `bias` = (1 - d) - u to every new residual (a carried value, 0
// after it), so that after it rank = u and r = (1 - d) + d A^T D^-1 u - u,
// the residual of the guess (x = u + M r); residuals are then of either
// sign. u = 1 is power iteration's start (Gunrock's PageRank starts from
// 1/n): a tolerance of 1e-6 on normalized ranks then takes 9 rounds on RMAT
// scale 18, where u = 1 - d (rank 0, residual 1 - d: the hubs' ranks fill
// from nothing) takes 36. But on a graph one node dominates (a star: a node
// with more than a quarter of the edges) u = 1 overestimates every leaf and
// the hub's residual swings between it and its leaves, shrinking by d a
// round (86 rounds on a 100,000-leaf star), while u = 1 - d starts every
// leaf at its rank and the hub's residual spreads over its leaves at once
// (4 rounds): such graphs start from u = 1 - d. The host passes u
// (benchmarks/pr_pull/app.py: `start_guess`, from the whole graph, which a
// rank of several GPUs does not see).
//
// A buffer holds each node's contribution c[n] = r[n] / outdeg(n), so the
// pull reads one value per edge; an isolated node (no edges) keeps c[n] =
// r[n] (nobody pulls from it; after rank 1 and residual -d it ends with
// rank 1 - d). The two contribution
// buffers alternate: the Iterate carries them and swaps them after each
// round. The sum over a node's edges is an edge-loop reduction (no atomics),
// which irgl-nested-parallelism shares across a warp or block for
// high-degree nodes; every rank and residual is float64, so a hub's sum over
// a million edges stays within the tolerance.

irgl.kernel @init(%g: !irgl.graph, %rank: memref<?xf64>, %c: memref<?xf64>, %unit: f64) {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %rank[%n] : memref<?xf64>
    %deg = irgl.graph.degree %g[%n]
    %has_edges = arith.cmpi sgt, %deg, %c0 : index
    %deg_i64 = arith.index_cast %deg : index to i64
    %deg_f = arith.sitofp %deg_i64 : i64 to f64
    %share = arith.divf %unit, %deg_f : f64
    %c_n = arith.select %has_edges, %share, %unit : f64
    memref.store %c_n, %c[%n] : memref<?xf64>
  }
}

irgl.kernel @pull(%g: !irgl.graph, %rank: memref<?xf64>, %c_in: memref<?xf64>,
                  %c_out: memref<?xf64>, %bias: f64, %tol: f64) {
  %zero = arith.constant 0.0 : f64
  %damping = arith.constant 0.85 : f64
  %c0 = arith.constant 0 : index
  %neg_tol = arith.negf %tol : f64
  irgl.forall %n in nodes(%g) {
    %deg = irgl.graph.degree %g[%n]
    %has_edges = arith.cmpi sgt, %deg, %c0 : index
    %deg_i64 = arith.index_cast %deg : index to i64
    %deg_f = arith.sitofp %deg_i64 : i64 to f64
    // the residual this node takes into its rank
    %c_n = memref.load %c_in[%n] : memref<?xf64>
    %scaled = arith.mulf %c_n, %deg_f : f64
    %r = arith.select %has_edges, %scaled, %c_n : f64
    %old_rank = memref.load %rank[%n] : memref<?xf64>
    %new_rank = arith.addf %old_rank, %r : f64
    memref.store %new_rank, %rank[%n] : memref<?xf64>
    // its next residual: what its in-neighbours pass on
    %sum = irgl.forall %e in edges(%g, %n) reduce(add, %zero : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %c_u = memref.load %c_in[%u] : memref<?xf64>
      irgl.yield %c_u : f64
    }
    %pulled = arith.mulf %damping, %sum : f64
    %r_next = arith.addf %pulled, %bias : f64
    %share = arith.divf %r_next, %deg_f : f64
    %c_next = arith.select %has_edges, %share, %r_next : f64
    memref.store %c_next, %c_out[%n] : memref<?xf64>
    %up = arith.cmpf oge, %r_next, %tol : f64
    %down = arith.cmpf ole, %r_next, %neg_tol : f64
    %moving = arith.ori %up, %down : i1
    irgl.reduce_and_return %moving
  }
}

// The final residuals r (from the contributions c) into %residual.
irgl.kernel @residuals(%g: !irgl.graph, %c: memref<?xf64>, %residual: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %deg = irgl.graph.degree %g[%n]
    %has_edges = arith.cmpi sgt, %deg, %c0 : index
    %deg_i64 = arith.index_cast %deg : index to i64
    %deg_f = arith.sitofp %deg_i64 : i64 to f64
    %c_n = memref.load %c[%n] : memref<?xf64>
    %scaled = arith.mulf %c_n, %deg_f : f64
    %r = arith.select %has_edges, %scaled, %c_n : f64
    memref.store %r, %residual[%n] : memref<?xf64>
  }
}

irgl.kernel host @main(%g: !irgl.graph, %rank: memref<?xf64>, %residual: memref<?xf64>,
                       %scratch: memref<?xf64>, %tol: f64, %unit: f64) {
  %teleport = arith.constant 0.15 : f64
  %no_bias = arith.constant 0.0 : f64
  // the first round's bias: (1 - d) - u
  %first_bias = arith.subf %teleport, %unit : f64
  irgl.invoke @init(%g, %rank, %residual, %unit) : (!irgl.graph, memref<?xf64>, memref<?xf64>, f64)
  // no worklist: every round is one launch over all nodes
  %last, %other, %spent = irgl.iterate while any @pull(%g, %rank, %c_in = %residual, %c_out = %scratch, %bias = %first_bias, %tol)
      : (!irgl.graph, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64) {
    irgl.yield %c_out, %c_in, %no_bias : memref<?xf64>, memref<?xf64>, f64
  }
  irgl.invoke @residuals(%g, %last, %residual) : (!irgl.graph, memref<?xf64>, memref<?xf64>)
}
