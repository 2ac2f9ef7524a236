// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges{interleave=2}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops,convert-irgl-nested-edges' | filecheck %s --check-prefix=OFF
// RUN: not irgl-opt %s -p 'convert-irgl-nested-edges{interleave=0}' 2>&1 | filecheck %s --check-prefix=BAD

// convert-irgl-nested-edges{interleave=N}: every phase's edge loop (a
// thread's own small edge list, its share of a warp's or a block's) runs N
// iterations interleaved, operation by operation.

// Copies past the end: loads whose address derives from the index through
// graph accessors run unguarded; a load at a loaded address, a store and an
// atomic are guarded.
irgl.kernel @plain(%g: !irgl.graph, %level: memref<?xi32>, %next: memref<?xi32>) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %i = arith.index_cast %l : i32 to index
      %hop = memref.load %next[%i] : memref<?xi32>
      %unseen = arith.cmpi eq, %hop, %inf : i32
      scf.if %unseen {
        memref.store %inf, %level[%dst] : memref<?xi32>
      }
    }
  }
}

// A reducing edge loop: each copy's value joins the partial, the identity
// for a copy past the end.
irgl.kernel @sum(%g: !irgl.graph, %x: memref<?xf64>, %out: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  irgl.forall %n in nodes(%g) {
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %zero : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xf64>
      irgl.yield %v : f64
    }
    memref.store %s, %out[%n] : memref<?xf64>
  }
}

// BFS's visit: nested ifs are flattened, so both copies' exchanges are
// issued before either push.
irgl.kernel @visit(%g: !irgl.graph, %level: memref<?xi32>, %LEVEL: i32) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        %old = "memref.atomic_rmw"(%LEVEL, %level, %dst) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi eq, %old, %inf : i32
        scf.if %first {
          memref.store %LEVEL, %level[%dst] : memref<?xi32>
        }
      }
    }
  }
}

// A division may be undefined for a copy past the end: guarded there.
irgl.kernel @ratio(%g: !irgl.graph, %out: memref<?xi32>) {
  %c100 = arith.constant 100 : index
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %q = arith.divsi %c100, %dst : index
      %v = arith.index_cast %q : index to i32
      memref.store %v, %out[%dst] : memref<?xi32>
    }
  }
}

// The shared phases stride by the block or warp size: two strides a step.
// CHECK:      func.call @irgl_block_elect
// CHECK:      %[[BDIM:.*]] = "gpu.block_dim"
// CHECK:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[BSTEP:.*]] = arith.muli %[[BDIM]], %[[TWO]] : index
// CHECK-NEXT: scf.for %[[BE:.*]] = %{{.*}} to %[[BHI:.*]] step %[[BSTEP]] {
// CHECK-NEXT:   %[[BE1:.*]] = arith.addi %[[BE]], %[[BDIM]] : index
// CHECK-NEXT:   %{{.*}} = arith.cmpi slt, %[[BE1]], %[[BHI]] : index
// CHECK:      %[[WSIZE:.*]] = func.call @irgl_warp_size
// CHECK:      %[[WSTEP:.*]] = arith.muli %[[WSIZE]], %{{.*}} : index
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[WSTEP]] {

// The thread phase: two copies per step; copy 1 past the end takes copy 0's
// index.
// CHECK:      arith.constant 32 : index
// CHECK:      %[[STEP:.*]] = arith.constant 2 : index
// CHECK-NEXT: scf.for %[[E:.*]] = %[[LO:.*]] to %[[HI:.*]] step %[[STEP]] {
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[E1:.*]] = arith.addi %[[E]], %[[ONE]] : index
// CHECK-NEXT:   %[[VALID:.*]] = arith.cmpi slt, %[[E1]], %[[HI]] : index
// CHECK-NEXT:   %[[I1:.*]] = arith.select %[[VALID]], %[[E1]], %[[E]] : index
// Graph reads and loads at addresses derived from them: both copies unguarded.
// CHECK-NEXT:   %[[D0:.*]] = irgl.graph.edge_dst %g[%[[E]]]
// CHECK-NEXT:   %[[D1:.*]] = irgl.graph.edge_dst %g[%[[I1]]]
// CHECK-NEXT:   %[[L0:.*]] = memref.load %level[%[[D0]]] : memref<?xi32>
// CHECK-NEXT:   %[[L1:.*]] = memref.load %level[%[[D1]]] : memref<?xi32>
// CHECK-NEXT:   %[[X0:.*]] = arith.index_cast %[[L0]] : i32 to index
// CHECK-NEXT:   %[[X1:.*]] = arith.index_cast %[[L1]] : i32 to index
// A load at a loaded address: guarded in copy 1, zero when it did not run.
// CHECK-NEXT:   %[[H0:.*]] = memref.load %next[%[[X0]]] : memref<?xi32>
// CHECK-NEXT:   %[[H1:.*]] = scf.if %[[VALID]] -> (i32) {
// CHECK-NEXT:     %[[G:.*]] = memref.load %next[%[[X1]]] : memref<?xi32>
// CHECK-NEXT:     scf.yield %[[G]] : i32
// CHECK-NEXT:   } else {
// CHECK-NEXT:     %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:     scf.yield %[[Z]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[U0:.*]] = arith.cmpi eq, %[[H0]], %inf : i32
// CHECK-NEXT:   %[[U1:.*]] = arith.cmpi eq, %[[H1]], %inf : i32
// A plain scf.if is flattened: its store runs under its condition, and
// copy 1's under valid too.
// CHECK-NEXT:   scf.if %[[U0]] {
// CHECK-NEXT:     memref.store %inf, %level[%[[D0]]] : memref<?xi32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[G1:.*]] = arith.andi %[[VALID]], %[[U1]] : i1
// CHECK-NEXT:   scf.if %[[G1]] {
// CHECK-NEXT:     memref.store %inf, %level[%[[D1]]] : memref<?xi32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      {sym_name = "plain"

// The reducing loop: the partial takes copy 0's value, then copy 1's or the
// identity, in the serial loop's order.
// CHECK:      func.call @irgl_warp_is_lane
// CHECK:      arith.constant 32 : index
// CHECK:      %[[STEP2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %{{.*}} = scf.for %[[F:.*]] = %{{.*}} to %[[FHI:.*]] step %[[STEP2]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (f64) {
// CHECK:        %[[FV:.*]] = arith.cmpi slt, %{{.*}}, %[[FHI]] : index
// CHECK-NEXT:   %[[FI:.*]] = arith.select %[[FV]], %{{.*}}, %[[F]] : index
// CHECK-NEXT:   %[[U0:.*]] = irgl.graph.edge_dst %g[%[[F]]]
// CHECK-NEXT:   %[[U1:.*]] = irgl.graph.edge_dst %g[%[[FI]]]
// CHECK-NEXT:   %[[V0:.*]] = memref.load %x[%[[U0]]] : memref<?xf64>
// CHECK-NEXT:   %[[V1:.*]] = memref.load %x[%[[U1]]] : memref<?xf64>
// CHECK-NEXT:   %[[S0:.*]] = arith.addf %[[ACC]], %[[V0]] : f64
// CHECK-NEXT:   %[[ID:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %[[W1:.*]] = arith.select %[[FV]], %[[V1]], %[[ID]] : f64
// CHECK-NEXT:   %[[S1:.*]] = arith.addf %[[S0]], %[[W1]] : f64
// CHECK-NEXT:   scf.yield %[[S1]] : f64
// CHECK-NEXT: }
// CHECK:      {sym_name = "sum"

// CHECK:      func.call @irgl_warp_is_lane
// CHECK:      arith.constant 32 : index
// CHECK:      %[[STEP3:.*]] = arith.constant 2 : index
// CHECK-NEXT: scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step %[[STEP3]] {
// CHECK:        %[[VV:.*]] = arith.cmpi slt
// CHECK:        %[[W0:.*]] = arith.cmpi eq, %{{.*}}, %inf : i32
// CHECK-NEXT:   %[[W1:.*]] = arith.cmpi eq, %{{.*}}, %inf : i32
// CHECK-NEXT:   %[[O0:.*]] = scf.if %[[W0]] -> (i32) {
// CHECK-NEXT:     %{{.*}} = "memref.atomic_rmw"
// CHECK:        %[[G1:.*]] = arith.andi %[[VV]], %[[W1]] : i1
// CHECK-NEXT:   %[[O1:.*]] = scf.if %[[G1]] -> (i32) {
// CHECK-NEXT:     %{{.*}} = "memref.atomic_rmw"
// CHECK:        %[[F0:.*]] = arith.cmpi eq, %[[O0]], %inf : i32
// CHECK-NEXT:   %[[F1:.*]] = arith.cmpi eq, %[[O1]], %inf : i32
// CHECK-NEXT:   %[[H0:.*]] = arith.andi %[[W0]], %[[F0]] : i1
// CHECK-NEXT:   scf.if %[[H0]] {
// CHECK-NEXT:     memref.store %LEVEL
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[H1:.*]] = arith.andi %[[G1]], %[[F1]] : i1
// CHECK-NEXT:   scf.if %[[H1]] {
// CHECK-NEXT:     memref.store %LEVEL
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      {sym_name = "visit"

// CHECK:      func.call @irgl_warp_is_lane
// CHECK:      arith.constant 32 : index
// CHECK:      %[[STEP4:.*]] = arith.constant 2 : index
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STEP4]] {
// CHECK:        %[[RV:.*]] = arith.cmpi slt
// CHECK:        %[[R0:.*]] = irgl.graph.edge_dst
// CHECK-NEXT:   %[[R1:.*]] = irgl.graph.edge_dst
// CHECK-NEXT:   %[[Q0:.*]] = arith.divsi %c100, %[[R0]] : index
// CHECK-NEXT:   %[[Q1:.*]] = scf.if %[[RV]] -> (index) {
// CHECK-NEXT:     %{{.*}} = arith.divsi %c100, %[[R1]] : index
// CHECK:      {sym_name = "ratio"

// Without the option the thread phase walks one edge at a time.
// OFF:      func.call @irgl_warp_is_lane
// OFF:      %[[ONE:.*]] = arith.constant 1 : index
// OFF-NEXT:   scf.if
// OFF-NEXT:   scf.for %e = %{{.*}} to %{{.*}} step %[[ONE]] {
// OFF-NEXT:     %[[DST:dst_[0-9]+]] = irgl.graph.edge_dst %g[%e]
// OFF-NEXT:     %{{l_[0-9]+}} = memref.load %level[%[[DST]]] : memref<?xi32>
// OFF:        {sym_name = "plain"

// BAD: convert-irgl-nested-edges: interleave must be at least 1, got 0
