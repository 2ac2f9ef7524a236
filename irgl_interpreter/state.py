"""Run-time values and state of the IrGL interpreter.

Values of IrGL types while interpreting: a CSR graph (:class:`Graph`), the
pipe context's worklists (:class:`PipeContext`), the per-invocation kernel
state (:class:`KernelFrame`), the schedule (:class:`Schedule`) and the whole
interpreter state (:class:`IrglState`), kept with the xDSL ``Interpreter``
through ``Interpreter.get_data`` so that the interpreter functions of every
construct family share it.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.ir import Operation

from irgl_dialect.attributes import Aggregation


class IrglRuntimeError(Exception):
    """A program that is wrong at run time (a deadlock, a barrier that not
    every iteration reaches, C text without an implementation, a worklist
    overflow, an index out of bounds); `op` is the operation that failed."""

    def __init__(self, op: Operation | None, message: str):
        super().__init__(message)
        self.op = op
        self.message = message
        self.iteration: int | None = None  # of the outermost ForAll, if any


class Order(Enum):
    """The order in which the iterations of a ForAll run."""

    SEQUENTIAL = "sequential"
    REVERSED = "reversed"
    RANDOM = "random"


@dataclass(frozen=True)
class Schedule:
    """How ForAll iterations are ordered, and how often a non-blocking Atomic
    or an Exclusive fails on purpose (seeded), so that Else/Retry/Respawn
    paths run.

    Written as ``sequential``, ``reversed`` or ``random:SEED``, optionally
    followed by ``,fail=RATE`` (e.g. ``random:3,fail=0.25``).
    """

    order: Order = Order.SEQUENTIAL
    seed: int = 0
    fail_rate: float = 0.0

    @staticmethod
    def parse(text: str) -> Schedule:
        """Parse the textual form; raises ValueError with what is wrong."""
        head, _, rest = text.strip().partition(",")
        name, _, seed_text = head.partition(":")
        try:
            order = Order(name)
        except ValueError:
            raise ValueError(
                f"unknown schedule {name!r}: expected sequential, reversed or "
                "random:SEED"
            ) from None
        seed = 0
        if order == Order.RANDOM:
            if not seed_text.strip().lstrip("-").isdigit():
                raise ValueError(f"schedule {text!r}: random needs a seed, random:SEED")
            seed = int(seed_text)
        elif seed_text:
            raise ValueError(f"schedule {text!r}: only random takes a seed")
        fail_rate = 0.0
        if rest:
            key, _, value = rest.partition("=")
            if key.strip() != "fail":
                raise ValueError(f"schedule {text!r}: unknown option {key.strip()!r}")
            try:
                fail_rate = float(value)
            except ValueError:
                raise ValueError(
                    f"schedule {text!r}: bad failure rate {value!r}"
                ) from None
            if not 0.0 <= fail_rate < 1.0:
                raise ValueError(
                    f"schedule {text!r}: the failure rate must be in [0, 1)"
                )
        return Schedule(order, seed, fail_rate)

    def __str__(self) -> str:
        text = self.order.value
        if self.order == Order.RANDOM:
            text += f":{self.seed}"
        if self.fail_rate:
            text += f",fail={self.fail_rate:g}"
        return text


@dataclass
class Graph:
    """A CSR graph (the value of `!irgl.graph`), as Python lists for speed."""

    num_nodes: int
    row_start: list[int]
    edge_dst: list[int]
    weights: list[int] | None = None

    @staticmethod
    def from_csr(graph: Any) -> Graph:
        """From an `irgl_runner.graphs.CSRGraph` (or anything with its fields)."""
        weights = getattr(graph, "weights", None)
        return Graph(
            int(graph.num_nodes),
            np.asarray(graph.row_start, dtype=np.int64).tolist(),
            np.asarray(graph.edge_dst, dtype=np.int64).tolist(),
            None if weights is None else np.asarray(weights).tolist(),
        )

    @property
    def num_edges(self) -> int:
        return len(self.edge_dst)

    @functools.cached_property
    def max_degree(self) -> int:
        """The largest out-degree (0 without nodes), as the runtime keeps it."""
        if self.num_nodes == 0:
            return 0
        return int(np.diff(np.asarray(self.row_start, dtype=np.int64)).max())


@dataclass
class PipeContext:
    """The in, out and retry worklists of a Pipe or Iterate (spec: pipe
    context). Kernels pop `in`, push `out` and retry into `retry`."""

    capacity: int | None = None
    in_: list[int] = field(default_factory=list[int])
    out: list[int] = field(default_factory=list[int])
    retry: list[int] = field(default_factory=list[int])

    def advance(self) -> None:
        """in <- out, out <- empty (after a worklist kernel's invocation)."""
        self.in_, self.out = self.out, []

    def advance_retry(self) -> None:
        """in <- retry, retry <- empty; out is kept (re-launch on retried items)."""
        self.in_, self.retry = self.retry, []

    def push(self, op: Operation, which: str, item: int) -> None:
        """Append `item` to the `out` or `retry` worklist, within its
        capacity (`op` is the push, Retry or Respawn, for the error)."""
        items: list[int] = self.out if which == "out" else self.retry
        if self.capacity is not None and len(items) >= self.capacity:
            raise IrglRuntimeError(
                op,
                f"worklist overflow: pushing to the full {which} worklist "
                f"(capacity {self.capacity})",
            )
        items.append(item)


@dataclass
class KernelFrame:
    """One invocation of a plain kernel: its worklists and its reduction."""

    kernel: Operation
    pipe: PipeContext | None
    reduced_any: bool = False
    reduced_all: bool = True
    forall_depth: int = 0
    iteration: int | None = None  # the outermost ForAll iteration now running

    def aggregate(self, aggregation: Aggregation | None) -> bool:
        if aggregation == Aggregation.ALL:
            return self.reduced_all
        return self.reduced_any


def pipe_of(op: Operation, frame: KernelFrame | None) -> PipeContext:
    """The worklists of the kernel invocation `frame`, for `op` (a worklist
    loop, a push or pop, a Retry or Respawn), which needs them."""
    if frame is None or frame.pipe is None:
        raise IrglRuntimeError(
            op, f"'{op.name}' needs a worklist, but no Pipe or Iterate established one"
        )
    return frame.pipe


@dataclass
class Stats:
    """What a run did: edge visits (irgl.graph.edge_dst), kernel invocations,
    worklist pushes (irgl.wl.push), mirrors pushed without a slot (a rank's
    irgl_dist.push_mirror), atomic read-modify-writes
    (memref.atomic_rmw) and how many of them changed the element, and the
    edge visits made during each kernel's invocations, by the kernel's name
    (a kernel's count includes the kernels it invokes)."""

    edge_visits: int = 0
    invocations: int = 0
    pushes: int = 0
    mirror_pushes: int = 0
    atomics: int = 0
    atomic_changes: int = 0
    edge_visits_by_kernel: dict[str, int] = field(default_factory=dict[str, int])

    def add(self, other: Stats) -> None:
        """Adds another run's counts to these."""
        self.edge_visits += other.edge_visits
        self.invocations += other.invocations
        self.pushes += other.pushes
        self.mirror_pushes += other.mirror_pushes
        self.atomics += other.atomics
        self.atomic_changes += other.atomic_changes
        for name, visits in other.edge_visits_by_kernel.items():
            by_kernel = self.edge_visits_by_kernel
            by_kernel[name] = by_kernel.get(name, 0) + visits


#: How many edge visits apart :attr:`IrglState.progress` is called (a power
#: of two; the check is one mask per visit).
PROGRESS_EDGES = 1 << 14


@dataclass
class IrglState:
    """Everything the irgl interpreter functions share during one run."""

    schedule: Schedule = field(default_factory=Schedule)
    pipe: PipeContext | None = None
    frames: list[KernelFrame] = field(default_factory=list[KernelFrame])
    stats: Stats = field(default_factory=Stats)
    rng: random.Random = field(default_factory=random.Random)
    cache: dict[Any, Any] = field(default_factory=dict[Any, Any])
    progress: Callable[[Stats], None] | None = None
    """Called with the counters at every kernel invocation and every
    :data:`PROGRESS_EDGES` edge visits (``run_host(progress=...)``)."""

    def __post_init__(self) -> None:
        self.rng.seed(self.schedule.seed)

    @property
    def frame(self) -> KernelFrame | None:
        return self.frames[-1] if self.frames else None

    def order(self, n: int) -> Sequence[int]:
        """The positions 0..n-1 in the order the schedule runs them."""
        if self.schedule.order == Order.SEQUENTIAL:
            return range(n)
        if self.schedule.order == Order.REVERSED:
            return range(n - 1, -1, -1)
        positions = list(range(n))
        self.rng.shuffle(positions)
        return positions

    def inject_failure(self) -> bool:
        """Whether a non-blocking Atomic or an Exclusive fails on purpose now."""
        rate = self.schedule.fail_rate
        return rate > 0.0 and self.rng.random() < rate


_STATE_KEY = "irgl.state"


class _StateOwner(InterpreterFunctions):
    """The key under which the state is kept with the interpreter (it
    implements no op)."""


def irgl_state(interpreter: Interpreter) -> IrglState:
    """The irgl state of `interpreter` (created, sequential, on first use)."""
    return interpreter.get_data(_StateOwner, _STATE_KEY, IrglState)


def set_irgl_state(interpreter: Interpreter, state: IrglState) -> None:
    """Install `state` (a schedule, a C registry) before a run."""
    interpreter.set_data(_StateOwner, _STATE_KEY, state)
