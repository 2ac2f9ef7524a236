// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A launch bound that does not fit in i32.
// CHECK-NOT: Traceback

irgl.kernel @k() launch_bounds(4294967296) {
}

// CHECK:      launch-bounds-overflow.mlir:5:31
// CHECK-NEXT: irgl.kernel @k() launch_bounds(4294967296) {
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: launch_bounds values must fit in i32
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
