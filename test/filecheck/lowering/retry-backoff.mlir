// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops{retry_backoff=true}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,convert-irgl-loops' | filecheck %s --check-prefix=OFF

// Retry backoff on a kernel that retries after a failed non-blocking Atomic:
// the grid-stride loop runs, in retry round r (irgl_wl_retry_round(in) > 0),
// the positions first .. min(first + chunk, count) step 1 with first = tid *
// chunk (a contiguous block per thread); in round 0 tid .. count step
// nthreads as without backoff. The chunk comes from the runtime
// (irgl_backoff_chunk: at least 2^r in round r).
irgl.kernel @try_lock(%locks: memref<?xi32>, %x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.atomic %locks[%n] : memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %x[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

// CHECK:      ^{{.*}}(%locks: memref<?xi32>, %x: memref<?xi32>, %[[IN:.*]]: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %[[RETRY:.*]]: !irgl_rt.worklist):
// CHECK-NEXT:   %[[SIZE:.*]] = func.call @irgl_wl_size(%[[IN]])
// CHECK-NEXT:   %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[STEP:.*]] = arith.constant 1 : index
// CHECK:        %[[TID:.*]] = arith.addi
// CHECK-NEXT:   %[[GDIM:.*]] = "gpu.grid_dim"()
// CHECK-NEXT:   %[[NTHREADS:.*]] = arith.muli %[[GDIM]], %{{.*}}
// CHECK-NEXT:   %[[SPAN:.*]] = arith.subi %[[SIZE]], %[[LB]]
// CHECK-NEXT:   %[[COUNT:.*]] = arith.ceildivsi %[[SPAN]], %[[STEP]]
// CHECK-NEXT:   %[[PER:.*]] = arith.ceildivsi %[[COUNT]], %[[NTHREADS]]
// CHECK-NEXT:   %retry_round = func.call @irgl_wl_retry_round(%[[IN]]) : (!irgl_rt.worklist) -> index
// CHECK-NEXT:   %chunk = func.call @irgl_backoff_chunk(%retry_round, %[[PER]]) : (index, index) -> index
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[BLOCKED:.*]] = arith.cmpi sgt, %retry_round, %[[ZERO]]
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[BETWEEN_ROUNDS:.*]] = arith.select %[[BLOCKED]], %[[ONE]], %[[NTHREADS]]
// CHECK-NEXT:   %[[BETWEEN_THREADS:.*]] = arith.select %[[BLOCKED]], %chunk, %[[ONE]]
// CHECK-NEXT:   %[[FIRST:.*]] = arith.muli %[[TID]], %[[BETWEEN_THREADS]]
// CHECK-NEXT:   %[[BLOCK_END:.*]] = arith.addi %[[FIRST]], %chunk
// CHECK-NEXT:   %[[OWN_END:.*]] = arith.minsi %[[BLOCK_END]], %[[COUNT]]
// CHECK-NEXT:   %[[END:.*]] = arith.select %[[BLOCKED]], %[[OWN_END]], %[[COUNT]]
// CHECK-NEXT:   scf.for %[[J:.*]] = %[[FIRST]] to %[[END]] step %[[BETWEEN_ROUNDS]] {
// CHECK-NEXT:     %[[OFFSET:.*]] = arith.muli %[[J]], %[[STEP]]
// CHECK-NEXT:     %i = arith.addi %[[LB]], %[[OFFSET]]
// CHECK-NEXT:     %n = func.call @irgl_wl_item(%[[IN]], %i)
// CHECK:            func.call @irgl_wl_push(%[[RETRY]], %n)
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<grid_stride, retry_blocked>}
// CHECK:      func.func private @irgl_wl_retry_round(!irgl_rt.worklist) -> index
// CHECK:      func.func private @irgl_backoff_chunk(index, index) -> index

// OFF-NOT:  irgl_wl_retry_round
// OFF:      } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}
// OFF-NOT:  irgl_wl_retry_round

// -----

// Retry after a failed Exclusive: the uniform rounds become min(chunk,
// count) rounds (the same on every thread), round k of thread tid running position
// first + k * between_rounds, active when below the count; the Exclusive's
// collective still ranks threads by tid.
irgl.kernel @claim(%claims: memref<?xi32>, %items: memref<?xi32>, %x: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %e = arith.addi %n, %c1 : index
    irgl.exclusive %claims iterator(%items[%n to %e step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %x[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

// CHECK:      ^{{.*}}(%claims: memref<?xi32>, %items: memref<?xi32>, %x: memref<?xi32>, %[[IN:.*]]: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %[[RETRY:.*]]: !irgl_rt.worklist):
// CHECK:        %[[TID:.*]] = arith.addi
// CHECK-NEXT:   %[[GDIM:.*]] = "gpu.grid_dim"()
// CHECK-NEXT:   %[[NTHREADS:.*]] = arith.muli %[[GDIM]], %{{.*}}
// CHECK-NEXT:   %[[SPAN:.*]] = arith.subi
// CHECK-NEXT:   %[[COUNT:.*]] = arith.ceildivsi %[[SPAN]]
// CHECK-NEXT:   %[[PER:.*]] = arith.ceildivsi %[[COUNT]], %[[NTHREADS]]
// CHECK-NEXT:   %retry_round = func.call @irgl_wl_retry_round(%[[IN]])
// CHECK-NEXT:   %chunk = func.call @irgl_backoff_chunk(%retry_round, %[[PER]])
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[BLOCKED:.*]] = arith.cmpi sgt, %retry_round, %[[ZERO]]
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[BETWEEN_ROUNDS:.*]] = arith.select %[[BLOCKED]], %[[ONE]], %[[NTHREADS]]
// CHECK-NEXT:   %[[BETWEEN_THREADS:.*]] = arith.select %[[BLOCKED]], %chunk, %[[ONE]]
// CHECK-NEXT:   %[[FIRST:.*]] = arith.muli %[[TID]], %[[BETWEEN_THREADS]]
// CHECK-NEXT:   %[[ROUNDS:.*]] = arith.minsi %chunk, %[[COUNT]]
// One iteration in all: its thread contends alone.
// CHECK-NEXT:   %[[SPAN2:.*]] = arith.subi
// CHECK-NEXT:   %[[TOTAL:.*]] = arith.ceildivsi %[[SPAN2]]
// CHECK-NEXT:   %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[ONLY:.*]] = arith.cmpi eq, %[[TOTAL]], %[[C1]] : index
// CHECK-NEXT:   %[[R0:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[R1:.*]] = arith.constant 1 : index
// CHECK-NEXT:   scf.for %[[K:.*]] = %[[R0]] to %[[ROUNDS]] step %[[R1]] {
// CHECK-NEXT:     %[[OFFSET:.*]] = arith.muli %[[K]], %[[BETWEEN_ROUNDS]]
// CHECK-NEXT:     %[[J:.*]] = arith.addi %[[FIRST]], %[[OFFSET]]
// CHECK-NEXT:     %[[ACTIVE:.*]] = arith.cmpi slt, %[[J]], %[[COUNT]]
// CHECK:          irgl_rt.collective active(%[[ACTIVE]]) rank(%[[TID]]) alone(%[[ONLY]]) {
// CHECK-NEXT:       irgl.exclusive
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<uniform, retry_blocked>}

// OFF-NOT:  irgl_wl_retry_round
// OFF:      } {irgl_rt.forall = #irgl_rt.forall<uniform>}
// OFF-NOT:  irgl_wl_retry_round

// -----

// Kernels that are not re-launched after conflicts keep their mapping: one
// that does not retry, one that retries but whose ForAll is not over the
// worklist, one whose Retry merges (into `out`) and one that only Respawns.
irgl.kernel @plain(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}

irgl.kernel @over_range(%x: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  irgl.forall %i in range(%c0, %c8) {
    irgl.retry %i
  }
}

irgl.kernel @merging(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.retry %n merge
  }
}

irgl.kernel @respawning(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.respawn %n
  }
}

// CHECK-LABEL: sym_name = "plain"
// CHECK-NOT:   irgl_wl_retry_round
// CHECK:       } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}
// CHECK-NOT:   irgl_wl_retry_round
// CHECK:       sym_name = "over_range"
// CHECK-NOT:   irgl_wl_retry_round
// CHECK:       } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}
// CHECK-NOT:   irgl_wl_retry_round
// CHECK:       sym_name = "merging"
// CHECK-NOT:   irgl_wl_retry_round
// CHECK:       } {irgl_rt.forall = #irgl_rt.forall<grid_stride>}
// CHECK-NOT:   irgl_wl_retry_round
// CHECK:       sym_name = "respawning"
