// examples/boruvka.mlir: Borůvka's find-min-edge kernel with an Atomic over component locks, and its host kernel.
// It verifies; printing it, or going through the generic form and back, gives
// the same text; plain xdsl-opt (irgl found through the xdsl.universe entry
// point) reads it too.

// RUN: irgl-opt %repo/examples/boruvka.mlir > %t.mlir
// RUN: irgl-opt %repo/examples/boruvka.mlir --print-op-generic | irgl-opt | diff %t.mlir -
// RUN: xdsl-opt %repo/examples/boruvka.mlir | diff %t.mlir -
// RUN: filecheck %s < %t.mlir

// CHECK: irgl.kernel @init(
// CHECK: irgl.kernel @find_min_edge(
// CHECK: irgl.forall %nidx in worklist {
// CHECK: irgl.for %e in edges(%g, %n) {
// CHECK: %w = irgl.graph.edge_weight %g[%e] : i32
// CHECK: irgl.atomic %component_locks[%n_component] : memref<?xi32> {
// CHECK: memref.store %minwt, %component_minwt[%n_component] : memref<?xi32>
// CHECK: memref.store %minedge, %component_minedge[%n_component] : memref<?xindex>
// CHECK: irgl.wl.push %n
// CHECK: irgl.kernel @mark_min_edges(
// CHECK: irgl.kernel host @main(
// CHECK: irgl.pipe once initial %nodes[%nn] : memref<?xindex> {
// CHECK: irgl.invoke @find_min_edge(
// CHECK: irgl.invoke @mark_min_edges(
