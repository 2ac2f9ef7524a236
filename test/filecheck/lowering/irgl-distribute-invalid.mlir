// RUN: irgl-opt %s --split-input-file --verify-diagnostics -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s --split-input-file --verify-diagnostics -p 'irgl-distribute{policy=cvc}' | filecheck %s --check-prefix=CVC

// Each program irgl-distribute refuses, with the reason it gives (located at
// the op). The CVC prefix checks the cases only a vertex-cut refuses; the
// other chunks fail the same way under both policies.

// Exclusive: locks do not span ranks.
irgl.kernel @k(%g: !irgl.graph, %claims: memref<?xi32>, %items: memref<4xindex>) {
  %c4 = arith.constant 4 : index
  irgl.forall %n in nodes(%g) {
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      irgl.nop
    }
  }
}
// CHECK: cannot distribute: @k: an Exclusive locks nodes that other ranks update too, and mutual exclusion does not span ranks

// -----

// C text touching an array.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    irgl.cblock "$0[$1] = 1;" (%a, %n : memref<?xi32>, index)
  }
}
// CHECK: cannot distribute: @k: C text reads or writes %a, and the pass cannot see which entries or how, so it cannot synchronize them

// -----

// A pointer chase: the index is loaded from memory.
irgl.kernel @k(%g: !irgl.graph, %parent: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %p = memref.load %parent[%n] : memref<?xi32>
    %pi = arith.index_cast %p : i32 to index
    %gp = memref.load %parent[%pi] : memref<?xi32>
  }
}
// CHECK: cannot distribute: @k indexes %parent with %pi, which is neither a node id the pass can follow (a ForAll's node, a popped item, an edge's destination) nor the same in every thread: if it is a node (say, loaded from memory) it may live on another rank

// -----

// A neighbour's edges.
irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %f = irgl.graph.first_edge %g[%d]
    }
  }
}
// CHECK: cannot distribute: @k reads the edge range of %d, a neighbour: only the ranks that hold its edges know them (under an edge-cut a mirror has none)

// -----

// A per-thread value stored into a neighbour's entry.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %x = memref.load %a[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      memref.store %x, %a[%d] : memref<?xi32>
    }
  }
}
// CHECK: cannot distribute: @k stores %x, which differs between threads, into a neighbour's entry of %a: with copies on several ranks no reduction says which store wins; use an atomic min, max or add

// -----

// The result of an atomic add (PageRank push's threshold test).
irgl.kernel @k(%g: !irgl.graph, %r: memref<?xf64>) {
  %x = arith.constant 1.0 : f64
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%x, %r, %d) <{kind = 0 : i64}> : (f64, memref<?xf64>, index) -> f64
      %big = arith.cmpf oge, %old, %x : f64
    }
  }
}
// CHECK: cannot distribute: @k uses the value an atomic add on %r returns: on one rank it holds only that rank's additions

// -----

// An atomic with no reduction across ranks.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  %two = arith.constant 2 : i32
  irgl.forall %n in nodes(%g) {
    %old = "memref.atomic_rmw"(%two, %a, %n) <{kind = 10 : i64}> : (i32, memref<?xi32>, index) -> i32
  }
}
// CHECK: cannot distribute: @k updates %a with atomic_rmw kind 10, which has no reduction across ranks (min, max, add)

// -----

// Two reductions on one array.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %o1 = "memref.atomic_rmw"(%one, %a, %d) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %o2 = "memref.atomic_rmw"(%one, %a, %d) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.invoke @k(%g, %a) : (!irgl.graph, memref<?xi32>)
}
// CHECK: cannot distribute: @k writes the same array with atomic mins at a neighbour (min) and atomic addi at a neighbour (add): one reduction must combine the copies of an entry on several ranks

// -----

// One array indexed both ways.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %x = memref.load %a[%n] : memref<?xi32>
    %y = memref.load %a[%c0] : memref<?xi32>
  }
}
// CHECK: cannot distribute: @k indexes %a both by node ids and by other values: it must be either a node array (one entry per node) or a replicated array

// -----

// The graph's size in a kernel.
irgl.kernel @k(%g: !irgl.graph) {
  %nn = irgl.graph.num_nodes %g
}
// CHECK: cannot distribute: @k reads the graph's size, which is the rank's local count on a partition, not the graph's

// -----

// A node id argument used as data.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>, %src: index) {
  irgl.forall %n in nodes(%g) {
    %is = arith.cmpi eq, %n, %src : index
    %s = arith.index_cast %src : index to i32
  }
}
// CHECK: cannot distribute: @k uses node id argument %src other than to compare it with nodes (eq, ne): its value is the node's local id on its owner

// -----

// A push of a value that is no node.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %x = memref.load %a[%n] : memref<?xi32>
    %xi = arith.index_cast %x : i32 to index
    irgl.wl.push %xi
  }
}
// CHECK: cannot distribute: @k pushes %xi, which is not a node id the pass can follow (a ForAll's node, a popped item or an edge's destination)

// -----

// The host reads a node array.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %x = memref.load %a[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  irgl.invoke @k(%g, %a) : (!irgl.graph, memref<?xi32>)
  %x = memref.load %a[%c0] : memref<?xi32>
}
// CHECK: cannot distribute: the host accesses node array %a: each rank holds only its own nodes' entries

// -----

// The node count used for something else than a node array's size.
irgl.kernel host @main(%g: !irgl.graph) {
  %nn = irgl.graph.num_nodes %g
  %c1 = arith.constant 1 : index
  %m = arith.addi %nn, %c1 : index
}
// CHECK: cannot distribute: the node count is the rank's local count on a partition; it may only size node arrays

// -----

// The largest degree on the host (a rank would read its own partition's).
irgl.kernel host @main(%g: !irgl.graph) {
  %d = irgl.graph.max_degree %g
}
// CHECK: cannot distribute: the largest degree is the rank's own on a partition

// -----

// The largest degree in a kernel.
irgl.kernel @k(%g: !irgl.graph) {
  %d = irgl.graph.max_degree %g
}
// CHECK: cannot distribute: @k reads the graph's size, which is the rank's local count on a partition, not the graph's

// -----

// An initial worklist read from an array.
irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%g: !irgl.graph, %items: memref<?xi32>, %count: index) {
  irgl.pipe initial %items[%count] : memref<?xi32> {
    irgl.invoke @k(%g) : (!irgl.graph)
  }
}
// CHECK: cannot distribute: the initial worklist comes from array %items, whose node ids the pass cannot tell apart from other data

// -----

// Only under a vertex-cut: a degree, the edges of a ForAll's node, a
// reduction over the edges of a popped node.
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xindex>) {
  irgl.forall %n in nodes(%g) {
    %d = irgl.graph.degree %g[%n]
    memref.store %d, %a[%n] : memref<?xindex>
  }
}
// CVC: cannot distribute: @k reads the degree of %n: under a vertex-cut (cvc) a node's edges are split over the ranks of its grid row, so a rank's degree is not the node's; distribute with policy=oec

// -----

// A degree test that decides more than whether the node is pushed (here a
// store too) is refused as well; one that decides only the push is not
// (irgl-distribute-push-guard.mlir).
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    %d = irgl.graph.degree %g[%n]
    %has = arith.cmpi ne, %d, %c0 : index
    scf.if %has {
      irgl.wl.push %n
      memref.store %one, %a[%n] : memref<?xi32>
    }
  }
}
// CVC: cannot distribute: @k reads the degree of %n: under a vertex-cut (cvc) a node's edges are split over the ranks of its grid row, so a rank's degree is not the node's; distribute with policy=oec

// -----

irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %o = "memref.atomic_rmw"(%one, %a, %d) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
// CVC: cannot distribute: @k walks the edges of %n, the node of a ForAll over nodes: under a vertex-cut (cvc) its edges are split over the ranks of its grid row, but a ForAll over nodes runs on masters only; distribute with policy=oec

// -----

irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %s = irgl.forall %e in edges(%g, %n) reduce(max, %zero : i32) {
      %d = irgl.graph.edge_dst %g[%e]
      %x = memref.load %a[%d] : memref<?xi32>
      irgl.yield %x : i32
    }
  }
}
// CVC: cannot distribute: @k walks the edges of %n, the popped node, to reduce over them: under a vertex-cut (cvc) each rank of the node's grid row holds part of its edges, so the result would be partial; distribute with policy=oec
