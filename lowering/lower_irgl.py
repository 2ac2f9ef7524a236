"""lower-irgl: the whole lowering, as a pipeline of the convert-irgl-* passes.

Afterwards no irgl operation remains: the module holds a `gpu.module` of
kernels and device functions, host `func.func`s, and calls into the CUDA
runtime, ready for the `cuda` target.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from irgl_dialect.runtime import CollectiveOp
from lowering.block_size import check_block_size_option
from lowering.convert_irgl_c import ConvertIrglC
from lowering.convert_irgl_exclusive import ConvertIrglExclusive
from lowering.convert_irgl_graph import ConvertIrglGraph
from lowering.convert_irgl_host_memory import ConvertIrglHostMemory
from lowering.convert_irgl_kernels import ConvertIrglKernels
from lowering.convert_irgl_loops import (
    ConvertIrglLoops,
    check_edge_teams_option,
    check_warp_spread_run_option,
)
from lowering.convert_irgl_nested_edges import ConvertIrglNestedEdges
from lowering.convert_irgl_orchestration import ConvertIrglOrchestration
from lowering.convert_irgl_sync import ConvertIrglSync
from lowering.exclusive_footprint import IrglExclusiveFootprint
from lowering.nested_parallelism import IrglNestedParallelism
from lowering.outline_iterations import OutlineIterations
from lowering.outline_kernel_bodies import OutlineKernelBodies
from lowering.outline_plan import (
    check_control_block_option,
    check_control_resident_option,
    check_retry_drain_blocks_option,
)
from lowering.outline_small_worklist import (
    SMALL_WORKLIST_EDGES,
    check_small_worklist_edges_option,
    check_small_worklist_option,
    check_small_worklist_us_option,
)
from lowering.runtime_calls import fail
from lowering.stamp_test import HUB_SKEW, IrglStampTest


@dataclass(frozen=True)
class LowerIrgl(ModulePass):
    """Run convert-irgl-kernels, irgl-outline-iterations (unless disabled),
    convert-irgl-orchestration, convert-irgl-host-memory,
    irgl-nested-parallelism (unless disabled),
    convert-irgl-{loops, exclusive, nested-edges, sync, graph, c} and
    irgl-outline-kernel-bodies (with outlining).

    Options (`-p 'lower-irgl{ticket_locks=true block_size=128}'`):

    - `ticket_locks` (bool, false): blocking Atomics use ticket locks;
    - `block_size` (int, 256): block size of unconstrained kernels, a power
      of two from 32 to 1024;
    - `nested_parallelism` (bool, true): run irgl-nested-parallelism;
    - `outline` (bool, true): iteration outlining (irgl-outline-iterations);
    - `remarks` (bool, false): print whether each Iterate/Pipe was outlined;
    - `outline_size_arg` (bool, true): a control kernel passes the size of
      `in` to the device bodies it runs (read once per block per step);
    - `control_block` (int, 0): the largest control block size to pick
      from the sizes the outlined kernels admit (0: the largest they admit;
      irgl-outline-iterations `control_block`);
    - `control_resident` (int, 0): threads per SM the control kernel's
      launch bounds ask for (0: the largest `min_blocks` an invoked
      kernel's launch_bounds declare times the control block size, else
      1024 with worklists and 2048 without; irgl-outline-iterations
      `control_resident`);
    - `small_worklist` (int, 256; 0: off): a control loop whose `in` holds
      at most this many items runs on block 0 alone, with block barriers
      (irgl-outline-iterations `small_worklist`);
    - `small_worklist_edges` (int, 16; 0: items only): where the loop's
      kernels take a graph, that mode also needs its items' out-degrees to
      add up to at most this many edges per thread of the control block
      (irgl-outline-iterations `small_worklist_edges`);
    - `small_worklist_us` (int, 0: none): a step of that mode taking longer
      than this many microseconds ends the mode for the rest of the control
      kernel (irgl-outline-iterations `small_worklist_us`);
    - `small_worklist_merged` (bool, false): one copy of a loop's round for
      the grid and for block 0 alone, geometry and barriers chosen at run
      time (BFS compiles in 1.9 instead of 2.7 s; irgl-outline-iterations
      `small_worklist_merged`);
    - `block_push` (bool, false): pushes staged per block, one atomic per
      block (convert-irgl-loops `block_push`);
    - `block_push_edges` (bool, true): the same, only in the kernels whose
      every push sits in a ForAll over edges (convert-irgl-loops
      `block_push_edges`);
    - `block_reduce` (bool, false): ReduceAndReturn reduced per block, one
      store per block (convert-irgl-sync `block_reduce`);
    - `warp_gather` (bool, false): small nodes' edge loops gathered over the
      warp instead of walked by their own thread (convert-irgl-nested-edges
      `warp_gather`);
    - `edge_unroll` (int, 4): unroll the shared edge loops of nested
      parallelism this many times (convert-irgl-nested-edges `unroll`);
    - `edge_unroll_interleaved` (bool, false): `edge_unroll` also on the
      loops `edge_interleave` interleaves (true: 16 copies of such a loop's
      body; BFS then compiles in 7.8 instead of 2.7 s and runs no faster;
      convert-irgl-nested-edges `unroll_interleaved`);
    - `edge_interleave` (int, 4): a thread walks this many of its own small
      node's edges interleaved, their loads issued together
      (convert-irgl-nested-edges `interleave`);
    - `edge_interleave_reduce` (int, 1): the same for edge loops with a
      reduction (convert-irgl-nested-edges `interleave_reduce`);
    - `edge_interleave_budget` (int, 200; 0: no limit): the block and warp
      phases interleave at most this many operations' worth of copies of an
      edge loop's body (convert-irgl-nested-edges `interleave_budget`);
    - `edge_grid_rounds` (int, 0: off): nodes of at least this many
      block sizes of edges are shared by every block of the grid
      (convert-irgl-nested-edges `grid_rounds`; 64 halves CC on a star of
      1M leaves but slows RMAT and grids, and a run hung on star:100000:
      off until that is fixed);
    - `edge_teams` (int, 8; 0: off, else at least 2): while a worklist has
      at most one item per this many blocks, an outermost ForAll over it
      whose body is reads and one edge loop gives each item a team of
      blocks that share its edges (convert-irgl-loops `edge_teams`,
      lowering/edge_teams.py: a lone hub walked by the grid instead of one
      block; BFS from a star's centre 6.6x faster on an H200);
    - `retry_backoff` (bool, false): retry backoff for kernels re-launched
      on retried items: contiguous blocks of at least 2^r iterations per
      thread in retry round r (convert-irgl-loops), retry launches sized to
      match (convert-irgl-orchestration; in control kernels
      irgl-outline-iterations counts the rounds).
    - `retry_drain` (bool, true): in a control kernel, once a retry round
      of a kernel that retries its lost Exclusives lets at most one in 16 of
      its items win (and at most 64), block 0 alone attempts
      the retried items in adaptive windows (irgl-outline-iterations
      `retry_drain`).
    - `retry_drain_solo` (bool, true): a drain's window that let at most
      one of its items win is followed by windows of one item, in streaks
      that double while the items keep contending, and a contender alone
      in its launch claims nothing (irgl-outline-iterations
      `retry_drain_solo`, convert-irgl-exclusive `alone_wins`).
    - `retry_drain_lone` (bool, true): with `retry_drain_solo`, a drained
      kernel whose only Retry is in an Exclusive's Else reads no losers
      back after a one-item window, whose lone contender won
      (irgl-outline-iterations `retry_drain_lone`; colour on an H200: a
      star 182 -> 162 ms, hub:100000:4 217 -> 196 ms).
    - `retry_drain_blocks` (int, 32; 1: off): the first N blocks of the
      grid take a drain's windows as a team, with team barriers between
      the Exclusive's phases (irgl-outline-iterations
      `retry_drain_blocks`; colour on an H200: RMAT-18 2.9x and RMAT-20
      4.4x faster, a star 16% slower).
    - `exclusive_unroll` (int, 16; 1: off): `#pragma unroll N` on the loops
      of an Exclusive's body (convert-irgl-exclusive `unroll`; colour on
      RMAT-18 11% faster on an H100, DMR as fast);
    - `exclusive_warp` (bool, true): a contender alone in its launch (a
      drain's one-item window) runs its Exclusive's body on its warp, in a
      device function of its own, the body's reduction loops split over the
      lanes and its writes made by its own lane (convert-irgl-exclusive
      `warp_alone`, lowering/warp_alone.py; colour on an H200: rmat:18
      1.96 s -> 447 ms, rmat:16 423 -> 113 ms, hub:100000:4 273 -> 217 ms,
      star:100000 161 -> 182 ms; DMR as fast);
    - `exclusive_block_claims` (int, 1024; 0: never): with `exclusive_warp`,
      a footprint winner claiming at least this many elements runs its body
      on its whole block (convert-irgl-exclusive `block_claims`);
    - `exclusive_footprint` (bool, true): an Exclusive whose body's
      footprint the compiler can name claims it, each element in the mode
      the body uses it (irgl-exclusive-footprint; off with
      `exclusive_locks`);
    - `outline_conditional` (bool, true): an `scf.if` in an
      Iterate or Pipe body that invokes kernels is outlined too, the
      control kernel taking the branch every thread computes alike
      (irgl-outline-iterations `conditional`); false: that Iterate/Pipe
      stays a host loop;
    - `retry_merged` (bool, true): in a control kernel, a kernel's first
      attempt and its retry rounds run from one call of its body (DMR
      compiles in about 1.5 instead of 2.0 s, and runs as fast; false: a call
      before the retry loop and one in it; irgl-outline-iterations
      `retry_merged`).
    - `warp_spread` (bool, true): an outermost ForAll over the worklist
      deals runs of 32 iterations to the blocks in turn, so a short
      worklist spreads over the SMs (convert-irgl-loops `warp_spread`);
    - `warp_spread_run` (int, 1): under warp spread, the fewest iterations
      a warp takes in a row when the worklist is shorter than the grid's
      threads (runs as long as spread it over every warp, at most 32;
      convert-irgl-loops `warp_spread_run`; 32: always runs of 32);
    - `warp_spread_exclusive` (bool, true): warp spread also for a ForAll
      holding an Exclusive (its contenders' ranks stay their global ids; a
      retry drain's window in block 0 takes every warp: colour on RMAT-18
      170 -> 106 ms, DMR 500k points 32 -> 22 ms on an H200;
      convert-irgl-loops `warp_spread_exclusive`);
    - `hashed_priority` (bool, false): Exclusive's contenders get a hash
      of their rank as priority instead of the rank
      (convert-irgl-exclusive `hashed_priority`).
    - `sized_priority` (bool, true): Exclusive's contenders claiming more
      elements come first, then a hash of the rank (convert-irgl-exclusive
      `sized_priority`; overrides `hashed_priority`).
    - `exclusive_locks` (bool, false; experimental: colour hung with it on
      rmat:12 on an H200): a kernel whose Exclusives' losers
      `irgl.retry` the item they popped retries it in place, on the same
      thread, its Exclusives taking wait-die claim locks instead of the
      three-phase protocol (no grid barriers, no re-launch per retry round;
      convert-irgl-loops `exclusive_locks`, convert-irgl-exclusive).
    - `include_dirs` (strings, none): where convert-irgl-c finds the headers
      of `irgl.cinclude`.
    - `distribute` (string, none): `oec` or `cvc` lowers the program for
      several GPUs partitioned by that policy: irgl-distribute first, then
      convert-irgl-dist-orchestration in place of convert-irgl-orchestration
      and convert-irgl-dist (the irgl_dist ops become NCCL runtime calls),
      without iteration outlining (rounds are host-driven: the collectives
      are host calls; `remarks` says so).
    - `distribute_mirrors` (bool, true): with `distribute`, node arrays that
      an invoked kernel fills with values computable on every copy (CC's
      labels, stamps) are computed on the mirrors too instead of being
      broadcast (irgl-distribute `mirrors`).
    - `distribute_reduce_only` (bool, true): with `distribute=oec`, a
      round's min/max node array whose mirrors are read only as filters
      before its atomic (SSSP's distances, cc_lp's labels) is reduced in the
      worklist's exchange and not broadcast back (irgl-distribute
      `reduce_only`, lowering/reduce_only.py).
    - `distribute_late_broadcast` (bool, false): with
      `distribute_reduce_only`, the reduce-only exchange also carries the
      masters changed since the previous one to their mirrors (a broadcast
      one round late, irgl-distribute `late_broadcast`).
    - `distribute_mirror_pushes` (bool, true): with
      `distribute_reduce_only`, the round kernel pushes a neighbour that is
      a mirror by setting its pushed bit for the exchange
      (`irgl_dist.push_mirror`) instead of a round-stamp exchange and a
      worklist slot (irgl-distribute `mirror_pushes`,
      lowering/mirror_pushes.py).
    - `stamp_test` (bool, true): a round stamp's exchange first reads the
      entry and is skipped where it already holds the round counter
      (irgl-stamp-test; SSSP's and cc_lp's stamps), on graphs whose largest
      degree exceeds `stamp_test_skew` (int, 32; 0: every graph) times the
      mean: faster on skewed graphs (RMAT), slower on grids and uniform ones.
    """

    name = "lower-irgl"

    ticket_locks: bool = False
    """Blocking Atomics use ticket locks (32- or 64-bit lock words)."""

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

    outline_size_arg: bool = True
    """Outlined device bodies get the size of `in` from the control kernel
    instead of every thread reading the worklist tail (irgl-outline-iterations
    `size_arg`)."""

    small_worklist: int = 256
    """Item threshold of the control kernels' small-worklist mode (0: off):
    while a loop's `in` holds at most this many items, block 0 alone runs
    its rounds, separated by block barriers (irgl-outline-iterations)."""

    small_worklist_us: int = 0
    """Time limit of a small-worklist step in microseconds (0: none)."""

    small_worklist_edges: int = SMALL_WORKLIST_EDGES
    """Edges per control-block thread that a small-worklist round of a loop
    whose kernels take a graph may hold (0: items only)."""

    small_worklist_merged: bool = False
    """One copy of a small-worklist loop's round, for the grid and block 0."""

    block_push: bool = False
    """Cooperative conversion of pushes: staged in shared memory per block and
    published with one atomic per block (convert-irgl-loops)."""

    block_push_edges: bool = True
    """Cooperative conversion of pushes only where every push of a kernel sits
    in a ForAll over edges, i.e. an item may push many times
    (convert-irgl-loops)."""

    block_reduce: bool = False
    """ReduceAndReturn reduced per block before the cell (convert-irgl-sync)."""

    warp_gather: bool = False
    """Nested parallelism's thread phase replaced by a warp gather of the
    small edge lists (convert-irgl-nested-edges)."""

    warp_spread: bool = True
    """Runs of 32 consecutive iterations of an outermost ForAll over the
    worklist dealt to the blocks in turn (convert-irgl-loops)."""

    warp_spread_run: int = 1
    """Under warp spread, the fewest iterations a warp takes in a row when
    the worklist is shorter than the grid's threads (convert-irgl-loops;
    32: always runs of 32)."""

    warp_spread_exclusive: bool = True
    """Warp spread also for a ForAll holding an Exclusive
    (convert-irgl-loops): colour on RMAT-18 170 -> 106 ms, DMR 32 -> 22 ms
    on an H200."""

    edge_unroll: int = 4
    """`#pragma unroll N` on the block and warp phases' edge loops."""
    edge_unroll_interleaved: bool = False
    """`edge_unroll` on interleaved edge loops too (by default only on the
    loops `edge_interleave` leaves whole: a much smaller program, as fast)."""
    control_block: int = 0
    """Largest control block size (0: the largest the kernels admit)."""
    control_resident: int = 0
    """Threads per SM the control kernel's launch bounds ask for (0: by kind)."""
    edge_interleave: int = 4
    """Iterations of an edge loop interleaved per thread (each phase)."""
    edge_interleave_reduce: int = 1
    """`edge_interleave` for edge loops with a reduction."""
    edge_interleave_budget: int = 200
    """Operations' worth of copies of an edge loop's body that its block and
    warp phases interleave at most (0: no limit)."""
    edge_grid_rounds: int = 0
    """Nested parallelism's grid phase: nodes of at least this many block
    sizes of edges shared by the whole grid (0: none)."""
    edge_teams: int = 8
    """Short worklists walked by teams of at least this many blocks an item,
    sharing its edges (0: off)."""
    retry_backoff: bool = False
    """Retry backoff: in retry round r of a retrying kernel each thread runs
    a contiguous block of at least 2^r items, on a grid shrunk to match."""
    retry_drain: bool = True
    """Block 0 drains a control kernel's retry storms in adaptive windows."""
    retry_drain_solo: bool = True
    """A drain runs streaks of one-item windows where its items contend, and
    a launch's only contender wins without claims."""
    retry_drain_lone: bool = True
    """One-item drain windows of a kernel that retries only its lost
    Exclusives read no losers back."""
    retry_drain_blocks: int = 32
    """The blocks that take a drain's windows as a team (1: block 0
    alone)."""
    exclusive_unroll: int = 16
    """`#pragma unroll` on the loops of an Exclusive's body (1: none)."""
    exclusive_warp: bool = True
    """A contender alone in its launch, and a footprint winner claiming at
    least 32 elements, runs its Exclusive's body on its warp
    (convert-irgl-exclusive `warp_alone`)."""
    exclusive_block_claims: int = 1024
    """With `exclusive_warp`, a footprint winner claiming at least this many
    elements runs its body on its whole block (0: never;
    convert-irgl-exclusive `block_claims`)."""
    exclusive_footprint: bool = True
    """Exclusives claim their body's footprint with modes where it can be
    named (irgl-exclusive-footprint; not with `exclusive_locks`)."""
    retry_merged: bool = True
    """A control kernel runs an invocation's first attempt and its retry
    rounds from one call of the kernel's body."""
    outline_conditional: bool = True
    """Invocations inside an `scf.if` of an Iterate/Pipe body are outlined
    (irgl-outline-iterations `conditional`)."""
    hashed_priority: bool = False
    """Exclusive's priorities are a hash of the contender's rank."""
    sized_priority: bool = True
    """Exclusive's priorities: larger claims first, then a hashed rank."""
    exclusive_locks: bool = False
    """Kernels that retry their lost conflicts retry them in place, their
    Exclusives taking wait-die claim locks (convert-irgl-loops)."""
    include_dirs: tuple[str, ...] = ()
    """Where `irgl.cinclude` headers are looked up, in order."""
    distribute: str = ""
    """Lower for several GPUs with this partitioning policy (`oec`, `cvc`;
    empty: one GPU)."""
    distribute_mirrors: bool = True
    """With `distribute`: compute the mirrors of node arrays filled with
    values computable on every copy instead of broadcasting them."""
    distribute_reduce_only: bool = True
    """With `distribute=oec`: reduce a round's min/max node array read at
    mirrors only as a filter in the worklist's exchange, with no broadcast."""
    distribute_late_broadcast: bool = False
    """With `distribute_reduce_only`: carry the masters changed since the
    previous exchange to their mirrors in the same exchange."""
    distribute_mirror_pushes: bool = True
    """With `distribute_reduce_only`: push a mirror by its pushed bit, without
    a worklist slot or a round-stamp exchange."""
    stamp_test: bool = True
    """Round-stamp exchanges skipped where the entry holds the counter."""
    stamp_test_skew: int = HUB_SKEW
    """`stamp_test` only on graphs whose largest degree exceeds this many
    times the mean (0: on every graph)."""

    def __post_init__(self) -> None:
        check_block_size_option(self.block_size, "lower-irgl")
        for option in (
            "edge_unroll",
            "edge_interleave",
            "edge_interleave_reduce",
            "exclusive_unroll",
        ):
            if getattr(self, option) < 1:
                raise DiagnosticException(
                    f"lower-irgl: {option} must be at least 1, "
                    f"got {getattr(self, option)}"
                )
        if self.exclusive_block_claims < 0:
            raise DiagnosticException(
                "lower-irgl: exclusive_block_claims must be at least 0, "
                f"got {self.exclusive_block_claims}"
            )
        if self.edge_interleave_budget < 0:
            raise DiagnosticException(
                "lower-irgl: edge_interleave_budget must be at least 0, "
                f"got {self.edge_interleave_budget}"
            )
        check_small_worklist_option(self.small_worklist, "lower-irgl")
        check_small_worklist_us_option(self.small_worklist_us, "lower-irgl")
        check_small_worklist_edges_option(self.small_worklist_edges, "lower-irgl")
        check_control_block_option(self.control_block, "lower-irgl")
        check_control_resident_option(self.control_resident, "lower-irgl")
        check_retry_drain_blocks_option(self.retry_drain_blocks, "lower-irgl")
        check_warp_spread_run_option(self.warp_spread_run, "lower-irgl")
        check_edge_teams_option(self.edge_teams, "lower-irgl")
        if self.distribute not in ("", "oec", "cvc"):
            raise DiagnosticException(
                f"lower-irgl: distribute must be oec or cvc, got {self.distribute!r}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.distribute:
            self._apply_distributed(ctx, op)
            return
        for inner in op.walk():
            if inner.name.startswith("irgl_dist."):
                fail(
                    inner,
                    f"'{inner.name}' belongs to a program for several GPUs "
                    "(irgl-distribute's output): lower it with "
                    "lower-irgl{distribute=oec} or {distribute=cvc}, the policy "
                    "it was distributed for",
                )
        outline: list[ModulePass] = (
            [
                OutlineIterations(
                    remarks=self.remarks,
                    size_arg=self.outline_size_arg,
                    small_worklist=self.small_worklist,
                    retry_backoff=self.retry_backoff,
                    retry_drain=self.retry_drain,
                    retry_drain_solo=self.retry_drain_solo,
                    retry_drain_lone=self.retry_drain_lone,
                    retry_drain_blocks=self.retry_drain_blocks,
                    retry_merged=self.retry_merged,
                    conditional=self.outline_conditional,
                    control_block=self.control_block,
                    control_resident=self.control_resident,
                    small_worklist_us=self.small_worklist_us,
                    small_worklist_merged=self.small_worklist_merged,
                    small_worklist_edges=self.small_worklist_edges,
                )
            ]
            if self.outline
            else []
        )
        footprint: list[ModulePass] = (
            [IrglExclusiveFootprint(remarks=self.remarks)]
            if self.exclusive_footprint and not self.exclusive_locks
            else []
        )
        passes: list[ModulePass] = [
            *footprint,
            *self._stamp_test(),
            ConvertIrglKernels(block_size=self.block_size),
            *outline,
            ConvertIrglOrchestration(retry_backoff=self.retry_backoff),
            *self._after_orchestration(outline=self.outline),
        ]
        self._run(ctx, op, passes)

    def _stamp_test(self) -> list[ModulePass]:
        """irgl-stamp-test where `stamp_test` asks for it."""
        return (
            [IrglStampTest(remarks=self.remarks, skew=self.stamp_test_skew)]
            if self.stamp_test
            else []
        )

    def _after_orchestration(self, outline: bool) -> list[ModulePass]:
        """The passes after the orchestration's lowering."""
        return [
            ConvertIrglHostMemory(),
            *([IrglNestedParallelism()] if self.nested_parallelism else []),
            ConvertIrglLoops(
                block_push=self.block_push,
                block_push_edges=self.block_push_edges,
                retry_backoff=self.retry_backoff,
                warp_spread=self.warp_spread,
                warp_spread_run=self.warp_spread_run,
                edge_teams=self.edge_teams,
                warp_spread_exclusive=self.warp_spread_exclusive,
                exclusive_locks=self.exclusive_locks,
            ),
            ConvertIrglExclusive(
                hashed_priority=self.hashed_priority,
                sized_priority=self.sized_priority,
                alone_wins=self.retry_drain_solo,
                unroll=self.exclusive_unroll,
                warp_alone=self.exclusive_warp,
                nested_claims=self.nested_parallelism,
                block_claims=self.exclusive_block_claims,
            ),
            ConvertIrglNestedEdges(
                warp_gather=self.warp_gather,
                unroll=self.edge_unroll,
                interleave=self.edge_interleave,
                interleave_reduce=self.edge_interleave_reduce,
                interleave_budget=self.edge_interleave_budget,
                grid_rounds=self.edge_grid_rounds,
                unroll_interleaved=self.edge_unroll_interleaved,
            ),
            ConvertIrglSync(
                ticket_locks=self.ticket_locks, block_reduce=self.block_reduce
            ),
            ConvertIrglGraph(),
            ConvertIrglC(include_dirs=tuple(self.include_dirs)),
            *([OutlineKernelBodies()] if outline else []),
        ]

    def _apply_distributed(self, ctx: Context, op: ModuleOp) -> None:
        """The lowering for several GPUs (`distribute`)."""
        from lowering.convert_irgl_dist import (
            ConvertIrglDist,
            ConvertIrglDistOrchestration,
        )
        from lowering.distribute import IrglDistribute

        if self.remarks and self.outline:
            print(
                "remark: lower-irgl: distribute="
                f"{self.distribute}: iteration outlining is off (the rounds "
                "are host-driven: NCCL collectives are host calls)",
                file=sys.stderr,
            )
        passes: list[ModulePass] = [
            IrglDistribute(
                policy=self.distribute,
                remarks=self.remarks,
                mirrors=self.distribute_mirrors,
                reduce_only=self.distribute_reduce_only,
                late_broadcast=self.distribute_late_broadcast,
                mirror_pushes=self.distribute_mirror_pushes,
            ),
            *self._stamp_test(),
            ConvertIrglKernels(block_size=self.block_size),
            ConvertIrglDistOrchestration(retry_backoff=self.retry_backoff),
            ConvertIrglDist(),
            *self._after_orchestration(outline=False),
        ]
        self._run(ctx, op, passes)

    @staticmethod
    def _run(ctx: Context, op: ModuleOp, passes: list[ModulePass]) -> None:
        for lowering in passes:
            lowering.apply(ctx, op)
        left = [
            inner.name
            for inner in op.walk()
            if inner.name.startswith(("irgl.", "irgl_dist."))
            or isinstance(inner, CollectiveOp)
        ]
        if left:
            raise DiagnosticException(
                "lower-irgl left irgl operations behind: "
                + ", ".join(sorted(set(left)))
            )
