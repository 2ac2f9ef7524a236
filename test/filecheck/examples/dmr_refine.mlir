// examples/dmr_refine.mlir: DMR's Refine kernel: Exclusive over the cavity array, then SyncRunningThreads.
// It verifies; printing it, or going through the generic form and back, gives
// the same text; plain xdsl-opt (irgl found through the xdsl.universe entry
// point) reads it too.

// RUN: irgl-opt %repo/examples/dmr_refine.mlir > %t.mlir
// RUN: irgl-opt %repo/examples/dmr_refine.mlir --print-op-generic | irgl-opt | diff %t.mlir -
// RUN: xdsl-opt %repo/examples/dmr_refine.mlir | diff %t.mlir -
// RUN: filecheck %s < %t.mlir

// CHECK: irgl.kernel device @is_alive(%is_del: memref<?xi32>, %t: index) -> i1 {
// CHECK: irgl.kernel @refine(
// CHECK: %bad_triangle = irgl.wl.pop %btidx
// CHECK: irgl.exclusive %mesh_claims array(%cavity[%cavity_size]) : memref<?xi32>, memref<64xindex> {
// CHECK: } else {
// CHECK: irgl.retry %bad_triangle
// CHECK: irgl.sync_running_threads
// CHECK: irgl.kernel host @main(
// CHECK: irgl.iterate @refine(
