// RUN: not irgl-opt %s 2>&1 | filecheck %s
// The input ends inside a region.
// CHECK-NOT: Traceback

irgl.kernel host @main(%n: index) {
  irgl.pipe once {

// CHECK:      unterminated.mlir:{{[0-9]+}}:1
// CHECK:      unexpected end of input: an operation, region or block is not finished, a '}' may be missing
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
