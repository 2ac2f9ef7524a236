// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops{block_push=true}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops' | filecheck %s --check-prefix=OFF

// Cooperative conversion of pushes: the kernel stages its pushes to `out`
// per block (one shared atomic each) between a begin at the start of its
// body and a flush (one global atomic per block) before its return; a Retry
// still goes to the retry worklist directly. All three take `grid_dim > 1`:
// a grid of one block pushes straight to `out`.
irgl.kernel @relax(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %c0 = arith.constant 0 : index
    %cmp = arith.cmpi sgt, %n, %c0 : index
    scf.if %cmp {
      irgl.wl.push %n
    } else {
      irgl.retry %n
    }
  }
}

// CHECK:         ^{{.*}}(%x: memref<?xi32>, %[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist):
// CHECK-NEXT:      %[[NB:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[ST:.*]] = arith.cmpi ugt, %[[NB]], %[[ONE]] : index
// CHECK-NEXT:      func.call @irgl_wl_block_begin(%[[ST]]) : (i1) -> ()
// CHECK:           scf.for
// CHECK:             func.call @irgl_wl_push_block(%[[OUT]], %{{.*}}, %[[ST]]) : (!irgl_rt.worklist, index, i1) -> ()
// CHECK:             func.call @irgl_wl_push(%[[RT]], %{{.*}}) : (!irgl_rt.worklist, index) -> ()
// CHECK:           func.call @irgl_wl_block_flush(%[[OUT]], %[[ST]]) : (!irgl_rt.worklist, i1) -> ()
// CHECK-NEXT:      "gpu.return"() : () -> ()
// CHECK-DAG:     func.func private @irgl_wl_block_begin(i1) -> ()
// CHECK-DAG:     func.func private @irgl_wl_push_block(!irgl_rt.worklist, index, i1) -> ()
// CHECK-DAG:     func.func private @irgl_wl_block_flush(!irgl_rt.worklist, i1) -> ()

// OFF-NOT:       irgl_wl_block
// OFF:           func.call @irgl_wl_push(%{{.*}}, %{{.*}}) : (!irgl_rt.worklist, index) -> ()
// OFF-NOT:       irgl_wl_block

// -----

// A kernel that does not push is not converted.
irgl.kernel @count(%y: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}

// CHECK-LABEL:   ^bb0(%y: memref<?xi32>
// CHECK-NOT:     irgl_wl_block
// CHECK:         sym_name = "count"
// CHECK-NOT:     irgl_wl_block
