// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{grid_rounds=64}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges' | filecheck %s --check-prefix=OFF
// RUN: not irgl-opt %s -p 'convert-irgl-nested-edges{grid_rounds=-1}' 2>&1 | filecheck %s --check-prefix=BAD

// convert-irgl-nested-edges' grid phase: a node of at least grid_rounds (64)
// times the block size (256) of edges, on a grid of more than one block, is
// donated to the runtime's job table with the per-thread values the body
// uses (%d); every block helps with chunks of its loop's jobs until none is
// left, the donor waits for its job, and the node skips the block phase.
// After the round loop a block helps once more (the linger). Both run only
// under a grid-uniform test that the graph's largest degree reaches the
// threshold (graphs without hubs skip them).
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %dst) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}

// A reducing edge loop: the donor starts its job's accumulator at the
// identity, every block totals its chunk and combines the total into it, and
// the donor combines the finished job's total into its result.
irgl.kernel @count(%g: !irgl.graph, %out: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %zero = arith.constant 0 : i32
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %zero : i32) {
      %one = arith.constant 1 : i32
      irgl.yield %one : i32
    }
    memref.store %s, %out[%n] : memref<?xi32>
  }
}

// CHECK:        scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:          %[[ACTIVE:.*]] = arith.cmpi slt
// CHECK:          %[[N:.*]], %[[D:.*]] = scf.if %[[ACTIVE]] -> (index, i32) {
// CHECK:          %[[LO:.*]], %[[HI:.*]] = scf.if %[[ACTIVE]] -> (index, index) {
// CHECK:          %[[DEG:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:          %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT:     %[[HUGE:.*]] = arith.cmpi sge, %[[DEG]], %[[BLOCK]] : index
// CHECK:          %[[GT:.*]] = arith.constant 16384 : index
// CHECK-NEXT:     %[[GRIDDEG:.*]] = arith.cmpi sge, %[[DEG]], %[[GT]] : index
// CHECK-NEXT:     %[[WANT:.*]] = arith.andi %[[ACTIVE]], %[[GRIDDEG]] : i1
// CHECK-NEXT:     %[[GR:.*]] = builtin.unrealized_conversion_cast %g
// CHECK-NEXT:     %[[MAXDEG:.*]] = func.call @irgl_graph_max_degree(%[[GR]]) : (!irgl_rt.graph) -> index
// CHECK-NEXT:     %[[GT2:.*]] = arith.constant 16384 : index
// CHECK-NEXT:     %[[SOME:.*]] = arith.cmpi sge, %[[MAXDEG]], %[[GT2]] : index
// CHECK-NEXT:     %[[GRID:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:     %[[SEVERAL:.*]] = arith.cmpi ugt, %[[GRID]], %[[ONE]] : index
// CHECK-NEXT:     %[[HUBS:.*]] = arith.andi %[[SOME]], %[[SEVERAL]] : i1
// CHECK-NEXT:     %[[DONATED:.*]] = scf.if %[[HUBS]] -> (i1) {
// CHECK-NEXT:     %[[JOB:.*]] = scf.if %[[WANT]] -> (i32) {
// CHECK-NEXT:       %[[SITE:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       %[[TAKEN:.*]] = func.call @irgl_grid_donate(%[[SITE]], %[[LO]], %[[HI]]) : (i32, index, index) -> i32
// CHECK-NEXT:       scf.yield %[[TAKEN]] : i32
// CHECK-NEXT:     } else {
// CHECK-NEXT:       %[[NONE:.*]] = arith.constant -1 : i32
// CHECK-NEXT:       scf.yield %[[NONE]] : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : i32
// CHECK-NEXT:     %[[MINE:.*]] = arith.cmpi sge, %[[JOB]], %{{.*}} : i32
// CHECK-NEXT:     scf.if %[[MINE]] {
// CHECK-NEXT:       %[[K:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       func.call @irgl_grid_put_i32(%[[JOB]], %[[K]], %[[D]]) : (i32, i32, i32) -> ()
// CHECK-NEXT:       func.call @irgl_grid_publish(%[[JOB]]) : (i32) -> ()
// CHECK-NEXT:     }
// The help loop: chunks of site 0's jobs, %d read back from the job.
// CHECK-NEXT:     %{{.*}} = scf.while () : () -> i32 {
// CHECK-NEXT:       %[[S:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       %[[SLOT:.*]] = func.call @irgl_grid_take(%[[S]]) : (i32) -> i32
// CHECK-NEXT:       %{{.*}} = arith.constant 0 : i32
// CHECK-NEXT:       %[[GOT:.*]] = arith.cmpi sge, %[[SLOT]], %{{.*}} : i32
// CHECK-NEXT:       scf.condition(%[[GOT]]) %[[SLOT]] : i32
// CHECK-NEXT:     } do {
// CHECK-NEXT:     ^{{.*}}(%[[J:.*]]: i32):
// CHECK-NEXT:       %[[K2:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       %[[DJ:.*]] = func.call @irgl_grid_get_i32(%[[J]], %[[K2]]) : (i32, i32) -> i32
// CHECK-NEXT:       %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:       %[[BDIM:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:       %[[START:.*]] = func.call @irgl_grid_start() : () -> index
// CHECK-NEXT:       %[[FIRST:.*]] = arith.addi %[[START]], %[[TID]] : index
// CHECK-NEXT:       %[[END:.*]] = func.call @irgl_grid_end() : () -> index
// CHECK-NEXT:       scf.for %[[E:.*]] = %[[FIRST]] to %[[END]] step %[[BDIM]] {
// CHECK-NEXT:         %dst = irgl.graph.edge_dst %g[%[[E]]]
// CHECK-NEXT:         %old = "memref.atomic_rmw"(%[[DJ]], %dist, %dst) <{kind = 7 : i64}>
// CHECK-NEXT:       }
// CHECK-NEXT:       func.call @irgl_grid_done(%[[J]]) : (i32) -> ()
// CHECK-NEXT:       scf.yield
// CHECK-NEXT:     }
// CHECK-NEXT:     scf.if %[[MINE]] {
// CHECK-NEXT:       func.call @irgl_grid_finish(%[[JOB]]) : (i32) -> ()
// CHECK-NEXT:     }
// CHECK-NEXT:     scf.yield %[[MINE]] : i1
// CHECK-NEXT:   } else {
// CHECK-NEXT:     %[[NO:.*]] = arith.constant false
// CHECK-NEXT:     scf.yield %[[NO]] : i1
// CHECK-NEXT:   }
// A donated node skips the block phase.
// CHECK-NEXT:     %[[T:.*]] = arith.constant true
// CHECK-NEXT:     %[[KEPT:.*]] = arith.xori %[[DONATED]], %[[T]] : i1
// CHECK-NEXT:     %[[BLOCKED:.*]] = arith.andi %[[HUGE]], %[[KEPT]] : i1
// CHECK:            arith.andi %[[BLOCKED]], %{{.*}} : i1
// CHECK-NEXT:       func.call @irgl_block_elect
// CHECK:        } {irgl_rt.forall = #irgl_rt.forall<uniform>}
// The linger after the rounds, under the same test.
// CHECK-NEXT:   %[[GR3:.*]] = builtin.unrealized_conversion_cast %g
// CHECK-NEXT:   %[[MAXDEG3:.*]] = func.call @irgl_graph_max_degree(%[[GR3]]) : (!irgl_rt.graph) -> index
// CHECK-NEXT:   %[[GT3:.*]] = arith.constant 16384 : index
// CHECK-NEXT:   %[[SOME3:.*]] = arith.cmpi sge, %[[MAXDEG3]], %[[GT3]] : index
// CHECK:        %[[HUBS3:.*]] = arith.andi %[[SOME3]], %{{.*}} : i1
// CHECK-NEXT:   scf.if %[[HUBS3]] {
// CHECK:          %{{.*}} = scf.while () : () -> i32 {
// CHECK-NEXT:     %[[S3:.*]] = arith.constant 0 : i32
// CHECK-NEXT:     func.call @irgl_grid_take(%[[S3]]) : (i32) -> i32
// CHECK:          func.call @irgl_grid_get_i32
// CHECK:          func.call @irgl_grid_done
// CHECK:        sym_name = "relax"
// The reducing loop of @count.
// CHECK:        %[[RDONATED:.*]], %[[RTOTAL:.*]] = scf.if %{{.*}} -> (i1, i32) {
// CHECK:          %[[RJOB:.*]] = scf.if %{{.*}} -> (i32) {
// CHECK:            func.call @irgl_grid_donate(
// CHECK:          %[[RMINE:.*]] = arith.cmpi sge, %[[RJOB]], %{{.*}} : i32
// CHECK-NEXT:     scf.if %[[RMINE]] {
// CHECK-NEXT:       %[[ID:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       func.call @irgl_grid_acc_init_i32(%[[RJOB]], %[[ID]]) : (i32, i32) -> ()
// CHECK-NEXT:       func.call @irgl_grid_publish(%[[RJOB]]) : (i32) -> ()
// CHECK-NEXT:     }
// CHECK:          ^{{.*}}(%[[RJ:.*]]: i32):
// CHECK:            %[[RZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       %[[PART:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[RZERO]]) -> (i32) {
// CHECK:              arith.addi %[[ACC]], %one : i32
// CHECK:            %[[BTOTAL:.*]] = func.call @irgl_block_reduce_add_i32(%[[PART]]) : (i32) -> i32
// CHECK-NEXT:       func.call @irgl_grid_combine_add_i32(%[[RJ]], %[[BTOTAL]]) : (i32, i32) -> ()
// CHECK-NEXT:       func.call @irgl_grid_done(%[[RJ]]) : (i32) -> ()
// CHECK:          %[[DONE:.*]] = scf.if %[[RMINE]] -> (i32) {
// CHECK-NEXT:       %[[GOT:.*]] = func.call @irgl_grid_finish_i32(%[[RJOB]]) : (i32) -> i32
// CHECK-NEXT:       scf.yield %[[GOT]] : i32
// CHECK-NEXT:     } else {
// CHECK-NEXT:       %[[NOTHING:.*]] = arith.constant 0 : i32
// CHECK-NEXT:       scf.yield %[[NOTHING]] : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     scf.yield %[[RMINE]], %[[DONE]] : i1, i32
// The block phase skips a donated node; the donated total starts the
// owner's result, which the phases carry on.
// CHECK:        arith.xori %[[RDONATED]]
// CHECK:        %[[START:.*]] = arith.addi %zero, %[[RTOTAL]] : i32
// CHECK:        scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[START]]) : (i1, i32)
// CHECK:        func.call @irgl_block_elect
// The linger combines its chunks' totals too.
// CHECK:        func.call @irgl_grid_take(
// CHECK:        func.call @irgl_block_reduce_add_i32(
// CHECK-NEXT:   func.call @irgl_grid_combine_add_i32(
// CHECK:        sym_name = "count"
// CHECK-DAG:    func.func private @irgl_grid_donate(i32, index, index) -> i32
// CHECK-DAG:    func.func private @irgl_grid_put_i32(i32, i32, i32) -> ()
// CHECK-DAG:    func.func private @irgl_grid_finish(i32) -> ()
// CHECK-DAG:    func.func private @irgl_grid_finish_i32(i32) -> i32
// CHECK-DAG:    func.func private @irgl_grid_combine_add_i32(i32, i32) -> ()

// OFF-NOT:      irgl_grid

// BAD: convert-irgl-nested-edges: grid_rounds must be at least 0, got -1
