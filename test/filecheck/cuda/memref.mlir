// RUN: irgl-opt %s -t 'cuda{inline-runtime=false}' | filecheck %s

// memref: rank-1 dynamic memrefs are pointers, static allocas local arrays;
// atomics return the old value.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({

    // CHECK-LABEL: __device__ int32_t locals(int32_t* a, irgl_index i) {
    // CHECK-NEXT:    int32_t buf[4];
    // CHECK-NEXT:    int32_t cell[1];
    // CHECK-NEXT:    int32_t v = a[i];
    // CHECK-NEXT:    buf[3] = v;
    // CHECK-NEXT:    cell[0] = v;
    // CHECK-NEXT:    int32_t w = buf[3];
    // CHECK-NEXT:    int32_t u = cell[0];
    // CHECK-NEXT:    int32_t r = w + u;
    // CHECK-NEXT:    return r;
    // CHECK-NEXT:  }
    func.func @locals(%a: memref<?xi32>, %i: index) -> i32 {
      %c3 = arith.constant 3 : index
      %buf = memref.alloca() : memref<4xi32>
      %cell = memref.alloca() : memref<i32>
      %v = memref.load %a[%i] : memref<?xi32>
      memref.store %v, %buf[%c3] : memref<4xi32>
      memref.store %v, %cell[] : memref<i32>
      %w = memref.load %buf[%c3] : memref<4xi32>
      %u = memref.load %cell[] : memref<i32>
      %r = arith.addi %w, %u : i32
      func.return %r : i32
    }

    // CHECK-LABEL: __global__ void atomics(int32_t* a, int64_t* b, float* f, double* d, irgl_index i, int32_t x, int64_t y, float z) {
    // CHECK-NEXT:    int32_t add = atomicAdd(&a[i], x);
    // CHECK-NEXT:    int32_t maxs = atomicMax(&a[i], add);
    // CHECK-NEXT:    int32_t maxu = (int32_t)atomicMax((unsigned int*)&a[i], (unsigned int)maxs);
    // CHECK-NEXT:    int32_t mins = atomicMin(&a[i], maxu);
    // CHECK-NEXT:    int32_t minu = (int32_t)atomicMin((unsigned int*)&a[i], (unsigned int)mins);
    // CHECK-NEXT:    int32_t ori = atomicOr(&a[i], minu);
    // CHECK-NEXT:    int32_t andi = atomicAnd(&a[i], ori);
    // CHECK-NEXT:    atomicExch(&a[i], andi);
    // CHECK-NEXT:    atomicAdd(&a[i], 1);
    // CHECK-NEXT:    int64_t add64 = (int64_t)atomicAdd((unsigned long long*)&b[i], (unsigned long long)y);
    // CHECK-NEXT:    int64_t max64 = (int64_t)atomicMax((long long*)&b[i], (long long)add64);
    // CHECK-NEXT:    int64_t minu64 = (int64_t)atomicMin((unsigned long long*)&b[i], (unsigned long long)max64);
    // CHECK-NEXT:    {{^}}  atomicExch((unsigned long long*)&b[i], (unsigned long long)minu64);
    // CHECK-NEXT:    float addf = atomicAdd(&f[i], z);
    // CHECK-NEXT:    atomicExch(&f[i], addf);
    // CHECK-NEXT:    atomicAdd(&d[0], 0.5);
    // CHECK-NEXT:  }
    "gpu.func"() <{function_type = (memref<?xi32>, memref<?xi64>, memref<?xf32>, memref<f64>, index, i32, i64, f32) -> (), kernel}> ({
    ^bb0(%a: memref<?xi32>, %b: memref<?xi64>, %f: memref<?xf32>, %d: memref<f64>, %i: index, %x: i32, %y: i64, %z: f32):
      %one = arith.constant 1 : i32
      %half = arith.constant 0.5 : f64
      %add = "memref.atomic_rmw"(%x, %a, %i) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
      %maxs = "memref.atomic_rmw"(%add, %a, %i) <{kind = 4 : i64}> : (i32, memref<?xi32>, index) -> i32
      %maxu = "memref.atomic_rmw"(%maxs, %a, %i) <{kind = 5 : i64}> : (i32, memref<?xi32>, index) -> i32
      %mins = "memref.atomic_rmw"(%maxu, %a, %i) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %minu = "memref.atomic_rmw"(%mins, %a, %i) <{kind = 8 : i64}> : (i32, memref<?xi32>, index) -> i32
      %ori = "memref.atomic_rmw"(%minu, %a, %i) <{kind = 11 : i64}> : (i32, memref<?xi32>, index) -> i32
      %andi = "memref.atomic_rmw"(%ori, %a, %i) <{kind = 12 : i64}> : (i32, memref<?xi32>, index) -> i32
      %exch = "memref.atomic_rmw"(%andi, %a, %i) <{kind = 2 : i64}> : (i32, memref<?xi32>, index) -> i32
      %inc = "memref.atomic_rmw"(%one, %a, %i) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
      %add64 = "memref.atomic_rmw"(%y, %b, %i) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
      %max64 = "memref.atomic_rmw"(%add64, %b, %i) <{kind = 4 : i64}> : (i64, memref<?xi64>, index) -> i64
      %minu64 = "memref.atomic_rmw"(%max64, %b, %i) <{kind = 8 : i64}> : (i64, memref<?xi64>, index) -> i64
      %exch64 = "memref.atomic_rmw"(%minu64, %b, %i) <{kind = 2 : i64}> : (i64, memref<?xi64>, index) -> i64
      %addf = "memref.atomic_rmw"(%z, %f, %i) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
      %exchf = "memref.atomic_rmw"(%addf, %f, %i) <{kind = 2 : i64}> : (f32, memref<?xf32>, index) -> f32
      %addd = "memref.atomic_rmw"(%half, %d) <{kind = 0 : i64}> : (f64, memref<f64>) -> f64
      "gpu.return"() : () -> ()
    }) {sym_name = "atomics"} : () -> ()
  }) : () -> ()

  // CHECK-LABEL: static void irgl_host_buffers(irgl_index n) {
  // CHECK-NEXT:    int32_t* dist = irgl_alloc<int32_t>(n);
  // CHECK-NEXT:    float* fixed = irgl_alloc<float>(16);
  // CHECK-NEXT:    int64_t* one = irgl_alloc<int64_t>(1);
  // CHECK-NEXT:    irgl_index tmp[2];
  // CHECK-NEXT:    tmp[1] = n;
  // CHECK-NEXT:    irgl_index m = tmp[1];
  // CHECK-NEXT:    int32_t* more = irgl_alloc<int32_t>(m);
  // CHECK-NEXT:    irgl_free(more);
  // CHECK-NEXT:    irgl_free(dist);
  // CHECK-NEXT:    irgl_free(fixed);
  // CHECK-NEXT:    irgl_free(one);
  // CHECK-NEXT:  }
  func.func @buffers(%n: index) {
    %c1 = arith.constant 1 : index
    %dist = memref.alloc(%n) : memref<?xi32>
    %fixed = memref.alloc() : memref<16xf32>
    %one = memref.alloc() : memref<i64>
    %tmp = memref.alloca() : memref<2xindex>
    memref.store %n, %tmp[%c1] : memref<2xindex>
    %m = memref.load %tmp[%c1] : memref<2xindex>
    %more = memref.alloc(%m) : memref<?xi32>
    memref.dealloc %more : memref<?xi32>
    memref.dealloc %dist : memref<?xi32>
    memref.dealloc %fixed : memref<16xf32>
    memref.dealloc %one : memref<i64>
    func.return
  }

  // A memref result crosses the ABI as void**.
  // CHECK-LABEL: static int32_t* irgl_host_make(irgl_index n) {
  // CHECK-NEXT:    int32_t* buf = irgl_alloc<int32_t>(n);
  // CHECK-NEXT:    return buf;
  // CHECK-NEXT:  }
  // CHECK-EMPTY:
  // CHECK-NEXT:  extern "C" int irgl_entry_make(int64_t n, void** result) {
  // CHECK-NEXT:    return irgl::guard([&] {
  // CHECK-NEXT:      *result = static_cast<void*>(irgl_host_make((irgl_index)n));
  // CHECK-NEXT:    });
  // CHECK-NEXT:  }
  func.func @make(%n: index) -> memref<?xi32> {
    %buf = memref.alloc(%n) : memref<?xi32>
    func.return %buf : memref<?xi32>
  }
}
