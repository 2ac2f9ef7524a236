"""The irgl dialect: IrGL's kernels, loops, worklists, synchronization,
orchestration and C escape hatch as xDSL operations."""
