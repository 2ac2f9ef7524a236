// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{unroll=4 interleave=2 interleave_reduce=1}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{unroll=4 interleave=2 interleave_reduce=1 unroll_interleaved=false}' | filecheck %s --check-prefix=WHOLE

// convert-irgl-nested-edges{unroll_interleaved=false}: `unroll` only on the
// block and warp phases' edge loops that are not interleaved (here the
// reducing one, interleave_reduce=1); by default the interleaved loops are
// unrolled too.

// The interleaved loop: unrolled by default, not with unroll_interleaved=false.
// CHECK-LABEL: "gpu.func"() <{function_type = (!irgl.graph, memref<?xi32>) -> (), kernel}>
// CHECK:         scf.for
// CHECK:         } {irgl_rt.unroll = 4 : i64}
// CHECK:         } {irgl_rt.unroll = 4 : i64}
// CHECK-LABEL: "gpu.func"() <{function_type = (!irgl.graph, memref<?xf64>, memref<?xf64>) -> (), kernel}>
// WHOLE-LABEL: "gpu.func"() <{function_type = (!irgl.graph, memref<?xi32>) -> (), kernel}>
// WHOLE-NOT:     irgl_rt.unroll
// WHOLE-LABEL: "gpu.func"() <{function_type = (!irgl.graph, memref<?xf64>, memref<?xf64>) -> (), kernel}>
irgl.kernel @plain(%g: !irgl.graph, %level: memref<?xi32>) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        memref.store %inf, %level[%dst] : memref<?xi32>
      }
    }
  }
}

// The reducing loop is not interleaved: its block and warp phases keep the
// unroll either way.
// CHECK:         scf.for {{.*}} iter_args
// CHECK:         } {irgl_rt.unroll = 4 : i64}
// CHECK:         scf.for {{.*}} iter_args
// CHECK:         } {irgl_rt.unroll = 4 : i64}
// WHOLE:         scf.for {{.*}} iter_args
// WHOLE:         } {irgl_rt.unroll = 4 : i64}
// WHOLE:         scf.for {{.*}} iter_args
// WHOLE:         } {irgl_rt.unroll = 4 : i64}
irgl.kernel @sum(%g: !irgl.graph, %x: memref<?xf64>, %out: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  irgl.forall %n in nodes(%g) {
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %zero : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xf64>
      irgl.yield %v : f64
    }
    memref.store %s, %out[%n] : memref<?xf64>
  }
}
