// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An Iterate that could never stop: the kernel has no worklist and no condition is given.
// CHECK-NOT: Traceback

irgl.kernel @relax(%dist: memref<?xi32>) {
}
irgl.kernel host @main(%dist: memref<?xi32>) {
  irgl.iterate @relax(%dist) : (memref<?xi32>) {
  }
}

// CHECK:      {{.*}}iterate-no-termination.mlir:8:3: error: 'irgl.iterate' iterates @relax, which does not use the worklist, without a termination condition: add `while any|all` or `until any|all` (or an extra condition) (rule: Iterate terminates)
// CHECK-NEXT: irgl.iterate @relax(%dist) : (memref<?xi32>) {
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
