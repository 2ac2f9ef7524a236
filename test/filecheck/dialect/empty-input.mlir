// RUN: irgl-opt %s | filecheck %s
// RUN: irgl-opt %s -p lower-irgl -t cuda | filecheck %s --check-prefix=CUDA
// An input of only comments (and whitespace) is an empty module, as for
// mlir-opt, and lowers to a program with no kernels.

// CHECK:      builtin.module {
// CHECK-NEXT: }
// CUDA:       #include
// CUDA-NOT:   __global__ void {{[a-z_]+}}_control
