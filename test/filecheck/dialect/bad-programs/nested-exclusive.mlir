// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An Exclusive nested in another Exclusive.
// CHECK-NOT: Traceback

irgl.kernel @refine(%claims: memref<?xi32>, %cavity: memref<8xindex>, %n: index) {
  irgl.forall %slot in worklist {
    irgl.exclusive %claims array(%cavity[%n]) : memref<?xi32>, memref<8xindex> {
      irgl.exclusive %claims array(%cavity[%n]) : memref<?xi32>, memref<8xindex> {
      }
    }
  }
}

// CHECK:      {{.*}}nested-exclusive.mlir:8:7: error: 'irgl.exclusive' must be placed directly in the body of the outermost ForAll (it synchronizes all running threads, so it cannot be nested) (rule: Exclusive directly under the outermost ForAll, never nested)
// CHECK-NEXT: irgl.exclusive %claims array(%cavity[%n]) : memref<?xi32>, memref<8xindex> {
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
