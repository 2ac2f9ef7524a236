// RUN: not irgl-opt %s 2>&1 | filecheck %s
// An invocation that states a type other than the value's.
// CHECK-NOT: Traceback

irgl.kernel @init(%x: i32) {
}
irgl.kernel host @main(%x: i64) {
  irgl.invoke @init(%x) : (i32)
}

// CHECK:      operand-type-mismatch.mlir:8:21
// CHECK-NEXT: irgl.invoke @init(%x) : (i32)
// CHECK-NEXT: ^^
// CHECK-NEXT: operand is used with type i32, but has been previously used or defined with type i64
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
