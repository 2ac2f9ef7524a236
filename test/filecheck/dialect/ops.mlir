// RUN: irgl-opt %s --split-input-file | irgl-opt --split-input-file | filecheck %s
// RUN: irgl-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %IRGL_ROUNDTRIP | filecheck %s

// Round trip of every irgl op in its custom form (CHECK, printed, parsed
// again and printed) and its generic form (GENERIC, and %IRGL_ROUNDTRIP,
// which goes through the generic form and back to the custom form).

// The C escape hatch at module level (spec: Names, CDeclGlobal, CBlock, NOP).

irgl.names ["INF", "MAXDEG"]
irgl.cdecl_global "int" "nbad" = "0"
irgl.cdecl_global "float" "eps" = "1e-6f" dont_move
irgl.cdecl_global "unsigned" "seed" dont_move
irgl.cdecl_global "int" "scratch"
irgl.cblock "#include <cstdio>"
irgl.nop

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.names ["INF", "MAXDEG"]
// CHECK-NEXT:   irgl.cdecl_global "int" "nbad" = "0"
// CHECK-NEXT:   irgl.cdecl_global "float" "eps" = "1e-6f" dont_move
// CHECK-NEXT:   irgl.cdecl_global "unsigned" "seed" dont_move
// CHECK-NEXT:   irgl.cdecl_global "int" "scratch"
// CHECK-NEXT:   irgl.cblock "#include <cstdio>"
// CHECK-NEXT:   irgl.nop
// CHECK-NEXT: }

// GENERIC: "irgl.names"() <{names = ["INF", "MAXDEG"]}> : () -> ()
// GENERIC: "irgl.cdecl_global"() <{c_type = "int", var_name = "nbad", init = "0"}> : () -> ()
// GENERIC: "irgl.cdecl_global"() <{c_type = "float", var_name = "eps", init = "1e-6f", dont_move}> : () -> ()
// GENERIC: "irgl.cdecl_global"() <{c_type = "unsigned", var_name = "seed", dont_move}> : () -> ()
// GENERIC: "irgl.cdecl_global"() <{c_type = "int", var_name = "scratch"}> : () -> ()
// GENERIC: "irgl.cblock"() <{text = "#include <cstdio>", operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> ()
// GENERIC: "irgl.nop"() : () -> ()

// -----

// Kernels: plain (with and without launch_bounds), host and device, with a
// return type, attributes, and an explicit irgl.return.

irgl.kernel @empty() {
}
irgl.kernel @bounded(%x: i32) launch_bounds(256) {
}
irgl.kernel @bounded2(%x: i32, %m: memref<?xi32>) launch_bounds(128, 4) attributes {irgl.note = "tuned"} {
}
irgl.kernel host @host_void(%g: !irgl.graph) {
  irgl.return
}
irgl.kernel host @host_ret(%n: index) -> index {
  irgl.return %n : index
}
irgl.kernel device @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  irgl.return %y : i32
}
irgl.kernel device @helper(%p: memref<?xi32>) {
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @empty() {
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel @bounded(%x: i32) launch_bounds(256) {
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel @bounded2(%x: i32, %m: memref<?xi32>) launch_bounds(128, 4) attributes {irgl.note = "tuned"} {
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @host_void(%g: !irgl.graph) {
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @host_ret(%n: index) -> index {
// CHECK-NEXT:     irgl.return %n : index
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel device @twice(%x: i32) -> i32 {
// CHECK-NEXT:     %y = arith.addi %x, %x : i32
// CHECK-NEXT:     irgl.return %y : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel device @helper(%p: memref<?xi32>) {
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "empty", kind = #irgl<kernel_kind plain>, function_type = () -> ()}> ({
// GENERIC: "irgl.kernel"() <{sym_name = "bounded", kind = #irgl<kernel_kind plain>, function_type = (i32) -> (), launch_bounds = array<i32: 256>}> ({
// GENERIC: ^bb0(%x: i32):
// GENERIC: "irgl.kernel"() <{sym_name = "bounded2", kind = #irgl<kernel_kind plain>, function_type = (i32, memref<?xi32>) -> (), launch_bounds = array<i32: 128, 4>}> ({
// GENERIC: ^bb0(%x: i32, %m: memref<?xi32>):
// GENERIC: "irgl.kernel"() <{sym_name = "host_void", kind = #irgl<kernel_kind host>, function_type = (!irgl.graph) -> ()}> ({
// GENERIC: ^bb0(%g: !irgl.graph):
// GENERIC: "irgl.kernel"() <{sym_name = "host_ret", kind = #irgl<kernel_kind host>, function_type = (index) -> index}> ({
// GENERIC: ^bb0(%n: index):
// GENERIC: "irgl.return"(%n) : (index) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "twice", kind = #irgl<kernel_kind device>, function_type = (i32) -> i32}> ({
// GENERIC: ^bb0(%x: i32):
// GENERIC: "irgl.return"(%y) : (i32) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "helper", kind = #irgl<kernel_kind device>, function_type = (memref<?xi32>) -> ()}> ({
// GENERIC: ^bb0(%p: memref<?xi32>):

// -----

// Calls of a device kernel (with and without a result) from a plain and a
// device kernel.

irgl.kernel device @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  irgl.return %y : i32
}
irgl.kernel device @quad(%x: i32, %p: memref<?xi32>) {
  %y = irgl.call @twice(%x) : (i32) -> i32
  %z = irgl.call @twice(%y) : (i32) -> i32
  %c0 = arith.constant 0 : index
  memref.store %z, %p[%c0] : memref<?xi32>
}
irgl.kernel @k(%x: i32, %p: memref<?xi32>) {
  irgl.call @quad(%x, %p) : (i32, memref<?xi32>) -> ()
}

// CHECK:      irgl.kernel device @quad(%x: i32, %p: memref<?xi32>) {
// CHECK-NEXT:   %y = irgl.call @twice(%x) : (i32) -> i32
// CHECK-NEXT:   %z = irgl.call @twice(%y) : (i32) -> i32
// CHECK:      irgl.kernel @k(%x: i32, %p: memref<?xi32>) {
// CHECK-NEXT:   irgl.call @quad(%x, %p) : (i32, memref<?xi32>) -> ()
// CHECK-NEXT: }

// GENERIC: %y = "irgl.call"(%x) <{callee = @twice}> : (i32) -> i32
// GENERIC: "irgl.call"(%x, %p) <{callee = @quad}> : (i32, memref<?xi32>) -> ()

// -----

// ForAll and For over every iterator: range (2 and 3 operands), nodes,
// edges and the worklist.

irgl.kernel @loops(%g: !irgl.graph, %lo: index, %hi: index, %st: index) {
  irgl.forall %i in range(%lo, %hi) {
    irgl.for %j in range(%lo, %hi, %st) {
    }
    irgl.forall %k in range(%lo, %hi, %st) {
    }
    irgl.for %m in range(%lo, %hi) {
      irgl.yield
    }
  }
  irgl.forall %n in nodes(%g) {
    irgl.forall %e in edges(%g, %n) {
    }
    irgl.for %e2 in edges(%g, %n) {
    }
  }
  irgl.for %n2 in nodes(%g) {
  }
}
irgl.kernel @wl_loop() {
  irgl.forall %slot in worklist {
  }
}
irgl.kernel host @host_loops(%g: !irgl.graph, %lo: index, %hi: index) {
  irgl.forall %i in range(%lo, %hi) {
  }
  irgl.forall %n in nodes(%g) attributes {irgl.note = "sequential on the host"} {
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @loops(%g: !irgl.graph, %lo: index, %hi: index, %st: index) {
// CHECK-NEXT:     irgl.forall %i in range(%lo, %hi) {
// CHECK-NEXT:       irgl.for %j in range(%lo, %hi, %st) {
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.forall %k in range(%lo, %hi, %st) {
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.for %m in range(%lo, %hi) {
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.forall %n in nodes(%g) {
// CHECK-NEXT:       irgl.forall %e in edges(%g, %n) {
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.for %e2 in edges(%g, %n) {
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.for %n2 in nodes(%g) {
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel @wl_loop() {
// CHECK-NEXT:     irgl.forall %slot in worklist {
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @host_loops(%g: !irgl.graph, %lo: index, %hi: index) {
// CHECK-NEXT:     irgl.forall %i in range(%lo, %hi) {
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.forall %n in nodes(%g) attributes {irgl.note = "sequential on the host"} {
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "loops", kind = #irgl<kernel_kind plain>, function_type = (!irgl.graph, index, index, index) -> ()}> ({
// GENERIC: ^bb0(%g: !irgl.graph, %lo: index, %hi: index, %st: index):
// GENERIC: "irgl.forall"(%lo, %hi) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%i: index):
// GENERIC: "irgl.for"(%lo, %hi, %st) <{iterator = #irgl<iterator range>}> ({
// GENERIC: ^bb0(%j: index):
// GENERIC: "irgl.forall"(%lo, %hi, %st) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 3, 0>}> ({
// GENERIC: ^bb0(%k: index):
// GENERIC: "irgl.for"(%lo, %hi) <{iterator = #irgl<iterator range>}> ({
// GENERIC: ^bb0(%m: index):
// GENERIC: "irgl.forall"(%g) <{iterator = #irgl<iterator nodes>, operandSegmentSizes = array<i32: 1, 0>}> ({
// GENERIC: ^bb0(%n: index):
// GENERIC: "irgl.forall"(%g, %n) <{iterator = #irgl<iterator edges>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%e: index):
// GENERIC: "irgl.for"(%g, %n) <{iterator = #irgl<iterator edges>}> ({
// GENERIC: ^bb0(%e2: index):
// GENERIC: "irgl.for"(%g) <{iterator = #irgl<iterator nodes>}> ({
// GENERIC: ^bb0(%n2: index):
// GENERIC: "irgl.kernel"() <{sym_name = "wl_loop", kind = #irgl<kernel_kind plain>, function_type = () -> ()}> ({
// GENERIC: "irgl.forall"() <{iterator = #irgl<iterator worklist>, operandSegmentSizes = array<i32: 0, 0>}> ({
// GENERIC: ^bb0(%slot: index):
// GENERIC: "irgl.kernel"() <{sym_name = "host_loops", kind = #irgl<kernel_kind host>, function_type = (!irgl.graph, index, index) -> ()}> ({
// GENERIC: ^bb0(%g: !irgl.graph, %lo: index, %hi: index):
// GENERIC: "irgl.forall"(%lo, %hi) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%i: index):
// GENERIC: "irgl.forall"(%g) <{iterator = #irgl<iterator nodes>, operandSegmentSizes = array<i32: 1, 0>}> ({
// GENERIC: ^bb0(%n: index):

// -----

// Worklist pop and push (spec: wl.pop, wl.push).

irgl.kernel @wl(%g: !irgl.graph) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %dst
    }
    irgl.wl.push %n
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @wl(%g: !irgl.graph) {
// CHECK-NEXT:     irgl.forall %slot in worklist {
// CHECK-NEXT:       %n = irgl.wl.pop %slot
// CHECK-NEXT:       irgl.forall %e in edges(%g, %n) {
// CHECK-NEXT:         %dst = irgl.graph.edge_dst %g[%e]
// CHECK-NEXT:         irgl.wl.push %dst
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.wl.push %n
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "wl", kind = #irgl<kernel_kind plain>, function_type = (!irgl.graph) -> ()}> ({
// GENERIC: ^bb0(%g: !irgl.graph):
// GENERIC: "irgl.forall"() <{iterator = #irgl<iterator worklist>, operandSegmentSizes = array<i32: 0, 0>}> ({
// GENERIC: ^bb0(%slot: index):
// GENERIC: %n = "irgl.wl.pop"(%slot) : (index) -> index
// GENERIC: "irgl.forall"(%g, %n) <{iterator = #irgl<iterator edges>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%e: index):
// GENERIC: %dst = "irgl.graph.edge_dst"(%g, %e) : (!irgl.graph, index) -> index
// GENERIC: "irgl.wl.push"(%dst) : (index) -> ()
// GENERIC: "irgl.wl.push"(%n) : (index) -> ()

// -----

// Atomic: blocking (no else), non-blocking (else), nested.

irgl.kernel @atomics(%locks: memref<?xi32>, %tlocks: memref<?xi64>, %val: memref<?xi32>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.atomic %locks[%i] : memref<?xi32> {
      %v = memref.load %val[%i] : memref<?xi32>
      memref.store %v, %val[%i] : memref<?xi32>
    }
    irgl.atomic %locks[%i] : memref<?xi32> {
      irgl.atomic %tlocks[%n] : memref<?xi64> {
      }
    } else {
      irgl.nop
    }
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @atomics(%locks: memref<?xi32>, %tlocks: memref<?xi64>, %val: memref<?xi32>, %n: index) {
// CHECK-NEXT:     irgl.forall %i in range(%n, %n) {
// CHECK-NEXT:       irgl.atomic %locks[%i] : memref<?xi32> {
// CHECK-NEXT:         %v = memref.load %val[%i] : memref<?xi32>
// CHECK-NEXT:         memref.store %v, %val[%i] : memref<?xi32>
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.atomic %locks[%i] : memref<?xi32> {
// CHECK-NEXT:         irgl.atomic %tlocks[%n] : memref<?xi64> {
// CHECK-NEXT:         }
// CHECK-NEXT:       } else {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "atomics", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi32>, memref<?xi64>, memref<?xi32>, index) -> ()}> ({
// GENERIC: ^bb0(%locks: memref<?xi32>, %tlocks: memref<?xi64>, %val: memref<?xi32>, %n: index):
// GENERIC: "irgl.forall"(%n, %n) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%i: index):
// GENERIC: "irgl.atomic"(%locks, %i) ({
// GENERIC: "irgl.atomic"(%locks, %i) ({
// GENERIC: "irgl.atomic"(%tlocks, %n) ({
// GENERIC: "irgl.nop"() : () -> ()

// -----

// Exclusive: Array and ArrayIterator forms, each with and without else.

irgl.kernel @exclusives(%claims: memref<?xi32>, %cavity: memref<16xindex>, %cells: memref<?xi32>, %size: index, %lo: index, %hi: index, %st: index) {
  irgl.forall %i in range(%lo, %hi) {
    irgl.exclusive %claims array(%cavity[%size]) : memref<?xi32>, memref<16xindex> {
      irgl.nop
    }
    irgl.exclusive %claims array(%cavity[%size]) : memref<?xi32>, memref<16xindex> {
      irgl.nop
    } else {
      irgl.nop
    }
    irgl.exclusive %claims iterator(%cells[%lo to %hi step %st]) : memref<?xi32>, memref<?xi32> {
      irgl.nop
    }
    irgl.exclusive %claims iterator(%cells[%lo to %hi step %st]) : memref<?xi32>, memref<?xi32> {
      irgl.nop
    } else {
      irgl.nop
    }
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @exclusives(%claims: memref<?xi32>, %cavity: memref<16xindex>, %cells: memref<?xi32>, %size: index, %lo: index, %hi: index, %st: index) {
// CHECK-NEXT:     irgl.forall %i in range(%lo, %hi) {
// CHECK-NEXT:       irgl.exclusive %claims array(%cavity[%size]) : memref<?xi32>, memref<16xindex> {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.exclusive %claims array(%cavity[%size]) : memref<?xi32>, memref<16xindex> {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       } else {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.exclusive %claims iterator(%cells[%lo to %hi step %st]) : memref<?xi32>, memref<?xi32> {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.exclusive %claims iterator(%cells[%lo to %hi step %st]) : memref<?xi32>, memref<?xi32> {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       } else {
// CHECK-NEXT:         irgl.nop
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "exclusives", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi32>, memref<16xindex>, memref<?xi32>, index, index, index, index) -> ()}> ({
// GENERIC: ^bb0(%claims: memref<?xi32>, %cavity: memref<16xindex>, %cells: memref<?xi32>, %size: index, %lo: index, %hi: index, %st: index):
// GENERIC: "irgl.forall"(%lo, %hi) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%i: index):
// GENERIC: "irgl.exclusive"(%claims, %cavity, %size) <{form = #irgl<exclusive_form array>}> ({
// GENERIC: "irgl.nop"() : () -> ()
// GENERIC: "irgl.exclusive"(%claims, %cavity, %size) <{form = #irgl<exclusive_form array>}> ({
// GENERIC: "irgl.nop"() : () -> ()
// GENERIC: "irgl.nop"() : () -> ()
// GENERIC: "irgl.exclusive"(%claims, %cells, %lo, %hi, %st) <{form = #irgl<exclusive_form iterator>}> ({
// GENERIC: "irgl.nop"() : () -> ()
// GENERIC: "irgl.exclusive"(%claims, %cells, %lo, %hi, %st) <{form = #irgl<exclusive_form iterator>}> ({
// GENERIC: "irgl.nop"() : () -> ()
// GENERIC: "irgl.nop"() : () -> ()

// -----

// Retry (with and without merge) and Respawn.

irgl.kernel @retries(%locks: memref<?xi32>) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    irgl.atomic %locks[%n] : memref<?xi32> {
      irgl.respawn %n
    } else {
      irgl.retry %n
    }
    irgl.retry %n merge
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @retries(%locks: memref<?xi32>) {
// CHECK-NEXT:     irgl.forall %slot in worklist {
// CHECK-NEXT:       %n = irgl.wl.pop %slot
// CHECK-NEXT:       irgl.atomic %locks[%n] : memref<?xi32> {
// CHECK-NEXT:         irgl.respawn %n
// CHECK-NEXT:       } else {
// CHECK-NEXT:         irgl.retry %n
// CHECK-NEXT:       }
// CHECK-NEXT:       irgl.retry %n merge
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "retries", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi32>) -> ()}> ({
// GENERIC: ^bb0(%locks: memref<?xi32>):
// GENERIC: "irgl.forall"() <{iterator = #irgl<iterator worklist>, operandSegmentSizes = array<i32: 0, 0>}> ({
// GENERIC: ^bb0(%slot: index):
// GENERIC: %n = "irgl.wl.pop"(%slot) : (index) -> index
// GENERIC: "irgl.atomic"(%locks, %n) ({
// GENERIC: "irgl.respawn"(%n) : (index) -> ()
// GENERIC: "irgl.retry"(%n) : (index) -> ()
// GENERIC: "irgl.retry"(%n) <{merge}> : (index) -> ()

// -----

// ReduceAndReturn ends the iteration inside a ForAll (also under scf.if) or
// the kernel at its top level.

irgl.kernel @reduce_in_forall(%flags: memref<?xi1>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    %f = memref.load %flags[%i] : memref<?xi1>
    scf.if %f {
      irgl.reduce_and_return %f
    }
  }
}
irgl.kernel @reduce_kernel(%done: i1) {
  irgl.reduce_and_return %done
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @reduce_in_forall(%flags: memref<?xi1>, %n: index) {
// CHECK-NEXT:     irgl.forall %i in range(%n, %n) {
// CHECK-NEXT:       %f = memref.load %flags[%i] : memref<?xi1>
// CHECK-NEXT:       scf.if %f {
// CHECK-NEXT:         irgl.reduce_and_return %f
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel @reduce_kernel(%done: i1) {
// CHECK-NEXT:     irgl.reduce_and_return %done
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "reduce_in_forall", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi1>, index) -> ()}> ({
// GENERIC: ^bb0(%flags: memref<?xi1>, %n: index):
// GENERIC: "irgl.forall"(%n, %n) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%i: index):
// GENERIC: "irgl.reduce_and_return"(%f) : (i1) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "reduce_kernel", kind = #irgl<kernel_kind plain>, function_type = (i1) -> ()}> ({
// GENERIC: ^bb0(%done: i1):
// GENERIC: "irgl.reduce_and_return"(%done) : (i1) -> ()

// -----

// SyncRunningThreads and LocalBarrier: at kernel level or directly in the
// outermost ForAll.

irgl.kernel @barriers(%n: index) {
  irgl.sync_running_threads
  irgl.local_barrier
  irgl.forall %i in range(%n, %n) {
    irgl.local_barrier
    irgl.sync_running_threads
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @barriers(%n: index) {
// CHECK-NEXT:     irgl.sync_running_threads
// CHECK-NEXT:     irgl.local_barrier
// CHECK-NEXT:     irgl.forall %i in range(%n, %n) {
// CHECK-NEXT:       irgl.local_barrier
// CHECK-NEXT:       irgl.sync_running_threads
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "barriers", kind = #irgl<kernel_kind plain>, function_type = (index) -> ()}> ({
// GENERIC: ^bb0(%n: index):
// GENERIC: "irgl.sync_running_threads"() : () -> ()
// GENERIC: "irgl.local_barrier"() : () -> ()
// GENERIC: "irgl.forall"(%n, %n) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
// GENERIC: ^bb0(%i: index):
// GENERIC: "irgl.local_barrier"() : () -> ()
// GENERIC: "irgl.sync_running_threads"() : () -> ()

// -----

// Invoke: plain, Any, All.

irgl.kernel @step(%x: i32) {
  %t = arith.constant true
  irgl.reduce_and_return %t
}
irgl.kernel host @invokes(%x: i32) {
  irgl.invoke @step(%x) : (i32)
  %any = irgl.invoke any @step(%x) : (i32)
  %all = irgl.invoke all @step(%x) : (i32)
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @step(%x: i32) {
// CHECK-NEXT:     %t = arith.constant true
// CHECK-NEXT:     irgl.reduce_and_return %t
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @invokes(%x: i32) {
// CHECK-NEXT:     irgl.invoke @step(%x) : (i32)
// CHECK-NEXT:     %any = irgl.invoke any @step(%x) : (i32)
// CHECK-NEXT:     %all = irgl.invoke all @step(%x) : (i32)
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "step", kind = #irgl<kernel_kind plain>, function_type = (i32) -> ()}> ({
// GENERIC: ^bb0(%x: i32):
// GENERIC: "irgl.reduce_and_return"(%t) : (i1) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "invokes", kind = #irgl<kernel_kind host>, function_type = (i32) -> ()}> ({
// GENERIC: ^bb0(%x: i32):
// GENERIC: "irgl.invoke"(%x) <{callee = @step}> : (i32) -> ()
// GENERIC: %any = "irgl.invoke"(%x) <{callee = @step, aggregation = #irgl<aggregation any>}> : (i32) -> i1
// GENERIC: %all = "irgl.invoke"(%x) <{callee = @step, aggregation = #irgl<aggregation all>}> : (i32) -> i1

// -----

// Iterate: while/until x any/all, initial scalars or array, capacity,
// carried arguments, extra and/or conditions.

irgl.kernel @relax(%d: memref<?xi32>, %round: i32) {
  %t = arith.constant true
  irgl.reduce_and_return %t
}
irgl.kernel @frontier(%d: memref<?xi32>, %level: i32) {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    irgl.wl.push %n
  }
}
irgl.kernel host @iterates(%d: memref<?xi32>, %src: index, %src2: index, %roots: memref<?xindex>, %nroots: index, %cap: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  irgl.iterate while any @relax(%d, %c0) : (memref<?xi32>, i32) {
  }
  irgl.iterate while all @relax(%d, %c0) : (memref<?xi32>, i32) {
  }
  irgl.iterate until any @relax(%d, %c0) : (memref<?xi32>, i32) {
  }
  irgl.iterate until all @relax(%d, %c0) : (memref<?xi32>, i32) {
  }
  irgl.iterate @frontier(%d, %c0) : (memref<?xi32>, i32) initial [%src, %src2] {
  }
  irgl.iterate @frontier(%d, %c0) : (memref<?xi32>, i32) initial %roots[%nroots] : memref<?xindex> capacity %cap {
  }
  %last = irgl.iterate @frontier(%d, %lvl = %c1) : (memref<?xi32>, i32) initial [%src] capacity %cap {
    %next = arith.addi %lvl, %c1 : i32
    irgl.yield %next : i32
  }
  %rounds = irgl.iterate while any @relax(%d, %r = %c0) : (memref<?xi32>, i32) extra and {
    %next = arith.addi %r, %c1 : i32
    %lim = arith.constant 100 : i32
    %go = arith.cmpi slt, %next, %lim : i32
    irgl.yield %next : i32 extra %go : i1
  }
  irgl.iterate @frontier(%d, %c0) : (memref<?xi32>, i32) initial [%src] extra or {
    %stop = arith.constant false
    irgl.yield extra %stop : i1
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @relax(%d: memref<?xi32>, %round: i32) {
// CHECK-NEXT:     %t = arith.constant true
// CHECK-NEXT:     irgl.reduce_and_return %t
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel @frontier(%d: memref<?xi32>, %level: i32) {
// CHECK-NEXT:     irgl.forall %slot in worklist {
// CHECK-NEXT:       %n = irgl.wl.pop %slot
// CHECK-NEXT:       irgl.wl.push %n
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @iterates(%d: memref<?xi32>, %src: index, %src2: index, %roots: memref<?xindex>, %nroots: index, %cap: index) {
// CHECK-NEXT:     %c0 = arith.constant 0 : i32
// CHECK-NEXT:     %c1 = arith.constant 1 : i32
// CHECK-NEXT:     irgl.iterate while any @relax(%d, %c0) : (memref<?xi32>, i32) {
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.iterate while all @relax(%d, %c0) : (memref<?xi32>, i32) {
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.iterate until any @relax(%d, %c0) : (memref<?xi32>, i32) {
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.iterate until all @relax(%d, %c0) : (memref<?xi32>, i32) {
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.iterate @frontier(%d, %c0) : (memref<?xi32>, i32) initial [%src, %src2] {
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.iterate @frontier(%d, %c0) : (memref<?xi32>, i32) initial %roots[%nroots] : memref<?xindex> capacity %cap {
// CHECK-NEXT:     }
// CHECK-NEXT:     %last = irgl.iterate @frontier(%d, %lvl = %c1) : (memref<?xi32>, i32) initial [%src] capacity %cap {
// CHECK-NEXT:       %next = arith.addi %lvl, %c1 : i32
// CHECK-NEXT:       irgl.yield %next : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     %rounds = irgl.iterate while any @relax(%d, %r = %c0) : (memref<?xi32>, i32) extra and {
// CHECK-NEXT:       %next_1 = arith.addi %r, %c1 : i32
// CHECK-NEXT:       %lim = arith.constant 100 : i32
// CHECK-NEXT:       %go = arith.cmpi slt, %next_1, %lim : i32
// CHECK-NEXT:       irgl.yield %next_1 : i32 extra %go : i1
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.iterate @frontier(%d, %c0) : (memref<?xi32>, i32) initial [%src] extra or {
// CHECK-NEXT:       %stop = arith.constant false
// CHECK-NEXT:       irgl.yield extra %stop : i1
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "relax", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi32>, i32) -> ()}> ({
// GENERIC: ^bb0(%d: memref<?xi32>, %round: i32):
// GENERIC: "irgl.reduce_and_return"(%t) : (i1) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "frontier", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi32>, i32) -> ()}> ({
// GENERIC: ^bb0(%d: memref<?xi32>, %level: i32):
// GENERIC: "irgl.forall"() <{iterator = #irgl<iterator worklist>, operandSegmentSizes = array<i32: 0, 0>}> ({
// GENERIC: ^bb0(%slot: index):
// GENERIC: %n = "irgl.wl.pop"(%slot) : (index) -> index
// GENERIC: "irgl.wl.push"(%n) : (index) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "iterates", kind = #irgl<kernel_kind host>, function_type = (memref<?xi32>, index, index, memref<?xindex>, index, index) -> ()}> ({
// GENERIC: ^bb0(%d: memref<?xi32>, %src: index, %src2: index, %roots: memref<?xindex>, %nroots: index, %cap: index):
// GENERIC: "irgl.iterate"(%d, %c0) <{callee = @relax, carried = array<i64>, term_cond = #irgl<term_cond while>, aggregation = #irgl<aggregation any>, operandSegmentSizes = array<i32: 2, 0, 0, 0, 0>}> ({
// GENERIC: "irgl.iterate"(%d, %c0) <{callee = @relax, carried = array<i64>, term_cond = #irgl<term_cond while>, aggregation = #irgl<aggregation all>, operandSegmentSizes = array<i32: 2, 0, 0, 0, 0>}> ({
// GENERIC: "irgl.iterate"(%d, %c0) <{callee = @relax, carried = array<i64>, term_cond = #irgl<term_cond until>, aggregation = #irgl<aggregation any>, operandSegmentSizes = array<i32: 2, 0, 0, 0, 0>}> ({
// GENERIC: "irgl.iterate"(%d, %c0) <{callee = @relax, carried = array<i64>, term_cond = #irgl<term_cond until>, aggregation = #irgl<aggregation all>, operandSegmentSizes = array<i32: 2, 0, 0, 0, 0>}> ({
// GENERIC: "irgl.iterate"(%d, %c0, %src, %src2) <{callee = @frontier, carried = array<i64>, operandSegmentSizes = array<i32: 2, 2, 0, 0, 0>}> ({
// GENERIC: "irgl.iterate"(%d, %c0, %roots, %nroots, %cap) <{callee = @frontier, carried = array<i64>, operandSegmentSizes = array<i32: 2, 0, 1, 1, 1>}> ({
// GENERIC: %last = "irgl.iterate"(%d, %c1, %src, %cap) <{callee = @frontier, carried = array<i64: 1>, operandSegmentSizes = array<i32: 2, 1, 0, 0, 1>}> ({
// GENERIC: ^bb0(%lvl: i32):
// GENERIC: "irgl.yield"(%next) <{operandSegmentSizes = array<i32: 1, 0>}> : (i32) -> ()
// GENERIC: %rounds = "irgl.iterate"(%d, %c0) <{callee = @relax, carried = array<i64: 1>, term_cond = #irgl<term_cond while>, aggregation = #irgl<aggregation any>, extra = #irgl<extra_cond and>, operandSegmentSizes = array<i32: 2, 0, 0, 0, 0>}> ({
// GENERIC: ^bb0(%r: i32):
// GENERIC: "irgl.yield"(%next_1, %go) <{operandSegmentSizes = array<i32: 1, 1>}> : (i32, i1) -> ()
// GENERIC: "irgl.iterate"(%d, %c0, %src) <{callee = @frontier, carried = array<i64>, extra = #irgl<extra_cond or>, operandSegmentSizes = array<i32: 2, 1, 0, 0, 0>}> ({
// GENERIC: "irgl.yield"(%stop) <{operandSegmentSizes = array<i32: 0, 1>}> : (i1) -> ()

// -----

// Pipe: once and looping, nested, initialized from scalars or an array, with
// a capacity; dynamic piping with scf.if.

irgl.kernel @a() {
  irgl.forall %slot in worklist {
    %n = irgl.wl.pop %slot
    irgl.wl.push %n
  }
}
irgl.kernel @b() {
  irgl.forall %slot in worklist {
  }
}
irgl.kernel host @pipes(%src: index, %bad: memref<?xi32>, %nbad: index, %cap: index, %cond: i1) {
  irgl.pipe once initial [%src] {
    irgl.invoke @a() : ()
    irgl.pipe {
      irgl.invoke @a() : ()
      irgl.invoke @b() : ()
    }
    scf.if %cond {
      irgl.invoke @a() : ()
    } else {
      irgl.invoke @b() : ()
    }
  }
  irgl.pipe initial %bad[%nbad] : memref<?xi32> capacity %cap {
    irgl.invoke @a() : ()
  }
  irgl.pipe once capacity %cap {
    irgl.iterate @a() : () {
    }
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @a() {
// CHECK-NEXT:     irgl.forall %slot in worklist {
// CHECK-NEXT:       %n = irgl.wl.pop %slot
// CHECK-NEXT:       irgl.wl.push %n
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel @b() {
// CHECK-NEXT:     irgl.forall %slot in worklist {
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @pipes(%src: index, %bad: memref<?xi32>, %nbad: index, %cap: index, %cond: i1) {
// CHECK-NEXT:     irgl.pipe once initial [%src] {
// CHECK-NEXT:       irgl.invoke @a() : ()
// CHECK-NEXT:       irgl.pipe {
// CHECK-NEXT:         irgl.invoke @a() : ()
// CHECK-NEXT:         irgl.invoke @b() : ()
// CHECK-NEXT:       }
// CHECK-NEXT:       scf.if %cond {
// CHECK-NEXT:         irgl.invoke @a() : ()
// CHECK-NEXT:       } else {
// CHECK-NEXT:         irgl.invoke @b() : ()
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.pipe initial %bad[%nbad] : memref<?xi32> capacity %cap {
// CHECK-NEXT:       irgl.invoke @a() : ()
// CHECK-NEXT:     }
// CHECK-NEXT:     irgl.pipe once capacity %cap {
// CHECK-NEXT:       irgl.iterate @a() : () {
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "a", kind = #irgl<kernel_kind plain>, function_type = () -> ()}> ({
// GENERIC: "irgl.forall"() <{iterator = #irgl<iterator worklist>, operandSegmentSizes = array<i32: 0, 0>}> ({
// GENERIC: ^bb0(%slot: index):
// GENERIC: %n = "irgl.wl.pop"(%slot) : (index) -> index
// GENERIC: "irgl.wl.push"(%n) : (index) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "b", kind = #irgl<kernel_kind plain>, function_type = () -> ()}> ({
// GENERIC: "irgl.forall"() <{iterator = #irgl<iterator worklist>, operandSegmentSizes = array<i32: 0, 0>}> ({
// GENERIC: ^bb0(%slot: index):
// GENERIC: "irgl.kernel"() <{sym_name = "pipes", kind = #irgl<kernel_kind host>, function_type = (index, memref<?xi32>, index, index, i1) -> ()}> ({
// GENERIC: ^bb0(%src: index, %bad: memref<?xi32>, %nbad: index, %cap: index, %cond: i1):
// GENERIC: "irgl.pipe"(%src) <{once, operandSegmentSizes = array<i32: 1, 0, 0, 0>}> ({
// GENERIC: "irgl.invoke"() <{callee = @a}> : () -> ()
// GENERIC: "irgl.pipe"() <{operandSegmentSizes = array<i32: 0, 0, 0, 0>}> ({
// GENERIC: "irgl.invoke"() <{callee = @a}> : () -> ()
// GENERIC: "irgl.invoke"() <{callee = @b}> : () -> ()
// GENERIC: "irgl.invoke"() <{callee = @a}> : () -> ()
// GENERIC: "irgl.invoke"() <{callee = @b}> : () -> ()
// GENERIC: "irgl.pipe"(%bad, %nbad, %cap) <{operandSegmentSizes = array<i32: 0, 1, 1, 1>}> ({
// GENERIC: "irgl.invoke"() <{callee = @a}> : () -> ()
// GENERIC: "irgl.pipe"(%cap) <{once, operandSegmentSizes = array<i32: 0, 0, 0, 1>}> ({
// GENERIC: "irgl.iterate"() <{callee = @a, carried = array<i64>, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0>}> ({

// -----

// The C escape hatch inside kernels: cblock with arguments and read/write
// sets, cexpr with and without arguments, cdecl with and without initializer.

irgl.kernel @c_code(%mesh: memref<?xi32>, %out: memref<?xi32>, %n: index) {
  irgl.cdecl "int" "count" = "0"
  irgl.cdecl "float" "acc"
  %inf = irgl.cexpr "INF" : i32
  %m = irgl.cexpr "max($0, $1)" (%inf, %inf : i32, i32) : i32
  irgl.cblock "count += 1;"
  irgl.cblock "count += $0;" (%m : i32)
  irgl.cblock "build_cavity($0, $1);" (%mesh, %n : memref<?xi32>, index) reads(%mesh : memref<?xi32>) writes(%out : memref<?xi32>)
  irgl.cblock "touch();" writes(%mesh, %out : memref<?xi32>, memref<?xi32>)
}
irgl.kernel host @c_host(%n: i32) {
  irgl.cblock "printf(\"n = %d\\n\", $0);" (%n : i32)
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @c_code(%mesh: memref<?xi32>, %out: memref<?xi32>, %n: index) {
// CHECK-NEXT:     irgl.cdecl "int" "count" = "0"
// CHECK-NEXT:     irgl.cdecl "float" "acc"
// CHECK-NEXT:     %inf = irgl.cexpr "INF" : i32
// CHECK-NEXT:     %m = irgl.cexpr "max($0, $1)"(%inf, %inf : i32, i32) : i32
// CHECK-NEXT:     irgl.cblock "count += 1;"
// CHECK-NEXT:     irgl.cblock "count += $0;"(%m : i32)
// CHECK-NEXT:     irgl.cblock "build_cavity($0, $1);"(%mesh, %n : memref<?xi32>, index) reads(%mesh : memref<?xi32>) writes(%out : memref<?xi32>)
// CHECK-NEXT:     irgl.cblock "touch();" writes(%mesh, %out : memref<?xi32>, memref<?xi32>)
// CHECK-NEXT:   }
// CHECK-NEXT:   irgl.kernel host @c_host(%n: i32) {
// CHECK-NEXT:     irgl.cblock "printf(\22n = %d\\n\22, $0);"(%n : i32)
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "c_code", kind = #irgl<kernel_kind plain>, function_type = (memref<?xi32>, memref<?xi32>, index) -> ()}> ({
// GENERIC: ^bb0(%mesh: memref<?xi32>, %out: memref<?xi32>, %n: index):
// GENERIC: "irgl.cdecl"() <{c_type = "int", var_name = "count", init = "0"}> : () -> ()
// GENERIC: "irgl.cdecl"() <{c_type = "float", var_name = "acc"}> : () -> ()
// GENERIC: %inf = "irgl.cexpr"() <{text = "INF"}> : () -> i32
// GENERIC: %m = "irgl.cexpr"(%inf, %inf) <{text = "max($0, $1)"}> : (i32, i32) -> i32
// GENERIC: "irgl.cblock"() <{text = "count += 1;", operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> ()
// GENERIC: "irgl.cblock"(%m) <{text = "count += $0;", operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> ()
// GENERIC: "irgl.cblock"(%mesh, %n, %mesh, %out) <{text = "build_cavity($0, $1);", operandSegmentSizes = array<i32: 2, 1, 1>}> : (memref<?xi32>, index, memref<?xi32>, memref<?xi32>) -> ()
// GENERIC: "irgl.cblock"(%mesh, %out) <{text = "touch();", operandSegmentSizes = array<i32: 0, 0, 2>}> : (memref<?xi32>, memref<?xi32>) -> ()
// GENERIC: "irgl.kernel"() <{sym_name = "c_host", kind = #irgl<kernel_kind host>, function_type = (i32) -> ()}> ({
// GENERIC: ^bb0(%n: i32):
// GENERIC: "irgl.cblock"(%n) <{text = "printf(\22n = %d\\n\22, $0);", operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> ()

// -----

// Graph accessors.

irgl.kernel @graph(%g: !irgl.graph, %n: index, %e: index) {
  %nn = irgl.graph.num_nodes %g
  %ne = irgl.graph.num_edges %g
  %dmax = irgl.graph.max_degree %g
  %first = irgl.graph.first_edge %g[%n]
  %last = irgl.graph.last_edge %g[%n]
  %deg = irgl.graph.degree %g[%n]
  %dst = irgl.graph.edge_dst %g[%e]
  %w = irgl.graph.edge_weight %g[%e] : i32
}

// CHECK:      builtin.module {
// CHECK-NEXT:   irgl.kernel @graph(%g: !irgl.graph, %n: index, %e: index) {
// CHECK-NEXT:     %nn = irgl.graph.num_nodes %g
// CHECK-NEXT:     %ne = irgl.graph.num_edges %g
// CHECK-NEXT:     %dmax = irgl.graph.max_degree %g
// CHECK-NEXT:     %first = irgl.graph.first_edge %g[%n]
// CHECK-NEXT:     %last = irgl.graph.last_edge %g[%n]
// CHECK-NEXT:     %deg = irgl.graph.degree %g[%n]
// CHECK-NEXT:     %dst = irgl.graph.edge_dst %g[%e]
// CHECK-NEXT:     %w = irgl.graph.edge_weight %g[%e] : i32
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "irgl.kernel"() <{sym_name = "graph", kind = #irgl<kernel_kind plain>, function_type = (!irgl.graph, index, index) -> ()}> ({
// GENERIC: ^bb0(%g: !irgl.graph, %n: index, %e: index):
// GENERIC: %nn = "irgl.graph.num_nodes"(%g) : (!irgl.graph) -> index
// GENERIC: %ne = "irgl.graph.num_edges"(%g) : (!irgl.graph) -> index
// GENERIC: %dmax = "irgl.graph.max_degree"(%g) : (!irgl.graph) -> index
// GENERIC: %first = "irgl.graph.first_edge"(%g, %n) : (!irgl.graph, index) -> index
// GENERIC: %last = "irgl.graph.last_edge"(%g, %n) : (!irgl.graph, index) -> index
// GENERIC: %deg = "irgl.graph.degree"(%g, %n) : (!irgl.graph, index) -> index
// GENERIC: %dst = "irgl.graph.edge_dst"(%g, %e) : (!irgl.graph, index) -> index
// GENERIC: %w = "irgl.graph.edge_weight"(%g, %e) : (!irgl.graph, index) -> i32
