// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_merged=false}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_merged=false retry_drain_solo=false}' | filecheck %s --check-prefix=NOSOLO
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_merged=false retry_drain_lone=false}' | filecheck %s --check-prefix=NOSOLO

// A drained kernel whose only Retry is in its Exclusive's Else: a drain's
// one-item window is a launch with one contender, which claims nothing and
// wins, so the window's losers are not read back (irgl_ctl_drain_losers
// takes the window's size and the losers before it). Without solo windows
// (retry_drain_solo=false), or with retry_drain_lone=false, every window
// reads them.
irgl.kernel @work(%claims: memref<?xi32>, %x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %c1 = arith.constant 1 : index
    %end = arith.addi %n, %c1 : index
    irgl.exclusive %claims iterator(%x[%n to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %x[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}
irgl.kernel host @main(%claims: memref<?xi32>, %x: memref<?xi32>, %n: index) {
  irgl.iterate @work(%claims, %x) : (memref<?xi32>, memref<?xi32>) initial [%n] capacity %n {
  }
}

// CHECK-LABEL: func.func @main(
// CHECK:         func.call @irgl_ctl_drain_storm
// CHECK:         ^{{.*}}(%[[H:[0-9a-z_]+]]: index, %[[K:[0-9a-z_]+]]: index, %[[LOST:[0-9a-z_]+]]: index, %{{[0-9a-z_]+}}: index, %{{[0-9a-z_]+}}: index):
// CHECK:           %[[TAKE:.*]] = arith.minsi %[[K]], %{{.*}} : index
// CHECK:           func.call @work_device(
// CHECK-NEXT:      %[[NOW:.*]] = func.call @irgl_ctl_drain_losers(%{{.*}}, %{{.*}}, %[[TAKE]], %[[LOST]])
// CHECK-NEXT:      %{{.*}} = arith.subi %[[NOW]], %[[LOST]] : index

// NOSOLO-LABEL: func.func @main(
// NOSOLO:         func.call @irgl_ctl_drain_storm
// NOSOLO:         func.call @work_device(
// NOSOLO-NEXT:    func.call @irgl_ctl_size_check(
// NOSOLO-NOT:     irgl_ctl_drain_losers

// -----

// A Retry outside the Else (here after the Exclusive): a lone contender may
// retry, so every window reads its losers back.
irgl.kernel @work(%claims: memref<?xi32>, %x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %c1 = arith.constant 1 : index
    %end = arith.addi %n, %c1 : index
    irgl.exclusive %claims iterator(%x[%n to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %x[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
    %v = memref.load %x[%n] : memref<?xi32>
    %z = arith.constant 0 : i32
    %again = arith.cmpi eq, %v, %z : i32
    scf.if %again {
      irgl.retry %n
    }
  }
}
irgl.kernel host @main(%claims: memref<?xi32>, %x: memref<?xi32>, %n: index) {
  irgl.iterate @work(%claims, %x) : (memref<?xi32>, memref<?xi32>) initial [%n] capacity %n {
  }
}

// CHECK-LABEL: func.func @main(
// CHECK:         func.call @irgl_ctl_drain_storm
// CHECK:         func.call @work_device(
// CHECK-NEXT:    func.call @irgl_ctl_size_check(
// CHECK-NOT:     irgl_ctl_drain_losers
