// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-loops | filecheck %s --check-prefix=SEQ
// RUN: irgl-opt %s -p convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges | filecheck %s --check-prefix=NESTED
// RUN: irgl-opt %s -p convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops | filecheck %s --check-prefix=LOOPS
// RUN: irgl-opt %s --lower-irgl -t cuda | filecheck %s --check-prefix=CUDA

// A reducing edge loop: sequentially an scf.for with an iter_arg; with nested
// parallelism each lane's partial is totalled by a block reduction (block
// phase) or a warp reduction (warp phase) and combined by the owner, and the
// thread phase continues from the owner's value.

irgl.kernel @pull(%g: !irgl.graph, %x: memref<?xf64>, %y: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %own = memref.load %x[%n] : memref<?xf64>
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %own : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xf64>
      irgl.yield %v : f64
    }
    memref.store %s, %x[%n] : memref<?xf64>
    %big = arith.constant 2147483647 : i32
    %m = irgl.forall %e in edges(%g, %n) reduce(min, %big : i32) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %y[%u] : memref<?xi32>
      irgl.yield %v : i32
    }
    memref.store %m, %y[%n] : memref<?xi32>
  }
}

// SEQ:      %own = memref.load %x[%n] : memref<?xf64>
// SEQ:      %s = scf.for %e = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %own) -> (f64) {
// SEQ-NEXT:   %u = irgl.graph.edge_dst %g[%e]
// SEQ-NEXT:   %v = memref.load %x[%u] : memref<?xf64>
// SEQ-NEXT:   %[[SUM:.*]] = arith.addf %[[ACC]], %v : f64
// SEQ-NEXT:   scf.yield %[[SUM]] : f64
// SEQ-NEXT: }
// SEQ-NEXT: memref.store %s, %x[%n] : memref<?xf64>
// SEQ:      %m = scf.for %e_1 = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[MACC:.*]] = %big) -> (i32) {
// SEQ:        %[[MIN:.*]] = arith.minsi %[[MACC]], %v_1 : i32
// SEQ-NEXT:   scf.yield %[[MIN]] : i32

// %own is carried out of the guarded statements before the collective
// NESTED: %[[OWN:[0-9]+]] = scf.if %{{.*}} -> (f64) {
// NESTED:   %own = memref.load %x[%n] : memref<?xf64>
// NESTED:   scf.yield %own : f64
// block phase: every lane's partial from 0.0, a block reduction, the owner adds it
// NESTED:      %{{.*}}, %{{.*}}, %[[BMINE:.*]] = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[OWN]]) : (i1, f64) -> (i32, i1, f64) {
// NESTED:        func.call @irgl_block_elect
// NESTED:      ^bb0(%[[OWNER:.*]]: i32, %{{.*}}: i1, %[[MINE:.*]]: f64):
// NESTED:        %[[ME:.*]] = arith.cmpi eq, %{{.*}}, %[[OWNER]] : i32
// NESTED:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// NESTED-NEXT:   %[[PART:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f64) {
// NESTED:        %[[TOTAL:.*]] = func.call @irgl_block_reduce_add_f64(%[[PART]]) : (f64) -> f64
// NESTED-NEXT:   %[[ADDED:.*]] = arith.addf %[[MINE]], %[[TOTAL]] : f64
// NESTED-NEXT:   %[[KEPT:.*]] = arith.select %[[ME]], %[[ADDED]], %[[MINE]] : f64
// NESTED:        scf.yield %{{.*}}, %[[KEPT]] : i1, f64
// warp phase: continues from the block phase's value
// NESTED:      %[[MASK:.*]] = func.call @irgl_warp_active()
// NESTED:      %{{.*}}, %{{.*}}, %[[WMINE:.*]] = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[BMINE]]) : (i1, f64) -> (i32, i1, f64) {
// NESTED:        func.call @irgl_warp_reduce_add_f64(%[[MASK]], %{{.*}}) : (i32, f64) -> f64
// thread phase: the thread's own edges from the warp phase's value
// NESTED:      %s = scf.if %{{.*}} -> (f64) {
// NESTED-NEXT:   %{{.*}} = scf.for %e = %{{.*}} iter_args(%{{.*}} = %[[WMINE]]) -> (f64) {
// NESTED:      } else {
// NESTED-NEXT:   scf.yield %[[WMINE]] : f64
// NESTED:      memref.store %s, %x[%n] : memref<?xf64>
// NESTED:      func.call @irgl_block_reduce_min_i32
// NESTED:      func.call @irgl_warp_reduce_min_i32
// NESTED:      func.func private @irgl_block_reduce_add_f64(f64) -> f64
// NESTED:      func.func private @irgl_warp_reduce_add_f64(i32, f64) -> f64

// between the passes the collective forwards the loop's result
// LOOPS:      %s = irgl_rt.collective active(%{{.*}}) rank(%{{.*}}) -> f64 {
// LOOPS-NEXT:   %{{s_[0-9]+}} = irgl.forall %e in edges(%g, %n) reduce(add, %{{.*}} : f64) attributes {irgl_rt.nested_edges = #irgl_rt.nested_edges} {
// LOOPS:          irgl.yield %v : f64
// LOOPS-NEXT:   }
// LOOPS-NEXT: }
// LOOPS:      memref.store %s, %x[%n] : memref<?xf64>

// CUDA: __global__ void pull(
// CUDA: double {{.*}} = irgl_block_reduce_add_f64({{.*}});
// CUDA: double {{.*}} = irgl_warp_reduce_add_f64({{.*}}, {{.*}});
// CUDA: int32_t {{.*}} = irgl_block_reduce_min_i32({{.*}});
// CUDA: int32_t {{.*}} = irgl_warp_reduce_min_i32({{.*}}, {{.*}});
