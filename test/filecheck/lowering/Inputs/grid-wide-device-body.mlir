// Input of irgl-outline-kernel-bodies.mlir: a gridded device body whose
// kernel uses the launch's whole grid (its global thread id).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      %id = func.call @irgl_global_thread_id() : () -> index
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @k_device(index, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@k, grid>}
    func.func private @irgl_global_thread_id() -> index
  }) : () -> ()
}

