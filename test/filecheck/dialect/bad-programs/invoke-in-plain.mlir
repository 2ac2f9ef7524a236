// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An orchestration construct (Invoke) in a plain kernel.
// CHECK-NOT: Traceback

irgl.kernel @helper() {
}
irgl.kernel @k() {
  irgl.invoke @helper() : ()
}

// CHECK:      {{.*}}invoke-in-plain.mlir:8:3: error: 'irgl.invoke' (Invoke) is an orchestration construct and may only appear in a host kernel, but it is in a plain kernel (rule: orchestration only in host kernels)
// CHECK-NEXT: irgl.invoke @helper() : ()
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
