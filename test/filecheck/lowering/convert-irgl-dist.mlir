// RUN: irgl-opt %s --split-input-file -p "irgl-distribute,convert-irgl-kernels,convert-irgl-dist-orchestration,convert-irgl-dist" | filecheck %s
// RUN: irgl-opt %s --split-input-file -p "lower-irgl{distribute=oec remarks=true}" -t cuda 2>&1 | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %s --split-input-file -p "lower-irgl{distribute=oec distribute_late_broadcast=true}" -t cuda 2>&1 | filecheck %s --check-prefix=LATE

// Level-by-level BFS: the source becomes a local id, `set` syncs of the level
// after init and after every round, the worklist synchronized on its pipe,
// the initial worklist distributed, the termination test global.
irgl.kernel @init(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %inf = arith.constant 1073741823 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %l = arith.select %is_src, %zero, %inf : i32
    memref.store %l, %level[%n] : memref<?xi32>
  }
}
irgl.kernel @bfs(%g: !irgl.graph, %level: memref<?xi32>, %LEVEL: i32) {
  %inf = arith.constant 1073741823 : i32
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
    irgl.forall %e in edges(%g, %n) {
      %dst = irgl.graph.edge_dst %g[%e]
      %l = memref.load %level[%dst] : memref<?xi32>
      %unseen = arith.cmpi eq, %l, %inf : i32
      scf.if %unseen {
        memref.store %LEVEL, %level[%dst] : memref<?xi32>
        irgl.wl.push %dst
      }
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %level: memref<?xi32>, %src: index) {
  %c1 = arith.constant 1 : i32
  irgl.invoke @init(%g, %level, %src) : (!irgl.graph, memref<?xi32>, index)
  %last = irgl.iterate @bfs(%g, %level, %lvl = %c1) : (!irgl.graph, memref<?xi32>, i32) initial [%src] {
    %next = arith.addi %lvl, %c1 : i32
    irgl.yield %next : i32
  }
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %src_local = func.call @irgl_dist_local_node(%src) : (index) -> index
// CHECK:         "gpu.launch_func"({{.*}}%g, %level, %src_local) <{kernel = @irgl_kernels::@init,
// CHECK:         "gpu.launch_func"({{.*}}%g, %level, %src) <{kernel = @irgl_kernels::@init_mirrors
// CHECK-NEXT:    func.call @irgl_dist_agree_nodes_i32(%level) : (memref<?xi32>) -> ()
// CHECK:         %[[PIPE:.*]] = func.call @irgl_pipe_create(
// CHECK-NEXT:    func.call @irgl_pipe_push_initial(%[[PIPE]], %src_local)
// CHECK-NEXT:    func.call @irgl_dist_initial_worklist(%[[PIPE]]) : (!irgl_rt.pipe) -> ()
// CHECK-NEXT:    %global_size = func.call @irgl_dist_pipe_in_total(%[[PIPE]]) : (!irgl_rt.pipe) -> index
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = arith.cmpi sgt, %global_size, %{{.*}} : index
// CHECK:         scf.while
// CHECK:         <{kernel = @irgl_kernels::@bfs
// CHECK-NEXT:    func.call @irgl_pipe_advance(%[[PIPE]])
// CHECK-NEXT:    %set = arith.constant 5 : i32
// CHECK-NEXT:    func.call @irgl_dist_sync_nodes_i32(%level, %set)
// CHECK-NEXT:    func.call @irgl_dist_sync_worklist(%[[PIPE]]) : (!irgl_rt.pipe) -> ()
// CHECK:         %global_size_1 = func.call @irgl_dist_pipe_in_total(%[[PIPE]])
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = arith.cmpi sgt, %global_size_1, %{{.*}} : index
// A ForAll over nodes runs over the rank's masters only:
// CHECK:         %[[MASTERS:.*]] = func.call @irgl_dist_num_masters() : () -> index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    irgl.forall %n in range(%[[ZERO]], %[[MASTERS]]) {
// CHECK-NOT:     irgl_dist.
// CHECK-NOT:     irgl_pipe_in_size
// CHECK:         func.func private @irgl_dist_initial_worklist(!irgl_rt.pipe) -> ()

// CUDA:      remark: lower-irgl: distribute=oec: iteration outlining is off
// CUDA:      #define IRGL_DISTRIBUTED 1
// CUDA:      static void irgl_host_main(irgl::Graph g, int32_t* level, irgl_index src) {
// CUDA-NEXT:   irgl_index src_local = irgl_dist_local_node(src);
// CUDA:        irgl_dist_agree_nodes_i32(level);
// CUDA:        irgl_dist_initial_worklist(
// CUDA:        irgl_dist_sync_nodes_i32(level, 5);
// CUDA:        irgl_dist_sync_worklist(
// CUDA:        irgl_dist_pipe_in_total(

// -----

// A node id as data (its global id, on the device), an allocated node array
// and cell array (tracked: their agreed copies), an invoke's Any result
// (all-reduced once, by irgl-distribute), an Iterate's Any result read from
// its cell (all-reduced here), a cell array of static size.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>, %best: memref<?xi32>, %mark: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %d = memref.load %dist[%n] : memref<?xi32>
    %id = arith.index_cast %n : index to i32
    memref.store %id, %mark[%n] : memref<?xi32>
    %old = "memref.atomic_rmw"(%d, %best, %c0) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
    irgl.forall %e in edges(%g, %n) {
      %v = irgl.graph.edge_dst %g[%e]
      %o = "memref.atomic_rmw"(%d, %dist, %v) <{kind = 8 : i64}> : (i32, memref<?xi32>, index) -> i32
      %lower = arith.cmpi ult, %d, %o : i32
      irgl.reduce_and_return %lower
    }
  }
}
irgl.kernel @count(%g: !irgl.graph, %hits: memref<4xi64>) {
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %o = "memref.atomic_rmw"(%c1, %hits, %c0) <{kind = 1 : i64}> : (i64, memref<4xi64>, index) -> i64
  }
}
irgl.kernel host @main(%g: !irgl.graph, %mark: memref<?xi32>, %hits: memref<4xi64>) {
  %nn = irgl.graph.num_nodes %g
  %c1 = arith.constant 1 : index
  %dist = memref.alloc(%nn) : memref<?xi32>
  %best = memref.alloc(%c1) : memref<?xi32>
  %moved = irgl.invoke any @relax(%g, %dist, %best, %mark) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>)
  scf.if %moved {
    irgl.iterate until any @relax(%g, %dist, %best, %mark) : (!irgl.graph, memref<?xi32>, memref<?xi32>, memref<?xi32>) {
    }
  }
  irgl.invoke @count(%g, %hits) : (!irgl.graph, memref<4xi64>)
}

// CHECK-LABEL: func.func @main(
// CHECK:         %dist = memref.alloc(%nn) : memref<?xi32>
// CHECK-NEXT:    func.call @irgl_dist_track_i32(%dist, %nn) : (memref<?xi32>, index) -> ()
// CHECK-NEXT:    %best = memref.alloc(%c1) : memref<?xi32>
// CHECK-NEXT:    func.call @irgl_dist_track_i32(%best, %c1) : (memref<?xi32>, index) -> ()
// CHECK:         %moved = func.call @irgl_cell_read(
// CHECK-NEXT:    %minu = arith.constant 2 : i32
// CHECK-NEXT:    func.call @irgl_dist_sync_nodes_i32(%dist, %minu)
// CHECK-NEXT:    %min = arith.constant 0 : i32
// CHECK-NEXT:    func.call @irgl_dist_allreduce_cells_i32(%best, %c1, %min)
// CHECK-NEXT:    %or = arith.constant 6 : i32
// CHECK-NEXT:    %moved_all = func.call @irgl_dist_allreduce_i1(%moved, %or) : (i1, i32) -> i1
// CHECK-NEXT:    scf.if %moved_all {
// CHECK:           scf.while
// CHECK:           %[[ANY:.*]] = func.call @irgl_cell_read(
// CHECK-NEXT:      %or_1 = arith.constant 6 : i32
// CHECK-NEXT:      %global_result = func.call @irgl_dist_allreduce_i1(%[[ANY]], %or_1)
// CHECK:           %{{.*}} = arith.xori %global_result, %{{.*}} : i1
// CHECK:         <{kernel = @irgl_kernels::@count
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %add = arith.constant 4 : i32
// CHECK-NEXT:    %[[CAST:.*]] = "memref.cast"(%hits) : (memref<4xi64>) -> memref<?xi64>
// CHECK-NEXT:    func.call @irgl_dist_allreduce_cells_i64(%[[CAST]], %[[FOUR]], %add)
// CHECK:         %n_global = func.call @irgl_dist_global_id(%n) : (index) -> index
// CHECK-NEXT:    %id = arith.index_cast %n_global : index to i32
// CHECK:         func.func private @irgl_dist_global_id(index) -> index
// CHECK-NOT:     irgl_dist.
// CHECK-NOT:     irgl_pipe_in_size

// CUDA:        irgl_dist_track_i32(dist, nn);
// CUDA:        irgl_dist_allreduce_cells_i64(

// -----

// A round's distances reduced in the worklist's exchange (reduce-only,
// lowering/reduce_only.py): one call with the pipe, the array and the
// reduction's code, no sync_nodes of the array.
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %d = memref.load %dist[%n] : memref<?xi32>
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %w = irgl.graph.edge_weight %g[%e] : i32
      %nd = arith.addi %d, %w : i32
      %cur = memref.load %dist[%t] : memref<?xi32>
      %shorter = arith.cmpi slt, %nd, %cur : i32
      scf.if %shorter {
        %old = "memref.atomic_rmw"(%nd, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
        irgl.wl.push %t
      }
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.iterate @relax(%g, %dist) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
}

// CHECK-LABEL: func.func @main(
// CHECK:         %[[PIPE:.*]] = func.call @irgl_pipe_create(
// CHECK:         scf.while
// CHECK:         <{kernel = @irgl_kernels::@relax
// CHECK-NEXT:    func.call @irgl_pipe_advance(%[[PIPE]])
// CHECK-NEXT:    %min = arith.constant 0 : i32
// CHECK-NEXT:    %late_broadcast = arith.constant false
// CHECK-NEXT:    func.call @irgl_dist_sync_worklist_reduce_i32(%[[PIPE]], %dist, %min, %late_broadcast) : (!irgl_rt.pipe, memref<?xi32>, i32, i1) -> ()
// CHECK-NOT:     irgl_dist_sync_nodes
// CHECK:         func.func private @irgl_dist_sync_worklist_reduce_i32(!irgl_rt.pipe, memref<?xi32>, i32, i1) -> ()

// CUDA:        irgl_dist_sync_worklist_reduce_i32({{.*}}, dist, 0, false);
// LATE:        irgl_dist_sync_worklist_reduce_i32({{.*}}, dist, 0, true);

// -----

// A Pipe without initial items (its first step pushes the source) starts
// empty on every rank: the runtime records that without an exchange.
irgl.kernel @seed(%g: !irgl.graph, %src: index) {
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    scf.if %is_src {
      irgl.wl.push %n
    }
  }
}
irgl.kernel @visit(%g: !irgl.graph, %seen: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    memref.store %one, %seen[%n] : memref<?xi32>
  }
}
irgl.kernel host @main(%g: !irgl.graph, %seen: memref<?xi32>, %src: index) {
  irgl.pipe once {
    irgl.invoke @seed(%g, %src) : (!irgl.graph, index)
    irgl.invoke @visit(%g, %seen) : (!irgl.graph, memref<?xi32>)
  }
}

// CHECK-LABEL: func.func @main(
// CHECK:         %[[PIPE:.*]] = func.call @irgl_pipe_create(
// CHECK-NEXT:    func.call @irgl_dist_empty_worklist(%[[PIPE]]) : (!irgl_rt.pipe) -> ()
// CHECK-NOT:     irgl_dist_initial_worklist
// CHECK:         <{kernel = @irgl_kernels::@seed
// CHECK:         func.call @irgl_dist_sync_worklist(%[[PIPE]]) : (!irgl_rt.pipe) -> ()
// CHECK:         <{kernel = @irgl_kernels::@visit
// CHECK:         func.func private @irgl_dist_empty_worklist(!irgl_rt.pipe) -> ()

// CUDA:        irgl_dist_empty_worklist(
// CUDA-NOT:    irgl_dist_initial_worklist(
// CUDA:        irgl_dist_sync_worklist(
