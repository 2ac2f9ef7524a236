// RUN: irgl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// The verifier rules of ForAll reductions; each case checks its chunk's
// separator and then its message.

// The body must yield one value of the reduced type.

irgl.kernel @k(%g: !irgl.graph, %x: memref<?xi32>) {
  %z = arith.constant 0.0 : f64
  irgl.forall %n in nodes(%g) {
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %z : f64) {
      %v = memref.load %x[%e] : memref<?xi32>
      irgl.yield %v : i32
    }
  }
}

// CHECK:      'irgl.forall' reduce(add) body must yield one f64 value, got i32

// -----

irgl.kernel @k(%g: !irgl.graph) {
  %z = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %s = irgl.forall %e in edges(%g, %n) reduce(max, %z : index) {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' reduce(max) body must yield one index value, got nothing

// -----

// Only an inner ForAll reduces: the outermost one of a kernel runs on many
// threads.

irgl.kernel @k(%g: !irgl.graph) {
  %z = arith.constant 0 : index
  %s = irgl.forall %n in nodes(%g) reduce(add, %z : index) {
    irgl.yield %n : index
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' with reduce(...) must be an inner ForAll: the outermost ForAll of a kernel cannot reduce

// -----

irgl.kernel @k(%g: !irgl.graph) {
  %z = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %s = "irgl.forall"(%g, %n, %z) <{iterator = #irgl<iterator edges>, reduce = "mul", operandSegmentSizes = array<i32: 2, 1>}> ({
    ^bb0(%e: index):
      irgl.yield %e : index
    }) : (!irgl.graph, index, index) -> index
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' reduce kind must be one of add, min, max, got 'mul'

// -----

irgl.kernel @k(%g: !irgl.graph) {
  %z = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %s = "irgl.forall"(%g, %n, %z) <{iterator = #irgl<iterator edges>, reduce = "add", operandSegmentSizes = array<i32: 2, 1>}> ({
    ^bb0(%e: index):
      irgl.yield %e : index
    }) : (!irgl.graph, index, index) -> i64
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' result type i64 differs from the initial value's type index

// -----

irgl.kernel @k(%g: !irgl.graph, %c: i1) {
  irgl.forall %n in nodes(%g) {
    %s = irgl.forall %e in edges(%g, %n) reduce(max, %c : i1) {
      irgl.yield %c : i1
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' reduces index, integer or float values, got i1

// -----

irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      irgl.yield %e : index
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' without reduce(...) yields no values

// -----

irgl.kernel @k(%g: !irgl.graph) {
  %z = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %s = "irgl.forall"(%g, %n, %z) <{iterator = #irgl<iterator edges>, operandSegmentSizes = array<i32: 2, 1>}> ({
    ^bb0(%e: index):
      irgl.yield
    }) : (!irgl.graph, index, index) -> index
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' has an initial value or a result but no reduce kind
