"""The interpreter runs `irgl.forall ... reduce(kind, %init : T)`: add, min
and max over index, i32 (with two's complement wrap-around) and f64, in plain
and host kernels, under sequential and random schedules."""

from __future__ import annotations

import numpy as np
import pytest

from irgl_interpreter import Graph, parse_program, run_host

PROGRAM = """
irgl.kernel @k(%g: !irgl.graph, %x: memref<?xi32>, %f: memref<?xf64>,
               %sum: memref<?xi32>, %lo: memref<?xi32>, %hi: memref<?xindex>,
               %fsum: memref<?xf64>) {
  %big = arith.constant 2147483647 : i32
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %c0 : i32) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xi32>
      irgl.yield %v : i32
    }
    memref.store %s, %sum[%n] : memref<?xi32>
    %m = irgl.forall %e in edges(%g, %n) reduce(min, %big : i32) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %x[%u] : memref<?xi32>
      irgl.yield %v : i32
    }
    memref.store %m, %lo[%n] : memref<?xi32>
    %h = irgl.forall %e in edges(%g, %n) reduce(max, %n : index) {
      %u = irgl.graph.edge_dst %g[%e]
      irgl.yield %u : index
    }
    memref.store %h, %hi[%n] : memref<?xindex>
    %own = memref.load %f[%n] : memref<?xf64>
    %t = irgl.forall %e in edges(%g, %n) reduce(add, %own : f64) {
      %u = irgl.graph.edge_dst %g[%e]
      %v = memref.load %f[%u] : memref<?xf64>
      irgl.yield %v : f64
    }
    memref.store %t, %fsum[%n] : memref<?xf64>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %x: memref<?xi32>, %f: memref<?xf64>,
                       %sum: memref<?xi32>, %lo: memref<?xi32>, %hi: memref<?xindex>,
                       %fsum: memref<?xf64>, %tri: memref<?xindex>) {
  irgl.invoke @k(%g, %x, %f, %sum, %lo, %hi, %fsum)
      : (!irgl.graph, memref<?xi32>, memref<?xf64>, memref<?xi32>, memref<?xi32>,
         memref<?xindex>, memref<?xf64>)
  // a host ForAll reduces too: tri[i] = 0 + 1 + ... + (i - 1)
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  irgl.forall %i in range(%c0, %c5) {
    %t = irgl.forall %j in range(%c0, %i) reduce(add, %c0 : index) {
      irgl.yield %j : index
    }
    memref.store %t, %tri[%i] : memref<?xindex>
  }
}
"""


@pytest.mark.parametrize("schedule", ["sequential", "random:3"])
def test_reductions(schedule: str) -> None:
    # node 0 -> 1, 2, 3; node 1 -> 0, 3; nodes 2, 3 -> nothing
    graph = Graph(4, [0, 3, 5, 5, 5], [1, 2, 3, 0, 3], [1] * 5)
    x = np.array([5, 2147483647, 9, -4], dtype=np.int32)
    f = np.array([0.5, 1.0, 2.0, 4.0])
    sums = np.zeros(4, np.int32)
    lo = np.zeros(4, np.int32)
    hi = np.zeros(4, np.int64)
    fsum = np.zeros(4)
    tri = np.zeros(5, np.int64)
    run_host(
        parse_program(PROGRAM),
        "main",
        [graph, x, f, sums, lo, hi, fsum, tri],
        schedule,
    )
    # 2147483647 + 9 - 4 wraps around in i32
    assert sums.tolist() == [-2147483644, 1, 0, 0]
    assert lo.tolist() == [-4, -4, 2147483647, 2147483647]
    assert hi.tolist() == [3, 3, 2, 3]
    assert fsum.tolist() == [7.5, 5.5, 2.0, 4.0]
    assert tri.tolist() == [0, 0, 1, 3, 6]
