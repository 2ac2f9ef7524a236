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

// CHECK:      {{.*}}worklist-outside-pipe.mlir:11:3: error: 'irgl.invoke' invokes @bfs, which uses the worklist, outside any Pipe or Iterate (no worklist is established) (rule: worklist kernels are invoked inside a Pipe or Iterate)
// CHECK-NEXT: irgl.invoke @bfs(%g) : (!irgl.graph)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
