// RUN: irgl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// The verifier rules of the irgl_dist ops, one case each.

// Array reductions exclude or/and.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl_dist.sync_nodes %a or : memref<?xi32>
}
// CHECK: 'irgl_dist.sync_nodes' reduction or combines booleans, not array entries (expected min, max, minu, maxu, add or set)

// -----

// masters_only is a broadcast: only with set.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl_dist.sync_nodes %a min masters_only : memref<?xi32>
}
// CHECK: 'irgl_dist.sync_nodes' masters_only is a broadcast of the owners' values: it needs the set reduction, got min

// -----

// agreed (the mirrors were computed like their masters): only with set ...
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl_dist.sync_nodes %a max agreed : memref<?xi32>
}
// CHECK: 'irgl_dist.sync_nodes' agreed says that every copy holds its master's value: it needs the set reduction, got max

// -----

// ... and not with masters_only.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl_dist.sync_nodes %a set masters_only agreed : memref<?xi32>
}
// CHECK: 'irgl_dist.sync_nodes' is either masters_only (the masters' values are broadcast) or agreed (the mirrors already hold them), not both

// -----

// Synchronized arrays are one-dimensional.
irgl.kernel host @main(%a: memref<4x4xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = []>} {
  irgl_dist.allreduce_cells %a min : memref<4x4xi32>
}
// CHECK: 'irgl_dist.allreduce_cells' synchronizes a one-dimensional array, got memref<4x4xi32>

// -----

// Unsigned reductions need integers.
irgl.kernel host @main(%a: memref<?xf32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl_dist.sync_nodes %a minu : memref<?xf32>
}
// CHECK: 'irgl_dist.sync_nodes' reduction minu is unsigned: it needs integers, got f32

// -----

// Boolean reductions need i1.
irgl.kernel host @main(%x: i32) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = []>} {
  %r = irgl_dist.allreduce or %x : i32
}
// CHECK: 'irgl_dist.allreduce' reduction or combines booleans (i1), got i32

// -----

// A value has no agreed copy: no `set`.
irgl.kernel host @main(%x: i32) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = []>} {
  %r = irgl_dist.allreduce set %x : i32
}
// CHECK: 'irgl_dist.allreduce' reduction set picks an updated copy of an array entry; a value has no agreed copy to compare with

// -----

// The host kernel must be distributed.
irgl.kernel host @main(%a: memref<?xi32>) {
  irgl_dist.sync_nodes %a min : memref<?xi32>
}
// CHECK: 'irgl_dist.sync_nodes' synchronizes ranks, so its host kernel must be distributed: it needs a #irgl_dist.host attribute named 'irgl_dist.host' (irgl-distribute adds it)

// -----

// Synchronization happens on the host.
irgl.kernel @k(%a: memref<?xi32>) {
  irgl_dist.sync_nodes %a min : memref<?xi32>
}
// CHECK: 'irgl_dist.sync_nodes' (sync_nodes) is an orchestration construct and may only appear in a host kernel, but it is in a plain kernel

// -----

// sync_worklist needs a pipe context.
irgl.kernel host @main() attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = []>} {
  irgl_dist.sync_worklist
}
// CHECK: 'irgl_dist.sync_worklist' must be inside an irgl.pipe or irgl.iterate: it synchronizes the worklist of their pipe context

// -----

// local_node translates host values.
irgl.kernel host @main(%g: !irgl.graph, %src: index) {
  %s = irgl_dist.local_node %g[%src]
}
// CHECK: 'irgl_dist.local_node' synchronizes ranks, so its host kernel must be distributed

// -----

// global_id is device code.
irgl.kernel host @main(%g: !irgl.graph, %n: index) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = []>} {
  %x = irgl_dist.global_id %g[%n]
}
// CHECK: 'irgl_dist.global_id' (graph access) may only appear in plain or device kernels, but it is in a host kernel

// -----

// is_master compares a local id with the rank's master count: device code.
irgl.kernel host @main(%g: !irgl.graph, %n: index) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = []>} {
  %own = irgl_dist.is_master %g[%n]
}
// CHECK: 'irgl_dist.is_master' (graph access) may only appear in plain or device kernels, but it is in a host kernel

// -----

// push_mirror sets a round's pushed bit: a plain kernel's construct.
irgl.kernel device @helper(%g: !irgl.graph, %n: index) {
  irgl_dist.push_mirror %g[%n]
}
// CHECK: 'irgl_dist.push_mirror' (push_mirror) is a kernel construct and may only appear in a plain kernel, but it is in a device kernel

// -----

// sync_worklist reduce leaves mirrors behind their masters: min or max only.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl.pipe {
    irgl_dist.sync_worklist reduce %a add : memref<?xi32>
  }
}
// CHECK: 'irgl_dist.sync_worklist' reduce keeps each rank's mirrors: only min, max, minu and maxu tolerate a mirror that lags its master, got add

// -----

// The array and its reduction go together.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl.pipe {
    "irgl_dist.sync_worklist"(%a) : (memref<?xi32>) -> ()
  }
}
// CHECK: 'irgl_dist.sync_worklist' reduce needs both the array and its reduction

// -----

// A one-dimensional node array.
irgl.kernel host @main(%a: memref<4x4xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl.pipe {
    irgl_dist.sync_worklist reduce %a min : memref<4x4xi32>
  }
}
// CHECK: 'irgl_dist.sync_worklist' reduces a one-dimensional node array, got memref<4x4xi32>

// -----

// Under a vertex-cut a popped mirror holds edges: no reduce-only exchange.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<cvc, nodes = [0]>} {
  irgl.pipe {
    irgl_dist.sync_worklist reduce %a min : memref<?xi32>
  }
}
// CHECK: 'irgl_dist.sync_worklist' reduce needs an edge-cut (oec): under a vertex-cut a popped mirror holds edges and reads its own lagging value

// -----

// late_broadcast sends the masters of the array reduce names.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl.pipe {
    "irgl_dist.sync_worklist"() <{late_broadcast}> : () -> ()
  }
}
// CHECK: 'irgl_dist.sync_worklist' late_broadcast sends the masters of a reduced array: it needs reduce

// -----

// every_master drops the mirror items that reduce sends with the values.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0]>} {
  irgl.pipe {
    "irgl_dist.sync_worklist"(%a) <{reduction = #irgl_dist<reduction min>, every_master}> : (memref<?xi32>) -> ()
  }
}
// CHECK: 'irgl_dist.sync_worklist' every_master drops the mirror items, and reduce sends the updated mirrors with them: they do not combine
