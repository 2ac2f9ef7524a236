// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_drain_blocks=8}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0}' | filecheck %s --check-prefix=ALONE

// A drain by a team of blocks (retry_drain_blocks=8): the first window's
// team (at most 8 blocks; 1 under -DIRGL_DRAIN_TEAM_ITEMS=M for a window
// of fewer items) enters
// the drain; each pass and each window go on while this block is in the
// team; a window is the body on this block of a grid of `team` blocks, its
// losers read after a team barrier; then the next window's team
// (irgl_ctl_drain_team); a pass's losers are moved by the team. The default
// (retry_drain_blocks=1) keeps block 0 alone: one block's geometry.

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
// CHECK:         %[[BLOCK:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK:         func.call @irgl_ctl_drain_storm
// CHECK:         %[[START:.*]] = func.call @irgl_ctl_drain_window(
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[TEAM0:.*]] = func.call @irgl_ctl_drain_team_start(%[[C8]], %[[START]])
// CHECK-NEXT:    %[[IN:.*]] = func.call @irgl_ctl_drain_member(%[[TEAM0]])
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK:           scf.while ({{.*}}%{{.*}} = %[[TEAM0]])
// CHECK:             func.call @irgl_ctl_drain_member(
// CHECK:           ^{{.*}}(%{{.*}}: index, %{{.*}}: index, %[[LOST:[0-9a-z_]+]]: index, %{{.*}}: index, %{{.*}}: index, %[[TEAM:[0-9a-z_]+]]: index):
// CHECK:             %[[TAKE:.*]] = arith.minsi
// CHECK:             func.call @work_device(%{{.*}}, %[[TAKE]], %[[BLOCK]], %[[TEAM]])
// CHECK-NEXT:        %{{.*}} = func.call @irgl_ctl_team_drain_losers(%{{.*}}, %{{.*}}, %[[TAKE]], %[[LOST]], %[[TEAM]])
// CHECK:             %[[NEXT:.*]] = func.call @irgl_ctl_drain_next(
// CHECK:             %{{.*}} = func.call @irgl_ctl_drain_team(%[[TEAM]], %[[NEXT]])
// CHECK:           func.call @irgl_ctl_team_drain_move(

// ALONE-LABEL: func.func @main(
// ALONE:         func.call @irgl_ctl_drain_storm
// ALONE-NOT:     irgl_ctl_drain_team
// ALONE:         func.call @irgl_wl_window(
// ALONE-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// ALONE-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// ALONE-NEXT:    func.call @work_device(%{{.*}}, %[[C0]], %[[C1]])
// ALONE-NEXT:    func.call @irgl_ctl_drain_losers(
// ALONE:         func.call @irgl_ctl_drain_move(
// ALONE-NOT:     irgl_ctl_team_
