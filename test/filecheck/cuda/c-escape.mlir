// RUN: irgl-opt %s -t 'cuda{inline-runtime=false}' | filecheck %s

// The C escape hatch: irgl_rt.c_global / c_decl / c_block / c_expr. Names used
// by the C text are never given to SSA values.

// C text of device code (marked `device` or inside a gpu.module) is left
// out of the host compiler's pass (IRGL_HOST_ONLY).
// CHECK:       // irgl_rt.c_global
// CHECK-NEXT:  #define INF 1073741823
// CHECK-NEXT:  struct Pair {
// CHECK-NEXT:    int a;
// CHECK-NEXT:    int b;
// CHECK-NEXT:  };
// CHECK-EMPTY:
// CHECK-NEXT:  #ifdef IRGL_HOST_ONLY
// CHECK-NEXT:  IRGL_PROGRAM_DEVICE_CODE()
// CHECK-NEXT:  IRGL_KERNEL_REF(escape, int32_t*, irgl_index)
// CHECK-NEXT:  #else
// CHECK-EMPTY:
// CHECK-NEXT:  // irgl_rt.c_global (device code)
// CHECK-NEXT:  __device__ int hits = 0;
// CHECK-EMPTY:
// CHECK-NEXT:  // Forward declarations

builtin.module attributes {gpu.container_module} {
  irgl_rt.c_global "#define INF 1073741823"
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    irgl_rt.c_global device "int hits = 0;"

    // CHECK-LABEL: __global__ void escape(int32_t* dist, irgl_index n) {
    // CHECK-NEXT:    int best = INF;
    // CHECK-NEXT:    Pair pair;
    // CHECK-NEXT:    irgl_index best_1 = irgl_global_thread_id();
    // CHECK-NEXT:    int32_t INF_1 = dist[best_1];
    // CHECK-NEXT:    if (INF_1 < best) {
    // CHECK-NEXT:      best = INF_1;
    // CHECK-NEXT:      atomicAdd(&hits, 1);
    // CHECK-NEXT:    }
    // CHECK-NEXT:    pair.a = best;
    // CHECK-NEXT:    int32_t got = pair.a + (int32_t)n;
    // CHECK-NEXT:    int32_t* tail = dist + n;
    // CHECK-NEXT:    tail[0] = got;
    // CHECK-NEXT:    __threadfence();
    // CHECK-NEXT:  }
    "gpu.func"() <{function_type = (memref<?xi32>, index) -> (), kernel}> ({
    ^bb0(%dist: memref<?xi32>, %n: index):
      irgl_rt.c_decl "int" "best" = "INF"
      irgl_rt.c_decl "Pair" "pair"
      %best = func.call @irgl_global_thread_id() : () -> index
      %INF = memref.load %dist[%best] : memref<?xi32>
      irgl_rt.c_block "if ($0 < best) {\n  best = $0;\n  atomicAdd(&hits, 1);\n}" (%INF : i32)
      irgl_rt.c_block "pair.a = best;"
      %got = irgl_rt.c_expr "pair.a + (int32_t)$0" (%n : index) : i32
      %tail = irgl_rt.c_expr "$0 + $1" (%dist, %n : memref<?xi32>, index) : memref<?xi32>
      %c0 = arith.constant 0 : index
      memref.store %got, %tail[%c0] : memref<?xi32>
      %unused = irgl_rt.c_expr "__threadfence()" : i32
      "gpu.return"() : () -> ()
    }) {sym_name = "escape"} : () -> ()

    // Placeholders are replaced by whole numbers: $1 and $10 differ; constants
    // are typed.
    // CHECK-LABEL: __device__ int64_t many(int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4, int64_t a5, int64_t a6, int64_t a7, int64_t a8, int64_t a9) {
    // CHECK-NEXT:    int64_t s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + (int64_t)10 + (irgl_index)(-3);
    // CHECK-NEXT:    return s;
    // CHECK-NEXT:  }
    func.func @many(%a0: i64, %a1: i64, %a2: i64, %a3: i64, %a4: i64, %a5: i64, %a6: i64, %a7: i64, %a8: i64, %a9: i64) -> i64 {
      %ten = arith.constant 10 : i64
      %m3 = arith.constant -3 : index
      %s = irgl_rt.c_expr "$0 + $1 + $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 + $10 + $11" (%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %ten, %m3 : i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, index) : i64
      func.return %s : i64
    }

    func.func private @irgl_global_thread_id() -> index
  }) : () -> ()
  irgl_rt.c_global "struct Pair {\n  int a;\n  int b;\n};"
}
