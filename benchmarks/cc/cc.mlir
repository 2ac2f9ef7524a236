// Connected components by lock-free union-find (hooking and path halving, in
// the style of ECL-CC), driven by a worklist of nodes. Each undirected edge
// {n, v} with n < v unites the trees of n and v: the larger root is hooked
// under the smaller one with a compare-and-swap, retried until the roots
// agree. The root of every tree is the smallest node id of its component, so
// after the final compression comp[n] is that id.
//
// A node with at least half of the (directed) edges, a star's hub, would
// walk them alone while the rest of the grid idles; instead its neighbours
// hook those edges from their side (the graph is symmetric: each edge is
// also theirs), and the hub skips its own. At most one node qualifies in a
// symmetric graph without duplicate edges (two would hold every edge, all
// between them: one edge, which the degree >= 2 test excludes), so no edge
// is left out. `%huge` is that degree (the host passes the edge count + 1,
// which no node reaches, when there is no such node).

// Every node is its own tree; all nodes go on the worklist.
irgl.kernel @init(%g: !irgl.graph, %parent: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %self = arith.index_cast %n : index to i32
    memref.store %self, %parent[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

irgl.kernel @hook(%g: !irgl.graph, %parent: memref<?xi32>, %huge: index, %has_huge: i1) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %n32 = arith.index_cast %n : index to i32
    %deg_n = irgl.graph.degree %g[%n]
    %light = arith.cmpi ult, %deg_n, %huge : index
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %above = arith.cmpi ugt, %v, %n : index
      // an edge to the hub is hooked by its other end, whichever id is lower
      %to_hub = scf.if %has_huge -> (i1) {
        %deg_v = irgl.graph.degree %g[%v]
        %hub_v = arith.cmpi uge, %deg_v, %huge : index
        scf.yield %hub_v : i1
      } else {
        %no = arith.constant false
        scf.yield %no : i1
      }
      %mine = arith.ori %above, %to_hub : i1
      %forward = arith.andi %mine, %light : i1
      scf.if %forward {
        %v32 = arith.index_cast %v : index to i32
        %false = arith.constant false
        // until the two roots are the same tree
        %a_end, %b_end, %done_end = scf.while (%a = %n32, %b = %v32, %done = %false) : (i32, i32, i1) -> (i32, i32, i1) {
          %true = arith.constant true
          %go = arith.xori %done, %true : i1
          scf.condition(%go) %a, %b, %done : i32, i32, i1
        } do {
        ^bb0(%a: i32, %b: i32, %done: i1):
          // find the roots of a and b, halving their paths
          %ra, %pa = scf.while (%x = %a) : (i32) -> (i32, i32) {
            %xi = arith.index_cast %x : i32 to index
            %p = memref.load %parent[%xi] : memref<?xi32>
            %up = arith.cmpi ne, %p, %x : i32
            scf.condition(%up) %x, %p : i32, i32
          } do {
          ^bb1(%x: i32, %p: i32):
            %xi = arith.index_cast %x : i32 to index
            %pi = arith.index_cast %p : i32 to index
            %gp = memref.load %parent[%pi] : memref<?xi32>
            memref.store %gp, %parent[%xi] : memref<?xi32>
            scf.yield %gp : i32
          }
          %rb, %pb = scf.while (%x = %b) : (i32) -> (i32, i32) {
            %xi = arith.index_cast %x : i32 to index
            %p = memref.load %parent[%xi] : memref<?xi32>
            %up = arith.cmpi ne, %p, %x : i32
            scf.condition(%up) %x, %p : i32, i32
          } do {
          ^bb1(%x: i32, %p: i32):
            %xi = arith.index_cast %x : i32 to index
            %pi = arith.index_cast %p : i32 to index
            %gp = memref.load %parent[%pi] : memref<?xi32>
            memref.store %gp, %parent[%xi] : memref<?xi32>
            scf.yield %gp : i32
          }
          %same = arith.cmpi eq, %ra, %rb : i32
          %lo = arith.minsi %ra, %rb : i32
          %hi = arith.maxsi %ra, %rb : i32
          %hooked = scf.if %same -> (i1) {
            scf.yield %same : i1
          } else {
            %hii = arith.index_cast %hi : i32 to index
            %old = irgl.cexpr "atomicCAS(&$0[$1], $2, $3)" (%parent, %hii, %hi, %lo : memref<?xi32>, index, i32, i32) : i32
            %won = arith.cmpi eq, %old, %hi : i32
            scf.yield %won : i1
          }
          scf.yield %ra, %rb, %hooked : i32, i32, i1
        }
      }
    }
  }
}

// Point every node at its root.
irgl.kernel @compress(%g: !irgl.graph, %parent: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %n32 = arith.index_cast %n : index to i32
    %root, %last = scf.while (%x = %n32) : (i32) -> (i32, i32) {
      %xi = arith.index_cast %x : i32 to index
      %p = memref.load %parent[%xi] : memref<?xi32>
      %up = arith.cmpi ne, %p, %x : i32
      scf.condition(%up) %x, %p : i32, i32
    } do {
    ^bb0(%x: i32, %p: i32):
      scf.yield %p : i32
    }
    memref.store %root, %parent[%n] : memref<?xi32>
  }
}

irgl.kernel host @main(%g: !irgl.graph, %comp: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ne = irgl.graph.num_edges %g
  %dmax = irgl.graph.max_degree %g
  %twice = arith.muli %dmax, %c2 : index
  %half = arith.cmpi uge, %twice, %ne : index
  %several = arith.cmpi uge, %dmax, %c2 : index
  %has_huge = arith.andi %half, %several : i1
  %none = arith.addi %ne, %c1 : index
  %huge = arith.select %has_huge, %dmax, %none : index
  irgl.pipe once {
    irgl.invoke @init(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @hook(%g, %comp, %huge, %has_huge) : (!irgl.graph, memref<?xi32>, index, i1)
  }
  irgl.invoke @compress(%g, %comp) : (!irgl.graph, memref<?xi32>)
}
