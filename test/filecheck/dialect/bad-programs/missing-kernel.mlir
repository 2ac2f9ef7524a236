// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An invocation of a kernel that does not exist.
// CHECK-NOT: Traceback

irgl.kernel host @main(%g: !irgl.graph) {
  irgl.invoke @init(%g) : (!irgl.graph)
}

// CHECK:      {{.*}}missing-kernel.mlir:6:3: error: 'irgl.invoke' invokes @init, which does not exist (rule: invoked kernels exist and are plain kernels)
// CHECK-NEXT: irgl.invoke @init(%g) : (!irgl.graph)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
