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

// CHECK:      func.func private @k_device(%[[OUT:.*]]: memref<?xindex>, %[[BLOCK:.*]]: index, %[[BLOCKS:.*]]: index) {
// CHECK-NEXT:   memref.store %[[BLOCKS]], %[[OUT]][%[[BLOCK]]] : memref<?xindex>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

// A body that synchronizes the grid cannot run on one block: a located
// error (Inputs/grid-wide-device-body.mlir).
// ERR: @k_device runs in a small-worklist mode (one block) but needs the whole grid: a call of irgl_grid_sync
