// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A pop of the index of a ForAll over nodes.
// CHECK-NOT: Traceback

irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    %item = irgl.wl.pop %n
  }
}

// CHECK:      {{.*}}pop-non-worklist.mlir:7:5: error: 'irgl.wl.pop' pops only the index of an enclosing `irgl.forall ... in worklist` (rule: pop only the index of a worklist ForAll)
// CHECK-NEXT: %item = irgl.wl.pop %n
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
