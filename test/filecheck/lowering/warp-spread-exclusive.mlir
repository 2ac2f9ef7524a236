// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops{warp_spread=true warp_spread_exclusive=true}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops{warp_spread=true}' | filecheck %s --check-prefix=KEEP
// RUN: irgl-opt %s -p 'lower-irgl{outline=false}' | filecheck %s --check-prefix=DEFAULT
// RUN: irgl-opt %s -p 'lower-irgl{outline=false warp_spread_exclusive=false}' | filecheck %s --check-prefix=KEEP

// A ForAll over the worklist holding an Exclusive (colour's and DMR's
// kernels) under convert-irgl-loops{warp_spread_exclusive}: its iterations
// are dealt like any worklist's (warp w of block k takes run w * grid_dim +
// k), while the contenders' rank, from which their priorities come, stays
// the thread's global id (unique among the threads running at once).
irgl.kernel @x(%claims: memref<?xi32>, %items: memref<4xindex>, %out: memref<?xi32>) {
  %c4 = arith.constant 4 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      %one = arith.constant 1 : i32
      memref.store %one, %out[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

// CHECK:        %[[BASE:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:   %[[GID:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK:        %[[W:.*]] = arith.constant 32 : index
// CHECK:        %[[LANE:.*]] = arith.remui %{{.*}}, %[[W]] : index
// CHECK-NEXT:   %[[WARP:.*]] = arith.divui %{{.*}}, %[[W]] : index
// CHECK:        %[[SPREAD:.*]] = arith.addi %{{.*}}, %[[LANE]] : index
// CHECK:        %[[POS:.*]] = arith.select %{{.*}}, %[[SPREAD]], %[[GID]] : index
// CHECK:        scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:          %[[K:.*]] = arith.addi %{{.*}}, %[[POS]] : index
// CHECK:          irgl_rt.collective active(%{{.*}}) rank(%[[GID]]) alone(%{{.*}}) {
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// Without it (the pass's default), the iterations keep the global id.
// KEEP-NOT:     arith.divui
// KEEP:         irgl_rt.forall<uniform>

// lower-irgl spreads them by default (`warp_spread` and
// `warp_spread_exclusive` both on): the lane and warp of the thread are
// computed.
// DEFAULT:      arith.remui %{{.*}}, %{{.*}} : index
// DEFAULT-NEXT: arith.divui %{{.*}}, %{{.*}} : index
