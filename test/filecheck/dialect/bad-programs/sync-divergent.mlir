// RUN: not irgl-opt %s 2>&1 | filecheck %s
// A SyncRunningThreads that only some threads reach.
// CHECK-NOT: Traceback

irgl.kernel @k(%flag: i1) {
  scf.if %flag {
    irgl.sync_running_threads
  }
}

// CHECK:      {{.*}}sync-divergent.mlir:7:5: error: 'irgl.sync_running_threads' must be executed by all threads: place it directly in the kernel body, directly in the outermost ForAll, or in scf.for or irgl.for loops there whose trip counts are uniform (kernel arguments, constants and arithmetic of them) (rule: SyncRunningThreads executed uniformly)
// CHECK-NEXT: irgl.sync_running_threads
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^
// CHECK-NOT: Traceback
// CHECK-NOT: internal error
