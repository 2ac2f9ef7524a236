"""Connected components benchmark: every node labelled with the smallest node
id of its component.

Host function: ``@main(%g: !irgl.graph, %comp: memref<?xi32>)``; the program
initializes ``comp`` itself. Checked exactly against
:func:`irgl_runner.reference.cc_min_labels` (scipy's connected components).
"""

from __future__ import annotations

from pathlib import Path

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import cc_min_labels, compare_exact
from irgl_runner.validate import cc_labels_problem


def check(ctx: RunContext) -> str | None:
    """Labels must be the minimum node id of each component."""
    return compare_exact("comp", ctx.outputs["comp"], cc_min_labels(ctx.graph))


def validate(ctx: RunContext) -> str | None:
    """Labels are each component's smallest id (linear in the edges)."""
    return cc_labels_problem(ctx.graph, ctx.outputs["comp"])


APP = AppSpec(
    name="cc",
    mlir=Path(__file__).with_name("cc.mlir"),
    # --gpus N: label propagation (irgl-distribute refuses cc.mlir's pointer jumping)
    distributed_mlir=Path(__file__).with_name("cc_lp.mlir"),
    host_fn="main",
    outputs=[ArraySpec("comp", "int32", init=0)],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["comp"]],
    check=check,
    validate=validate,
    weighted=False,
    uses_source=False,
)
