// RUN: irgl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// One case per verifier rule of the irgl and irgl_rt dialects: every RULE_*
// of irgl_dialect/placement.py (named in the message after "rule:") and every
// other verifier error. Each case checks the separator of its chunk and then
// its message, so a case that stops failing cannot borrow a later message.

// RULE_KERNEL_CONSTRUCT: an Atomic in a host kernel.

irgl.kernel host @h(%locks: memref<?xi32>, %i: index) {
  irgl.atomic %locks[%i] : memref<?xi32> {
  }
}

// CHECK: 'irgl.atomic' (Atomic) is a kernel construct and may only appear in a plain kernel, but it is in a host kernel (rule: kernel constructs only in plain kernels)

// -----

// RULE_KERNEL_CONSTRUCT: an Exclusive in a device kernel.

irgl.kernel device @d(%claims: memref<?xi32>, %cav: memref<8xindex>, %n: index) {
  irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8xindex> {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' (Exclusive) is a kernel construct and may only appear in a plain kernel, but it is in a device kernel (rule: kernel constructs only in plain kernels)

// -----

// RULE_KERNEL_CONSTRUCT: a push outside any kernel.

%c0 = arith.constant 0 : index
irgl.wl.push %c0

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.wl.push' (wl.push) is a kernel construct and may only appear in a plain kernel, but it is outside any kernel (rule: kernel constructs only in plain kernels)

// -----

// RULE_ORCHESTRATION: an Invoke in a plain kernel.

irgl.kernel @k() {
}
irgl.kernel @p() {
  irgl.invoke @k() : ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' (Invoke) is an orchestration construct and may only appear in a host kernel, but it is in a plain kernel (rule: orchestration only in host kernels)

// -----

// RULE_ORCHESTRATION: a Pipe in a device kernel.

irgl.kernel device @d() {
  irgl.pipe once {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.pipe' (Pipe) is an orchestration construct and may only appear in a host kernel, but it is in a device kernel (rule: orchestration only in host kernels)

// -----

// RULE_FORALL_PLACEMENT: a ForAll in a device kernel.

irgl.kernel device @d(%n: index) {
  irgl.forall %i in range(%n, %n) {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' may only appear in plain or host kernels, but it is in a device kernel (rule: ForAll only in plain and host kernels)

// -----

// RULE_WORKLIST_ITERATION: a worklist ForAll nested in another ForAll.

irgl.kernel @k(%n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.forall %slot in worklist {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' over the worklist must be the outermost ForAll of a plain kernel (rule: worklist ForAll is the outermost ForAll of a plain kernel)

// -----

// RULE_WORKLIST_ITERATION: a worklist ForAll in a host kernel.

irgl.kernel host @h() {
  irgl.forall %slot in worklist {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' over the worklist must be the outermost ForAll of a plain kernel (rule: worklist ForAll is the outermost ForAll of a plain kernel)

// -----

// RULE_WORKLIST_ITERATION: For cannot iterate the worklist.

irgl.kernel @k() {
  irgl.for %slot in worklist {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.for' cannot iterate the worklist: use irgl.forall (rule: worklist ForAll is the outermost ForAll of a plain kernel)

// -----

// RULE_POP: popping the index of a range ForAll.

irgl.kernel @k(%n: index) {
  irgl.forall %i in range(%n, %n) {
    %item = irgl.wl.pop %i
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.wl.pop' pops only the index of an enclosing `irgl.forall ... in worklist` (rule: pop only the index of a worklist ForAll)

// -----

// RULE_EXCLUSIVE: an Exclusive directly in the kernel body.

irgl.kernel @k(%claims: memref<?xi32>, %cav: memref<8xindex>, %n: index) {
  irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8xindex> {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' must be placed directly in the body of the outermost ForAll (it synchronizes all running threads, so it cannot be nested) (rule: Exclusive directly under the outermost ForAll, never nested)

// -----

// RULE_EXCLUSIVE: an Exclusive in an inner ForAll.

irgl.kernel @k(%claims: memref<?xi32>, %cav: memref<8xindex>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.forall %j in range(%n, %n) {
      irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8xindex> {
      }
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' must be placed directly in the body of the outermost ForAll (it synchronizes all running threads, so it cannot be nested) (rule: Exclusive directly under the outermost ForAll, never nested)

// -----

// RULE_EXCLUSIVE: an Exclusive nested in an Exclusive.

irgl.kernel @k(%claims: memref<?xi32>, %cav: memref<8xindex>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8xindex> {
      irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8xindex> {
      }
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' must be placed directly in the body of the outermost ForAll (it synchronizes all running threads, so it cannot be nested) (rule: Exclusive directly under the outermost ForAll, never nested)

// -----

// RULE_EXCLUSIVE: an Exclusive under an scf.if (not executed uniformly).

irgl.kernel @k(%claims: memref<?xi32>, %cav: memref<8xindex>, %n: index, %c: i1) {
  irgl.forall %i in range(%n, %n) {
    scf.if %c {
      irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8xindex> {
      }
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' must be placed directly in the body of the outermost ForAll (it synchronizes all running threads, so it cannot be nested) (rule: Exclusive directly under the outermost ForAll, never nested)

// -----

// RULE_SYNC: SyncRunningThreads under an scf.if.

irgl.kernel @k(%c: i1) {
  scf.if %c {
    irgl.sync_running_threads
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.sync_running_threads' must be executed by all threads: place it directly in the kernel body, directly in the outermost ForAll, or in scf.for or irgl.for loops there whose trip counts are uniform (kernel arguments, constants and arithmetic of them) (rule: SyncRunningThreads executed uniformly)

// -----

// RULE_SYNC: LocalBarrier in an inner ForAll.

irgl.kernel @k(%n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.forall %j in range(%n, %n) {
      irgl.local_barrier
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.local_barrier' must be executed by all threads: place it directly in the kernel body, directly in the outermost ForAll, or in scf.for or irgl.for loops there whose trip counts are uniform (kernel arguments, constants and arithmetic of them) (rule: SyncRunningThreads executed uniformly)

// -----

// RULE_RETRY: Retry outside any ForAll.

irgl.kernel @k(%n: index) {
  irgl.retry %n
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.retry' must be inside a ForAll (rule: Retry and Respawn inside a ForAll)

// -----

// RULE_RETRY: Respawn outside any ForAll.

irgl.kernel @k(%n: index) {
  irgl.respawn %n
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.respawn' must be inside a ForAll (rule: Retry and Respawn inside a ForAll)

// -----

// RULE_REDUCE: ReduceAndReturn followed by another operation.

irgl.kernel @k(%b: i1) {
  irgl.reduce_and_return %b
  irgl.nop
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.reduce_and_return' must be the last operation of its block: it ends the iteration (inside a ForAll) or the kernel (rule: ReduceAndReturn ends the iteration or kernel)

// -----

// RULE_REDUCE: ReduceAndReturn nested in an Atomic.

irgl.kernel @k(%b: i1, %locks: memref<?xi32>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.atomic %locks[%i] : memref<?xi32> {
      irgl.reduce_and_return %b
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.reduce_and_return' may only be nested in scf.if below its ForAll or kernel, not in 'irgl.atomic' (rule: ReduceAndReturn ends the iteration or kernel)

// -----

// RULE_CALLEE: the invoked kernel does not exist.

irgl.kernel host @h() {
  irgl.invoke @missing() : ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' invokes @missing, which does not exist (rule: invoked kernels exist and are plain kernels)

// -----

// RULE_CALLEE: the invoked symbol is not an irgl.kernel.

func.func @f() {
  func.return
}
irgl.kernel host @h() {
  irgl.invoke @f() : ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' invokes @f, which is not an irgl.kernel (rule: invoked kernels exist and are plain kernels)

// -----

// RULE_CALLEE: a host kernel cannot be invoked.

irgl.kernel host @other() {
}
irgl.kernel host @h() {
  irgl.pipe once {
    irgl.iterate @other() : () {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' invokes @other, a host kernel; only plain kernels can be invoked (rule: invoked kernels exist and are plain kernels)

// -----

// RULE_ARGUMENTS: wrong number of arguments.

irgl.kernel @k(%x: i32) {
}
irgl.kernel host @h() {
  irgl.invoke @k() : ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' passes 0 argument(s) to @k, which takes 1 (rule: invocation arguments match the kernel)

// -----

// RULE_ARGUMENTS: wrong argument type.

irgl.kernel @k(%x: i32) {
}
irgl.kernel host @h(%y: i64) {
  irgl.invoke @k(%y) : (i64)
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' argument 0 of @k has type i64, expected i32 (rule: invocation arguments match the kernel)

// -----

// RULE_WORKLIST_CONTEXT: a worklist kernel invoked outside any Pipe.

irgl.kernel @k() {
  irgl.forall %slot in worklist {
  }
}
irgl.kernel host @h() {
  irgl.invoke @k() : ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' invokes @k, which uses the worklist, outside any Pipe or Iterate (no worklist is established) (rule: worklist kernels are invoked inside a Pipe or Iterate)

// -----

// RULE_INITIALIZER: a nested Pipe with an initial worklist.

irgl.kernel host @h(%src: index) {
  irgl.pipe once {
    irgl.pipe initial [%src] {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.pipe' is nested in a Pipe or Iterate and inherits its worklists, so it cannot have a worklist initializer (rule: only the outermost Pipe or Iterate establishes worklists)

// -----

// RULE_INITIALIZER: a nested Pipe with a capacity.

irgl.kernel host @h(%cap: index) {
  irgl.pipe {
    irgl.pipe capacity %cap {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.pipe' is nested in a Pipe or Iterate and inherits its worklists, so it cannot set their capacity (rule: only the outermost Pipe or Iterate establishes worklists)

// -----

// RULE_INITIALIZER: an Iterate in a Pipe with an initial worklist.

irgl.kernel @k() {
  irgl.forall %slot in worklist {
  }
}
irgl.kernel host @h(%src: index) {
  irgl.pipe once {
    irgl.iterate @k() : () initial [%src] {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' is nested in a Pipe or Iterate and inherits its worklists, so it cannot have a worklist initializer (rule: only the outermost Pipe or Iterate establishes worklists)

// -----

// RULE_TERMINATION: an Iterate of a kernel without worklist and without a
// termination condition.

irgl.kernel @k() {
}
irgl.kernel host @h() {
  irgl.iterate @k() : () {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' iterates @k, which does not use the worklist, without a termination condition: add `while any|all` or `until any|all` (or an extra condition) (rule: Iterate terminates)

// -----

// RULE_AGGREGATION: Any of a kernel that has no ReduceAndReturn.

irgl.kernel @k() {
}
irgl.kernel host @h() {
  %r = irgl.invoke any @k() : ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' aggregates the return value of @k, which has no irgl.reduce_and_return (rule: Any and All aggregate ReduceAndReturn values)

// -----

// RULE_KERNEL_SIGNATURE: a plain kernel with a return type.

"irgl.kernel"() <{sym_name = "k", kind = #irgl<kernel_kind plain>, function_type = () -> i32}> ({
  %c = arith.constant 0 : i32
  irgl.return %c : i32
}) : () -> ()

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' a plain kernel has no declared return type: its return value is built with irgl.reduce_and_return and aggregated by the invocation (rule: kernel signatures)

// -----

// RULE_KERNEL_SIGNATURE: body arguments differ from the parameters.

"irgl.kernel"() <{sym_name = "k", kind = #irgl<kernel_kind plain>, function_type = (i32) -> ()}> ({
^bb0(%x: i64):
  irgl.return
}) : () -> ()

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' body arguments must have the kernel's parameter types (rule: kernel signatures)

// -----

// RULE_KERNEL_SIGNATURE: at most one result.

"irgl.kernel"() <{sym_name = "h", kind = #irgl<kernel_kind host>, function_type = () -> (i32, i32)}> ({
  %c = arith.constant 0 : i32
  irgl.return %c, %c : i32, i32
}) : () -> ()

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' a kernel returns at most one value (rule: kernel signatures)

// -----

// RULE_KERNEL_SIGNATURE: launch_bounds on a host kernel.

irgl.kernel host @h() launch_bounds(256) {
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' launch_bounds apply only to plain kernels (rule: kernel signatures)

// -----

// RULE_KERNEL_SIGNATURE: launch_bounds with three values.

irgl.kernel @k() launch_bounds(256, 2, 1) {
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' launch_bounds takes (max_threads_per_block[, min_blocks]) (rule: kernel signatures)

// -----

// RULE_KERNEL_SIGNATURE: launch_bounds above the CUDA maximum.

irgl.kernel @k() launch_bounds(2048) {
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' launch_bounds max_threads_per_block must be in [1, 1024], got 2048 (rule: kernel signatures)

// -----

// RULE_KERNEL_SIGNATURE: negative min_blocks.

irgl.kernel @k() launch_bounds(256, -1) {
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' launch_bounds min_blocks must be >= 0 (rule: kernel signatures)

// -----

// irgl.return must return what the kernel declares.

irgl.kernel host @h() -> i32 {
  %c = arith.constant 0 : i64
  irgl.return %c : i64
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.return' returns (i64) but kernel @h returns (i32)

// -----

// A range takes 2 or 3 operands.

irgl.kernel @k(%n: index) {
  irgl.forall %i in range(%n) {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' over range takes 2 or 3 operands, got 1

// -----

// Range bounds are index values.

irgl.kernel @k(%n: i32) {
  "irgl.forall"(%n, %n) <{iterator = #irgl<iterator range>, operandSegmentSizes = array<i32: 2, 0>}> ({
  ^bb0(%i: index):
    irgl.yield
  }) : (i32, i32) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' range bounds must be index values

// -----

// nodes() iterates a graph.

irgl.kernel @k(%n: index) {
  "irgl.forall"(%n) <{iterator = #irgl<iterator nodes>, operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%i: index):
    irgl.yield
  }) : (index) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' over nodes iterates a !irgl.graph, got index

// -----

// edges(%g, %n) needs an index node.

irgl.kernel @k(%g: !irgl.graph, %n: i32) {
  "irgl.forall"(%g, %n) <{iterator = #irgl<iterator edges>, operandSegmentSizes = array<i32: 2, 0>}> ({
  ^bb0(%i: index):
    irgl.yield
  }) : (!irgl.graph, i32) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.forall' edges(%g, %n) needs an index node

// -----

// The loop body takes one index argument.

irgl.kernel @k(%n: index) {
  "irgl.for"(%n, %n) <{iterator = #irgl<iterator range>}> ({
  ^bb0(%i: i32):
    irgl.yield
  }) : (index, index) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.for' body takes one index argument

// -----

// Atomic locks are a rank-1 memref of integers.

irgl.kernel @k(%locks: memref<?xf32>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.atomic %locks[%i] : memref<?xf32> {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.atomic' locks must be a rank-1 memref of integers, got memref<?xf32>

// -----

// An else region has at most one block.

irgl.kernel @k(%locks: memref<?xi32>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    "irgl.atomic"(%locks, %i) ({
      irgl.yield
    }, {
      irgl.yield
    ^bb1:
      irgl.yield
    }) : (memref<?xi32>, index) -> ()
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.atomic' does not contain single-block regions

// -----

// The iterator form of Exclusive takes start, end and step.

irgl.kernel @k(%claims: memref<?xi32>, %cells: memref<?xi32>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    "irgl.exclusive"(%claims, %cells, %n, %n) <{form = #irgl<exclusive_form iterator>}> ({
      irgl.yield
    }, {
    }) : (memref<?xi32>, memref<?xi32>, index, index) -> ()
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' iterator form takes 3 index operand(s), got 2

// -----

// The Exclusive object is a rank-1 memref of integers.

irgl.kernel @k(%claims: memref<?xf32>, %cav: memref<8xindex>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.exclusive %claims array(%cav[%n]) : memref<?xf32>, memref<8xindex> {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' object must be a rank-1 memref of integers, got memref<?xf32>

// -----

// The Exclusive items are a rank-1 memref of integers.

irgl.kernel @k(%claims: memref<?xi32>, %cav: memref<8x2xindex>, %n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.exclusive %claims array(%cav[%n]) : memref<?xi32>, memref<8x2xindex> {
    }
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.exclusive' items must be a rank-1 memref of integers, got memref<8x2xindex>

// -----

// An Invoke has an i1 result exactly when it aggregates.

irgl.kernel @k() {
}
irgl.kernel host @h() {
  %r = "irgl.invoke"() <{callee = @k}> : () -> i1
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.invoke' has an i1 result exactly when it aggregates (any/all)

// -----

// Iterate carried-argument positions must name arguments.

irgl.kernel @k() {
}
irgl.kernel host @h() {
  "irgl.iterate"() <{callee = @k, carried = array<i64: 3>, term_cond = #irgl<term_cond while>, aggregation = #irgl<aggregation any>, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0>}> ({
    irgl.yield
  }) : () -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' carried argument positions [3] are invalid

// -----

// Iterate body arguments are the carried arguments.

irgl.kernel @k(%x: i32) {
}
irgl.kernel host @h(%x: i32) {
  "irgl.iterate"(%x) <{callee = @k, carried = array<i64: 0>, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>}> ({
    irgl.yield
  }) : (i32) -> i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' body arguments must match the carried arguments

// -----

// Iterate results are the carried arguments.

irgl.kernel @k(%x: i32) {
}
irgl.kernel host @h(%x: i32) {
  "irgl.iterate"(%x) <{callee = @k, carried = array<i64: 0>, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>}> ({
  ^bb0(%y: i32):
    irgl.yield %y : i32
  }) : (i32) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' results must match the carried arguments

// -----

// while/until goes with any/all.

irgl.kernel @k() {
}
irgl.kernel host @h() {
  "irgl.iterate"() <{callee = @k, carried = array<i64>, term_cond = #irgl<term_cond while>, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0>}> ({
    irgl.yield
  }) : () -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' while/until goes with any/all (e.g. `while any`)

// -----

// The Iterate body ends with irgl.yield.

irgl.kernel @k() {
}
irgl.kernel host @h() {
  "irgl.iterate"() <{callee = @k, carried = array<i64>, term_cond = #irgl<term_cond while>, aggregation = #irgl<aggregation any>, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0>}> ({
    "llvm.unreachable"() : () -> ()
  }) : () -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' terminates with operation llvm.unreachable instead of irgl.yield

// -----

// The Iterate body yields the next value of each carried argument.

irgl.kernel @k(%x: i32) {
  %t = arith.constant true
  irgl.reduce_and_return %t
}
irgl.kernel host @h(%x: i32) {
  %r = irgl.iterate while any @k(%y = %x) : (i32) {
    irgl.yield
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' body must yield the next value of each carried argument (i32)

// -----

// `extra and|or` needs a yielded extra condition.

irgl.kernel @k() {
  irgl.forall %slot in worklist {
  }
}
irgl.kernel host @h(%src: index) {
  irgl.iterate @k() : () initial [%src] extra or {
    irgl.yield
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' with `extra and|or` yields `extra %cond` (and only then)

// -----

// The extra condition is i1.

irgl.kernel @k() {
  irgl.forall %slot in worklist {
  }
}
irgl.kernel host @h(%src: index, %x: i32) {
  irgl.iterate @k() : () initial [%src] extra and {
    irgl.yield extra %x : i32
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.iterate' extra condition must be i1

// -----

// Initial scalars and an initial array exclude each other.

irgl.kernel host @h(%src: index, %roots: memref<?xindex>, %n: index) {
  "irgl.pipe"(%src, %roots, %n) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    irgl.yield
  }) : (index, memref<?xindex>, index) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.pipe' takes either initial scalars or an initial array, not both

// -----

// An initial array needs its element count.

irgl.kernel host @h(%roots: memref<?xindex>) {
  "irgl.pipe"(%roots) <{operandSegmentSizes = array<i32: 0, 1, 0, 0>}> ({
    irgl.yield
  }) : (memref<?xindex>) -> ()
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.pipe' initial array needs its element count

// -----

// An initial array is a rank-1 memref of integers.

irgl.kernel host @h(%roots: memref<?xf32>, %n: index) {
  irgl.pipe initial %roots[%n] : memref<?xf32> {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.pipe' initial array must be a rank-1 memref of integers, got memref<?xf32>

// -----

// Every operand of a cblock is used in its text.

irgl.kernel @k(%x: i32, %y: i32) {
  irgl.cblock "f($0);" (%x, %y : i32, i32)
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cblock' operand 1 is never used: the C text has no $1

// -----

// A cblock's text names no operand it does not have.

irgl.kernel @k(%x: i32) {
  irgl.cblock "f($0, $1);" (%x : i32)
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cblock' C text names $1, but the op has only 1 operand(s)

// -----

// Every operand of a cexpr is used in its text.

irgl.kernel @k(%x: i32) {
  %r = irgl.cexpr "g()" (%x : i32) : i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cexpr' operand 0 is never used: the C text has no $0

// -----

// A module-level cblock takes no SSA operands.

%c = arith.constant 0 : i32
irgl.cblock "int x = $0;" (%c : i32)

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cblock' at module level cannot take SSA operands

// -----

// A cdecl names a C identifier.

irgl.kernel @k() {
  irgl.cdecl "int" "2x"
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cdecl' '2x' is not a C identifier

// -----

// A cdecl_global names a C identifier.

irgl.cdecl_global "int" "a-b"

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cdecl_global' 'a-b' is not a C identifier

// -----

// Names imports C identifiers.

irgl.names ["INF", "not a name"]

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.names' 'not a name' is not a C identifier

// -----

// cdecl_global and names live at module level.

irgl.kernel @k() {
  irgl.cdecl_global "int" "x"
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cdecl_global' expects parent op 'builtin.module'

// -----

irgl.kernel @k() {
  irgl.names ["INF"]
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.names' expects parent op 'builtin.module'

// -----

// Kernels live at module level.

irgl.kernel host @h() {
  irgl.kernel @k() {
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.kernel' expects parent op 'builtin.module'

// -----

// irgl.yield ends irgl region ops only.

irgl.kernel @k() {
  irgl.yield
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.yield' terminates the body of an irgl region op (ForAll, For, Atomic, Exclusive, Pipe, Iterate), not of 'irgl.kernel'

// -----

// irgl.return ends kernels only.

irgl.kernel host @h(%n: index) {
  irgl.forall %i in range(%n, %n) {
    irgl.return
  }
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.return' expects parent op 'irgl.kernel'

// -----

// irgl_rt: every operand of a c_block and a c_expr is used in its text.

func.func @f(%x: i32) {
  irgl_rt.c_block "g();" (%x : i32)
  func.return
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl_rt.c_block' operand 0 is never used: the C text has no $0

// -----

func.func @f(%x: i32) -> i32 {
  %r = irgl_rt.c_expr "h()" (%x : i32) : i32
  func.return %r : i32
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl_rt.c_expr' operand 0 is never used: the C text has no $0

// -----

// irgl_rt: a collective holds exactly one operation.

func.func @f(%active: i1, %tid: index, %x: i32) {
  irgl_rt.collective active(%active) rank(%tid) alone(%active) {
    %y = arith.addi %x, %x : i32
    %z = arith.addi %y, %x : i32
  }
  func.return
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl_rt.collective' must hold exactly one operation, got 2
