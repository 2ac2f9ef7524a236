// RUN: irgl-opt %s -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s -p "irgl-distribute{mirror_pushes=false}" | filecheck %s --check-prefix=SLOTS
// RUN: irgl-opt %s -p "irgl-distribute{policy=cvc}" | filecheck %s --check-prefix=SLOTS
// RUN: irgl-opt %s -p "irgl-distribute{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s -p "irgl-distribute,convert-irgl-kernels,convert-irgl-dist-orchestration,convert-irgl-dist" | filecheck %s --check-prefix=LOWERED
// RUN: irgl-opt %s -p "lower-irgl{distribute=oec}" -t cuda | filecheck %s --check-prefix=CUDA

// Mirrors pushed without a worklist slot (lowering/mirror_pushes.py): in the
// round kernel of an Iterate synchronized reduce-only, a neighbour's push
// splits on the master bound; a mirror is pushed by its pushed bit
// (irgl_dist.push_mirror), and the round stamp's exchange and test that
// decide the push move into the masters' branch.

// SSSP's round with its round stamp.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %nd = arith.addi %d, %w : i32
      %cur = memref.load %dist[%t] : memref<?xi32>
      %shorter = arith.cmpi slt, %nd, %cur : i32
      scf.if %shorter {
        %old = "memref.atomic_rmw"(%nd, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        %last = "memref.atomic_rmw"(%ROUND, %stamp, %t) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
        %first = arith.cmpi ne, %last, %ROUND : i32
        scf.if %first {
          irgl.wl.push %t
        }
      }
    }
  }
}

irgl.kernel host @sssp(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  %nn = irgl.graph.num_nodes %g
  %stamp = memref.alloc(%nn) : memref<?xi32>
  %r = irgl.iterate @relax(%g, %dist, %stamp, %round = %c1) : (!irgl.graph, memref<?xi32>, memref<?xi32>, i32) initial [%src] {
    %next = arith.addi %round, %c1 : i32
    irgl.yield %next : i32
  }
  memref.dealloc %stamp : memref<?xi32>
}

// CHECK-LABEL: irgl.kernel @relax(
// CHECK:         %old = "memref.atomic_rmw"(%nd, %dist, %t) <{kind = 7 : i64}>
// CHECK-NEXT:    %own = irgl_dist.is_master %g[%t]
// CHECK-NEXT:    scf.if %own {
// CHECK-NEXT:      %last = "memref.atomic_rmw"(%ROUND, %stamp, %t) <{kind = 2 : i64}>
// CHECK-NEXT:      %first = arith.cmpi ne, %last, %ROUND : i32
// CHECK-NEXT:      scf.if %first {
// CHECK-NEXT:        irgl.wl.push %t
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK-NEXT:      irgl_dist.push_mirror %g[%t]
// CHECK-NEXT:    }

// SLOTS-NOT: irgl_dist.push_mirror
// SLOTS-NOT: irgl_dist.is_master

// REMARK: remark: irgl.iterate in @sssp: @relax: 1 push(es) of a neighbour split on the master bound: a mirror is pushed by irgl_dist.push_mirror (its pushed bit for the exchange, no worklist slot or round-stamp exchange)

// LOWERED:      %[[M:.*]] = func.call @irgl_dist_num_masters() : () -> index
// LOWERED-NEXT: %own = arith.cmpi ult, %t, %[[M]] : index
// LOWERED-NEXT: scf.if %own {
// LOWERED:      } else {
// LOWERED-NEXT:   func.call @irgl_dist_push_mirror(%t) : (index) -> ()

// CUDA:      atomicMin(&dist[t], nd);
// CUDA-NEXT: irgl_index [[M:v[0-9]+]] = irgl_dist_num_masters();
// CUDA-NEXT: bool own = (uint32_t)t < (uint32_t)[[M]];
// CUDA-NEXT: if (own) {
// CUDA:        atomicExch(&stamp[t], ROUND);
// CUDA:        irgl_wl_push_block(v1, t, v4);
// CUDA:      } else {
// CUDA-NEXT:   irgl_dist_push_mirror(t);

// A push without a stamp (each improvement pushes): only the push splits.
irgl.kernel @relax_plain(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %cur = memref.load %dist[%t] : memref<?xi32>
      %shorter = arith.cmpi slt, %d, %cur : i32
      scf.if %shorter {
        %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        irgl.wl.push %t
      }
    }
  }
}

irgl.kernel host @plain(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax_plain(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel @relax_plain(
// CHECK:         %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}>
// CHECK-NEXT:    %own = irgl_dist.is_master %g[%t]
// CHECK-NEXT:    scf.if %own {
// CHECK-NEXT:      irgl.wl.push %t
// CHECK-NEXT:    } else {
// CHECK-NEXT:      irgl_dist.push_mirror %g[%t]
// CHECK-NEXT:    }

// A kernel that a plain invocation runs too keeps its slots: the exchange
// after that invocation is not the reduce-only one.
irgl.kernel @relax_twice(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %cur = memref.load %dist[%t] : memref<?xi32>
      %shorter = arith.cmpi slt, %d, %cur : i32
      scf.if %shorter {
        %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        irgl.wl.push %t
      }
    }
  }
}

irgl.kernel host @twice(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.pipe initial [%src] {
    irgl.invoke @relax_twice(%g, %dist) : (!irgl.graph, memref<?xi32>)
  }
  irgl.iterate @relax_twice(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: irgl.kernel @relax_twice(
// CHECK:         %old = "memref.atomic_rmw"(%d, %dist, %t) <{kind = 7 : i64}>
// CHECK-NEXT:    irgl.wl.push %t
// CHECK-NEXT:  }
