"""convert-irgl-nested-edges: share the edges of high-degree nodes across the
threads of a block or a warp.

irgl-nested-parallelism marks edge loops (`#irgl_rt.nested_edges`) in a
kernel's outermost ForAll; convert-irgl-loops runs that ForAll in uniform
rounds and wraps each marked loop in `irgl_rt.collective active(%a)
rank(%r)`, so every thread of the grid reaches it (idle ones included, so
they can help). This pass lowers each one into three phases:

1. block phase: nodes with at least the kernel's block size of edges: the
   block elects one such node at a time (`irgl_block_elect`) and all its
   threads share the node's edges;
2. warp phase: nodes with at least 32 edges: the lanes of each warp elect one
   by ballot (`irgl_warp_ballot`, over the mask taken once with
   `irgl_warp_active`) and share its edges;
3. thread phase: every thread walks its own small node.

Before them, with `grid_rounds` = R > 0, a grid phase takes the nodes of at
least R times the block size of edges (a star's hub, which one block would
walk alone while the other blocks idle), when the grid has more than one
block: their thread donates the node's edge range
and the per-thread values the body uses to a job slot of the runtime
(`irgl_grid_donate`, `irgl_grid_put_<T>`, `irgl_grid_publish`); every block
then takes chunks of its loop's published jobs (`irgl_grid_take`, one site
number per loop) and walks them with its threads, values read back with
`irgl_grid_get_<T>`, until none is left (the help loop), and the donor waits
until every chunk is done (`irgl_grid_finish`: later code of its iteration
sees all the edges walked, as after the block phase). A block that finishes
its rounds runs the help loop once more after them. A donor that finds no
free slot leaves its node to the block phase. `irgl_grid_take` starts with
a barrier, so the donor's own block sees the job and walks every chunk no
other block takes: a donor never waits on blocks that have finished or
are not resident. The grid phase and the linger run only under a
grid-uniform test that the graph has a node that qualifies
(`irgl_graph_max_degree(g)` at least R block sizes, and more than one
block): graphs without such nodes skip them (no barrier, no global load).

The elected node's edge range and the per-thread values that the loop body
uses are broadcast (`irgl_block_bcast_*`, `irgl_warp_shfl_*`); the body is
cloned into each phase.

A reducing edge loop (`%s = irgl.forall ... reduce(kind, %init : T)`) carries
the thread's result `mine` (from `%init`) through the phases: in a shared
phase every lane sums its share of the elected node's edges from the
identity, `irgl_block_reduce_<kind>_<T>` (block-uniform) or
`irgl_warp_reduce_<kind>_<T>` (over the warp's mask) totals the partials, and
the owner combines the total into its `mine`; the thread phase continues
from `mine` over the thread's own edges. In the grid phase the donor starts
its job's accumulator at the identity (`irgl_grid_acc_init_<T>`), every
block that walks a chunk totals it (`irgl_block_reduce_<kind>_<T>`) and
combines the total into the accumulator (`irgl_grid_combine_<kind>_<T>`,
one compare-and-swap loop a chunk), and the donor combines the accumulator
into its `mine` when the job is done (`irgl_grid_finish_<T>`); the order
of the chunks' totals varies from run to run (floating-point sums may too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from irgl_dialect.graph import FirstEdgeOp, LastEdgeOp
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.runtime import (
    UNROLL_ATTR,
    CollectiveOp,
    ForAllAttr,
    LaunchAttr,
    NestedEdgesAttr,
)
from irgl_dialect.runtime_library import overload, runtime_function
from lowering.builders import LoweringBuilder, clone_body, take_body
from lowering.edge_sharing import WARP_THRESHOLD, per_thread_values
from lowering.interleave import (
    NotInterleavable,
    check_interleavable,
    interleaved_loop,
)
from lowering.reductions import (
    accumulating_block,
    block_reduce,
    combine,
    identity,
    reduction_of,
    warp_reduce,
)
from lowering.runtime_calls import enclosing_gpu_func, fail, symbol_table_of

#: Per-thread values a grid job holds (`IRGL_GRID_JOB_VALUES` of the runtime).
GRID_JOB_VALUES = 16

#: The `grid_rounds` to turn the grid phase on with: nodes of at least this
#: many block sizes of edges go to the grid phase (64 rounds of the block's
#: threads: long enough that the donation, a few atomics and a wait, is
#: small beside them). Off by default (see lower-irgl `edge_grid_rounds`).
GRID_ROUNDS = 64


def _unrolled(loop: scf.ForOp, unroll: int) -> scf.ForOp:
    """Ask the target to unroll a shared edge loop `unroll` times
    (`irgl_rt.unroll`, printed as `#pragma unroll N`): more of a lane's edge
    loads in flight at once."""
    if unroll > 1:
        loop.attributes[UNROLL_ATTR] = IntegerAttr(unroll, i64)
    return loop


#: A reducing edge loop's kind and type (what walking its edges needs).
GridReduction = tuple[str, Attribute]


@dataclass(frozen=True)
class _Reduction:
    """A reducing edge loop's kind and how a phase totals the lanes' partials."""

    kind: str
    type: Attribute
    total: Callable[[LoweringBuilder, SSAValue], SSAValue]


def _shared_phase(
    at: LoweringBuilder,
    loop: ForAllOp,
    live: list[SSAValue],
    lo: SSAValue,
    hi: SSAValue,
    want: SSAValue,
    elect: Callable[[LoweringBuilder, SSAValue], SSAValue],
    broadcast: Callable[[LoweringBuilder, SSAValue, SSAValue], SSAValue],
    rank_and_size: Callable[[LoweringBuilder], tuple[SSAValue, SSAValue]],
    is_me: Callable[[LoweringBuilder, SSAValue], SSAValue],
    reduction: _Reduction | None = None,
    mine: SSAValue | None = None,
    unroll: int = 1,
    interleave: int = 1,
) -> SSAValue | None:
    """while ((owner = elect(want && !done)) >= 0) { share owner's edges }

    A reducing loop also carries `mine`, this thread's result so far: every
    lane sums its share of the owner's edges from the identity, `reduction`
    totals the partials, and the owner combines the total into its `mine`.
    Returns the final `mine` (None without a reduction)."""
    carried = [] if reduction is None else [reduction.type]
    before = Block(arg_types=[i1, *carried])
    b = at.nested(InsertPoint.at_end(before))
    owner = elect(b, b.both(want, b.negate(before.args[0])))
    found = b.op(arith.CmpiOp(owner, b.const(0, i32), "sge"))
    before.add_op(scf.ConditionOp(found, owner, *before.args))

    after = Block(arg_types=[i32, i1, *carried])
    a = at.nested(InsertPoint.at_end(after))
    owner = after.args[0]
    mapping = {value: broadcast(a, value, owner) for value in live}
    rank, size = rank_and_size(a)
    start = a.op(arith.AddiOp(broadcast(a, lo, owner), rank))
    end = broadcast(a, hi, owner)
    owner_is_me = is_me(a, owner)
    kind = None if reduction is None else (reduction.kind, reduction.type)
    partial = _walk_edges(a, loop, mapping, start, end, size, unroll, interleave, kind)
    if reduction is None or partial is None:
        after.add_op(scf.YieldOp(a.op(arith.OrIOp(after.args[1], owner_is_me))))
        at.stmt(
            scf.WhileOp([at.const(0, i1)], [i32, i1], Region(before), Region(after))
        )
        return None
    total = reduction.total(a, partial)
    mine_after = after.args[2]
    combined = a.op(combine(reduction.kind, mine_after, total))
    kept = a.op(arith.SelectOp(owner_is_me, combined, mine_after))
    after.add_op(scf.YieldOp(a.op(arith.OrIOp(after.args[1], owner_is_me)), kept))
    assert mine is not None
    loop_op = scf.WhileOp(
        [at.const(0, i1), mine],
        [i32, i1, reduction.type],
        Region(before),
        Region(after),
    )
    at.stmt(loop_op)
    return loop_op.results[2]


def _walk_edges(
    a: LoweringBuilder,
    loop: ForAllOp,
    mapping: dict[SSAValue, SSAValue],
    start: SSAValue,
    end: SSAValue,
    size: SSAValue,
    unroll: int,
    interleave: int,
    reduction: GridReduction | None = None,
) -> SSAValue | None:
    """for (e = start; e < end; e += size) body, interleaved `interleave`
    times and unrolled `unroll` times (a shared phase's walk of an owner's
    edges, the grid phase's of a chunk); a reducing loop's lane partial (from
    the identity) is returned."""
    values = {v: m for v, m in mapping.items() if v is not loop.index}
    if reduction is None:
        if interleave > 1:
            walked = interleaved_loop(
                a, loop.body.block, start, end, size, interleave, values=values
            )
            a.stmt(_unrolled(walked, unroll))
            return None
        body = Block(arg_types=[IndexType()])
        clone_body(loop.body, body, {**mapping, loop.index: body.args[0]})
        a.stmt(_unrolled(scf.ForOp(start, end, size, [], Region(body)), unroll))
        return None
    kind, type_ = reduction
    zero = a.op(identity(kind, type_))
    if interleave > 1:
        walked = interleaved_loop(
            a, loop.body.block, start, end, size, interleave, (kind, zero), values
        )
        (partial,) = a.insert(_unrolled(walked, unroll)).results
        return partial
    body = Block(arg_types=[IndexType()])
    inner = {**mapping, loop.index: body.args[0]}
    for op in loop.body.block.ops:
        body.add_op(op.clone(value_mapper=inner))
    accumulating_block(body, kind)
    walked = scf.ForOp(start, end, size, [zero], Region(body))
    (partial,) = a.insert(_unrolled(walked, unroll)).results
    return partial


def _grid_help(
    at: LoweringBuilder,
    loop: ForAllOp,
    live: list[SSAValue],
    site: int,
    unroll: int,
    interleave: int,
    mapping: dict[SSAValue, SSAValue] | None = None,
    reduction: GridReduction | None = None,
) -> None:
    """while ((slot = irgl_grid_take(site)) >= 0) { walk the chunk } (the
    help loop; block-uniform; a reducing loop's block total goes into the
    job's accumulator). `mapping` gives values the body uses that the
    insertion point does not see (constants cloned there)."""
    before = Block()
    b = at.nested(InsertPoint.at_end(before))
    slot = b.call_value(runtime_function("irgl_grid_take"), [b.const(site, i32)])
    found = b.op(arith.CmpiOp(slot, b.const(0, i32), "sge"))
    before.add_op(scf.ConditionOp(found, slot))
    after = Block(arg_types=[i32])
    a = at.nested(InsertPoint.at_end(after))
    slot = after.args[0]
    values = dict(mapping or {})
    for k, value in enumerate(live):
        get = overload("irgl_grid_get", value.type)
        assert get is not None, f"no irgl_grid_get for {value.type}"
        values[value] = a.call_value(get, [slot, a.const(k, i32)])
    rank = a.op(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X)))
    size = a.op(gpu.BlockDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X)))
    start = a.op(
        arith.AddiOp(a.call_value(runtime_function("irgl_grid_start"), []), rank)
    )
    end = a.call_value(runtime_function("irgl_grid_end"), [])
    partial = _walk_edges(
        a, loop, values, start, end, size, unroll, interleave, reduction
    )
    if reduction is not None and partial is not None:
        kind, type_ = reduction
        total = a.call_value(block_reduce(kind, type_), [partial])
        into = overload(f"irgl_grid_combine_{kind}", type_)
        assert into is not None, f"no irgl_grid_combine_{kind} for {type_}"
        a.call(into, [slot, total])
    a.call(runtime_function("irgl_grid_done"), [slot])
    after.add_op(scf.YieldOp())
    at.stmt(scf.WhileOp([], [i32], Region(before), Region(after)))


def _hubs(at: LoweringBuilder, graph: SSAValue, threshold: int) -> SSAValue:
    """Grid-uniform: the graph has a node of at least `threshold` edges and
    the grid has more than one block (else no thread donates)."""
    most = at.call_value(runtime_function("irgl_graph_max_degree"), [graph])
    some = at.op(arith.CmpiOp(most, at.const(threshold, IndexType()), "sge"))
    grid = at.op(gpu.GridDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X)))
    several = at.op(arith.CmpiOp(grid, at.const(1, IndexType()), "ugt"))
    return at.both(some, several)


def _grid_phase(
    outer: LoweringBuilder,
    loop: ForAllOp,
    live: list[SSAValue],
    lo: SSAValue,
    hi: SSAValue,
    want: SSAValue,
    hubs: SSAValue,
    site: int,
    unroll: int,
    interleave: int,
    reduction: GridReduction | None = None,
) -> tuple[SSAValue, SSAValue | None]:
    """If `hubs` (grid-uniform): donate the edges of a node that `want`s
    (see the module docstring), help every block's donations, wait for
    this thread's; returns whether this thread donated (its node then skips
    the block phase) and, for a reducing loop, its donation's total (the
    identity where it donated nothing)."""
    types = [i1] if reduction is None else [i1, reduction[1]]
    grid_block, no_grid = Block(), Block()
    n = outer.nested(InsertPoint.at_end(no_grid))
    none = [n.const(0, i1)]
    if reduction is not None:
        none.append(n.op(identity(*reduction)))
    no_grid.add_op(scf.YieldOp(*none))
    at = outer.nested(InsertPoint.at_end(grid_block))
    then, other = Block(), Block()
    t = at.nested(InsertPoint.at_end(then))
    site_value = t.const(site, i32)
    taken = t.call_value(runtime_function("irgl_grid_donate"), [site_value, lo, hi])
    then.add_op(scf.YieldOp(taken))
    o = at.nested(InsertPoint.at_end(other))
    other.add_op(scf.YieldOp(o.const(-1, i32)))
    (job,) = at.insert(scf.IfOp(want, [i32], Region(then), Region(other))).results
    donated = at.op(arith.CmpiOp(job, at.const(0, i32), "sge"))
    publish = Block()
    p = at.nested(InsertPoint.at_end(publish))
    for k, value in enumerate(live):
        put = overload("irgl_grid_put", value.type)
        assert put is not None, f"no irgl_grid_put for {value.type}"
        p.call(put, [job, p.const(k, i32), value])
    if reduction is not None:
        init = overload("irgl_grid_acc_init", reduction[1])
        assert init is not None, f"no irgl_grid_acc_init for {reduction[1]}"
        p.call(init, [job, p.op(identity(*reduction))])
    p.call(runtime_function("irgl_grid_publish"), [job])
    publish.add_op(scf.YieldOp())
    at.stmt(scf.IfOp(donated, [], Region(publish)))
    _grid_help(at, loop, live, site, unroll, interleave, reduction=reduction)
    finish = Block()
    f = at.nested(InsertPoint.at_end(finish))
    if reduction is None:
        f.call(runtime_function("irgl_grid_finish"), [job])
        finish.add_op(scf.YieldOp())
        at.stmt(scf.IfOp(donated, [], Region(finish)))
        grid_block.add_op(scf.YieldOp(donated))
    else:
        done = overload("irgl_grid_finish", reduction[1])
        assert done is not None, f"no irgl_grid_finish for {reduction[1]}"
        finish.add_op(scf.YieldOp(f.call_value(done, [job])))
        nothing = Block()
        nothing.add_op(
            scf.YieldOp(at.nested(InsertPoint.at_end(nothing)).op(identity(*reduction)))
        )
        (total,) = at.insert(
            scf.IfOp(donated, [reduction[1]], Region(finish), Region(nothing))
        ).results
        grid_block.add_op(scf.YieldOp(donated, total))
    results = outer.insert(
        scf.IfOp(hubs, types, Region(grid_block), Region(no_grid))
    ).results
    return results[0], (results[1] if reduction is not None else None)


def _round_loop(op: Operation) -> scf.ForOp | None:
    """The uniform round loop (`#irgl_rt.forall<uniform>`) around `op`."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ForOp):
            attr = ForAllAttr.of(parent)
            if attr is not None and attr.uniform:
                return parent
        parent = parent.parent_op()
    return None


def _linger(
    loop: ForAllOp,
    live: list[SSAValue],
    table: Operation | None,
    rewriter: PatternRewriter | None,
    site: int,
    unroll: int,
    interleave: int,
    threshold: int,
    reduction: GridReduction | None = None,
) -> None:
    """The help loop once more after the round loop: a block that is done
    with its own rounds helps the donations of slower blocks (only if the
    graph has a node of at least `threshold` edges)."""
    rounds = _round_loop(loop)
    if rounds is None:
        return
    outer = LoweringBuilder(InsertPoint.after(rounds), table=table, rewriter=rewriter)
    graph = loop.bounds[0]
    owner = graph.owner
    linger: Block | None = None
    at = outer
    if not (isinstance(owner, Operation) and rounds.is_ancestor(owner)):
        linger = Block()
        at = outer.nested(InsertPoint.at_end(linger))
    mapping: dict[SSAValue, SSAValue] = {}
    for inner in loop.body.walk():
        for operand in inner.operands:
            owner = operand.owner
            if (
                isinstance(owner, arith.ConstantOp)
                and rounds.is_ancestor(owner)
                and operand not in mapping
            ):
                mapping[operand] = at.op(owner.clone())
    _grid_help(at, loop, live, site, unroll, interleave, mapping, reduction)
    if linger is not None:
        linger.add_op(scf.YieldOp())
        outer.stmt(scf.IfOp(_hubs(outer, graph, threshold), [], Region(linger)))


def _interleave_or_one(loop: ForAllOp, interleave: int) -> int:
    """`interleave`, or 1 where the loop's body cannot be interleaved."""
    if interleave > 1:
        try:
            check_interleavable(loop.body.block)
        except NotInterleavable:
            return 1
    return interleave


def shared_interleave(loop: ForAllOp, interleave: int, budget: int) -> int:
    """The copies of `loop`'s body that its block and warp phases
    interleave: `interleave`, or fewer where that many copies would hold more
    than `budget` operations (0: no limit), at least one. These phases run
    for nodes of 32 edges or more, whose edges the warp's or the block's
    threads already walk side by side; a large body's copies there are most
    of a program's device code (BFS's two-hop body: 77 operations)."""
    if budget <= 0 or interleave <= 1:
        return interleave
    size = sum(1 for _ in loop.body.walk())
    return max(1, min(interleave, budget // max(1, size)))


def _unroll_for(unroll: int, interleave: int, unroll_interleaved: bool) -> int:
    """The unroll of an edge loop interleaved `interleave` times: `unroll`,
    or 1 for an interleaved loop unless `unroll_interleaved` (its copies
    already keep `interleave` edges in flight; unrolled too, the loop holds
    `unroll` x `interleave` copies of the body)."""
    return unroll if interleave == 1 or unroll_interleaved else 1


def _lower_shared_edges(
    loop: ForAllOp,
    active: SSAValue,
    round_body: Block,
    at: LoweringBuilder,
    block_size: int,
    warp_gather: bool = False,
    unroll: int = 1,
    interleave: int = 1,
    interleave_reduce: int = 0,
    grid_rounds: int = 0,
    site: int = 0,
    unroll_interleaved: bool = True,
    shared_budget: int = 0,
) -> SSAValue | None:
    """Lower one marked edge loop in a uniform round body (see the module
    docstring); `active` says whether this thread has an iteration; a
    reducing loop is interleaved `interleave_reduce` times (0: `interleave`),
    its block and warp phases at most `shared_budget` operations' worth of
    copies of the body (0: no limit; see :func:`shared_interleave`);
    an interleaved loop is unrolled only with `unroll_interleaved`;
    `grid_rounds` > 0 adds the grid phase for nodes of at least that many
    block sizes of edges (edge loop number `site`). Returns a reducing
    loop's result (the thread's total), else None."""
    graph, node = loop.bounds

    def varies(value: SSAValue) -> bool:
        owner = value.owner
        block = owner.parent_block() if isinstance(owner, Operation) else owner
        return block is round_body

    live = per_thread_values(loop, varies)
    partial_kind = "" if loop.reduce is None else loop.reduce.data
    if live is None:
        fail(loop, "this edge loop uses a per-thread value that cannot be broadcast")

    # the edge range of an active thread's node; empty for idle threads
    then, other = Block(), Block()
    t = at.nested(InsertPoint.at_end(then))
    then.add_op(
        scf.YieldOp(t.op(FirstEdgeOp(graph, node)), t.op(LastEdgeOp(graph, node)))
    )
    o = at.nested(InsertPoint.at_end(other))
    zero = o.const(0, IndexType())
    other.add_op(scf.YieldOp(zero, zero))
    bounds = scf.IfOp(active, [IndexType(), IndexType()], Region(then), Region(other))
    at.stmt(bounds)
    lo, hi = bounds.results
    degree = at.op(arith.SubiOp(hi, lo))

    def at_least(n: int) -> SSAValue:
        return at.op(arith.CmpiOp(degree, at.const(n, IndexType()), "sge"))

    huge = at_least(block_size)
    big = at.both(at_least(WARP_THRESHOLD), at.negate(huge))
    reduction = reduction_of(loop)
    walk_kind: GridReduction | None = (
        None if reduction is None else (reduction[0], reduction[1].type)
    )
    if reduction is not None and interleave_reduce > 0:
        interleave = interleave_reduce
    interleave = _interleave_or_one(loop, interleave)
    shared = shared_interleave(loop, interleave, shared_budget)
    # (a shared phase left one copy keeps `unroll`, as a loop not interleaved)
    shared_unroll = _unroll_for(unroll, shared, unroll_interleaved)
    grid_total: SSAValue | None = None  # a reducing loop's donated total
    if (
        grid_rounds > 0
        and len(live) <= GRID_JOB_VALUES
        and _round_loop(loop) is not None
    ):
        threshold = grid_rounds * block_size
        _linger(
            loop,
            live,
            at.table,
            at.rewriter,
            site,
            shared_unroll,
            shared,
            threshold,
            walk_kind,
        )
        wanted = at.both(active, at_least(threshold))
        hubs = _hubs(at, graph, threshold)
        donated, grid_total = _grid_phase(
            at, loop, live, lo, hi, wanted, hubs, site, shared_unroll, shared, walk_kind
        )
        huge = at.both(huge, at.negate(donated))

    def bcast(prefix: str) -> Callable[[LoweringBuilder, SSAValue, SSAValue], SSAValue]:
        def broadcast(a: LoweringBuilder, value: SSAValue, owner: SSAValue) -> SSAValue:
            fn = overload(prefix, value.type)
            assert fn is not None, f"no {prefix} for {value.type}"
            args = (
                [value, owner] if prefix == "irgl_block_bcast" else [mask, value, owner]
            )
            return a.call_value(fn, args)

        return broadcast

    mine = None if reduction is None else reduction[1]
    if reduction is not None and grid_total is not None:
        mine = at.op(combine(reduction[0], reduction[1], grid_total))

    def reducing(
        total: Callable[[LoweringBuilder, SSAValue], SSAValue],
    ) -> _Reduction | None:
        if reduction is None:
            return None
        return _Reduction(reduction[0], reduction[1].type, total)

    # 1. block phase
    mine = _shared_phase(
        at,
        loop,
        live,
        lo,
        hi,
        huge,
        elect=lambda b, want: b.call_value(
            runtime_function("irgl_block_elect"), [want]
        ),
        broadcast=bcast("irgl_block_bcast"),
        rank_and_size=lambda a: (
            a.op(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
            a.op(gpu.BlockDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
        ),
        is_me=lambda a, owner: a.op(
            arith.CmpiOp(
                a.op(
                    arith.IndexCastOp(
                        a.op(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
                        i32,
                    )
                ),
                owner,
                "eq",
            )
        ),
        reduction=reducing(
            lambda a, partial: a.call_value(
                block_reduce(partial_kind, partial.type), [partial]
            )
        ),
        mine=mine,
        unroll=shared_unroll,
        interleave=shared,
    )
    # 2. warp phase
    mask = at.call_value(runtime_function("irgl_warp_active"), [])
    mine = _shared_phase(
        at,
        loop,
        live,
        lo,
        hi,
        big,
        elect=lambda b, want: b.call_value(
            runtime_function("irgl_warp_first"),
            [b.call_value(runtime_function("irgl_warp_ballot"), [mask, want])],
        ),
        broadcast=bcast("irgl_warp_shfl"),
        rank_and_size=lambda a: (
            a.call_value(runtime_function("irgl_warp_rank"), [mask]),
            a.call_value(runtime_function("irgl_warp_size"), [mask]),
        ),
        is_me=lambda a, owner: a.call_value(
            runtime_function("irgl_warp_is_lane"), [owner]
        ),
        reduction=reducing(
            lambda a, partial: a.call_value(
                warp_reduce(partial_kind, partial.type), [mask, partial]
            )
        ),
        mine=mine,
        unroll=shared_unroll,
        interleave=shared,
    )
    # 3. thread phase (or the warp gather)
    small = at.both(active, at.negate(at_least(WARP_THRESHOLD)))
    if warp_gather:
        return _warp_gather(
            at, loop, live, lo, degree, small, mask, reduction, mine, bcast
        )
    if interleave > 1:
        return _interleaved_thread_phase(
            at, loop, lo, hi, small, reduction, mine, interleave
        )
    one = at.const(1, IndexType())
    if reduction is None:
        own = take_body(loop.body)
        walk = Block()
        walk.add_op(scf.ForOp(lo, hi, one, [], Region(own)))
        walk.add_op(scf.YieldOp())
        at.stmt(scf.IfOp(small, [], Region(walk)))
        return None
    # the thread's own edges continue from what the shared phases gave it
    assert mine is not None
    own = loop.body.block
    loop.body.detach_block(own)
    accumulating_block(own, reduction[0])
    walk = Block()
    walked = scf.ForOp(lo, hi, one, [mine], Region(own))
    walk.add_op(walked)
    walk.add_op(scf.YieldOp(walked.results[0]))
    keep = Block([scf.YieldOp(mine)])
    final = scf.IfOp(small, [mine.type], Region(walk), Region(keep))
    at.stmt(final)
    return final.results[0]


def _interleaved_thread_phase(
    at: LoweringBuilder,
    loop: ForAllOp,
    lo: SSAValue,
    hi: SSAValue,
    small: SSAValue,
    reduction: tuple[str, SSAValue, SSAValue] | None,
    mine: SSAValue | None,
    copies: int,
) -> SSAValue | None:
    """The thread phase with `copies` of the thread's own edges interleaved
    (lowering/interleave.py); a reducing loop continues from `mine`."""
    walk = Block()
    w = at.nested(InsertPoint.at_end(walk))
    carried = None
    if reduction is not None:
        assert mine is not None
        carried = (reduction[0], mine)
    walked = w.insert(interleaved_loop(w, loop.body.block, lo, hi, 1, copies, carried))
    if reduction is None:
        walk.add_op(scf.YieldOp())
        at.stmt(scf.IfOp(small, [], Region(walk)))
        return None
    assert mine is not None
    walk.add_op(scf.YieldOp(walked.results[0]))
    keep = Block([scf.YieldOp(mine)])
    final = scf.IfOp(small, [mine.type], Region(walk), Region(keep))
    at.stmt(final)
    return final.results[0]


def _warp_gather(
    at: LoweringBuilder,
    loop: ForAllOp,
    live: list[SSAValue],
    lo: SSAValue,
    degree: SSAValue,
    small: SSAValue,
    mask: SSAValue,
    reduction: tuple[str, SSAValue, SSAValue] | None,
    mine: SSAValue | None,
    bcast: Callable[[str], Callable[[LoweringBuilder, SSAValue, SSAValue], SSAValue]],
) -> SSAValue | None:
    """The small nodes' edges, gathered over the warp: the lanes' small edge
    lists laid end to end (`irgl_warp_exscan_index`) and walked `size` at a
    time, each lane taking the edge of its rank and running the body for
    the edge's owner (`irgl_warp_owner`, its per-thread values broadcast). A
    reducing loop combines each step's values per owner
    (`irgl_warp_segment_<kind>_<T>`) into the owner's `mine`."""
    index = IndexType()
    zero = at.const(0, index)
    count = at.op(arith.SelectOp(small, degree, zero))
    start = at.call_value(runtime_function("irgl_warp_exscan_index"), [mask, count])
    stop = at.op(arith.AddiOp(start, count))
    total = at.call_value(warp_reduce("add", index), [mask, count])
    rank = at.call_value(runtime_function("irgl_warp_rank"), [mask])
    size = at.call_value(runtime_function("irgl_warp_size"), [mask])
    carried = [] if mine is None else [mine.type]
    step = Block(arg_types=[index, *carried])
    b = at.nested(InsertPoint.at_end(step))
    base = step.args[0]
    k = b.op(arith.AddiOp(base, rank))
    has = b.op(arith.CmpiOp(k, total, "slt"))
    owner = b.call_value(runtime_function("irgl_warp_owner"), [mask, stop, k])
    shfl = bcast("irgl_warp_shfl")
    mapping = {value: shfl(b, value, owner) for value in live}
    offset = b.op(arith.SubiOp(k, shfl(b, start, owner)))
    edge = b.op(arith.AddiOp(shfl(b, lo, owner), offset))
    mapping[loop.index] = edge
    body = Block()
    for op in loop.body.block.ops:
        if isinstance(op, YieldOp):
            body.add_op(scf.YieldOp(*(mapping.get(v, v) for v in op.values)))
        else:
            body.add_op(op.clone(value_mapper=mapping))
    if reduction is None:
        b.stmt(scf.IfOp(has, [], Region(body)))
        step.add_op(scf.YieldOp())
        at.stmt(scf.ForOp(zero, total, size, [], Region(step)))
        return None
    assert mine is not None
    kind, value_type = reduction[0], mine.type
    ident = b.op(identity(kind, value_type))
    none = Block([scf.YieldOp(ident)])
    (value,) = b.insert(scf.IfOp(has, [value_type], Region(body), Region(none))).results
    segment = overload(f"irgl_warp_segment_{kind}", value_type)
    assert segment is not None, f"no warp segment {kind} for {value_type}"
    got = b.call_value(segment, [mask, value, owner, start, stop, base, ident])
    step.add_op(scf.YieldOp(b.op(combine(kind, step.args[1], got))))
    walked = at.insert(scf.ForOp(zero, total, size, [mine], Region(step)))
    return walked.results[0]


class LowerNestedEdges(RewritePattern):
    """`irgl_rt.collective` around a marked edge loop → the three phases."""

    def __init__(
        self,
        warp_gather: bool = False,
        unroll: int = 1,
        interleave: int = 1,
        interleave_reduce: int = 0,
        grid_rounds: int = 0,
        unroll_interleaved: bool = True,
        interleave_budget: int = 0,
    ) -> None:
        self.warp_gather = warp_gather
        self.interleave_budget = interleave_budget
        self.unroll = unroll
        self.interleave = interleave
        self.interleave_reduce = interleave_reduce
        self.grid_rounds = grid_rounds
        self.unroll_interleaved = unroll_interleaved
        self.sites = 0

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CollectiveOp, rewriter: PatternRewriter) -> None:
        loop = op.inner
        if not isinstance(loop, ForAllOp) or NestedEdgesAttr.of(loop) is None:
            return
        round_body = op.parent_block()
        assert round_body is not None
        launch = LaunchAttr.of(enclosing_gpu_func(op))
        block_size = 256 if launch is None else launch.block
        at = LoweringBuilder(
            InsertPoint.before(op), table=symbol_table_of(op), rewriter=rewriter
        )
        total = _lower_shared_edges(
            loop,
            op.active,
            round_body,
            at,
            block_size,
            self.warp_gather,
            self.unroll,
            self.interleave,
            self.interleave_reduce,
            self.grid_rounds,
            self.sites,
            self.unroll_interleaved,
            self.interleave_budget,
        )
        self.sites += 1
        if total is not None:  # a reducing loop: its total replaces the result
            total.name_hint = op.outs[0].name_hint
            op.outs[0].replace_all_uses_with(total)
        rewriter.erase(op, safe_erase=False)


@dataclass(frozen=True)
class ConvertIrglNestedEdges(ModulePass):
    """Lower the edge loops marked by irgl-nested-parallelism (in
    `irgl_rt.collective`, made by convert-irgl-loops) into block, warp and
    thread phases (see the module docstring)."""

    name = "convert-irgl-nested-edges"

    warp_gather: bool = False
    """Replace the thread phase by the warp gather: the small nodes' edges
    of a warp laid end to end and walked 32 at a time."""

    unroll: int = 1
    """Unroll the block and warp phases' edge loops this many times
    (`#pragma unroll N`; 1: leave it to nvcc)."""

    unroll_interleaved: bool = True
    """`unroll` on interleaved edge loops too (false: only on loops that are
    not interleaved; an interleaved loop's copies already keep `interleave`
    edges in flight, and unrolled it holds `unroll` x `interleave` copies of
    the body, most of a program's compile time)."""

    interleave: int = 1
    """Interleave this many iterations of each phase's edge loop per thread
    (its own small edge list, or its share of a shared one), their loads and
    atomics issued together (lowering/interleave.py; 1: one edge after
    another). With `warp_gather` the gather replaces the thread phase."""

    interleave_reduce: int = 0
    """`interleave` for edge loops with a reduction (0: the same as
    `interleave`). Their copies add in the serial order, one chain through
    the accumulator, so fewer copies can pay (PageRank's pull measured
    slower with 4)."""

    interleave_budget: int = 0
    """The block and warp phases interleave at most this many operations'
    worth of copies of an edge loop's body (at least one copy; 0: no limit,
    `interleave` copies). The thread phase keeps `interleave`."""

    grid_rounds: int = 0
    """Nodes of at least this many block sizes of edges go to the grid
    phase, shared by every block of the grid (non-reducing loops; 0, the
    default: no grid phase; GRID_ROUNDS turns it on)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # each rewrite restructures a whole round body: apply the pattern
        # once per collective op rather than through a worklist driver
        if self.interleave_reduce < 0:
            raise DiagnosticException(
                "convert-irgl-nested-edges: interleave_reduce must be at least 0, "
                f"got {self.interleave_reduce}"
            )
        if self.interleave_budget < 0:
            raise DiagnosticException(
                "convert-irgl-nested-edges: interleave_budget must be at least 0, "
                f"got {self.interleave_budget}"
            )
        if self.grid_rounds < 0:
            raise DiagnosticException(
                "convert-irgl-nested-edges: grid_rounds must be at least 0, "
                f"got {self.grid_rounds}"
            )
        for option in ("unroll", "interleave"):
            if getattr(self, option) < 1:
                raise DiagnosticException(
                    f"convert-irgl-nested-edges: {option} must be at least 1, "
                    f"got {getattr(self, option)}"
                )
        pattern = LowerNestedEdges(
            self.warp_gather,
            self.unroll,
            self.interleave,
            self.interleave_reduce,
            self.grid_rounds,
            self.unroll_interleaved,
            self.interleave_budget,
        )
        for collective in [o for o in op.walk() if isinstance(o, CollectiveOp)]:
            pattern.match_and_rewrite(collective, PatternRewriter(collective))
        for inner in op.walk():
            if isinstance(inner, ForAllOp) and NestedEdgesAttr.of(inner) is not None:
                fail(
                    inner,
                    "an edge loop marked #irgl_rt.nested_edges is lowered with its "
                    "outermost ForAll: run convert-irgl-loops first",
                )
