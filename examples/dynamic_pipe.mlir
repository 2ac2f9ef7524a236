// Dynamic piping: the specification's "Example of Dynamic Piping" listing.
//
//   Pipe Once {
//     Invoke A();
//     if (cond) { Invoke B(); } else { Invoke C(); }
//   }
//
// The flow of worklists is decided at run time: the worklist that A fills is
// consumed by B or by C. Here A collects the hubs of a graph (nodes of degree
// above a threshold); B labels the hubs themselves, C labels their
// neighbours, as the host's `hubs_only` argument chooses. `label` is expected
// to be zero on entry.

// A: push every node whose degree exceeds the threshold.
irgl.kernel @find_hubs(%g: !irgl.graph, %threshold: index) {
  irgl.forall %n in nodes(%g) {
    %deg = irgl.graph.degree %g[%n]
    %hub = arith.cmpi ugt, %deg, %threshold : index
    scf.if %hub {
      irgl.wl.push %n
    }
  }
}

// B: label each hub on the worklist.
irgl.kernel @label_hubs(%g: !irgl.graph, %label: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    memref.store %one, %label[%n] : memref<?xi32>
  }
}

// C: label the neighbours of each hub on the worklist.
irgl.kernel @label_hub_neighbours(%g: !irgl.graph, %label: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      memref.store %one, %label[%dst] : memref<?xi32>
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %label: memref<?xi32>, %threshold: index, %hubs_only: i1) {
  irgl.pipe once {
    irgl.invoke @find_hubs(%g, %threshold) : (!irgl.graph, index)
    scf.if %hubs_only {
      irgl.invoke @label_hubs(%g, %label) : (!irgl.graph, memref<?xi32>)
    } else {
      irgl.invoke @label_hub_neighbours(%g, %label) : (!irgl.graph, memref<?xi32>)
    }
  }
}
