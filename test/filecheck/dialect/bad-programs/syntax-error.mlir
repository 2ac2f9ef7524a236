// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A syntax error: the parameter list is never closed.
// CHECK-NOT: Traceback

irgl.kernel @k(%n: index {
}

// CHECK:      syntax-error.mlir:5:26
// CHECK-NEXT: irgl.kernel @k(%n: index {
// CHECK-NEXT: ^
// CHECK-NEXT: ')' expected
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
