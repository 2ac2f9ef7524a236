// A program beside its header: irgl-opt finds answer.cuh in this directory.
irgl.cinclude "answer.cuh"
irgl.kernel host @main() {
  irgl.cblock "printf(\"%d\\n\", answer());"
}
