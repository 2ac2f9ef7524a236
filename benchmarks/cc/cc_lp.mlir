// Connected components by label propagation: every node starts with its own
// id as label, and a worklist round lowers each neighbour's label to the
// node's with an atomic min, pushing the neighbours it lowered. It ends with
// every node labelled with the smallest node id of its component, the
// labels of benchmarks/cc/cc.mlir, in as many rounds as the largest
// component's diameter (union-find, cc.mlir, needs far fewer).
//
// A node is pushed at most once a round: `stamp` holds the last round that
// pushed it, and a thread whose label beats the one it loaded issues its
// atomic min and, beside it, an atomic exchange of the stamp; the first
// exchange of the round pushes (SSSP's rule, benchmarks/sssp/sssp.mlir).
// Pushing at every lowering instead overflowed the worklist (capacity
// edges + 1) on one GPU on an 8192x8192 grid: a copy of a node popped after
// its label fell again in the same round lowers its neighbours anew, so a
// round's pushes were not bounded by the edges.
//
// This is the form of CC that irgl-distribute can distribute (see
// lowering/distribute.py): cc.mlir chases parent pointers (a node array
// indexed by values loaded from it) and hooks with C text (atomicCAS), and a
// node reached through a pointer may live on any rank. Here every write is
// an atomic min at a neighbour (synchronized as `sync_nodes min`) and every
// label is a node id used as data (a global id on every rank).

irgl.kernel @init(%g: !irgl.graph, %comp: memref<?xi32>, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %self = arith.index_cast %n : index to i32
    memref.store %self, %comp[%n] : memref<?xi32>
    memref.store %zero, %stamp[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

// Round ROUND (from 1): lower each neighbour's label to the node's.
irgl.kernel @propagate(%g: !irgl.graph, %comp: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %label = memref.load %comp[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %lv = memref.load %comp[%v] : memref<?xi32>
      %smaller = arith.cmpi slt, %label, %lv : i32
      scf.if %smaller {
        // kind 7 = mins; nothing waits for its result
        %old = "memref.atomic_rmw"(%label, %comp, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        // kind 2 = assign: the first thread of this round to get here
        // pushes (issued beside the min, not after it)
        %last = "memref.atomic_rmw"(%ROUND, %stamp, %v) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi ne, %last, %ROUND : i32
        scf.if %first {
          irgl.wl.push %v
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %comp: memref<?xi32>) {
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe once {
    irgl.invoke @init(%g, %comp, %stamp) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
    %rounds = irgl.iterate @propagate(%g, %comp, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}
