// RUN: irgl-opt %s --split-input-file --verify-diagnostics -p convert-irgl-kernels,convert-irgl-sync | filecheck %s
// RUN: irgl-opt %s --split-input-file --verify-diagnostics --lower-irgl -t cuda | filecheck %s --check-prefix=CUDA

// Lock-word widths of blocking Atomics: each element type has its own
// runtime function (irgl_lock_try_i32 / _i64, ...), so one module may use both.

// One module with blocking Atomics on i32 and on i64 lock words (and a
// static-shaped lock array): each element type has its own runtime function.
irgl.kernel @two_widths(%a: memref<?xi32>, %b: memref<?xi64>, %c: memref<8xi32>, %i: index) {
  irgl.atomic %a[%i] : memref<?xi32> {
  }
  irgl.atomic %b[%i] : memref<?xi64> {
  }
  irgl.atomic %c[%i] : memref<8xi32> {
  }
}

// CHECK-LABEL: "gpu.module"() <{sym_name = "irgl_kernels"}>
// CHECK:         func.call @irgl_lock_try_i32(%a, %i) : (memref<?xi32>, index) -> i1
// CHECK:         func.call @irgl_lock_release_i32(%a, %i) : (memref<?xi32>, index) -> ()
// CHECK:         func.call @irgl_lock_try_i64(%b, %i) : (memref<?xi64>, index) -> i1
// CHECK:         func.call @irgl_lock_release_i64(%b, %i) : (memref<?xi64>, index) -> ()
// CHECK:         %[[C:.*]] = "memref.cast"(%c) : (memref<8xi32>) -> memref<?xi32>
// CHECK:         func.call @irgl_lock_try_i32(%[[C]], %i)
// CHECK-DAG:     func.func private @irgl_lock_try_i32(memref<?xi32>, index) -> i1
// CHECK-DAG:     func.func private @irgl_lock_release_i32(memref<?xi32>, index) -> ()
// CHECK-DAG:     func.func private @irgl_lock_try_i64(memref<?xi64>, index) -> i1
// CHECK-DAG:     func.func private @irgl_lock_release_i64(memref<?xi64>, index) -> ()

// CUDA:        __global__ void two_widths(int32_t* a, int64_t* b, int32_t* c, irgl_index i)
// CUDA:          irgl_lock_try_i32(a, i)
// CUDA:          irgl_lock_release_i32(a, i)
// CUDA:          irgl_lock_try_i64(b, i)
// CUDA:          irgl_lock_release_i64(b, i)
// CUDA:          int32_t* [[C:v[0-9]+]] = c;
// CUDA-NEXT:     irgl_lock_try_i32([[C]], i)

// -----

// Lock words of another width get a diagnostic.
irgl.kernel @narrow(%a: memref<?xi16>, %i: index) {
  irgl.atomic %a[%i] : memref<?xi16> {
  }
}

// CHECK: 'irgl.atomic' needs 32- or 64-bit lock words (memref<?xi32> or memref<?xi64>), got memref<?xi16>
// CUDA: 'irgl.atomic' needs 32- or 64-bit lock words
