// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{conditional=true}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{conditional=true remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{conditional=false remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{outline_conditional=true remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// irgl-outline-iterations{conditional=true}: a kernel invoked inside an
// scf.if of a Pipe body runs in the control kernel. Every thread takes the
// same branch (the condition is the host's argument), and the steps' state
// leaves the scf.if as its results: the worklist handles (rotated by
// @step before it), the size of `in` and the step counter, which only the
// branch that invokes advances. The else branch yields them unchanged.
irgl.kernel @step(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel @mark(%out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %i in range(%c0, %c1) {
    %old = "memref.atomic_rmw"(%one, %out, %c0) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
  }
}
irgl.kernel host @main(%g: !irgl.graph, %out: memref<?xi32>, %flag: i1) {
  irgl.pipe {
    irgl.invoke @step(%g) : (!irgl.graph)
    scf.if %flag {
      irgl.invoke @mark(%out) : (memref<?xi32>)
    }
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         "gpu.launch_func"
// CHECK-SAME:      kernel = @irgl_kernels::@main_control
// CHECK:         "gpu.func"() <{function_type = (!irgl.graph, i1, memref<?xi32>,
// CHECK-NEXT:    ^{{.*}}(%[[G:[0-9a-z_]+]]: !irgl.graph, %[[FLAG:[0-9a-z_]+]]: i1, %[[OUT:[0-9a-z_]+]]: memref<?xi32>,
// CHECK:         scf.while
// CHECK:         ^{{.*}}(%[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT_WL:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RETRY:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SPARE:[0-9a-z_]+]]: !irgl_rt.worklist, %{{.*}}: index, %[[EPOCH:[0-9a-z_]+]]: index):
// CHECK-NEXT:      func.call @irgl_ctl_clear(%[[SPARE]])
// CHECK-NEXT:      func.call @step_device(%[[G]], %[[IN]], %[[OUT_WL]], %[[SPARE]],
// CHECK-NEXT:      func.call @irgl_grid_sync()
// CHECK-NEXT:      %[[SIZE:.*]] = func.call @irgl_ctl_size_check(%[[OUT_WL]],
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[E1:.*]] = arith.addi %[[EPOCH]], %[[ONE]] : index
// CHECK-NEXT:      %[[W0:[0-9a-z_]+]], %[[W1:[0-9a-z_]+]], %[[W2:[0-9a-z_]+]], %[[W3:[0-9a-z_]+]], %[[S:[0-9a-z_]+]], %[[E:[0-9a-z_]+]] = scf.if %[[FLAG]] -> (!irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index) {
// CHECK-NEXT:        func.call @irgl_ctl_clear(%[[IN]])
// CHECK-NEXT:        func.call @mark_device(%[[OUT]])
// CHECK-NEXT:        func.call @irgl_grid_sync()
// CHECK-NEXT:        %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[E2:.*]] = arith.addi %[[E1]], %[[ONE2]] : index
// CHECK-NEXT:        scf.yield %[[OUT_WL]], %[[SPARE]], %[[RETRY]], %[[IN]], %[[SIZE]], %[[E2]] :
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[OUT_WL]], %[[SPARE]], %[[RETRY]], %[[IN]], %[[SIZE]], %[[E1]] :
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi sgt, %[[S]], %[[Z]] : index
// CHECK-NEXT:      scf.yield %[[MORE]], %[[W0]], %[[W1]], %[[W2]], %[[W3]], %[[S]], %[[E]] :

// The mode of block 0 alone would run the branch's barriers in one block:
// a loop whose round invokes inside scf.if gets none.
// REMARK: remark: irgl.pipe in @main: outlined into control kernel @main_control
// REMARK-NEXT: remark: irgl.pipe in @main: no small-worklist mode: its round invokes a kernel inside scf.if
// With the option off the Pipe stays a host loop.
// OFF: remark: irgl.pipe in @main: not outlined: 'irgl.invoke' inside 'scf.if' (only directly in an Iterate or Pipe body)

// -----

// A loop inside the scf.if keeps the host loop: its rounds' state would
// leave the branch with the loop's.
irgl.kernel @step(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%g: !irgl.graph, %flag: i1) {
  irgl.pipe {
    irgl.invoke @step(%g) : (!irgl.graph)
    scf.if %flag {
      irgl.invoke @step(%g) : (!irgl.graph)
      irgl.iterate @step(%g) : (!irgl.graph) {
        irgl.yield
      }
    }
  }
}

// CHECK-LABEL: func.func @main
// CHECK-NOT:     gpu.launch_func
// REMARK: remark: irgl.pipe in @main: not outlined: 'irgl.iterate' inside 'scf.if' (a loop directly in an Iterate or Pipe body only)
