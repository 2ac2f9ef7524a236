// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-outline-iterations{remarks=true small_worklist=0}' 2>&1 | filecheck %s
// RUN: irgl-opt %s -p 'lower-irgl{small_worklist=0}' -t 'cuda{inline-runtime=false}' | filecheck %s --check-prefix=CUDA

// A kernel invoked by two control kernels of different block sizes: @init
// runs in @narrow's Pipe (256 threads a block, from @narrow's launch bounds)
// and in @wide's (1024). A control kernel pins the kernels it runs to its
// block size, so the second runs a copy of @init pinned to 1024, and the
// third, of the same size, runs that copy again.

irgl.kernel @init(%g: !irgl.graph, %src: index) {
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    scf.if %is_src {
      irgl.wl.push %n
    }
  }
}
irgl.kernel @narrow(%g: !irgl.graph) launch_bounds(256, 1) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel @wide(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index, %c: i1) {
  scf.if %c {
    irgl.pipe once {
      irgl.invoke @init(%g, %src) : (!irgl.graph, index)
      irgl.iterate @narrow(%g) : (!irgl.graph) {
      }
    }
  } else {
    irgl.pipe once {
      irgl.invoke @init(%g, %src) : (!irgl.graph, index)
      irgl.iterate @wide(%g) : (!irgl.graph) {
      }
    }
    irgl.pipe once {
      irgl.invoke @init(%g, %src) : (!irgl.graph, index)
      irgl.iterate @wide(%g) : (!irgl.graph) {
      }
    }
  }
}

// CHECK:      remark: irgl.pipe in @main: outlined into control kernel @main_control (block size 256)
// CHECK-NEXT: remark: irgl.iterate @narrow in @main: outlined inside control kernel @main_control
// CHECK-NEXT: remark: irgl.pipe in @main: @init runs in a control kernel of block size 256: this one runs a copy, @init_b1024
// CHECK-NEXT: remark: irgl.pipe in @main: outlined into control kernel @main_control1 (block size 1024)
// CHECK-NEXT: remark: irgl.iterate @wide in @main: outlined inside control kernel @main_control1
// CHECK-NEXT: remark: irgl.pipe in @main: outlined into control kernel @main_control2 (block size 1024)
// CHECK-NEXT: remark: irgl.iterate @wide in @main: outlined inside control kernel @main_control2
// CHECK:      sym_name = "init", irgl_rt.launch = #irgl_rt.launch<block = 256, worklist = 2, pinned>
// CHECK:      sym_name = "init_b1024", irgl_rt.launch = #irgl_rt.launch<block = 1024, worklist = 2, pinned>
// CHECK:      func.call @init_device(
// CHECK:      sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 256, bounds = [256, 1], grid_sync, control>
// CHECK:      func.call @init_b1024_device(
// CHECK:      sym_name = "main_control1", irgl_rt.launch = #irgl_rt.launch<block = 1024, bounds = [1024, 1], grid_sync, control>
// CHECK:      func.call @init_b1024_device(
// CHECK:      sym_name = "main_control2", irgl_rt.launch = #irgl_rt.launch<block = 1024, bounds = [1024, 1], grid_sync, control>

// The two copies are device functions; neither is launched from the host.
// CUDA-NOT:   __global__ void {{.*}}init
// CUDA:       __device__ void init_device(
// CUDA:       __device__ void init_b1024_device(
// CUDA-NOT:   __global__ void {{.*}}init
