// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A kernel construct (Atomic) in a host kernel.
// CHECK-NOT: Traceback

irgl.kernel host @main(%locks: memref<?xi32>, %i: index) {
  irgl.atomic %locks[%i] : memref<?xi32> {
  }
}

// CHECK:      {{.*}}atomic-in-host.mlir:6:3: error: 'irgl.atomic' (Atomic) is a kernel construct and may only appear in a plain kernel, but it is in a host kernel (rule: kernel constructs only in plain kernels)
// CHECK-NEXT: irgl.atomic %locks[%i] : memref<?xi32> {
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
