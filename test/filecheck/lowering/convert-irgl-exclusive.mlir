// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{alone_wins=false}' | filecheck %s
// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive | filecheck %s --check-prefix=ALONE
// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-loops | filecheck %s --check-prefix=LOOPS
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{hashed_priority=true}' | filecheck %s --check-prefix=HASH
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{sized_priority=true}' | filecheck %s --check-prefix=SIZED
// RUN: irgl-opt %s -p 'lower-irgl{outline=false}' | filecheck %s --check-prefix=DEFAULT

// convert-irgl-exclusive. Exclusive: race (write claims), grid barrier, priority check (losers raise
// their claims), grid barrier, check (a thread whose claims all stand runs
// the body, the others the else statements), grid barrier. Only threads
// with an iteration this round contend.
irgl.kernel @refine(%claims: memref<?xi32>, %items: memref<4xindex>, %out: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %n) {
    irgl.exclusive %claims array(%items[%c4]) : memref<?xi32>, memref<4xindex> {
      %one = arith.constant 1 : i32
      memref.store %one, %out[%i] : memref<?xi32>
    } else {
      %two = arith.constant 2 : i32
      memref.store %two, %out[%i] : memref<?xi32>
    }
  }
}

// convert-irgl-loops alone: uniform rounds, the Exclusive wrapped in
// irgl_rt.collective (whether this thread contends, its rank).
// The ForAll's iterations in all: one means its thread contends alone.
// LOOPS:       %[[TOTAL:[0-9]+]] = arith.ceildivsi
// LOOPS-NEXT:  %{{[0-9]+}} = arith.ceildivsi %[[TOTAL]], %{{[0-9]+}} : index
// LOOPS-NEXT:  %[[C1:[0-9]+]] = arith.constant 1 : index
// LOOPS-NEXT:  %[[ONLY:[0-9]+]] = arith.cmpi eq, %[[TOTAL]], %[[C1]] : index
// LOOPS:       scf.for
// LOOPS:         %[[ACTIVE:.*]] = arith.cmpi slt
// LOOPS:         irgl_rt.collective active(%[[ACTIVE]]) rank(%{{.*}}) alone(%[[ONLY]]) {
// LOOPS-NEXT:      irgl.exclusive %claims array(%items[%c4])
// LOOPS:       } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// alone_wins (the default): a contender alone in the launch claims nothing
// and wins; the barriers stay.
// ALONE:       %[[ONLY:.*]] = arith.cmpi eq
// ALONE:       scf.for
// ALONE:         %[[ACTIVE:.*]] = arith.cmpi slt
// ALONE:         %[[TRUE:.*]] = arith.constant true
// ALONE-NEXT:    %[[SHARED:.*]] = arith.xori %[[ONLY]], %[[TRUE]] : i1
// ALONE-NEXT:    %[[CONTENDS:.*]] = arith.andi %[[ACTIVE]], %[[SHARED]] : i1
// ALONE-NEXT:    scf.if %[[CONTENDS]] {
// ALONE:           func.call @irgl_claim_write
// ALONE:         func.call @irgl_grid_sync()
// ALONE-NEXT:    scf.if %[[CONTENDS]] {
// ALONE:           func.call @irgl_claim_raise
// ALONE:         func.call @irgl_grid_sync()
// ALONE-NEXT:    scf.if %[[ACTIVE]] {
// ALONE-NEXT:      %[[WON:.*]] = scf.if %[[ONLY]] -> (i1) {
// ALONE-NEXT:        scf.yield %[[TRUE]] : i1
// ALONE-NEXT:      } else {
// ALONE:             func.call @irgl_claim_read
// ALONE:           scf.if %[[WON]] {
// ALONE-NEXT:        %one = arith.constant 1 : i32
// ALONE:         func.call @irgl_grid_sync()

// CHECK:       scf.for
// CHECK:         %[[ACTIVE:.*]] = arith.cmpi slt
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[P1:.*]] = arith.addi %[[RANK:.*]], %[[ONE]] : index
// CHECK-NEXT:    %[[PRIO:.*]] = arith.index_cast %[[P1]] : index to i32

// hashed_priority: ((rank * 0x9E3779B1) mod 2^30) + 1, the same claims.
// HASH:         %[[ACTIVE:.*]] = arith.cmpi slt
// HASH:         %[[WIDE:.*]] = arith.index_cast %{{.*}} : index to i64
// HASH-NEXT:    %[[MUL:.*]] = arith.constant 2654435761 : i64
// HASH-NEXT:    %[[MIXED:.*]] = arith.muli %[[WIDE]], %[[MUL]] : i64
// HASH-NEXT:    %[[MASK:.*]] = arith.constant 1073741823 : i64
// HASH-NEXT:    %[[LOW:.*]] = arith.andi %[[MIXED]], %[[MASK]] : i64
// HASH-NEXT:    %[[ONE:.*]] = arith.constant 1 : i64
// HASH-NEXT:    %[[P1:.*]] = arith.addi %[[LOW]], %[[ONE]] : i64
// HASH-NEXT:    %[[PRIO:.*]] = arith.trunci %[[P1]] : i64 to i32
// HASH:         func.call @irgl_claim_write(%claims, %{{.*}}, %[[PRIO]])
// HASH:         func.call @irgl_claim_raise(%claims, %{{.*}}, %[[PRIO]])
// sized_priority (lower-irgl's default): larger claims first, then a hash
// of the rank (irgl_claim_priority of the rank and the claim's size).
// SIZED:         %[[ACTIVE:.*]] = arith.cmpi slt
// SIZED:         %[[PRIO:.*]] = func.call @irgl_claim_priority(%{{.*}}, %c4) : (index, index) -> i32
// SIZED:         func.call @irgl_claim_write(%claims, %{{.*}}, %[[PRIO]])
// SIZED:         func.call @irgl_claim_raise(%claims, %{{.*}}, %[[PRIO]])
// SIZED:         func.func private @irgl_claim_priority(index, index) -> i32
// DEFAULT:       func.call @irgl_claim_priority(
// CHECK:         scf.if %[[ACTIVE]] {
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %c4
// CHECK-NEXT:        %[[E:.*]] = memref.load %items[%[[K]]] : memref<4xindex>
// CHECK-NEXT:        func.call @irgl_claim_write(%claims, %[[E]], %[[PRIO]])
// CHECK:         func.call @irgl_grid_sync()
// CHECK-NEXT:    scf.if %[[ACTIVE]] {
// CHECK:           func.call @irgl_claim_read(%claims
// CHECK:           %[[LOST:.*]] = arith.xori
// CHECK-NEXT:      scf.if %[[LOST]] {
// CHECK:             func.call @irgl_claim_raise(%claims, %{{.*}}, %[[PRIO]])
// CHECK:         func.call @irgl_grid_sync()
// CHECK-NEXT:    scf.if %[[ACTIVE]] {
// CHECK:           %[[WON:.*]] = scf.for
// CHECK:           scf.if %[[WON]] {
// CHECK-NEXT:        %one = arith.constant 1 : i32
// CHECK-NEXT:        memref.store %one
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %two = arith.constant 2 : i32
// CHECK-NEXT:        memref.store %two
// CHECK-NEXT:      }
// CHECK:         func.call @irgl_grid_sync()
// CHECK:       } {irgl_rt.forall = #irgl_rt.forall<uniform>}
