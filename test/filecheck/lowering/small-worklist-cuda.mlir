// RUN: irgl-opt %s -p 'lower-irgl{small_worklist=64 warp_spread=false}' -t 'cuda{inline-runtime=false}' | filecheck %s

// The control kernel of an Iterate with the small-worklist mode, as CUDA:
// a round checks the size of in and, the kernel taking a graph, the
// out-degrees of its items (`irgl_ctl_small_fits`, 16 edges per thread of
// the control block by default); below both every block passes a
// grid barrier, block 0 runs rounds with block barriers and its own grid
// (block 0 of 1), thread 0 posts the state, every block waits at the second
// grid barrier and loads it; above it, one round of the whole grid.
irgl.kernel @step(%g: !irgl.graph, %lvl: i32) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index) -> i32 {
  %c1 = arith.constant 1 : i32
  %last = irgl.iterate @step(%g, %l = %c1) : (!irgl.graph, i32) initial [%src] {
    %next = arith.addi %l, %c1 : i32
    irgl.yield %next : i32
  }
  irgl.return %last : i32
}

// CHECK:      __device__ void step_device(irgl::Graph g, int32_t lvl, irgl::Worklist [[IN:v[0-9]+]], irgl::Worklist {{v[0-9]+}}, irgl::Worklist {{v[0-9]+}}, irgl_index [[SIZE:v[0-9]+]], irgl_index [[BLOCK:v[0-9]+]], irgl_index [[BLOCKS:v[0-9]+]]) {
// CHECK-NEXT:   irgl_index [[DIM:v[0-9]+]] = (irgl_index)blockDim.x;
// CHECK-NEXT:   irgl_index {{v[0-9]+}} = [[BLOCK]] * [[DIM]];
// CHECK-NOT:    blockIdx
// CHECK:        irgl_index {{v[0-9]+}} = [[BLOCKS]] * [[DIM]];
// CHECK-NOT:    gridDim
// CHECK:      }

// CHECK:      __global__ void __launch_bounds__(1024, 1) main_control(irgl::Graph [[G:v[0-9]+]], int32_t [[C1:v[0-9]+]], irgl::Worklist {{.*}}, int32_t* [[STATUS:v[0-9]+]], bool* [[MB:v[0-9]+]], int32_t* [[MI:v[0-9]+]], irgl::Worklist* [[MW:v[0-9]+]], irgl_index* [[MX:v[0-9]+]]) {
// CHECK-NEXT:   irgl_index [[B:v[0-9]+]] = (irgl_index)blockIdx.x;
// CHECK-NEXT:   irgl_index [[NB:v[0-9]+]] = (irgl_index)gridDim.x;
// CHECK:          bool [[FITS:v[0-9]+]] = irgl_ctl_small_fits({{v[0-9]+}}, {{v[0-9]+}}, (irgl_index)64, [[G]], (int64_t)16384);
// CHECK:          if ([[FITS]]) {
// CHECK-NEXT:       irgl_grid_sync();
// CHECK-NEXT:       bool [[B0:v[0-9]+]] = [[B]] == 0;
// CHECK-NEXT:       if ([[B0]]) {
// CHECK:              while (true) {
// CHECK-NEXT:           irgl_ctl_clear([[SP:v[0-9]+]]);
// CHECK-NEXT:           step_device([[G]], {{v[0-9]+}}, {{v[0-9]+}}, [[OUT:v[0-9]+]], [[SP]], {{v[0-9]+}}, (irgl_index)0, (irgl_index)1);
// CHECK-NEXT:           irgl_index [[NSZ:v[0-9]+]] = irgl_ctl_size_check([[OUT]], [[STATUS]]);
// CHECK:                bool [[MORE:v[0-9]+]] = [[NSZ]] > 0;
// CHECK-NEXT:           bool [[SMALL:v[0-9]+]] = irgl_ctl_small_fits([[OUT]], [[NSZ]], (irgl_index)64, [[G]], (int64_t)16384);
// CHECK-NEXT:           bool [[STAY:v[0-9]+]] = [[MORE]] & [[SMALL]];
// CHECK:                if (![[STAY]]) break;
// CHECK:              }
// CHECK-NEXT:         bool [[FIRST:v[0-9]+]] = irgl_is_first_thread();
// CHECK-NEXT:         if ([[FIRST]]) {
// CHECK-NEXT:           [[MB]][0] = {{v[0-9]+}};
// CHECK-NEXT:           [[MI]][0] = {{v[0-9]+}};
// CHECK-NEXT:           [[MW]][0] = {{v[0-9]+}};
// CHECK-NEXT:           [[MW]][1] = {{v[0-9]+}};
// CHECK-NEXT:           [[MW]][2] = {{v[0-9]+}};
// CHECK-NEXT:           [[MW]][3] = {{v[0-9]+}};
// CHECK-NEXT:           [[MX]][0] = {{v[0-9]+}};
// CHECK-NEXT:           [[MX]][1] = {{v[0-9]+}};
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl_grid_sync();
// CHECK-NEXT:       bool {{v[0-9]+}} = [[MB]][0];
// CHECK-NEXT:       int32_t {{v[0-9]+}} = [[MI]][0];
// CHECK-NEXT:       irgl::Worklist {{v[0-9]+}} = [[MW]][0];
// CHECK:          } else {
// CHECK-NEXT:       irgl_ctl_clear({{v[0-9]+}});
// CHECK-NEXT:       step_device([[G]], {{.*}}, [[B]], [[NB]]);
// CHECK-NEXT:       irgl_grid_sync();
// CHECK-NEXT:       irgl_index {{v[0-9]+}} = irgl_ctl_size_check(

// The host allocates the mailbox and frees it after the control kernel.
// CHECK:        bool* [[HB:v[0-9]+]] = irgl_alloc<bool>(1);
// CHECK:        irgl::Worklist* [[HW:v[0-9]+]] = irgl_alloc<irgl::Worklist>(4);
// CHECK:        irgl_index* [[HX:v[0-9]+]] = irgl_alloc<irgl_index>(2);
// CHECK:        irgl::launch_cooperative(main_control,
// CHECK:        irgl_free([[HB]]);
// CHECK:        irgl_free([[HW]]);
// CHECK:        irgl_free([[HX]]);
