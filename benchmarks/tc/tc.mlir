// Triangle counting on sorted adjacency lists (the loaders sort every row).
//
// Nodes are ranked by (degree, id) and each triangle is counted once, at its
// lowest-ranked node n: for every edge n -> v with rank(v) > rank(n), every
// neighbour w of n with rank(w) > rank(v) is looked up in v's sorted list by
// binary search. Since n has the lowest rank, n's list is the shorter one,
// which bounds the work even around hubs. The edge loop is a ForAll, so
// irgl-nested-parallelism shares a node's edges across a warp or a block;
// each edge that closes triangles adds them to count[0] with one atomic.

irgl.kernel @count_triangles(%g: !irgl.graph, %count: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  irgl.forall %n in nodes(%g) {
    %dn = irgl.graph.degree %g[%n]
    %n_begin = irgl.graph.first_edge %g[%n]
    %n_end = irgl.graph.last_edge %g[%n]
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %dv = irgl.graph.degree %g[%v]
      // rank(v) > rank(n): (dv, v) > (dn, n)
      %v_more = arith.cmpi ugt, %dv, %dn : index
      %v_same = arith.cmpi eq, %dv, %dn : index
      %v_after = arith.cmpi ugt, %v, %n : index
      %v_tie = arith.andi %v_same, %v_after : i1
      %v_above = arith.ori %v_more, %v_tie : i1
      scf.if %v_above {
        %v_begin = irgl.graph.first_edge %g[%v]
        %v_end = irgl.graph.last_edge %g[%v]
        %found = scf.for %k = %n_begin to %n_end step %c1 iter_args(%acc = %zero) -> (i64) {
          %w = irgl.graph.edge_dst %g[%k]
          %dw = irgl.graph.degree %g[%w]
          // rank(w) > rank(v)
          %w_more = arith.cmpi ugt, %dw, %dv : index
          %w_same = arith.cmpi eq, %dw, %dv : index
          %w_after = arith.cmpi ugt, %w, %v : index
          %w_tie = arith.andi %w_same, %w_after : i1
          %w_above = arith.ori %w_more, %w_tie : i1
          %hit = scf.if %w_above -> (i64) {
            // lower bound of w in v's list
            %lo_hi:2 = scf.while (%lo = %v_begin, %hi = %v_end) : (index, index) -> (index, index) {
              %more = arith.cmpi slt, %lo, %hi : index
              scf.condition(%more) %lo, %hi : index, index
            } do {
            ^bb0(%lo: index, %hi: index):
              %span = arith.subi %hi, %lo : index
              %halved = arith.shrsi %span, %c1 : index
              %mid = arith.addi %lo, %halved : index
              %x = irgl.graph.edge_dst %g[%mid]
              %below = arith.cmpi slt, %x, %w : index
              %mid1 = arith.addi %mid, %c1 : index
              %nlo = arith.select %below, %mid1, %lo : index
              %nhi = arith.select %below, %hi, %mid : index
              scf.yield %nlo, %nhi : index, index
            }
            %inside = arith.cmpi slt, %lo_hi#0, %v_end : index
            %is_w = scf.if %inside -> (i1) {
              %x = irgl.graph.edge_dst %g[%lo_hi#0]
              %eq = arith.cmpi eq, %x, %w : index
              scf.yield %eq : i1
            } else {
              %no = arith.constant false
              scf.yield %no : i1
            }
            %one_or_zero = arith.select %is_w, %one, %zero : i64
            scf.yield %one_or_zero : i64
          } else {
            scf.yield %zero : i64
          }
          %acc_next = arith.addi %acc, %hit : i64
          scf.yield %acc_next : i64
        }
        %any = arith.cmpi ne, %found, %zero : i64
        scf.if %any {
          // kind 1 = addi
          %old = "memref.atomic_rmw"(%found, %count, %c0) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
        }
      }
    }
  }
}

irgl.kernel @zero(%count: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  irgl.forall %i in range(%c0, %c1) {
    memref.store %zero, %count[%i] : memref<?xi64>
  }
}

// count must hold one i64; it is reset here, so any initial value is fine.
irgl.kernel host @main(%g: !irgl.graph, %count: memref<?xi64>) {
  irgl.invoke @zero(%count) : (memref<?xi64>)
  irgl.invoke @count_triangles(%g, %count) : (!irgl.graph, memref<?xi64>)
}
