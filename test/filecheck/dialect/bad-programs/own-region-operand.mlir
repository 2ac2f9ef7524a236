// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An Iterate whose carried value is defined in its own body.
// CHECK-NOT: Traceback

irgl.kernel @b(%g: !irgl.graph, %LEVEL: i32) {
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index) {
  %c1 = arith.constant 1 : i32
  %r = irgl.iterate @b(%g, %lvl = %n) : (!irgl.graph, i32) initial [%src] {
    %n = arith.addi %lvl, %c1 : i32
    irgl.yield %n : i32
  }
}

// CHECK:      own-region-operand.mlir:12:35
// CHECK-NEXT: %r = irgl.iterate @b(%g, %lvl = %n)
// CHECK-NEXT: ^^
// CHECK-NEXT: 'irgl.iterate' uses %n, which is defined only inside the op's own region; values must be defined before their uses (rule: values are defined before their uses)
// CHECK-NOT: Forward declared
// CHECK-NOT: internal error
