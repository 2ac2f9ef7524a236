// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops{block_push_edges=true}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops' | filecheck %s --check-prefix=NONE

// block_push_edges stages the pushes of a kernel whose every push sits in a
// ForAll over edges (an item may push once per edge): begin at the start
// of the body, staged pushes to `out`, one flush before the return.
irgl.kernel @expand(%g: !irgl.graph, %seen: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %dst
    }
  }
}

// CHECK:         ^{{.*}}(%g: !irgl.graph, %seen: memref<?xi32>, %[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist):
// CHECK-NEXT:      %[[NB:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[ST:.*]] = arith.cmpi ugt, %[[NB]], %[[ONE]] : index
// CHECK-NEXT:      func.call @irgl_wl_block_begin(%[[ST]]) : (i1) -> ()
// CHECK:             func.call @irgl_wl_push_block(%[[OUT]], %{{.*}}, %[[ST]]) : (!irgl_rt.worklist, index, i1) -> ()
// CHECK:           func.call @irgl_wl_block_flush(%[[OUT]], %[[ST]]) : (!irgl_rt.worklist, i1) -> ()
// CHECK-NEXT:      "gpu.return"() : () -> ()

// NONE-NOT:      irgl_wl_block

// -----

// A push of the item's own node (at most one per item) keeps the
// warp-aggregated push, alone or beside pushes from an edge loop.
irgl.kernel @mixed(%g: !irgl.graph, %seen: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %dst
    }
  }
}

// CHECK:         "gpu.module"
// CHECK-NOT:     irgl_wl_block
// CHECK:         func.call @irgl_wl_push(
// CHECK:         func.call @irgl_wl_push(
// CHECK-NOT:     irgl_wl_block
// CHECK:         sym_name = "mixed"

// -----

irgl.kernel @own(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.wl.push %n
  }
}

// CHECK:         "gpu.module"
// CHECK-NOT:     irgl_wl_block
// CHECK:         sym_name = "own"
