// RUN: irgl-opt %s -p irgl-exclusive-footprint | filecheck %s
// RUN: irgl-opt %s -p 'irgl-exclusive-footprint{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s -p 'irgl-exclusive-footprint,convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{nested_claims=false}' | filecheck %s --check-prefix=SERIAL
// RUN: irgl-opt %s -p 'irgl-exclusive-footprint,convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive' | filecheck %s --check-prefix=NESTED
// RUN: irgl-opt %s -p irgl-exclusive-footprint --print-op-generic | irgl-opt | filecheck %s
// RUN: irgl-opt %s -p 'irgl-exclusive-footprint,convert-irgl-kernels,convert-irgl-loops,convert-irgl-exclusive{warp_alone=true nested_claims=false block_claims=1024}' | filecheck %s --check-prefix=WARPS

// irgl-exclusive-footprint: @pick writes its node's value and reads its
// neighbours' values: its Exclusive claims %n for writing and the
// destinations of %n's edges for reading, on claim cells its host kernel
// allocates (2N + 2) and passes as a new last argument. @blind writes at an
// index it loads: it keeps its lock set.

irgl.kernel @pick(%g: !irgl.graph, %locks: memref<?xi32>, %nbhd: memref<?xi32>, %val: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    irgl.exclusive %locks iterator(%nbhd[%first to %last step %c1]) : memref<?xi32>, memref<?xi32> {
      %zero = arith.constant 0 : i32
      %big = scf.for %e = %first to %last step %c1 iter_args(%m = %zero) -> (i32) {
        %t = irgl.graph.edge_dst %g[%e]
        %v = memref.load %val[%t] : memref<?xi32>
        %k = arith.maxsi %m, %v : i32
        scf.yield %k : i32
      }
      memref.store %big, %val[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

irgl.kernel @blind(%g: !irgl.graph, %locks: memref<?xi32>, %nbhd: memref<?xi32>, %val: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    irgl.exclusive %locks iterator(%nbhd[%first to %last step %c1]) : memref<?xi32>, memref<?xi32> {
      %one = arith.constant 1 : i32
      %at = memref.load %nbhd[%n] : memref<?xi32>
      %i = arith.index_cast %at : i32 to index
      memref.store %one, %val[%i] : memref<?xi32>
    }
  }
}

irgl.kernel @seed(%g: !irgl.graph) {
  irgl.forall %n in nodes(%g) {
    irgl.wl.push %n
  }
}

irgl.kernel host @main(%g: !irgl.graph, %locks: memref<?xi32>, %nbhd: memref<?xi32>, %val: memref<?xi32>) {
  irgl.pipe once {
    irgl.invoke @seed(%g) : (!irgl.graph)
    irgl.pipe {
      irgl.invoke @pick(%g, %locks, %nbhd, %val) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    }
    irgl.invoke @blind(%g, %locks, %nbhd, %val) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>)
  }
  irgl.return
}

// CHECK:      irgl.kernel @pick(%g: !irgl.graph, %locks: memref<?xi32>, %nbhd: memref<?xi32>, %val: memref<?xi32>, %claim_cells: memref<?xi32>)
// CHECK:        irgl.exclusive %claim_cells iterator(%nbhd[%first to %last step %c1]) : memref<?xi32>, memref<?xi32> attributes {irgl.footprint} {
// CHECK:      irgl.kernel @blind(%g: !irgl.graph, %locks: memref<?xi32>, %nbhd: memref<?xi32>, %val: memref<?xi32>) {
// CHECK:        irgl.exclusive %locks iterator(
// CHECK-NOT:    irgl.footprint
// CHECK:      irgl.kernel host @main(
// CHECK-NEXT:   %[[N:.*]] = irgl.graph.num_nodes %g
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[D:.*]] = arith.muli %[[N]], %[[TWO]] : index
// CHECK-NEXT:   %[[S:.*]] = arith.addi %[[D]], %[[TWO]] : index
// CHECK-NEXT:   %claim_cells = memref.alloc(%[[S]]) : memref<?xi32>
// CHECK:        irgl.invoke @pick(%g, %locks, %nbhd, %val, %claim_cells)
// CHECK:        irgl.invoke @blind(%g, %locks, %nbhd, %val) :
// CHECK:        memref.dealloc %claim_cells : memref<?xi32>
// CHECK-NEXT:   }

// REMARK-DAG: remark: irgl.exclusive: claims its footprint: read the edges' destinations of %n, write %n
// REMARK-DAG: remark: irgl.exclusive: claims its lock set: the index of its 'memref.store' is neither a value from outside it nor the destination of an edge of such a node

// The claims (phases in the round body): race, grid barrier, the flag read
// by every thread, settle, grid barrier, decide; the node's cells guarded by
// its range, the edges walked by each contender (SERIAL) or as a shared edge
// loop (NESTED).
// SERIAL:       "gpu.func"
// SERIAL:       ^bb0(%g: !irgl.graph, %locks: memref<?xi32>, %nbhd: memref<?xi32>, %val: memref<?xi32>, %claim_cells: memref<?xi32>
// SERIAL:       scf.if
// SERIAL:         arith.cmpi slt
// SERIAL:         func.call @irgl_claim_write(%claim_cells
// SERIAL:       scf.for
// SERIAL:         irgl.graph.edge_dst
// SERIAL:         func.call @irgl_claim_write(%claim_cells
// SERIAL:       func.call @irgl_grid_sync()
// SERIAL:       func.call @irgl_claim_read(%claim_cells
// SERIAL:       func.call @irgl_claim_raise(%claim_cells
// SERIAL:       func.call @irgl_grid_sync()
// SERIAL:       arith.cmpi sle
// SERIAL:       arith.select
// SERIAL:       func.call @irgl_grid_sync()

// NESTED:       irgl_rt.collective active(
// NESTED-NEXT:    irgl.forall %{{.*}} in edges(%g, %{{.*}}) attributes {irgl_rt.nested_edges = #irgl_rt.nested_edges} {
// NESTED:         func.call @irgl_claim_write(%claim_cells
// NESTED:       func.call @irgl_grid_sync()
// NESTED:       irgl_rt.collective active({{.*}}) -> i32
// NESTED-NEXT:    irgl.forall %{{.*}} in edges(%g, %{{.*}}) reduce(min, %{{.*}} : i32)

// With warp_alone, a winner claiming at least 1024 elements has the whole
// block run its body (each chosen thread in turn, the highest first: its
// values broadcast, the reduction loop split over the block's threads and
// totalled, the store by its thread between two block barriers), one
// claiming at least 32 its warp (each chosen lane of a warp in turn, the
// lowest first); a lone contender's warp runs it as before.
// WARPS:        func.func private @irgl_block_alone(%[[OWNER:.*]]: i32, %[[LO:.*]]: index, %[[HI:.*]]: index, %[[N:.*]]: index, %g: !irgl.graph, %val: memref<?xi32>) attributes {irgl_rt.noinline} {
// WARPS:          %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// WARPS-NEXT:     %[[TID32:.*]] = arith.index_cast %[[TID]] : index to i32
// WARPS-NEXT:     %[[MINE:.*]] = arith.cmpi eq, %[[TID32]], %[[OWNER]] : i32
// WARPS-NEXT:     %[[SIZE:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// WARPS-NEXT:     %[[BLO:.*]] = func.call @irgl_block_bcast_index(%[[LO]], %[[OWNER]])
// WARPS:          %[[STRIDE:.*]] = arith.muli %{{.*}}, %[[SIZE]] : index
// WARPS:          %[[PART:.*]] = scf.for %e = %{{.*}} to %{{.*}} step %[[STRIDE]]
// WARPS:          %[[TOTAL:.*]] = func.call @irgl_block_reduce_max_i32(%[[PART]])
// WARPS:          func.call @irgl_block_sync()
// WARPS-NEXT:     scf.if %[[MINE]] {
// WARPS-NEXT:       memref.store
// WARPS-NEXT:     }
// WARPS-NEXT:     func.call @irgl_block_sync()
// WARPS-LABEL:  "gpu.func"
// WARPS:        %[[HUGE:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// WARPS:        scf.while (%[[WANT:.*]] = %{{.*}}) : (i1) -> (i1, i32) {
// WARPS-NEXT:     %[[ELECTED:.*]] = func.call @irgl_block_elect(%[[WANT]])
// WARPS:          scf.condition
// WARPS:        ^bb0(%{{.*}}: i1, %[[WHO:.*]]: i32):
// WARPS-NEXT:     func.call @irgl_block_alone(%[[WHO]],
// WARPS:        %[[MASK:.*]] = func.call @irgl_warp_ballot
// WARPS-NEXT:   scf.while (%[[M:.*]] = %[[MASK]]) : (i32) -> i32 {
// WARPS:          scf.condition
// WARPS:          func.call @irgl_warp_alone(
// WARPS:          arith.subi
// WARPS-NEXT:     arith.andi
// WARPS:        func.call @irgl_warp_alone1(
