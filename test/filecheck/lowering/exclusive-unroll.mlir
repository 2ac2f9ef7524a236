// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{unroll=4 warp_alone=false}' | filecheck %s
// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s -p 'lower-irgl{outline=false exclusive_unroll=8 exclusive_warp=false}' -t cuda | filecheck %s --check-prefix=CUDA
// RUN: not irgl-opt %s -p 'convert-irgl-exclusive{unroll=0}' 2>&1 | filecheck %s --check-prefix=BAD

// convert-irgl-exclusive{unroll}: the scf.for loops of an Exclusive's body
// ask to be unrolled (a critical section that runs alone is one thread's
// loop); the claim loops and the loops outside the body are left alone.
irgl.kernel @scan(%claims: memref<?xi32>, %items: memref<4xindex>, %vals: memref<?xi32>, %out: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    %outside = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %c0) -> (index) {
      %b = arith.addi %a, %k : index
      scf.yield %b : index
    }
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      %zero = arith.constant 0 : i32
      %sum = scf.for %k = %c0 to %n step %c1 iter_args(%s = %zero) -> (i32) {
        %v = memref.load %vals[%k] : memref<?xi32>
        %t = arith.addi %s, %v : i32
        scf.yield %t : i32
      }
      memref.store %sum, %out[%outside] : memref<?xi32>
    }
  }
}

// CHECK:       %outside = scf.for
// CHECK-NOT:     irgl_rt.unroll
// CHECK:       func.call @irgl_claim_write
// CHECK:       %sum = scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%{{.*}} = %zero) -> (i32) {
// CHECK:       } {irgl_rt.unroll = 4 : i64}
// CHECK-NEXT:  memref.store %sum, %out[%{{.*}}]

// OFF-NOT:     irgl_rt.unroll

// CUDA:        #pragma unroll 8
// CUDA-NEXT:   for (irgl_index k = 0; k < n; k += 1) {

// BAD: convert-irgl-exclusive: unroll must be at least 1, got 0
