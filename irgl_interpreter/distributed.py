"""The distributed form of an IrGL program on P simulated ranks.

`irgl-distribute` (`lowering/distribute.py`) inserts the `irgl_dist` ops; this
module runs the result the way P GPUs would run it, in one process: one
thread per rank, each with its own xDSL interpreter, its own partition of the
graph (`irgl_runner.partition`: local ids, masters then mirrors) and its own
copies of the arrays, and an in-process :class:`Communicator` (a barrier and
shared mailboxes) standing in for NCCL. Ranks only meet in the `irgl_dist`
ops and in the termination tests of Iterate and Pipe, so the schedule of the
threads cannot change a result; each rank runs its ForAlls in the given
:class:`~irgl_interpreter.state.Schedule` (`random:SEED` seeds rank r with
SEED + r).

What each op does is the contract written in `irgl_dialect/distributed.py`;
here in short: the sync ops after an invocation reconcile what that
invocation changed (an entry is *updated* if it differs from its value when
the invocation started); `sync_nodes` reduces updated mirrors into masters
and broadcasts updated masters; `allreduce_cells` combines the ranks' copies;
`sync_worklist` sends pushed mirrors to their owners and lets masters
activate their mirrors that hold edges; Iterate and Pipe test termination
across ranks. :class:`CommStats` counts what moved.

    from irgl_runner.apps import load_app
    run = run_app_distributed(load_app("sssp"), graph, ranks=3, policy="cvc")
    assert run.problem is None
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, MemRefType, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from irgl_dialect.attributes import Aggregation, GraphType
from irgl_dialect.distributed import (
    HOST_ATTR,
    MIRRORS_ATTR,
    TERMINATION_ATTR,
    AllReduceCellsOp,
    AllReduceOp,
    GlobalIdOp,
    HostAttr,
    IsMasterOp,
    LocalNodeOp,
    PushMirrorOp,
    Reduction,
    SyncNodesOp,
    SyncWorklistOp,
)
from irgl_dialect.loops import ForAllOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.syntax import error_op, moved_to, source_diagnostic
from irgl_interpreter.apps import AppRun, HostArray, app_c_impls, cpu_model
from irgl_interpreter.c_escape import CImpl
from irgl_interpreter.interpreter import (
    InterpretationFailure,
    ProgramError,
    context,
    describe_failure,
    find_host_kernel,
    load_program,
    make_interpreter,
)
from irgl_interpreter.kernels import (
    KernelFunctions,
    Rounds,
    initial_pipe,
    run_iterate,
    run_pipe,
)
from irgl_interpreter.loops import LoopFunctions, NodeSpan
from irgl_interpreter.state import (
    Graph,
    IrglRuntimeError,
    Order,
    PipeContext,
    Schedule,
    Stats,
    irgl_state,
)
from irgl_runner.apps import AppSpec, execute
from irgl_runner.graphs import CSRGraph
from irgl_runner.partition import (
    Partition,
    Partitioning,
    gather,
    hot_count,
    hot_groups,
    hot_min_active,
    hot_nodes,
    partition_graph,
)
from irgl_runner.partition_fold import FoldMap

#: How long a rank waits for the others at one meeting before giving up.
BARRIER_TIMEOUT_S = 600.0


class DistributionError(ProgramError):
    """`irgl-distribute` refused the program; the message is its diagnostic."""


# --------------------------------------------------------------------------
# the stand-in for NCCL
# --------------------------------------------------------------------------


@dataclass
class CommStats:
    """What moved between ranks: values per kind of exchange, meetings."""

    reduce_values: int = 0
    broadcast_values: int = 0
    allreduce_values: int = 0
    allgather_values: int = 0
    worklist_items: int = 0
    meetings: int = 0

    @property
    def total_values(self) -> int:
        """Every value sent to another rank."""
        return (
            self.reduce_values
            + self.broadcast_values
            + self.allreduce_values
            + self.allgather_values
            + self.worklist_items
        )


class Communicator:
    """P ranks in one process: `exchange` is an all-to-all (each rank gives one
    message per rank and receives one from each), built on a barrier and a
    mailbox matrix. A rank that fails aborts the barrier, so the others stop
    instead of waiting forever."""

    def __init__(self, num_ranks: int):
        self.num_ranks = num_ranks
        self.barrier = threading.Barrier(num_ranks, timeout=BARRIER_TIMEOUT_S)
        self.mail: list[list[Any]] = [[None] * num_ranks for _ in range(num_ranks)]
        self.stats = CommStats()
        self._lock = threading.Lock()

    def exchange(self, rank: int, outgoing: Sequence[Any]) -> list[Any]:
        """Send `outgoing[q]` to every rank q; what every rank sent to `rank`."""
        for q, message in enumerate(outgoing):
            self.mail[rank][q] = message
        self.barrier.wait()
        incoming = [self.mail[q][rank] for q in range(self.num_ranks)]
        if self.barrier.wait() == 0:
            with self._lock:
                self.stats.meetings += 1
        return incoming

    def allgather(self, rank: int, value: Any) -> list[Any]:
        """Every rank's `value`, in rank order."""
        return self.exchange(rank, [value] * self.num_ranks)

    def count(self, what: str, values: int) -> None:
        """Add `values` to the counter `what` of :class:`CommStats`."""
        with self._lock:
            setattr(self.stats, what, getattr(self.stats, what) + values)

    def abort(self) -> None:
        self.barrier.abort()


# --------------------------------------------------------------------------
# a rank's view
# --------------------------------------------------------------------------


@dataclass
class RankGraph(Graph):
    """The value of `!irgl.graph` on one rank: its partition's local graph
    (`num_nodes` = masters and mirrors), with the ids to translate."""

    num_masters: int = 0
    local_to_global: list[int] = field(default_factory=list[int])
    master_offset: int = 0
    fold: FoldMap | None = None  # folded master blocks: offsets in partition ids

    @staticmethod
    def from_partition(part: Partition) -> RankGraph:
        local = Graph.from_csr(part.graph)
        return RankGraph(
            local.num_nodes,
            local.row_start,
            local.edge_dst,
            local.weights,
            num_masters=part.num_masters,
            local_to_global=part.local_to_global.tolist(),
            master_offset=part.master_offset,
            fold=part.fold,
        )


@dataclass
class RankContext:
    """Everything one rank's distributed ops need."""

    rank: int
    part: Partition
    comm: Communicator
    #: the contents of each array (by id) when the last invocation started
    #: (what allreduce_cells compares with)
    snapshots: dict[int, np.ndarray] = field(default_factory=dict[int, np.ndarray])
    #: the agreed copy of each node array (by id, with the array itself so
    #: that the id stays its own): its contents when an invocation was first
    #: passed it, then after every sync_nodes, as the runtime keeps it; what
    #: sync_nodes compares with, so entries changed by invocations since the
    #: last agreement move, not only the last invocation's
    agreed: dict[int, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict[int, tuple[np.ndarray, np.ndarray]]
    )
    #: mirror local id - num_masters -> (owner rank, position in its list)
    mirror_slot: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    #: per rank q: master local id -> position in masters_mirrored_on[q]
    master_slot: list[dict[int, int]] = field(default_factory=list[dict[int, int]])
    #: the hot nodes (irgl_runner.partition.hot_nodes) grouped by master rank
    #: (hot_groups), the same list on every rank: each one's local id here,
    #: -1 where the rank holds no copy
    hot: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: the masters a round activates over all ranks to refresh them
    hot_min_active: int = 1
    #: mirrors (local ids) pushed without a worklist slot
    #: (`irgl_dist.push_mirror`), taken by the next worklist exchange
    pushed_mirrors: set[int] = field(default_factory=set[int])

    def take_pushed(self, items: list[int]) -> list[int]:
        """`items` (a worklist's) and then the mirrors pushed without a
        slot, which are cleared."""
        pushed = sorted(self.pushed_mirrors)
        self.pushed_mirrors.clear()
        return [*items, *pushed]

    def __post_init__(self) -> None:
        part = self.part
        self.mirror_slot = [(0, 0)] * part.num_mirrors
        for q, ids in enumerate(part.mirrors_owned_by):
            for pos, local in enumerate(ids.tolist()):
                self.mirror_slot[local - part.num_masters] = (q, pos)
        self.master_slot = [
            {local: pos for pos, local in enumerate(ids.tolist())}
            for ids in part.masters_mirrored_on
        ]


_RANK_KEY = "irgl_dist.rank"


def rank_context(interpreter: Interpreter) -> RankContext:
    """The rank context installed on `interpreter` (by :func:`run_ranks`)."""
    return interpreter.get_data(DistributedFunctions, _RANK_KEY, _no_rank)


def _no_rank() -> RankContext:
    raise IrglRuntimeError(
        None, "an irgl_dist op ran outside a distributed run (use run_ranks)"
    )


# --------------------------------------------------------------------------
# combining copies
# --------------------------------------------------------------------------


def _unsigned(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "i":
        return values.view(values.dtype.str.replace("i", "u"))
    return values


def _combine(reduction: Reduction, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """`old` combined with an update `new` (same shape) by min/max."""
    if reduction == Reduction.MIN:
        return np.minimum(old, new)
    if reduction == Reduction.MAX:
        return np.maximum(old, new)
    chosen = (
        _unsigned(new) < _unsigned(old)
        if reduction == Reduction.MINU
        else _unsigned(new) > _unsigned(old)
    )
    return np.where(chosen, new, old)


def _changed(array: np.ndarray, before: np.ndarray) -> np.ndarray:
    return array != before


def _snapshot(ctx: RankContext, op: Operation, array: np.ndarray) -> np.ndarray:
    before = ctx.snapshots.get(id(array))
    return _checked(op, array, before)


def _agreed(ctx: RankContext, op: Operation, array: np.ndarray) -> np.ndarray:
    entry = ctx.agreed.get(id(array))
    return _checked(op, array, entry[1] if entry and entry[0] is array else None)


def _checked(op: Operation, array: np.ndarray, before: np.ndarray | None) -> np.ndarray:
    if before is None or before.shape != array.shape:
        raise IrglRuntimeError(
            op,
            f"'{op.name}' follows no invocation that was passed the array: "
            "there is nothing to reconcile",
        )
    return before


def sync_nodes(
    ctx: RankContext,
    op: Operation,
    array: np.ndarray,
    reduction: Reduction,
    masters_only: bool = False,
    agreed: bool = False,
) -> None:
    """`irgl_dist.sync_nodes`: reduce updated mirrors, broadcast updated
    masters (`masters_only`: only the broadcast; an updated mirror is an
    error; `agreed`: the mirrors were computed like their masters, nothing
    moves and the array's contents become its agreed copy)."""
    part, comm = ctx.part, ctx.comm
    before = _agreed(ctx, op, array)
    if agreed:
        _agree(ctx, array)
        return
    changed = _changed(array, before)
    if masters_only:
        if changed[part.num_masters :].any():
            raise IrglRuntimeError(
                op,
                f"'{op.name}' masters_only: rank {ctx.rank} updated a mirror "
                "(only the owners' entries may change before this broadcast)",
            )
        _broadcast(ctx, array, changed[: part.num_masters].copy())
        return
    outgoing: list[Any] = []
    sent = 0
    for q in range(comm.num_ranks):
        ids = part.mirrors_owned_by[q]
        positions = np.flatnonzero(changed[ids])
        local = ids[positions]
        payload = (
            array[local] - before[local] if reduction == Reduction.ADD else array[local]
        )
        outgoing.append((positions, payload))
        sent += len(positions)
    comm.count("reduce_values", sent)
    dirty = changed[: part.num_masters].copy()
    for q, (positions, payload) in enumerate(comm.exchange(ctx.rank, outgoing)):
        if len(positions) == 0:
            continue
        masters = part.masters_mirrored_on[q][positions]
        if reduction == Reduction.ADD:
            array[masters] = array[masters] + payload
        elif reduction == Reduction.SET:
            array[masters] = payload
        else:
            array[masters] = _combine(reduction, array[masters], payload)
        dirty[masters] = True
    _broadcast(ctx, array, dirty)


def _broadcast(ctx: RankContext, array: np.ndarray, dirty: np.ndarray) -> None:
    """The masters flagged in `dirty` to their mirrors; the result is the
    agreed copy."""
    part, comm = ctx.part, ctx.comm
    outgoing = []
    sent = 0
    for q in range(comm.num_ranks):
        ids = part.masters_mirrored_on[q]
        positions = np.flatnonzero(dirty[ids])
        outgoing.append((positions, array[ids[positions]]))
        sent += len(positions)
    comm.count("broadcast_values", sent)
    for q, (positions, payload) in enumerate(comm.exchange(ctx.rank, outgoing)):
        if len(positions):
            array[part.mirrors_owned_by[q][positions]] = payload
    _agree(ctx, array)


def _agree(ctx: RankContext, array: np.ndarray) -> None:
    """The array's contents, equal on every rank, become its agreed copy."""
    ctx.snapshots[id(array)] = array.copy()
    ctx.agreed[id(array)] = (array, array.copy())


def allreduce_cells(
    ctx: RankContext, op: Operation, array: np.ndarray, reduction: Reduction
) -> None:
    """`irgl_dist.allreduce_cells`: every entry combined over the ranks."""
    before = _snapshot(ctx, op, array)
    copies = ctx.comm.allgather(ctx.rank, array.copy())
    ctx.comm.count("allreduce_values", array.size * (ctx.comm.num_ranks - 1))
    result = before.copy()
    if reduction == Reduction.ADD:
        for copy in copies:
            result = result + (copy - before)
    elif reduction == Reduction.SET:
        for copy in copies:
            result = np.where(copy != before, copy, result)
    else:
        result = copies[0]
        for copy in copies[1:]:
            result = _combine(reduction, result, copy)
    array[...] = result
    ctx.snapshots[id(array)] = array.copy()


def allreduce_value(ctx: RankContext, value: Any, reduction: Reduction) -> Any:
    """`irgl_dist.allreduce` of one host value."""
    values = ctx.comm.allgather(ctx.rank, value)
    ctx.comm.count("allreduce_values", ctx.comm.num_ranks - 1)
    combine: dict[Reduction, Callable[[Sequence[Any]], Any]] = {
        Reduction.OR: lambda vs: any(vs),
        Reduction.AND: lambda vs: all(vs),
        Reduction.ADD: sum,
        Reduction.MIN: min,
        Reduction.MAX: max,
        Reduction.MINU: min,
        Reduction.MAXU: max,
    }
    return combine[reduction](values)


def sync_worklist(
    ctx: RankContext, pipe: PipeContext, drop_mirrors: bool = False
) -> None:
    """`irgl_dist.sync_worklist` on the incoming worklist of `pipe`; with
    `drop_mirrors` (a first worklist, `every_master`) the mirror items and
    pushed bits are dropped and nothing goes to the masters."""
    part, comm = ctx.part, ctx.comm
    p = comm.num_ranks
    if drop_mirrors:
        pipe.in_ = [i for i in pipe.in_ if 0 <= i < part.num_masters]
        ctx.pushed_mirrors.clear()
    kept: list[int] = []
    forward: list[list[int]] = [[] for _ in range(p)]
    forwarded: set[tuple[int, int]] = set()
    for item in ctx.take_pushed(pipe.in_):
        if item < part.num_masters:
            kept.append(item)
            continue
        q, pos = ctx.mirror_slot[item - part.num_masters]
        if (q, pos) not in forwarded:
            forwarded.add((q, pos))
            forward[q].append(pos)
    present = set(kept)
    if not drop_mirrors:
        comm.count("worklist_items", len(forwarded))
        for q, positions in enumerate(comm.exchange(ctx.rank, forward)):
            for pos in positions:
                master = int(part.masters_mirrored_on[q][pos])
                if master not in present:
                    present.add(master)
                    kept.append(master)
    # activation: a master's mirrors that hold edges (a vertex-cut) take it too
    activate: list[list[int]] = [
        [slots[m] for m in sorted(present) if m in slots] if q != ctx.rank else []
        for q, slots in enumerate(ctx.master_slot)
    ]
    comm.count("worklist_items", sum(map(len, activate)))
    row_start = part.graph.row_start
    for q, positions in enumerate(comm.exchange(ctx.rank, activate)):
        for pos in positions:
            mirror = int(part.mirrors_owned_by[q][pos])
            if row_start[mirror + 1] > row_start[mirror] and mirror not in present:
                present.add(mirror)
                kept.append(mirror)
    pipe.in_ = kept


def sync_worklist_reduce(
    ctx: RankContext,
    op: Operation,
    pipe: PipeContext,
    array: np.ndarray,
    reduction: Reduction,
    late: bool = False,
) -> None:
    """`irgl_dist.sync_worklist reduce`: the mirrors of `array` updated since
    the rank's last copy go to their masters with whether they were pushed;
    a master takes a value where it improves it and is activated where that
    value's mirror was pushed. Nothing is broadcast back: the rank's copy,
    mirrors lagging, becomes its last copy. Edge-cut only. `late`
    (late_broadcast): the same exchange carries the masters changed since
    the last copy (whose master entries are then what was sent) to their
    mirrors, which take them with the reduction, as their last copy does."""
    part, comm = ctx.part, ctx.comm
    baseline = _agreed(ctx, op, array)
    changed = _changed(array, baseline)
    pushed = np.zeros(len(array), dtype=bool)
    kept: list[int] = []
    for item in ctx.take_pushed(pipe.in_):
        if item < part.num_masters:
            kept.append(item)
        else:
            pushed[item] = True
    unchanged = np.flatnonzero(pushed & ~changed)
    if len(unchanged):
        raise IrglRuntimeError(
            op,
            f"'{op.name}' reduce: rank {ctx.rank} pushed mirror {int(unchanged[0])} "
            "without changing its entry, so no exchange of changed mirrors "
            "carries the push (irgl-distribute emits reduce only where every "
            "push of a neighbour follows a filter and the atomic)",
        )
    outgoing: list[Any] = []
    sent = 0
    for q in range(comm.num_ranks):
        ids = part.mirrors_owned_by[q]
        positions = np.flatnonzero(changed[ids])
        outgoing.append((positions, array[ids[positions]], pushed[ids[positions]]))
        sent += len(positions)
    comm.count("reduce_values", sent)
    # late: the masters as sent, before the exchange lowers them
    masters_sent = array[: part.num_masters].copy() if late else None
    late_out = _late_outgoing(ctx, array, baseline) if late else None
    present = set(kept)
    for q, (positions, payload, flags) in enumerate(comm.exchange(ctx.rank, outgoing)):
        if len(positions) == 0:
            continue
        masters = part.masters_mirrored_on[q][positions]
        new = _combine(reduction, array[masters], payload)
        improved = new != array[masters]
        array[masters] = new
        for master in masters[improved & flags]:
            if int(master) not in present:
                present.add(int(master))
                kept.append(int(master))
    last = array.copy()  # the rank's last copy (mirrors lag their masters)
    if late_out is not None and masters_sent is not None:
        for q, (positions, payload) in enumerate(comm.exchange(ctx.rank, late_out)):
            if len(positions):
                mirrors = part.mirrors_owned_by[q][positions]
                array[mirrors] = _combine(reduction, array[mirrors], payload)
        last = array.copy()
        last[: part.num_masters] = masters_sent  # what the mirrors were sent
    pipe.in_ = kept
    if late_out is None:
        _refresh_hot(ctx, array, last, reduction, len(kept))
    ctx.snapshots[id(array)] = last
    ctx.agreed[id(array)] = (array, last.copy())


def _refresh_hot(
    ctx: RankContext,
    array: np.ndarray,
    last: np.ndarray,
    reduction: Reduction,
    activated: int,
) -> None:
    """After a reduce-only exchange that activated at least
    ``ctx.hot_min_active`` masters over all ranks (as the runtime): each
    rank's group of the hot list carries its masters' values (an
    all-gather), which every rank's mirrors among them, and its last copy of
    them, take with the reduction."""
    comm, hot = ctx.comm, ctx.hot
    if len(hot) == 0:  # the same list on every rank
        return
    if sum(comm.allgather(ctx.rank, activated)) < ctx.hot_min_active:
        return
    group = len(hot) // comm.num_ranks
    mine = hot[ctx.rank * group : (ctx.rank + 1) * group]
    values = array[np.where(mine >= 0, mine, 0)]
    masters = np.concatenate(comm.allgather(ctx.rank, values))
    comm.count("allgather_values", group * (comm.num_ranks - 1))
    mirrors = hot >= ctx.part.num_masters
    ids = hot[mirrors]
    array[ids] = _combine(reduction, array[ids], masters[mirrors])
    last[ids] = array[ids]


def _late_outgoing(
    ctx: RankContext, array: np.ndarray, baseline: np.ndarray
) -> list[Any]:
    """The masters changed since the last copy, by peer (positions in the
    peer's list, values): a late broadcast's messages."""
    part = ctx.part
    changed = array[: part.num_masters] != baseline[: part.num_masters]
    outgoing: list[Any] = []
    sent = 0
    for ids in part.masters_mirrored_on:
        positions = np.flatnonzero(changed[ids])
        outgoing.append((positions, array[ids[positions]]))
        sent += len(positions)
    ctx.comm.count("broadcast_values", sent)
    return outgoing


# --------------------------------------------------------------------------
# interpreter functions
# --------------------------------------------------------------------------

_LOOPS = LoopFunctions()
_KERNELS = KernelFunctions()


def _remember(ctx: RankContext, args: PythonValues) -> None:
    """Snapshot the arrays an invocation is passed (when it starts); the
    first invocation passed an array takes its agreed copy."""
    for value in args:
        if isinstance(value, np.ndarray):
            ctx.snapshots[id(value)] = value.copy()
            entry = ctx.agreed.get(id(value))
            if entry is None or entry[0] is not value:
                ctx.agreed[id(value)] = (value, value.copy())


def _filter_initial(ctx: RankContext, pipe: PipeContext) -> None:
    """Keep the rank's own masters of an initial worklist, then sync it."""
    sync_worklist(ctx, pipe, drop_mirrors=True)


def _across(op: Operation) -> None:
    if TERMINATION_ATTR not in op.attributes:
        raise IrglRuntimeError(
            op,
            f"'{op.name}' in a distributed run needs {TERMINATION_ATTR} "
            "(irgl-distribute adds it): its termination must be tested across ranks",
        )


class _RankRounds(Rounds):
    """An Iterate's or Pipe's rounds on one of several ranks: the initial
    worklist is the rank's own masters (synchronized where there are
    initial items), each invocation's
    arrays are remembered for the synchronizations, and termination is
    tested across ranks (one all-gather of (in has items, Any/All result)
    per Iterate round)."""

    def __init__(self, ctx: RankContext) -> None:
        self.ctx = ctx

    def open_pipe(
        self, interpreter: Interpreter, op: PipeOp | IterateOp
    ) -> PipeContext:
        pipe = initial_pipe(interpreter, op)
        if op.initial or op.initial_array is not None:
            _filter_initial(self.ctx, pipe)
        # else: empty on every rank, nothing to exchange (irgl_dist_empty_worklist)
        return pipe

    def any_in(self, pipe_in: bool) -> bool:
        return allreduce_value(self.ctx, pipe_in, Reduction.OR)

    def before_invoke(self, args: PythonValues) -> None:
        _remember(self.ctx, args)

    def after_round(
        self, pipe_in: bool, result: Any, aggregation: Aggregation | None
    ) -> tuple[bool, Any]:
        comm = self.ctx.comm
        votes = comm.allgather(self.ctx.rank, (pipe_in, result))
        comm.count("allreduce_values", comm.num_ranks - 1)
        results = [v[1] for v in votes]
        everyone = all(results) if aggregation == Aggregation.ALL else any(results)
        return any(v[0] for v in votes), everyone


@register_impls
class DistributedFunctions(InterpreterFunctions):
    """The `irgl_dist` ops, and Invoke, Iterate, Pipe and ForAll over nodes as
    a rank runs them (registered over the single-GPU ones)."""

    @impl(SyncNodesOp)
    def run_sync_nodes(
        self, interpreter: Interpreter, op: SyncNodesOp, args: PythonValues
    ) -> PythonValues:
        sync_nodes(
            rank_context(interpreter),
            op,
            args[0],
            op.reduction.data,
            op.masters_only is not None,
            op.agreed is not None,
        )
        return ()

    @impl(AllReduceCellsOp)
    def run_allreduce_cells(
        self, interpreter: Interpreter, op: AllReduceCellsOp, args: PythonValues
    ) -> PythonValues:
        allreduce_cells(rank_context(interpreter), op, args[0], op.reduction.data)
        return ()

    @impl(AllReduceOp)
    def run_allreduce(
        self, interpreter: Interpreter, op: AllReduceOp, args: PythonValues
    ) -> PythonValues:
        return (allreduce_value(rank_context(interpreter), args[0], op.reduction.data),)

    @impl(SyncWorklistOp)
    def run_sync_worklist(
        self, interpreter: Interpreter, op: SyncWorklistOp, args: PythonValues
    ) -> PythonValues:
        pipe = irgl_state(interpreter).pipe
        if pipe is None:
            raise IrglRuntimeError(op, "sync_worklist outside any pipe context")
        ctx = rank_context(interpreter)
        if op.reduction is not None and args:
            late = op.late_broadcast is not None
            sync_worklist_reduce(ctx, op, pipe, args[0], op.reduction.data, late)
        elif op.every_master is not None:  # every rank pushed all its masters
            sync_worklist(ctx, pipe, drop_mirrors=True)
        else:
            sync_worklist(ctx, pipe)
        return ()

    @impl(LocalNodeOp)
    def run_local_node(
        self, interpreter: Interpreter, op: LocalNodeOp, args: PythonValues
    ) -> PythonValues:
        graph, node = args
        assert isinstance(graph, RankGraph)
        fold = graph.fold
        if fold is not None:  # the masters are a block of partition ids
            if not 0 <= node < int(fold.bounds[-1]):
                return (-1,)
            node = int(fold.to_part(np.asarray(node, dtype=np.int64)))
        local = node - graph.master_offset
        return (local if 0 <= local < graph.num_masters else -1,)

    @impl(GlobalIdOp)
    def run_global_id(
        self, interpreter: Interpreter, op: GlobalIdOp, args: PythonValues
    ) -> PythonValues:
        graph, node = args
        assert isinstance(graph, RankGraph)
        if not 0 <= node < graph.num_nodes:
            raise IrglRuntimeError(
                op, f"node {node} out of range: the rank has {graph.num_nodes} nodes"
            )
        return (graph.local_to_global[node],)

    @impl(IsMasterOp)
    def run_is_master(
        self, interpreter: Interpreter, op: IsMasterOp, args: PythonValues
    ) -> PythonValues:
        graph, node = args
        assert isinstance(graph, RankGraph)
        return (0 <= node < graph.num_masters,)

    @impl(PushMirrorOp)
    def run_push_mirror(
        self, interpreter: Interpreter, op: PushMirrorOp, args: PythonValues
    ) -> PythonValues:
        graph, node = args
        assert isinstance(graph, RankGraph)
        if not graph.num_masters <= node < graph.num_nodes:
            raise IrglRuntimeError(
                op,
                f"'{op.name}' of node {node}, which is not a mirror: the rank's "
                f"mirrors are local ids {graph.num_masters} to {graph.num_nodes - 1}",
            )
        rank_context(interpreter).pushed_mirrors.add(node)
        irgl_state(interpreter).stats.mirror_pushes += 1
        return ()

    @impl(ForAllOp)
    def run_forall(
        self, interpreter: Interpreter, op: ForAllOp, args: PythonValues
    ) -> PythonValues:
        graph = args[0] if args else None
        if isinstance(graph, RankGraph) and op.iterator.data.value == "nodes":
            # a rank's masters; a kernel irgl-distribute derived: its mirrors
            span = (
                NodeSpan(graph.num_masters, graph.num_nodes)
                if MIRRORS_ATTR in op.attributes
                else NodeSpan(0, graph.num_masters)
            )
            args = (span, *args[1:])
        return _LOOPS.run_forall(interpreter, op, args).values  # pyright: ignore[reportAttributeAccessIssue]

    @impl(InvokeOp)
    def run_invoke(
        self, interpreter: Interpreter, op: InvokeOp, args: PythonValues
    ) -> PythonValues:
        _remember(rank_context(interpreter), args)
        return _KERNELS.run_invoke(interpreter, op, args).values  # pyright: ignore[reportAttributeAccessIssue]

    @impl(PipeOp)
    def run_pipe(
        self, interpreter: Interpreter, op: PipeOp, args: PythonValues
    ) -> PythonValues:
        _across(op)
        return run_pipe(interpreter, op, _RankRounds(rank_context(interpreter)))

    @impl(IterateOp)
    def run_iterate(
        self, interpreter: Interpreter, op: IterateOp, args: PythonValues
    ) -> PythonValues:
        _across(op)
        rounds = _RankRounds(rank_context(interpreter))
        return run_iterate(interpreter, op, args, rounds)


# --------------------------------------------------------------------------
# running the ranks
# --------------------------------------------------------------------------


def distribute(
    module: ModuleOp,
    policy: str,
    mirrors: bool = True,
    stamp_skew: int | None = None,
    reduce_only: bool = True,
    late_broadcast: bool = False,
    mirror_pushes: bool = True,
) -> ModuleOp:
    """A copy of `module` after `irgl-distribute{policy=... mirrors=...
    reduce_only=... late_broadcast=... mirror_pushes=...}`
    and, with `stamp_skew`, `irgl-stamp-test{skew=...}` after it (as
    `lower-irgl{distribute=...}` runs them before its conversions);
    :class:`DistributionError` with the pass's diagnostic if it refuses."""
    from lowering.distribute import IrglDistribute
    from lowering.stamp_test import IrglStampTest

    distributed = module.clone()
    # the copy's ops to the parsed ones (which know where they were written)
    parsed = dict(zip(distributed.walk(), module.walk(), strict=True))
    passes: list[ModulePass] = [
        IrglDistribute(
            policy=policy,
            mirrors=mirrors,
            reduce_only=reduce_only,
            late_broadcast=late_broadcast,
            mirror_pushes=mirror_pushes,
        )
    ]
    if stamp_skew is not None:
        passes.append(IrglStampTest(skew=stamp_skew))
    try:
        PassPipeline(tuple(passes)).apply(context(), distributed)
        distributed.verify()
    except DiagnosticException as error:
        op = error_op(error)
        if op is not None and op in parsed:
            moved_to(error, parsed[op])
            error = source_diagnostic(error)
        lines = [str(error).rstrip(), *getattr(error, "__notes__", [])]
        raise DistributionError("\n".join(lines)) from None
    return distributed


@dataclass
class DistributedRun:
    """What :func:`run_ranks` returns: rank 0's host results, per-rank
    interpreter counters and the communication counters."""

    values: tuple[Any, ...]
    stats: list[Stats]
    comm: CommStats
    partitioning: Partitioning


def _rank_schedule(schedule: Schedule, rank: int) -> Schedule:
    if schedule.order == Order.RANDOM:
        return replace(schedule, seed=schedule.seed + rank)
    return schedule


def run_ranks(
    module: ModuleOp,
    name: str,
    args: Sequence[Any],
    partitioning: Partitioning,
    schedule: Schedule | str = "sequential",
    c_impls: Mapping[str, CImpl] | None = None,
) -> DistributedRun:
    """Run host kernel @name of a distributed `module` (see :func:`distribute`)
    on every rank of `partitioning`. `args` are the single-GPU arguments: the
    graph (any value; each rank gets its partition), global numpy arrays
    (node arrays are scattered and their masters gathered back in place;
    replicated arrays are copied, and rank 0's copy written back after
    checking that every rank agrees) and numbers."""
    kernel = find_host_kernel(module, name)
    host = kernel.attributes.get(HOST_ATTR)
    if not isinstance(host, HostAttr):
        raise InterpretationFailure(
            f"@{name} is not distributed (no {HOST_ATTR}); run irgl-distribute first"
        )
    if host.policy.data.value != partitioning.policy:
        raise InterpretationFailure(
            f"@{name} was distributed for policy {host.policy.data.value}, the "
            f"partitioning is {partitioning.policy}"
        )
    partitioning.check_every_rank_has_masters()
    if isinstance(schedule, str):
        schedule = Schedule.parse(schedule)
    types = kernel.function_type.inputs.data
    if len(args) != len(types):
        raise InterpretationFailure(
            f"@{name} takes {len(types)} argument(s), got {len(args)}"
        )
    node_positions = set(host.node_array_positions)
    p = partitioning.num_ranks
    comm = Communicator(p)
    graphs = [
        arg
        for arg, type_ in zip(args, types, strict=True)
        if isinstance(type_, GraphType) and isinstance(arg, CSRGraph)
    ]
    hot = (
        hot_nodes(graphs[0], hot_count(graphs[0].num_nodes, p, partitioning.policy))
        if graphs
        else np.zeros(0, dtype=np.int64)
    )
    min_active = hot_min_active(len(hot))
    hot = hot_groups(hot, partitioning.owner(hot), p)
    per_rank: list[list[Any]] = []
    for part in partitioning.partitions:
        values: list[Any] = []
        for position, (arg, type_) in enumerate(zip(args, types, strict=True)):
            if isinstance(type_, GraphType):
                values.append(RankGraph.from_partition(part))
            elif isinstance(type_, MemRefType):
                array = np.asarray(arg)
                values.append(
                    array[part.local_to_global].copy()
                    if position in node_positions
                    else array.copy()
                )
            elif isinstance(type_, AnyFloat):
                values.append(float(arg))
            else:
                values.append(int(arg))
        per_rank.append(values)
    results: list[tuple[Any, ...] | None] = [None] * p
    stats: list[Stats] = [Stats() for _ in range(p)]
    errors: list[BaseException | None] = [None] * p

    def rank_main(rank: int) -> None:
        try:
            interpreter = make_interpreter(
                module, _rank_schedule(schedule, rank), c_impls
            )
            interpreter.register_implementations(DistributedFunctions(), override=True)
            ctx = RankContext(rank, partitioning.partitions[rank], comm)
            ctx.hot = ctx.part.local_ids(hot)
            ctx.hot_min_active = min_active
            interpreter.set_data(DistributedFunctions, _RANK_KEY, ctx)
            out = interpreter.run_ssacfg_region(
                kernel.body, tuple(per_rank[rank]), name
            )
            results[rank] = tuple(out)
            stats[rank] = irgl_state(interpreter).stats
        except threading.BrokenBarrierError as error:
            errors[rank] = error
        except BaseException as error:  # reported below, after every rank stops
            errors[rank] = error
            comm.abort()

    old_size = threading.stack_size(256 * 1024 * 1024)
    try:
        threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(p)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        threading.stack_size(old_size)
    for rank, error in enumerate(errors):
        if error is None or isinstance(error, threading.BrokenBarrierError):
            continue
        if isinstance(error, IrglRuntimeError):
            raise InterpretationFailure(
                f"rank {rank}: {describe_failure(error)}", error.op
            ) from None
        raise InterpretationFailure(
            f"rank {rank}: {type(error).__name__}: {error}"
        ) from error
    if any(e is not None for e in errors):
        raise InterpretationFailure(
            "the ranks stopped waiting for each other (timeout)"
        )
    for position, (arg, type_) in enumerate(zip(args, types, strict=True)):
        if not isinstance(type_, MemRefType) or not isinstance(arg, np.ndarray):
            continue
        copies = [values[position] for values in per_rank]
        if position in node_positions:
            arg[...] = gather(partitioning, copies)
            continue
        for rank, copy in enumerate(copies[1:], start=1):
            if not np.array_equal(copy, copies[0], equal_nan=copy.dtype.kind == "f"):
                raise InterpretationFailure(
                    f"replicated argument {position} of @{name} differs between "
                    f"rank 0 and rank {rank} after the run"
                )
        arg[...] = copies[0]
    first = results[0]
    assert first is not None
    return DistributedRun(first, stats, comm.stats, partitioning)


# --------------------------------------------------------------------------
# benchmark apps
# --------------------------------------------------------------------------


class DistributedInterpProgram:
    """Plays `irgl_runner.api.Program` for `irgl_runner.apps.execute`: the app's
    program, distributed, run on `ranks` simulated ranks."""

    def __init__(
        self,
        mlir: str | Path,
        ranks: int,
        policy: str = "oec",
        schedule: Schedule | str = "sequential",
        c_impls: Mapping[str, CImpl] | None = None,
        mirrors: bool = True,
        fold: bool = False,
        stamp_skew: int | None = None,
        reduce_only: bool = True,
        late_broadcast: bool = False,
        mirror_pushes: bool = True,
    ):
        self.module = distribute(
            load_program(mlir),
            policy,
            mirrors,
            stamp_skew,
            reduce_only,
            late_broadcast,
            mirror_pushes,
        )
        self.ranks = ranks
        self.policy = policy
        self.fold = fold
        self.schedule = (
            Schedule.parse(schedule) if isinstance(schedule, str) else schedule
        )
        self.c_impls = dict(c_impls or {})
        self.last_result: Any = None
        self.runs: list[DistributedRun] = []
        self.seconds = 0.0

    def upload_graph(self, graph: CSRGraph) -> CSRGraph:
        return graph

    def alloc(self, n: int, dtype: Any) -> HostArray:
        return HostArray(np.zeros(n, dtype=np.dtype(dtype)))

    def device_name(self) -> str:
        return (
            f"CPU interpreter, {self.ranks} simulated ranks ({self.policy}"
            f"{', folded' if self.fold else ''}), "
            f"schedule {self.schedule} ({cpu_model()})"
        )

    def call(self, host_fn: str, *args: object) -> Any:
        import time

        graphs = [a for a in args if isinstance(a, CSRGraph)]
        if not graphs:
            raise InterpretationFailure(f"@{host_fn}: no graph argument to partition")
        partitioning = partition_graph(graphs[0], self.policy, self.ranks, self.fold)
        values = [a.data if isinstance(a, HostArray) else a for a in args]
        start = time.perf_counter()
        run = run_ranks(
            self.module, host_fn, values, partitioning, self.schedule, self.c_impls
        )
        self.seconds += time.perf_counter() - start
        self.runs.append(run)
        self.last_result = run.values[0] if run.values else None
        return self.last_result

    def time_call(self, host_fn: str, *args: object) -> float:
        import time

        start = time.perf_counter()
        self.call(host_fn, *args)
        return (time.perf_counter() - start) * 1e3

    def describe_runs(self) -> dict[str, object]:
        """The last run's ranks, partitioning and communication, for
        `irgl-bench run --backend interp --gpus N`'s JSON line: values sent
        to other ranks (reduced into masters, broadcast to mirrors, in
        all-reduces, worklist items) and the ranks' meetings (collectives)."""
        if not self.runs:
            return {}
        run = self.runs[-1]
        comm = run.comm
        return {
            "ranks": self.ranks,
            "policy": self.policy,
            "fold": self.fold,
            "edge_visits_by_rank": [s.edge_visits for s in run.stats],
            "pushes_by_rank": [s.pushes for s in run.stats],
            "mirror_pushes_by_rank": [s.mirror_pushes for s in run.stats],
            "atomics_by_rank": [s.atomics for s in run.stats],
            "atomic_changes_by_rank": [s.atomic_changes for s in run.stats],
            "values_reduced": comm.reduce_values,
            "values_broadcast": comm.broadcast_values,
            "values_allreduced": comm.allreduce_values,
            "values_allgathered": comm.allgather_values,
            "worklist_items_sent": comm.worklist_items,
            "collectives": comm.meetings,
        }


@dataclass
class DistributedAppRun(AppRun):
    """An app run on simulated ranks, with the communication counters."""

    comm: CommStats = field(default_factory=CommStats)


def run_app_distributed(
    app: AppSpec,
    graph: CSRGraph,
    ranks: int,
    policy: str = "oec",
    schedule: Schedule | str = "sequential",
    source: int = 0,
    check: bool = True,
    mlir: str | Path | None = None,
    mirrors: bool = True,
    fold: bool = False,
    stamp_skew: int | None = None,
    reduce_only: bool = True,
    late_broadcast: bool = False,
    mirror_pushes: bool = True,
) -> DistributedAppRun:
    """Run `app` (or the program `mlir` with the app's arguments and checker)
    on `graph` over `ranks` simulated ranks partitioned by `policy`, and check
    it with the app's checker (`mirrors`: irgl-distribute's option; `fold`:
    folded master blocks, irgl_runner.partition_fold; `stamp_skew`:
    irgl-stamp-test after irgl-distribute, see :func:`distribute`;
    `reduce_only`, `late_broadcast`, `mirror_pushes`: irgl-distribute's
    options).
    :class:`DistributionError` if irgl-distribute refuses the program."""
    program = DistributedInterpProgram(
        mlir if mlir is not None else app.mlir,
        ranks,
        policy,
        schedule,
        app_c_impls(app.name),
        mirrors,
        fold,
        stamp_skew,
        reduce_only,
        late_broadcast,
        mirror_pushes,
    )
    ctx = execute(app, program, graph, source, reps=1, warmup=0)
    problem = app.check(ctx) if check and app.check is not None else None
    stats = Stats()
    comm = CommStats()
    for run in program.runs:
        for s in run.stats:
            stats.add(s)
        for name in (
            "reduce_values",
            "broadcast_values",
            "allreduce_values",
            "allgather_values",
        ):
            setattr(comm, name, getattr(comm, name) + getattr(run.comm, name))
        comm.worklist_items += run.comm.worklist_items
        comm.meetings += run.comm.meetings
    return DistributedAppRun(ctx, problem, stats, program.seconds, comm)
