// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An invocation with an argument of the wrong type.
// CHECK-NOT: Traceback

irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>) {
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi64>) {
  irgl.invoke @init(%g, %dist) : (!irgl.graph, memref<?xi64>)
}

// CHECK:      {{.*}}argument-type.mlir:8:3: error: 'irgl.invoke' argument 1 of @init has type memref<?xi64>, expected memref<?xi32> (rule: invocation arguments match the kernel)
// CHECK-NEXT: irgl.invoke @init(%g, %dist) : (!irgl.graph, memref<?xi64>)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
