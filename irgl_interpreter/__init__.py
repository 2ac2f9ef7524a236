"""A CPU reference interpreter for IrGL on xDSL's interpreter framework.

It runs an IrGL program (before any lowering) with the specification's
semantics: one set of interpreter functions per construct family
(`kernels`: kernels and orchestration, `loops`: ForAll/For and the
worklist, `sync`: Atomic, Exclusive, Retry/Respawn, ReduceAndReturn and the
barriers, `graph`: the graph accessors, `c_escape`: C text through
registered Python implementations, `memory`: numpy-backed memrefs and the
arith ops xDSL lacks), under a chosen :class:`Schedule`.
"""

from irgl_interpreter.c_escape import CRegistry, register_c
from irgl_interpreter.interpreter import (
    InterpretationFailure,
    ProgramError,
    RunResult,
    load_program,
    make_interpreter,
    parse_program,
    register_irgl_implementations,
    run_host,
)
from irgl_interpreter.state import Graph, Order, Schedule

__all__ = [
    "CRegistry",
    "Graph",
    "InterpretationFailure",
    "Order",
    "ProgramError",
    "RunResult",
    "Schedule",
    "load_program",
    "make_interpreter",
    "parse_program",
    "register_c",
    "register_irgl_implementations",
    "run_host",
]
