"""Creating a pipe context on the host: shared by convert-irgl-orchestration
(host loops) and irgl-outline-iterations (control kernels)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from irgl_dialect.orchestration import IterateOp, PipeOp
from irgl_dialect.runtime_library import overload, runtime_function
from lowering.builders import LoweringBuilder
from lowering.runtime_calls import fail


def open_pipe(
    b: LoweringBuilder, op: IterateOp | PipeOp, graph: Callable[[], SSAValue]
) -> tuple[SSAValue, SSAValue]:
    """`irgl_pipe_create` with `op`'s capacity (by default the capacity for
    the graph that `graph()` gives), filled from `op`'s worklist initializer
    (its initial items, or an array of them); returns (pipe, capacity)."""
    capacity = op.capacity
    if capacity is None:
        capacity = b.call_value(runtime_function("irgl_graph_capacity"), [graph()])
    pipe = b.call_value(runtime_function("irgl_pipe_create"), [capacity])
    for value in op.initial:
        b.call(runtime_function("irgl_pipe_push_initial"), [pipe, value])
    if op.initial_array is not None and op.initial_count is not None:
        array_type = op.initial_array.type
        assert isinstance(array_type, MemRefType)
        fill = overload("irgl_pipe_init_from_array", array_type.element_type)
        if fill is None:
            fail(
                op,
                "an initial worklist array must hold i32 or index items, "
                f"got {array_type}",
            )
        b.call(fill, [pipe, op.initial_array, op.initial_count])
    return pipe, capacity
