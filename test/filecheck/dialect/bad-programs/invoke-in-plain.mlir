// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An orchestration construct (Invoke) in a plain kernel.
// CHECK-NOT: Traceback

irgl.kernel @helper() {
}
irgl.kernel @k() {
  irgl.invoke @helper() : ()
}

// CHECK:      'irgl.invoke' (Invoke) is an orchestration construct and may only appear in a host kernel, but it is in a plain kernel (rule: orchestration only in host kernels)
// CHECK:      "irgl.invoke"() <{callee = @helper}> : () -> ()
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: | Operation does not verify: 'irgl.invoke'
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
