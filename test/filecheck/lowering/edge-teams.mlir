// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops{edge_teams=4}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-nested-parallelism,convert-irgl-loops' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{outline=false edge_teams=8}' -t 'cuda{inline-runtime=false}' | filecheck %s --check-prefix=CUDA
// RUN: not irgl-opt %s -p 'lower-irgl{edge_teams=1}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not irgl-opt %s -p 'convert-irgl-loops{edge_teams=-3}' 2>&1 | filecheck %s --check-prefix=BAD3

// Short worklists walked by teams of blocks (convert-irgl-loops
// `edge_teams` = T): a ForAll over the worklist whose body is reads then one
// edge loop marked for nested scheduling runs, while the worklist has at
// most one item per T blocks, as teams: block b takes item b / team (team =
// blocks / count) and the (b mod team)-th of team shares of its edges,
// walked by its threads; otherwise as before (uniform rounds).
irgl.kernel @bfs(%g: !irgl.graph, %level: memref<?xi32>, %L: i32) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        memref.store %L, %level[%dst] : memref<?xi32>
        irgl.wl.push %dst
      }
    }
  }
}

// CHECK-LABEL:  "gpu.func"
// CHECK:        ^{{.*}}(%g: !irgl.graph, %level: memref<?xi32>, %L: i32, %[[IN:.*]]: !irgl_rt.worklist, %[[OUT:.*]]: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist):
// CHECK:        %[[SIZE:.*]] = func.call @irgl_wl_size(%[[IN]])
// CHECK:        %[[COUNT:.*]] = arith.ceildivsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   %[[BLOCKS:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK:        %[[SOME:.*]] = arith.cmpi sgt, %[[COUNT]], %{{.*}} : index
// CHECK-NEXT:   %[[T:.*]] = arith.constant 4 : index
// CHECK-NEXT:   %[[LIMIT:.*]] = arith.divui %[[BLOCKS]], %[[T]] : index
// CHECK-NEXT:   %[[FEW:.*]] = arith.cmpi sle, %[[COUNT]], %[[LIMIT]] : index
// CHECK-NEXT:   %[[USE:.*]] = arith.andi %[[SOME]], %[[FEW]] : i1
// CHECK-NEXT:   scf.if %[[USE]] {
// CHECK-NEXT:     %[[TEAM:.*]] = arith.divui %[[BLOCKS]], %[[COUNT]] : index
// CHECK-NEXT:     %[[BLOCK:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:     %[[K:.*]] = arith.divui %[[BLOCK]], %[[TEAM]] : index
// CHECK-NEXT:     %[[KT:.*]] = arith.muli %[[K]], %[[TEAM]] : index
// CHECK-NEXT:     %[[RANK:.*]] = arith.subi %[[BLOCK]], %[[KT]] : index
// CHECK-NEXT:     %[[HAS:.*]] = arith.cmpi ult, %[[K]], %[[COUNT]] : index
// CHECK-NEXT:     scf.if %[[HAS]] {
// CHECK:            %n = func.call @irgl_wl_item(%[[IN]], %{{.*}})
// CHECK-NEXT:       %[[FIRST:.*]] = irgl.graph.first_edge %g[%n]
// CHECK-NEXT:       %[[LAST:.*]] = irgl.graph.last_edge %g[%n]
// CHECK-NEXT:       %[[LEN:.*]] = arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK-NEXT:       %[[SHARE:.*]] = arith.ceildivui %[[LEN]], %[[TEAM]] : index
// CHECK-NEXT:       %[[SKIPPED:.*]] = arith.muli %[[RANK]], %[[SHARE]] : index
// CHECK-NEXT:       %[[OFFSET:.*]] = arith.minui %[[SKIPPED]], %[[LEN]] : index
// CHECK-NEXT:       %[[LO:.*]] = arith.addi %[[FIRST]], %[[OFFSET]] : index
// CHECK-NEXT:       %[[END:.*]] = arith.addi %[[LO]], %[[SHARE]] : index
// CHECK-NEXT:       %[[HI:.*]] = arith.minui %[[END]], %[[LAST]] : index
// CHECK-NEXT:       %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:       %[[START:.*]] = arith.addi %[[LO]], %[[TID]] : index
// CHECK-NEXT:       %[[STEP:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:       scf.for %[[E:.*]] = %[[START]] to %[[HI]] step %[[STEP]] {
// CHECK-NEXT:         %dst = irgl.graph.edge_dst %g[%[[E]]]
// CHECK:              func.call @irgl_wl_push(%[[OUT]], %dst)
// CHECK:          } else {
// The worklist is longer: uniform rounds, the edge loop shared in phases.
// CHECK:            %{{.*}} = func.call @irgl_wl_size(%[[IN]])
// CHECK:            irgl_rt.collective
// CHECK:          } {irgl_rt.forall = #irgl_rt.forall<uniform>}

// OFF-LABEL:    "gpu.func"
// OFF-NOT:      arith.divui
// OFF:          irgl_rt.collective

// CUDA:         __global__ void bfs(
// CUDA:           if ({{v[0-9]+}}) {
// CUDA:             for (irgl_index [[E:v[0-9]+]] = {{v[0-9]+}}; [[E]] < {{v[0-9]+}}; [[E]] += {{v[0-9]+}}) {
// CUDA-NEXT:          irgl_index dst = irgl_graph_edge_dst(g, [[E]]);
// CUDA:           } else {

// BAD: lower-irgl: edge_teams must be 0 (off) or at least 2, got 1
// BAD3: convert-irgl-loops: edge_teams must be 0 (off) or at least 2, got -3

// -----

// A write before the edge loop would run once per block of a team: no team
// form.
irgl.kernel @mark(%g: !irgl.graph, %seen: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    memref.store %one, %seen[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %dst
    }
  }
}

// CHECK-LABEL:  "gpu.func"
// CHECK-NOT:    arith.divui
// CHECK:        irgl_rt.collective
// OFF-LABEL:    "gpu.func"
// OFF-NOT:      arith.divui

// -----

// A reducing edge loop (its total is the item's): no team form.
irgl.kernel @deg(%g: !irgl.graph, %out: memref<?xi32>) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %s = irgl.forall %e in edges(%g, %n) reduce(add, %zero : i32) {
      irgl.yield %one : i32
    }
    memref.store %s, %out[%n] : memref<?xi32>
  }
}

// CHECK-LABEL:  "gpu.func"
// CHECK-NOT:    arith.divui
// CHECK:        irgl_rt.collective
