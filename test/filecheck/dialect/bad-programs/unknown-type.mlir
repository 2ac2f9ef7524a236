// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A misspelt type.
// CHECK-NOT: Traceback

irgl.kernel @k(%g: !irgl.grahp) {
}

// CHECK:      unknown-type.mlir:5:31
// CHECK-NEXT: irgl.kernel @k(%g: !irgl.grahp) {
// CHECK-NEXT: ^
// CHECK-NEXT: 'irgl.grahp' is not registered
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
