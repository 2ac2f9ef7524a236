// Greedy graph colouring with Exclusive: a conflict-heavy benchmark for the
// retry worklist (and for `lower-irgl{retry_backoff=true}`).
//
// Every node contends, with an irgl.exclusive, for its closed neighbourhood
// (itself and its neighbours). A winner owns that neighbourhood: no
// neighbour changes colour while it looks at their colours, so it takes the
// smallest colour no neighbour has and the colouring stays proper. A loser
// is retried (irgl.retry, without merge): the kernel is re-launched on the
// losers until none is left. Any two neighbours contend for each other, and
// so do any two neighbours of one hub (both claim the hub): per uniform
// round of an Exclusive at most one node of a hub's closed neighbourhood
// wins. With the default ForAll mapping a re-launch on fewer retried items
// than threads has one round, so a hub of degree d costs about d
// re-launches; `lower-irgl{retry_backoff=true}` gives round r of the
// re-launches 2^r rounds (about log2(d) re-launches).
//
// The closed neighbourhoods are stored like a CSR adjacency with one more
// entry per row: row n is `nbhd[first_edge(n) + n .. last_edge(n) + n + 1)`,
// n itself first, then its edge destinations (@neighbourhoods fills it).
//
// color: the colour of every node (0, 1, ...); stats[0]: invocations of
// @color (the first launch and every retry re-launch, counted by the
// iteration of slot 0), stats[1]: failed Exclusives (items retried). @main
// returns stats[0].

// nbhd row n := n, then the destinations of n's edges; every node uncoloured
// and on the worklist.
irgl.kernel @init(%g: !irgl.graph, %nbhd: memref<?xi32>, %color: memref<?xi32>) {
  %c1 = arith.constant 1 : index
  %none = arith.constant -1 : i32
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
    memref.store %none, %color[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

// Colour the nodes of the worklist whose closed neighbourhood is won; retry
// the others.
irgl.kernel @color(%g: !irgl.graph, %nbhd: memref<?xi32>, %claims: memref<?xi32>, %color: memref<?xi32>, %stats: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %z64 = arith.constant 0 : i64
  %o64 = arith.constant 1 : i64
  %full = arith.constant -1 : i64
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %is_first = arith.cmpi eq, %slot, %c0 : index
    scf.if %is_first {
      %old = "memref.atomic_rmw"(%one, %stats, %c0) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    %start = arith.addi %first, %n : index
    %end0 = arith.addi %last, %n : index
    %end = arith.addi %end0, %c1 : index
    irgl.exclusive %claims iterator(%nbhd[%start to %end step %c1]) : memref<?xi32>, memref<?xi32> {
      // The colours [base, base + 64) used by neighbours, as a bit mask,
      // for base = 0, 64, ... until one of them is free.
      %base, %used = scf.while (%b = %zero) : (i32) -> (i32, i64) {
        %mask = scf.for %e = %first to %last step %c1 iter_args(%m = %z64) -> (i64) {
          %t = irgl.graph.edge_dst %g[%e]
          %ct = memref.load %color[%t] : memref<?xi32>
          %rel = arith.subi %ct, %b : i32
          %above = arith.cmpi sge, %rel, %zero : i32
          %below = arith.cmpi slt, %rel, %c64 : i32
          %inside = arith.andi %above, %below : i1
          %bit = scf.if %inside -> (i64) {
            %rel64 = arith.extsi %rel : i32 to i64
            %b1 = arith.shli %o64, %rel64 : i64
            scf.yield %b1 : i64
          } else {
            scf.yield %z64 : i64
          }
          %nm = arith.ori %m, %bit : i64
          scf.yield %nm : i64
        }
        %all = arith.cmpi eq, %mask, %full : i64
        scf.condition(%all) %b, %mask : i32, i64
      } do {
      ^bb0(%b: i32, %mask: i64):
        %next = arith.addi %b, %c64 : i32
        scf.yield %next : i32
      }
      // The lowest clear bit of %used.
      %free = scf.while (%i = %zero) : (i32) -> i32 {
        %i64 = arith.extsi %i : i32 to i64
        %shifted = arith.shrui %used, %i64 : i64
        %low = arith.andi %shifted, %o64 : i64
        %taken = arith.cmpi ne, %low, %z64 : i64
        scf.condition(%taken) %i : i32
      } do {
      ^bb0(%i: i32):
        %next = arith.addi %i, %one : i32
        scf.yield %next : i32
      }
      %c = arith.addi %base, %free : i32
      memref.store %c, %color[%n] : memref<?xi32>
    } else {
      irgl.retry %n
      %old = "memref.atomic_rmw"(%one, %stats, %c1) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
    }
  }
}

// color: the colouring; stats: [invocations of @color, retried items].
// Returns the invocations of @color.
irgl.kernel host @main(%g: !irgl.graph, %color: memref<?xi32>, %stats: memref<?xi32>) -> i32 {
  %nn = irgl.graph.num_nodes %g
  %ne = irgl.graph.num_edges %g
  %size = arith.addi %nn, %ne : index
  %nbhd = memref.alloc(%size) : memref<?xi32>
  // Device allocations are zero-initialized: no element is claimed.
  %claims = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe once {
    irgl.invoke @init(%g, %nbhd, %color) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
    // @color pushes nothing to `out`: one pass, whose invocation re-launches
    // itself on the retried items until none is left.
    irgl.pipe {
      irgl.invoke @color(%g, %nbhd, %claims, %color, %stats) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>)
    }
  }
  memref.dealloc %claims : memref<?xi32>
  memref.dealloc %nbhd : memref<?xi32>
  // stats[0]: host code reads device arrays element by element
  // (convert-irgl-host-memory copies it back).
  %c0 = arith.constant 0 : index
  %launches = memref.load %stats[%c0] : memref<?xi32>
  irgl.return %launches : i32
}
