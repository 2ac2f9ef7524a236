// RUN: irgl-opt %s --split-input-file | irgl-opt --split-input-file | filecheck %s
// RUN: irgl-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %IRGL_ROUNDTRIP | filecheck %s

// Round trip of the irgl_rt dialect (the runtime level that lower-irgl
// produces): its handle types and its ops, custom and generic form.

// Runtime handle types.

func.func private @irgl_types(!irgl_rt.graph, !irgl_rt.worklist, !irgl_rt.pipe, !irgl_rt.cell) -> !irgl_rt.worklist

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func private @irgl_types(!irgl_rt.graph, !irgl_rt.worklist, !irgl_rt.pipe, !irgl_rt.cell) -> !irgl_rt.worklist
// CHECK-NEXT: }

// GENERIC: "func.func"() <{sym_name = "irgl_types", function_type = (!irgl_rt.graph, !irgl_rt.worklist, !irgl_rt.pipe, !irgl_rt.cell) -> !irgl_rt.worklist, sym_visibility = "private"}> ({

// -----

// The occupancy-derived grid size, plain and for a co-resident (cooperative)
// launch.

func.func @grid(%block: index) -> index {
  %g = irgl_rt.grid_size @irgl_kernels::@bfs, %block
  %r = irgl_rt.grid_size @sync_kernel, %block resident
  %s = arith.addi %g, %r : index
  func.return %s : index
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @grid(%block: index) -> index {
// CHECK-NEXT:     %g = irgl_rt.grid_size @irgl_kernels::@bfs, %block
// CHECK-NEXT:     %r = irgl_rt.grid_size @sync_kernel, %block resident
// CHECK-NEXT:     %s = arith.addi %g, %r : index
// CHECK-NEXT:     func.return %s : index
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: ^bb0(%block: index):
// GENERIC: %g = "irgl_rt.grid_size"(%block) <{kernel = @irgl_kernels::@bfs}> : (index) -> index
// GENERIC: %r = "irgl_rt.grid_size"(%block) <{kernel = @sync_kernel, resident}> : (index) -> index

// -----

// The C escape hatch of the lowered IR.

irgl_rt.c_global "#define INF 1073741823"
irgl_rt.c_global device "int nbad = 0;"
func.func @c(%x: i32, %p: memref<?xi32>) -> i32 {
  irgl_rt.c_decl "int" "count"
  irgl_rt.c_decl "float" "acc" = "0.0f"
  irgl_rt.c_block "count = 0;"
  irgl_rt.c_block "count += $0; $1[0] = count;" (%x, %p : i32, memref<?xi32>)
  %inf = irgl_rt.c_expr "INF" : i32
  %m = irgl_rt.c_expr "max($0, $1)" (%x, %inf : i32, i32) : i32
  func.return %m : i32
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl_rt.c_global "#define INF 1073741823"
// CHECK-NEXT:   irgl_rt.c_global device "int nbad = 0;"
// CHECK-NEXT:   func.func @c(%x: i32, %p: memref<?xi32>) -> i32 {
// CHECK-NEXT:     irgl_rt.c_decl "int" "count"
// CHECK-NEXT:     irgl_rt.c_decl "float" "acc" = "0.0f"
// CHECK-NEXT:     irgl_rt.c_block "count = 0;"
// CHECK-NEXT:     irgl_rt.c_block "count += $0; $1[0] = count;"(%x, %p : i32, memref<?xi32>)
// CHECK-NEXT:     %inf = irgl_rt.c_expr "INF" : i32
// CHECK-NEXT:     %m = irgl_rt.c_expr "max($0, $1)"(%x, %inf : i32, i32) : i32
// CHECK-NEXT:     func.return %m : i32
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl_rt.c_global"() <{text = "#define INF 1073741823"}> : () -> ()
// GENERIC: "irgl_rt.c_global"() <{device, text = "int nbad = 0;"}> : () -> ()
// GENERIC: ^bb0(%x: i32, %p: memref<?xi32>):
// GENERIC: "irgl_rt.c_decl"() <{c_type = "int", var_name = "count"}> : () -> ()
// GENERIC: "irgl_rt.c_decl"() <{c_type = "float", var_name = "acc", init = "0.0f"}> : () -> ()
// GENERIC: "irgl_rt.c_block"() <{text = "count = 0;"}> : () -> ()
// GENERIC: "irgl_rt.c_block"(%x, %p) <{text = "count += $0; $1[0] = count;"}> : (i32, memref<?xi32>) -> ()
// GENERIC: %inf = "irgl_rt.c_expr"() <{text = "INF"}> : () -> i32
// GENERIC: %m = "irgl_rt.c_expr"(%x, %inf) <{text = "max($0, $1)"}> : (i32, i32) -> i32

// -----

// A collective: one operation every thread of the grid reaches together; the
// optional `alone` says whether the ForAll has one iteration in all.

func.func @collective(%active: i1, %tid: index, %one: i1, %c: memref<?xi32>, %n: index) {
  irgl_rt.collective active(%active) rank(%tid) {
    irgl.exclusive %c iterator(%c[%n to %n step %n]) : memref<?xi32>, memref<?xi32> {
    }
  }
  irgl_rt.collective active(%active) rank(%tid) alone(%one) {
    irgl.exclusive %c iterator(%c[%n to %n step %n]) : memref<?xi32>, memref<?xi32> {
    }
  }
  func.return
}

// CHECK:      func.func @collective(%active: i1, %tid: index, %one: i1, %c: memref<?xi32>, %n: index) {
// CHECK-NEXT:   irgl_rt.collective active(%active) rank(%tid) {
// CHECK-NEXT:     irgl.exclusive %c iterator(%c[%n to %n step %n]) : memref<?xi32>, memref<?xi32> {
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl_rt.collective active(%active) rank(%tid) alone(%one) {

// GENERIC: "irgl_rt.collective"(%active, %tid) ({
// GENERIC: "irgl_rt.collective"(%active, %tid, %one) ({
