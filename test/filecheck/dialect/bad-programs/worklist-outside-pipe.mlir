// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A kernel that pops the worklist, invoked where no worklist exists.
// CHECK-NOT: Traceback

irgl.kernel @bfs(%g: !irgl.graph) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
  }
}
irgl.kernel host @main(%g: !irgl.graph) {
  irgl.invoke @bfs(%g) : (!irgl.graph)
}

// CHECK:      'irgl.invoke' invokes @bfs, which uses the worklist, outside any Pipe or Iterate (no worklist is established) (rule: worklist kernels are invoked inside a Pipe or Iterate)
// CHECK:      "irgl.invoke"(%g) <{callee = @bfs}> : (!irgl.graph) -> ()
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: | Operation does not verify: 'irgl.invoke'
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
