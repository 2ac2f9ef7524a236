// RUN: irgl-opt %s -p irgl-distribute | filecheck %s
// RUN: irgl-opt %s -p "irgl-distribute{policy=cvc}" | filecheck %s
// RUN: irgl-opt %s -p "irgl-distribute{remarks=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s -p "irgl-distribute,convert-irgl-kernels,convert-irgl-dist-orchestration,convert-irgl-dist" | filecheck %s --check-prefix=LOWERED
// RUN: irgl-opt %s -p "lower-irgl{distribute=oec}" -t cuda | filecheck %s --check-prefix=CUDA

// A kernel whose ForAll over the nodes, at its top level, pushes its node
// unconditionally pushes every master on the master's own rank: its
// worklist is synchronized `every_master` (mirror items dropped, nothing
// sent to the owners). A push under a condition, or of another node,
// keeps the exchange.

// CC's first step: every node its own label, every node pushed.
irgl.kernel @all(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %self = arith.index_cast %n : index to i32
    memref.store %self, %comp[%n] : memref<?xi32>
    irgl.wl.push %n
  }
}

// Only the nodes with edges: a mirror's push may be the only one of its node.
irgl.kernel @some(%g: !irgl.graph, %comp: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %deg = irgl.graph.degree %g[%n]
    %has = arith.cmpi ne, %deg, %c0 : index
    scf.if %has {
      irgl.wl.push %n
    }
  }
}

// The neighbours of the worklist's nodes: pushes of other nodes.
irgl.kernel @neighbours(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %t
    }
  }
}

irgl.kernel @visit(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %v = memref.load %comp[%n] : memref<?xi32>
  }
}

irgl.kernel host @main(%g: !irgl.graph, %comp: memref<?xi32>) {
  irgl.pipe once {
    irgl.invoke @all(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @visit(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @some(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @visit(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @neighbours(%g, %comp) : (!irgl.graph, memref<?xi32>)
    irgl.invoke @visit(%g, %comp) : (!irgl.graph, memref<?xi32>)
  }
}

// CHECK-LABEL: irgl.kernel host @main(
// CHECK:         irgl.invoke @all(
// CHECK-NEXT:    irgl.invoke @all_mirrors(
// CHECK-NEXT:    irgl_dist.sync_nodes %comp set agreed
// CHECK-NEXT:    irgl_dist.sync_worklist every_master
// CHECK-NEXT:    irgl.invoke @visit(
// CHECK-NEXT:    irgl.invoke @some(
// CHECK-NEXT:    irgl_dist.sync_worklist{{$}}
// CHECK-NEXT:    irgl.invoke @visit(
// CHECK-NEXT:    irgl.invoke @neighbours(
// CHECK-NEXT:    irgl_dist.sync_worklist{{$}}
// CHECK-NEXT:    irgl.invoke @visit(

// REMARK: after @all: sync_worklist every_master (the kernel pushes every node it visits, so each rank pushed all its masters: mirror items dropped, nothing sent to the owners)
// REMARK: after @some: sync_worklist (pushed mirrors to their owners)
// REMARK: after @neighbours: sync_worklist (pushed mirrors to their owners)

// LOWERED-LABEL: func.func @main(
// LOWERED:         func.call @irgl_dist_sync_worklist_every_master(
// LOWERED:         func.call @irgl_dist_sync_worklist(
// LOWERED:         func.call @irgl_dist_sync_worklist(
// LOWERED-NOT:     func.call @irgl_dist_sync_worklist_every_master(

// CUDA: static void irgl_host_main(
// CUDA:   irgl_dist_sync_worklist_every_master(
