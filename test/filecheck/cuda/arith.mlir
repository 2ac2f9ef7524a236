// RUN: irgl-opt %s -t 'cuda{inline-runtime=false}' | filecheck %s

// arith: constants are printed inline; unsigned operations cast to unsigned.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "irgl_kernels"}> ({

    // CHECK-LABEL: __device__ void constants(int32_t* o32, int64_t* o64, int8_t* o8, int16_t* o16, bool* o1, irgl_index* ox, float* of, double* od) {
    // CHECK-NEXT:    o32[0] = (-7);
    // CHECK-NEXT:    o32[1] = (-2147483647 - 1);
    // CHECK-NEXT:    o32[2] = 2147483647;
    // CHECK-NEXT:    o64[0] = 5000000000LL;
    // CHECK-NEXT:    o64[1] = (-9223372036854775807LL - 1);
    // CHECK-NEXT:    o8[0] = (-1);
    // CHECK-NEXT:    o16[0] = 300;
    // CHECK-NEXT:    o1[0] = true;
    // CHECK-NEXT:    o1[1] = false;
    // CHECK-NEXT:    ox[0] = 42;
    // CHECK-NEXT:    of[0] = 0.5f;
    // CHECK-NEXT:    of[1] = (-1.5e+10f);
    // CHECK-NEXT:    of[2] = INFINITY;
    // CHECK-NEXT:    of[3] = NAN;
    // CHECK-NEXT:    od[0] = 0.1;
    // CHECK-NEXT:    od[1] = (-INFINITY);
    // CHECK-NEXT:    od[2] = 1.0;
    // CHECK-NEXT:  }
    func.func @constants(%o32: memref<?xi32>, %o64: memref<?xi64>, %o8: memref<?xi8>, %o16: memref<?xi16>, %o1: memref<?xi1>, %ox: memref<?xindex>, %of: memref<?xf32>, %od: memref<?xf64>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %a = arith.constant -7 : i32
      %b = arith.constant -2147483648 : i32
      %c = arith.constant 2147483647 : i32
      %d = arith.constant 5000000000 : i64
      %e = arith.constant -9223372036854775808 : i64
      %f = arith.constant -1 : i8
      %g = arith.constant 300 : i16
      %t = arith.constant true
      %u = arith.constant false
      %x = arith.constant 42 : index
      %h = arith.constant 0.5 : f32
      %i = arith.constant -1.5e10 : f32
      %j = arith.constant 0x7F800000 : f32
      %k = arith.constant 0x7FC00000 : f32
      %l = arith.constant 0.1 : f64
      %m = arith.constant 0xFFF0000000000000 : f64
      %n = arith.constant 1.0 : f64
      memref.store %a, %o32[%c0] : memref<?xi32>
      memref.store %b, %o32[%c1] : memref<?xi32>
      memref.store %c, %o32[%c2] : memref<?xi32>
      memref.store %d, %o64[%c0] : memref<?xi64>
      memref.store %e, %o64[%c1] : memref<?xi64>
      memref.store %f, %o8[%c0] : memref<?xi8>
      memref.store %g, %o16[%c0] : memref<?xi16>
      memref.store %t, %o1[%c0] : memref<?xi1>
      memref.store %u, %o1[%c1] : memref<?xi1>
      memref.store %x, %ox[%c0] : memref<?xindex>
      memref.store %h, %of[%c0] : memref<?xf32>
      memref.store %i, %of[%c1] : memref<?xf32>
      memref.store %j, %of[%c2] : memref<?xf32>
      memref.store %k, %of[%c3] : memref<?xf32>
      memref.store %l, %od[%c0] : memref<?xf64>
      memref.store %m, %od[%c1] : memref<?xf64>
      memref.store %n, %od[%c2] : memref<?xf64>
      func.return
    }

    // CHECK-LABEL: __device__ void integer(int32_t a, int32_t b, int32_t* o) {
    // CHECK-NEXT:    int32_t add = a + b;
    // CHECK-NEXT:    int32_t sub = a - b;
    // CHECK-NEXT:    int32_t mul = a * b;
    // CHECK-NEXT:    int32_t divs = a / b;
    // CHECK-NEXT:    int32_t rems = a % b;
    // CHECK-NEXT:    int32_t divu = (int32_t)((uint32_t)a / (uint32_t)b);
    // CHECK-NEXT:    int32_t remu = (int32_t)((uint32_t)a % (uint32_t)b);
    // CHECK-NEXT:    int32_t v_and = a & b;
    // CHECK-NEXT:    int32_t v_or = a | b;
    // CHECK-NEXT:    int32_t v_xor = a ^ b;
    // CHECK-NEXT:    int32_t shl = (int32_t)((uint32_t)a << (uint32_t)3);
    // CHECK-NEXT:    int32_t shrs = a >> b;
    // CHECK-NEXT:    int32_t shru = (int32_t)((uint32_t)a >> (uint32_t)b);
    // CHECK-NEXT:    int32_t ceil = a / b + (a % b != 0 && (a < 0) == (b < 0));
    // CHECK-NEXT:    int32_t floor = a / b - (a % b != 0 && (a < 0) != (b < 0));
    // CHECK-NEXT:    int32_t ceilu = (int32_t)((uint32_t)a / (uint32_t)b + ((uint32_t)a % (uint32_t)b != 0));
    // CHECK-NEXT:    int32_t maxs = a > b ? a : b;
    // CHECK-NEXT:    int32_t mins = a < b ? a : b;
    // CHECK-NEXT:    int32_t maxu = (uint32_t)a > (uint32_t)b ? a : b;
    // CHECK-NEXT:    int32_t minu = (uint32_t)a < (uint32_t)(-1) ? a : (-1);
    func.func @integer(%a: i32, %b: i32, %o: memref<?xi32>) {
      %c3 = arith.constant 3 : i32
      %m1 = arith.constant -1 : i32
      %add = arith.addi %a, %b : i32
      %sub = arith.subi %a, %b : i32
      %mul = arith.muli %a, %b : i32
      %divs = arith.divsi %a, %b : i32
      %rems = arith.remsi %a, %b : i32
      %divu = arith.divui %a, %b : i32
      %remu = arith.remui %a, %b : i32
      %and = arith.andi %a, %b : i32
      %or = arith.ori %a, %b : i32
      %xor = arith.xori %a, %b : i32
      %shl = arith.shli %a, %c3 : i32
      %shrs = arith.shrsi %a, %b : i32
      %shru = arith.shrui %a, %b : i32
      %ceil = arith.ceildivsi %a, %b : i32
      %floor = arith.floordivsi %a, %b : i32
      %ceilu = arith.ceildivui %a, %b : i32
      %maxs = arith.maxsi %a, %b : i32
      %mins = arith.minsi %a, %b : i32
      %maxu = arith.maxui %a, %b : i32
      %minu = arith.minui %a, %m1 : i32
      "irgl_rt.c_block"(%add, %sub, %mul, %divs, %rems, %divu, %remu, %and, %or, %xor, %shl, %shrs, %shru, %ceil, %floor, %ceilu, %maxs, %mins, %maxu, %minu, %o) <{text = "$20[0] = $0 + $1 + $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 + $10 + $11 + $12 + $13 + $14 + $15 + $16 + $17 + $18 + $19;"}> : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, memref<?xi32>) -> ()
      func.return
    }
    // CHECK-NEXT:    o[0] = add + sub + mul + divs + rems + divu + remu + v_and + v_or + v_xor + shl + shrs + shru + ceil + floor + ceilu + maxs + mins + maxu + minu;
    // CHECK-NEXT:  }

    // CHECK-LABEL: __device__ void compare(int32_t a, int32_t b, bool* o) {
    // CHECK-NEXT:    bool eq = a == b;
    // CHECK-NEXT:    bool ne = a != b;
    // CHECK-NEXT:    bool slt = a < b;
    // CHECK-NEXT:    bool sle = a <= b;
    // CHECK-NEXT:    bool sgt = a > b;
    // CHECK-NEXT:    bool sge = a >= b;
    // CHECK-NEXT:    bool ult = (uint32_t)a < (uint32_t)b;
    // CHECK-NEXT:    bool ule = (uint32_t)a <= (uint32_t)b;
    // CHECK-NEXT:    bool ugt = (uint32_t)a > (uint32_t)b;
    // CHECK-NEXT:    bool uge = (uint32_t)a >= (uint32_t)b;
    // CHECK-NEXT:    bool all = eq && ne && slt && sle && sgt && sge && ult && ule && ugt && uge;
    // CHECK-NEXT:    o[0] = all;
    // CHECK-NEXT:  }
    func.func @compare(%a: i32, %b: i32, %o: memref<?xi1>) {
      %c0 = arith.constant 0 : index
      %eq = arith.cmpi eq, %a, %b : i32
      %ne = arith.cmpi ne, %a, %b : i32
      %slt = arith.cmpi slt, %a, %b : i32
      %sle = arith.cmpi sle, %a, %b : i32
      %sgt = arith.cmpi sgt, %a, %b : i32
      %sge = arith.cmpi sge, %a, %b : i32
      %ult = arith.cmpi ult, %a, %b : i32
      %ule = arith.cmpi ule, %a, %b : i32
      %ugt = arith.cmpi ugt, %a, %b : i32
      %uge = arith.cmpi uge, %a, %b : i32
      %all = "irgl_rt.c_expr"(%eq, %ne, %slt, %sle, %sgt, %sge, %ult, %ule, %ugt, %uge) <{text = "$0 && $1 && $2 && $3 && $4 && $5 && $6 && $7 && $8 && $9"}> : (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) -> i1
      memref.store %all, %o[%c0] : memref<?xi1>
      func.return
    }

    // CHECK-LABEL: __device__ float floats(float a, float b, bool* o) {
    // CHECK-NEXT:    float add = a + b;
    // CHECK-NEXT:    float sub = add - b;
    // CHECK-NEXT:    float mul = sub * b;
    // CHECK-NEXT:    float div = mul / b;
    // CHECK-NEXT:    float neg = -div;
    // CHECK-NEXT:    float v_max = fmaxf(neg, a);
    // CHECK-NEXT:    float v_min = fminf(v_max, 2.0f);
    // CHECK-NEXT:    float maxnum = fmaxf(v_min, a);
    // CHECK-NEXT:    float minnum = fminf(maxnum, a);
    // CHECK-NEXT:    bool v_false = false;
    // CHECK-NEXT:    o[0] = v_false;
    // CHECK-NEXT:    bool oeq = a == b;
    // CHECK-NEXT:    o[1] = oeq;
    // CHECK-NEXT:    bool ogt = a > b;
    // CHECK-NEXT:    o[2] = ogt;
    // CHECK-NEXT:    bool oge = a >= b;
    // CHECK-NEXT:    o[3] = oge;
    // CHECK-NEXT:    bool olt = a < b;
    // CHECK-NEXT:    o[4] = olt;
    // CHECK-NEXT:    bool ole = a <= b;
    // CHECK-NEXT:    o[5] = ole;
    // CHECK-NEXT:    bool one = (a < b || a > b);
    // CHECK-NEXT:    o[6] = one;
    // CHECK-NEXT:    bool ord = (a == a && b == b);
    // CHECK-NEXT:    o[7] = ord;
    // CHECK-NEXT:    bool ueq = !(a < b || a > b);
    // CHECK-NEXT:    o[8] = ueq;
    // CHECK-NEXT:    bool ugt = !(a <= b);
    // CHECK-NEXT:    o[9] = ugt;
    // CHECK-NEXT:    bool uge = !(a < b);
    // CHECK-NEXT:    o[10] = uge;
    // CHECK-NEXT:    bool ult = !(a >= b);
    // CHECK-NEXT:    o[11] = ult;
    // CHECK-NEXT:    bool ule = !(a > b);
    // CHECK-NEXT:    o[12] = ule;
    // CHECK-NEXT:    bool une = a != b;
    // CHECK-NEXT:    o[13] = une;
    // CHECK-NEXT:    bool uno = (a != a || b != b);
    // CHECK-NEXT:    o[14] = uno;
    // CHECK-NEXT:    bool v_true = true;
    // CHECK-NEXT:    o[15] = v_true;
    // CHECK-NEXT:    return minnum;
    // CHECK-NEXT:  }
    func.func @floats(%a: f32, %b: f32, %o: memref<?xi1>) -> f32 {
      %two = arith.constant 2.0 : f32
      %add = arith.addf %a, %b : f32
      %sub = arith.subf %add, %b : f32
      %mul = arith.mulf %sub, %b : f32
      %div = arith.divf %mul, %b : f32
      %neg = arith.negf %div : f32
      %max = arith.maximumf %neg, %a : f32
      %min = arith.minimumf %max, %two : f32
      %maxnum = arith.maxnumf %min, %a : f32
      %minnum = arith.minnumf %maxnum, %a : f32
      %i0 = arith.constant 0 : index
      %false = arith.cmpf false, %a, %b : f32
      memref.store %false, %o[%i0] : memref<?xi1>
      %i1 = arith.constant 1 : index
      %oeq = arith.cmpf oeq, %a, %b : f32
      memref.store %oeq, %o[%i1] : memref<?xi1>
      %i2 = arith.constant 2 : index
      %ogt = arith.cmpf ogt, %a, %b : f32
      memref.store %ogt, %o[%i2] : memref<?xi1>
      %i3 = arith.constant 3 : index
      %oge = arith.cmpf oge, %a, %b : f32
      memref.store %oge, %o[%i3] : memref<?xi1>
      %i4 = arith.constant 4 : index
      %olt = arith.cmpf olt, %a, %b : f32
      memref.store %olt, %o[%i4] : memref<?xi1>
      %i5 = arith.constant 5 : index
      %ole = arith.cmpf ole, %a, %b : f32
      memref.store %ole, %o[%i5] : memref<?xi1>
      %i6 = arith.constant 6 : index
      %one = arith.cmpf one, %a, %b : f32
      memref.store %one, %o[%i6] : memref<?xi1>
      %i7 = arith.constant 7 : index
      %ord = arith.cmpf ord, %a, %b : f32
      memref.store %ord, %o[%i7] : memref<?xi1>
      %i8 = arith.constant 8 : index
      %ueq = arith.cmpf ueq, %a, %b : f32
      memref.store %ueq, %o[%i8] : memref<?xi1>
      %i9 = arith.constant 9 : index
      %ugt = arith.cmpf ugt, %a, %b : f32
      memref.store %ugt, %o[%i9] : memref<?xi1>
      %i10 = arith.constant 10 : index
      %uge = arith.cmpf uge, %a, %b : f32
      memref.store %uge, %o[%i10] : memref<?xi1>
      %i11 = arith.constant 11 : index
      %ult = arith.cmpf ult, %a, %b : f32
      memref.store %ult, %o[%i11] : memref<?xi1>
      %i12 = arith.constant 12 : index
      %ule = arith.cmpf ule, %a, %b : f32
      memref.store %ule, %o[%i12] : memref<?xi1>
      %i13 = arith.constant 13 : index
      %une = arith.cmpf une, %a, %b : f32
      memref.store %une, %o[%i13] : memref<?xi1>
      %i14 = arith.constant 14 : index
      %uno = arith.cmpf uno, %a, %b : f32
      memref.store %uno, %o[%i14] : memref<?xi1>
      %i15 = arith.constant 15 : index
      %true = arith.cmpf true, %a, %b : f32
      memref.store %true, %o[%i15] : memref<?xi1>
      func.return %minnum : f32
    }

    // CHECK-LABEL: __device__ double casts(int32_t a, irgl_index x, bool c, float f, int64_t* o) {
    // CHECK-NEXT:    irgl_index ix = (irgl_index)a;
    // CHECK-NEXT:    int64_t ext = (int64_t)a;
    // CHECK-NEXT:    int64_t extu = (int64_t)(uint32_t)a;
    // CHECK-NEXT:    int64_t ext1 = (int64_t)(c ? -1 : 0);
    // CHECK-NEXT:    int32_t extu1 = (int32_t)(bool)c;
    // CHECK-NEXT:    int8_t tr = (int8_t)a;
    // CHECK-NEXT:    bool tr1 = (a & 1) != 0;
    // CHECK-NEXT:    float sf = (float)a;
    // CHECK-NEXT:    float uf = (float)(uint32_t)a;
    // CHECK-NEXT:    int32_t fs = (int32_t)f;
    // CHECK-NEXT:    int32_t fu = (int32_t)(uint32_t)f;
    // CHECK-NEXT:    double fe = (double)f;
    // CHECK-NEXT:    float ft = (float)fe;
    // CHECK-NEXT:    int32_t bits;
    // CHECK-NEXT:    memcpy(&bits, &ft, sizeof(bits));
    // CHECK-NEXT:    float one = 1.0f;
    // CHECK-NEXT:    int32_t same = (int32_t)bits;
    // CHECK-NEXT:    int32_t sel = c ? same : a;
    // CHECK-NEXT:    int32_t xi = (int32_t)x;
    // CHECK-NEXT:    o[0] = ix + ext + extu + ext1 + extu1 + tr + tr1 + (int64_t)sf + (int64_t)uf + fs + fu + (int64_t)one + sel + xi;
    // CHECK-NEXT:    return fe;
    // CHECK-NEXT:  }
    func.func @casts(%a: i32, %x: index, %c: i1, %f: f32, %o: memref<?xi64>) -> f64 {
      %ix = arith.index_cast %a : i32 to index
      %ext = arith.extsi %a : i32 to i64
      %extu = arith.extui %a : i32 to i64
      %ext1 = arith.extsi %c : i1 to i64
      %extu1 = arith.extui %c : i1 to i32
      %tr = arith.trunci %a : i32 to i8
      %tr1 = arith.trunci %a : i32 to i1
      %sf = arith.sitofp %a : i32 to f32
      %uf = arith.uitofp %a : i32 to f32
      %fs = arith.fptosi %f : f32 to i32
      %fu = arith.fptoui %f : f32 to i32
      %fe = arith.extf %f : f32 to f64
      %ft = arith.truncf %fe : f64 to f32
      %bits = arith.bitcast %ft : f32 to i32
      %k = arith.constant 1065353216 : i32
      %one = arith.bitcast %k : i32 to f32
      %same = arith.bitcast %bits : i32 to i32
      %sel = arith.select %c, %same, %a : i32
      %xi = arith.index_cast %x : index to i32
      "irgl_rt.c_block"(%ix, %ext, %extu, %ext1, %extu1, %tr, %tr1, %sf, %uf, %fs, %fu, %one, %sel, %xi, %o) <{text = "$14[0] = $0 + $1 + $2 + $3 + $4 + $5 + $6 + (int64_t)$7 + (int64_t)$8 + $9 + $10 + (int64_t)$11 + $12 + $13;"}> : (index, i64, i64, i64, i32, i8, i1, f32, f32, i32, i32, f32, i32, i32, memref<?xi64>) -> ()
      func.return %fe : f64
    }
  }) : () -> ()
}
