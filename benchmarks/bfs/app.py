"""BFS benchmark: level of every node from a source (the model ``AppSpec``).

Host function: ``@main(%g: !irgl.graph, %level: memref<?xi32>, %src: index)``.
``level`` is handed over as INF everywhere except ``level[src] = 0``; the host
function may re-initialize it itself.  Checked exactly against
:func:`irgl_runner.reference.bfs_levels`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import INF, bfs_levels, compare_exact


def init_level(ctx: RunContext) -> np.ndarray:
    """INF everywhere, 0 at the source."""
    level = np.full(ctx.graph.num_nodes, INF, dtype=np.int32)
    level[ctx.source] = 0
    return level


def check(ctx: RunContext) -> str | None:
    """Levels must equal the CPU BFS exactly (unreachable = INF)."""
    return compare_exact(
        "level", ctx.outputs["level"], bfs_levels(ctx.graph, ctx.source)
    )


APP = AppSpec(
    name="bfs",
    mlir=Path(__file__).with_name("bfs.mlir"),
    # --gpus N: the level-synchronous form (irgl-distribute refuses bfs.mlir)
    distributed_mlir=Path(__file__).resolve().parents[2] / "examples" / "bfs.mlir",
    host_fn="main",
    outputs=[ArraySpec("level", "int32", init=init_level)],
    args=lambda ctx: [ctx.device_graph, ctx.arrays["level"], ctx.source],
    check=check,
    weighted=False,
)
