"""Triangle counting benchmark: the number of triangles, as a 64-bit count.

Host function: ``@main(%g, %count, %nout, %nin, %unsorted, %lists)`` with a
one-element ``count`` that the program zeroes and then fills, and scratch
arrays for the degree-oriented DAG that it builds in the graph's own CSR
slots on graphs of more than 4 edges per node (``nout``/``nin``: one i32 per
node; ``unsorted``/``lists``: one i32 per edge; see ``tc.mlir``; sparser
graphs are counted on their sorted rows and leave them alone); it returns
nothing.  Graphs are symmetrized and
cleaned (no duplicate edges), which the merge of the kernel relies on.
Checked exactly against :func:`irgl_runner.reference.triangle_count`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.reference import triangle_count


def check_count(got: np.ndarray, expected: int) -> str | None:
    """``None`` if the one-element ``got`` holds ``expected``, else what differs."""
    got = np.asarray(got).ravel()
    if got.shape != (1,):
        return f"count: {got.shape[0]} values, expected 1"
    if int(got[0]) != expected:
        return f"count: got {int(got[0])} triangles, expected {expected}"
    return None


def check(ctx: RunContext) -> str | None:
    """The count must equal the CPU reference exactly."""
    return check_count(ctx.outputs["count"], triangle_count(ctx.graph))


APP = AppSpec(
    name="tc",
    mlir=Path(__file__).with_name("tc.mlir"),
    host_fn="main",
    outputs=[
        ArraySpec("count", "int64", init=-1, length=1),
        # scratch, reset by the program itself (so any initial value does):
        # uploaded once, not between the timed runs
        ArraySpec("nout", "int32", init=-1, read_back=False, every_run=False),
        ArraySpec("nin", "int32", init=-1, read_back=False, every_run=False),
        ArraySpec(
            "unsorted",
            "int32",
            init=-1,
            length="edges",
            read_back=False,
            every_run=False,
        ),
        ArraySpec(
            "lists", "int32", init=-1, length="edges", read_back=False, every_run=False
        ),
    ],
    args=lambda ctx: [
        ctx.device_graph,
        *(ctx.arrays[name] for name in ("count", "nout", "nin", "unsorted", "lists")),
    ],
    check=check,
    weighted=False,
    uses_source=False,
)
