// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A push of a value that is never defined.
// CHECK-NOT: Traceback

irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.wl.push %m
  }
}

// CHECK:      undefined-value.mlir:{{[0-9]+}}:1
// CHECK:      values used but not defined: [%m]
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
