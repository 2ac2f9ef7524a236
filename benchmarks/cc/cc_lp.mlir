// Connected components by label propagation: every node starts with its own
// id as label, and a worklist round lowers each neighbour's label to the
// node's with an atomic min, pushing the neighbours it lowered. It ends with
// every node labelled with the smallest node id of its component, the
// labels of benchmarks/cc/cc.mlir, in as many rounds as the largest
// component's diameter (union-find, cc.mlir, needs far fewer).
//
// This is the form of CC that irgl-distribute can distribute (see
// lowering/distribute.py): cc.mlir chases parent pointers (a node array
// indexed by values loaded from it) and hooks with C text (atomicCAS), and a
// node reached through a pointer may live on any rank. Here every write is
// an atomic min at a neighbour (synchronized as `sync_nodes min`) and every
// label is a node id used as data (a global id on every rank).

irgl.kernel @init(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %self = arith.index_cast %n : index to i32
    memref.store %self, %comp[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

irgl.kernel @propagate(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %label = memref.load %comp[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %lv = memref.load %comp[%v] : memref<?xi32>
      %smaller = arith.cmpi slt, %label, %lv : i32
      scf.if %smaller {
        // kind 7 = mins: the label before
        %old = "memref.atomic_rmw"(%label, %comp, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %lowered = arith.cmpi slt, %label, %old : i32
        scf.if %lowered {
          irgl.wl.push %v
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.pipe once {
    irgl.invoke @init(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.iterate @propagate(%g, %comp) : (!irgl.graph, memref<?xi32>) {
    }
  }
}
