// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-c | filecheck %s

// The C escape hatch moves to irgl_rt; globals go to file scope.
irgl.names ["INF"]
irgl.cblock "#define INF 1073741823"
irgl.cdecl_global "int" "nbad" = "0"
irgl.kernel host @main(%x: i32) {
  irgl.cdecl "int" "count" = "0"
  %inf = irgl.cexpr "INF" : i32
  %m = irgl.cexpr "max($0, $1)" (%x, %inf : i32, i32) : i32
  irgl.cblock "printf(\"%d\\n\", $0);" (%m : i32) reads(%x : i32)
  irgl.nop
}

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK-NEXT:   irgl_rt.c_global "#define INF 1073741823"
// CHECK-NEXT:   irgl_rt.c_global device "int nbad = 0;"
// CHECK-NEXT:   func.func @main(%x: i32) {
// CHECK-NEXT:     irgl_rt.c_decl "int" "count" = "0"
// CHECK-NEXT:     %inf = irgl_rt.c_expr "INF" : i32
// CHECK-NEXT:     %m = irgl_rt.c_expr "max($0, $1)"(%x, %inf : i32, i32) : i32
// CHECK-NEXT:     irgl_rt.c_block "printf(\22%d\\n\22, $0);"(%m : i32)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
