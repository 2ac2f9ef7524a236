// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An invocation of a kernel that does not exist.
// CHECK-NOT: Traceback

irgl.kernel host @main(%g: !irgl.graph) {
  irgl.invoke @init(%g) : (!irgl.graph)
}

// CHECK:      'irgl.invoke' invokes @init, which does not exist (rule: invoked kernels exist and are plain kernels)
// CHECK:      "irgl.invoke"(%g) <{callee = @init}> : (!irgl.graph) -> ()
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: | Operation does not verify: 'irgl.invoke'
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
