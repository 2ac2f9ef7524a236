// examples/bfs.mlir: Level-by-level BFS with Iterate (the specification's BFS listing).
// It verifies; printing it, or going through the generic form and back, gives
// the same text; plain xdsl-opt (irgl found through the xdsl.universe entry
// point) reads it too.

// RUN: irgl-opt %repo/examples/bfs.mlir > %t.mlir
// RUN: irgl-opt %repo/examples/bfs.mlir --print-op-generic | irgl-opt | diff %t.mlir -
// RUN: xdsl-opt %repo/examples/bfs.mlir | diff %t.mlir -
// RUN: filecheck %s < %t.mlir

// CHECK: irgl.kernel @init(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
// CHECK: irgl.forall %n in nodes(%g) {
// CHECK: irgl.kernel @bfs(%g: !irgl.graph, %level: memref<?xi32>, %LEVEL: i32) {
// CHECK: irgl.forall %wlidx in worklist {
// CHECK: %n = irgl.wl.pop %wlidx
// CHECK: irgl.forall %e in edges(%g, %n) {
// CHECK: irgl.wl.push %dst
// CHECK: irgl.kernel host @main(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
// CHECK: irgl.invoke @init(%g, %level, %src) : (!irgl.graph, memref<?xi32>, index)
// CHECK: %last = irgl.iterate @bfs(%g, %level, %lvl = %c1) : (!irgl.graph, memref<?xi32>, i32) initial [%src] {
// CHECK: irgl.yield %next : i32
