// RUN: irgl-opt %s -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s -p "irgl-distribute{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s -p "lower-irgl{distribute=oec}" -t cuda | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s -p "irgl-distribute{mirrors=false}" | filecheck %s --check-prefix=OFF

// A node array that an invoked kernel writes only with stores at its ForAll's
// node, of values computed from the node's global id, constants, scalar
// arguments and the node's comparisons with node-id arguments, is computed
// on the mirrors too: a copy of the kernel over the mirrors (@K_mirrors, its
// ForAll `irgl_dist.mirrors`, nothing but those stores and what they use,
// its comparisons made on global ids, the node-id arguments passed
// untranslated) runs right after the writer, and the sync only records that
// the copies agree. The rest (a value loaded from memory) is broadcast.
irgl.kernel @init(%g: !irgl.graph, %label: memref<?xi32>, %stamp: memref<?xi32>, %seen: memref<?xi32>, %dist: memref<?xi32>, %src: index, %k: i32) {
  %zero = arith.constant 0 : i32
  %inf = arith.constant 1000000 : i32
  irgl.forall %n in nodes(%g) {
    %self = arith.index_cast %n : index to i32
    %shifted = arith.addi %self, %k : i32
    memref.store %shifted, %label[%n] : memref<?xi32>
    memref.store %zero, %stamp[%n] : memref<?xi32>
    %old = memref.load %seen[%n] : memref<?xi32>
    %next = arith.addi %old, %k : i32
    memref.store %next, %seen[%n] : memref<?xi32>
    %is_src = arith.cmpi eq, %n, %src : index
    %d = arith.select %is_src, %zero, %inf : i32
    memref.store %d, %dist[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}
irgl.kernel @relax(%g: !irgl.graph, %label: memref<?xi32>, %stamp: memref<?xi32>, %seen: memref<?xi32>, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %l = memref.load %label[%n] : memref<?xi32>
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %a = memref.load %stamp[%v] : memref<?xi32>
      %b = memref.load %seen[%v] : memref<?xi32>
      %o = "memref.atomic_rmw"(%l, %label, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %p = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %label: memref<?xi32>, %stamp: memref<?xi32>, %seen: memref<?xi32>, %dist: memref<?xi32>, %src: index, %k: i32) {
  irgl.pipe once {
    irgl.invoke @init(%g, %label, %stamp, %seen, %dist, %src, %k) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, index, i32)
    irgl.iterate @relax(%g, %label, %stamp, %seen, %dist) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>) {
    }
  }
}

// CHECK:      irgl.kernel @init(
// CHECK:        irgl.wl.push %n
// CHECK:      irgl.kernel @init_mirrors(%g: !irgl.graph, %label: memref<?xi32>, %stamp: memref<?xi32>, %seen: memref<?xi32>, %dist: memref<?xi32>, %src: index, %k: i32) {
// CHECK-NEXT:   %zero = arith.constant 0 : i32
// CHECK-NEXT:   %inf = arith.constant 1000000 : i32
// CHECK-NEXT:   irgl.forall %n in nodes(%g) attributes {irgl_dist.mirrors} {
// CHECK-NEXT:     %n_global = irgl_dist.global_id %g[%n]
// CHECK-NEXT:     %self = arith.index_cast %n_global : index to i32
// CHECK-NEXT:     %shifted = arith.addi %self, %k : i32
// CHECK-NEXT:     memref.store %shifted, %label[%n] : memref<?xi32>
// CHECK-NEXT:     memref.store %zero, %stamp[%n] : memref<?xi32>
// CHECK-NEXT:     %is_src = arith.cmpi eq, %n_global, %src : index
// CHECK-NEXT:     %d = arith.select %is_src, %zero, %inf : i32
// CHECK-NEXT:     memref.store %d, %dist[%n] : memref<?xi32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      irgl.invoke @init(%g, %label, %stamp, %seen, %dist, %src_local, %k)
// CHECK-NEXT: irgl.invoke @init_mirrors(%g, %label, %stamp, %seen, %dist, %src, %k)
// CHECK-NEXT: irgl_dist.sync_nodes %label set agreed : memref<?xi32>
// CHECK-NEXT: irgl_dist.sync_nodes %stamp set agreed : memref<?xi32>
// CHECK-NEXT: irgl_dist.sync_nodes %seen set masters_only : memref<?xi32>
// CHECK-NEXT: irgl_dist.sync_nodes %dist set agreed : memref<?xi32>
// CHECK-NEXT: irgl_dist.sync_worklist

// REMARK: after @init: %label computed on the mirrors too
// REMARK: after @init: %stamp computed on the mirrors too
// REMARK: after @init: sync_nodes %seen set masters_only
// REMARK: after @init: %dist computed on the mirrors too

// CUDA-LABEL: __global__ void init_mirrors(irgl::Graph g, int32_t* label
// CUDA:         irgl_index [[FIRST:v[0-9]+]] = irgl_dist_num_masters();
// CUDA:         irgl_index [[LAST:v[0-9]+]] = irgl_graph_num_nodes(g);
// CUDA:         irgl::launch(init_mirrors,
// CUDA-NEXT:    irgl_dist_agree_nodes_i32(label);
// CUDA-NEXT:    irgl_dist_agree_nodes_i32(stamp);
// CUDA-NEXT:    irgl_dist_broadcast_nodes_i32(seen);

// OFF-NOT:    @init_mirrors
// OFF:        irgl_dist.sync_nodes %label set masters_only : memref<?xi32>
// OFF-NEXT:   irgl_dist.sync_nodes %stamp set masters_only : memref<?xi32>
