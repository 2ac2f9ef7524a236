// RUN: irgl-opt %s --split-input-file -p irgl-stamp-test | filecheck %s
// RUN: irgl-opt %s --split-input-file -p "irgl-stamp-test{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p "lower-irgl{stamp_test=true}" -t cuda | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s --split-input-file -p "lower-irgl" -t cuda | filecheck %s --check-prefix=OFF

// irgl-stamp-test: a round stamp's exchange (the array is used in the
// kernel only to exchange the round counter, the old entry deciding only a
// push) reads the entry first, where atomics update it, and exchanges only
// where the entry is not yet the counter; the old value it hands on is the
// counter where it skipped, so the push is skipped too.
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
// CHECK:         %[[CUR:.*]] = memref.load %stamp[%v] {irgl_rt.coherent} : memref<?xi32>
// CHECK-NEXT:    %[[SEEN:.*]] = arith.cmpi eq, %[[CUR]], %ROUND : i32
// CHECK-NEXT:    %[[LAST:.*]] = scf.if %[[SEEN]] -> (i32) {
// CHECK-NEXT:      scf.yield %[[CUR]] : i32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[X:.*]] = "memref.atomic_rmw"(%ROUND, %stamp, %v) <{kind = 2 : i64}>
// CHECK-NEXT:      scf.yield %[[X]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %first = arith.cmpi ne, %[[LAST]], %ROUND : i32

// REMARK: remark: irgl-stamp-test: @relax: argument 2: 1 round-stamp exchange(s) skipped where the entry holds the counter

// CUDA-LABEL: __global__ void relax(
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
