// Input of irgl-outline-kernel-bodies.mlir: a gridded device body whose
// kernel synchronizes the grid.
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

