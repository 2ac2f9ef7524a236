// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops{warp_spread=true warp_spread_run=8}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{outline=false warp_spread_run=4}' -t 'cuda{inline-runtime=false}' | filecheck %s --check-prefix=CUDA
// RUN: not irgl-opt %s -p 'lower-irgl{warp_spread_run=0}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not irgl-opt %s -p 'convert-irgl-loops{warp_spread_run=33}' 2>&1 | filecheck %s --check-prefix=BAD33

// Warp spread's run length (convert-irgl-loops `warp_spread_run` = r): a
// worklist of `count` items, fewer than the grid's threads, is dealt in
// runs of ceil(count / warps) items, at least r and at most 32; lane l <
// run of warp w of block k takes position (w * grid_dim + k) * run + l,
// the other lanes the positions past every warp's run.
irgl.kernel @k(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}

// CHECK:      ^{{.*}}(%g: !irgl.graph, %[[IN:.*]]: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist):
// CHECK:        %[[SIZE:.*]] = func.call @irgl_wl_size(%[[IN]])
// CHECK:        "gpu.grid_dim"
// CHECK-NEXT:   %[[NTHREADS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   %[[SPAN:.*]] = arith.subi %[[SIZE]], %{{.*}} : index
// CHECK-NEXT:   %[[COUNT:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK-NEXT:   %[[W:.*]] = arith.constant 32 : index
// CHECK:        %[[LANE:.*]] = arith.remui %{{.*}}, %[[W]] : index
// CHECK:        %[[CHUNK:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   %[[WARPS:.*]] = arith.divui %[[NTHREADS]], %[[W]] : index
// A worklist of at most r items a warp takes runs of r without the
// division.
// CHECK-NEXT:   %[[LEAST:.*]] = arith.constant 8 : index
// CHECK-NEXT:   %[[ENOUGH:.*]] = arith.muli %[[WARPS]], %[[LEAST]] : index
// CHECK-NEXT:   %[[FEW:.*]] = arith.cmpi ule, %[[COUNT]], %[[ENOUGH]] : index
// CHECK-NEXT:   %[[LEN:.*]] = scf.if %[[FEW]] -> (index) {
// CHECK-NEXT:     scf.yield %[[LEAST]] : index
// CHECK-NEXT:   } else {
// CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:     %[[SOME:.*]] = arith.maxui %[[WARPS]], %[[ONE]] : index
// CHECK-NEXT:     %[[PER:.*]] = arith.ceildivui %[[COUNT]], %[[SOME]] : index
// CHECK-NEXT:     %[[ATLEAST:.*]] = arith.maxui %[[PER]], %[[LEAST]] : index
// CHECK-NEXT:     %[[LONG:.*]] = arith.minui %[[W]], %[[ATLEAST]] : index
// CHECK-NEXT:     scf.yield %[[LONG]] : index
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[INSIDE:.*]] = arith.cmpi ult, %[[LANE]], %[[LEN]] : index
// CHECK-NEXT:   %[[BASE:.*]] = arith.muli %[[CHUNK]], %[[LEN]] : index
// CHECK-NEXT:   %[[FIRST:.*]] = arith.addi %[[BASE]], %[[LANE]] : index
// CHECK-NEXT:   %[[REST:.*]] = arith.subi %[[W]], %[[LEN]] : index
// CHECK-NEXT:   %[[ALL:.*]] = arith.muli %[[WARPS]], %[[LEN]] : index
// CHECK-NEXT:   %[[MINE:.*]] = arith.muli %[[CHUNK]], %[[REST]] : index
// CHECK-NEXT:   %[[PAST:.*]] = arith.subi %[[LANE]], %[[LEN]] : index
// CHECK-NEXT:   %[[OFF:.*]] = arith.addi %[[MINE]], %[[PAST]] : index
// CHECK-NEXT:   %[[BEYOND:.*]] = arith.addi %[[ALL]], %[[OFF]] : index
// CHECK-NEXT:   %[[SPREAD:.*]] = arith.select %[[INSIDE]], %[[FIRST]], %[[BEYOND]] : index
// CHECK:        %[[POS:.*]] = arith.select %{{.*}}, %[[SPREAD]], %{{.*}} : index
// CHECK:        scf.for %i = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}

// CUDA:         __global__ void k(
// CUDA:           if ({{v[0-9]+}}) {
// CUDA-NEXT:        {{v[0-9]+}} = 4;
// CUDA-NEXT:      } else {
// CUDA:             irgl_index [[PER:v[0-9]+]] = (irgl_index)((uint32_t){{v[0-9]+}} / (uint32_t){{v[0-9]+}} + ((uint32_t){{v[0-9]+}} % (uint32_t){{v[0-9]+}} != 0));
// CUDA-NEXT:      irgl_index [[AT:v[0-9]+]] = (uint32_t)[[PER]] > (uint32_t)4 ? [[PER]] : 4;
// CUDA-NEXT:      irgl_index {{v[0-9]+}} = (uint32_t)32 < (uint32_t)[[AT]] ? 32 : [[AT]];

// BAD: lower-irgl: warp_spread_run must be between 1 and 32, got 0
// BAD33: convert-irgl-loops: warp_spread_run must be between 1 and 32, got 33

// -----

// Uniform rounds (the ForAll holds a barrier): the same position, round r
// runs slot r * nthreads + position.
irgl.kernel @u(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %one = arith.constant 1 : i32
    memref.store %one, %x[%n] : memref<?xi32>
    irgl.sync_running_threads
  }
}

// CHECK:       ^bb0(%x: memref<?xi32>, %{{.*}}: !irgl_rt.worklist
// CHECK:         "gpu.grid_dim"
// CHECK-NEXT:    %[[NTHREADS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         arith.ceildivui
// CHECK:         %[[SPREAD:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK:         %[[POS:.*]] = arith.select %{{.*}}, %[[SPREAD]], %{{.*}} : index
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[R]], %[[NTHREADS]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[BASE]], %[[POS]] : index
// CHECK:         } {irgl_rt.forall = #irgl_rt.forall<uniform>}
