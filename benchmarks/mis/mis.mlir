// Maximal independent set, Luby-style with hashed priorities.
//
// Every node gets a fixed pseudo-random priority (a hash of its id; ties
// broken by the id, so priorities are distinct) and starts undecided. Each
// round, on the worklist of undecided nodes:
//   select   a node whose priority beats every neighbour that is not out
//            joins the set (state IN); the others stay on the worklist;
//   exclude  an undecided node with a neighbour in the set leaves (state OUT);
//            the others stay on the worklist.
// The rounds repeat (a Pipe) until no node is undecided. Each round the
// undecided node of highest priority joins, so the loop terminates; a node
// only joins when no neighbour is in the set or can join in the same round
// (two neighbours cannot both beat each other), so the set is independent;
// a node only leaves next to a member, so the set is maximal. Isolated nodes
// join in the first round. Self loops are ignored.
//
// During select only IN is ever written and every neighbour that is not OUT
// was undecided when the round began; during exclude only OUT is written and
// the test reads IN. So the result does not depend on thread interleaving.
//
// state: 1 = in the set, 0 = not in the set (the output), 2 = undecided.

// A 31-bit hash of the node id (a xorshift-multiply mixer computed in 64 bits
// with 31-bit multipliers, so no product overflows).
irgl.kernel @init(%g: !irgl.graph, %state: memref<?xi32>, %prio: memref<?xi32>) {
  %undecided = arith.constant 2 : i32
  %mask32 = arith.constant 4294967295 : i64
  %mask31 = arith.constant 2147483647 : i64
  %k1 = arith.constant 2146121005 : i64
  %k2 = arith.constant 1540483477 : i64
  %s15 = arith.constant 15 : i64
  %s16 = arith.constant 16 : i64
  %seed = arith.constant 2654435769 : i64
  irgl.forall %n in nodes(%g) {
    %id = arith.index_cast %n : index to i64
    %x0 = arith.xori %id, %seed : i64
    %a1 = arith.shrui %x0, %s16 : i64
    %x1 = arith.xori %x0, %a1 : i64
    %m1 = arith.muli %x1, %k1 : i64
    %x2 = arith.andi %m1, %mask32 : i64
    %a2 = arith.shrui %x2, %s15 : i64
    %x3 = arith.xori %x2, %a2 : i64
    %m2 = arith.muli %x3, %k2 : i64
    %x4 = arith.andi %m2, %mask32 : i64
    %a3 = arith.shrui %x4, %s16 : i64
    %x5 = arith.xori %x4, %a3 : i64
    %x6 = arith.andi %x5, %mask31 : i64
    %p = arith.trunci %x6 : i64 to i32
    memref.store %p, %prio[%n] : memref<?xi32>
    memref.store %undecided, %state[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

// Join if (prio, id) beats every neighbour that is not out.
irgl.kernel @select_members(%g: !irgl.graph, %state: memref<?xi32>, %prio: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  %out = arith.constant 0 : i32
  %in = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %p = memref.load %prio[%n] : memref<?xi32>
    // A nested ForAll with a max reduction: a hub's edges are shared by a
    // warp or the block (nested parallelism) instead of one thread.
    %beats_any = irgl.forall %e in edges(%g, %n) reduce(max, %zero : i32) {
      %t = irgl.graph.edge_dst %g[%e]
      %st = memref.load %state[%t] : memref<?xi32>
      %live = arith.cmpi ne, %st, %out : i32
      %other = arith.cmpi ne, %t, %n : index
      %pt = memref.load %prio[%t] : memref<?xi32>
      %higher = arith.cmpi sgt, %pt, %p : i32
      %same = arith.cmpi eq, %pt, %p : i32
      %later = arith.cmpi sgt, %t, %n : index
      %tie = arith.andi %same, %later : i1
      %wins = arith.ori %higher, %tie : i1
      %c = arith.andi %live, %other : i1
      %beats = arith.andi %c, %wins : i1
      %beats_i32 = arith.extui %beats : i1 to i32
      irgl.yield %beats_i32 : i32
    }
    %beaten = arith.cmpi ne, %beats_any, %zero : i32
    scf.if %beaten {
      irgl.wl.push %n
    } else {
      memref.store %in, %state[%n] : memref<?xi32>
    }
  }
}

// Leave if a neighbour joined.
irgl.kernel @exclude_neighbours(%g: !irgl.graph, %state: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  %out = arith.constant 0 : i32
  %in = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %hit_any = irgl.forall %e in edges(%g, %n) reduce(max, %zero : i32) {
      %t = irgl.graph.edge_dst %g[%e]
      %st = memref.load %state[%t] : memref<?xi32>
      %member = arith.cmpi eq, %st, %in : i32
      %other = arith.cmpi ne, %t, %n : index
      %hit = arith.andi %member, %other : i1
      %hit_i32 = arith.extui %hit : i1 to i32
      irgl.yield %hit_i32 : i32
    }
    %covered = arith.cmpi ne, %hit_any, %zero : i32
    scf.if %covered {
      memref.store %out, %state[%n] : memref<?xi32>
    } else {
      irgl.wl.push %n
    }
  }
}

// state: 1 for the nodes of the maximal independent set, 0 for the others.
irgl.kernel host @main(%g: !irgl.graph, %state: memref<?xi32>) {
  %nn = irgl.graph.num_nodes %g
  %prio = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe once {
    irgl.invoke @init(%g, %state, %prio) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
    // One round per pass, while some node is undecided.
    irgl.pipe {
      irgl.invoke @select_members(%g, %state, %prio) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
      irgl.invoke @exclude_neighbours(%g, %state) : (!irgl.graph, memref<?xi32>)
    }
  }
  memref.dealloc %prio : memref<?xi32>
}
