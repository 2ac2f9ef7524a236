// RUN: irgl-opt %s -p convert-irgl-kernels | filecheck %s

// A worklist kernel gets in/out/retry worklist arguments; launch bounds
// decide its block size (a ShrinkableBlock kernel).
irgl.kernel @wl(%g: !irgl.graph) launch_bounds(128) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}

// A kernel with ReduceAndReturn gets a reduction cell argument.
irgl.kernel @red(%g: !irgl.graph, %x: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %t = arith.constant true
    irgl.reduce_and_return %t
  }
}

// A kernel with a grid barrier is marked for a cooperative launch.
irgl.kernel @barrier(%g: !irgl.graph) {
  irgl.sync_running_threads
}

irgl.kernel device @dev(%a: i32) -> i32 {
  irgl.return %a : i32
}

irgl.kernel host @main(%g: !irgl.graph, %x: memref<?xi32>) {
  %r = irgl.invoke any @red(%g, %x) : (!irgl.graph, memref<?xi32>)
}

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK:        func.func @main(%g: !irgl.graph, %x: memref<?xi32>) {
// CHECK-NEXT:     %r = irgl.invoke any @red(%g, %x)
// CHECK-NEXT:     func.return
// CHECK:        "gpu.module"() <{sym_name = "irgl_kernels"}>
// CHECK:          "gpu.func"() <{function_type = (!irgl.graph, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist) -> (), kernel}>
// CHECK:            irgl.forall %i in worklist
// CHECK:            "gpu.return"() : () -> ()
// CHECK:          sym_name = "wl", irgl_rt.launch = #irgl_rt.launch<block = 128, worklist = 1, bounds = [128]>
// CHECK:          "gpu.func"() <{function_type = (!irgl.graph, memref<?xi32>, !irgl_rt.cell) -> (), kernel}>
// CHECK:          sym_name = "red", irgl_rt.launch = #irgl_rt.launch<block = 256, cell = 2>
// CHECK:          sym_name = "barrier", irgl_rt.launch = #irgl_rt.launch<block = 256, grid_sync>
// CHECK:          func.func @dev(%a: i32) -> i32 {
// CHECK-NEXT:       func.return %a : i32
