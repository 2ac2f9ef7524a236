// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_merged=false}' | filecheck %s
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_merged=false retry_drain_solo=false}' | filecheck %s --check-prefix=NOSOLO
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{remarks=true small_worklist=0}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{outline=false}' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{size_arg=false small_worklist=0}' | filecheck %s --check-prefix=NOSIZE
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0 retry_drain=false retry_merged=false}' | filecheck %s --check-prefix=NODRAIN
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{small_worklist=0}' | filecheck %s --check-prefix=RETRYM
// RUN: irgl-opt %s --split-input-file -p 'lower-irgl{small_worklist=0}' | filecheck %s --check-prefix=BODY
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{control_block=256}' | filecheck %s --check-prefix=CTL256
// RUN: not irgl-opt %s -p 'irgl-outline-iterations{control_block=48}' 2>&1 | filecheck %s --check-prefix=CTLBAD
// RUN: irgl-opt %s --split-input-file -p 'convert-irgl-kernels,irgl-outline-iterations{control_block=256 control_resident=256}' | filecheck %s --check-prefix=RES256
// RUN: not irgl-opt %s -p 'lower-irgl{control_resident=4096}' 2>&1 | filecheck %s --check-prefix=RESBAD
// (The small-worklist mode, on by default, is tested in irgl-outline-small-worklist.mlir.)

// A standalone Iterate of a worklist kernel with a carried value: the host
// creates the pipe context, fills it, takes a status word from the runtime
// (mapped host memory, read without a copy; nothing retries,
// so the retry worklist serves as the spare), launches the control kernel once cooperatively (a resident grid of
// the control kernel) and synchronizes once; the carried result is copied
// back. On the device, every invocation is a call of the kernel's body and
// a grid barrier; in/out rotate through the spare.
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

// CHECK-LABEL: func.func @main
// CHECK:         %[[GH:.*]] = builtin.unrealized_conversion_cast %g : !irgl.graph to !irgl_rt.graph
// CHECK-NEXT:    %[[CAP:.*]] = func.call @irgl_graph_capacity(%[[GH]])
// CHECK-NEXT:    %[[P:.*]] = func.call @irgl_pipe_create(%[[CAP]])
// CHECK-NEXT:    func.call @irgl_pipe_push_initial(%[[P]], %src)
// CHECK-NEXT:    %[[IN:.*]] = func.call @irgl_pipe_in(%[[P]])
// CHECK-NEXT:    %[[OUT:.*]] = func.call @irgl_pipe_out(%[[P]])
// CHECK-NEXT:    %[[RETRY:.*]] = func.call @irgl_pipe_retry(%[[P]])
// CHECK-NEXT:    %[[RESA:.*]] = memref.alloc() : memref<1xi32>
// CHECK-NEXT:    %[[RES:.*]] = "memref.cast"(%[[RESA]]) : (memref<1xi32>) -> memref<?xi32>
// CHECK-NEXT:    %[[STATUS:.*]] = func.call @irgl_outline_status() : () -> memref<?xi32>
// CHECK-NEXT:    %[[B:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[G:.*]] = irgl_rt.grid_size @irgl_kernels::@main_control, %[[B]] resident
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    "gpu.launch_func"(%[[G]], %[[ONE]], %[[ONE]], %[[B]], %[[ONE]], %[[ONE]], %g, %c1, %[[IN]], %[[OUT]], %[[RETRY]], %[[RETRY]], %[[RES]], %[[STATUS]]) <{kernel = @irgl_kernels::@main_control
// CHECK-NEXT:    func.call @irgl_outline_finish(%[[STATUS]])
// CHECK-NEXT:    %[[LAST:.*]] = func.call @irgl_device_read_i32(%[[RES]]) : (memref<?xi32>) -> i32
// CHECK-NEXT:    memref.dealloc %[[RESA]]
// CHECK-NEXT:    func.call @irgl_outline_status_release(%[[STATUS]])
// CHECK-NEXT:    func.call @irgl_pipe_destroy(%[[P]])
// CHECK-NEXT:    func.return %[[LAST]] : i32

// The kernel runs with the control block size (the largest every kernel of
// the control kernel admits: 1024 here), pinned, and gets a
// device-function twin that irgl-outline-kernel-bodies fills in.
// CHECK:         }) {sym_name = "step", irgl_rt.launch = #irgl_rt.launch<block = 1024, worklist = 2, pinned>}
// With control_block=256 the largest admitted size up to 256 is taken, and
// the control kernel's launch bounds keep 1024 threads per SM.
// CTL256:      %[[B:.*]] = arith.constant 256 : index
// CTL256-NEXT: irgl_rt.grid_size @irgl_kernels::@main_control, %[[B]] resident
// CTL256:      {sym_name = "step", irgl_rt.launch = #irgl_rt.launch<block = 256, worklist = 2, pinned>}
// CTL256:      {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 256, bounds = [256, 4], grid_sync, control>}
// CTLBAD: irgl-outline-iterations: control_block must be 0 or a power of two from 32 to 1024, got 48
// control_resident=256 asks for one 256-thread block per SM: the registers
// are left to the compiler.
// RES256:      {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 256, bounds = [256, 1], grid_sync, control>}
// RESBAD: lower-irgl: control_resident must be a thread count from 0 to 2048, got 4096
// CHECK-NEXT:    func.func private @step_device(!irgl.graph, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@step, in_size>}

// CHECK:         "gpu.func"() <{function_type = (!irgl.graph, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist, memref<?xi32>, memref<?xi32>) -> (), kernel}> ({
// CHECK-NEXT:    ^{{.*}}(%[[DG:[0-9a-z_]+]]: !irgl.graph, %[[DC1:[0-9a-z_]+]]: i32, %[[W0:[0-9a-z_]+]]: !irgl_rt.worklist, %[[W1:[0-9a-z_]+]]: !irgl_rt.worklist, %[[W2:[0-9a-z_]+]]: !irgl_rt.worklist, %[[W3:[0-9a-z_]+]]: !irgl_rt.worklist, %[[DRES:[0-9a-z_]+]]: memref<?xi32>, %[[DST:[0-9a-z_]+]]: memref<?xi32>):
// CHECK-NEXT:      %[[E0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[S0:.*]] = func.call @irgl_ctl_size(%[[W0]])
// CHECK-NEXT:      %[[Z0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[GO:.*]] = arith.cmpi sgt, %[[S0]], %[[Z0]] : index
// CHECK-NEXT:      %[[LOOP:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} = scf.while (%{{[0-9]+}} = %[[GO]], %{{[0-9]+}} = %[[DC1]], %{{[0-9]+}} = %[[W0]], %{{[0-9]+}} = %[[W1]], %{{[0-9]+}} = %[[W2]], %{{[0-9]+}} = %[[W3]], %{{[0-9]+}} = %[[S0]], %{{[0-9]+}} = %[[E0]])
// CHECK:         } do {
// CHECK-NEXT:    ^{{.*}}(%[[L:[0-9a-z_]+]]: i32, %[[IN2:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT2:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT2:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP2:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// CHECK-NEXT:      func.call @irgl_ctl_clear(%[[SP2]])
// CHECK-NEXT:      func.call @step_device(%[[DG]], %[[L]], %[[IN2]], %[[OUT2]], %[[SP2]], %[[SZ]])
// CHECK-NEXT:      func.call @irgl_grid_sync()
// CHECK-NEXT:      %[[SZ2:.*]] = func.call @irgl_ctl_size_check(%[[OUT2]], %[[DST]])
// CHECK-NEXT:      %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[EP2:.*]] = arith.addi %[[EP]], %[[ONE2]]
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[L]], %[[DC1]] : i32
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi sgt, %[[SZ2]], %[[Z2]] : index
// CHECK-NEXT:      scf.yield %[[MORE]], %[[NEXT]], %[[OUT2]], %[[SP2]], %[[RT2]], %[[IN2]], %[[SZ2]], %[[EP2]]
// CHECK:         %[[FIRST:.*]] = func.call @irgl_is_first_thread()
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.store %[[LOOP]], %[[DRES]]{{\[}}%[[Z]]] : memref<?xi32>
// CHECK:         "gpu.return"() : () -> ()
// CHECK-NEXT:  }) {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 1024, bounds = [1024, 1], grid_sync, control>}

// REMARK: remark: irgl.iterate @step in @main: outlined into control kernel @main_control (block size 1024)

// Without size_arg the device body takes the kernel's arguments only (and
// reads the worklist's tail itself); the control loop still reads sizes.
// NOSIZE-LABEL: func.func @main
// NOSIZE:         func.func private @step_device(!irgl.graph, i32, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@step>}
// NOSIZE:         func.call @irgl_ctl_size
// NOSIZE:         func.call @step_device(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) :

// irgl-outline-kernel-bodies: the device body's worklist loop runs to the
// size argument; the kernel itself still reads the tail.
// BODY-LABEL: func.func @main
// BODY:         func.func private @step_device(%g: !irgl_rt.graph, %lvl: i32, %[[IN:[0-9]+]]: !irgl_rt.worklist, %{{[0-9]+}}: !irgl_rt.worklist, %{{[0-9]+}}: !irgl_rt.worklist, %[[N:[0-9]+]]: index) {
// BODY-NOT:       irgl_wl_size
// BODY:           scf.for %i = %{{.*}} to %[[N]] step %{{.*}} {
// BODY-NEXT:        func.call @irgl_wl_item(%[[IN]], %i)
// BODY:         func.return

// OFF-LABEL: func.func @main
// OFF-NOT:     main_control
// OFF:         scf.while
// OFF-NOT:     main_control

// -----

// Iterate Until Any with an extra Or condition and a kernel that retries:
// the Any cell is triple-buffered (a slot per step, the next one reset
// ahead by global thread 0); retried items run again in rounds that rotate
// in/retry/spare, each ended by a grid barrier, until a round is a storm
// (irgl_ctl_drain_storm): then block 0 alone attempts the retried items in
// windows (the body takes its grid: block 0 of 1), the losers of a pass
// moved back to the front of the retried items, until none is left.
irgl.kernel @work(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %t = arith.constant true
    irgl.retry %n
    irgl.reduce_and_return %t
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %stop: i1, %n: index) {
  irgl.iterate until any @work(%x) : (memref<?xi32>) initial [%n] capacity %n extra or {
    irgl.yield extra %stop : i1
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         func.call @irgl_pipe_create(%n)
// CHECK:         %[[SPARE:.*]] = func.call @irgl_wl_create(%n)
// CHECK:         %[[ANY:.*]] = arith.constant true
// CHECK-NEXT:    %[[CELL:.*]] = func.call @irgl_cell_create_slots(%[[ANY]])
// CHECK:         "gpu.launch_func"({{.*}}, %x, %stop, {{.*}}, %[[CELL]], %{{.*}}) <{kernel = @irgl_kernels::@main_control
// CHECK:         func.call @irgl_cell_destroy(%[[CELL]])
// CHECK-NEXT:    func.call @irgl_wl_destroy(%[[SPARE]])

// CHECK:         %[[BLK:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:    %[[NBLK:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// CHECK:         ^{{.*}}(%[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// CHECK-NEXT:      func.call @irgl_ctl_clear(%[[SP]])
// CHECK-NEXT:      func.call @irgl_ctl_cell_prepare(%[[C:.*]], %[[EP]])
// CHECK-NEXT:      %[[SLOT:.*]] = func.call @irgl_ctl_cell_slot(%[[C]], %[[EP]])
// CHECK-NEXT:      func.call @work_device(%{{.*}}, %[[IN]], %[[OUT]], %[[RT]], %[[SLOT]], %[[SZ]], %[[BLK]], %[[NBLK]])
// CHECK-NEXT:      func.call @irgl_grid_sync()
// CHECK-NEXT:      %[[R0:[0-9]+]], %[[R1:[0-9]+]], %[[R2:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}} = scf.while (%[[A0:.*]] = %[[IN]], %[[A1:.*]] = %[[RT]], %[[A2:.*]] = %[[SP]], %[[A3:.*]] = %[[SZ]])
// CHECK-NEXT:        %[[RSZ:.*]] = func.call @irgl_ctl_size_check(%[[A1]], %{{.*}})
// CHECK-NEXT:        %[[RZ:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[LIVE:.*]] = arith.cmpi sgt, %[[RSZ]], %[[RZ]] : index
// CHECK-NEXT:        scf.condition(%[[LIVE]]) %[[A0]], %[[A1]], %[[A2]], %[[RSZ]], %[[A3]]
// CHECK-NEXT:      } do {
// CHECK-NEXT:      ^{{.*}}(%[[OLDIN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWIN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWRT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWSZ:[0-9a-z_]+]]: index, %[[TRIED:[0-9a-z_]+]]: index):
// The storm test: then block 0 drains the retried items in windows.
// CHECK-NEXT:        %[[STORM:.*]] = func.call @irgl_ctl_drain_storm(%[[NEWSZ]], %[[TRIED]])
// CHECK-NEXT:        %[[D0:.*]], %[[D1:.*]], %[[D2:.*]] = scf.if %[[STORM]]
// CHECK-NEXT:          func.call @irgl_grid_sync()
// CHECK-NEXT:          %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:          %[[FIRST:.*]] = arith.cmpi eq, %[[BLK]], %[[Z]] : index
// CHECK-NEXT:          scf.if %[[FIRST]] {
// CHECK-NEXT:            %[[W0:.*]] = func.call @irgl_ctl_drain_window(%[[NEWSZ]])
// CHECK-NEXT:            scf.while (%[[LEFT:.*]] = %[[NEWSZ]], %{{.*}} = %[[W0]])
// CHECK:                 ^{{.*}}(%[[COUNT:[0-9a-z_]+]]: index, %[[WANT:[0-9a-z_]+]]: index):
// A pass carries the head, the window, the losers so far, the solo streak's
// length (from 1) and its one-item windows left (retry_drain_solo).
// CHECK:                   %{{[0-9]+}}, %[[WNEXT:[0-9]+]], %[[LOSERS:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}} = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[WANT]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK:                     arith.cmpi slt, %{{.*}}, %[[COUNT]] : index
// CHECK:                   ^{{.*}}(%[[H:[0-9a-z_]+]]: index, %[[K:[0-9a-z_]+]]: index, %[[LOST:[0-9a-z_]+]]: index, %[[STREAK:[0-9a-z_]+]]: index, %[[SOLOS:[0-9a-z_]+]]: index):
// CHECK-NEXT:                %[[REST:.*]] = arith.subi %[[COUNT]], %[[H]] : index
// CHECK-NEXT:                %[[TAKE:.*]] = arith.minsi %[[K]], %[[REST]] : index
// CHECK-NEXT:                %[[VIEW:.*]] = func.call @irgl_wl_window(%[[NEWIN]], %[[H]])
// CHECK-NEXT:                %[[B0:.*]] = arith.constant 0 : index
// CHECK-NEXT:                %[[B1:.*]] = arith.constant 1 : index
// CHECK-NEXT:                func.call @work_device(%{{.*}}, %[[VIEW]], %[[OUT]], %[[NEWRT]], %[[SLOT]], %[[TAKE]], %[[B0]], %[[B1]])
// CHECK-NEXT:                %[[NOW:.*]] = func.call @irgl_ctl_size_check(%[[NEWRT]], %{{.*}})
// CHECK-NEXT:                %[[NEWLOST:.*]] = arith.subi %[[NOW]], %[[LOST]] : index
// CHECK-NEXT:                %[[WON:.*]] = arith.subi %[[TAKE]], %[[NEWLOST]] : index
// CHECK-NEXT:                %[[NEXT:.*]] = func.call @irgl_ctl_drain_next(%[[WON]], %[[TAKE]], %[[SOLOS]])
// CHECK-NEXT:                %[[SOLOS2:.*]] = func.call @irgl_ctl_drain_left(%[[WON]], %[[TAKE]], %[[STREAK]], %[[SOLOS]])
// CHECK-NEXT:                %[[STREAK2:.*]] = func.call @irgl_ctl_drain_streak(%[[WON]], %[[TAKE]], %[[STREAK]])
// CHECK-NEXT:                %[[NEXTH:.*]] = arith.addi %[[H]], %[[TAKE]] : index
// CHECK-NEXT:                scf.yield %[[NEXTH]], %[[NEXT]], %[[NOW]], %[[STREAK2]], %[[SOLOS2]]
// retry_drain_solo=false: each window twice the last one's winners.
// NOSOLO:                  ^{{.*}}(%[[H:[0-9a-z_]+]]: index, %[[K:[0-9a-z_]+]]: index, %[[LOST:[0-9a-z_]+]]: index):
// NOSOLO:                    func.call @irgl_ctl_size_check
// NOSOLO-NEXT:               arith.subi
// NOSOLO-NEXT:               %[[WON:.*]] = arith.subi
// NOSOLO-NEXT:               %[[NEXT:.*]] = func.call @irgl_ctl_drain_window(%[[WON]])
// NOSOLO-NEXT:               %[[NEXTH:.*]] = arith.addi %[[H]], %{{.*}} : index
// NOSOLO-NEXT:               scf.yield %[[NEXTH]], %[[NEXT]], %{{.*}} : index, index, index
// NOSOLO-NOT:                irgl_ctl_drain_next
// CHECK:                   func.call @irgl_ctl_drain_move(%[[NEWIN]], %[[NEWRT]], %[[LOSERS]])
// CHECK-NEXT:              scf.yield %[[LOSERS]], %[[WNEXT]]
// CHECK:                 func.call @irgl_grid_sync()
// CHECK-NEXT:            scf.yield %[[OLDIN]], %[[NEWIN]], %[[NEWRT]]
// CHECK-NEXT:          } else {
// CHECK-NEXT:            func.call @irgl_ctl_clear(%[[OLDIN]])
// CHECK-NEXT:            func.call @work_device(%{{.*}}, %[[NEWIN]], %[[OUT]], %[[NEWRT]], %[[SLOT]], %[[NEWSZ]], %[[BLK]], %[[NBLK]])
// CHECK-NEXT:            func.call @irgl_grid_sync()
// CHECK-NEXT:            scf.yield %[[NEWIN]], %[[NEWRT]], %[[OLDIN]]
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.yield %[[D0]], %[[D1]], %[[D2]], %[[NEWSZ]]
// CHECK:           %[[HSZ:.*]] = func.call @irgl_ctl_size_check(%[[OUT]], %{{.*}})
// CHECK:           %[[V:.*]] = func.call @irgl_ctl_cell_value(%[[SLOT]])
// CHECK-NEXT:      %[[HZ:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[HAS:.*]] = arith.cmpi sgt, %[[HSZ]], %[[HZ]] : index
// CHECK:           %[[NOT:.*]] = arith.xori %[[V]], %{{.*}} : i1
// CHECK-NEXT:      %[[BOTH:.*]] = arith.andi %[[HAS]], %[[NOT]] : i1
// CHECK-NEXT:      %[[KEEP:.*]] = arith.ori %[[BOTH]], %{{.*}} : i1
// CHECK-NEXT:      scf.yield %[[KEEP]], %[[OUT]], %{{.*}}, %[[R1]], %[[R0]], %[[HSZ]], %{{.*}}

// retry_merged (the default): the first attempt and the retry rounds from one call of the
// body, a do-while: run, read the retry list's size, the storm test (block 0
// drains, and the loop ends), else rotate in/retry/spare (the old in
// emptied) while the retry list holds items.
// RETRYM-LABEL: func.func @main
// RETRYM:         %[[BLK:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// RETRYM-NEXT:    %[[NBLK:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// RETRYM:         ^{{.*}}(%[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// RETRYM-NEXT:      func.call @irgl_ctl_clear(%[[SP]])
// RETRYM-NEXT:      func.call @irgl_ctl_cell_prepare(%[[C:.*]], %[[EP]])
// RETRYM-NEXT:      %[[SLOT:.*]] = func.call @irgl_ctl_cell_slot(%[[C]], %[[EP]])
// RETRYM-NEXT:      %[[R0:[0-9]+]], %[[R1:[0-9]+]], %[[R2:[0-9]+]], %{{[0-9]+}} = scf.while (%[[A0:.*]] = %[[IN]], %[[A1:.*]] = %[[RT]], %[[A2:.*]] = %[[SP]], %[[A3:.*]] = %[[SZ]])
// RETRYM-NEXT:        func.call @work_device(%{{.*}}, %[[A0]], %[[OUT]], %[[A1]], %[[SLOT]], %[[A3]], %[[BLK]], %[[NBLK]])
// RETRYM-NEXT:        func.call @irgl_grid_sync()
// RETRYM-NEXT:        %[[RSZ:.*]] = func.call @irgl_ctl_size_check(%[[A1]], %{{.*}})
// RETRYM-NEXT:        %[[RZ:.*]] = arith.constant 0 : index
// RETRYM-NEXT:        %[[LIVE:.*]] = arith.cmpi sgt, %[[RSZ]], %[[RZ]] : index
// RETRYM-NEXT:        %[[STORM0:.*]] = func.call @irgl_ctl_drain_storm(%[[RSZ]], %[[A3]])
// RETRYM-NEXT:        %[[STORM:.*]] = arith.andi %[[LIVE]], %[[STORM0]] : i1
// RETRYM-NEXT:        %[[GO:.*]] = scf.if %[[STORM]] -> (i1) {
// RETRYM-NEXT:          func.call @irgl_grid_sync()
// RETRYM:                 func.call @irgl_wl_window(%[[A1]], %{{.*}})
// RETRYM:                 func.call @work_device(%{{.*}}, %{{.*}}, %[[OUT]], %[[A2]], %[[SLOT]], %{{.*}}, %{{.*}}, %{{.*}})
// RETRYM:               func.call @irgl_ctl_drain_move(%[[A1]], %[[A2]], %{{.*}})
// RETRYM:               func.call @irgl_grid_sync()
// RETRYM-NEXT:          %[[NO:.*]] = arith.constant false
// RETRYM-NEXT:          scf.yield %[[NO]] : i1
// RETRYM-NEXT:        } else {
// RETRYM-NEXT:          scf.yield %[[LIVE]] : i1
// RETRYM-NEXT:        }
// RETRYM-NEXT:        scf.condition(%[[GO]]) %[[A0]], %[[A1]], %[[A2]], %[[RSZ]]
// RETRYM-NEXT:      } do {
// RETRYM-NEXT:      ^{{.*}}(%[[OLDIN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWIN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWRT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWSZ:[0-9a-z_]+]]: index):
// RETRYM-NEXT:        func.call @irgl_ctl_clear(%[[OLDIN]])
// RETRYM-NEXT:        scf.yield %[[NEWIN]], %[[NEWRT]], %[[OLDIN]], %[[NEWSZ]]
// RETRYM-NEXT:      }
// RETRYM-NEXT:      %[[HSZ:.*]] = func.call @irgl_ctl_size_check(%[[OUT]], %{{.*}})
// RETRYM-NOT:       func.call @work_device
// RETRYM:           scf.yield %{{.*}}, %[[OUT]], %[[R2]], %[[R1]], %[[R0]], %[[HSZ]], %{{.*}}

// Without the drain (retry_drain=false; here with retry_merged=false) every
// retry round runs on the grid.
// NODRAIN-LABEL: func.func @main
// NODRAIN:         ^{{.*}}(%[[IN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[OUT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[RT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SP:[0-9a-z_]+]]: !irgl_rt.worklist, %[[SZ:[0-9a-z_]+]]: index, %[[EP:[0-9a-z_]+]]: index):
// NODRAIN-NEXT:      func.call @irgl_ctl_clear(%[[SP]])
// NODRAIN-NEXT:      func.call @irgl_ctl_cell_prepare(%[[C:.*]], %[[EP]])
// NODRAIN-NEXT:      %[[SLOT:.*]] = func.call @irgl_ctl_cell_slot(%[[C]], %[[EP]])
// NODRAIN-NEXT:      func.call @work_device(%{{.*}}, %[[IN]], %[[OUT]], %[[RT]], %[[SLOT]], %[[SZ]])
// NODRAIN-NEXT:      func.call @irgl_grid_sync()
// NODRAIN-NEXT:      %[[R0:[0-9]+]], %[[R1:[0-9]+]], %[[R2:[0-9]+]], %{{[0-9]+}} = scf.while (%[[A0:.*]] = %[[IN]], %[[A1:.*]] = %[[RT]], %[[A2:.*]] = %[[SP]])
// NODRAIN-NEXT:        %[[RSZ:.*]] = func.call @irgl_ctl_size_check(%[[A1]], %{{.*}})
// NODRAIN-NEXT:        %[[RZ:.*]] = arith.constant 0 : index
// NODRAIN-NEXT:        %[[LIVE:.*]] = arith.cmpi sgt, %[[RSZ]], %[[RZ]] : index
// NODRAIN-NEXT:        scf.condition(%[[LIVE]]) %[[A0]], %[[A1]], %[[A2]], %[[RSZ]]
// NODRAIN-NEXT:      } do {
// NODRAIN-NEXT:      ^{{.*}}(%[[OLDIN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWIN:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWRT:[0-9a-z_]+]]: !irgl_rt.worklist, %[[NEWSZ:[0-9a-z_]+]]: index):
// NODRAIN-NEXT:        func.call @irgl_ctl_clear(%[[OLDIN]])
// NODRAIN-NEXT:        func.call @work_device(%{{.*}}, %[[NEWIN]], %[[OUT]], %[[NEWRT]], %[[SLOT]], %[[NEWSZ]])
// NODRAIN-NEXT:        func.call @irgl_grid_sync()
// NODRAIN-NEXT:        scf.yield %[[NEWIN]], %[[NEWRT]], %[[OLDIN]]
// NODRAIN:           %[[HSZ:.*]] = func.call @irgl_ctl_size_check(%[[OUT]], %{{.*}})
// NODRAIN:           %[[V:.*]] = func.call @irgl_ctl_cell_value(%[[SLOT]])
// NODRAIN-NEXT:      %[[HZ:.*]] = arith.constant 0 : index
// NODRAIN-NEXT:      %[[HAS:.*]] = arith.cmpi sgt, %[[HSZ]], %[[HZ]] : index
// NODRAIN:           %[[NOT:.*]] = arith.xori %[[V]], %{{.*}} : i1
// NODRAIN-NEXT:      %[[BOTH:.*]] = arith.andi %[[HAS]], %[[NOT]] : i1
// NODRAIN-NEXT:      %[[KEEP:.*]] = arith.ori %[[BOTH]], %{{.*}} : i1
// NODRAIN-NEXT:      scf.yield %[[KEEP]], %[[OUT]], %{{.*}}, %[[R1]], %[[R0]], %[[HSZ]], %{{.*}}

// REMARK: remark: irgl.iterate @work in @main: outlined into control kernel @main_control (block size 1024)
// REMARK-NEXT: remark: irgl.iterate @work in @main: @work's retry storms are drained by block 0 (retry_drain)

// -----

// A Pipe once holding a looping Pipe of two kernels: all of it is one
// control kernel (the first kernel runs once, then the loop runs while `in`
// has work); the kernels' launch bounds intersect at 128.
irgl.kernel @seed(%x: memref<?xi32>) launch_bounds(128) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  irgl.forall %i in range(%c0, %c4) {
    irgl.wl.push %i
  }
}
irgl.kernel @a(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}
irgl.kernel @b(%x: memref<?xi32>) launch_bounds(512) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index) {
  irgl.pipe once capacity %n {
    irgl.invoke @seed(%x) : (memref<?xi32>)
    irgl.pipe {
      irgl.invoke @a(%x) : (memref<?xi32>)
      irgl.invoke @b(%x) : (memref<?xi32>)
    }
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[B:.*]] = arith.constant 128 : index
// CHECK-NEXT:    irgl_rt.grid_size @irgl_kernels::@main_control, %[[B]] resident
// CHECK:         }) {sym_name = "seed", irgl_rt.launch = #irgl_rt.launch<block = 128, {{.*}}pinned>}
// CHECK:         }) {sym_name = "a", irgl_rt.launch = #irgl_rt.launch<block = 128, {{.*}}pinned>}
// CHECK:         }) {sym_name = "b", irgl_rt.launch = #irgl_rt.launch<block = 128, {{.*}}pinned>}
// Only kernels that iterate over `in` get its size (@seed's ForAll is a range).
// CHECK:         func.func private @seed_device(memref<?xi32>, !irgl_rt.worklist, !irgl_rt.worklist, !irgl_rt.worklist) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@seed>}
// CHECK-NEXT:    func.func private @a_device({{.*}}, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@a, in_size>}
// CHECK-NEXT:    func.func private @b_device({{.*}}, index) -> () attributes {irgl_rt.device_body = #irgl_rt.device_body<@b, in_size>}
// CHECK:         func.call @seed_device(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
// CHECK-NEXT:    func.call @irgl_grid_sync()
// CHECK:         %[[S1:.*]] = func.call @irgl_ctl_size
// CHECK:         scf.while ({{.*}}, %{{[0-9]+}} = %[[S1]], %{{[0-9]+}} = %{{[0-9]+}})
// CHECK:         ^{{.*}}(%{{.*}}, %[[SA:[0-9a-z_]+]]: index, %{{[0-9a-z_]+}}: index):
// CHECK:         func.call @a_device({{.*}}, %[[SA]])
// CHECK-NEXT:    func.call @irgl_grid_sync()
// CHECK-NEXT:    %[[SB:.*]] = func.call @irgl_ctl_size_check
// CHECK:         func.call @b_device({{.*}}, %[[SB]])
// CHECK-NEXT:    func.call @irgl_grid_sync()
// CHECK-NEXT:    %[[SZ:.*]] = func.call @irgl_ctl_size_check
// CHECK:         %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[MORE:.*]] = arith.cmpi sgt, %[[SZ]], %[[Z]] : index
// CHECK-NEXT:    scf.yield %[[MORE]], {{.*}}, %[[SZ]], %{{[0-9]+}}
// CHECK:         {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 128, bounds = [128, 8], grid_sync, control>}

// REMARK: remark: irgl.pipe in @main: outlined into control kernel @main_control (block size 128)
// REMARK-NEXT: remark: irgl.pipe in @main: outlined inside control kernel @main_control

// -----

// Not outlined: a Pipe once of invocations only (no loop to save), and an
// Iterate whose body holds C text (host code).
irgl.kernel @k(%x: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index) {
  irgl.pipe once capacity %n {
    irgl.invoke @k(%x) : (memref<?xi32>)
  }
  irgl.iterate @k(%x) : (memref<?xi32>) initial [%n] capacity %n {
    irgl.cblock "puts(\"level\");"
  }
}

// CHECK-LABEL: func.func @main
// CHECK-NOT:     main_control
// CHECK:         irgl.pipe once
// CHECK:         irgl.iterate @k

// REMARK: remark: irgl.pipe in @main: not outlined: it holds no loop (a Pipe once of invocations only)
// REMARK-NEXT: remark: irgl.iterate @k in @main: not outlined: 'irgl.cblock' in its body cannot run on the device

// -----

// Carried memrefs read back: the body swaps two buffers (and may take a
// third from outside); the control kernel carries, beside each memref slot,
// an i32 naming which of the candidate host buffers it holds, stores the
// final one for the used result, and the host selects that buffer. A
// topology-driven control kernel (no worklist) asks for a full SM.
irgl.kernel @step(%a: memref<?xf64>, %b: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    %v = memref.load %a[%i] : memref<?xf64>
    memref.store %v, %b[%i] : memref<?xf64>
    %t = arith.constant true
    irgl.reduce_and_return %t
  }
}
irgl.kernel host @main(%x: memref<?xf64>, %y: memref<?xf64>, %z: memref<?xf64>, %n: index, %out: memref<?xf64>) {
  %last, %other = irgl.iterate while any @step(%a = %x, %b = %y, %n) : (memref<?xf64>, memref<?xf64>, index) {
    irgl.yield %b, %z : memref<?xf64>, memref<?xf64>
  }
  irgl.invoke @step(%last, %out, %n) : (memref<?xf64>, memref<?xf64>, index)
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[IDA:.*]] = memref.alloc() : memref<1xi32>
// CHECK-NEXT:    %[[ID:.*]] = "memref.cast"(%[[IDA]]) : (memref<1xi32>) -> memref<?xi32>
// CHECK:         "gpu.launch_func"({{.*}}%x, %y, %n, %z,{{.*}}kernel = @irgl_kernels::@main_control
// CHECK:         %[[K:.*]] = func.call @irgl_device_read_i32(%[[ID]]) : (memref<?xi32>) -> i32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[IS1:.*]] = arith.cmpi eq, %[[K]], %[[ONE]] : i32
// CHECK-NEXT:    %[[S1:.*]] = arith.select %[[IS1]], %y, %x : memref<?xf64>
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[IS2:.*]] = arith.cmpi eq, %[[K]], %[[TWO]] : i32
// CHECK-NEXT:    %[[LAST:.*]] = arith.select %[[IS2]], %z, %[[S1]] : memref<?xf64>
// CHECK:         irgl.invoke @step(%[[LAST]], %out, %n)

// the loop carries the two buffers and their i32 names (0: %x, 1: %y, 2: %z):
// the next %a is the old %b (its name), the next %b is %z (2)
// CHECK:         ^bb0(%[[CX:.*]]: memref<?xf64>, %[[CY:.*]]: memref<?xf64>, %{{.*}}: index, %[[CZ:.*]]: memref<?xf64>, %{{.*}}: !irgl_rt.cell, %[[DID:.*]]: memref<?xi32>, %{{.*}}: memref<?xi32>):
// CHECK:         %[[I0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 1 : i32
// CHECK:         %{{.*}}, %{{.*}}, %[[NAME:.*]], %{{.*}}, %{{.*}} = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[CX]], %{{.*}} = %[[CY]], %{{.*}} = %[[I0]], %{{.*}} = %[[I1]], {{.*}}) : (i1, memref<?xf64>, memref<?xf64>, i32, i32, index)
// CHECK:         ^bb0(%{{.*}}: memref<?xf64>, %[[B:.*]]: memref<?xf64>, %{{.*}}: i32, %[[BNAME:.*]]: i32, %{{.*}}: index):
// CHECK:         %[[ZNAME:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    scf.yield %{{.*}}, %[[B]], %[[CZ]], %[[BNAME]], %[[ZNAME]], %{{.*}} : i1, memref<?xf64>, memref<?xf64>, i32, i32, index
// CHECK:         memref.store %[[NAME]], %[[DID]]
// CHECK:         {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 1024, bounds = [1024, 2], grid_sync, control>}

// REMARK: remark: irgl.iterate @step in @main: outlined into control kernel @main_control (block size 1024)

// -----

// Kernels that declare min_blocks in their launch bounds set the control
// kernel's residency: the largest min_blocks (3, from @q) blocks of the
// control block size (128, the intersection), so the control kernel's
// launch bounds are [128, 3] (the register budget of those bounds). The
// control_resident option overrides it (256 threads: [128, 2]).
irgl.kernel @p(%x: memref<?xi32>) launch_bounds(256, 2) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    irgl.wl.push %n
  }
}
irgl.kernel @q(%x: memref<?xi32>) launch_bounds(128, 3) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index) {
  irgl.pipe capacity %n {
    irgl.invoke @p(%x) : (memref<?xi32>)
    irgl.invoke @q(%x) : (memref<?xi32>)
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[B:.*]] = arith.constant 128 : index
// CHECK-NEXT:    irgl_rt.grid_size @irgl_kernels::@main_control, %[[B]] resident
// CHECK:         }) {sym_name = "p", irgl_rt.launch = #irgl_rt.launch<block = 128, worklist = 1, bounds = [256, 2], pinned>}
// CHECK:         }) {sym_name = "q", irgl_rt.launch = #irgl_rt.launch<block = 128, worklist = 1, bounds = [128, 3], pinned>}
// CHECK:         {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 128, bounds = [128, 3], grid_sync, control>}
// CTL256:        {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 128, bounds = [128, 3], grid_sync, control>}
// RES256:        {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 128, bounds = [128, 2], grid_sync, control>}

// -----

// A residency above what an SM holds is capped at 2048 threads: 4 blocks of
// 1024 asked, 2 kept.
irgl.kernel @wide(%x: memref<?xi32>) launch_bounds(1024, 4) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index) {
  irgl.pipe capacity %n {
    irgl.invoke @wide(%x) : (memref<?xi32>)
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         {sym_name = "main_control", irgl_rt.launch = #irgl_rt.launch<block = 1024, bounds = [1024, 2], grid_sync, control>}
