// RUN: irgl-opt %s -p 'irgl-outline-kernel-bodies{noinline_ops=4}' | filecheck %s
// RUN: irgl-opt %s -p 'irgl-outline-kernel-bodies{noinline_ops=4}' -t 'cuda{inline-runtime=false}' | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s -p 'irgl-outline-kernel-bodies{noinline_ops=5}' | filecheck %s --check-prefix=SMALL
// RUN: irgl-opt %s -p 'irgl-outline-kernel-bodies{noinline_ops=0}' | filecheck %s --check-prefix=SMALL

// A device body that a control kernel calls from two places and that has
// at least `noinline_ops` operations (here 4: a constant, two stores and
// the return) is marked `irgl_rt.noinline`, printed as IRGL_NOINLINE_BODY
// (`__noinline__` unless the build defines it otherwise); a smaller one, or
// any body with noinline_ops=0, is left to nvcc to inline.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xindex>) -> (), kernel}> ({
    ^bb0(%out: memref<?xindex>):
      %c0 = arith.constant 0 : index
      memref.store %c0, %out[%c0] : memref<?xindex>
      memref.store %c0, %out[%c0] : memref<?xindex>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
    func.func private @k_device(memref<?xindex>) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@k>}
    "gpu.func"() <{function_type = (memref<?xindex>) -> (), kernel}> ({
    ^bb0(%out: memref<?xindex>):
      func.call @k_device(%out) : (memref<?xindex>) -> ()
      func.call @k_device(%out) : (memref<?xindex>) -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "ctl"} : () -> ()
  }) : () -> ()
  func.func @main(%out: memref<?xindex>) {
    %c1 = arith.constant 1 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %out) <{kernel = @irgl_kernels::@ctl, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<?xindex>) -> ()
    func.return
  }
}

// CHECK:      func.func private @k_device(%{{.*}}: memref<?xindex>) attributes {irgl_rt.noinline} {
// CUDA:       __device__ IRGL_NOINLINE_BODY void k_device(
// SMALL:      func.func private @k_device(%{{.*}}: memref<?xindex>) {
