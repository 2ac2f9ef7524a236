// RUN: irgl-opt %s --split-input-file -p convert-irgl-kernels,convert-irgl-sync | filecheck %s
// RUN: irgl-opt %s --split-input-file --verify-diagnostics -p 'convert-irgl-kernels,convert-irgl-sync{ticket_locks=true}' | filecheck %s --check-prefix=TICKET

// Blocking Atomic: a divergence-safe loop; the thread that gets the lock
// runs the body and releases it inside the loop.
irgl.kernel @a(%locks: memref<?xi32>, %x: memref<?xi32>, %i: index) {
  irgl.atomic %locks[%i] : memref<?xi32> {
    %v = memref.load %x[%i] : memref<?xi32>
    memref.store %v, %x[%i] : memref<?xi32>
  }
}

// CHECK:         %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT:    scf.while (%[[DONE:.*]] = %[[FALSE]]) : (i1) -> () {
// CHECK-NEXT:      %[[T:.*]] = arith.constant true
// CHECK-NEXT:      %[[GO:.*]] = arith.xori %[[DONE]], %[[T]] : i1
// CHECK-NEXT:      scf.condition(%[[GO]])
// CHECK-NEXT:    } do {
// CHECK-NEXT:      %[[GOT:.*]] = func.call @irgl_lock_try_i32(%locks, %i)
// CHECK-NEXT:      scf.if %[[GOT]] {
// CHECK-NEXT:        %v = memref.load %x[%i]
// CHECK-NEXT:        memref.store %v, %x[%i]
// CHECK-NEXT:        func.call @irgl_lock_release_i32(%locks, %i)
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[GOT]] : i1
// CHECK-NEXT:    }

// With ticket-locks, a 32-bit lock word holds 16-bit next/serving halves.
// TICKET:       ^bb0(%locks: memref<?xi32>, %x: memref<?xi32>, %i: index):
// TICKET-NEXT:  func.call @irgl_ticket_acquire_i32(%locks, %i) : (memref<?xi32>, index) -> ()
// TICKET-NEXT:  %v = memref.load %x[%i]
// TICKET-NEXT:  memref.store %v, %x[%i]
// TICKET-NEXT:  func.call @irgl_ticket_release_i32(%locks, %i) : (memref<?xi32>, index) -> ()
// TICKET-NEXT:  "gpu.return"() : () -> ()

// -----

// Atomic with Else tries once; nested Atomics each take their own lock.
irgl.kernel @b(%locks: memref<?xi64>, %x: memref<?xi32>, %i: index, %j: index) {
  irgl.atomic %locks[%i] : memref<?xi64> {
    irgl.atomic %locks[%j] : memref<?xi64> {
      %z = arith.constant 0 : i32
      memref.store %z, %x[%j] : memref<?xi32>
    }
  } else {
    %c = arith.constant 1 : i32
    memref.store %c, %x[%i] : memref<?xi32>
  }
}

// CHECK:         %[[GOT:.*]] = func.call @irgl_lock_try_i64(%locks, %i)
// CHECK-NEXT:    scf.if %[[GOT]] {
// CHECK:           func.call @irgl_lock_try_i64(%locks, %j)
// CHECK:           func.call @irgl_lock_release_i64(%locks, %i)
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %c = arith.constant 1 : i32
// CHECK-NEXT:      memref.store %c, %x[%i]
// CHECK-NEXT:    }

// TICKET:        %[[GOT:.*]] = func.call @irgl_lock_try_i64(%locks, %i)
// TICKET:        func.call @irgl_ticket_acquire_i64(%locks, %j)
// TICKET-NEXT:   %z = arith.constant 0 : i32
// TICKET-NEXT:   memref.store %z, %x[%j]
// TICKET-NEXT:   func.call @irgl_ticket_release_i64(%locks, %j)
// TICKET-NEXT:   func.call @irgl_lock_release_i64(%locks, %i)

// -----

// ReduceAndReturn reduces into the kernel's cell; SyncRunningThreads is the
// runtime's grid barrier; LocalBarrier is gpu.barrier.
irgl.kernel @c(%x: memref<?xi32>) {
  irgl.sync_running_threads
  irgl.local_barrier
  %t = arith.constant true
  irgl.reduce_and_return %t
}

// CHECK:       ^{{.*}}(%x: memref<?xi32>, %[[CELL:.*]]: !irgl_rt.cell):
// CHECK-NEXT:    func.call @irgl_grid_sync() : () -> ()
// CHECK-NEXT:    "gpu.barrier"() : () -> ()
// CHECK-NEXT:    %t = arith.constant true
// CHECK-NEXT:    func.call @irgl_cell_reduce(%[[CELL]], %t)

