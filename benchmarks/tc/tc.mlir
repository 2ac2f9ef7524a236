// Triangle counting, two ways; the host picks one by the graph's density.
//
// - Graphs with at most 4 edges per node on average (grids, meshes, chains)
//   run @count_low_degree alone: no preprocessing, each triangle found at
//   its lowest edge by intersecting two sorted rows. Their lists are short,
//   so the four passes of the DAG build below would cost more than the
//   whole count (H100, 2048x2048 grid, every array uploaded before each
//   run: 0.50 ms with the DAG, 0.19 without; 0.094 without and the
//   scratch uploaded once, benchmarks/RESULTS.md).
// - Denser graphs count on the degree-oriented DAG, intersected by merge
//   (below), which bounds the work around hubs (RMAT 20: 251 ms -> 31 ms).
//
// The degree-oriented DAG, intersected by merge.
//
// Nodes are ranked by (degree, id); the DAG orients every edge from its
// lower- to its higher-ranked end, so a node's out-list out(n) holds only
// higher-ranked neighbours and has at most sqrt(2m) entries for m undirected
// edges (each of them has at least as many edges as n; a hub has few
// neighbours of higher degree). A triangle u < v < w (by rank) is counted
// once, at its middle node v, for its DAG edge u -> v: w is in out(u) and in
// out(v). Nothing lower-ranked than v is ever looked at again.
//
// Each row of the CSR graph is rebuilt in place in `lists` (same slots):
//
//   lists[first(n) .. first(n) + nout[n])   out(n), sorted by id
//   lists[last(n) - nin[n] .. last(n))      in(n): lower-ranked neighbours
//
// which fill the row exactly on a simple graph (self loops are dropped).
//
//   @reset      zeroes count, nout and nin;
//   @orient     appends every neighbour to out(n) (into `unsorted`) or to
//               in(n) (into `lists`) at a slot taken with an atomic counter:
//               any order, any schedule;
//   @sort_out   copies out(n) into `lists` sorted by id: as it is if it came
//               in order (it does whenever one thread appended it all), else
//               each entry at its rank (the number of smaller entries);
//   @count_triangles
//               for each node v and each u in in(v), merges the sorted
//               out(u) and out(v): O(|out(u)| + |out(v)|) per DAG edge, no
//               degree lookups and no binary searches. The lanes of a warp
//               or block share v (irgl-nested-parallelism shares a node's
//               edge loop), so they all walk the same short out(v), and the
//               in-list slots sit together at the end of the row so they
//               fill whole warps; the counts of a node's edges are summed by
//               an edge-loop reduction and added to count[0] (int64) with one
//               atomic per node that closes triangles.
//
// The edge loops of @orient, @sort_out and @count_triangles all walk the whole row
// (edges(%g, %n)) and act on the slots of one of its two parts.

irgl.kernel @reset(%g: !irgl.graph, %count: memref<?xi64>, %nout: memref<?xi32>,
                   %nin: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %zero64 = arith.constant 0 : i64
  %nodes = irgl.graph.num_nodes %g
  // one more iteration than nodes, so that count is zeroed on an empty graph
  %hi = arith.addi %nodes, %c1 : index
  irgl.forall %i in range(%c0, %hi) {
    %is_node = arith.cmpi ult, %i, %nodes : index
    scf.if %is_node {
      memref.store %zero, %nout[%i] : memref<?xi32>
      memref.store %zero, %nin[%i] : memref<?xi32>
    }
    %first = arith.cmpi eq, %i, %c0 : index
    scf.if %first {
      memref.store %zero64, %count[%c0] : memref<?xi64>
    }
  }
}

irgl.kernel @orient(%g: !irgl.graph, %nout: memref<?xi32>, %nin: memref<?xi32>,
                    %unsorted: memref<?xi32>, %lists: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    %dn = irgl.graph.degree %g[%n]
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    irgl.forall %e in edges(%g, %n) {
      %u = irgl.graph.edge_dst %g[%e]
      %du = irgl.graph.degree %g[%u]
      %u32 = arith.index_cast %u : index to i32
      // rank(u) > rank(n): (du, u) > (dn, n)
      %more = arith.cmpi ugt, %du, %dn : index
      %same = arith.cmpi eq, %du, %dn : index
      %after = arith.cmpi ugt, %u, %n : index
      %tie = arith.andi %same, %after : i1
      %above = arith.ori %more, %tie : i1
      %self = arith.cmpi eq, %u, %n : index
      scf.if %above {
        // kind 1 = addi
        %k = "memref.atomic_rmw"(%one, %nout, %n) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
        %ki = arith.index_cast %k : i32 to index
        %slot = arith.addi %first, %ki : index
        memref.store %u32, %unsorted[%slot] : memref<?xi32>
      } else {
        %proper = arith.cmpi ne, %u, %n : index
        scf.if %proper {
          %k = "memref.atomic_rmw"(%one, %nin, %n) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
          %ki = arith.index_cast %k : i32 to index
          %end = arith.subi %last, %c1 : index
          %slot = arith.subi %end, %ki : index
          memref.store %u32, %lists[%slot] : memref<?xi32>
        }
      }
    }
  }
}

irgl.kernel @sort_out(%g: !irgl.graph, %nout: memref<?xi32>, %unsorted: memref<?xi32>,
                      %lists: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %none = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {
    %first = irgl.graph.first_edge %g[%n]
    %k32 = memref.load %nout[%n] : memref<?xi32>
    %k = arith.index_cast %k32 : i32 to index
    %end = arith.addi %first, %k : index
    // adjacent pairs out of order: none when one thread appended the whole
    // list (its atomics return increasing slots), as for every small node
    %inversions = irgl.forall %e in edges(%g, %n) reduce(add, %none : i32) {
      %next = arith.addi %e, %c1 : index
      %pair = arith.cmpi ult, %next, %end : index
      %bad = scf.if %pair -> (i32) {
        %x = memref.load %unsorted[%e] : memref<?xi32>
        %y = memref.load %unsorted[%next] : memref<?xi32>
        %down = arith.cmpi sgt, %x, %y : i32
        %bad_here = arith.select %down, %one, %none : i32
        scf.yield %bad_here : i32
      } else {
        scf.yield %none : i32
      }
      irgl.yield %bad : i32
    }
    %sorted = arith.cmpi eq, %inversions, %none : i32
    irgl.forall %e in edges(%g, %n) {
      %is_out = arith.cmpi ult, %e, %end : index
      scf.if %is_out {
        %x = memref.load %unsorted[%e] : memref<?xi32>
        %slot = scf.if %sorted -> (index) {
          scf.yield %e : index
        } else {
          // its rank: the number of smaller entries
          %rank = scf.for %j = %first to %end step %c1 iter_args(%acc = %c0) -> (index) {
            %y = memref.load %unsorted[%j] : memref<?xi32>
            %smaller = arith.cmpi slt, %y, %x : i32
            %add = arith.select %smaller, %c1, %c0 : index
            %acc_next = arith.addi %acc, %add : index
            scf.yield %acc_next : index
          }
          %ranked = arith.addi %first, %rank : index
          scf.yield %ranked : index
        }
        memref.store %x, %lists[%slot] : memref<?xi32>
      }
    }
  }
}

irgl.kernel @count_triangles(%g: !irgl.graph, %count: memref<?xi64>, %nout: memref<?xi32>,
                   %nin: memref<?xi32>, %lists: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %zero32 = arith.constant 0 : i32
  irgl.forall %v in nodes(%g) {
    %v_first = irgl.graph.first_edge %g[%v]
    %v_last = irgl.graph.last_edge %g[%v]
    %kv32 = memref.load %nout[%v] : memref<?xi32>
    %kv = arith.index_cast %kv32 : i32 to index
    %v_end = arith.addi %v_first, %kv : index
    %v_has = arith.cmpi ult, %v_first, %v_end : index
    %in32 = memref.load %nin[%v] : memref<?xi32>
    %in = arith.index_cast %in32 : i32 to index
    %in_first = arith.subi %v_last, %in : index
    %found = irgl.forall %e in edges(%g, %v) reduce(add, %zero : i64) {
      // an edge u -> v of the DAG with out(v) non-empty
      %is_in = arith.cmpi uge, %e, %in_first : index
      %useful = arith.andi %is_in, %v_has : i1
      %closed = scf.if %useful -> (i64) {
        %u32 = memref.load %lists[%e] : memref<?xi32>
        %u = arith.index_cast %u32 : i32 to index
        %u_first = irgl.graph.first_edge %g[%u]
        %ku32 = memref.load %nout[%u] : memref<?xi32>
        %ku = arith.index_cast %ku32 : i32 to index
        %u_end = arith.addi %u_first, %ku : index
        // out(u) holds v on a symmetric graph; checked all the same, so that
        // no head is read past its list
        %u_has = arith.cmpi ult, %u_first, %u_end : index
        %merged = scf.if %u_has -> (i64) {
          %a0 = memref.load %lists[%u_first] : memref<?xi32>
          %b0 = memref.load %lists[%v_first] : memref<?xi32>
          // |out(u) & out(v)| by merge, each list's head kept in a register
          %r:5 = scf.while (%i = %u_first, %j = %v_first, %a = %a0, %b = %b0, %acc = %zero32)
              : (index, index, i32, i32, i32) -> (index, index, i32, i32, i32) {
            %i_in = arith.cmpi ult, %i, %u_end : index
            %j_in = arith.cmpi ult, %j, %v_end : index
            %go = arith.andi %i_in, %j_in : i1
            scf.condition(%go) %i, %j, %a, %b, %acc : index, index, i32, i32, i32
          } do {
          ^bb0(%i: index, %j: index, %a: i32, %b: i32, %acc: i32):
            %step_a = arith.cmpi sle, %a, %b : i32
            %step_b = arith.cmpi sle, %b, %a : i32
            %same = arith.andi %step_a, %step_b : i1
            %hit = arith.extui %same : i1 to i32
            %acc_next = arith.addi %acc, %hit : i32
            %i1 = arith.addi %i, %c1 : index
            %j1 = arith.addi %j, %c1 : index
            %i_next = arith.select %step_a, %i1, %i : index
            %j_next = arith.select %step_b, %j1, %j : index
            // reload only the head that moved, and only inside its list
            %a_next = scf.if %step_a -> (i32) {
              %a_in = arith.cmpi ult, %i1, %u_end : index
              %ia = arith.select %a_in, %i1, %i : index
              %x = memref.load %lists[%ia] : memref<?xi32>
              scf.yield %x : i32
            } else {
              scf.yield %a : i32
            }
            %b_next = scf.if %step_b -> (i32) {
              %b_in = arith.cmpi ult, %j1, %v_end : index
              %jb = arith.select %b_in, %j1, %j : index
              %y = memref.load %lists[%jb] : memref<?xi32>
              scf.yield %y : i32
            } else {
              scf.yield %b : i32
            }
            scf.yield %i_next, %j_next, %a_next, %b_next, %acc_next : index, index, i32, i32, i32
          }
          %closed_here = arith.extui %r#4 : i32 to i64
          scf.yield %closed_here : i64
        } else {
          scf.yield %zero : i64
        }
        scf.yield %merged : i64
      } else {
        scf.yield %zero : i64
      }
      irgl.yield %closed : i64
    }
    %any = arith.cmpi ne, %found, %zero : i64
    scf.if %any {
      // kind 1 = addi
      %old = "memref.atomic_rmw"(%found, %count, %c0) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
    }
  }
}

// Low-degree graphs: each triangle a < b < c (by id) is counted once, at
// its edge a -> b: c is in n = a's row after b's slot (the rows are sorted)
// and in v = b's row above b, found by a binary search. The two sorted
// lists are intersected by walking the shorter one and binary-searching
// each entry in the rest of the longer (whose lower bound only rises), so
// an edge next to a hub costs the small side times a logarithm, never the
// hub's whole list. The edge loop is a ForAll with a reduction: nested
// parallelism shares a hub's row across a warp or a block, and a node
// that closes triangles adds them to count[0] with one atomic.
irgl.kernel @count_low_degree(%g: !irgl.graph, %count: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  irgl.forall %n in nodes(%g) {
    %n_last = irgl.graph.last_edge %g[%n]
    %found = irgl.forall %e in edges(%g, %n) reduce(add, %zero : i64) {
      %v = irgl.graph.edge_dst %g[%e]
      %upper = arith.cmpi ugt, %v, %n : index
      %closed = scf.if %upper -> (i64) {
        %v_first = irgl.graph.first_edge %g[%v]
        %v_last = irgl.graph.last_edge %g[%v]
        // the first slot of v's row above v
        %above:2 = scf.while (%lo = %v_first, %hi = %v_last) : (index, index) -> (index, index) {
          %open = arith.cmpi ult, %lo, %hi : index
          scf.condition(%open) %lo, %hi : index, index
        } do {
        ^bb0(%lo: index, %hi: index):
          %span = arith.subi %hi, %lo : index
          %half = arith.shrui %span, %c1 : index
          %mid = arith.addi %lo, %half : index
          %x = irgl.graph.edge_dst %g[%mid]
          %not_above = arith.cmpi ule, %x, %v : index
          %after_mid = arith.addi %mid, %c1 : index
          %lo_next = arith.select %not_above, %after_mid, %lo : index
          %hi_next = arith.select %not_above, %hi, %mid : index
          scf.yield %lo_next, %hi_next : index, index
        }
        // n's entries after v: (e, n_last); v's entries above v: [above, v_last)
        %a_first = arith.addi %e, %c1 : index
        %a_len = arith.subi %n_last, %a_first : index
        %b_len = arith.subi %v_last, %above#0 : index
        %a_short = arith.cmpi ule, %a_len, %b_len : index
        %s_first = arith.select %a_short, %a_first, %above#0 : index
        %s_last = arith.select %a_short, %n_last, %v_last : index
        %l_first = arith.select %a_short, %above#0, %a_first : index
        %l_last = arith.select %a_short, %v_last, %n_last : index
        %walk:2 = scf.for %k = %s_first to %s_last step %c1 iter_args(%acc = %zero, %from = %l_first) -> (i64, index) {
          %w = irgl.graph.edge_dst %g[%k]
          // the first slot of the longer list at or above w
          %at:2 = scf.while (%lo = %from, %hi = %l_last) : (index, index) -> (index, index) {
            %open = arith.cmpi ult, %lo, %hi : index
            scf.condition(%open) %lo, %hi : index, index
          } do {
          ^bb0(%lo: index, %hi: index):
            %span = arith.subi %hi, %lo : index
            %half = arith.shrui %span, %c1 : index
            %mid = arith.addi %lo, %half : index
            %x = irgl.graph.edge_dst %g[%mid]
            %below = arith.cmpi ult, %x, %w : index
            %after_mid = arith.addi %mid, %c1 : index
            %lo_next = arith.select %below, %after_mid, %lo : index
            %hi_next = arith.select %below, %hi, %mid : index
            scf.yield %lo_next, %hi_next : index, index
          }
          %inside = arith.cmpi ult, %at#0, %l_last : index
          %slot = arith.select %inside, %at#0, %k : index
          %x = irgl.graph.edge_dst %g[%slot]
          %same = arith.cmpi eq, %x, %w : index
          %hit = arith.andi %inside, %same : i1
          %add = arith.select %hit, %one, %zero : i64
          %acc_next = arith.addi %acc, %add : i64
          scf.yield %acc_next, %at#0 : i64, index
        }
        scf.yield %walk#0 : i64
      } else {
        scf.yield %zero : i64
      }
      irgl.yield %closed : i64
    }
    %any = arith.cmpi ne, %found, %zero : i64
    scf.if %any {
      // kind 1 = addi
      %old = "memref.atomic_rmw"(%found, %count, %c0) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
    }
  }
}

// count[0] = 0, for @count_low_degree.
irgl.kernel @zero(%count: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  irgl.forall %i in range(%c0, %c1) {
    memref.store %zero, %count[%i] : memref<?xi64>
  }
}

// count must hold one i64; nout and nin one i32 per node, unsorted and lists
// one i32 per edge. All of them are (re)set here before they are read (the
// sparse branch reads none but count), so any initial value is fine.
irgl.kernel host @main(%g: !irgl.graph, %count: memref<?xi64>, %nout: memref<?xi32>,
                       %nin: memref<?xi32>, %unsorted: memref<?xi32>, %lists: memref<?xi32>) {
  %c4 = arith.constant 4 : index
  %nodes = irgl.graph.num_nodes %g
  %edges = irgl.graph.num_edges %g
  %low = arith.muli %nodes, %c4 : index
  %sparse = arith.cmpi ule, %edges, %low : index
  scf.if %sparse {
    irgl.invoke @zero(%count) : (memref<?xi64>)
    irgl.invoke @count_low_degree(%g, %count) : (!irgl.graph, memref<?xi64>)
  } else {
    irgl.invoke @reset(%g, %count, %nout, %nin)
        : (!irgl.graph, memref<?xi64>, memref<?xi32>, memref<?xi32>)
    irgl.invoke @orient(%g, %nout, %nin, %unsorted, %lists)
        : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.invoke @sort_out(%g, %nout, %unsorted, %lists)
        : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    irgl.invoke @count_triangles(%g, %count, %nout, %nin, %lists)
        : (!irgl.graph, memref<?xi64>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
  }
}
