// BFS run twice from the same source in one Pipe, with a round stamp (a node
// is pushed at most once a round) cleared between the passes. A loop encloses
// the Iterate, so irgl-distribute synchronizes the stamp once after each pass
// instead of after every round (lowering/round_stamps.py): the clear writes
// only masters and its broadcast moves only the masters it changed, so
// without that sync a mirror stamped while its master was not would keep the
// first pass's stamp, and in the second pass the round that lowers it would
// read as already pushed (test_distributed_apps.py).

irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}

// Every level unknown but the source's.
irgl.kernel @levels(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %l = arith.select %is_src, %zero, %inf : i32
    memref.store %l, %level[%n] : memref<?xi32>
  }
}

// After the first pass only (passes[0] = 0): the levels again, and the
// source pushed for the second pass.
irgl.kernel @restart(%g: !irgl.graph, %level: memref<?xi32>, %passes: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %p = memref.load %passes[%c0] : memref<?xi32>
    %first = arith.cmpi eq, %p, %zero : i32
    scf.if %first {
      %is_src = arith.cmpi eq, %n, %src : index
      %l = arith.select %is_src, %zero, %inf : i32
      memref.store %l, %level[%n] : memref<?xi32>
      scf.if %is_src {
        irgl.wl.push %n
      }
    }
  }
}

irgl.kernel @count(%passes: memref<?xi32>) {
  %one = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in range(%c0, %c1) {
    memref.store %one, %passes[%c0] : memref<?xi32>
  }
}

// Round ROUND (from 1): lower each neighbour's level to the node's plus one.
irgl.kernel @relax(%g: !irgl.graph, %level: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  %one = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %l = memref.load %level[%n] : memref<?xi32>
    %next = arith.addi %l, %one : i32
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%next, %level, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %next, %old : i32
      scf.if %lower {
        %last = "memref.atomic_rmw"(%ROUND, %stamp, %v) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi ne, %last, %ROUND : i32
        scf.if %first {
          irgl.wl.push %v
        }
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1 : index
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  %passes = memref.alloc(%one) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.invoke @levels(%g, %level, %src) : (!irgl.graph, memref<?xi32>, index)
  irgl.pipe initial [%src] {
    %rounds = irgl.iterate @relax(%g, %level, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
    irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @restart(%g, %level, %passes, %src) : (!irgl.graph, memref<?xi32>, memref<?xi32>, index)
    irgl.invoke @count(%passes) : (memref<?xi32>)
  }
  memref.dealloc %passes : memref<?xi32>
  memref.dealloc %stamp : memref<?xi32>
}
