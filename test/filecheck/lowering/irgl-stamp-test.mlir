// RUN: irgl-opt %s --split-input-file -p irgl-stamp-test | filecheck %s --check-prefixes=CHECK,SKEW
// RUN: irgl-opt %s --split-input-file -p "irgl-stamp-test{skew=0}" | filecheck %s --check-prefixes=CHECK,ALWAYS
// RUN: irgl-opt %s --split-input-file -p "irgl-stamp-test{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p "lower-irgl" -t cuda | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s --split-input-file -p "lower-irgl{stamp_test=false}" -t cuda | filecheck %s --check-prefix=OFF

// irgl-stamp-test: a round stamp's exchange (the array is used in the
// kernel only to exchange the round counter, the old entry deciding only a
// push) reads the entry first, where atomics update it, and exchanges only
// where the entry is not yet the counter; the old value it hands on is the
// counter where it skipped, so the push is skipped too. By default (skew
// 32) the load runs only on graphs with hubs: a largest degree over 32
// times the mean (max_degree * num_nodes > 32 * num_edges, in i64: the
// products overflow a 32-bit index).
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

// CHECK-LABEL: irgl.kernel @relax
// The min on the distances is not a stamp: untouched.
// CHECK:         "memref.atomic_rmw"(%d, %dist, %v) <{kind = 7 : i64}>
// SKEW:          %[[MOSTI:.*]] = irgl.graph.max_degree %g
// SKEW-NEXT:     %[[MOST:.*]] = arith.index_cast %[[MOSTI]] : index to i64
// SKEW-NEXT:     %[[NODESI:.*]] = irgl.graph.num_nodes %g
// SKEW-NEXT:     %[[NODES:.*]] = arith.index_cast %[[NODESI]] : index to i64
// SKEW-NEXT:     %[[EDGESI:.*]] = irgl.graph.num_edges %g
// SKEW-NEXT:     %[[EDGES:.*]] = arith.index_cast %[[EDGESI]] : index to i64
// SKEW-NEXT:     %[[L:.*]] = arith.muli %[[MOST]], %[[NODES]] : i64
// SKEW-NEXT:     %[[S:.*]] = arith.constant 32 : i64
// SKEW-NEXT:     %[[R:.*]] = arith.muli %[[S]], %[[EDGES]] : i64
// SKEW-NEXT:     %[[HUBS:.*]] = arith.cmpi sgt, %[[L]], %[[R]] : i64
// SKEW-NEXT:     %[[SEEN:.*]] = scf.if %[[HUBS]] -> (i1) {
// SKEW-NEXT:       %[[CUR:.*]] = memref.load %stamp[%v] {irgl_rt.coherent} : memref<?xi32>
// SKEW-NEXT:       %[[EQ:.*]] = arith.cmpi eq, %[[CUR]], %ROUND : i32
// SKEW-NEXT:       scf.yield %[[EQ]] : i1
// SKEW-NEXT:     } else {
// SKEW-NEXT:       %[[NO:.*]] = arith.constant false
// SKEW-NEXT:       scf.yield %[[NO]] : i1
// SKEW-NEXT:     }
// ALWAYS-NOT:    irgl.graph.max_degree
// ALWAYS:        %[[CUR:.*]] = memref.load %stamp[%v] {irgl_rt.coherent} : memref<?xi32>
// ALWAYS-NEXT:   %[[SEEN:.*]] = arith.cmpi eq, %[[CUR]], %ROUND : i32
// CHECK-NEXT:    %[[LAST:.*]] = scf.if %[[SEEN]] -> (i32) {
// CHECK-NEXT:      scf.yield %ROUND : i32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[X:.*]] = "memref.atomic_rmw"(%ROUND, %stamp, %v) <{kind = 2 : i64}>
// CHECK-NEXT:      scf.yield %[[X]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %first = arith.cmpi ne, %[[LAST]], %ROUND : i32

// REMARK: remark: irgl-stamp-test: @relax: argument 2: 1 round-stamp exchange(s) skipped where the entry holds the counter (on graphs of degree over 32x the mean)

// CUDA-LABEL: __global__ void relax(
// CUDA:         irgl_graph_max_degree(g)
// CUDA:         = (int64_t)
// CUDA:         __ldcg(&stamp[
// CUDA:         atomicExch(&stamp[

// OFF-LABEL: __global__ void relax(
// OFF-NOT:      __ldcg
// OFF:          atomicExch(&stamp[

// -----

// An array also read in the kernel is not a stamp: its exchange stays.
irgl.kernel @mixed(%g: !irgl.graph, %mark: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %seen = memref.load %mark[%n] : memref<?xi32>
    %last = "memref.atomic_rmw"(%ROUND, %mark, %n) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
    %first = arith.cmpi ne, %last, %seen : i32
    scf.if %first {
      irgl.wl.push %n
    }
  }
}

// CHECK-LABEL: irgl.kernel @mixed
// CHECK-NOT:     irgl_rt.coherent
// CHECK:         "memref.atomic_rmw"(%ROUND, %mark, %n) <{kind = 2 : i64}>
// CHECK-NOT:     scf.if {{.*}} -> (i32)

// CUDA-LABEL: __global__ void mixed(
// CUDA-NOT:     __ldcg
// CUDA:         atomicExch(&mark[

// -----

// A kernel without a graph cannot tell hubs: its stamp is always tested.
irgl.kernel @nograph(%stamp: memref<?xi32>, %ROUND: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    %last = "memref.atomic_rmw"(%ROUND, %stamp, %n) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
    %first = arith.cmpi ne, %last, %ROUND : i32
    scf.if %first {
      irgl.wl.push %n
    }
  }
}

// CHECK-LABEL: irgl.kernel @nograph
// CHECK-NOT:     irgl.graph.max_degree
// CHECK:         %[[CUR:.*]] = memref.load %stamp[%n] {irgl_rt.coherent} : memref<?xi32>
// CHECK-NEXT:    %[[SEEN:.*]] = arith.cmpi eq, %[[CUR]], %ROUND : i32
// CHECK-NEXT:    scf.if %[[SEEN]] -> (i32) {

// REMARK: remark: irgl-stamp-test: @nograph: argument 0: 1 round-stamp exchange(s) skipped where the entry holds the counter{{$}}
