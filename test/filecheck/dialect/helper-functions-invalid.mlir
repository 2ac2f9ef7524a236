// RUN: irgl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Calls from kernels: func.call of func.func helpers, irgl.call of device
// kernels. One case per rule (RULE_CALL, RULE_CALL_ARGUMENTS,
// RULE_HELPER_BODY, RULE_RECURSION of irgl_dialect/placement.py); each checks
// the separator of its chunk and then its message.

// RULE_CALL: irgl.call of a symbol that does not exist.

irgl.kernel @k(%x: i32) {
  %y = irgl.call @missing(%x) : (i32) -> i32
}

// CHECK: 'irgl.call' calls @missing, which does not exist (rule: kernels call device kernels and defined func.func helpers)

// -----

// RULE_CALL: func.call of a symbol that does not exist (xDSL's own check).

irgl.kernel @k(%x: i32) {
  %y = func.call @missing(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: '@missing' could not be found in symbol table

// -----

// RULE_CALL: irgl.call of a func.func helper.

func.func private @helper(%x: i32) -> i32 {
  func.return %x : i32
}
irgl.kernel @k(%x: i32) {
  %y = irgl.call @helper(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' calls @helper, which is not an irgl.kernel (func.func): call func.func helpers with func.call (rule: kernels call device kernels and defined func.func helpers)

// -----

// RULE_CALL: irgl.call of a plain kernel.

irgl.kernel @other(%x: i32) {
}
irgl.kernel @k(%x: i32) {
  irgl.call @other(%x) : (i32) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' calls @other, a plain kernel; only device kernels are called (plain kernels are launched with irgl.invoke or irgl.iterate) (rule: kernels call device kernels and defined func.func helpers)

// -----

// RULE_CALL: irgl.call of a host kernel from device code.

irgl.kernel host @main(%x: i32) {
}
irgl.kernel device @d(%x: i32) {
  irgl.call @main(%x) : (i32) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' calls @main, a host kernel; only device kernels are called (host kernels are entry points that run on the CPU) (rule: kernels call device kernels and defined func.func helpers)

// -----

// RULE_CALL: a device kernel called from a host kernel.

irgl.kernel device @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  irgl.return %y : i32
}
irgl.kernel host @main(%x: i32) {
  %y = irgl.call @twice(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' (call of a device kernel) may only appear in plain or device kernels, but it is in a host kernel: device kernels are __device__ functions, called from GPU code (rule: kernels call device kernels and defined func.func helpers)

// -----

// RULE_CALL: a helper declared without a body.

func.func private @external(i32) -> i32
irgl.kernel @k(%x: i32) {
  %y = func.call @external(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'func.call' calls @external, which is declared without a body: a function called from a kernel is defined in the program (call C functions from irgl.cexpr text) (rule: kernels call device kernels and defined func.func helpers)

// -----

// RULE_CALL_ARGUMENTS: too few arguments.

irgl.kernel device @add(%x: i32, %y: i32) -> i32 {
  %z = arith.addi %x, %y : i32
  irgl.return %z : i32
}
irgl.kernel @k(%x: i32) {
  %y = irgl.call @add(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' passes 1 argument(s) to @add, which takes 2 (rule: call arguments match the callee)

// -----

// RULE_CALL_ARGUMENTS: an argument of the wrong type.

irgl.kernel device @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  irgl.return %y : i32
}
irgl.kernel @k(%x: i64) {
  %y = irgl.call @twice(%x) : (i64) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' argument 0 of @twice has type i64, expected i32 (rule: call arguments match the callee)

// -----

// RULE_CALL_ARGUMENTS: results that the device kernel does not return.

irgl.kernel device @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  irgl.return %y : i32
}
irgl.kernel @k(%x: i32) {
  %y = irgl.call @twice(%x) : (i32) -> f32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' takes (f32) from @twice, which returns (i32) (rule: call arguments match the callee)

// -----

// RULE_CALL_ARGUMENTS: func.call checks types too (xDSL's own check).

func.func private @helper(%x: i32) -> i32 {
  func.return %x : i32
}
irgl.kernel @k(%x: i64) {
  %y = func.call @helper(%x) : (i64) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: operand type mismatch: expected operand type i32, but provided i64 for operand number 0

// -----

// RULE_HELPER_BODY: a kernel construct in a func.func helper called from a
// plain kernel (reported at the construct).

func.func private @push_it(%x: index) {
  irgl.wl.push %x
  func.return
}
irgl.kernel @k(%x: index) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    func.call @push_it(%n) : (index) -> ()
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.wl.push' is in func.func @push_it, a helper called from kernel @k: a func.func helper holds plain code (arith, math, scf, memref, func); graph accesses belong in an irgl.kernel device, kernel constructs in a plain kernel (rule: func.func helpers called from kernels hold no irgl ops)

// -----

// RULE_HELPER_BODY: a graph access in a helper reached through another helper
// from a host kernel.

func.func private @inner(%g: !irgl.graph) -> index {
  %n = irgl.graph.num_nodes %g
  func.return %n : index
}
func.func private @outer(%g: !irgl.graph) -> index {
  %n = func.call @inner(%g) : (!irgl.graph) -> index
  func.return %n : index
}
irgl.kernel host @main(%g: !irgl.graph) {
  %n = func.call @outer(%g) : (!irgl.graph) -> index
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.graph.num_nodes' is in func.func @inner, a helper called from kernel @main: a func.func helper holds plain code (arith, math, scf, memref, func); graph accesses belong in an irgl.kernel device, kernel constructs in a plain kernel (rule: func.func helpers called from kernels hold no irgl ops)

// -----

// RULE_RECURSION: a helper that calls itself, called from a plain kernel.

func.func private @fact(%x: i32) -> i32 {
  %y = func.call @fact(%x) : (i32) -> i32
  func.return %y : i32
}
irgl.kernel @k(%x: i32) {
  %y = func.call @fact(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'func.call' calls @fact recursively (@fact -> @fact): device code has no recursion (rule: device code does not recurse)

// -----

// RULE_RECURSION: two device kernels that call each other.

irgl.kernel device @ping(%x: i32) -> i32 {
  %y = irgl.call @pong(%x) : (i32) -> i32
  irgl.return %y : i32
}
irgl.kernel device @pong(%x: i32) -> i32 {
  %y = irgl.call @ping(%x) : (i32) -> i32
  irgl.return %y : i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.call' calls @ping recursively (@ping -> @pong -> @ping): device code has no recursion (rule: device code does not recurse)

// -----

// A recursive helper is fine in host code (a host kernel may call it).

func.func private @fact(%x: i32) -> i32 {
  %y = func.call @fact(%x) : (i32) -> i32
  func.return %y : i32
}
irgl.kernel host @main(%x: i32) {
  %y = func.call @fact(%x) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: builtin.module {
// CHECK:        irgl.kernel host @main
