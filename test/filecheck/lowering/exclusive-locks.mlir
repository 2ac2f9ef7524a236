// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops{exclusive_locks=true}' | filecheck %s --check-prefix=LOOPS
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops{exclusive_locks=true},convert-irgl-exclusive' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive' | filecheck %s --check-prefix=ROUNDS
// RUN: irgl-opt %s -p 'lower-irgl{outline=false exclusive_locks=true}' | filecheck %s --check-prefix=LOWER
// RUN: irgl-opt %s -p 'lower-irgl{outline=false}' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s -p 'lower-irgl{exclusive_locks=true}' -t cuda | filecheck %s --check-prefix=CUDA

// Claim locks (convert-irgl-loops exclusive_locks, off by default in lower-irgl):
// @claim's losers retry the item they popped, so a lost conflict is
// retried in place: a grid-stride ForAll whose body runs in an scf.while
// until no Retry fired (a per-thread flag), the Exclusive in a collective
// marked `locks`, lowered to wait-die claim locks. @merged retries with
// merge and @plain retries outside an Exclusive: both keep the uniform
// rounds of the three-phase protocol.

irgl.kernel @claim(%claims: memref<?xi32>, %nbhd: memref<?xi32>, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %end = arith.addi %n, %c3 : index
    irgl.exclusive %claims iterator(%nbhd[%n to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %out[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

irgl.kernel @merged(%claims: memref<?xi32>, %nbhd: memref<?xi32>, %out: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %end = arith.addi %n, %c3 : index
    irgl.exclusive %claims iterator(%nbhd[%n to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %out[%n] : memref<?xi32>
    } else {
      irgl.retry %n merge
    }
  }
}

irgl.kernel @plain(%claims: memref<?xi32>, %nbhd: memref<?xi32>, %out: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %end = arith.addi %n, %c3 : index
    irgl.exclusive %claims iterator(%nbhd[%n to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %out[%n] : memref<?xi32>
    }
    irgl.retry %n
  }
}

irgl.kernel host @main(%claims: memref<?xi32>, %nbhd: memref<?xi32>, %out: memref<?xi32>, %src: index, %cap: index) {
  irgl.pipe initial [%src] capacity %cap {
    irgl.invoke @claim(%claims, %nbhd, %out) : (memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.invoke @merged(%claims, %nbhd, %out) : (memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.invoke @plain(%claims, %nbhd, %out) : (memref<?xi32>, memref<?xi32>, memref<?xi32>)
  }
}

// LOOPS:         %[[FLAG:.*]] = memref.alloca() : memref<1xi8>
// LOOPS:         %[[TRUE:.*]] = arith.constant true
// LOOPS:         scf.for %[[SLOT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// LOOPS:           scf.while (%{{.*}} = %{{.*}}) : (index) -> index {
// LOOPS:             memref.store %{{.*}}, %[[FLAG]][%{{.*}}] : memref<1xi8>
// LOOPS:             %n = func.call @irgl_wl_item(%{{.*}}, %[[SLOT]])
// LOOPS:             irgl_rt.collective active(%[[TRUE]]) rank(%{{.*}}) {
// LOOPS-NEXT:          irgl.exclusive %claims iterator
// LOOPS:               } else {
// LOOPS-NEXT:            %[[ONE:.*]] = arith.constant 1 : i8
// LOOPS-NEXT:            %[[Z:.*]] = arith.constant 0 : index
// LOOPS-NEXT:            memref.store %[[ONE]], %[[FLAG]][%[[Z]]] : memref<1xi8>
// LOOPS-NEXT:          }
// LOOPS-NEXT:        } {locks}
// LOOPS:             %[[FIRED:.*]] = memref.load %[[FLAG]]
// LOOPS:             %[[AGAIN:.*]] = arith.cmpi ne, %[[FIRED]]
// LOOPS-NEXT:        scf.condition(%[[AGAIN]])
// LOOPS:           } do {
// LOOPS:             func.call @irgl_retry_pause(
// LOOPS:         } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}
// LOOPS:         sym_name = "claim"
// LOOPS-NOT:     {locks}
// LOOPS:         #irgl_rt.forall<uniform>
// LOOPS:         sym_name = "merged"
// LOOPS-NOT:     {locks}
// LOOPS:         #irgl_rt.forall<uniform>
// LOOPS:         sym_name = "plain"

// The claim locks: priority from the rank and the claim's size, a pass of
// irgl_claim_try, if one failed a pass of irgl_claim_lock (stopping at the
// first give-up), then, if every cell was taken, a pass of
// irgl_claim_commit (a cell a higher priority took meanwhile makes it give
// up), then the body and irgl_claim_unlock of every element, or
// irgl_claim_unlock of every element and the else statements.
// CHECK:         %[[COUNT:.*]] = arith.ceildivsi
// CHECK:         %[[PRIO:.*]] = func.call @irgl_claim_priority(%{{.*}}, %[[COUNT]]) : (index, index) -> i32
// CHECK:         %[[FAST:.*]] = scf.for {{.*}} iter_args(%[[OK:.*]] = %{{.*}}) -> (i1) {
// CHECK:           %[[TOOK:.*]] = func.call @irgl_claim_try(%claims, %{{.*}}, %[[PRIO]])
// CHECK-NEXT:      %[[AND:.*]] = arith.andi %[[OK]], %[[TOOK]] : i1
// CHECK-NEXT:      scf.yield %[[AND]] : i1
// CHECK:         %[[TAKEN:.*]] = scf.if %[[FAST]] -> (i1) {
// CHECK:         } else {
// CHECK:           scf.for {{.*}} -> (i1) {
// CHECK:             scf.if %{{.*}} -> (i1) {
// CHECK-NEXT:          %{{.*}} = func.call @irgl_claim_lock(%claims, %{{.*}}, %[[PRIO]])
// CHECK:         %[[WON:.*]] = scf.if %[[TAKEN]] -> (i1) {
// CHECK-NEXT:      %[[ALL:.*]] = scf.for {{.*}} iter_args(%[[KEPT:.*]] = %{{.*}}) -> (i1) {
// CHECK:             %[[COMMITTED:.*]] = func.call @irgl_claim_commit(%claims, %{{.*}}, %[[PRIO]])
// CHECK-NEXT:        %[[BOTH:.*]] = arith.andi %[[KEPT]], %[[COMMITTED]] : i1
// CHECK-NEXT:        scf.yield %[[BOTH]] : i1
// CHECK:           scf.yield %[[ALL]] : i1
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[TAKEN]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if %[[WON]] {
// CHECK:           memref.store %{{.*}}, %out[%n]
// CHECK:           func.call @irgl_claim_unlock(%claims, %{{.*}}, %[[PRIO]])
// CHECK:         } else {
// CHECK:           func.call @irgl_claim_unlock(%claims, %{{.*}}, %[[PRIO]])
// CHECK:           memref.store %{{.*}}, %retry_flag
// CHECK:         sym_name = "claim"
// CHECK-NOT:     irgl_claim_priority
// CHECK:         func.call @irgl_claim_write(
// CHECK:         sym_name = "merged"

// Without the option: the three-phase protocol everywhere.
// ROUNDS-NOT:  irgl_claim_try
// ROUNDS-NOT:  {locks}

// lower-irgl: claim locks with exclusive_locks=true; off by default.
// LOWER:       func.call @irgl_claim_try(
// LOWER:       func.call @irgl_claim_write(
// OFF-NOT:     irgl_claim_try
// OFF-NOT:     irgl_retry_pause

// In the CUDA (outlined), the in-place retry loop around the claim locks.
// CUDA-LABEL:  __device__ void claim_device(
// CUDA:          int8_t retry_flag[1];
// CUDA:          while (true) {
// CUDA:            retry_flag[0] = 0;
// CUDA:            int32_t [[PRIO:v[0-9]+]] = irgl_claim_priority(
// CUDA:            bool {{v[0-9]+}} = irgl_claim_try(claims, {{v[0-9]+}}, [[PRIO]]);
// CUDA:            bool {{v[0-9]+}} = irgl_claim_lock(claims, {{v[0-9]+}}, [[PRIO]]);
// CUDA:            bool {{v[0-9]+}} = irgl_claim_commit(claims, {{v[0-9]+}}, [[PRIO]]);
// CUDA:            irgl_claim_unlock(claims, {{v[0-9]+}}, [[PRIO]]);
// CUDA:            retry_flag[0] = 1;
// CUDA:            irgl_retry_pause(
