// RUN: irgl-opt %s -t 'cuda{inline-runtime=false}' | filecheck %s

// scf.for / scf.if / scf.while: results become variables declared before the
// construct and assigned by scf.yield and scf.condition.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({

    // CHECK-LABEL: __device__ int32_t sum_and_swap(int32_t* a, irgl_index n) {
    // CHECK-NEXT:    int32_t sum = 0;
    // CHECK-NEXT:    int32_t x = 1;
    // CHECK-NEXT:    int32_t y = 2;
    // CHECK-NEXT:    for (irgl_index i = 0; i < n; i += 1) {
    // CHECK-NEXT:      int32_t v = a[i];
    // CHECK-NEXT:      int32_t next = sum + v;
    // CHECK-NEXT:      int32_t y_next = y;
    // CHECK-NEXT:      int32_t x_next = x;
    // CHECK-NEXT:      sum = next;
    // CHECK-NEXT:      x = y_next;
    // CHECK-NEXT:      y = x_next;
    // CHECK-NEXT:    }
    // CHECK-NEXT:    int32_t r = sum + x;
    // CHECK-NEXT:    int32_t r2 = r + y;
    // CHECK-NEXT:    return r2;
    // CHECK-NEXT:  }
    func.func @sum_and_swap(%a: memref<?xi32>, %n: index) -> i32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %sum, %x, %y = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %x0 = %one, %y0 = %two) -> (i32, i32, i32) {
        %v = memref.load %a[%i] : memref<?xi32>
        %next = arith.addi %acc, %v : i32
        scf.yield %next, %y0, %x0 : i32, i32, i32
      }
      %r = arith.addi %sum, %x : i32
      %r2 = arith.addi %r, %y : i32
      func.return %r2 : i32
    }

    // Sibling regions reuse names; nested ones do not.
    // CHECK-LABEL: __device__ void scopes(int32_t* a, int32_t n) {
    // CHECK-NEXT:    for (int32_t i = 0; i < n; i += 1) {
    // CHECK-NEXT:      irgl_index k = (irgl_index)i;
    // CHECK-NEXT:      for (int32_t i_1 = 0; i_1 < n; i_1 += 2) {
    // CHECK-NEXT:        irgl_index k_1 = (irgl_index)i_1;
    // CHECK-NEXT:        a[k_1] = i;
    // CHECK-NEXT:      }
    // CHECK-NEXT:      a[k] = i;
    // CHECK-NEXT:    }
    // CHECK-NEXT:    for (int32_t i = 0; i < n; i += 1) {
    // CHECK-NEXT:      irgl_index k = (irgl_index)i;
    // CHECK-NEXT:      a[k] = 0;
    // CHECK-NEXT:    }
    // CHECK-NEXT:  }
    func.func @scopes(%a: memref<?xi32>, %n: i32) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      scf.for %i = %c0 to %n step %c1 : i32 {
        %k = arith.index_cast %i : i32 to index
        scf.for %i_1 = %c0 to %n step %c2 : i32 {
          %k_1 = arith.index_cast %i_1 : i32 to index
          memref.store %i, %a[%k_1] : memref<?xi32>
        }
        memref.store %i, %a[%k] : memref<?xi32>
      }
      scf.for %i = %c0 to %n step %c1 : i32 {
        %k = arith.index_cast %i : i32 to index
        memref.store %c0, %a[%k] : memref<?xi32>
      }
      func.return
    }

    // CHECK-LABEL: __device__ int32_t branches(bool c, int32_t a, int32_t b, int32_t* out) {
    // CHECK-NEXT:    int32_t m;
    // CHECK-NEXT:    if (c) {
    // CHECK-NEXT:      int32_t d = a - b;
    // CHECK-NEXT:      m = d;
    // CHECK-NEXT:    } else {
    // CHECK-NEXT:      m = b;
    // CHECK-NEXT:    }
    // CHECK-NEXT:    if (c) {
    // CHECK-NEXT:      out[0] = m;
    // CHECK-NEXT:    }
    // CHECK-NEXT:    if (c) {
    // CHECK-NEXT:      out[1] = a;
    // CHECK-NEXT:    } else {
    // CHECK-NEXT:      out[1] = b;
    // CHECK-NEXT:      return m;
    // CHECK-NEXT:    }
    // CHECK-NEXT:    return 0;
    // CHECK-NEXT:  }
    func.func @branches(%c: i1, %a: i32, %b: i32, %out: memref<?xi32>) -> i32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0 : i32
      %m = scf.if %c -> (i32) {
        %d = arith.subi %a, %b : i32
        scf.yield %d : i32
      } else {
        scf.yield %b : i32
      }
      scf.if %c {
        memref.store %m, %out[%c0] : memref<?xi32>
      } else {
      }
      scf.if %c {
        memref.store %a, %out[%c1] : memref<?xi32>
      } else {
        memref.store %b, %out[%c1] : memref<?xi32>
        "irgl_rt.c_block"(%m) <{text = "return $0;"}> : (i32) -> ()
      }
      func.return %zero : i32
    }

    // CHECK-LABEL: __device__ int32_t collatz(int32_t start) {
    // CHECK-NEXT:    int32_t n = start;
    // CHECK-NEXT:    int32_t steps = 0;
    // CHECK-NEXT:    int32_t v_final;
    // CHECK-NEXT:    int32_t total;
    // CHECK-NEXT:    while (true) {
    // CHECK-NEXT:      bool more = n != 1;
    // CHECK-NEXT:      v_final = n;
    // CHECK-NEXT:      total = steps;
    // CHECK-NEXT:      if (!more) break;
    // CHECK-NEXT:      int32_t odd = v_final & 1;
    // CHECK-NEXT:      bool is_odd = odd != 0;
    // CHECK-NEXT:      int32_t next;
    // CHECK-NEXT:      if (is_odd) {
    // CHECK-NEXT:        int32_t t = v_final * 3;
    // CHECK-NEXT:        int32_t t1 = t + 1;
    // CHECK-NEXT:        next = t1;
    // CHECK-NEXT:      } else {
    // CHECK-NEXT:        int32_t h = v_final / 2;
    // CHECK-NEXT:        next = h;
    // CHECK-NEXT:      }
    // CHECK-NEXT:      int32_t s = total + 1;
    // CHECK-NEXT:      n = next;
    // CHECK-NEXT:      steps = s;
    // CHECK-NEXT:    }
    // CHECK-NEXT:    return total;
    // CHECK-NEXT:  }
    func.func @collatz(%start: i32) -> i32 {
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %three = arith.constant 3 : i32
      %final, %total = scf.while (%n = %start, %steps = %zero) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi ne, %n, %one : i32
        scf.condition(%more) %n, %steps : i32, i32
      } do {
      ^bb0(%n: i32, %steps: i32):
        %odd = arith.andi %n, %one : i32
        %is_odd = arith.cmpi ne, %odd, %zero : i32
        %next = scf.if %is_odd -> (i32) {
          %t = arith.muli %n, %three : i32
          %t1 = arith.addi %t, %one : i32
          scf.yield %t1 : i32
        } else {
          %h = arith.divsi %n, %two : i32
          scf.yield %h : i32
        }
        %s = arith.addi %steps, %one : i32
        scf.yield %next, %s : i32, i32
      }
      func.return %total : i32
    }

    // A while loop without carried values (a do-while on a flag).
    // CHECK-LABEL: __device__ void spin(int32_t* flag) {
    // CHECK-NEXT:    while (true) {
    // CHECK-NEXT:      int32_t f = flag[0];
    // CHECK-NEXT:      bool busy = f == 0;
    // CHECK-NEXT:      if (!busy) break;
    // CHECK-NEXT:    }
    // CHECK-NEXT:  }
    func.func @spin(%flag: memref<i32>) {
      %zero = arith.constant 0 : i32
      scf.while () : () -> () {
        %f = memref.load %flag[] : memref<i32>
        %busy = arith.cmpi eq, %f, %zero : i32
        scf.condition(%busy)
      } do {
        scf.yield
      }
      func.return
    }
  }) : () -> ()
}
