// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An operation that the irgl dialect does not have.
// CHECK-NOT: Traceback

irgl.kernel @k(%n: index) {
  irgl.parallel_for %i in range(%n, %n) {
  }
}

// CHECK:      unknown-op.mlir:6:21
// CHECK-NEXT: irgl.parallel_for %i in range(%n, %n) {
// CHECK-NEXT: ^^
// CHECK-NEXT: Operation irgl.parallel_for is not registered
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
