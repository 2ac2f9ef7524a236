// RUN: irgl-opt %s --split-input-file --verify-diagnostics -p lower-irgl | filecheck %s

// The irgl_dist ops belong to a program irgl-distribute made: lowered for one
// GPU they stop the lowering with a located diagnostic naming the way.

irgl.kernel @label(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %gid = irgl_dist.global_id %g[%n]
    %v = arith.index_cast %gid : index to i32
    memref.store %v, %a[%n] : memref<?xi32>
  }
}

irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.invoke @label(%g, %a) : (!irgl.graph, memref<?xi32>)
}

// CHECK: 'irgl_dist.global_id' belongs to a program for several GPUs (irgl-distribute's output): lower it with lower-irgl{distribute=oec} or {distribute=cvc}, the policy it was distributed for

// -----

irgl.kernel @push(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %own = irgl_dist.is_master %g[%t]
      scf.if %own {
        irgl.wl.push %t
      } else {
        irgl_dist.push_mirror %g[%t]
      }
    }
  }
}

irgl.kernel host @main(%g: !irgl.graph, %src: index) {
  irgl.iterate @push(%g) : (!irgl.graph) initial [%src] {
  }
}

// CHECK: 'irgl_dist.is_master' belongs to a program for several GPUs
