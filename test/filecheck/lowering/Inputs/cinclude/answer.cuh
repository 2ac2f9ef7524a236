// A header for convert-irgl-cinclude.mlir.
#define ANSWER 42
static inline int answer() { return ANSWER; }
