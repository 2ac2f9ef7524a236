"""lower-irgl: the whole lowering, as a pipeline of the convert-irgl-* passes.

Afterwards no irgl operation remains: the module holds a `gpu.module` of
kernels and device functions, host `func.func`s, and calls into the CUDA
runtime, ready for the `cuda` target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from lowering.convert_irgl_c import ConvertIrglC
from lowering.convert_irgl_graph import ConvertIrglGraph
from lowering.convert_irgl_kernels import ConvertIrglKernels
from lowering.convert_irgl_loops import ConvertIrglLoops
from lowering.convert_irgl_orchestration import ConvertIrglOrchestration
from lowering.convert_irgl_sync import ConvertIrglSync
from lowering.nested_parallelism import IrglNestedParallelism
from lowering.outline_iterations import OutlineIterations, OutlineKernelBodies


@dataclass(frozen=True)
class LowerIrgl(ModulePass):
    """Run convert-irgl-kernels, irgl-outline-iterations (unless disabled),
    convert-irgl-orchestration, irgl-nested-parallelism
    (unless disabled), convert-irgl-{loops, sync, graph, c}."""

    name = "lower-irgl"

    ticket_locks: bool = False
    """Blocking Atomics use ticket locks (64-bit lock words)."""

    block_size: int = 256
    """Block size of kernels without block-size constraints."""

    nested_parallelism: bool = True
    """Share the edge loops of high-degree nodes across a block or a warp
    (irgl-nested-parallelism)."""

    outline: bool = True
    """Iteration outlining: run each outermost Iterate/Pipe that holds a loop
    as one cooperative control kernel where legal (irgl-outline-iterations)."""

    remarks: bool = False
    """Print one line per Iterate/Pipe saying whether it was outlined."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline: list[ModulePass] = (
            [OutlineIterations(remarks=self.remarks)] if self.outline else []
        )
        passes: list[ModulePass] = [
            ConvertIrglKernels(block_size=self.block_size),
            *outline,
            ConvertIrglOrchestration(),
            *([IrglNestedParallelism()] if self.nested_parallelism else []),
            ConvertIrglLoops(),
            ConvertIrglSync(ticket_locks=self.ticket_locks),
            ConvertIrglGraph(),
            ConvertIrglC(),
            *([OutlineKernelBodies()] if self.outline else []),
        ]
        for lowering in passes:
            lowering.apply(ctx, op)
        left = [inner.name for inner in op.walk() if inner.name.startswith("irgl.")]
        if left:
            raise DiagnosticException(
                "lower-irgl left irgl operations behind: "
                + ", ".join(sorted(set(left)))
            )
