// RUN: irgl-opt %s -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s -p irgl-distribute --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: irgl-opt %s -p "irgl-distribute{policy=cvc}" | filecheck %s --check-prefix=FULL
// RUN: irgl-opt %s -p "irgl-distribute{reduce_only=false}" | filecheck %s --check-prefix=FULL
// RUN: irgl-opt %s -p "irgl-distribute{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s -p "irgl-distribute{late_broadcast=true}" | filecheck %s --check-prefix=LATE

// Reduce-only synchronization (lowering/reduce_only.py): a round's min/max
// node array whose mirrors are read only as filters before its atomic is
// reduced by the worklist's exchange (`sync_worklist reduce`) and not
// broadcast back. Under a vertex-cut, or with reduce_only=false, the round
// synchronizes it in full (sync_nodes, then sync_worklist).

// SSSP's round: the neighbour's value is only a filter (`%nd < %cur`) in
// front of the atomic min, and the push follows the atomic.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %nd = arith.addi %d, %w : i32
      %cur = memref.load %dist[%t] : memref<?xi32>
      %shorter = arith.cmpi slt, %nd, %cur : i32
      scf.if %shorter {
        %old = "memref.atomic_rmw"(%nd, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        irgl.wl.push %t
      }
    }
  }
}

irgl.kernel host @sssp(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel host @sssp
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_worklist reduce %dist min : memref<?xi32>
// CHECK-NOT:       irgl_dist.sync_nodes
// CHECK:         }

// GENERIC: "irgl_dist.sync_worklist"(%{{.*}}) <{reduction = #irgl_dist<reduction min>}> : (memref<?xi32>) -> ()

// FULL-LABEL: irgl.kernel host @sssp
// FULL:         irgl.iterate @relax
// FULL-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// FULL-NEXT:      irgl_dist.sync_worklist{{$}}

// LATE-LABEL: irgl.kernel host @sssp
// LATE:         irgl_dist.sync_worklist reduce %dist min late_broadcast : memref<?xi32>

// REMARK: after @relax: %dist reduced by sync_worklist, reduce-only (atomic mins at a neighbour; mirrors are read only as filters

// The neighbour's value feeds the value written: a lagging mirror would
// write a wrong one, so the round synchronizes in full.
irgl.kernel @relax_value(%g: !irgl.graph, %dist: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %cur = memref.load %dist[%t] : memref<?xi32>
      %less = arith.subi %cur, %one : i32
      %old = "memref.atomic_rmw"(%less, %dist, %n) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      irgl.wl.push %t
    }
  }
}

irgl.kernel host @value(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax_value(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel host @value
// CHECK:         irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:    irgl_dist.sync_worklist{{$}}

// The push comes before the atomic: a pushed mirror need not have changed,
// so the exchange of changed mirrors would not carry it.
irgl.kernel @relax_early(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %cur = memref.load %dist[%t] : memref<?xi32>
      %shorter = arith.cmpi slt, %d, %cur : i32
      scf.if %shorter {
        irgl.wl.push %t
        %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      }
    }
  }
}

irgl.kernel host @early(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax_early(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel host @early
// CHECK:         irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:    irgl_dist.sync_worklist{{$}}

// A test that passes less often as the value lags (`%cur > %d` read the
// wrong way round for a min: `%d > %cur`): a lagging mirror would stop
// threads the single GPU lets through.
irgl.kernel @relax_backwards(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %cur = memref.load %dist[%t] : memref<?xi32>
      %above = arith.cmpi sgt, %d, %cur : i32
      scf.if %above {
        %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        irgl.wl.push %t
      }
    }
  }
}

irgl.kernel host @backwards(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax_backwards(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel host @backwards
// CHECK:         irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:    irgl_dist.sync_worklist{{$}}

// A max (widest path): the filter is `%cur < %w`, the value on the left.
irgl.kernel @widen(%g: !irgl.graph, %cap: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %c = memref.load %cap[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %through = arith.minsi %c, %w : i32
      %cur = memref.load %cap[%t] : memref<?xi32>
      %wider = arith.cmpi slt, %cur, %through : i32
      scf.if %wider {
        %old = "memref.atomic_rmw"(%through, %cap, %t) <{kind = 4 : i64}> : (i32, memref<?xi32>, index) -> i32
        irgl.wl.push %t
      }
    }
  }
}

irgl.kernel host @widest(%g: !irgl.graph, %cap: memref<?xi32>, %src: index) {
  irgl.iterate @widen(%g, %cap) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel host @widest
// CHECK:         irgl_dist.sync_worklist reduce %cap max : memref<?xi32>

// A push after the atomic but outside any filter: one GPU pushes the
// neighbour whatever the atomic did, which the owner's activation (only
// where the value improved the master) would not.
irgl.kernel @relax_always(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      irgl.wl.push %t
    }
  }
}

irgl.kernel host @always(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax_always(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel host @always
// CHECK:         irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:    irgl_dist.sync_worklist{{$}}
