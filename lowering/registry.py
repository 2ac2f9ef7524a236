"""Names of the lowering passes, with lazy factories (no import cost until a
pass is used)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass

_PASSES: dict[str, tuple[str, str]] = {
    "convert-irgl-kernels": ("lowering.convert_irgl_kernels", "ConvertIrglKernels"),
    "convert-irgl-orchestration": (
        "lowering.convert_irgl_orchestration",
        "ConvertIrglOrchestration",
    ),
    "convert-irgl-host-memory": (
        "lowering.convert_irgl_host_memory",
        "ConvertIrglHostMemory",
    ),
    "irgl-nested-parallelism": (
        "lowering.nested_parallelism",
        "IrglNestedParallelism",
    ),
    "irgl-exclusive-footprint": (
        "lowering.exclusive_footprint",
        "IrglExclusiveFootprint",
    ),
    "convert-irgl-loops": ("lowering.convert_irgl_loops", "ConvertIrglLoops"),
    "convert-irgl-exclusive": (
        "lowering.convert_irgl_exclusive",
        "ConvertIrglExclusive",
    ),
    "convert-irgl-nested-edges": (
        "lowering.convert_irgl_nested_edges",
        "ConvertIrglNestedEdges",
    ),
    "convert-irgl-sync": ("lowering.convert_irgl_sync", "ConvertIrglSync"),
    "convert-irgl-graph": ("lowering.convert_irgl_graph", "ConvertIrglGraph"),
    "convert-irgl-c": ("lowering.convert_irgl_c", "ConvertIrglC"),
    "irgl-outline-iterations": (
        "lowering.outline_iterations",
        "OutlineIterations",
    ),
    "irgl-outline-kernel-bodies": (
        "lowering.outline_kernel_bodies",
        "OutlineKernelBodies",
    ),
    "irgl-distribute": ("lowering.distribute", "IrglDistribute"),
    "irgl-stamp-test": ("lowering.stamp_test", "IrglStampTest"),
    "convert-irgl-dist": ("lowering.convert_irgl_dist", "ConvertIrglDist"),
    "convert-irgl-dist-orchestration": (
        "lowering.convert_irgl_dist",
        "ConvertIrglDistOrchestration",
    ),
    "lower-irgl": ("lowering.lower_irgl", "LowerIrgl"),
}


def _factory(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        return getattr(import_module(module), cls)

    return load


PASS_FACTORIES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _factory(module, cls) for name, (module, cls) in _PASSES.items()
}
