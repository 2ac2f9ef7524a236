// Every node adds one to a counter of each of its neighbours, with a plain
// load and store inside an Exclusive: only mutual exclusion keeps the counts
// (each node's in-degree). The Exclusive's own lock set is the closed
// neighbourhood; irgl-exclusive-footprint derives writes of the neighbours'
// counters instead. With %spread = 1 each item also writes its own cell of
// `own` at `n + num_nodes`, beyond the graph's nodes: an element without
// claim cells, so its rounds are decided by the highest contender alone.
// Losers retry until every node has won once.

irgl.kernel @init(%g: !irgl.graph, %nbhd: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  irgl.forall %n in nodes(%g) {
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    %row = arith.addi %first, %n : index
    %id = arith.index_cast %n : index to i32
    memref.store %id, %nbhd[%row] : memref<?xi32>
    scf.for %e = %first to %last step %c1 {
      %t = irgl.graph.edge_dst %g[%e]
      %t32 = arith.index_cast %t : index to i32
      %at0 = arith.addi %e, %n : index
      %at = arith.addi %at0, %c1 : index
      memref.store %t32, %nbhd[%at] : memref<?xi32>
    }
    irgl.wl.push %n
  }
}

irgl.kernel @bump(%g: !irgl.graph, %nbhd: memref<?xi32>, %claims: memref<?xi32>, %count: memref<?xi32>, %own: memref<?xi32>, %spread: index) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    %start = arith.addi %first, %n : index
    %end0 = arith.addi %last, %n : index
    %end = arith.addi %end0, %c1 : index
    %nn = irgl.graph.num_nodes %g
    %far = arith.muli %nn, %spread : index
    %mine = arith.addi %n, %far : index
    irgl.exclusive %claims iterator(%nbhd[%start to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      scf.for %e = %first to %last step %c1 {
        %t = irgl.graph.edge_dst %g[%e]
        %v = memref.load %count[%t] : memref<?xi32>
        %w = arith.addi %v, %one : i32
        memref.store %w, %count[%t] : memref<?xi32>
      }
      %o = memref.load %own[%mine] : memref<?xi32>
      %p = arith.addi %o, %one : i32
      memref.store %p, %own[%mine] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

// count: in-degrees; own[n + spread * num_nodes] = 1 for every node n.
irgl.kernel host @main(%g: !irgl.graph, %count: memref<?xi32>, %own: memref<?xi32>, %spread: index) {
  %nn = irgl.graph.num_nodes %g
  %ne = irgl.graph.num_edges %g
  %size = arith.addi %nn, %ne : index
  %nbhd = memref.alloc(%size) : memref<?xi32>
  %claims = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe once {
    irgl.invoke @init(%g, %nbhd) : (!irgl.graph, memref<?xi32>)
    irgl.pipe {
      irgl.invoke @bump(%g, %nbhd, %claims, %count, %own, %spread) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, index)
    }
  }
  memref.dealloc %claims : memref<?xi32>
  memref.dealloc %nbhd : memref<?xi32>
  irgl.return
}
