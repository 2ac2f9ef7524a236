// RUN: irgl-opt %s -p 'convert-irgl-c{include_dirs="%S/Inputs/cinclude"}' | filecheck %s
// RUN: irgl-opt %s -p 'convert-irgl-c{include_dirs="%S/Inputs/cinclude/second","%S/Inputs/cinclude"}' | filecheck %s --check-prefix=ORDER
// RUN: irgl-opt %s -p 'lower-irgl{include_dirs="%S/Inputs/cinclude"}' -t cuda | filecheck %s --check-prefix=CUDA
// RUN: irgl-opt %S/Inputs/cinclude/program.mlir --lower-irgl -t cuda | filecheck %s --check-prefix=BESIDE
// RUN: not irgl-opt %s -p convert-irgl-c 2>&1 | filecheck %s --check-prefix=MISSING

// irgl.cinclude inlines a header found in the include directories (in
// order; irgl-opt adds the input file's directory last) as file-scope C.

irgl.cinclude "answer.cuh"
irgl.kernel host @main() {
  irgl.cblock "printf(\"%d\\n\", answer());"
  %header = irgl.cexpr "answer()" : i32
  irgl.cblock "printf(\"%d\\n\", $0);" (%header : i32)
}

// CHECK:      irgl_rt.c_global "// irgl.cinclude \22answer.cuh\22\0A// A header for convert-irgl-cinclude.mlir.\0A#define ANSWER 42\0Astatic inline int answer() { return ANSWER; }"
// CHECK-NOT:  irgl.cinclude

// ORDER:      irgl_rt.c_global "// irgl.cinclude \22answer.cuh\22\0A// The same name in a directory searched first.\0A#define ANSWER 7"

// The emitted CUDA holds the header's text, line by line, at file scope.
// CUDA:      // irgl_rt.c_global
// CUDA-NEXT: // irgl.cinclude "answer.cuh"
// CUDA-NEXT: // A header for convert-irgl-cinclude.mlir.
// CUDA-NEXT: #define ANSWER 42
// CUDA-NEXT: static inline int answer() { return ANSWER; }
// CUDA:      printf("%d\n", answer());
// Words of the header's comments name nothing: %header keeps its name.
// CUDA-NEXT: int32_t header = answer();
// CUDA-NEXT: printf("%d\n", header);

// BESIDE:      // irgl.cinclude "answer.cuh"
// BESIDE-NEXT: // A header for convert-irgl-cinclude.mlir.

// A header in no include directory: a diagnostic at the op naming the path
// and every directory searched.
// MISSING:      convert-irgl-cinclude.mlir:10:1: error: 'irgl.cinclude' cannot find 'answer.cuh' (include directories searched: '{{.*}}test/filecheck/lowering')
// MISSING-NEXT: irgl.cinclude "answer.cuh"
// MISSING-NEXT: ^^^^^^^^^^^^^^^
// MISSING-NOT:  Traceback
