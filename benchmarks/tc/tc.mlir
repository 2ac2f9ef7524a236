// Triangle counting on sorted adjacency lists (the loaders sort every row).
//
// Each triangle n < v < w is counted once, by node n: for every neighbour
// v > n, the neighbours w > v common to n and v are found by merging the two
// sorted lists. In n's list they are the entries after v's edge e; in v's
// list a binary search finds the first entry above v. Each thread sums its
// node's triangles locally and adds them to count[0] with one 64-bit atomic.
// The edge loop is a sequential scf.for carrying that count, so it is not
// shared across a warp by irgl-nested-parallelism: a high-degree node's
// triangles are counted by one thread.

irgl.kernel @count_triangles(%g: !irgl.graph, %count: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  irgl.forall %n in nodes(%g) {
    %n_end = irgl.graph.last_edge %g[%n]
    %e_begin = irgl.graph.first_edge %g[%n]
    // sequential edge loop carrying the node's count
    %total = scf.for %e = %e_begin to %n_end step %c1 iter_args(%acc = %zero) -> (i64) {
      %v = irgl.graph.edge_dst %g[%e]
      %upper = arith.cmpi sgt, %v, %n : index
      %found = scf.if %upper -> (i64) {
        // first edge of v whose destination is > v (lower bound by bisection)
        %v_begin = irgl.graph.first_edge %g[%v]
        %v_end = irgl.graph.last_edge %g[%v]
        %lo_hi:2 = scf.while (%lo = %v_begin, %hi = %v_end) : (index, index) -> (index, index) {
          %more = arith.cmpi slt, %lo, %hi : index
          scf.condition(%more) %lo, %hi : index, index
        } do {
        ^bb0(%lo: index, %hi: index):
          %span = arith.subi %hi, %lo : index
          %halved = arith.shrsi %span, %c1 : index
          %mid = arith.addi %lo, %halved : index
          %w = irgl.graph.edge_dst %g[%mid]
          %le = arith.cmpi sle, %w, %v : index
          %mid1 = arith.addi %mid, %c1 : index
          %nlo = arith.select %le, %mid1, %lo : index
          %nhi = arith.select %le, %hi, %mid : index
          scf.yield %nlo, %nhi : index, index
        }
        // merge n's entries after e with v's entries from the lower bound
        %i0 = arith.addi %e, %c1 : index
        %merged:3 = scf.while (%i = %i0, %j = %lo_hi#0, %c = %zero) : (index, index, i64) -> (index, index, i64) {
          %i_ok = arith.cmpi slt, %i, %n_end : index
          %j_ok = arith.cmpi slt, %j, %v_end : index
          %go = arith.andi %i_ok, %j_ok : i1
          scf.condition(%go) %i, %j, %c : index, index, i64
        } do {
        ^bb0(%i: index, %j: index, %c: i64):
          %a = irgl.graph.edge_dst %g[%i]
          %b = irgl.graph.edge_dst %g[%j]
          %a_le = arith.cmpi sle, %a, %b : index
          %b_le = arith.cmpi sle, %b, %a : index
          %same = arith.andi %a_le, %b_le : i1
          %i_next = arith.addi %i, %c1 : index
          %j_next = arith.addi %j, %c1 : index
          %ni = arith.select %a_le, %i_next, %i : index
          %nj = arith.select %b_le, %j_next, %j : index
          %c_next = arith.addi %c, %one : i64
          %nc = arith.select %same, %c_next, %c : i64
          scf.yield %ni, %nj, %nc : index, index, i64
        }
        scf.yield %merged#2 : i64
      } else {
        scf.yield %zero : i64
      }
      %acc_next = arith.addi %acc, %found : i64
      scf.yield %acc_next : i64
    }
    %any = arith.cmpi ne, %total, %zero : i64
    scf.if %any {
      // kind 1 = addi
      %old = "memref.atomic_rmw"(%total, %count, %c0) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
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
