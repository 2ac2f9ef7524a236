// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-orchestration{retry_backoff=true}' | filecheck %s --check-prefix=HOST
// RUN: irgl-opt %s -p 'convert-irgl-kernels,convert-irgl-orchestration' | filecheck %s --check-prefix=HOST-OFF
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-outline-iterations{retry_backoff=true remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=CTL
// RUN: irgl-opt %s -p 'convert-irgl-kernels,irgl-outline-iterations' | filecheck %s --check-prefix=CTL-OFF
// RUN: irgl-opt %s -p 'lower-irgl{retry_backoff=true}' -t cuda | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s -p 'lower-irgl{retry_backoff=true outline=false}' -t cuda | filecheck %s --check-prefix=CUDA-HOST

// The launch side of retry backoff. A kernel that retries after a failed
// non-blocking Atomic, invoked in a looping Pipe.
irgl.kernel @relax(%locks: memref<?xi32>, %x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.atomic %locks[%n] : memref<?xi32> {
      %one = arith.constant 1 : i32
      memref.store %one, %x[%n] : memref<?xi32>
    } else {
      irgl.retry %n
    }
  }
}

// Respawn is no conflict: its re-launches keep the full grid.
irgl.kernel @again(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.respawn %n
  }
}

irgl.kernel host @main(%locks: memref<?xi32>, %x: memref<?xi32>, %s: index) {
  irgl.pipe initial [%s] capacity %s {
    irgl.invoke @relax(%locks, %x) : (memref<?xi32>, memref<?xi32>)
    irgl.invoke @again(%x) : (memref<?xi32>)
  }
}

// Host loop: each re-launch on the retried items (after the in/retry swap,
// which counts the round) is sized by irgl_pipe_backoff_grid.
// HOST-LABEL: func.func @main
// HOST:         %[[BLOCK:.*]] = arith.constant 256 : index
// HOST-NEXT:    %[[GRID:.*]] = irgl_rt.grid_size @irgl_kernels::@relax, %[[BLOCK]]
// HOST:         "gpu.launch_func"(%[[GRID]],
// HOST-NEXT:    scf.while () : () -> () {
// HOST-NEXT:      func.call @irgl_pipe_retry_size
// HOST:         } do {
// HOST-NEXT:      func.call @irgl_pipe_advance_retry(%[[P:.*]]) : (!irgl_rt.pipe) -> ()
// HOST-NEXT:      %backoff_grid = func.call @irgl_pipe_backoff_grid(%[[P]], %[[GRID]], %[[BLOCK]]) : (!irgl_rt.pipe, index, index) -> index
// HOST:           "gpu.launch_func"(%backoff_grid,
// HOST:         func.call @irgl_pipe_advance(%[[P]])
// HOST:         %[[GRID2:.*]] = irgl_rt.grid_size @irgl_kernels::@again
// HOST-NOT:     irgl_pipe_backoff_grid
// HOST:         func.call @irgl_pipe_advance_retry(%[[P]])
// HOST-NOT:     irgl_pipe_backoff_grid
// HOST:           "gpu.launch_func"(%[[GRID2]],
// HOST-NOT:     irgl_pipe_backoff_grid
// HOST:         func.call @irgl_pipe_advance(%[[P]])
// HOST-NOT:     irgl_pipe_backoff_grid(%
// HOST:       func.func private @irgl_pipe_backoff_grid(!irgl_rt.pipe, index, index) -> index

// HOST-OFF-NOT: irgl_pipe_backoff_grid

// Control kernel: the retry loop swaps the handles on the device; the new
// `in` is one round further than the old (irgl_wl_next_round), the old `in`
// goes back to round 0 as the spare, and so does the last `in` after the loop.

// CTL-OFF-NOT: irgl_wl_next_round
// CTL-OFF-NOT: irgl_wl_first_round

// In the emitted CUDA, the kernel reads its retry round and chunk; with backoff
// the Pipe stays a host loop (outlined or not), which shrinks the grid.
// CUDA:      __global__ void relax(
// CUDA:        irgl_index retry_round = irgl_wl_retry_round(
// CUDA-NEXT:   irgl_index chunk = irgl_backoff_chunk(retry_round,
// CUDA-NOT:  main_control(
// CUDA:        irgl_index backoff_grid = irgl_pipe_backoff_grid(

// CUDA-HOST:      irgl_index backoff_grid = irgl_pipe_backoff_grid(
// CUDA-HOST-NEXT: irgl::Worklist {{.*}} = irgl_pipe_in(
// CUDA-HOST:      irgl::launch(relax, backoff_grid, 256,

// With backoff a Pipe whose kernel re-launches retry rounds keeps the host
// loop (the backoff grid shrinks per re-launch):
// CTL: remark: irgl.pipe in @main: not outlined: retry backoff re-launches its retry rounds on a shrinking grid, which needs the host loop
