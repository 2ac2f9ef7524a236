// RUN: irgl-opt %s --split-input-file -p convert-irgl-kernels,convert-irgl-orchestration | filecheck %s

// Invoke with Any: a reduction cell created at entry, reset before the
// launch, read after it, destroyed at exit.
irgl.kernel @red(%x: memref<?xi32>) {
  %t = arith.constant true
  irgl.reduce_and_return %t
}
irgl.kernel host @main(%x: memref<?xi32>) {
  %r = irgl.invoke any @red(%x) : (memref<?xi32>)
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[ANY:.*]] = arith.constant true
// CHECK-NEXT:    %[[CELL:.*]] = func.call @irgl_cell_create(%[[ANY]])
// CHECK-NEXT:    func.call @irgl_cell_reset(%[[CELL]])
// CHECK-NEXT:    %[[B:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %[[G:.*]] = irgl_rt.grid_size @irgl_kernels::@red, %[[B]]
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    "gpu.launch_func"(%[[G]], %[[ONE]], %[[ONE]], %[[B]], %[[ONE]], %[[ONE]], %x, %[[CELL]])
// CHECK-NEXT:    %r = func.call @irgl_cell_read(%[[CELL]])
// CHECK-NEXT:    func.call @irgl_cell_destroy(%[[CELL]])
// CHECK-NEXT:    func.return

// -----

// Iterate of a worklist kernel, standalone: it creates the pipe context,
// fills it, loops while `in` is not empty (advancing after each launch) and
// runs the body after each invocation with the carried argument.
irgl.kernel @step(%g: !irgl.graph, %lvl: i32) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index) {
  %c1 = arith.constant 1 : i32
  %last = irgl.iterate @step(%g, %l = %c1) : (!irgl.graph, i32) initial [%src] {
    %next = arith.addi %l, %c1 : i32
    irgl.yield %next : i32
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[GH:.*]] = builtin.unrealized_conversion_cast %g : !irgl.graph to !irgl_rt.graph
// CHECK-NEXT:    %[[CAP:.*]] = func.call @irgl_graph_capacity(%[[GH]])
// CHECK-NEXT:    %[[P:.*]] = func.call @irgl_pipe_create(%[[CAP]])
// CHECK-NEXT:    func.call @irgl_pipe_push_initial(%[[P]], %src)
// CHECK-NEXT:    %[[S0:.*]] = func.call @irgl_pipe_in_size(%[[P]])
// CHECK:         %[[GO:.*]] = arith.cmpi sgt, %[[S0]]
// CHECK-NEXT:    %last = scf.while (%[[A:.*]] = %[[GO]], %[[B:.*]] = %c1) : (i1, i32) -> i32 {
// CHECK-NEXT:      scf.condition(%[[A]]) %[[B]] : i32
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%l: i32):
// CHECK:           %[[IN:.*]] = func.call @irgl_pipe_in(%[[P]])
// CHECK-NEXT:      %[[OUT:.*]] = func.call @irgl_pipe_out(%[[P]])
// CHECK-NEXT:      %[[RETRY:.*]] = func.call @irgl_pipe_retry(%[[P]])
// CHECK-NEXT:      "gpu.launch_func"({{.*}}, %g, %l, %[[IN]], %[[OUT]], %[[RETRY]])
// CHECK-NEXT:      func.call @irgl_pipe_advance(%[[P]])
// CHECK-NEXT:      %next = arith.addi %l, %c1 : i32
// CHECK-NEXT:      %[[S:.*]] = func.call @irgl_pipe_in_size(%[[P]])
// CHECK:           %[[MORE:.*]] = arith.cmpi sgt, %[[S]]
// CHECK-NEXT:      scf.yield %[[MORE]], %next : i1, i32
// CHECK:         func.call @irgl_pipe_destroy(%[[P]])

// -----

// Iterate While Any / Until All of a kernel without worklists loops on the
// aggregated return value; the extra condition is combined with Or.
irgl.kernel @changed(%x: memref<?xi32>) {
  %t = arith.constant true
  irgl.reduce_and_return %t
}
irgl.kernel host @main(%x: memref<?xi32>, %stop: i1) {
  irgl.iterate while any @changed(%x) : (memref<?xi32>) {
  }
  irgl.iterate until all @changed(%x) : (memref<?xi32>) extra or {
    irgl.yield extra %stop : i1
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         scf.while
// CHECK:           "gpu.launch_func"
// CHECK-NEXT:      %[[R:.*]] = func.call @irgl_cell_read
// CHECK-NEXT:      scf.yield %[[R]] : i1
// CHECK:         scf.while
// CHECK:           "gpu.launch_func"
// CHECK-NEXT:      %[[R2:.*]] = func.call @irgl_cell_read
// CHECK-NEXT:      %[[T:.*]] = arith.constant true
// CHECK-NEXT:      %[[NOT:.*]] = arith.xori %[[R2]], %[[T]] : i1
// CHECK-NEXT:      %[[C:.*]] = arith.ori %[[NOT]], %stop : i1
// CHECK-NEXT:      scf.yield %[[C]] : i1

// -----

// Pipe Once with a nested looping Pipe and dynamic piping: one pipe context,
// created by the outermost Pipe; the nested Pipe loops while `in` is not
// empty; scf.if picks the consumer of the worklist at run time.
irgl.kernel @a(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.wl.push %n
  }
}
irgl.kernel @b(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%g: !irgl.graph, %cond: i1, %arr: memref<?xi32>, %n: index, %cap: index) {
  irgl.pipe once initial %arr[%n] : memref<?xi32> capacity %cap {
    irgl.invoke @a(%g) : (!irgl.graph)
    scf.if %cond {
      irgl.invoke @b(%g) : (!irgl.graph)
    } else {
      irgl.pipe {
        irgl.invoke @b(%g) : (!irgl.graph)
      }
    }
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[P:.*]] = func.call @irgl_pipe_create(%cap)
// CHECK-NEXT:    func.call @irgl_pipe_init_from_array_i32(%[[P]], %arr, %n)
// CHECK:         "gpu.launch_func"
// CHECK-NEXT:    func.call @irgl_pipe_advance(%[[P]])
// CHECK-NEXT:    scf.if %cond {
// CHECK:           "gpu.launch_func"
// CHECK-NEXT:      func.call @irgl_pipe_advance(%[[P]])
// CHECK:         } else {
// CHECK:           scf.while
// CHECK:             "gpu.launch_func"
// CHECK-NEXT:        func.call @irgl_pipe_advance(%[[P]])
// CHECK-NEXT:        %[[S:.*]] = func.call @irgl_pipe_in_size(%[[P]])
// CHECK-NOT:     irgl_pipe_create
// CHECK:         func.call @irgl_pipe_destroy(%[[P]])

// -----

// A kernel that retries is re-launched with in and retry swapped while the
// retry worklist is not empty, then in and out are swapped.
irgl.kernel @r(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.retry %n
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index) {
  irgl.pipe initial [%src] {
    irgl.invoke @r(%g) : (!irgl.graph)
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         "gpu.launch_func"
// CHECK-NEXT:    scf.while () : () -> () {
// CHECK-NEXT:      %[[RS:.*]] = func.call @irgl_pipe_retry_size
// CHECK:           scf.condition
// CHECK-NEXT:    } do {
// CHECK-NEXT:      func.call @irgl_pipe_advance_retry
// CHECK:           "gpu.launch_func"
// CHECK:         func.call @irgl_pipe_advance
