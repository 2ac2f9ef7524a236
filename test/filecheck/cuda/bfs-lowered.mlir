// RUN: irgl-opt %s -t 'cuda{inline-runtime=false}' | filecheck %s

// A hand-lowered BFS in the shape `lower-irgl` produces (docs/lowered-ir.md):
// an init kernel over the nodes, a data-driven kernel with a grid-stride loop
// over the in-worklist that pushes to the out-worklist, and a host function
// iterating the kernel with a pipe until the worklist is empty.

// CHECK:      // irgl_rt.c_global
// CHECK-NEXT: #define INF 1073741823
// CHECK-EMPTY:
// CHECK-NEXT: #ifdef IRGL_HOST_ONLY
// CHECK-NEXT: IRGL_PROGRAM_DEVICE_CODE()
// CHECK-NEXT: IRGL_KERNEL_REF(init, irgl::Graph, int32_t*, irgl_index)
// CHECK-NEXT: IRGL_KERNEL_REF(bfs, irgl::Graph, int32_t*, int32_t, irgl::Worklist, irgl::Worklist)
// CHECK-NEXT: #else
// CHECK-EMPTY:
// CHECK-NEXT: // Forward declarations
// CHECK-NEXT: __global__ void __launch_bounds__(256) init(irgl::Graph, int32_t*, irgl_index);
// CHECK-NEXT: __global__ void __launch_bounds__(256) bfs(irgl::Graph, int32_t*, int32_t, irgl::Worklist, irgl::Worklist);

builtin.module attributes {gpu.container_module} {
  irgl_rt.c_global "#define INF 1073741823"

  "gpu.module"() <{sym_name = "irgl_kernels"}> ({

    // CHECK-LABEL: __global__ void __launch_bounds__(256) init(irgl::Graph g, int32_t* level, irgl_index src) {
    // CHECK-NEXT:    irgl_index tid = irgl_global_thread_id();
    // CHECK-NEXT:    irgl_index nthreads = irgl_global_num_threads();
    // CHECK-NEXT:    irgl_index nnodes = irgl_graph_num_nodes(g);
    // CHECK-NEXT:    int32_t INF_1 = INF;
    // CHECK-NEXT:    for (irgl_index n = tid; n < nnodes; n += nthreads) {
    // CHECK-NEXT:      bool is_src = n == src;
    // CHECK-NEXT:      int32_t value = is_src ? 0 : INF_1;
    // CHECK-NEXT:      level[n] = value;
    // CHECK-NEXT:    }
    // CHECK-NEXT:  }
    "gpu.func"() <{function_type = (!irgl_rt.graph, memref<?xi32>, index) -> (), kernel}> ({
    ^bb0(%g: !irgl_rt.graph, %level: memref<?xi32>, %src: index):
      %zero = arith.constant 0 : i32
      %tid = func.call @irgl_global_thread_id() : () -> index
      %nthreads = func.call @irgl_global_num_threads() : () -> index
      %nnodes = func.call @irgl_graph_num_nodes(%g) : (!irgl_rt.graph) -> index
      %INF = irgl_rt.c_expr "INF" : i32
      scf.for %n = %tid to %nnodes step %nthreads {
        %is_src = arith.cmpi eq, %n, %src : index
        %value = arith.select %is_src, %zero, %INF : i32
        memref.store %value, %level[%n] : memref<?xi32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "init", irgl_rt.launch = #irgl_rt.launch<block = 256, bounds = [256]>} : () -> ()

    // CHECK-LABEL: __global__ void __launch_bounds__(256) bfs(irgl::Graph g, int32_t* level, int32_t LEVEL, irgl::Worklist in, irgl::Worklist out) {
    // CHECK-NEXT:    irgl_index tid = irgl_global_thread_id();
    // CHECK-NEXT:    irgl_index nthreads = irgl_global_num_threads();
    // CHECK-NEXT:    irgl_index size = irgl_wl_size(in);
    // CHECK-NEXT:    for (irgl_index i = tid; i < size; i += nthreads) {
    // CHECK-NEXT:      irgl_index node = irgl_wl_item(in, i);
    // CHECK-NEXT:      irgl_index first = irgl_graph_first_edge(g, node);
    // CHECK-NEXT:      irgl_index last = irgl_graph_last_edge(g, node);
    // CHECK-NEXT:      for (irgl_index e = first; e < last; e += 1) {
    // CHECK-NEXT:        irgl_index dst = irgl_graph_edge_dst(g, e);
    // CHECK-NEXT:        int32_t old = level[dst];
    // CHECK-NEXT:        bool unvisited = old == 1073741823;
    // CHECK-NEXT:        if (unvisited) {
    // CHECK-NEXT:          level[dst] = LEVEL;
    // CHECK-NEXT:          irgl_wl_push(out, dst);
    // CHECK-NEXT:        }
    // CHECK-NEXT:      }
    // CHECK-NEXT:    }
    // CHECK-NEXT:  }
    "gpu.func"() <{function_type = (!irgl_rt.graph, memref<?xi32>, i32, !irgl_rt.worklist, !irgl_rt.worklist) -> (), kernel}> ({
    ^bb0(%g: !irgl_rt.graph, %level: memref<?xi32>, %LEVEL: i32, %in: !irgl_rt.worklist, %out: !irgl_rt.worklist):
      %c1 = arith.constant 1 : index
      %inf = arith.constant 1073741823 : i32
      %tid = func.call @irgl_global_thread_id() : () -> index
      %nthreads = func.call @irgl_global_num_threads() : () -> index
      %size = func.call @irgl_wl_size(%in) : (!irgl_rt.worklist) -> index
      scf.for %i = %tid to %size step %nthreads {
        %node = func.call @irgl_wl_item(%in, %i) : (!irgl_rt.worklist, index) -> index
        %first = func.call @irgl_graph_first_edge(%g, %node) : (!irgl_rt.graph, index) -> index
        %last = func.call @irgl_graph_last_edge(%g, %node) : (!irgl_rt.graph, index) -> index
        scf.for %e = %first to %last step %c1 {
          %dst = func.call @irgl_graph_edge_dst(%g, %e) : (!irgl_rt.graph, index) -> index
          %old = memref.load %level[%dst] : memref<?xi32>
          %unvisited = arith.cmpi eq, %old, %inf : i32
          scf.if %unvisited {
            memref.store %LEVEL, %level[%dst] : memref<?xi32>
            func.call @irgl_wl_push(%out, %dst) : (!irgl_rt.worklist, index) -> ()
          }
        }
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "bfs", irgl_rt.launch = #irgl_rt.launch<block = 256, bounds = [256]>} : () -> ()

    func.func private @irgl_global_thread_id() -> index
    func.func private @irgl_global_num_threads() -> index
    func.func private @irgl_graph_num_nodes(!irgl_rt.graph) -> index
    func.func private @irgl_graph_first_edge(!irgl_rt.graph, index) -> index
    func.func private @irgl_graph_last_edge(!irgl_rt.graph, index) -> index
    func.func private @irgl_graph_edge_dst(!irgl_rt.graph, index) -> index
    func.func private @irgl_wl_size(!irgl_rt.worklist) -> index
    func.func private @irgl_wl_item(!irgl_rt.worklist, index) -> index
    func.func private @irgl_wl_push(!irgl_rt.worklist, index)
  }) : () -> ()

  // The host kernel: returns the number of levels.
  // CHECK-LABEL: static int32_t irgl_host_bfs_main(irgl::Graph g, int32_t* level, irgl_index src) {
  // CHECK-NEXT:    irgl_index init_grid = irgl::grid_size(init, 256, false);
  // CHECK-NEXT:    irgl::launch(init, init_grid, 256, g, level, src);
  // CHECK-NEXT:    irgl_index capacity = irgl_graph_capacity(g);
  // CHECK-NEXT:    irgl::Pipe* pipe = irgl_pipe_create(capacity);
  // CHECK-NEXT:    irgl_pipe_push_initial(pipe, src);
  // CHECK-NEXT:    irgl_index grid = irgl::grid_size(bfs, 256, false);
  // CHECK-NEXT:    int32_t LEVEL = 1;
  // CHECK-NEXT:    int32_t levels;
  // CHECK-NEXT:    while (true) {
  // CHECK-NEXT:      irgl_index pending = irgl_pipe_in_size(pipe);
  // CHECK-NEXT:      bool nonempty = pending > 0;
  // CHECK-NEXT:      levels = LEVEL;
  // CHECK-NEXT:      if (!nonempty) break;
  // CHECK-NEXT:      irgl::Worklist in = irgl_pipe_in(pipe);
  // CHECK-NEXT:      irgl::Worklist out = irgl_pipe_out(pipe);
  // CHECK-NEXT:      irgl::launch(bfs, grid, 256, g, level, levels, in, out);
  // CHECK-NEXT:      irgl_pipe_advance(pipe);
  // CHECK-NEXT:      int32_t next = levels + 1;
  // CHECK-NEXT:      LEVEL = next;
  // CHECK-NEXT:    }
  // CHECK-NEXT:    irgl_pipe_destroy(pipe);
  // CHECK-NEXT:    return levels;
  // CHECK-NEXT:  }
  // CHECK-EMPTY:
  // CHECK-NEXT:  extern "C" int irgl_entry_bfs_main(void* g, void* level, int64_t src, int64_t* result) {
  // CHECK-NEXT:    return irgl::guard([&] {
  // CHECK-NEXT:      *result = (int64_t)irgl_host_bfs_main(*static_cast<irgl::Graph*>(g), static_cast<int32_t*>(level), (irgl_index)src);
  // CHECK-NEXT:    });
  // CHECK-NEXT:  }
  func.func @bfs_main(%g: !irgl_rt.graph, %level: memref<?xi32>, %src: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %one = arith.constant 1 : i32
    %init_grid = irgl_rt.grid_size @irgl_kernels::@init, %c256
    "gpu.launch_func"(%init_grid, %c1, %c1, %c256, %c1, %c1, %g, %level, %src) <{kernel = @irgl_kernels::@init, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}> : (index, index, index, index, index, index, !irgl_rt.graph, memref<?xi32>, index) -> ()
    %capacity = func.call @irgl_graph_capacity(%g) : (!irgl_rt.graph) -> index
    %pipe = func.call @irgl_pipe_create(%capacity) : (index) -> !irgl_rt.pipe
    func.call @irgl_pipe_push_initial(%pipe, %src) : (!irgl_rt.pipe, index) -> ()
    %grid = irgl_rt.grid_size @irgl_kernels::@bfs, %c256
    %levels = scf.while (%LEVEL = %one) : (i32) -> i32 {
      %pending = func.call @irgl_pipe_in_size(%pipe) : (!irgl_rt.pipe) -> index
      %nonempty = arith.cmpi sgt, %pending, %c0 : index
      scf.condition(%nonempty) %LEVEL : i32
    } do {
    ^bb0(%L: i32):
      %in = func.call @irgl_pipe_in(%pipe) : (!irgl_rt.pipe) -> !irgl_rt.worklist
      %out = func.call @irgl_pipe_out(%pipe) : (!irgl_rt.pipe) -> !irgl_rt.worklist
      "gpu.launch_func"(%grid, %c1, %c1, %c256, %c1, %c1, %g, %level, %L, %in, %out) <{kernel = @irgl_kernels::@bfs, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 5, 0>}> : (index, index, index, index, index, index, !irgl_rt.graph, memref<?xi32>, i32, !irgl_rt.worklist, !irgl_rt.worklist) -> ()
      func.call @irgl_pipe_advance(%pipe) : (!irgl_rt.pipe) -> ()
      %next = arith.addi %L, %one : i32
      scf.yield %next : i32
    }
    func.call @irgl_pipe_destroy(%pipe) : (!irgl_rt.pipe) -> ()
    func.return %levels : i32
  }

  func.func private @irgl_graph_capacity(!irgl_rt.graph) -> index
  func.func private @irgl_pipe_create(index) -> !irgl_rt.pipe
  func.func private @irgl_pipe_push_initial(!irgl_rt.pipe, index)
  func.func private @irgl_pipe_in_size(!irgl_rt.pipe) -> index
  func.func private @irgl_pipe_in(!irgl_rt.pipe) -> !irgl_rt.worklist
  func.func private @irgl_pipe_out(!irgl_rt.pipe) -> !irgl_rt.worklist
  func.func private @irgl_pipe_advance(!irgl_rt.pipe)
  func.func private @irgl_pipe_destroy(!irgl_rt.pipe)
}
