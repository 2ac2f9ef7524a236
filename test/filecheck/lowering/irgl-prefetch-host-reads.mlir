// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-host-memory,irgl-prefetch-host-reads | filecheck %s
// RUN: irgl-opt %s -p 'lower-irgl{prefetch_reads=false}' | filecheck %s --check-prefix=OFF
// RUN: irgl-opt %s -p lower-irgl -t cuda | filecheck %s --check-prefix=CUDA

// Host reads of device memory that follow one another with no device work
// in between: the copies of the second and later ones are issued before
// the first, which synchronizes for all of them.
irgl.kernel @k(%a: memref<?xi32>) {
  %c1 = arith.constant 1 : i32
  %z = arith.constant 0 : index
  irgl.forall %n in range(%z, %z) {
    memref.store %c1, %a[%n] : memref<?xi32>
  }
}

irgl.kernel host @main(%a: memref<?xi32>, %b: memref<?xi64>, %flag: i1) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %seven = arith.constant 7 : i32
  %tmp = memref.alloc(%c2) : memref<?xi32>
  irgl.invoke @k(%a) : (memref<?xi32>)
  // a run of three reads: a deallocation and arithmetic in between
  %x = memref.load %a[%c0] : memref<?xi32>
  memref.dealloc %tmp : memref<?xi32>
  %y = memref.load %b[%c1] : memref<?xi64>
  %x64 = arith.extsi %x : i32 to i64
  %z = memref.load %a[%c2] : memref<?xi32>
  // an index computed from a read of the run: read as it is
  %i = arith.index_cast %x : i32 to index
  %w = memref.load %a[%i] : memref<?xi32>
  // a store ends the run: the next two reads are a run of their own
  memref.store %seven, %a[%c0] : memref<?xi32>
  %u = memref.load %a[%c0] : memref<?xi32>
  %v = memref.load %b[%c2] : memref<?xi64>
  // a launch ends a run too
  irgl.invoke @k(%a) : (memref<?xi32>)
  %s = memref.load %a[%c1] : memref<?xi32>
  // runs inside a region are found too
  %r = scf.if %flag -> (i64) {
    %p = memref.load %b[%c0] : memref<?xi64>
    %q = memref.load %b[%c2] : memref<?xi64>
    %pq = arith.addi %p, %q : i64
    scf.yield %pq : i64
  } else {
    scf.yield %y : i64
  }
  %sum = arith.addi %r, %v : i64
  irgl.return %sum : i64
}

// CHECK-LABEL: func.func @main(
// CHECK:         irgl.invoke @k(%a)
// CHECK-NEXT:    func.call @irgl_device_prefetch_i64(%b, %c1) : (memref<?xi64>, index) -> ()
// CHECK-NEXT:    func.call @irgl_device_prefetch_i32(%a, %c2) : (memref<?xi32>, index) -> ()
// CHECK-NEXT:    %x = func.call @irgl_device_load_i32(%a, %c0)
// CHECK-NEXT:    memref.dealloc %tmp
// CHECK-NEXT:    %y = func.call @irgl_device_load_i64(%b, %c1)
// CHECK-NEXT:    %x64 = arith.extsi %x
// CHECK-NEXT:    %z = func.call @irgl_device_load_i32(%a, %c2)
// CHECK-NEXT:    %i = arith.index_cast %x
// CHECK-NEXT:    %w = func.call @irgl_device_load_i32(%a, %i)
// CHECK-NEXT:    func.call @irgl_device_store_i32(%a, %c0, %seven)
// CHECK-NEXT:    func.call @irgl_device_prefetch_i64(%b, %c2) : (memref<?xi64>, index) -> ()
// CHECK-NEXT:    %u = func.call @irgl_device_load_i32(%a, %c0)
// CHECK-NEXT:    %v = func.call @irgl_device_load_i64(%b, %c2)
// CHECK-NEXT:    irgl.invoke @k(%a)
// CHECK-NEXT:    %s = func.call @irgl_device_load_i32(%a, %c1)
// CHECK-NEXT:    %r = scf.if %flag
// CHECK-NEXT:      func.call @irgl_device_prefetch_i64(%b, %c2) : (memref<?xi64>, index) -> ()
// CHECK-NEXT:      %p = func.call @irgl_device_load_i64(%b, %c0)
// CHECK-NEXT:      %q = func.call @irgl_device_load_i64(%b, %c2)
// CHECK:       func.func private @irgl_device_prefetch_i64(memref<?xi64>, index) -> ()
// CHECK:       func.func private @irgl_device_prefetch_i32(memref<?xi32>, index) -> ()

// OFF-NOT: irgl_device_prefetch

// CUDA-LABEL: static int64_t irgl_host_main(int32_t* a, int64_t* b, bool flag) {
// CUDA:         irgl::launch(k,
// CUDA-NEXT:    irgl_device_prefetch_i64(b, (irgl_index)1);
// CUDA-NEXT:    irgl_device_prefetch_i32(a, (irgl_index)2);
// CUDA-NEXT:    int32_t x = irgl_device_load_i32(a, (irgl_index)0);
