"""Passes lowering the irgl dialect to gpu/scf/arith/memref/func plus calls
into the CUDA runtime; `lower-irgl` runs them all in order."""
