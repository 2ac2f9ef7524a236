// RUN: not irgl-opt %s --split-input-file -t cuda 2>&1 | filecheck %s --check-prefix=FIRST
// RUN: irgl-opt %s --split-input-file --verify-diagnostics -t cuda | filecheck %s

// Emitter errors name the operation (or type) and where it is; no traceback.

// FIRST:      errors.mlir:17:7: error: CUDA emitter: cannot print operation 'memref.dim': the CUDA emitter has no rule for it (in gpu.func @k)
// FIRST-NEXT: %n = memref.dim %a, %c0 : memref<?xi32>
// FIRST-NEXT: ^^^^
// FIRST-NOT:  Traceback

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xi32>) -> (), kernel}> ({
    ^bb0(%a: memref<?xi32>):
      %c0 = arith.constant 0 : index
      %z = arith.constant 0 : i32
      %n = memref.dim %a, %c0 : memref<?xi32>
      memref.store %z, %a[%n] : memref<?xi32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
// CHECK: CUDA emitter: cannot print operation 'memref.dim': the CUDA emitter has no rule for it (in gpu.func @k)

// -----

builtin.module {
  func.func @host(%x: f32) -> f32 {
    %y = math.sqrt %x : f32 loc("bfs.irgl":12:7)
    func.return %y : f32
  }
}
// CHECK: CUDA emitter: cannot print operation 'math.sqrt': the CUDA emitter has no rule for it (in func.func @host, at loc("bfs.irgl":12:7))

// -----

builtin.module {
  func.func @matrix(%m: memref<?x?xi32>) {
    func.return
  }
}
// CHECK: CUDA emitter: unsupported type memref<?x?xi32>: only rank-0 and rank-1 memrefs

// -----

builtin.module {
  func.func @half(%h: f16) {
    func.return
  }
}
// CHECK: CUDA emitter: unsupported type f16

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
  func.func @launch2d(%n: index) {
    %c1 = arith.constant 1 : index
    "gpu.launch_func"(%c1, %n, %c1, %c1, %c1, %c1) <{kernel = @irgl_kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index) -> ()
    func.return
  }
}
// CHECK: CUDA emitter: cannot print operation 'gpu.launch_func': only 1-D launches: the y and z sizes must be constant 1 (in func.func @launch2d)

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (index) -> (), kernel}> ({
    ^bb0(%n: index):
      %buf = memref.alloc(%n) : memref<?xi32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
// CHECK: CUDA emitter: cannot print operation 'memref.alloc': only allowed in host code (outside gpu.module) (in gpu.func @k)

// -----

builtin.module {
  func.func @branchy(%c: i1) {
    cf.cond_br %c, ^a, ^b
  ^a:
    func.return
  ^b:
    func.return
  }
}
// CHECK: CUDA emitter: a region with 3 blocks: only structured control flow (one block per region) is supported (func.func @branchy)

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>, f32) -> (), kernel}> ({
    ^bb0(%a: memref<?xf32>, %v: f32):
      %c0 = arith.constant 0 : index
      %old = "memref.atomic_rmw"(%v, %a, %c0) <{kind = 3 : i64}> : (f32, memref<?xf32>, index) -> f32
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
// CHECK: CUDA emitter: cannot print operation 'memref.atomic_rmw': atomic kind 3 (in gpu.func @k)

// -----

builtin.module {
  func.func @pair(%a: i32) -> (i32, i32) {
    func.return %a, %a : i32, i32
  }
}
// CHECK: CUDA emitter: functions with more than one result are not supported (func.func @pair)

// -----

// Runtime calls must match the runtime library (irgl_dialect/runtime_library.py).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xi16>) -> (), kernel}> ({
    ^bb0(%a: memref<?xi16>):
      %c0 = arith.constant 0 : index
      %got = func.call @irgl_lock_try(%a, %c0) : (memref<?xi16>, index) -> i1
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @irgl_lock_try(memref<?xi16>, index) -> i1
  }) : () -> ()
}
// CHECK: CUDA emitter: @irgl_lock_try is not a function of the IrGL runtime library (in gpu.func @k)

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xi32>) -> (), kernel}> ({
    ^bb0(%a: memref<?xi32>):
      %got = func.call @irgl_lock_try_i32(%a) : (memref<?xi32>) -> i1
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @irgl_lock_try_i32(memref<?xi32>) -> i1
  }) : () -> ()
}
// CHECK: CUDA emitter: @irgl_lock_try_i32 is declared as (memref<?xi32>) -> i1, but the runtime library has (memref<?xi32>, index) -> i1 (in gpu.func @k)
