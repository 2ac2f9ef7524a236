// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=64 small_worklist_edges=0 retry_merged=false}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist_edges=0}' | filecheck %s --check-prefix=DEFAULT
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 remarks=true}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{small_worklist=64 warp_spread=false}' | filecheck %s --check-prefix=BODY
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{small_worklist=64}' | filecheck %s --check-prefix=SPREAD
// RUN: not irgl-opt %s --split-input-file -p 'lower-irgl{small_worklist=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=64 small_worklist_us=32 small_worklist_edges=0}' | filecheck %s --check-prefix=TIMED
// RUN: not irgl-opt %s --split-input-file -p 'lower-irgl{small_worklist_us=-5}' 2>&1 | filecheck %s --check-prefix=NEGATIVE-US
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=64 small_worklist_merged=true small_worklist_edges=0}' | filecheck %s --check-prefix=MERGED
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=64 small_worklist_edges=8 retry_merged=false}' | filecheck %s --check-prefix=EDGES
// RUN: not irgl-opt %s --split-input-file -p 'lower-irgl{small_worklist_edges=-2}' 2>&1 | filecheck %s --check-prefix=NEGATIVE-EDGES

// The small-worklist mode of a control loop (irgl-outline-iterations
// `small_worklist`): at a round boundary where `in` holds at most the
// threshold of items, every block passes a grid barrier, block 0 alone runs
// rounds separated by block barriers (the device body maps its items over
// block 0: block 0 of 1 block), thread 0 posts the loop state to a mailbox,
// all blocks meet at a second grid barrier and load the state. Otherwise the
// round runs on the whole grid, the device body gets the launch's block and
// number of blocks.
irgl.kernel @step(%g: !irgl.graph, %lvl: i32) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index) -> i32 {
  %c1 = arith.constant 1 : i32
  %last = irgl.iterate @step(%g, %l = %c1) : (!irgl.graph, i32) initial [%src] {
    %next = arith.addi %l, %c1 : i32
    irgl.yield %next : i32
  }
  irgl.return %last : i32
}

// The host allocates one mailbox per type of the handed-over state (the
// condition, the carried i32, the four worklists, the size of in and the
// step counter), passes them after the status word and frees them.
// CHECK-LABEL: func.func @main
// CHECK:         memref.alloc() : memref<1xi32>
// CHECK-NEXT:    "memref.cast"
// CHECK-NEXT:    %[[STATUS:.*]] = func.call @irgl_outline_status()
// CHECK-NEXT:    %[[MI1A:.*]] = memref.alloc() : memref<1xi1>
// CHECK-NEXT:    %[[MI1:.*]] = "memref.cast"(%[[MI1A]]) : (memref<1xi1>) -> memref<?xi1>
// CHECK-NEXT:    %[[MI32A:.*]] = memref.alloc() : memref<1xi32>
// CHECK-NEXT:    %[[MI32:.*]] = "memref.cast"(%[[MI32A]]) : (memref<1xi32>) -> memref<?xi32>
// CHECK-NEXT:    %[[MWLA:.*]] = memref.alloc() : memref<4x!irgl_rt.worklist>
// CHECK-NEXT:    %[[MWL:.*]] = "memref.cast"(%[[MWLA]]) : (memref<4x!irgl_rt.worklist>) -> memref<?x!irgl_rt.worklist>
// CHECK-NEXT:    %[[MIXA:.*]] = memref.alloc() : memref<2xindex>
// CHECK-NEXT:    %[[MIX:.*]] = "memref.cast"(%[[MIXA]]) : (memref<2xindex>) -> memref<?xindex>
// CHECK:         "gpu.launch_func"({{.*}}, %[[STATUS]], %[[MI1]], %[[MI32]], %[[MWL]], %[[MIX]]) <{kernel = @irgl_kernels::@main_control
// CHECK-NEXT:    func.call @irgl_outline_finish(%[[STATUS]])
// CHECK:         func.call @irgl_outline_status_release(%[[STATUS]])
// CHECK-NEXT:    memref.dealloc %[[MI1A]]
// CHECK-NEXT:    memref.dealloc %[[MI32A]]
// CHECK-NEXT:    memref.dealloc %[[MWLA]]
// CHECK-NEXT:    memref.dealloc %[[MIXA]]

// The device body takes the size of in, the calling block and the number
// of blocks.
// CHECK:         func.func private @step_device(!irgl.graph, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@step, in_size, grid>}

// CHECK:         ^{{.*}}(%[[G:[0-9a-z_]+]]: !irgl.graph, %[[C1:[0-9a-z_]+]]: i32, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: memref<?xi32>, %[[ST:[0-9a-z_]+]]: memref<?xi32>, %[[BI1:[0-9a-z_]+]]: memref<?xi1>, %[[BI32:[0-9a-z_]+]]: memref<?xi32>, %[[BWL:[0-9a-z_]+]]: memref<?x!irgl_rt.worklist>, %[[BIX:[0-9a-z_]+]]: memref<?xindex>):
// CHECK-NEXT:      arith.constant 0 : index
// CHECK-NEXT:      %[[BLOCK:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:      %[[BLOCKS:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// CHECK:         } do {
// CHECK-NEXT:    ^{{.*}}(%[[L:[0-9a-z_]+]]: i32, %[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// CHECK-NEXT:      %[[T:.*]] = arith.constant 64 : index
// CHECK-NEXT:      %[[FITS:.*]] = arith.cmpi sle, %[[SZ]], %[[T]] : index
// CHECK-NEXT:      %{{.*}} = scf.if %[[FITS]] -> (i1, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index) {
// CHECK-NEXT:        func.call @irgl_grid_sync()
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[B0:.*]] = arith.cmpi eq, %[[BLOCK]], %[[Z]] : index
// CHECK-NEXT:        scf.if %[[B0]] {
// CHECK-NEXT:          %[[F:[0-9]+]], %[[FL:[0-9]+]], %[[FW0:[0-9]+]], %[[FW1:[0-9]+]], %[[FW2:[0-9]+]], %[[FW3:[0-9]+]], %[[FSZ:[0-9]+]], %[[FEP:[0-9]+]] = scf.while (%[[BL:[0-9]+]] = %[[L]], %[[BIN:[0-9]+]] = %[[IN]], %[[BOUT:[0-9]+]] = %[[OUT]], %[[BRT:[0-9]+]] = %[[RT]], %[[BSP:[0-9]+]] = %[[SP]], %[[BSZ:[0-9]+]] = %[[SZ]], %[[BEP:[0-9]+]] = %[[EP]])
// CHECK-NEXT:            func.call @irgl_ctl_clear(%[[BSP]])
// CHECK-NEXT:            %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:            %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:            func.call @step_device(%[[G]], %[[BL]], %[[BIN]], %[[BOUT]], %[[BSP]], %[[BSZ]], %[[ZERO]], %[[ONE]])
// CHECK-NEXT:            %[[NSZ:.*]] = func.call @irgl_ctl_size_check(%[[BOUT]], %[[ST]])
// CHECK-NEXT:            %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:            %[[NEP:.*]] = arith.addi %[[BEP]], %[[ONE2]] : index
// CHECK-NEXT:            %[[NEXT:.*]] = arith.addi %[[BL]], %[[C1]] : i32
// CHECK-NEXT:            %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:            %[[MORE:.*]] = arith.cmpi sgt, %[[NSZ]], %[[Z2]] : index
// CHECK-NEXT:            %[[T2:.*]] = arith.constant 64 : index
// CHECK-NEXT:            %[[FITS2:.*]] = arith.cmpi sle, %[[NSZ]], %[[T2]] : index
// CHECK-NEXT:            %[[STAY:.*]] = arith.andi %[[MORE]], %[[FITS2]] : i1
// CHECK-NEXT:            scf.condition(%[[STAY]]) %[[MORE]], %[[NEXT]], %[[BOUT]], %[[BSP]], %[[BRT]], %[[BIN]], %[[NSZ]], %[[NEP]]
// CHECK:               %[[FIRST:.*]] = func.call @irgl_is_first_thread()
// CHECK-NEXT:          scf.if %[[FIRST]] {
// CHECK-NEXT:            %[[S0:.*]] = arith.constant 0 : index
// CHECK-NEXT:            memref.store %[[F]], %[[BI1]][%[[S0]]] : memref<?xi1>
// CHECK-NEXT:            %[[S1:.*]] = arith.constant 0 : index
// CHECK-NEXT:            memref.store %[[FL]], %[[BI32]][%[[S1]]] : memref<?xi32>
// CHECK-NEXT:            %[[S2:.*]] = arith.constant 0 : index
// CHECK-NEXT:            memref.store %[[FW0]], %[[BWL]][%[[S2]]] : memref<?x!irgl_rt.worklist>
// CHECK:                 memref.store %[[FW3]], %[[BWL]][%{{.*}}] : memref<?x!irgl_rt.worklist>
// CHECK-NEXT:            %[[S6:.*]] = arith.constant 0 : index
// CHECK-NEXT:            memref.store %[[FSZ]], %[[BIX]][%[[S6]]] : memref<?xindex>
// CHECK-NEXT:            %[[S7:.*]] = arith.constant 1 : index
// CHECK-NEXT:            memref.store %[[FEP]], %[[BIX]][%[[S7]]] : memref<?xindex>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        func.call @irgl_grid_sync()
// CHECK-NEXT:        %[[L0:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[LC:.*]] = memref.load %[[BI1]][%[[L0]]] : memref<?xi1>
// CHECK-NEXT:        %[[L1:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[LL:.*]] = memref.load %[[BI32]][%[[L1]]] : memref<?xi32>
// CHECK:             memref.load %[[BIX]][%{{.*}}] : memref<?xindex>
// CHECK-NEXT:        arith.constant 1 : index
// CHECK-NEXT:        %[[LEP:.*]] = memref.load %[[BIX]][%{{.*}}] : memref<?xindex>
// CHECK-NEXT:        scf.yield %[[LC]], %[[LL]], {{.*}}, %[[LEP]] : i1, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index
// CHECK-NEXT:      } else {
// CHECK-NEXT:        func.call @irgl_ctl_clear(%[[SP]])
// CHECK-NEXT:        func.call @step_device(%[[G]], %[[L]], %[[IN]], %[[OUT]], %[[SP]], %[[SZ]], %[[BLOCK]], %[[BLOCKS]])
// CHECK-NEXT:        func.call @irgl_grid_sync()
// CHECK-NEXT:        %[[GSZ:.*]] = func.call @irgl_ctl_size_check(%[[OUT]], %[[ST]])
// CHECK:             scf.yield %{{.*}}, %{{.*}}, %[[OUT]], %[[SP]], %[[RT]], %[[IN]], %[[GSZ]], %{{.*}} : i1, i32
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield {{.*}} : i1, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index

// `small_worklist_edges` (on by default: 16): where the loop's kernels take
// a graph, `in` fits block 0 alone only while its items' out-degrees add up
// to at most that many edges per thread of the control block (8 x 1024
// here), at the round boundary and after each of block 0's rounds
// (`irgl_ctl_small_fits`: the item threshold, then the degrees summed).
// EDGES:         ^{{.*}}(%[[G:[0-9a-z_]+]]: !irgl.graph, %{{.*}}: i32, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist,
// EDGES:         } do {
// EDGES-NEXT:    ^{{.*}}(%[[L:[0-9a-z_]+]]: i32, %[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// EDGES-NEXT:      %[[T:.*]] = arith.constant 64 : index
// EDGES-NEXT:      %[[E:.*]] = arith.constant 8192 : i64
// EDGES-NEXT:      %[[GH:.*]] = builtin.unrealized_conversion_cast %[[G]] : !irgl.graph to !irgl_rt.graph
// EDGES-NEXT:      %[[FITS:.*]] = func.call @irgl_ctl_small_fits(%[[IN]], %[[SZ]], %[[T]], %[[GH]], %[[E]]) : (!irgl_rt.worklist, index, index, !irgl_rt.graph, i64) -> i1
// EDGES-NEXT:      %{{.*}} = scf.if %[[FITS]]
// EDGES:             func.call @step_device
// EDGES-NEXT:        %[[NSZ:.*]] = func.call @irgl_ctl_size_check(%[[BOUT:.*]], %{{.*}})
// EDGES:             %[[MORE:.*]] = arith.cmpi sgt, %[[NSZ]], %{{.*}} : index
// EDGES-NEXT:        %[[T2:.*]] = arith.constant 64 : index
// EDGES-NEXT:        %[[E2:.*]] = arith.constant 8192 : i64
// EDGES-NEXT:        %[[GH2:.*]] = builtin.unrealized_conversion_cast %[[G]] : !irgl.graph to !irgl_rt.graph
// EDGES-NEXT:        %[[FITS2:.*]] = func.call @irgl_ctl_small_fits(%[[BOUT]], %[[NSZ]], %[[T2]], %[[GH2]], %[[E2]])
// EDGES-NEXT:        %[[STAY:.*]] = arith.andi %[[MORE]], %[[FITS2]] : i1
// EDGES-NEXT:        scf.condition(%[[STAY]])

// `small_worklist_merged`: the same switch with one copy of the round. If
// in fits, a grid barrier; the grid (it does not fit) or block 0 (it fits)
// runs rounds: the body takes block 0 of 1 or the launch's geometry, a grid
// barrier follows it unless in fits, and the rounds go on while in fits
// (one round of the grid); block 0 posts the state, and after a grid
// barrier every block loads it.
// MERGED:          %[[BLOCK:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// MERGED-NEXT:     %[[BLOCKS:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// MERGED:        } do {
// MERGED-NEXT:   ^{{.*}}(%[[L:[0-9a-z_]+]]: i32, %[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// MERGED-NEXT:     %[[T:.*]] = arith.constant 64 : index
// MERGED-NEXT:     %[[FITS:.*]] = arith.cmpi sle, %[[SZ]], %[[T]] : index
// MERGED-NEXT:     scf.if %[[FITS]] {
// MERGED-NEXT:       func.call @irgl_grid_sync()
// MERGED-NEXT:     }
// MERGED:          %[[GRID:.*]] = arith.xori %[[FITS]], %{{.*}} : i1
// MERGED:          %[[B0:.*]] = arith.cmpi eq, %[[BLOCK]], %{{.*}} : index
// MERGED-NEXT:     %[[RUNS:.*]] = arith.ori %[[GRID]], %[[B0]] : i1
// MERGED-NEXT:     %{{.*}} = scf.if %[[RUNS]] -> (i1, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index) {
// MERGED-NEXT:       %[[R0:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} = scf.while
// MERGED-NEXT:         func.call @irgl_ctl_clear
// MERGED-NEXT:         %[[ZERO:.*]] = arith.constant 0 : index
// MERGED-NEXT:         %[[WHICH:.*]] = arith.select %[[FITS]], %[[ZERO]], %[[BLOCK]] : index
// MERGED-NEXT:         %[[ONE:.*]] = arith.constant 1 : index
// MERGED-NEXT:         %[[HOW:.*]] = arith.select %[[FITS]], %[[ONE]], %[[BLOCKS]] : index
// MERGED-NEXT:         func.call @step_device(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[WHICH]], %[[HOW]])
// MERGED:              %[[NOT:.*]] = arith.xori %[[FITS]], %{{.*}} : i1
// MERGED-NEXT:         scf.if %[[NOT]] {
// MERGED-NEXT:           func.call @irgl_grid_sync()
// MERGED-NEXT:         }
// MERGED-NEXT:         %[[NSZ:.*]] = func.call @irgl_ctl_size_check
// MERGED:              %[[FITS2:.*]] = arith.cmpi sle, %[[NSZ]], %{{.*}} : index
// MERGED-NEXT:         %[[SMALL:.*]] = arith.andi %[[FITS2]], %[[FITS]] : i1
// MERGED-NEXT:         %[[STAY:.*]] = arith.andi %{{.*}}, %[[SMALL]] : i1
// MERGED-NEXT:         scf.condition(%[[STAY]])
// MERGED:            scf.if %[[FITS]] {
// MERGED-NEXT:         func.call @irgl_is_first_thread()
// MERGED:            scf.yield %[[R0]], {{.*}} : i1, i32,
// MERGED-NEXT:     } else {
// MERGED-NEXT:       %[[NO:.*]] = arith.constant false
// MERGED-NEXT:       scf.yield %[[NO]], %[[L]], %[[IN]], %[[OUT]], %[[RT]], %[[SP]], %[[SZ]], %[[EP]] : i1, i32,
// MERGED-NEXT:     }
// MERGED-NEXT:     %{{.*}} = scf.if %[[FITS]] -> (i1, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index) {
// MERGED-NEXT:       func.call @irgl_grid_sync()
// MERGED-NEXT:       arith.constant 0 : index
// MERGED-NEXT:       memref.load
// MERGED:          } else {
// MERGED-NEXT:       scf.yield
// MERGED-NEXT:     }
// MERGED-NOT:      func.call @step_device
// MERGED:        "gpu.return"

// The default threshold: two items per thread of a 1024-thread block.
// DEFAULT-LABEL: func.func @main
// DEFAULT:         %[[T:.*]] = arith.constant 2048 : index
// DEFAULT-NEXT:    arith.cmpi sle, %{{.*}}, %[[T]] : index

// REMARK: remark: {{.*}}irgl.iterate @step in @main: outlined into control kernel @main_control (block size 1024)
// REMARK-NEXT: remark: {{.*}}irgl.iterate @step in @main: small-worklist mode (block 0 alone while in holds at most 2048 items of at most 16384 edges where its kernels take a graph)

// Off: no mode, no remark about it, a device body without the grid.
// OFF: remark: {{.*}}irgl.iterate @step in @main: outlined into control kernel @main_control (block size 1024)
// OFF-NOT: small-worklist
// OFF: #irgl_rt.device_body<@step, in_size>}
// OFF-NOT: irgl_ctl_block_sync

// The lowered device body maps its iterations over the grid it is given:
// its grid-stride loop uses the last two arguments, not the launch's.
// BODY-LABEL: func.func private @step_device
// BODY-SAME:     (%{{.*}}: !irgl_rt.graph, %{{.*}}: i32, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: index, %[[IDX:[0-9a-z_]+]]: index, %[[NUM:[0-9a-z_]+]]: index)
// BODY-NOT:      gpu.block_id
// BODY-NOT:      gpu.grid_dim
// BODY:          %[[BD:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}>
// BODY-NEXT:     %{{.*}} = arith.muli %[[IDX]], %[[BD]] : index
// BODY-NOT:      gpu.block_id
// BODY-NOT:      gpu.grid_dim
// BODY:          %{{.*}} = arith.muli %[[NUM]], %[[BD]] : index
// BODY-NOT:      gpu.block_id
// BODY-NOT:      gpu.grid_dim
// BODY:          func.return

// With warp spread (lower-irgl's default) the body deals runs of 32 slots
// over the blocks it is given: run w * NUM + IDX for warp w.
// SPREAD-LABEL: func.func private @step_device
// SPREAD-SAME:     %[[IDX:[0-9a-z_]+]]: index, %[[NUM:[0-9a-z_]+]]: index)
// SPREAD-NOT:      gpu.block_id
// SPREAD-NOT:      gpu.grid_dim
// SPREAD:          %[[WARP:.*]] = arith.divui
// SPREAD-NEXT:     %[[WG:.*]] = arith.muli %[[WARP]], %[[NUM]] : index
// SPREAD-NEXT:     %{{.*}} = arith.addi %[[WG]], %[[IDX]] : index
// SPREAD-NOT:      gpu.block_id
// SPREAD-NOT:      gpu.grid_dim
// SPREAD:          func.return

// NEGATIVE: lower-irgl: small_worklist must be an item count (0: off), got -1

// -----

// A looping Pipe whose kernel retries: block 0's retry rounds are separated
// by block barriers too, and read the size of retry (and its overflow flag)
// with one request.
irgl.kernel @work(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %v = memref.load %x[%n] : memref<?xi32>
    %zero = arith.constant 0 : i32
    %busy = arith.cmpi eq, %v, %zero : i32
    scf.if %busy {
      irgl.retry %n
    } else {
      irgl.wl.push %n
    }
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %cap: index) {
  %c0 = arith.constant 0 : index
  irgl.pipe initial [%c0] capacity %cap {
    irgl.invoke @work(%x) : (memref<?xi32>)
  }
}

// No carried values: the mailbox holds the condition, four worklists (in,
// out, retry, spare) and two indices.
// CHECK-LABEL: func.func @main
// CHECK:         memref.alloc() : memref<1xi1>
// CHECK-NEXT:    "memref.cast"
// CHECK-NEXT:    memref.alloc() : memref<4x!irgl_rt.worklist>
// CHECK-NEXT:    "memref.cast"
// CHECK-NEXT:    memref.alloc() : memref<2xindex>
// CHECK:         scf.if %{{.*}} -> (i1, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index, index) {
// CHECK-NEXT:      func.call @irgl_grid_sync()
// CHECK:           scf.while
// CHECK-NEXT:        func.call @irgl_ctl_clear
// CHECK:             func.call @work_device({{.*}}, %[[ZERO:.*]], %[[ONE:.*]]) :
// CHECK-NEXT:        scf.while
// CHECK-NEXT:          %[[RSZ:.*]] = func.call @irgl_ctl_size_check(
// CHECK-NEXT:          %[[RZ:.*]] = arith.constant 0 : index
// CHECK-NEXT:          %[[RMORE:.*]] = arith.cmpi sgt, %[[RSZ]], %[[RZ]] : index
// CHECK-NEXT:          scf.condition(%[[RMORE]])
// CHECK-NEXT:        } do {
// CHECK-NEXT:        ^{{.*}}(%[[OLD:[0-9a-z_]+]]: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: !irgl_rt.worklist, %{{.*}}: index):
// CHECK-NEXT:          func.call @irgl_ctl_clear(%[[OLD]])
// CHECK-NEXT:          func.call @work_device({{.*}}, %[[ZERO]], %[[ONE]]) :
// CHECK-NEXT:          scf.yield
// CHECK-NEXT:        }
// CHECK-NEXT:        func.call @irgl_ctl_size_check(
// CHECK:         } else {
// CHECK-NEXT:      func.call @irgl_ctl_clear
// CHECK-NEXT:      func.call @work_device
// CHECK-NEXT:      func.call @irgl_grid_sync()
// CHECK-NEXT:      scf.while
// CHECK-NEXT:        func.call @irgl_ctl_size_check(
// CHECK-NOT:     irgl_ctl_block_sync
// CHECK:         "gpu.return"

// REMARK: remark: {{.*}}irgl.pipe in @main: outlined into control kernel @main_control (block size 1024)
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: @work's retry storms are drained by block 0 (retry_drain)
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: small-worklist mode (block 0 alone while in holds at most 2048 items of at most 16384 edges where its kernels take a graph)

// -----

// Where the mode is illegal or useless the loop stays in grid mode and a
// remark says why: a kernel with a grid barrier, a kernel that iterates the
// nodes (not its worklist), a kernel without worklist, a round that holds a
// nested loop (whose inner loop gets the mode).
irgl.kernel @barrier(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.sync_running_threads
    irgl.wl.push %n
  }
}
irgl.kernel @sweep(%g: !irgl.graph, %x: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    irgl.wl.push %n
  }
}
irgl.kernel @count(%g: !irgl.graph, %x: memref<?xi32>) {
  irgl.forall %n in nodes(%g) {
    %c0 = arith.constant 0 : i32
    memref.store %c0, %x[%n] : memref<?xi32>
  }
}
irgl.kernel @step(%g: !irgl.graph) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}
irgl.kernel host @main(%g: !irgl.graph, %x: memref<?xi32>, %src: index) {
  irgl.iterate @barrier(%g) : (!irgl.graph) initial [%src] {
  }
  irgl.pipe initial [%src] {
    irgl.invoke @step(%g) : (!irgl.graph)
    irgl.invoke @sweep(%g, %x) : (!irgl.graph, memref<?xi32>)
  }
  irgl.pipe initial [%src] {
    irgl.invoke @step(%g) : (!irgl.graph)
    irgl.invoke @count(%g, %x) : (!irgl.graph, memref<?xi32>)
  }
  irgl.pipe initial [%src] {
    irgl.iterate @step(%g) : (!irgl.graph) {
    }
    irgl.invoke @step(%g) : (!irgl.graph)
  }
}

// REMARK: remark: {{.*}}irgl.iterate @barrier in @main: outlined into control kernel @main_control (block size 1024)
// REMARK-NEXT: remark: {{.*}}irgl.iterate @barrier in @main: no small-worklist mode: @barrier needs the whole grid: 'irgl.sync_running_threads' (a grid barrier)
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: outlined into control kernel @main_control1 (block size 1024)
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: no small-worklist mode: @sweep does not iterate over its worklist
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: outlined into control kernel @main_control2 (block size 1024)
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: no small-worklist mode: @count has no worklist
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: outlined into control kernel @main_control3 (block size 1024)
// REMARK-NEXT: remark: {{.*}}irgl.iterate @step in @main: outlined inside control kernel @main_control3
// REMARK-NEXT: remark: {{.*}}irgl.pipe in @main: no small-worklist mode: its round holds a nested loop
// REMARK-NEXT: remark: {{.*}}irgl.iterate @step in @main: small-worklist mode (block 0 alone while in holds at most 2048 items of at most 16384 edges where its kernels take a graph)

// A body that cannot run in one block gets no grid arguments.
// CHECK-LABEL: func.func @main
// CHECK:         func.func private @barrier_device({{.*}}) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@barrier, in_size>}
// CHECK:         func.func private @step_device({{.*}}) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@step, in_size, grid>}

// With a time limit (`small_worklist_us`): the status buffer has a second
// word, every block asks it before entering the mode, and block 0 stamps
// each step and leaves when one took longer than the limit (in ns).
// TIMED-LABEL: func.func @main(%g: !irgl.graph, %src: index) -> i32
// TIMED:         %[[ST:.*]] = memref.alloc() : memref<2xi32>
// TIMED-NEXT:    %{{.*}} = "memref.cast"(%[[ST]]) : (memref<2xi32>) -> memref<?xi32>
// TIMED:         %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// TIMED-NEXT:    %[[OK:.*]] = func.call @irgl_ctl_small_allowed(%[[CS:.*]]) : (memref<?xi32>) -> i1
// TIMED-NEXT:    %[[ENTER:.*]] = arith.andi %[[FITS]], %[[OK]] : i1
// TIMED-NEXT:    %{{.*}} = scf.if %[[ENTER]]
// TIMED:           scf.while
// TIMED-NEXT:        %[[T0:.*]] = func.call @irgl_ctl_clock() : () -> i64
// TIMED:             func.call @step_device
// TIMED:             %[[LIM:.*]] = arith.constant 32000 : i64
// TIMED-NEXT:        %[[QUICK:.*]] = func.call @irgl_ctl_small_quick(%[[T0]], %[[LIM]], %[[CS]]) : (i64, i64, memref<?xi32>) -> i1
// TIMED-NEXT:        %{{.*}} = arith.andi %{{.*}}, %[[QUICK]] : i1

// NEGATIVE-US: lower-irgl: small_worklist_us must be microseconds (0: no limit), got -5
// NEGATIVE-EDGES: lower-irgl: small_worklist_edges must be edges per thread of the control block (0: no bound), got -2
