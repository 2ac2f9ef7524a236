// RUN: irgl-opt %s --split-input-file -p convert-irgl-kernels | filecheck %s
// RUN: irgl-opt %s --split-input-file -p lower-irgl | filecheck %s --check-prefix=LOWER

// Helper functions: `func.func` helpers called with `func.call` and device
// kernels called with `irgl.call` from kernels. convert-irgl-kernels gives
// device code the helpers it calls (cloned into the gpu.module) and turns
// `irgl.call` into `func.call`; the rest of `lower-irgl` carries them through.

// A private helper called only from a plain kernel moves into the
// gpu.module; one called from host code too is also kept at the top level;
// helpers called by helpers follow.

func.func private @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  func.return %y : i32
}
func.func private @clamp(%x: i32, %hi: i32) -> i32 {
  %y = arith.minsi %x, %hi : i32
  func.return %y : i32
}
func.func private @twice_clamped(%x: i32) -> i32 {
  %y = func.call @twice(%x) : (i32) -> i32
  %c = arith.constant 1000 : i32
  %z = func.call @clamp(%y, %c) : (i32, i32) -> i32
  func.return %z : i32
}
func.func private @unused(%x: i32) -> i32 {
  func.return %x : i32
}
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %v = memref.load %a[%n] : memref<?xi32>
    %w = func.call @twice_clamped(%v) : (i32) -> i32
    memref.store %w, %a[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %x: i32) -> i32 {
  irgl.invoke @k(%g, %a) : (!irgl.graph, memref<?xi32>)
  %c7 = arith.constant 7 : i32
  %y = func.call @clamp(%x, %c7) : (i32, i32) -> i32
  irgl.return %y : i32
}

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK-NEXT:   func.func private @clamp(%x: i32, %hi: i32) -> i32 {
// CHECK-NEXT:     %y = arith.minsi %x, %hi : i32
// CHECK-NEXT:     func.return %y : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @unused(%x: i32) -> i32 {
// CHECK-NEXT:     func.return %x : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @main(%g: !irgl.graph, %a: memref<?xi32>, %x: i32) -> i32 {
// CHECK:          %y = func.call @clamp(%x, %c7) : (i32, i32) -> i32
// CHECK:        "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// CHECK-NEXT:     func.func private @twice(%x: i32) -> i32 {
// CHECK-NEXT:       %y = arith.addi %x, %x : i32
// CHECK-NEXT:       func.return %y : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.func private @clamp(%x: i32, %hi: i32) -> i32 {
// CHECK-NEXT:       %y = arith.minsi %x, %hi : i32
// CHECK-NEXT:       func.return %y : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.func private @twice_clamped(%x: i32) -> i32 {
// CHECK-NEXT:       %y = func.call @twice(%x) : (i32) -> i32
// CHECK-NEXT:       %c = arith.constant 1000 : i32
// CHECK-NEXT:       %z = func.call @clamp(%y, %c) : (i32, i32) -> i32
// CHECK-NEXT:       func.return %z : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     "gpu.func"()
// CHECK:            %w = func.call @twice_clamped(%v) : (i32) -> i32
// CHECK:          }) {sym_name = "k", irgl_rt.launch = #irgl_rt.launch<block = 256>}
// CHECK-NOT:      func.func private @unused

// After the whole pipeline the helpers are still device functions of the
// gpu.module (and the host copy of @clamp is still called by @main).

// LOWER:      func.func private @clamp(%x: i32, %hi: i32) -> i32 {
// LOWER:      func.func @main(
// LOWER:        func.call @clamp(%x, %{{.*}}) : (i32, i32) -> i32
// LOWER:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// LOWER-NEXT:   func.func private @twice(%x: i32) -> i32 {
// LOWER:        func.func private @clamp(%x: i32, %hi: i32) -> i32 {
// LOWER:        func.func private @twice_clamped(%x: i32) -> i32 {
// LOWER:        "gpu.func"()
// LOWER:          %w = func.call @twice_clamped(%v) : (i32) -> i32

// -----

// A public helper is a host entry point: it stays at the top level and is
// cloned for device code.

func.func @scale(%x: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %y = arith.muli %x, %c3 : i32
  func.return %y : i32
}
irgl.kernel @k(%a: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    %v = memref.load %a[%i] : memref<?xi32>
    %w = func.call @scale(%v) : (i32) -> i32
    memref.store %w, %a[%i] : memref<?xi32>
  }
}

// CHECK:      // {{-+}}
// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK-NEXT:   func.func @scale(%x: i32) -> i32 {
// CHECK:        "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// CHECK-NEXT:     func.func @scale(%x: i32) -> i32 {
// CHECK:            func.call @scale(%v) : (i32) -> i32

// LOWER:      // {{-+}}
// LOWER:      func.func @scale(%x: i32) -> i32 {
// LOWER:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// LOWER-NEXT:   func.func @scale(%x: i32) -> i32 {

// -----

// A device kernel called with irgl.call from a plain kernel and from another
// device kernel: the calls become func.call of the device functions, graph
// arguments included.

irgl.kernel device @deg(%g: !irgl.graph, %n: index) -> i32 {
  %d = irgl.graph.degree %g[%n]
  %i = arith.index_cast %d : index to i32
  irgl.return %i : i32
}
irgl.kernel device @deg2(%g: !irgl.graph, %n: index) -> i32 {
  %d = irgl.call @deg(%g, %n) : (!irgl.graph, index) -> i32
  %e = arith.addi %d, %d : i32
  irgl.return %e : i32
}
irgl.kernel @k(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %d = irgl.call @deg2(%g, %n) : (!irgl.graph, index) -> i32
    memref.store %d, %a[%n] : memref<?xi32>
  }
}

// CHECK:      // {{-+}}
// CHECK:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// CHECK-NEXT:   func.func @deg(%g: !irgl.graph, %n: index) -> i32 {
// CHECK-NEXT:     %d = irgl.graph.degree %g[%n]
// CHECK:        func.func @deg2(%g: !irgl.graph, %n: index) -> i32 {
// CHECK-NEXT:     %d = func.call @deg(%g, %n) : (!irgl.graph, index) -> i32
// CHECK:          %d = func.call @deg2(%g, %n) : (!irgl.graph, index) -> i32
// CHECK-NOT:  irgl.call

// LOWER:      // {{-+}}
// LOWER:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// LOWER-NEXT:   func.func @deg(%g: !irgl_rt.graph, %n: index) -> i32 {
// LOWER-NEXT:     %{{.*}} = func.call @irgl_graph_degree(%g, %n) : (!irgl_rt.graph, index) -> index
// LOWER:        func.func @deg2(%g: !irgl_rt.graph, %n: index) -> i32 {
// LOWER-NEXT:     %d = func.call @deg(%g, %n) : (!irgl_rt.graph, index) -> i32
// LOWER:          %d = func.call @deg2(%g, %n) : (!irgl_rt.graph, index) -> i32

// -----

// A helper called from a worklist kernel that an outlined Iterate runs: the
// control kernel calls the kernel's body as a device function, which calls
// the helper like the kernel does.

func.func private @step(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %y = arith.addi %x, %c1 : i32
  func.return %y : i32
}
irgl.kernel @relax(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %v = memref.load %a[%n] : memref<?xi32>
    %w = func.call @step(%v) : (i32) -> i32
    memref.store %w, %a[%n] : memref<?xi32>
    %c9 = arith.constant 9 : i32
    %more = arith.cmpi slt, %w, %c9 : i32
    scf.if %more {
      irgl.wl.push %n
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %src: index) {
  irgl.iterate @relax(%g, %a) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK:      // {{-+}}
// CHECK:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// CHECK-NEXT:   func.func private @step(%x: i32) -> i32 {

// LOWER:      // {{-+}}
// LOWER:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// LOWER-NEXT:   func.func private @step(%x: i32) -> i32 {
// LOWER-NOT:    sym_name = "relax"
// LOWER:        func.func private @relax_device(
// LOWER:          func.call @step(%v) : (i32) -> i32
// LOWER:        "gpu.func"()
// LOWER:          func.call @relax_device(
// LOWER:        }) {sym_name = "main_control"
