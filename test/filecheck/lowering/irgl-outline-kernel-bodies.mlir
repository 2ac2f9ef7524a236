// RUN: irgl-opt %s --split-input-file -p irgl-outline-kernel-bodies | filecheck %s
// RUN: not irgl-opt %S/Inputs/grid-wide-device-body.mlir -p irgl-outline-kernel-bodies 2>&1 | filecheck %s --check-prefix=ERR

// A gridded device body (`#irgl_rt.device_body<@k, grid>`) takes the calling
// block and the number of blocks as its last two arguments and uses them
// instead of the launch's block index and grid size.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xindex>) -> (), kernel}> ({
    ^bb0(%out: memref<?xindex>):
      %b = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %n = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
      memref.store %n, %out[%b] : memref<?xindex>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @k_device(memref<?xindex>, index, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@k, grid>}
  }) : () -> ()
}

// Nothing launches @k any more (a control kernel runs it through
// @k_device): the kernel is erased.

// CHECK:      "gpu.module"() <{sym_name = "irgl_kernels"}> ({
// CHECK-NOT:  sym_name = "k"
// CHECK:      func.func private @k_device(%[[OUT:.*]]: memref<?xindex>, %[[BLOCK:.*]]: index, %[[BLOCKS:.*]]: index) {
// CHECK-NEXT:   memref.store %[[BLOCKS]], %[[OUT]][%[[BLOCK]]] : memref<?xindex>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

// -----

// A gridded body's grid barriers (an Exclusive's phases, lowered) become
// `irgl_sync_blocks(number of blocks)`: a block barrier where block 0 runs
// the body alone (a retry drain), a grid barrier otherwise.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      func.call @irgl_grid_sync() : () -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @k_device(index, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@k, grid>}
    func.func private @irgl_grid_sync() -> ()
  }) : () -> ()
}

// CHECK:      func.func private @k_device(%{{.*}}: index, %[[N:.*]]: index) {
// CHECK-NEXT:   func.call @irgl_sync_blocks(%[[N]]) : (index) -> ()
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK:      func.func private @irgl_sync_blocks(index) -> ()

// -----

// A kernel that the host still launches somewhere (here: directly) keeps
// its kernel beside the device body.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xindex>) -> (), kernel}> ({
    ^bb0(%out: memref<?xindex>):
      %c0 = arith.constant 0 : index
      memref.store %c0, %out[%c0] : memref<?xindex>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @k_device(memref<?xindex>) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@k>}
  }) : () -> ()
  func.func @main(%out: memref<?xindex>) {
    %c1 = arith.constant 1 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %out) <{kernel = @irgl_kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<?xindex>) -> ()
    func.return
  }
}

// CHECK:      "gpu.func"() <{function_type = (memref<?xindex>) -> (), kernel}> ({
// CHECK:      }) {sym_name = "k"} : () -> ()
// CHECK:      func.func private @k_device(%{{.*}}: memref<?xindex>) {
// CHECK:      "gpu.launch_func"({{.*}}) <{kernel = @irgl_kernels::@k

// A body that uses the launch's whole grid cannot run on one block: a
// located error (Inputs/grid-wide-device-body.mlir).
// ERR: @k_device runs in block 0 alone (the small-worklist mode, a retry drain) but needs the whole grid: a call of irgl_global_thread_id
