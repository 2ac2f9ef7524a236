// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-host-memory --split-input-file --verify-diagnostics | filecheck %s
// RUN: irgl-opt %s -p lower-irgl -t cuda --split-input-file --verify-diagnostics | filecheck %s --check-prefix=CUDA

// Host code reads and writes elements of device arrays (host kernel
// arguments, memref.alloc) through the runtime; a memref.alloca is a host
// buffer and keeps its plain accesses; device code is left alone.
irgl.kernel @k(%a: memref<?xi32>) {
  %c1 = arith.constant 1 : i32
  %z = arith.constant 0 : index
  irgl.forall %n in range(%z, %z) {
    %v = memref.load %a[%n] : memref<?xi32>
    memref.store %c1, %a[%n] : memref<?xi32>
  }
}

irgl.kernel host @main(%a: memref<?xi32>, %s: memref<f64>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %seven = arith.constant 7 : i32
  memref.store %seven, %a[%c2] : memref<?xi32>
  irgl.invoke @k(%a) : (memref<?xi32>)
  %v = memref.load %a[%c0] : memref<?xi32>
  %buf = memref.alloc() : memref<4xi64>
  %w = arith.extsi %v : i32 to i64
  memref.store %w, %buf[%c2] : memref<4xi64>
  %local = memref.alloca() : memref<2xi32>
  memref.store %v, %local[%c0] : memref<2xi32>
  %x = memref.load %s[] : memref<f64>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:         func.call @irgl_device_store_i32(%a, %[[C2]], %seven) : (memref<?xi32>, index, i32) -> ()
// CHECK-NEXT:    irgl.invoke @k(%a)
// CHECK-NEXT:    %v = func.call @irgl_device_load_i32(%a, %c0) : (memref<?xi32>, index) -> i32
// CHECK-NEXT:    %buf = memref.alloc() : memref<4xi64>
// CHECK-NEXT:    %w = arith.extsi %v : i32 to i64
// CHECK-NEXT:    %[[DYN:.*]] = "memref.cast"(%buf) : (memref<4xi64>) -> memref<?xi64>
// CHECK-NEXT:    func.call @irgl_device_store_i64(%[[DYN]], %[[C2]], %w) : (memref<?xi64>, index, i64) -> ()
// CHECK-NEXT:    %local = memref.alloca() : memref<2xi32>
// CHECK-NEXT:    memref.store %v, %local[%c0] : memref<2xi32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UNRANKED:.*]] = "memref.cast"(%s) : (memref<f64>) -> memref<*xf64>
// CHECK-NEXT:    %[[S:.*]] = "memref.cast"(%[[UNRANKED]]) : (memref<*xf64>) -> memref<?xf64>
// CHECK-NEXT:    %x = func.call @irgl_device_load_f64(%[[S]], %[[ZERO]]) : (memref<?xf64>, index) -> f64
// CHECK:       "gpu.module"() <{sym_name = "irgl_kernels"}>
// CHECK:         %v = memref.load %a[%n] : memref<?xi32>
// CHECK-NEXT:    memref.store %c1, %a[%n] : memref<?xi32>
// CHECK:       func.func private @irgl_device_store_i32(memref<?xi32>, index, i32) -> ()
// CHECK-NEXT:  func.func private @irgl_device_load_i32(memref<?xi32>, index) -> i32

// CUDA-LABEL: static void irgl_host_main(int32_t* a, double* s) {
// CUDA:         irgl_device_store_i32(a, (irgl_index)2, 7);
// CUDA:         irgl::launch(k,
// CUDA-NEXT:    int32_t v = irgl_device_load_i32(a, (irgl_index)0);
// CUDA-NEXT:    int64_t* buf = irgl_alloc<int64_t>(4);
// CUDA:         irgl_device_store_i64({{.*}}, (irgl_index)2, w);
// CUDA:         int32_t local[2];
// CUDA-NEXT:    local[0] = v;

// -----

// An Iterate body with a memref access is not outlined: it stays a host
// loop, whose body reads through the runtime like the code after it.
irgl.kernel @step(%a: memref<?xi32>, %acc: i32) {
  %t = arith.constant true
  %z = arith.constant 0 : index
  %one = arith.constant 1 : index
  irgl.forall %n in range(%z, %one) {
    irgl.reduce_and_return %t
  }
}

irgl.kernel host @loop(%a: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %last = irgl.iterate until any @step(%a, %acc = %zero) : (memref<?xi32>, i32) {
    %v = memref.load %a[%c0] : memref<?xi32>
    irgl.yield %v : i32
  }
  %r = memref.load %a[%c0] : memref<?xi32>
}

// CUDA-LABEL: static void irgl_host_loop(int32_t* a) {
// CUDA:         while (true) {
// CUDA:           irgl::launch(step,
// CUDA:           int32_t v = irgl_device_load_i32(a, (irgl_index)0);
// CUDA:         }
// CUDA-NEXT:    irgl_device_load_i32(a, (irgl_index)0);

// -----

// An element type the runtime cannot copy is a diagnostic.
irgl.kernel host @half(%a: memref<?xf16>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf16>
}

// CHECK: host code cannot access a device array of f16 elements
// CUDA: host code cannot access a device array of f16 elements
