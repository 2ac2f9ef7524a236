"""convert-irgl-loops: ForAll and For become `scf.for`; worklist methods,
Retry and Respawn become worklist runtime calls.

- The outermost ForAll of a kernel is a grid-stride loop: iteration
  `lb + (tid + k * nthreads) * step` runs on thread `tid`, so consecutive
  iterations go to consecutive threads (`#irgl_rt.forall<grid_stride>`).
  When its body holds a barrier (SyncRunningThreads, LocalBarrier), an
  Exclusive or edge loops marked `#irgl_rt.nested_edges`, every thread runs
  the same number of rounds (`#irgl_rt.forall<uniform>`) and the statements
  between those collective points are guarded by "this round has an
  iteration for me", so every thread reaches them. An Exclusive or a marked
  edge loop is wrapped in `irgl_rt.collective active(%a) rank(%tid)` for
  convert-irgl-exclusive / convert-irgl-nested-edges.
- Retry backoff (`retry_backoff`, spec: Compiling ForAll, "a mapping that
  distributes contiguous blocks of iterations to a single thread"): in a
  kernel that is re-launched on the items that lost a conflict (it holds an
  `irgl.retry` without `merge`), the outermost ForAll over the worklist
  reads the retry round of `in` (`irgl_wl_retry_round`, 0 on a first
  invocation). In round 0 it maps iterations as above; in round r >= 1
  thread `tid` runs the contiguous block `tid*chunk .. (tid+1)*chunk - 1`,
  `chunk = irgl_backoff_chunk(r, ceil(count / nthreads))` = at least 2^r.
  Items that lost a conflict together were pushed next to each other, so one
  thread now runs them one after another instead of several threads
  colliding again, and the number of contending threads halves with every
  retry round in a row (`#irgl_rt.forall<grid_stride, retry_blocked>`, or
  `<uniform, retry_blocked>` with `min(chunk, count)` uniform rounds). With
  the host side of the backoff (convert-irgl-orchestration: retry launches
  sized by `irgl_pipe_backoff_grid`) a persistent conflict ends in one
  thread running what is left serially.
- Claim locks (`exclusive_locks`): in a kernel whose outermost ForAll over
  the worklist holds Exclusives and no other collective point, and whose
  every `irgl.retry` without `merge` sits in an Exclusive's else statements
  and retries the item popped from the ForAll's slot, a lost conflict is
  retried in place: the ForAll is grid-stride (no uniform rounds, no grid
  barriers), its body runs in `scf.while` until no Retry fired in it (a
  per-thread flag, `memref.alloca`; `irgl_retry_pause(attempt)` between
  attempts), and each Exclusive is wrapped in `irgl_rt.collective` marked
  `locks` for convert-irgl-exclusive's wait-die claim locks
  (`#irgl_rt.forall<grid_stride>`). A hub's contenders then
  queue on its claim cell instead of every loser re-running in every retry
  round (see convert-irgl-exclusive).
- Warp spread (`warp_spread`): the position of a thread in the outermost
  ForAll's mapping is not its global id but `(w * grid_dim + k) * 32 + l`
  for lane `l` of warp `w` of block `k`: a warp still runs 32 consecutive
  iterations, but consecutive runs of 32 go to different blocks. A
  worklist of a few thousand items (a BFS level on a grid) then occupies a
  warp on each of many SMs instead of the first two blocks, whose memory
  pipelines would serve every gather of the step. With a block size that
  is not a multiple of 32 the position stays the global id (a runtime
  select). With `warp_spread_run` = r < 32, a worklist shorter than the
  grid's threads is dealt in runs as long as spread it over every warp
  (at least r, at most 32): a frontier of 300 items in block 0 alone
  (the small-worklist mode) then takes all its 32 warps, 10 items each,
  instead of the first ten warps, whose lanes walk the items' edges one
  item after another. Only ForAlls over the worklist (a loop over the nodes or a
  range fills the grid anyway); one holding an Exclusive only with
  `warp_spread_exclusive` (its contenders' ranks, from which rank
  priorities come, stay their global ids; a retry drain's window of a few
  hundred items in block 0 then takes every warp, instead of the first few
  claiming and running their items one after another); not retry
  backoff's blocked rounds.
- Edge teams (`edge_teams` = T > 0, lowering/edge_teams.py): an outermost
  ForAll over the worklist whose body is reads then one edge loop marked
  for nested scheduling gets a second form, taken while the worklist has at
  most one item per T blocks: each item's edges shared by a team of blocks
  (a lone hub walked by the whole grid instead of one block).
- Inner ForAlls, Fors and host-kernel ForAlls are sequential `scf.for`s; a
  reducing inner ForAll (`reduce(kind, %init : T)`) carries its partial as
  the `scf.for`'s iter_arg, from `%init`, combining each yielded value.
- `nodes(g)` iterates `0 .. num_nodes(g)`, `edges(g, n)` iterates
  `first_edge(g, n) .. last_edge(g, n)`, `worklist` the slots `0 .. size(in)`.
- `irgl.wl.pop` reads slot i of `in` (`irgl_wl_item`); `irgl.wl.push`
  appends to `out`; `irgl.retry`/`irgl.respawn` append to `retry` (a merging
  Retry appends to `out`, so the item is retried with the next invocation's
  work).
- With `block_push` (cooperative conversion of pushes), a kernel's pushes
  to `out` go through a per-block staging buffer in shared memory
  (`irgl_wl_push_block`): the kernel body starts with `irgl_wl_block_begin()`
  and ends with `irgl_wl_block_flush(out)`, which reserves room for the
  whole block with one atomic. Only kernels whose every `gpu.return` is at
  the top level of the body (so every thread reaches both) are converted.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Region,
    SSAValue,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, NoMemoryEffect
from xdsl.utils.exceptions import DiagnosticException

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.graph import FirstEdgeOp, LastEdgeOp, NumNodesOp
from irgl_dialect.loops import ForAllOp, ForOp, LoopBase, iterator_of
from irgl_dialect.placement import ancestors
from irgl_dialect.runtime import (
    CollectiveOp,
    ForAllAttr,
    LaunchAttr,
    NestedEdgesAttr,
)
from irgl_dialect.runtime_library import runtime_function
from irgl_dialect.sync import (
    ExclusiveOp,
    LocalBarrierOp,
    RespawnOp,
    RetryOp,
    SyncRunningThreadsOp,
    retries_on_conflict,
)
from irgl_dialect.worklist import PopOp, PushOp
from lowering.block_size import WARP
from lowering.builders import LoweringBuilder, take_body, zero_of
from lowering.edge_teams import split_for_teams, team_edge_loop
from lowering.kernel_context import enclosing_foralls, kernel_kind_of
from lowering.reductions import accumulating_block, reduction_of
from lowering.runtime_calls import (
    call,
    call_at,
    enclosing_gpu_func,
    every_thread_reaches_end,
    kernel_worklists,
    symbol_table_of,
)


def _bounds(loop: LoopBase, b: LoweringBuilder) -> tuple[SSAValue, SSAValue, SSAValue]:
    kind = loop.iterator.data
    operands = list(loop.bounds)
    if kind == IteratorKind.RANGE:
        step = operands[2] if len(operands) == 3 else b.index(1)
        return operands[0], operands[1], step
    if kind == IteratorKind.NODES:
        return b.index(0), b.op(NumNodesOp(operands[0])), b.index(1)
    if kind == IteratorKind.EDGES:
        graph, node = operands
        return b.op(FirstEdgeOp(graph, node)), b.op(LastEdgeOp(graph, node)), b.index(1)
    worklist_in, _, _ = kernel_worklists(loop)
    (size,) = call_at(runtime_function("irgl_wl_size"), [worklist_in], b.at).results
    return b.index(0), size, b.index(1)


def _lower_sequential(loop: LoopBase) -> None:
    b = LoweringBuilder(InsertPoint.before(loop))
    lb, ub, step = _bounds(loop, b)
    reduction = reduction_of(loop) if isinstance(loop, ForAllOp) else None
    if reduction is not None:  # the partial is the scf.for's iter_arg
        kind, init, _ = reduction
        block = loop.body.block
        loop.body.detach_block(block)
        body = accumulating_block(block, kind)
        Rewriter.replace_op(loop, scf.ForOp(lb, ub, step, [init], Region(body)))
        return
    Rewriter.replace_op(loop, scf.ForOp(lb, ub, step, [], Region(take_body(loop.body))))


def _thread_geometry(b: LoweringBuilder) -> tuple[SSAValue, SSAValue]:
    """The thread's global id (`block_id * block_dim + thread_id`) and the
    number of threads of the grid."""
    block_dim = b.gpu_x(gpu.BlockDimOp)
    first = b.op(arith.MuliOp(b.gpu_x(gpu.BlockIdOp), block_dim))
    tid = b.op(arith.AddiOp(first, b.gpu_x(gpu.ThreadIdOp)))
    nthreads = b.op(arith.MuliOp(b.gpu_x(gpu.GridDimOp), block_dim))
    return tid, nthreads


def _spread_position(
    b: LoweringBuilder,
    tid: SSAValue,
    nthreads: SSAValue,
    count: SSAValue | None = None,
    least_run: int = WARP,
) -> SSAValue:
    """The thread's position under `warp_spread`: warp `w` of block `k` takes the `(w *
    grid_dim + k)`-th run of `r` consecutive positions, lane `l < r` the `l`-th of
    them, where `r` is WARP (always, without `count`), or, for `count` iterations
    fewer than the threads, as many as spread them over every warp (`ceil(count /
    warps)`), at least `least_run`; the lanes from `r` on take the positions past
    every warp's run (past `count`). A bijection onto `0 .. nthreads` when the block
    size is a multiple of WARP (every size the block-size rules pick but a
    FixedBlock kernel's own); otherwise the global id `tid`. It keeps each warp's
    positions consecutive (its loads coalesce) and deals consecutive runs to
    different blocks, so that a short worklist spreads over the SMs instead of
    filling the first blocks, and, with a shorter least run, over the warps of one
    block (block 0 alone in the small-worklist mode: a frontier of a few hundred
    items in all 32 warps instead of the first ten, whose lanes would walk the
    items' edges one after another)."""
    warp = b.index(WARP)
    thread = b.gpu_x(gpu.ThreadIdOp)
    lane = b.op(arith.RemUIOp(thread, warp))
    warp_index = b.op(arith.DivUIOp(thread, warp))
    grid = b.gpu_x(gpu.GridDimOp)
    run = b.op(
        arith.AddiOp(b.op(arith.MuliOp(warp_index, grid)), b.gpu_x(gpu.BlockIdOp))
    )
    if count is None or least_run >= WARP:
        spread = b.op(arith.AddiOp(b.op(arith.MuliOp(run, warp)), lane))
    else:
        warps = b.op(arith.DivUIOp(nthreads, warp))
        least = b.index(least_run)
        # a worklist of at most `least_run` items a warp (a chain's one or
        # two) takes the least run without the division
        few = b.op(arith.CmpiOp(count, b.op(arith.MuliOp(warps, least)), "ule"))
        longer = Block()
        within = b.nested(InsertPoint.at_end(longer))
        per_warp = within.op(
            arith.CeilDivUIOp(count, within.op(arith.MaxUIOp(warps, within.index(1))))
        )
        within.stmt(
            scf.YieldOp(
                within.op(
                    arith.MinUIOp(warp, within.op(arith.MaxUIOp(per_warp, least)))
                )
            )
        )
        length = b.op(
            scf.IfOp(
                few, [IndexType()], Region(Block([scf.YieldOp(least)])), Region(longer)
            )
        )
        inside = b.op(arith.CmpiOp(lane, length, "ult"))
        first = b.op(arith.AddiOp(b.op(arith.MuliOp(run, length)), lane))
        rest = b.op(arith.SubiOp(warp, length))
        beyond = b.op(
            arith.AddiOp(
                b.op(arith.MuliOp(warps, length)),
                b.op(
                    arith.AddiOp(
                        b.op(arith.MuliOp(run, rest)), b.op(arith.SubiOp(lane, length))
                    )
                ),
            )
        )
        spread = b.op(arith.SelectOp(inside, first, beyond))
    partial = b.op(arith.RemUIOp(b.gpu_x(gpu.BlockDimOp), warp))
    whole = b.op(arith.CmpiOp(partial, b.index(0), "eq"))
    return b.op(arith.SelectOp(whole, spread, tid))


def _holds_exclusive(loop: LoopBase) -> bool:
    return any(isinstance(op, ExclusiveOp) for op in loop.walk())


def check_warp_spread_run_option(value: int, pass_name: str) -> None:
    """`warp_spread_run` must lie in 1 .. 32 (a warp's lanes)."""
    if not 1 <= value <= WARP:
        raise DiagnosticException(
            f"{pass_name}: warp_spread_run must be between 1 and {WARP}, got {value}"
        )


def check_edge_teams_option(value: int, pass_name: str) -> None:
    """`edge_teams` is 0 (off) or at least 2 blocks an item."""
    if value != 0 and value < 2:
        raise DiagnosticException(
            f"{pass_name}: edge_teams must be 0 (off) or at least 2, got {value}"
        )


def _count(b: LoweringBuilder, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
    """The iterations of `lb .. ub` by `step`."""
    return b.op(arith.CeilDivSIOp(b.op(arith.SubiOp(ub, lb)), step))


def _lower_grid_stride(
    loop: LoopBase, spread: bool = False, least_run: int = WARP
) -> None:
    b = LoweringBuilder(InsertPoint.before(loop))
    lb, ub, step = _bounds(loop, b)
    tid, nthreads = _thread_geometry(b)
    if spread:
        count = _count(b, lb, ub, step) if least_run < WARP else None
        tid = _spread_position(b, tid, nthreads, count, least_run)
    start = b.op(arith.AddiOp(lb, b.op(arith.MuliOp(tid, step))))
    stride = b.op(arith.MuliOp(nthreads, step))
    lowered = scf.ForOp(start, ub, stride, [], Region(take_body(loop.body)))
    ForAllAttr(ForAllAttr.GRID_STRIDE).attach(lowered)
    Rewriter.replace_op(loop, lowered)


@dataclass(frozen=True)
class _RetryBlocks:
    """The positions `j` (iteration `lb + j * step`) a thread runs under retry
    backoff: `first`, `first + between_rounds`, ... for `chunk` rounds, those
    below `count`. In a retry round (`blocked`) a contiguous block of `chunk`
    positions per thread; on a first invocation the cyclic positions of the
    grid-stride mapping (`chunk` is then the rounds it needs)."""

    count: SSAValue
    chunk: SSAValue
    first: SSAValue
    between_rounds: SSAValue
    blocked: SSAValue


def _retry_blocks(
    loop: LoopBase,
    b: LoweringBuilder,
    bounds: tuple[SSAValue, SSAValue, SSAValue],
    tid: SSAValue,
    nthreads: SSAValue,
) -> _RetryBlocks:
    """`irgl_wl_retry_round(in)` and `irgl_backoff_chunk` decide the mapping
    (see the module docstring)."""
    count = _count(b, *bounds)
    per_thread = b.op(arith.CeilDivSIOp(count, nthreads))
    worklist_in, _, _ = kernel_worklists(loop)
    round_ = b.call_value(runtime_function("irgl_wl_retry_round"), [worklist_in])
    round_.name_hint = "retry_round"
    chunk = b.call_value(runtime_function("irgl_backoff_chunk"), [round_, per_thread])
    chunk.name_hint = "chunk"
    blocked = b.op(arith.CmpiOp(round_, b.index(0), "sgt"))
    one = b.index(1)
    between_rounds = b.op(arith.SelectOp(blocked, one, nthreads))
    between_threads = b.op(arith.SelectOp(blocked, chunk, one))
    first = b.op(arith.MuliOp(tid, between_threads))
    return _RetryBlocks(count, chunk, first, between_rounds, blocked)


def _iteration(
    b: LoweringBuilder, lb: SSAValue, position: SSAValue, step: SSAValue
) -> SSAValue:
    """`lb + position * step`."""
    return b.op(arith.AddiOp(lb, b.op(arith.MuliOp(position, step))))


def _lower_retry_blocked(loop: LoopBase) -> None:
    """Grid-stride rounds with retry backoff: `for j = first to end step
    between_rounds`, `end` the thread's block end in a retry round."""
    b = LoweringBuilder(InsertPoint.before(loop))
    lb, ub, step = _bounds(loop, b)
    tid, nthreads = _thread_geometry(b)
    blocks = _retry_blocks(loop, b, (lb, ub, step), tid, nthreads)
    block_end = b.op(arith.AddiOp(blocks.first, blocks.chunk))
    own_end = b.op(arith.MinSIOp(block_end, blocks.count))
    end = b.op(arith.SelectOp(blocks.blocked, own_end, blocks.count))
    old = take_body(loop.body)
    body = Block(arg_types=[IndexType()])
    inner = LoweringBuilder(InsertPoint.at_end(body))
    index = _iteration(inner, lb, body.args[0], step)
    old.args[0].replace_all_uses_with(index)
    for op in list(old.ops):
        op.detach()
        body.add_op(op)
    lowered = scf.ForOp(blocks.first, end, blocks.between_rounds, [], Region(body))
    ForAllAttr(ForAllAttr.GRID_STRIDE, retry_blocked=True).attach(lowered)
    Rewriter.replace_op(loop, lowered)


def _is_barrier(op: Operation) -> bool:
    """Operations every thread must reach (in uniform control flow)."""
    return isinstance(op, SyncRunningThreadsOp | LocalBarrierOp) or _is_collective(op)


def _is_collective(op: Operation) -> bool:
    """An Exclusive or an edge loop shared across threads: wrapped in
    `irgl_rt.collective` for convert-irgl-exclusive / -nested-edges."""
    return isinstance(op, ExclusiveOp) or _is_nested_edges(op)


def _is_nested_edges(op: Operation) -> bool:
    return isinstance(op, ForAllOp) and NestedEdgesAttr.of(op) is not None


def _lower_uniform(
    loop: LoopBase,
    retry_blocked: bool = False,
    spread: bool = False,
    least_run: int = WARP,
) -> None:
    """Same number of rounds on every thread; guard the work between barriers.
    With `retry_blocked`, round r of thread tid runs position `first + r *
    between_rounds` (`_RetryBlocks`); with `spread`, round r runs position
    `r * nthreads + _spread_position` (the collectives' rank stays the
    thread's global id)."""
    b = LoweringBuilder(InsertPoint.before(loop))
    lb, ub, step = _bounds(loop, b)
    tid, nthreads = _thread_geometry(b)
    count = None if retry_blocked else _count(b, lb, ub, step)
    position = (
        _spread_position(b, tid, nthreads, count, least_run)
        if spread and count is not None
        else tid
    )
    old = take_body(loop.body)
    body = Block(arg_types=[IndexType()])
    inner = LoweringBuilder(InsertPoint.at_end(body))
    if retry_blocked:
        blocks = _retry_blocks(loop, b, (lb, ub, step), tid, nthreads)
        # no thread has more than `count` positions: a large chunk on a
        # short worklist must not cost empty rounds (of grid barriers)
        count = blocks.count
        rounds = b.op(arith.MinSIOp(blocks.chunk, count))
        offset = inner.op(arith.MuliOp(body.args[0], blocks.between_rounds))
        k = inner.op(arith.AddiOp(blocks.first, offset))
    else:
        assert count is not None
        rounds = b.op(arith.CeilDivSIOp(count, nthreads))
        k = inner.op(
            arith.AddiOp(inner.op(arith.MuliOp(body.args[0], nthreads)), position)
        )
    active = inner.op(arith.CmpiOp(k, count, "slt"))
    index = _iteration(inner, lb, k, step)
    old.args[0].replace_all_uses_with(index)
    segment: list[Operation] = []
    uniform: set[SSAValue] = set()
    alone: SSAValue | None = None
    if any(isinstance(op, ExclusiveOp) for op in old.ops):
        # one iteration in all: its thread is the only contender of the launch
        total = _count(b, lb, ub, step) if retry_blocked else count
        alone = b.op(arith.CmpiOp(total, b.index(1), "eq"))

    def flush() -> None:
        if segment:
            body.add_op(_guard(segment, active))
            segment.clear()

    for op in list(old.ops):
        if isinstance(op, scf.YieldOp):
            continue
        if isinstance(op, memref.AllocaOp) and not op.operands:
            op.detach()
            body.add_op(op)  # a per-thread buffer: allocate it unguarded
        elif _is_collective(op):
            flush()
            results = list(op.results)
            op.detach()
            collective = CollectiveOp(
                active,
                tid,
                Region(Block([op])),
                [r.type for r in results],
                alone if isinstance(op, ExclusiveOp) else None,
            )
            body.add_op(collective)
            # a reducing edge loop's result: used after the collective
            for inner, outer in zip(results, collective.outs, strict=True):
                outer.name_hint = inner.name_hint
                for use in list(inner.uses):
                    if use.operation is not collective and not collective.is_ancestor(
                        use.operation
                    ):
                        use.operation.operands[use.index] = outer
        elif _is_barrier(op) or _holds_barrier(op):
            flush()
            op.detach()
            body.add_op(op)
            if not _is_barrier(op):
                _guard_loop_body(op, active)
        elif _is_uniform_pure(op, (old, body), uniform):
            op.detach()
            body.add_op(op)  # the same on every thread: bounds of uniform loops
            uniform.update(op.results)
        else:
            segment.append(op)
    flush()
    body.add_op(scf.YieldOp())
    zero, one = b.index(0), b.index(1)
    lowered = scf.ForOp(zero, rounds, one, [], Region(body))
    ForAllAttr(ForAllAttr.UNIFORM, retry_blocked=retry_blocked).attach(lowered)
    Rewriter.replace_op(loop, lowered)


def _holds_barrier(op: Operation) -> bool:
    """A sequential loop (with a uniform trip count: the dialect's rule) with
    a barrier inside: every thread runs it, only the work inside is guarded."""
    return isinstance(op, scf.ForOp) and any(
        _is_barrier(inner) for inner in op.walk() if inner is not op
    )


def _defined_in(value: SSAValue, block: Block) -> bool:
    """Is `value` defined in `block` or in a region nested in it?"""
    if isinstance(value, BlockArgument):
        current: Block | None = value.block
    elif isinstance(value, OpResult):
        current = value.op.parent_block()
    else:
        return False
    while current is not None:
        if current is block:
            return True
        parent = current.parent_op()
        current = parent.parent_block() if parent is not None else None
    return False


def _is_uniform_pure(
    op: Operation, blocks: tuple[Block, ...], uniform: set[SSAValue]
) -> bool:
    """A side-effect free op of values from before the ForAll (kernel
    arguments, constants) or of other such ops: the same on every thread, so
    it stays unguarded (a guard would zero it on threads without an
    iteration, and a uniform loop's bounds must not differ between threads)."""
    if op.regions or not (op.has_trait(ConstantLike) or op.has_trait(NoMemoryEffect)):
        return False
    return all(
        v in uniform or not any(_defined_in(v, b) for b in blocks) for v in op.operands
    )


def _guard_loop_body(loop: Operation, active: SSAValue) -> None:
    """Inside a uniform loop of a uniform-round ForAll: guard the work between
    its barriers (and between those of uniform loops nested in it)."""
    block = loop.regions[0].block
    segment: list[Operation] = []

    def flush(before: Operation) -> None:
        if segment:
            guarded = _guard(list(segment), active)
            block.insert_op_before(guarded, before)
            segment.clear()

    for op in list(block.ops):
        if isinstance(op, scf.YieldOp):
            flush(op)
        elif _is_barrier(op) or _holds_barrier(op):
            flush(op)
            if not _is_barrier(op):
                _guard_loop_body(op, active)
        else:
            segment.append(op)


def _zero(t: Attribute) -> Operation:
    zero = zero_of(t)
    if zero is not None:
        return zero
    raise DiagnosticException(
        f"a value of type {t} is used across a SyncRunningThreads: pass it "
        "through memory instead"
    )


def _guard(ops: list[Operation], active: SSAValue) -> scf.IfOp:
    """`scf.if %active` around `ops`; values used after them become results
    (zero on threads without an iteration this round)."""
    inside = set(ops)
    outside_uses = [
        (result, use)
        for op in ops
        for result in op.results
        for use in result.uses
        if _top_level_op(use.operation, ops[0].parent_block()) not in inside
    ]
    escaping = list(dict.fromkeys(result for result, _ in outside_uses))
    then_block, else_block = Block(), Block()
    for op in ops:
        op.detach()
        then_block.add_op(op)
    then_block.add_op(scf.YieldOp(*escaping))
    zeros = [_zero(r.type) for r in escaping]
    for z in zeros:
        else_block.add_op(z)
    else_block.add_op(scf.YieldOp(*[z.results[0] for z in zeros]))
    guarded = scf.IfOp(
        active,
        [r.type for r in escaping],
        Region(then_block),
        Region(else_block) if escaping else None,
    )
    replacement = dict(zip(escaping, guarded.results, strict=True))
    for result, use in outside_uses:
        use.operation.operands[use.index] = replacement[result]
    return guarded


def _top_level_op(op: Operation, block: Block | None) -> Operation:
    """The ancestor of `op` that lies directly in `block` (or `op`)."""
    current = op
    while current.parent_block() is not block:
        parent = current.parent_op()
        if parent is None:
            return op
        current = parent
    return current


#: Attribute of an `irgl_rt.collective` whose Exclusive takes claim locks.
LOCKS_ATTR = "locks"


def _in_place_retries(loop: Operation) -> list[RetryOp] | None:
    """The conflict Retries of `loop` if its lost conflicts can be retried in
    place (see the module docstring), else None: an outermost ForAll over
    the worklist of a plain kernel holding Exclusives (none nested in
    another) and no barrier or shared edge loop, whose kernel's every Retry
    without `merge` sits in the else statements of one of those Exclusives
    and retries `irgl.wl.pop` of the ForAll's slot."""
    if not (
        isinstance(loop, ForAllOp)
        and loop.iterator.data == IteratorKind.WORKLIST
        and kernel_kind_of(loop) == "plain"
        and not enclosing_foralls(loop)
    ):
        return None
    inner = [op for op in loop.walk() if op is not loop]
    exclusives = [op for op in inner if isinstance(op, ExclusiveOp)]
    if not exclusives or any(
        isinstance(op, SyncRunningThreadsOp | LocalBarrierOp) or _is_nested_edges(op)
        for op in inner
    ):
        return None
    if any(isinstance(p, ExclusiveOp) for e in exclusives for p in ancestors(e)):
        return None
    kernel = enclosing_gpu_func(loop)
    scope = kernel if kernel is not None else loop
    retries = [
        op for op in scope.walk() if isinstance(op, RetryOp) and op.merge is None
    ]
    slot = loop.body.block.args[0]
    for retry in retries:
        item = retry.item
        if not (
            isinstance(item, OpResult)
            and isinstance(item.op, PopOp)
            and item.op.slot is slot
            and _in_else_of_exclusive(retry, loop)
        ):
            return None
    return retries or None


def _in_else_of_exclusive(op: Operation, loop: Operation) -> bool:
    """Does `op` sit in the else statements of an Exclusive inside `loop`?"""
    region = op.parent_region()
    while region is not None and region.parent is not loop:
        parent = region.parent
        if isinstance(parent, ExclusiveOp) and region is parent.else_body:
            return True
        region = parent.parent_region() if parent is not None else None
    return False


def _flag_retries(loop: Operation, retries: list[RetryOp]) -> SSAValue:
    """A per-thread flag before `loop` (`memref.alloca() : memref<1xi8>`);
    each Retry of `retries` becomes a store of 1 to it."""
    b = LoweringBuilder(InsertPoint.before(loop))
    flag = b.op(memref.AllocaOp.get(IntegerType(8), shape=[1]))
    flag.name_hint = "retry_flag"
    for retry in retries:
        at = LoweringBuilder(InsertPoint.before(retry))
        at.stmt(memref.StoreOp.get(at.const(1, IntegerType(8)), flag, [at.index(0)]))
        Rewriter.erase_op(retry)
    return flag


def _lower_in_place(loop: LoopBase, flag: SSAValue) -> None:
    """Grid-stride ForAll whose body runs again while it set `flag` (its
    item lost a conflict): `scf.while` around the body, `irgl_retry_pause`
    between attempts; each Exclusive in an `irgl_rt.collective {locks}`
    ranked by the thread's global id."""
    table = symbol_table_of(loop)
    b = LoweringBuilder(InsertPoint.before(loop), table=table)
    lb, ub, step = _bounds(loop, b)
    tid, nthreads = _thread_geometry(b)
    start = b.op(arith.AddiOp(lb, b.op(arith.MuliOp(tid, step))))
    stride = b.op(arith.MuliOp(nthreads, step))
    true = b.const(1, IntegerType(1))
    for exclusive in [op for op in loop.walk() if isinstance(op, ExclusiveOp)]:
        collective = CollectiveOp(true, tid, Region(Block()))
        collective.attributes[LOCKS_ATTR] = UnitAttr()
        Rewriter.insert_op(collective, InsertPoint.before(exclusive))
        exclusive.detach()
        collective.body.block.add_op(exclusive)
    old = take_body(loop.body)
    body = Block(arg_types=[IndexType()])
    old.args[0].replace_all_uses_with(body.args[0])
    before = Block(arg_types=[IndexType()])
    at = LoweringBuilder(InsertPoint.at_end(before))
    zero8 = at.const(0, IntegerType(8))
    at.stmt(memref.StoreOp.get(zero8, flag, [at.index(0)]))
    for op in list(old.ops):
        op.detach()
        if not isinstance(op, scf.YieldOp):
            before.add_op(op)
    at = LoweringBuilder(InsertPoint.at_end(before))
    fired = at.op(memref.LoadOp.get(flag, [at.index(0)]))
    again = at.op(arith.CmpiOp(fired, at.const(0, IntegerType(8)), "ne"))
    before.add_op(scf.ConditionOp(again, before.args[0]))
    after = Block(arg_types=[IndexType()])
    then = LoweringBuilder(InsertPoint.at_end(after), table=table)
    attempt = then.op(arith.AddiOp(after.args[0], then.index(1)))
    then.call(runtime_function("irgl_retry_pause"), [attempt])
    after.add_op(scf.YieldOp(attempt))
    inner = LoweringBuilder(InsertPoint.at_end(body))
    first = inner.index(0)
    inner.stmt(scf.WhileOp([first], [IndexType()], Region(before), Region(after)))
    body.add_op(scf.YieldOp())
    lowered = scf.ForOp(start, ub, stride, [], Region(body))
    ForAllAttr(ForAllAttr.GRID_STRIDE).attach(lowered)
    Rewriter.replace_op(loop, lowered)


def _lower_loop(
    loop: LoopBase,
    backoff: frozenset[gpu.FuncOp] = frozenset(),
    warp_spread: bool = False,
    least_run: int = WARP,
    spread_exclusive: bool = False,
    edge_teams: int = 0,
) -> None:
    outermost = (
        isinstance(loop, ForAllOp)
        and kernel_kind_of(loop) == "plain"
        and not enclosing_foralls(loop)
    )
    if edge_teams and outermost and isinstance(loop, ForAllOp):
        edge = team_edge_loop(loop)
        if edge is not None and enclosing_gpu_func(loop) not in backoff:
            b = LoweringBuilder(InsertPoint.before(loop))
            lb, ub, step = _bounds(loop, b)
            split_for_teams(loop, edge, lb, step, _count(b, lb, ub, step), edge_teams)
    blocked = (
        outermost
        and loop.iterator.data == IteratorKind.WORKLIST
        and enclosing_gpu_func(loop) in backoff
    )
    # only worklists are short enough to sit in the first blocks; an
    # Exclusive's rank priorities follow the mapping: keep it for those
    # unless asked (`spread_exclusive`: the contenders' ranks stay their
    # global ids, `_lower_uniform`)
    spread = (
        warp_spread
        and outermost
        and loop.iterator.data == IteratorKind.WORKLIST
        and (spread_exclusive or not _holds_exclusive(loop))
    )
    if not outermost:
        _lower_sequential(loop)
    elif any(_is_barrier(op) or _holds_barrier(op) for op in loop.body.block.ops):
        _lower_uniform(loop, blocked, spread, least_run)
    elif blocked:
        _lower_retry_blocked(loop)
    else:
        _lower_grid_stride(loop, spread, least_run)


class LowerPop(RewritePattern):
    """`irgl.wl.pop %slot` → `irgl_wl_item(in, slot)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PopOp, rewriter: PatternRewriter) -> None:
        worklist_in, _, _ = kernel_worklists(op)
        item = call(runtime_function("irgl_wl_item"), [worklist_in, op.slot], rewriter)
        rewriter.replace(op, [], [item.res[0]])


class LowerPush(RewritePattern):
    """Push appends to `out`; Retry and Respawn to `retry` (a merging Retry
    to `out`): `irgl_wl_push(worklist, item)`; a Push in a kernel of
    `staged` is `irgl_wl_push_block(out, item, flag)`, with the kernel's
    `grid_dim > 1` flag from `_stage_pushes`."""

    def __init__(self, staged: dict[gpu.FuncOp, SSAValue] | None = None):
        self.staged = staged or {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, PushOp | RetryOp | RespawnOp):
            return
        _, worklist_out, worklist_retry = kernel_worklists(op)
        if isinstance(op, PushOp) or (isinstance(op, RetryOp) and op.merge is not None):
            target = worklist_out
        else:
            target = worklist_retry
        flag = (
            self.staged.get(enclosing_gpu_func(op)) if isinstance(op, PushOp) else None
        )
        if flag is None:
            call(runtime_function("irgl_wl_push"), [target, op.item], rewriter)
        else:
            call(
                runtime_function("irgl_wl_push_block"),
                [target, op.item, flag],
                rewriter,
            )
        rewriter.erase(op)


def _stageable(kernel: gpu.FuncOp) -> bool:
    """A kernel that pushes and whose every thread reaches the end of its
    body (every `gpu.return` is at the top level)."""
    pushes = any(isinstance(op, PushOp) for op in kernel.walk())
    return pushes and every_thread_reaches_end(kernel)


def _pushes_from_edges(kernel: gpu.FuncOp) -> bool:
    """Every push of `kernel` sits in a ForAll over a node's edges, so one
    work item may push many times (the pushes that block staging pays for)."""
    pushes = [op for op in kernel.walk() if isinstance(op, PushOp)]
    return bool(pushes) and all(
        any(iterator_of(loop) == IteratorKind.EDGES for loop in enclosing_foralls(p))
        for p in pushes
    )


def _stage_pushes(kernel: gpu.FuncOp) -> SSAValue:
    """`irgl_wl_block_begin(staged)` at the start of the body and
    `irgl_wl_block_flush(out, staged)` before each (top-level) return, where
    `staged` says the grid has more than one block (`gpu.grid_dim x`, which
    is 1 for a device body that a control kernel's block 0 runs alone: one
    block gains nothing from staging, and pushes straight to `out`). Returns
    `staged`, for the pushes."""
    launch = LaunchAttr.of(kernel)
    assert launch is not None and launch.worklist is not None
    worklist_out = kernel.body.block.args[launch.worklist + 1]
    table = symbol_table_of(kernel)
    begin = LoweringBuilder(InsertPoint.at_start(kernel.body.block), table=table)
    blocks = begin.gpu_x(gpu.GridDimOp)
    staged = begin.op(arith.CmpiOp(blocks, begin.index(1), "ugt"))
    begin.call(runtime_function("irgl_wl_block_begin"), [staged])
    for ret in [op for op in kernel.body.block.ops if isinstance(op, gpu.ReturnOp)]:
        flush = LoweringBuilder(InsertPoint.before(ret), table=table)
        flush.call(runtime_function("irgl_wl_block_flush"), [worklist_out, staged])
    return staged


@dataclass(frozen=True)
class ConvertIrglLoops(ModulePass):
    """Lower irgl.forall / irgl.for to scf.for (grid-stride for the outermost
    ForAll of a kernel) and worklist methods to runtime calls.

    Options: `block_push` (bool, false): block-aggregated pushes;
    `block_push_edges` (bool, false): the same for the kernels whose every
    push sits in a ForAll over edges;
    `retry_backoff` (bool, false): contiguous blocks of iterations per
    thread in the retry rounds of retrying kernels; `exclusive_locks`
    (bool, false): lost conflicts retried in place under claim locks;
    `warp_spread` (bool,
    false): runs of 32 iterations dealt to the blocks in turn;
    `warp_spread_run` (int, 32): the fewest iterations a warp takes in a row
    under warp spread when the worklist is shorter than the grid (see the
    module docstring; `-p 'convert-irgl-loops{block_push=true}'`).
    """

    name = "convert-irgl-loops"

    block_push: bool = False
    """Stage each kernel's pushes per block (one atomic per block)."""

    block_push_edges: bool = False
    """Stage the pushes per block in the kernels whose every push sits in a
    ForAll over edges (an item may push many times; a kernel pushing at
    most once per item keeps the warp-aggregated pushes)."""

    retry_backoff: bool = False
    """In retry rounds, map contiguous blocks of at least 2^round iterations
    to each thread (`#irgl_rt.forall<..., retry_blocked>`)."""

    warp_spread: bool = False
    """Deal the runs of 32 consecutive iterations of an outermost ForAll over
    the worklist to the blocks in turn (warp `w` of block `k` takes run
    `w * grid_dim + k`) instead of filling block 0 first; where the ForAll
    holds an Exclusive, only with `warp_spread_exclusive`."""

    exclusive_locks: bool = False
    """Retry lost conflicts in place, the Exclusives taking wait-die claim
    locks, in the kernels that admit it (`_in_place_retries`)."""

    warp_spread_run: int = WARP
    """Under `warp_spread`, the fewest consecutive iterations a warp takes
    when the worklist is shorter than the grid's threads: its runs are as
    long as spread the worklist over every warp, at least this, at most 32
    (32: always runs of 32)."""

    warp_spread_exclusive: bool = False
    """`warp_spread` also for a ForAll holding an Exclusive (its contenders'
    ranks stay their global ids): a retry drain's window of a few hundred
    items in block 0 then takes all its warps instead of the first few,
    whose lanes would claim and run their items one after another."""

    edge_teams: int = 0
    """T > 0: an outermost ForAll over the worklist whose body is reads
    and one edge loop runs, while the worklist has at most one item per T
    blocks, as teams of blocks each sharing one item's edges
    (lowering/edge_teams.py); 0: off."""

    def __post_init__(self) -> None:
        check_warp_spread_run_option(self.warp_spread_run, self.name)
        check_edge_teams_option(self.edge_teams, self.name)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # before the Retries are lowered: in-place retries, and kernels
        # re-launched after conflicts
        in_place: dict[Operation, SSAValue] = {}
        if self.exclusive_locks:
            for loop in [o for o in op.walk() if isinstance(o, ForAllOp)]:
                retries = _in_place_retries(loop)
                if retries is not None:
                    in_place[loop] = _flag_retries(loop, retries)
        backoff = frozenset(
            k
            for k in op.walk()
            if self.retry_backoff
            and isinstance(k, gpu.FuncOp)
            and k.kernel is not None
            and retries_on_conflict(k)
        )
        to_stage = [
            k
            for k in op.walk()
            if isinstance(k, gpu.FuncOp)
            and k.kernel is not None
            and _stageable(k)
            and (self.block_push or (self.block_push_edges and _pushes_from_edges(k)))
        ]
        staged = {k: _stage_pushes(k) for k in to_stage}
        PatternRewriteWalker(
            GreedyRewritePatternApplier([LowerPop(), LowerPush(staged)])
        ).rewrite_module(op)
        # innermost loops first, so each loop still sees the ones around it
        # (edge loops marked for nested scheduling go with their ForAll)
        loops = [
            o
            for o in op.walk()
            if isinstance(o, ForAllOp | ForOp) and not _is_nested_edges(o)
        ]
        for loop in reversed(loops):
            if loop in in_place:
                _lower_in_place(loop, in_place[loop])
            else:
                _lower_loop(
                    loop,
                    backoff,
                    self.warp_spread,
                    self.warp_spread_run,
                    self.warp_spread_exclusive,
                    self.edge_teams,
                )
