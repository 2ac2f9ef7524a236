// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{warp_alone=true}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{warp_alone=true alone_wins=false}' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s -p 'lower-irgl{outline=false exclusive_warp=true}' -t cuda | filecheck %s --check-prefix=CUDA

// convert-irgl-exclusive{warp_alone} (off by default): a contender alone in its
// launch runs its Exclusive's body on its warp. The values the body uses
// from outside are broadcast from the contender's lane, a reduction loop
// (reads only, each carried value combined by ori/andi/xori/addi/minsi/maxsi)
// is split over the lanes and totalled, and each write runs on the
// contender's lane between warp syncs, an atomic's result broadcast; the
// warp's copy is a device function of its own (noinline).
irgl.kernel @scan(%claims: memref<?xi32>, %items: memref<4xindex>, %vals: memref<?xi32>, %out: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    %hi = arith.addi %i, %c4 : index
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      %zero = arith.constant 0 : i64
      %big = arith.constant 1000 : i32
      %bits, %least = scf.for %k = %i to %hi step %c1 iter_args(%m = %zero, %l = %big) -> (i64, i32) {
        %v = memref.load %vals[%k] : memref<?xi32>
        %w = arith.extsi %v : i32 to i64
        %nm = arith.ori %m, %w : i64
        %nl = arith.minsi %v, %l : i32
        scf.yield %nm, %nl : i64, i32
      }
      memref.store %bits, %out[%i] : memref<?xi64>
      %old = "memref.atomic_rmw"(%least, %vals, %i) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
      %o64 = arith.extsi %old : i32 to i64
      memref.store %o64, %out[%c0] : memref<?xi64>
    }
  }
}

// The warp's copy of the body: a device function of its own (noinline), its
// parameters the ballot and the values it uses from outside.
// CHECK:       func.func private @irgl_warp_alone(%[[BALLOT:[0-9]+]]: i32, %i: index, %[[HIGH:[0-9]+]]: index, %vals: memref<?xi32>, %out: memref<?xi64>) attributes {irgl_rt.noinline} {
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %[[MASK:[0-9]+]] = arith.constant -1 : i32
// CHECK-NEXT:    %[[SRC:[0-9]+]] = func.call @irgl_warp_first(%[[BALLOT]])
// CHECK-NEXT:    %[[LEAD:[0-9]+]] = func.call @irgl_warp_is_lane(%[[SRC]])
// CHECK-NEXT:    %[[LANE:[0-9]+]] = func.call @irgl_warp_rank(%[[MASK]]) : (i32) -> index
// CHECK-NEXT:    %[[C32:[0-9]+]] = arith.constant 32 : index
// CHECK-NEXT:    %[[I:[0-9]+]] = func.call @irgl_warp_shfl_index(%[[MASK]], %i, %[[SRC]])
// CHECK-NEXT:    %[[HI:[0-9]+]] = func.call @irgl_warp_shfl_index(%[[MASK]], %[[HIGH]], %[[SRC]])
// CHECK-NEXT:    %zero = arith.constant 0 : i64
// CHECK-NEXT:    %big = arith.constant 1000 : i32
// CHECK-NEXT:    %[[SHIFT:[0-9]+]] = arith.muli %[[LANE]], %c1 : index
// CHECK-NEXT:    %[[FIRST:[0-9]+]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK-NEXT:    %[[STRIDE:[0-9]+]] = arith.muli %c1, %[[C32]] : index
// CHECK-NEXT:    %[[ID_OR:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[ID_MIN:[0-9]+]] = arith.constant 2147483647 : i32
// CHECK-NEXT:    %bits, %least = scf.for %k = %[[FIRST]] to %[[HI]] step %[[STRIDE]] iter_args(%m = %[[ID_OR]], %l = %[[ID_MIN]]) -> (i64, i32) {
// CHECK:         scf.yield %nm, %nl : i64, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[ORS:[0-9]+]] = func.call @irgl_warp_reduce_or_i64(%[[MASK]], %bits)
// CHECK-NEXT:    %[[BITS:[0-9]+]] = arith.ori %zero, %[[ORS]] : i64
// CHECK-NEXT:    %[[MINS:[0-9]+]] = func.call @irgl_warp_reduce_min_i32(%[[MASK]], %least)
// CHECK-NEXT:    %[[LEAST:[0-9]+]] = arith.minsi %big, %[[MINS]] : i32
// CHECK-NEXT:    func.call @irgl_warp_sync(%[[MASK]])
// CHECK-NEXT:    scf.if %[[LEAD]] {
// CHECK-NEXT:      memref.store %[[BITS]], %out[%[[I]]] : memref<?xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @irgl_warp_sync(%[[MASK]])
// CHECK-NEXT:    %[[OLD:[0-9]+]] = scf.if %[[LEAD]] -> (i32) {
// CHECK-NEXT:      %old = "memref.atomic_rmw"(%[[LEAST]], %vals, %[[I]])
// CHECK-NEXT:      scf.yield %old : i32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:      scf.yield %[[Z]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SHARED:[0-9]+]] = func.call @irgl_warp_shfl_i32(%[[MASK]], %[[OLD]], %[[SRC]])
// CHECK-NEXT:    func.call @irgl_warp_sync(%[[MASK]])
// CHECK-NEXT:    %o64 = arith.extsi %[[SHARED]] : i32 to i64
// CHECK-NEXT:    func.call @irgl_warp_sync(%[[MASK]])
// CHECK-NEXT:    scf.if %[[LEAD]] {
// CHECK-NEXT:      memref.store %o64, %out[%c0] : memref<?xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @irgl_warp_sync(%[[MASK]])
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// The kernel: the claims, then, where the contender is alone, every warp
// ballots and the contender's warp calls the function; else the claims decide.
// CHECK:       func.call @irgl_claim_write
// CHECK:       func.call @irgl_grid_sync()
// CHECK:       func.call @irgl_grid_sync()
// CHECK:       scf.if %{{[0-9]+}} {
// CHECK-NEXT:    %[[FULL:[0-9]+]] = arith.constant -1 : i32
// CHECK-NEXT:    %[[VOTE:[0-9]+]] = func.call @irgl_warp_ballot(%[[FULL]], %[[ACTIVE:[0-9]+]]) : (i32, i1) -> i32
// CHECK-NEXT:    %[[NONE:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[HAS:[0-9]+]] = arith.cmpi ne, %[[VOTE]], %[[NONE]] : i32
// CHECK-NEXT:    scf.if %[[HAS]] {
// CHECK-NEXT:      func.call @irgl_warp_alone(%[[VOTE]], %i, %{{[0-9]+}}, %vals, %out)
// CHECK-NEXT:    }
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.if %[[ACTIVE]] {
// CHECK:           func.call @irgl_claim_read
// CHECK:           %bits, %least = scf.for %k = %i to %{{.*}} step %c1 iter_args(%m = %zero, %l = %big) -> (i64, i32) {

// OFF:         func.call @irgl_claim_write
// OFF-NOT:     irgl_warp
// OFF:         sym_name = "scan"

// No reduction loop: the thread runs its body alone. A loop that writes, or
// whose carried value is a float sum (not associative) or is used in the
// loop beyond its combination, is no reduction loop.
irgl.kernel @plain(%claims: memref<?xi32>, %items: memref<4xindex>, %vals: memref<?xi32>, %f: memref<?xf32>, %out: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      %z = arith.constant 0 : i32
      %zf = arith.constant 0.0 : f32
      %writes = scf.for %k = %c0 to %n step %c1 iter_args(%s = %z) -> (i32) {
        %v = memref.load %vals[%k] : memref<?xi32>
        memref.store %s, %out[%k] : memref<?xi32>
        %t = arith.addi %s, %v : i32
        scf.yield %t : i32
      }
      %floats = scf.for %k = %c0 to %n step %c1 iter_args(%s = %zf) -> (f32) {
        %v = memref.load %f[%k] : memref<?xf32>
        %t = arith.addf %s, %v : f32
        scf.yield %t : f32
      }
      %prefix = scf.for %k = %c0 to %n step %c1 iter_args(%s = %z) -> (i32) {
        %v = memref.load %vals[%k] : memref<?xi32>
        %v2 = arith.addi %v, %s : i32
        %t = arith.maxsi %s, %v2 : i32
        scf.yield %t : i32
      }
      %fi = arith.fptosi %floats : f32 to i32
      %sum = arith.addi %writes, %fi : i32
      %all = arith.addi %sum, %prefix : i32
      memref.store %all, %out[%i] : memref<?xi32>
    }
  }
}

// CHECK:       sym_name = "scan"
// CHECK-NOT:   irgl_warp_ballot
// CHECK:       sym_name = "plain"

// CUDA:        __device__ IRGL_NOINLINE_BODY void irgl_warp_alone(int32_t v0, irgl_index i,
// CUDA:          for (irgl_index k = {{v[0-9]+}}; k < {{v[0-9]+}}; k += {{v[0-9]+}}) {
// CUDA:          int64_t {{v[0-9]+}} = irgl_warp_reduce_or_i64((-1), bits);
// CUDA:          int32_t {{v[0-9]+}} = irgl_warp_reduce_min_i32((-1), least);
// CUDA:          irgl_warp_sync((-1));
// CUDA-LABEL:  __global__ void scan(int32_t* claims
// CUDA:          int32_t [[BALLOT:v[0-9]+]] = irgl_warp_ballot((-1), [[ACTIVE:v[0-9]+]]);
// CUDA:          irgl_warp_alone([[BALLOT]], 
// CUDA-LABEL:  __global__ void plain(int32_t* claims
// CUDA-NOT:      irgl_warp_ballot
