// RUN: irgl-opt %s | irgl-opt | filecheck %s
// RUN: irgl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: irgl-opt %s --print-op-generic | irgl-opt | filecheck %s

// Reductions of an inner ForAll: add, min and max over index, integers and
// floats, in plain and host kernels, starting from a per-iteration value.

irgl.kernel @sums(%g: !irgl.graph, %x: memref<?xf64>, %y: memref<?xi32>, %z: memref<?xindex>) {
  %zero = arith.constant 0.0 : f64
  %big = arith.constant 2147483647 : i32
  irgl.forall %n in nodes(%g) {
    %own = memref.load %x[%n] : memref<?xf64>
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %own : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xf64>
      irgl.yield %v : f64
    }
    memref.store %s, %x[%n] : memref<?xf64>
    %m = irgl.forall %e in edges(%g, %n) reduce(min, %big : i32) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %y[%u] : memref<?xi32>
      irgl.yield %v : i32
    }
    memref.store %m, %y[%n] : memref<?xi32>
    %hi = irgl.forall %e in edges(%g, %n) reduce(max, %n : index) {
      %u = irgl.graph.edge_dst %g[%e]
      irgl.yield %u : index
    }
    memref.store %hi, %z[%n] : memref<?xindex>
  }
}
irgl.kernel host @host_sum(%lo: index, %hi: index, %out: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%lo, %hi) {
    %t = irgl.forall %j in range(%lo, %i) reduce(add, %c0 : index) {
      irgl.yield %j : index
    }
    memref.store %t, %out[%i] : memref<?xindex>
  }
}

// CHECK-LABEL: irgl.kernel @sums
// CHECK:         irgl.forall %n in nodes(%g) {
// CHECK:           %s = irgl.forall %e in edges(%g, %n) reduce(add, %own : f64) {
// CHECK:             irgl.yield %v : f64
// CHECK-NEXT:      }
// CHECK:           %m = irgl.forall %e_1 in edges(%g, %n) reduce(min, %big : i32) {
// CHECK:             irgl.yield %v_1 : i32
// CHECK:           %hi = irgl.forall %e_2 in edges(%g, %n) reduce(max, %n : index) {
// CHECK:             irgl.yield %u_2 : index
// CHECK-LABEL: irgl.kernel host @host_sum
// CHECK:           %t = irgl.forall %j in range(%lo, %i) reduce(add, %c0 : index) {
// CHECK-NEXT:        irgl.yield %j : index

// GENERIC: %s = "irgl.forall"(%g, %n, %own) <{iterator = #irgl<iterator edges>, reduce = "add", operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC: "irgl.yield"(%v) <{operandSegmentSizes = array<i32: 1, 0>}> : (f64) -> ()
// GENERIC: }) : (!irgl.graph, index, f64) -> f64
// GENERIC: %m = "irgl.forall"(%g, %n, %big) <{iterator = #irgl<iterator edges>, reduce = "min", operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC: }) : (!irgl.graph, index, i32) -> i32
// GENERIC: %hi = "irgl.forall"(%g, %n, %n) <{iterator = #irgl<iterator edges>, reduce = "max", operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC: %t = "irgl.forall"(%lo, %i, %c0) <{iterator = #irgl<iterator range>, reduce = "add", operandSegmentSizes = array<i32: 2, 1>}> ({
