// RUN: irgl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Rules that keep verified programs from breaking after lowering, and bad
// input that xDSL's own verifiers reject with a bare Python exception: each
// gets a diagnostic at its op (underlined in the printed module).

// RULE_RESERVED_NAME: the lowering creates the module @irgl_kernels.

irgl.kernel @irgl_kernels(%n: index) {
}

// CHECK:      'irgl.kernel' @irgl_kernels: names starting with 'irgl_' are reserved for the symbols that the lowering creates (the kernel module, host and entry functions, runtime functions) (rule: kernel names do not collide with generated names)
// CHECK:      ^^^^^^^^^^^^^

// -----

// RULE_RESERVED_NAME: host entry points are called irgl_host_*.

irgl.kernel host @irgl_host_main(%n: index) {
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' @irgl_host_main: names starting with 'irgl_' are reserved

// -----

// RULE_GRAPH_ACCESS: a graph accessor outside any kernel.

%g = "test.op"() : () -> !irgl.graph
%n = irgl.graph.num_nodes %g

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.graph.num_nodes' (graph access) may only appear in kernels, but it is outside any kernel (rule: graph accesses only in device code)

// -----

// RULE_GRAPH_ACCESS: an edge accessor in a host kernel.

irgl.kernel host @h(%g: !irgl.graph, %e: index) {
  %d = irgl.graph.edge_dst %g[%e]
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.graph.edge_dst' (graph access) may only appear in plain or device kernels, but it is in a host kernel: the graph's edges live in GPU memory, so graph accessors need device code (rule: graph accesses only in device code)

// -----

// RULE_GRAPH_ACCESS: an edge ForAll in a host kernel.

irgl.kernel host @h(%g: !irgl.graph, %n: index) {
  irgl.forall %e in edges(%g, %n) {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' over edges may not appear in a host kernel: the graph's edges live in GPU memory, so edge traversals need device code (a plain kernel) (rule: graph accesses only in device code)

// -----

// RULE_DOMINANCE: a value used before its definition; the user's line is shown.

irgl.kernel @k(%x: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %v = arith.addi %w, %w : i32
  %w = memref.load %x[%c0] : memref<?xi32>
}

// CHECK:      // {{-+}}
// CHECK-NEXT: invalid-hardening.mlir:64:3: error: 'arith.addi' uses %w before (or outside) its definition (rule: values are defined before their uses)
// CHECK-NEXT: %v = arith.addi %w, %w : i32
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^^

// -----

// RULE_SYNC: a data-dependent trip count (a loaded value) is not uniform.

irgl.kernel @k(%x: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.load %x[%c0] : memref<?xindex>
  scf.for %i = %c0 to %m step %c1 {
    irgl.sync_running_threads
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.sync_running_threads' must be executed by all threads: place it directly in the kernel body, directly in the outermost ForAll, or in scf.for or irgl.for loops there whose trip counts are uniform (kernel arguments, constants and arithmetic of them) (rule: SyncRunningThreads executed uniformly)

// -----

// RULE_SYNC: a loop bounded by the ForAll index is not uniform.

irgl.kernel @k(%n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    irgl.for %j in range(%c0, %i) {
      irgl.sync_running_threads
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.sync_running_threads' must be executed by all threads

// -----

// RULE_SYNC: a uniform loop inside the outermost ForAll counts only directly
// in its body (inside an scf.if not every thread runs it).

irgl.kernel @k(%x: memref<?xi32>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  irgl.forall %i in range(%c0, %n) {
    scf.if %p {
      scf.for %r = %c0 to %c2 step %c1 {
        irgl.sync_running_threads
      }
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.sync_running_threads' must be executed by all threads

// -----

// xDSL's memref.load verifier raises a bare Exception: reported at the op.

irgl.kernel @k(%x: memref<?xi32>, %c: index) {
  %v = "memref.load"(%x, %c, %c) : (memref<?xi32>, index, index) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: invalid-hardening.mlir:131:3: error: 'memref.load' is malformed (its verifier failed with Exception: expected an index for each dimension)
// CHECK-NEXT: %v = "memref.load"(%x, %c, %c)
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^

// -----

// A pop whose ForAll (generic form) lacks its iterator: a rule, not a KeyError.

irgl.kernel @k(%n: index) {
  "irgl.forall"(%n, %n) ({
  ^bb0(%i: index):
    %it = "irgl.wl.pop"(%i) : (index) -> index
    "irgl.yield"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> ()
  }) : (index, index) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.wl.pop' pops only the index of an enclosing `irgl.forall ... in worklist` (rule: pop only the index of a worklist ForAll)

// -----

// An scf.if with results but no scf.yield: a located diagnostic.

irgl.kernel @k(%c: i1) {
  %r = "scf.if"(%c) ({
    %z = arith.constant 0 : i32
  }, {
    %o = arith.constant 1 : i32
    scf.yield %o : i32
  }) : (i1) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: invalid-hardening.mlir:160:5: error: Operation arith.constant terminates block in single-block region but is not a terminator
// CHECK-NEXT: %z = arith.constant 0 : i32
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^^^{{$}}

// -----

// RULE_YIELDS (found by the fuzzer): an scf.if with a result and an empty
// else branch (an implicit empty yield) crashed the CUDA emitter.

irgl.kernel @k(%c: i1) {
  %r = scf.if %c -> (i64) {
    %z = arith.constant 0 : i64
    scf.yield %z : i64
  } else {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: invalid-hardening.mlir:178:3: error: 'scf.if' has results (i64), so each branch must end with scf.yield of values of those types (rule: scf.if yields its results from both branches)
// CHECK-NEXT: %r = scf.if %c -> (i64) {
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^^^^^^{{$}}

// -----

// RULE_PREDICATE (found by the fuzzer): xDSL accepts any cmpi predicate, and
// printing or emitting the op then failed.

irgl.kernel @k(%a: i32) {
  %c = "arith.cmpi"(%a, %a) <{predicate = 1073741823 : i64}> : (i32, i32) -> i1
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'arith.cmpi' predicate must be an integer in [0, 9], got 1073741823 : i64 (rule: comparison predicates are known)

// -----

// RULE_GRAPH_ACCESS: the largest degree outside any kernel.

%g = "test.op"() : () -> !irgl.graph
%d = irgl.graph.max_degree %g

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.graph.max_degree' (graph access) may only appear in kernels, but it is outside any kernel (rule: graph accesses only in device code)
