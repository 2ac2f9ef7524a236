// RUN: irgl-opt %s --split-input-file -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s --split-input-file -p "irgl-distribute{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p "irgl-distribute{mirrors=false}" | filecheck %s --check-prefix=NOMIR

// irgl-distribute leaves a round stamp unsynchronized after each round
// (lowering/round_stamps.py), and only where every rule holds.

// A round stamp (CC's, benchmarks/cc/cc_lp.mlir): the round counter
// exchanged into a neighbour's entry decides only its push; the counter starts
// at 1 and grows; a clear stores 0 at every node before the Iterate, which no
// loop encloses. Each rank's own copy is enough: no sync after a round; the
// clear is computed on the mirrors too (no broadcast).
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe once initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.invoke @clear(%g, %stamp)
// CHECK-NEXT:    irgl.invoke @clear_mirrors(%g, %stamp)
// CHECK-NEXT:    irgl_dist.sync_nodes %stamp set agreed
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_worklist
// CHECK-NEXT:      %next = arith.addi %round, %c1 : i32

// REMARK: after @clear: %stamp computed on the mirrors too (stores at the ForAll's node of values from the node's global id, constants, scalar arguments and the node's comparisons with node-id arguments): sync_nodes set agreed, no broadcast
// REMARK: after @relax: %stamp not synchronized after a round (a round stamp: it only decides pushes, and every copy holds an earlier round or a clear, so each rank's own copy decides as a synchronized one would)
// REMARK: after @relax: sync_worklist

// -----

// SSSP's stamp (benchmarks/sssp/sssp.mlir): the Iterate is in a Pipe that
// loops, with a clear in its body. No sync after a round; the clear is
// computed on the mirrors too, so none after each run of the Iterate either
// (without that, the clear's broadcast moves only the masters it changed, so
// the copies must agree before it: NOMIR).
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
    irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.pipe
// CHECK-NEXT:      %rounds = irgl.iterate @relax
// CHECK-NEXT:        irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:        irgl_dist.sync_worklist
// CHECK-NEXT:        %next = arith.addi %round, %c1 : i32
// CHECK-NEXT:        irgl.yield %next : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      irgl.invoke @clear(%g, %stamp)
// CHECK-NEXT:      irgl.invoke @clear_mirrors(%g, %stamp)
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set agreed

// REMARK: after @relax: %stamp not synchronized after a round (a round stamp: it only decides pushes, and every copy holds an earlier round or a clear, so each rank's own copy decides as a synchronized one would); every clear is computed on the mirrors too, so the copies agree after each clear

// Without irgl-distribute{mirrors}, the clear is a broadcast of the masters
// it changed, so the copies must agree before it: a sync after each run.
// NOMIR:      irgl_dist.sync_nodes %stamp set : memref<?xi32>
// NOMIR-NEXT: irgl.invoke @clear(%g, %stamp)
// NOMIR-NEXT: irgl_dist.sync_nodes %stamp set masters_only

// -----

// A loop without a clear in its body: the next run's counter starts at 1
// again, and the copies (agreeing or not) may hold that value from the last
// run, where one GPU's single copy holds the last writer's: it stays
// synchronized after every round.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)

// -----

// A visited flag (a constant exchanged, not the round counter) must reach
// every copy: a later round on another rank would push the node again.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  %one = arith.constant 1 : i32
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
      scf.if %lower {
        %last = "memref.atomic_rmw"(%one, %stamp, %v) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi ne, %last, %one : i32
        scf.if %first {
          irgl.wl.push %v
        }
      }
    }
  }
}
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe once initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)

// -----

// A counter that does not grow (it adds 0): a later round's value is an
// earlier one's.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe once initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %same = arith.addi %round, %c0 : i32
      irgl.yield %same : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)

// -----

// The counter starts at the clear's value: a copy cleared to 0 would read as
// already pushed in the first round.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe once initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c0) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)

// -----

// Another kernel reads the stamp: its values are data, not only push filters.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel @read(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %s = memref.load %stamp[%n] : memref<?xi32>
    memref.store %s, %dist[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  irgl.pipe once initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
    irgl.invoke @read(%g, %dist, %stamp) : (!irgl.graph, memref<?xi32>, memref<?xi32>)
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)

// -----

// No clear before the Iterate (SSSP's @init leaves the stamp alone): the
// host's allocation is zero-filled on every rank and the counter starts at 1,
// so the fill is the first clear. The Pipe loops, with a clear in its body.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
    irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.pipe
// CHECK-NEXT:      %rounds = irgl.iterate @relax
// CHECK-NEXT:        irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:        irgl_dist.sync_worklist
// CHECK-NEXT:        %next = arith.addi %round, %c1 : i32

// REMARK: after @relax: %stamp not synchronized after a round (a round stamp: it only decides pushes, and every copy holds an earlier round or a clear, so each rank's own copy decides as a synchronized one would); every clear is computed on the mirrors too, so the copies agree after each clear

// -----

// No clear at all and a counter that starts at 0: the zero fill holds the
// first round's value, so a copy would read as already pushed; the stamp
// stays synchronized after every round.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe once initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c0) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)

// -----

// SSSP's window steps run only after a phase that ran a round (its final
// counter differs from its start): a run without rounds stamps nothing, so
// the clear it skips was not needed, and the stamp is left unsynchronized
// as with an unconditional clear.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index, %flag: i1) {
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
    %ran = arith.cmpi ne, %rounds, %c1 : i32
    scf.if %ran {
      irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         %rounds = irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_worklist
// CHECK-NEXT:      %next = arith.addi %round, %c1 : i32
// CHECK:         scf.if %ran {
// CHECK-NEXT:      irgl.invoke @clear(%g, %stamp)
// CHECK-NEXT:      irgl.invoke @clear_mirrors(%g, %stamp)

// REMARK: after @relax: %stamp not synchronized after a round

// Without irgl-distribute{mirrors}: one sync after each run, as above.
// NOMIR-LABEL: irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index, %flag: i1)
// NOMIR:         irgl.yield %next : i32
// NOMIR-NEXT:    }
// NOMIR-NEXT:    irgl_dist.sync_nodes %stamp set : memref<?xi32>
// NOMIR-NEXT:    %ran = arith.cmpi ne, %rounds, %c1 : i32

// -----

// A clear under any other condition (a host flag) may be skipped after a
// run that stamped: the stamp stays synchronized after every round.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi slt, %d, %old : i32
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
irgl.kernel @clear(%g: !irgl.graph, %stamp: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    memref.store %zero, %stamp[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index, %flag: i1) {
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  irgl.pipe initial [%src] {
    %rounds = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) {
      %next = arith.addi %round, %c1 : i32
      irgl.yield %next : i32
    }
    %ran = arith.xori %flag, %flag : i1
    scf.if %ran {
      irgl.invoke @clear(%g, %stamp) : (!irgl.graph, memref<?xi32>)
    }
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel host @main
// CHECK:         irgl.iterate @relax
// CHECK-NEXT:      irgl_dist.sync_nodes %dist min : memref<?xi32>
// CHECK-NEXT:      irgl_dist.sync_nodes %stamp set : memref<?xi32>

// REMARK: after @relax: sync_nodes %stamp set (stores one value for all at a neighbour)
