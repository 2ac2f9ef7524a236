// RUN: irgl-opt %s --split-input-file -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s --split-input-file -p "irgl-distribute{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Level-by-level BFS: a store of the round's level (the same in every
// thread) at a neighbour is `set`; the init store, read at neighbours, is
// computed on the mirrors too (the node compared with the source by global
// ids there); the source becomes a local id; pushes sync the worklist.
irgl.kernel @init(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %l = arith.select %is_src, %zero, %inf : i32
    memref.store %l, %level[%n] : memref<?xi32>
  }
}
irgl.kernel @bfs(%g: !irgl.graph, %level: memref<?xi32>, %LEVEL: i32) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        memref.store %LEVEL, %level[%dst] : memref<?xi32>
        irgl.wl.push %dst
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

// CHECK-LABEL: irgl.kernel host @main
// CHECK-SAME:    attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [1]>} {
// CHECK-NEXT:    %src_local = irgl_dist.local_node %g[%src]
// CHECK:         irgl.invoke @init(%g, %level, %src_local)
// CHECK-NEXT:    irgl.invoke @init_mirrors(%g, %level, %src)
// CHECK-NEXT:    irgl_dist.sync_nodes %level set agreed : memref<?xi32>
// CHECK-NEXT:    %last = irgl.iterate @bfs(%g, %level, %lvl = %c1) : (!irgl.graph, memref<?xi32>, i32) initial [%src_local] attributes {irgl_dist.termination = #irgl_dist.across_ranks} {
// CHECK-NEXT:      irgl_dist.sync_nodes %level set : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_worklist
// CHECK-NEXT:      %next = arith.addi %lvl, %c1 : i32

// REMARK: remark: {{.*}}irgl.invoke in @main: %src is a node id: its owner's local id on each rank
// REMARK: remark: {{.*}}irgl.invoke in @main: after @init: %level computed on the mirrors too (stores at the ForAll's node of values from the node's global id, constants, scalar arguments and the node's comparisons with node-id arguments): sync_nodes set agreed, no broadcast
// REMARK: remark: {{.*}}irgl.iterate in @main: after @bfs: sync_nodes %level set (stores one value for all at a neighbour)
// REMARK: remark: {{.*}}irgl.iterate in @main: after @bfs: sync_worklist (pushed mirrors to their owners)
// REMARK: remark: {{.*}}irgl.kernel in @main: node-array arguments: %level

// -----

// Atomic min at a neighbour, atomic min into a cell, an Any result, a node
// id as data (its global id), an owner-only array nobody reads elsewhere
// (left alone), a node array allocated on the host.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %best: memref<?xi32>, %mark: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %d = memref.load %dist[%n] : memref<?xi32>
    %id = arith.index_cast %n : index to i32
    memref.store %id, %mark[%n] : memref<?xi32>
    %old = "memref.atomic_rmw"(%d, %best, %c0) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %o = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 8 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi ult, %d, %o : i32
      irgl.reduce_and_return %lower
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %mark: memref<?xi32>) {
  %nn = irgl.graph.num_nodes %g
  %c1 = arith.constant 1 : index
  %dist = memref.alloc(%nn) : memref<?xi32>
  %best = memref.alloc(%c1) : memref<?xi32>
  %moved = irgl.invoke any @relax(%g, %dist, %best, %mark) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>)
  scf.if %moved {
    %c0 = arith.constant 0 : index
    %b = memref.load %best[%c0] : memref<?xi32>
  }
}

// CHECK-LABEL: irgl.kernel @relax
// CHECK:         %n_global = irgl_dist.global_id %g[%n]
// CHECK-NEXT:    %id = arith.index_cast %n_global : index to i32
// CHECK-LABEL: irgl.kernel host @main
// CHECK-SAME:    attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [1]>} {
// CHECK:         %moved = irgl.invoke any @relax
// CHECK-NEXT:    irgl_dist.sync_nodes %dist minu : memref<?xi32>
// CHECK-NEXT:    irgl_dist.allreduce_cells %best min : memref<?xi32>
// CHECK-NEXT:    %moved_all = irgl_dist.allreduce or %moved : i1
// CHECK-NEXT:    scf.if %moved_all {
// CHECK-NOT:     irgl_dist.sync_nodes %mark

// REMARK: remark: {{.*}}after @relax: sync_nodes %dist minu (atomic minu at a neighbour)
// REMARK: remark: {{.*}}after @relax: %mark not synchronized (stores at the ForAll's node; no kernel reads it at another node)
// REMARK: remark: {{.*}}after @relax: allreduce_cells %best min (atomic mins)
// REMARK: remark: {{.*}}after @relax: allreduce or of its any result
// REMARK: remark: {{.*}}irgl.kernel in @main: node-array arguments: %mark
