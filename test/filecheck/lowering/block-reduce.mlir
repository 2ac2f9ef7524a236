// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-sync{block_reduce=true}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-sync' | filecheck %s --check-prefix=OFF

// Block-reduced ReduceAndReturn: the threads reduce into a per-block flag
// (between a begin first in the body and a flush before the return, both
// reached by every thread); the flush touches the cell once per block.
irgl.kernel @any_big(%x: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    %v = memref.load %x[%i] : memref<?xi32>
    %c9 = arith.constant 9 : i32
    %big = arith.cmpi sgt, %v, %c9 : i32
    irgl.reduce_and_return %big
  }
}

// CHECK:         ^{{.*}}(%x: memref<?xi32>, %n: index, %[[CELL:[0-9a-z_]+]]: !irgl_rt.cell):
// CHECK-NEXT:      func.call @irgl_cell_block_begin(%[[CELL]]) : (!irgl_rt.cell) -> ()
// CHECK:           scf.for
// CHECK:             func.call @irgl_cell_reduce_block(%[[CELL]], %big) : (!irgl_rt.cell, i1) -> ()
// CHECK:           func.call @irgl_cell_block_flush(%[[CELL]]) : (!irgl_rt.cell) -> ()
// CHECK-NEXT:      "gpu.return"() : () -> ()

// OFF-NOT:       irgl_cell_block
// OFF:           func.call @irgl_cell_reduce(%{{.*}}, %big) : (!irgl_rt.cell, i1) -> ()
// OFF-NOT:       irgl_cell_block
