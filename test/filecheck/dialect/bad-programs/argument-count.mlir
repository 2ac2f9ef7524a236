// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An invocation with too few arguments.
// CHECK-NOT: Traceback

irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>) {
}
irgl.kernel host @main(%g: !irgl.graph) {
  irgl.invoke @init(%g) : (!irgl.graph)
}

// CHECK:      {{.*}}argument-count.mlir:8:3: error: 'irgl.invoke' passes 1 argument(s) to @init, which takes 2 (rule: invocation arguments match the kernel)
// CHECK-NEXT: irgl.invoke @init(%g) : (!irgl.graph)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
