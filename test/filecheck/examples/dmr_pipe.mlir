// examples/dmr_pipe.mlir: The specification's DMR Pipe listing: a looping Pipe nested in a Pipe Once.
// It verifies; printing it, or going through the generic form and back, gives
// the same text; plain xdsl-opt (irgl found through the xdsl.universe entry
// point) reads it too.

// RUN: irgl-opt %repo/examples/dmr_pipe.mlir > %t.mlir
// RUN: irgl-opt %repo/examples/dmr_pipe.mlir --print-op-generic | irgl-opt | diff %t.mlir -
// RUN: xdsl-opt %repo/examples/dmr_pipe.mlir | diff %t.mlir -
// RUN: filecheck %s < %t.mlir

// CHECK: irgl.kernel @identify_bad_triangles(
// CHECK: irgl.kernel @refine(
// CHECK: irgl.kernel @incremental_id_bad_triangles(
// CHECK: irgl.kernel host @main(
// CHECK: irgl.pipe once capacity %capacity {
// CHECK: irgl.invoke @identify_bad_triangles(
// CHECK: irgl.cblock "{ int32_t n = 0; irgl_copy_to_host(&n, $0, sizeof n); printf(\22initial bad: %d\\n\22, n); }"
// CHECK: irgl.pipe {
// CHECK: irgl.invoke @refine(
// CHECK: irgl.invoke @incremental_id_bad_triangles(
// CHECK: irgl.invoke @identify_bad_triangles(
// CHECK: printf(\22final bad: %d\\n\22, n);
