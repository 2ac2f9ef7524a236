// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{interleave=4 interleave_budget=24}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{interleave=4}' | filecheck %s --check-prefix=FULL
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{interleave=4 interleave_budget=12 unroll=4 unroll_interleaved=false}' | filecheck %s --check-prefix=ONE
// RUN: irgl-opt %s -p 'lower-irgl{edge_interleave_budget=24 outline=false}' | filecheck %s --check-prefix=LOWER
// RUN: irgl-opt %s -p 'lower-irgl{outline=false}' | filecheck %s --check-prefix=DEFAULT

// convert-irgl-nested-edges{interleave_budget=N}: the block and warp phases
// interleave at most N operations' worth of copies of an edge loop's body
// (this body has 12: two copies under 24), the thread phase keeps
// `interleave` (4); without a budget every phase has 4 copies.

// CHECK:       func.call @irgl_block_elect
// CHECK:       scf.for
// CHECK:         memref.store %h, %level[%dst]
// CHECK-NEXT:  }
// CHECK:         memref.store %h_1, %level[%dst_1]
// CHECK-NEXT:  }
// CHECK-NOT:     memref.store
// CHECK:       func.call @irgl_warp_active
// CHECK:       scf.for
// CHECK:         memref.store %h_2, %level[%dst_2]
// CHECK:         memref.store %h_3, %level[%dst_3]
// CHECK-NOT:     memref.store
// CHECK:       scf.for
// CHECK:         memref.store %h_4, %level[%dst_4]
// CHECK:         memref.store %h_5, %level[%dst_5]
// CHECK:         memref.store %h_6, %level[%dst_6]
// CHECK:         memref.store %h_7, %level[%dst_7]
// CHECK-NOT:     memref.store

// FULL:        func.call @irgl_block_elect
// FULL-COUNT-4:  memref.store %h{{(_[0-9]+)?}}, %level
// FULL:        func.call @irgl_warp_active
// FULL-COUNT-4:  memref.store %h_{{[0-9]+}}, %level
// FULL:        scf.for
// FULL-COUNT-4:  memref.store %h_{{[0-9]+}}, %level
// FULL-NOT:      memref.store

// A budget of one copy leaves the block and warp phases' loops whole, so
// they keep `unroll` (as loops not interleaved do); the interleaved thread
// phase does not (unroll_interleaved=false).
// ONE:         func.call @irgl_block_elect
// ONE:           memref.store %h, %level[%dst]
// ONE:         } {irgl_rt.unroll = 4 : i64}
// ONE:         func.call @irgl_warp_active
// ONE:           memref.store %h_1, %level[%dst_1]
// ONE:         } {irgl_rt.unroll = 4 : i64}
// ONE:           memref.store %h_2, %level[%dst_2]
// ONE:           memref.store %h_5, %level[%dst_5]
// ONE-NOT:     irgl_rt.unroll

// lower-irgl passes its edge_interleave_budget on (the default, 200, leaves
// this body 4 copies everywhere).
// LOWER-COUNT-8: memref.store %h{{(_[0-9]+)?}}, %level
// LOWER-NOT:     memref.store %h{{(_[0-9]+)?}}, %level
// DEFAULT-COUNT-12: memref.store %h{{(_[0-9]+)?}}, %level
// DEFAULT-NOT:      memref.store %h{{(_[0-9]+)?}}, %level
irgl.kernel @relax(%g: !irgl.graph, %level: memref<?xi32>) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %a = memref.load %level[%dst] : memref<?xi32>
      %b = arith.addi %a, %a : i32
      %c = arith.addi %b, %a : i32
      %d = arith.addi %c, %b : i32
      %f = arith.addi %d, %c : i32
      %h = arith.addi %f, %d : i32
      %unseen = arith.cmpi eq, %h, %inf : i32
      scf.if %unseen {
        memref.store %h, %level[%dst] : memref<?xi32>
      }
    }
  }
}
