// RUN: irgl-opt %s | filecheck %s
// RUN: %IRGL_ROUNDTRIP | filecheck %s
// RUN: irgl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The irgl_dist ops in their custom and generic forms.

irgl.kernel @label(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %gid = irgl_dist.global_id %g[%n]
    %v = arith.index_cast %gid : index to i32
    memref.store %v, %a[%n] : memref<?xi32>
  }
}

irgl.kernel @push(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %own = irgl_dist.is_master %g[%t]
      scf.if %own {
        irgl.wl.push %t
      } else {
        irgl_dist.push_mirror %g[%t]
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %c: memref<?xf64>, %src: index, %b: i1, %k: i64) attributes {irgl_dist.host = #irgl_dist.host<cvc, nodes = [1]>} {
  %s = irgl_dist.local_node %g[%src]
  irgl.invoke @label(%g, %a) : (!irgl.graph, memref<?xi32>)
  irgl_dist.sync_nodes %a min : memref<?xi32>
  irgl_dist.sync_nodes %a maxu : memref<?xi32>
  irgl_dist.sync_nodes %a set : memref<?xi32>
  irgl_dist.sync_nodes %a set masters_only : memref<?xi32>
  irgl_dist.sync_nodes %a set agreed : memref<?xi32>
  irgl_dist.allreduce_cells %c add : memref<?xf64>
  %any = irgl_dist.allreduce or %b : i1
  %sum = irgl_dist.allreduce add %k : i64
  irgl.pipe initial [%s] attributes {irgl_dist.termination = #irgl_dist.across_ranks} {
    irgl_dist.sync_worklist
    irgl_dist.sync_worklist every_master
  }
}

// Reduce-only exchanges need an edge-cut.
irgl.kernel host @edge_cut(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl.pipe {
    irgl_dist.sync_worklist reduce %a minu : memref<?xi32>
    irgl_dist.sync_worklist reduce %a min late_broadcast : memref<?xi32>
  }
}

// CHECK:      %gid = irgl_dist.global_id %g[%n]
// CHECK:      %own = irgl_dist.is_master %g[%t]
// CHECK-NEXT: scf.if %own {
// CHECK-NEXT:   irgl.wl.push %t
// CHECK-NEXT: } else {
// CHECK-NEXT:   irgl_dist.push_mirror %g[%t]
// CHECK-NEXT: }
// CHECK:      irgl.kernel host @main({{.*}}) attributes {irgl_dist.host = #irgl_dist.host<cvc, nodes = [1]>} {
// CHECK-NEXT:   %s = irgl_dist.local_node %g[%src]
// CHECK:        irgl_dist.sync_nodes %a min : memref<?xi32>
// CHECK-NEXT:   irgl_dist.sync_nodes %a maxu : memref<?xi32>
// CHECK-NEXT:   irgl_dist.sync_nodes %a set : memref<?xi32>
// CHECK-NEXT:   irgl_dist.sync_nodes %a set masters_only : memref<?xi32>
// CHECK-NEXT:   irgl_dist.sync_nodes %a set agreed : memref<?xi32>
// CHECK-NEXT:   irgl_dist.allreduce_cells %c add : memref<?xf64>
// CHECK-NEXT:   %any = irgl_dist.allreduce or %b : i1
// CHECK-NEXT:   %sum = irgl_dist.allreduce add %k : i64
// CHECK-NEXT:   irgl.pipe initial [%s] attributes {irgl_dist.termination = #irgl_dist.across_ranks} {
// CHECK-NEXT:     irgl_dist.sync_worklist
// CHECK-NEXT:     irgl_dist.sync_worklist every_master
// CHECK-NEXT:   }
// CHECK:      irgl.kernel host @edge_cut(
// CHECK-NEXT:   irgl.pipe {
// CHECK-NEXT:     irgl_dist.sync_worklist reduce %a minu : memref<?xi32>
// CHECK-NEXT:     irgl_dist.sync_worklist reduce %a min late_broadcast : memref<?xi32>

// GENERIC: "irgl_dist.global_id"(%{{.*}}, %{{.*}}) : (!irgl.graph, index) -> index
// GENERIC: "irgl_dist.is_master"(%{{.*}}, %{{.*}}) : (!irgl.graph, index) -> i1
// GENERIC: "irgl_dist.push_mirror"(%{{.*}}, %{{.*}}) : (!irgl.graph, index) -> ()
// GENERIC: "irgl_dist.local_node"(%{{.*}}, %{{.*}}) : (!irgl.graph, index) -> index
// GENERIC: "irgl_dist.sync_nodes"(%{{.*}}) <{reduction = #irgl_dist<reduction min>}> : (memref<?xi32>) -> ()
// GENERIC: "irgl_dist.sync_nodes"(%{{.*}}) <{reduction = #irgl_dist<reduction set>, masters_only}> : (memref<?xi32>) -> ()
// GENERIC: "irgl_dist.sync_nodes"(%{{.*}}) <{reduction = #irgl_dist<reduction set>, agreed}> : (memref<?xi32>) -> ()
// GENERIC: "irgl_dist.allreduce_cells"(%{{.*}}) <{reduction = #irgl_dist<reduction add>}> : (memref<?xf64>) -> ()
// GENERIC: "irgl_dist.allreduce"(%{{.*}}) <{reduction = #irgl_dist<reduction or>}> : (i1) -> i1
// GENERIC: "irgl_dist.sync_worklist"() : () -> ()
// GENERIC: "irgl_dist.sync_worklist"() <{every_master}> : () -> ()
// GENERIC: "irgl_dist.sync_worklist"(%{{.*}}) <{reduction = #irgl_dist<reduction minu>}> : (memref<?xi32>) -> ()
// GENERIC: "irgl_dist.sync_worklist"(%{{.*}}) <{reduction = #irgl_dist<reduction min>, late_broadcast}> : (memref<?xi32>) -> ()
