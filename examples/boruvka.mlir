// Borůvka's minimum spanning tree: the Find-Minimum-Cross-Component-Edge
// kernel of the specification's listing, driven by a host kernel.
//
// Every node starts as its own component. find_min_edge finds, for each node
// on the worklist, its lightest edge to another component and, holding the
// component's lock (a blocking irgl.atomic, so it may lower to a ticket
// lock), updates the component's minimum weight AND minimum edge together,
// which no single CUDA atomic can do. Nodes that have a cross-component edge
// are pushed; mark_min_edges then adds each component's minimum edge to the
// tree. This is one Borůvka round (hooking components and repeating is left
// to the full benchmark); by Borůvka's lemma every marked edge is in the MST.
// Ties are broken by the edge id, a strict total order on one node's edges.

// Every node is its own component; no component has a minimum edge yet
// (num_edges stands for "no edge") and no edge is in the tree.
irgl.kernel @init(%g: !irgl.graph, %components: memref<?xindex>, %component_minwt: memref<?xi32>, %component_minedge: memref<?xindex>, %in_mst: memref<?xi32>, %nodes: memref<?xindex>) {
  %inf = arith.constant 2147483647 : i32
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %no_edge = irgl.graph.num_edges %g
  irgl.forall %n in nodes(%g) {
    memref.store %n, %components[%n] : memref<?xindex>
    memref.store %inf, %component_minwt[%n] : memref<?xi32>
    memref.store %no_edge, %component_minedge[%n] : memref<?xindex>
    memref.store %n, %nodes[%n] : memref<?xindex>
  }
  irgl.forall %e in range(%c0, %no_edge) {
    memref.store %zero, %in_mst[%e] : memref<?xi32>
  }
}

// The specification's find-min-edge kernel. The worklist initially contains
// all nodes.
irgl.kernel @find_min_edge(%g: !irgl.graph, %components: memref<?xindex>, %component_locks: memref<?xi32>, %component_minwt: memref<?xi32>, %component_minedge: memref<?xindex>) {
  %inf = arith.constant 2147483647 : i32
  irgl.forall %nidx in worklist {
    %n = irgl.wl.pop %nidx
    %n_component = memref.load %components[%n] : memref<?xindex>
    // minwt and minedge: the lightest cross-component edge out of n so far.
    %minwt_cell = memref.alloca() : memref<i32>
    %minedge_cell = memref.alloca() : memref<index>
    %no_edge = irgl.graph.num_edges %g
    memref.store %inf, %minwt_cell[] : memref<i32>
    memref.store %no_edge, %minedge_cell[] : memref<index>
    irgl.for %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %dst_component = memref.load %components[%dst] : memref<?xindex>
      %cross = arith.cmpi ne, %dst_component, %n_component : index
      %w = irgl.graph.edge_weight %g[%e] : i32
      %best = memref.load %minwt_cell[] : memref<i32>
      %lighter = arith.cmpi slt, %w, %best : i32
      %better = arith.andi %cross, %lighter : i1
      scf.if %better {
        memref.store %w, %minwt_cell[] : memref<i32>
        memref.store %e, %minedge_cell[] : memref<index>
      }
    }
    %minwt = memref.load %minwt_cell[] : memref<i32>
    %minedge = memref.load %minedge_cell[] : memref<index>
    // Both fields of the component change together, under its lock.
    irgl.atomic %component_locks[%n_component] : memref<?xi32> {
      %cur_wt = memref.load %component_minwt[%n_component] : memref<?xi32>
      %cur_edge = memref.load %component_minedge[%n_component] : memref<?xindex>
      %heavier = arith.cmpi sgt, %cur_wt, %minwt : i32
      %same_wt = arith.cmpi eq, %cur_wt, %minwt : i32
      %lower_id = arith.cmpi ult, %minedge, %cur_edge : index
      %tie = arith.andi %same_wt, %lower_id : i1
      %improves = arith.ori %heavier, %tie : i1
      scf.if %improves {
        memref.store %minwt, %component_minwt[%n_component] : memref<?xi32>
        memref.store %minedge, %component_minedge[%n_component] : memref<?xindex>
      }
    }
    // The node has a cross-component edge: it stays in the computation.
    %has_cross = arith.cmpi slt, %minwt, %inf : i32
    scf.if %has_cross {
      irgl.wl.push %n
    }
  }
}

// For every node left on the worklist that represents its component, put the
// component's minimum edge in the tree.
irgl.kernel @mark_min_edges(%components: memref<?xindex>, %component_minedge: memref<?xindex>, %in_mst: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %nidx in worklist {
    %n = irgl.wl.pop %nidx
    %component = memref.load %components[%n] : memref<?xindex>
    %is_rep = arith.cmpi eq, %component, %n : index
    scf.if %is_rep {
      %e = memref.load %component_minedge[%component] : memref<?xindex>
      memref.store %one, %in_mst[%e] : memref<?xi32>
    }
  }
}

// One Borůvka round: in_mst[e] = 1 for the lightest edge out of every node.
irgl.kernel host @main(%g: !irgl.graph, %components: memref<?xindex>, %component_minwt: memref<?xi32>, %component_minedge: memref<?xindex>, %in_mst: memref<?xi32>) {
  %nn = irgl.graph.num_nodes %g
  // Device allocations are zero-initialized: every lock starts free.
  %component_locks = memref.alloc(%nn) : memref<?xi32>
  %nodes = memref.alloc(%nn) : memref<?xindex>
  irgl.invoke @init(%g, %components, %component_minwt, %component_minedge, %in_mst, %nodes) : (!irgl.graph, memref<?xindex>, memref<?xi32>, memref<?xindex>, memref<?xi32>, memref<?xindex>)
  // The worklist initially contains all nodes; find_min_edge forwards the
  // nodes that have a cross-component edge to mark_min_edges.
  irgl.pipe once initial %nodes[%nn] : memref<?xindex> {
    irgl.invoke @find_min_edge(%g, %components, %component_locks, %component_minwt, %component_minedge) : (!irgl.graph, memref<?xindex>, memref<?xi32>, memref<?xi32>, memref<?xindex>)
    irgl.invoke @mark_min_edges(%components, %component_minedge, %in_mst) : (memref<?xindex>, memref<?xindex>, memref<?xi32>)
  }
  memref.dealloc %nodes : memref<?xindex>
  memref.dealloc %component_locks : memref<?xi32>
}
