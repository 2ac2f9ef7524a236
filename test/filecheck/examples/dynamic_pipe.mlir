// examples/dynamic_pipe.mlir: The specification's dynamic piping listing: scf.if chooses which kernel consumes A's worklist.
// It verifies; printing it, or going through the generic form and back, gives
// the same text; plain xdsl-opt (irgl found through the xdsl.universe entry
// point) reads it too.

// RUN: irgl-opt %repo/examples/dynamic_pipe.mlir > %t.mlir
// RUN: irgl-opt %repo/examples/dynamic_pipe.mlir --print-op-generic | irgl-opt | diff %t.mlir -
// RUN: xdsl-opt %repo/examples/dynamic_pipe.mlir | diff %t.mlir -
// RUN: filecheck %s < %t.mlir

// CHECK: irgl.kernel @find_hubs(
// CHECK: irgl.kernel @label_hubs(
// CHECK: irgl.kernel @label_hub_neighbours(
// CHECK: irgl.kernel host @main(
// CHECK: irgl.pipe once {
// CHECK: irgl.invoke @find_hubs(%g, %threshold) : (!irgl.graph, index)
// CHECK: scf.if %hubs_only {
// CHECK: irgl.invoke @label_hubs(%g, %label) : (!irgl.graph, memref<?xi32>)
// CHECK: } else {
// CHECK: irgl.invoke @label_hub_neighbours(%g, %label) : (!irgl.graph, memref<?xi32>)
