// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An iterator that ForAll does not know.
// CHECK-NOT: Traceback

irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %n in vertices(%g) {
  }
}

// CHECK:      wrong-iterator.mlir:6:21
// CHECK-NEXT: irgl.forall %n in vertices(%g) {
// CHECK-NEXT: ^^^^^^^^
// CHECK-NEXT: Expected one of 'edges', 'nodes', 'range', 'worklist'
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
