// Borůvka's minimum spanning forest (the specification's Atomic example).
//
// Every node starts as its own component. Each round:
//   find_min  every node on the worklist finds its lightest edge to another
//             component and, holding the component's lock (a blocking
//             irgl.atomic, so `lower-irgl{ticket_locks=true}` may use a ticket
//             lock), updates the component's minimum weight, edge, source node
//             and target component TOGETHER (no packing into one word). Nodes
//             with a cross-component edge are pushed: the others never get one
//             again (components only grow), so the worklist shrinks;
//   hook      every component with a minimum edge hooks its root onto the
//             component at the other end and adds the edge weight to the
//             64-bit total;
//   compress  pointer jumping until every node points at its root, which
//             becomes the node's component id; the minimum edges are cleared.
// The rounds repeat (a Pipe) until the worklist is empty: no node has a
// cross-component edge, so every connected component is one tree (a minimum
// spanning forest on a disconnected graph).
//
// Edges are ordered by the key (weight, min(u, v), max(u, v)): a strict total
// order on undirected edges, identical from both sides, so the chosen edges
// are all in the unique minimum spanning forest of that order and contain no
// cycle but "two components chose the same edge"; of such a pair only the
// larger component id hooks (onto the smaller), so every edge counts once.
//
// Before taking the lock, a node offers (weight, lo) of its edge to the
// component's `hint` (an i64 atomic min, reset every round). It is only a
// filter: a node that sees a strictly smaller offer cannot win and skips the
// lock; the record itself is decided under the lock with the full key. So a
// big component does not serialize all its nodes on one lock.
//
// Component records live at the root's node id. `comp` (the component id of
// each node) is only written by compress, `parent` (the union-find forest)
// only by hook and compress, so find_min and hook read stable snapshots.
// Node and edge ids are kept in i32 arrays (up to 2^31 - 1 of each).

// The lock words. Blocking irgl.atomic with ticket locks needs 64-bit words:
// the ticket-lock variant of this program replaces this one line with
// `!locks = memref<?xi64>` (see benchmarks/mst/app.py).
!locks = memref<?xi32>

// comp[n] = parent[n] = n, no component has a minimum edge, total = 0;
// every node is on the worklist.
irgl.kernel @init(%g: !irgl.graph, %comp: memref<?xi32>, %parent: memref<?xi32>, %minedge: memref<?xi32>, %hint: memref<?xi64>, %total: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %none = arith.constant -1 : i32
  %zero = arith.constant 0 : i64
  %max = arith.constant 9223372036854775807 : i64
  irgl.forall %n in nodes(%g) {
    %id = arith.index_cast %n : index to i32
    memref.store %id, %comp[%n] : memref<?xi32>
    memref.store %id, %parent[%n] : memref<?xi32>
    memref.store %none, %minedge[%n] : memref<?xi32>
    memref.store %max, %hint[%n] : memref<?xi64>
    %first = arith.cmpi eq, %n, %c0 : index
    scf.if %first {
      memref.store %zero, %total[%c0] : memref<?xi64>
    }
    irgl.wl.push %n
  }
}

// The specification's find-min-edge kernel.
irgl.kernel @find_min(%g: !irgl.graph, %comp: memref<?xi32>, %locks: !locks, %minwt: memref<?xi32>, %minedge: memref<?xi32>, %minsrc: memref<?xi32>, %minother: memref<?xi32>, %hint: memref<?xi64>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : i64
  %false = arith.constant false
  %true = arith.constant true
  %zero = arith.constant 0 : i32
  irgl.forall %nidx in worklist {
    %n = irgl.wl.pop %nidx
    %nid = arith.index_cast %n : index to i32
    %c = memref.load %comp[%n] : memref<?xi32>
    %ci = arith.index_cast %c : i32 to index
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    // The lightest cross-component edge of n: (found, weight, lo, hi, edge,
    // component at its other end).
    %found, %wt, %lo, %hi, %edge, %other = scf.for %e = %first to %last step %c1 iter_args(%f = %false, %bw = %zero, %blo = %zero, %bhi = %zero, %be = %zero, %bo = %zero) -> (i1, i32, i32, i32, i32, i32) {
      %t = irgl.graph.edge_dst %g[%e]
      %ct = memref.load %comp[%t] : memref<?xi32>
      %cross = arith.cmpi ne, %ct, %c : i32
      %nf, %nw, %nlo, %nhi, %ne, %no = scf.if %cross -> (i1, i32, i32, i32, i32, i32) {
        %w = irgl.graph.edge_weight %g[%e] : i32
        %tid = arith.index_cast %t : index to i32
        %elo = arith.minsi %nid, %tid : i32
        %ehi = arith.maxsi %nid, %tid : i32
        // (w, elo, ehi) < (bw, blo, bhi) lexicographically
        %wlt = arith.cmpi slt, %w, %bw : i32
        %weq = arith.cmpi eq, %w, %bw : i32
        %lolt = arith.cmpi slt, %elo, %blo : i32
        %loeq = arith.cmpi eq, %elo, %blo : i32
        %hilt = arith.cmpi slt, %ehi, %bhi : i32
        %t1 = arith.andi %loeq, %hilt : i1
        %t2 = arith.ori %lolt, %t1 : i1
        %t3 = arith.andi %weq, %t2 : i1
        %less = arith.ori %wlt, %t3 : i1
        %nofound = arith.xori %f, %true : i1
        %take = arith.ori %nofound, %less : i1
        %eid = arith.index_cast %e : index to i32
        %sw = arith.select %take, %w, %bw : i32
        %slo = arith.select %take, %elo, %blo : i32
        %shi = arith.select %take, %ehi, %bhi : i32
        %se = arith.select %take, %eid, %be : i32
        %so = arith.select %take, %ct, %bo : i32
        scf.yield %true, %sw, %slo, %shi, %se, %so : i1, i32, i32, i32, i32, i32
      } else {
        scf.yield %f, %bw, %blo, %bhi, %be, %bo : i1, i32, i32, i32, i32, i32
      }
      scf.yield %nf, %nw, %nlo, %nhi, %ne, %no : i1, i32, i32, i32, i32, i32
    }
    scf.if %found {
      // Filter (it decides nothing): hint[c] is the least (weight, lo)
      // offered to c this round, lowered with an atomic min. If some node
      // offered a smaller one, c's minimum edge is certainly not ours and the
      // lock can be skipped; big components do not serialize on their lock.
      %wt64 = arith.extsi %wt : i32 to i64
      %lo64 = arith.extsi %lo : i32 to i64
      %wthi = arith.shli %wt64, %c32 : i64
      %key = arith.ori %wthi, %lo64 : i64
      %offered = "memref.atomic_rmw"(%key, %hint, %ci) <{kind = 7 : i64}> : (i64, memref<?xi64>, index) -> i64
      %contend = arith.cmpi sge, %offered, %key : i64
      scf.if %contend {
        // Both (all) fields of the component's minimum change together.
        irgl.atomic %locks[%ci] : !locks {
          %cur = memref.load %minedge[%ci] : memref<?xi32>
          %empty = arith.cmpi slt, %cur, %zero : i32
          %better = scf.if %empty -> (i1) {
            scf.yield %true : i1
          } else {
            %cw = memref.load %minwt[%ci] : memref<?xi32>
            %cs = memref.load %minsrc[%ci] : memref<?xi32>
            %curi = arith.index_cast %cur : i32 to index
            %cd = irgl.graph.edge_dst %g[%curi]
            %cdid = arith.index_cast %cd : index to i32
            %clo = arith.minsi %cs, %cdid : i32
            %chi = arith.maxsi %cs, %cdid : i32
            %wlt = arith.cmpi slt, %wt, %cw : i32
            %weq = arith.cmpi eq, %wt, %cw : i32
            %lolt = arith.cmpi slt, %lo, %clo : i32
            %loeq = arith.cmpi eq, %lo, %clo : i32
            %hilt = arith.cmpi slt, %hi, %chi : i32
            %t1 = arith.andi %loeq, %hilt : i1
            %t2 = arith.ori %lolt, %t1 : i1
            %t3 = arith.andi %weq, %t2 : i1
            %less = arith.ori %wlt, %t3 : i1
            scf.yield %less : i1
          }
          scf.if %better {
            memref.store %wt, %minwt[%ci] : memref<?xi32>
            memref.store %edge, %minedge[%ci] : memref<?xi32>
            memref.store %nid, %minsrc[%ci] : memref<?xi32>
            memref.store %other, %minother[%ci] : memref<?xi32>
          }
        }
      }
      // n has a cross-component edge: it stays in the computation.
      irgl.wl.push %n
    }
  }
}

// Every component with a minimum edge hooks onto the component at its other
// end, unless both chose the same edge and it has the smaller id.
irgl.kernel @hook(%g: !irgl.graph, %parent: memref<?xi32>, %minwt: memref<?xi32>, %minedge: memref<?xi32>, %minother: memref<?xi32>, %total: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %true = arith.constant true
  irgl.forall %c in nodes(%g) {
    %e = memref.load %minedge[%c] : memref<?xi32>
    %has = arith.cmpi sge, %e, %zero : i32
    scf.if %has {
      %cid = arith.index_cast %c : index to i32
      %d = memref.load %minother[%c] : memref<?xi32>
      %di = arith.index_cast %d : i32 to index
      %de = memref.load %minedge[%di] : memref<?xi32>
      %dother = memref.load %minother[%di] : memref<?xi32>
      %dhas = arith.cmpi sge, %de, %zero : i32
      %back = arith.cmpi eq, %dother, %cid : i32
      %mutual = arith.andi %dhas, %back : i1
      %smaller = arith.cmpi slt, %cid, %d : i32
      %stays = arith.andi %mutual, %smaller : i1
      %hooks = arith.xori %stays, %true : i1
      scf.if %hooks {
        memref.store %d, %parent[%c] : memref<?xi32>
        %w = memref.load %minwt[%c] : memref<?xi32>
        %w64 = arith.extsi %w : i32 to i64
        %old = "memref.atomic_rmw"(%w64, %total, %c0) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
      }
    }
  }
}

// Pointer jumping: each node follows (and shortens) its parent chain to the
// root, its new component id; the component records are cleared. Other
// threads only replace parent pointers by ancestors, so every read is valid.
irgl.kernel @compress(%g: !irgl.graph, %comp: memref<?xi32>, %parent: memref<?xi32>, %minedge: memref<?xi32>, %hint: memref<?xi64>) {
  %none = arith.constant -1 : i32
  %max = arith.constant 9223372036854775807 : i64
  irgl.forall %n in nodes(%g) {
    %p0 = memref.load %parent[%n] : memref<?xi32>
    %root = scf.while (%p = %p0) : (i32) -> i32 {
      %pi = arith.index_cast %p : i32 to index
      %gp = memref.load %parent[%pi] : memref<?xi32>
      %up = arith.cmpi ne, %gp, %p : i32
      scf.condition(%up) %gp : i32
    } do {
    ^bb0(%gp: i32):
      memref.store %gp, %parent[%n] : memref<?xi32>
      scf.yield %gp : i32
    }
    memref.store %root, %comp[%n] : memref<?xi32>
    memref.store %none, %minedge[%n] : memref<?xi32>
    memref.store %max, %hint[%n] : memref<?xi64>
  }
}

// comp: component id (root node) of every node; total[0]: the forest's weight.
irgl.kernel host @main(%g: !irgl.graph, %comp: memref<?xi32>, %total: memref<?xi64>) {
  %nn = irgl.graph.num_nodes %g
  // Device allocations are zero-initialized: every lock starts free.
  %locks = memref.alloc(%nn) : !locks
  %parent = memref.alloc(%nn) : memref<?xi32>
  %minwt = memref.alloc(%nn) : memref<?xi32>
  %minedge = memref.alloc(%nn) : memref<?xi32>
  %minsrc = memref.alloc(%nn) : memref<?xi32>
  %minother = memref.alloc(%nn) : memref<?xi32>
  %hint = memref.alloc(%nn) : memref<?xi64>
  irgl.pipe once {
    irgl.invoke @init(%g, %comp, %parent, %minedge, %hint, %total) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi64>, memref<?xi64>)
    // One Borůvka round per pass, while some node has a cross-component edge.
    irgl.pipe {
      irgl.invoke @find_min(%g, %comp, %locks, %minwt, %minedge, %minsrc, %minother, %hint) : (!irgl.graph, memref<?xi32>, !locks, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi64>)
      irgl.invoke @hook(%g, %parent, %minwt, %minedge, %minother, %total) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi64>)
      irgl.invoke @compress(%g, %comp, %parent, %minedge, %hint) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi64>)
    }
  }
  memref.dealloc %hint : memref<?xi64>
  memref.dealloc %minother : memref<?xi32>
  memref.dealloc %minsrc : memref<?xi32>
  memref.dealloc %minedge : memref<?xi32>
  memref.dealloc %minwt : memref<?xi32>
  memref.dealloc %parent : memref<?xi32>
  memref.dealloc %locks : !locks
}
