// RUN: irgl-opt %s -p lower-irgl -t 'cuda{inline-runtime=false}' | filecheck %s

// Helper functions in the emitted CUDA: func.func helpers and device kernels
// that kernels call are __device__ functions, declared before every
// definition; a helper that host code calls too is also a host function; the
// outlined Iterate's control kernel calls the kernel body, which calls the
// helpers.

func.func private @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  func.return %y : i32
}
func.func private @clamp(%x: i32, %hi: i32) -> i32 {
  %y = arith.minsi %x, %hi : i32
  func.return %y : i32
}
func.func private @twice_clamped(%x: i32) -> i32 {
  %y = func.call @twice(%x) : (i32) -> i32
  %c = arith.constant 1000 : i32
  %z = func.call @clamp(%y, %c) : (i32, i32) -> i32
  func.return %z : i32
}
irgl.kernel device @deg(%g: !irgl.graph, %n: index) -> i32 {
  %d = irgl.graph.degree %g[%n]
  %i = arith.index_cast %d : index to i32
  irgl.return %i : i32
}
irgl.kernel @relax(%g: !irgl.graph, %a: memref<?xi32>) {
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %v = memref.load %a[%n] : memref<?xi32>
    %d = irgl.call @deg(%g, %n) : (!irgl.graph, index) -> i32
    %s = arith.addi %v, %d : i32
    %w = func.call @twice_clamped(%s) : (i32) -> i32
    memref.store %w, %a[%n] : memref<?xi32>
    %c100 = arith.constant 100 : i32
    %small = arith.cmpi slt, %w, %c100 : i32
    scf.if %small {
      irgl.wl.push %n
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %a: memref<?xi32>, %src: index) {
  irgl.iterate @relax(%g, %a) : (!irgl.graph, memref<?xi32>) initial [%src] {
  }
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xi32>
  %c7 = arith.constant 7 : i32
  %w = func.call @clamp(%v, %c7) : (i32, i32) -> i32
  memref.store %w, %a[%c0] : memref<?xi32>
}

// CHECK:      // Forward declarations
// CHECK-NEXT: __device__ int32_t twice(int32_t);
// CHECK-NEXT: __device__ int32_t clamp(int32_t, int32_t);
// CHECK-NEXT: __device__ int32_t twice_clamped(int32_t);
// CHECK-NEXT: __device__ int32_t deg(irgl::Graph, irgl_index);
// CHECK-NEXT: __device__ void relax_device(
// CHECK-NEXT: __global__ void __launch_bounds__(1024, 1) main_control(

// CHECK:      // gpu.module @irgl_kernels
// CHECK-EMPTY:
// CHECK-NEXT: __device__ int32_t twice(int32_t x) {
// CHECK-NEXT:   int32_t y = x + x;
// CHECK-NEXT:   return y;
// CHECK-NEXT: }
// CHECK:      __device__ int32_t clamp(int32_t x, int32_t hi) {
// CHECK-NEXT:   int32_t y = x < hi ? x : hi;
// CHECK-NEXT:   return y;
// CHECK-NEXT: }
// CHECK:      __device__ int32_t twice_clamped(int32_t x) {
// CHECK-NEXT:   int32_t y = twice(x);
// CHECK-NEXT:   int32_t z = clamp(y, 1000);
// CHECK-NEXT:   return z;
// CHECK-NEXT: }
// CHECK:      __device__ int32_t deg(irgl::Graph g, irgl_index n) {
// CHECK-NEXT:   irgl_index d = irgl_graph_degree(g, n);
// CHECK-NEXT:   int32_t i = (int32_t)d;
// CHECK-NEXT:   return i;
// CHECK-NEXT: }

// The control kernel runs every invocation of @relax through its device
// body: the kernel itself is not emitted (nothing launches it).

// CHECK-NOT:  __global__ void relax(
// CHECK:      __device__ void relax_device(
// CHECK:          int32_t d = deg(g, n);
// CHECK-NEXT:     int32_t s = v + d;
// CHECK-NEXT:     int32_t w = twice_clamped(s);
// CHECK:      __global__ void __launch_bounds__(1024, 1) main_control(
// CHECK:          relax_device(

// The host keeps its own copy of @clamp.

// CHECK:      #endif  // IRGL_HOST_ONLY
// CHECK-EMPTY:
// CHECK-NEXT: #if IRGL_HOST_CODE
// CHECK-NEXT: static int32_t irgl_host_clamp(int32_t, int32_t);
// CHECK-NEXT: static void irgl_host_main(irgl::Graph, int32_t*, irgl_index);
// CHECK-NEXT: #endif
// CHECK:      static int32_t irgl_host_clamp(int32_t x, int32_t hi) {
// CHECK-NEXT:   int32_t y = x < hi ? x : hi;
// CHECK-NEXT:   return y;
// CHECK-NEXT: }
// CHECK:      static void irgl_host_main(
// CHECK:        int32_t w = irgl_host_clamp(v, 7);
// CHECK-NOT:  irgl_host_twice
