// Data-driven connected components by minimum-label propagation.
// Every node starts with its own id as label; a node whose label drops
// pushes itself so that its neighbours see the new label next round.

irgl.kernel @init(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %label = arith.index_cast %n : index to i32
    memref.store %label, %comp[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

irgl.kernel @propagate(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %c = memref.load %comp[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%c, %comp, %dst) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %c, %old : i32
      scf.if %lower {
        irgl.wl.push %dst
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
