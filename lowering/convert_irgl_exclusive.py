"""convert-irgl-exclusive: Exclusive becomes a three-phase claim protocol.

convert-irgl-loops runs the outermost ForAll of a kernel with an Exclusive
in uniform rounds and wraps the Exclusive in `irgl_rt.collective active(%a)
rank(%r)`: every thread of the grid reaches it, `%a` says whether the thread
has an iteration (and so contends) this round. This pass lowers it:

race (each contender writes its priority `rank + 1` into the claim cell of
every element), grid barrier, priority check (a contender that lost a claim
raises every claim to its priority with atomicMax), grid barrier, check (a
contender whose priority stands on every element wins and runs the body;
others run the else statements), grid barrier. The contender with the
highest priority always wins, so some thread always makes progress, and no
two winners share an element.

With `hashed_priority` the priority is `((rank * 0x9E3779B1) mod 2^30) + 1`
instead: still unique (an odd multiplier permutes the ranks modulo 2^30)
and positive, but no longer ordered like the ranks, so that in a chain of
overlapping neighbourhoods held by consecutive threads (a mesh, a graph's
adjacent nodes) not only the last one wins: the winners are those whose
priority beats their neighbours', as in Luby's independent sets.

A collective marked `locks` (convert-irgl-loops `exclusive_locks`: the
kernel retries its lost conflicts in place, without grid barriers) becomes
claim locks instead: the contender's priority is
`irgl_claim_priority(rank, count)` (larger claims first, then a hash of the
rank); a pass of `irgl_claim_try` over the elements (one CAS each, issued
back to back) takes the free ones; if one was not free, a pass of
`irgl_claim_lock` (take a free cell or one a lower priority holds without
having committed it, wait for a lower priority's committed cell, give up
on a higher one) takes the rest or gives up; then a pass of
`irgl_claim_commit` over the elements (a contender whose cell a higher one
took gives up). The winner runs the body and releases its cells
(`irgl_claim_unlock`), a contender that gave up releases them and runs the
else statements. No committed cell is taken, so no two winners share a
cell; waits go only to committed cells, whose holders wait for nobody, and
the highest contender loses no cell and gives up on none, so it always gets
through. (Without the commit pass, a contender that only waited for a
lower holder to release could be starved: lower contenders took every such
cell again as soon as it was free, gave up on the waiter's other cells,
released it and took it again; colour on rmat:12 did not finish.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i32,
    i64,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from irgl_dialect.attributes import ExclusiveForm
from irgl_dialect.runtime import UNROLL_ATTR, CollectiveOp
from irgl_dialect.runtime_library import runtime_function
from irgl_dialect.sync import ExclusiveOp
from lowering.builders import LoweringBuilder, emit_if, take_body
from lowering.convert_irgl_loops import LOCKS_ATTR
from lowering.exclusive_footprint import FOOTPRINT_ATTR, derive_footprint
from lowering.footprint_claims import FootprintClaims
from lowering.runtime_calls import fail, symbol_table_of
from lowering.warp_alone import (
    emit_block_each,
    emit_warp_alone,
    emit_warp_each,
    warp_alone_suitable,
)

#: One element's step of `_for_each_element`: (builder, element, carried
#: values) -> the next carried values.
ElementVisit = Callable[[LoweringBuilder, SSAValue, list[SSAValue]], list[SSAValue]]


def _for_each_element(
    at: LoweringBuilder,
    op: ExclusiveOp,
    make_body: ElementVisit,
    init: list[SSAValue] | None = None,
) -> list[SSAValue]:
    """Emit a loop over the elements named by an Exclusive; `make_body(b,
    element, carried)` returns the next carried values."""
    if op.form.data == ExclusiveForm.ARRAY:
        start, end, step = (
            at.const(0, IndexType()),
            op.range[0],
            at.const(1, IndexType()),
        )
    else:
        start, end, step = op.range
    carried = init or []
    block = Block(arg_types=[IndexType(), *[v.type for v in carried]])
    b = at.nested(InsertPoint.at_end(block))
    raw = b.op(memref.LoadOp.get(op.items, [block.args[0]]))
    element = (
        raw
        if isinstance(raw.type, IndexType)
        else b.op(arith.IndexCastOp(raw, IndexType()))
    )
    nexts = make_body(b, element, list(block.args[1:]))
    block.add_op(scf.YieldOp(*nexts))
    loop = scf.ForOp(start, end, step, carried, Region(block))
    at.stmt(loop)
    return list(loop.results)


#: A footprint winner claiming at least this many elements runs its body
#: on its warp (`warp_alone`: `emit_warp_each`), its loops split over the
#: lanes; a smaller one runs it alone.
WARP_CLAIMS = 32

#: Odd multiplier of the hashed priority (the 32-bit golden ratio).
HASH_MULTIPLIER = 0x9E3779B1
#: The hashed priority is taken modulo 2^HASH_BITS (ranks below it are unique).
HASH_BITS = 30


def _priority(rank: SSAValue, hashed: bool, at: LoweringBuilder) -> SSAValue:
    """The i32 priority of the contender of `rank`: `rank + 1`, or hashed
    (see the module docstring); unique and positive either way."""
    if not hashed:
        priority = at.op(arith.AddiOp(rank, at.const(1, IndexType())))
        return at.op(arith.IndexCastOp(priority, i32))
    wide = at.op(arith.IndexCastOp(rank, i64))
    mixed = at.op(arith.MuliOp(wide, at.const(HASH_MULTIPLIER, i64)))
    low = at.op(arith.AndIOp(mixed, at.const((1 << HASH_BITS) - 1, i64)))
    return at.op(arith.TruncIOp(at.op(arith.AddiOp(low, at.const(1, i64))), i32))


def _claim_count(op: ExclusiveOp, at: LoweringBuilder) -> SSAValue:
    """How many elements the Exclusive claims."""
    if op.form.data == ExclusiveForm.ARRAY:
        return op.range[0]
    start, end, step = op.range
    return at.op(arith.CeilDivSIOp(at.op(arith.SubiOp(end, start)), step))


class _ElementClaims:
    """The claims of an Exclusive on its lock set's elements: one cell of
    its object each, no modes (see the module docstring)."""

    def __init__(self, op: ExclusiveOp):
        self.op = op
        self.claims = op.object
        self.prio: SSAValue | None = None

    def count(self, at: LoweringBuilder) -> SSAValue:
        return _claim_count(self.op, at)

    def _each(self, at: LoweringBuilder, name: str) -> list[SSAValue]:
        def visit(
            b: LoweringBuilder, element: SSAValue, _: list[SSAValue]
        ) -> list[SSAValue]:
            assert self.prio is not None
            b.call(runtime_function(name), [self.claims, element, self.prio])
            return []

        return _for_each_element(at, self.op, visit)

    def race(self, at: LoweringBuilder, contends: SSAValue) -> None:
        emit_if(at, contends, lambda b: self._each(b, "irgl_claim_write"))

    def settle(self, at: LoweringBuilder, contends: SSAValue) -> None:
        def raise_lost(b: LoweringBuilder) -> list[SSAValue]:
            lost = b.negate(self.won(b))
            return emit_if(b, lost, lambda c: self._each(c, "irgl_claim_raise"))

        emit_if(at, contends, raise_lost)

    def decide(self, at: LoweringBuilder, deciding: SSAValue) -> SSAValue | None:
        """None: each contender checks its cells in its own branch (`won`)."""
        return None

    def won(self, at: LoweringBuilder) -> SSAValue:
        def check(
            inner: LoweringBuilder, element: SSAValue, carried: list[SSAValue]
        ) -> list[SSAValue]:
            assert self.prio is not None
            (value,) = inner.call(
                runtime_function("irgl_claim_read"), [self.claims, element]
            )
            mine = inner.op(arith.CmpiOp(value, self.prio, "eq"))
            return [inner.op(arith.AndIOp(carried[0], mine))]

        true = at.const(1, IntegerType(1))
        return _for_each_element(at, self.op, check, [true])[0]


def _lower_exclusive(
    op: ExclusiveOp,
    active: SSAValue,
    rank: SSAValue,
    at: LoweringBuilder,
    hashed: bool = False,
    sized: bool = False,
    alone: SSAValue | None = None,
    unroll: int = 1,
    warp_alone: bool = False,
    nested: bool = True,
    block_claims: int = 0,
) -> None:
    """Lower one Exclusive at `at`; `active` tells whether this thread
    contends this round, its priority comes from `rank` (`_priority`), or
    with `sized` from its claim's size and then a hash of `rank`
    (`irgl_claim_priority`). Where `alone` is true the thread is the
    launch's only contender: it claims nothing and wins (the barriers stay).
    With `unroll` > 1 the body's `scf.for` loops ask to be unrolled. With
    `warp_alone` a contender alone runs its body on its warp where the body
    allows it (lowering/warp_alone.py), and a footprint winner claiming at
    least `WARP_CLAIMS` elements on its warp, at least `block_claims` (> 0)
    on its block. An Exclusive marked `irgl.footprint`
    claims its body's footprint with modes (lowering/footprint_claims.py),
    its edge loops shared across threads with `nested`."""
    claims: _ElementClaims | FootprintClaims
    if FOOTPRINT_ATTR in op.attributes:
        footprint = derive_footprint(op, named=False)
        if isinstance(footprint, str):
            fail(op, f"'irgl.exclusive' marked {FOOTPRINT_ATTR}: {footprint}")
        claims = FootprintClaims(footprint, op.object, rank, at, unroll, nested)
    else:
        claims = _ElementClaims(op)
    if unroll > 1:
        _unroll_loops(op, unroll)
    by_warp = alone is not None and warp_alone and warp_alone_suitable(op.body)
    if sized:
        count = claims.count(at)
        (prio,) = at.call(runtime_function("irgl_claim_priority"), [rank, count])
    else:
        prio = _priority(rank, hashed, at)
    claims.prio = prio
    true = at.const(1, IntegerType(1))
    contends = active
    if alone is not None:
        shared = at.op(arith.XOrIOp(alone, true))
        contends = at.op(arith.AndIOp(active, shared))

    # phase 1: race
    claims.race(at, contends)
    at.call(runtime_function("irgl_grid_sync"), [])

    # phase 2: priority check
    claims.settle(at, contends)
    at.call(runtime_function("irgl_grid_sync"), [])

    # phase 3: check, then the body or the else statements
    decided = claims.decide(at, contends)
    by_teams: SSAValue | None = None  # winners whose warps or blocks run them
    if decided is not None and warp_alone and warp_alone_suitable(op.body):
        size = count if sized else claims.count(at)
        winner = at.both(contends, decided)
        big = at.op(arith.CmpiOp(size, at.index(WARP_CLAIMS), "sge"))
        by_teams = at.both(winner, big)
        if block_claims > 0:
            huge = at.op(arith.CmpiOp(size, at.index(block_claims), "sge"))
            emit_block_each(op.body, at.both(winner, huge), at)
            big = at.both(big, at.negate(huge))
        emit_warp_each(op.body, at.both(winner, big), at)
    then_block = Block()
    then_at = at.nested(InsertPoint.at_end(then_block))

    def won_by_claims(b: LoweringBuilder) -> SSAValue:
        if decided is not None:
            return decided
        assert isinstance(claims, _ElementClaims)
        return claims.won(b)

    if by_warp:
        assert alone is not None
        warp_block = Block()
        emit_warp_alone(op.body, active, at.nested(InsertPoint.at_end(warp_block)))
        warp_block.add_op(scf.YieldOp())
        won = won_by_claims(then_at)
    elif alone is None:
        won = won_by_claims(then_at)
    else:
        alone_block, shared_block = Block(), Block()
        alone_block.add_op(scf.YieldOp(true))
        shared_at = then_at.nested(InsertPoint.at_end(shared_block))
        shared_block.add_op(scf.YieldOp(won_by_claims(shared_at)))
        won = then_at.op(
            scf.IfOp(alone, [IntegerType(1)], Region(alone_block), Region(shared_block))
        )
    body = take_body(op.body)
    if by_teams is not None:  # done by its warp or block, or this thread's
        mine = at.nested(InsertPoint.at_end(then_block)).negate(by_teams)
        body = Block([scf.IfOp(mine, [], Region(body)), scf.YieldOp()])
    then_block.add_op(scf.IfOp(won, [], Region(body), _else_region(op)))
    then_block.add_op(scf.YieldOp())
    if by_warp:
        # alone: the contender's warp runs the body; else the claims decide
        assert alone is not None
        shared_block = Block([scf.IfOp(active, [], Region(then_block)), scf.YieldOp()])
        at.stmt(scf.IfOp(alone, [], Region(warp_block), Region(shared_block)))
    else:
        at.stmt(scf.IfOp(active, [], Region(then_block)))
    at.call(runtime_function("irgl_grid_sync"), [])


def _lower_exclusive_locked(
    op: ExclusiveOp, rank: SSAValue, at: LoweringBuilder
) -> None:
    """Lower one Exclusive at `at` to claim locks (see the module
    docstring); `rank` is unique among the threads running at once."""
    claims = op.object
    count = _claim_count(op, at)
    (prio,) = at.call(runtime_function("irgl_claim_priority"), [rank, count])
    true = at.const(1, IntegerType(1))

    def each(name: str, b: LoweringBuilder) -> None:
        def visit(
            inner: LoweringBuilder, element: SSAValue, _: list[SSAValue]
        ) -> list[SSAValue]:
            inner.call(runtime_function(name), [claims, element, prio])
            return []

        _for_each_element(b, op, visit)

    def all_of(name: str) -> ElementVisit:
        """A visit that calls `name` on each cell and ands the results."""

        def visit(
            inner: LoweringBuilder, element: SSAValue, carried: list[SSAValue]
        ) -> list[SSAValue]:
            (ok,) = inner.call(runtime_function(name), [claims, element, prio])
            return [inner.op(arith.AndIOp(carried[0], ok))]

        return visit

    (fast,) = _for_each_element(at, op, all_of("irgl_claim_try"), [true])

    # slow path: wait for lower holders, give up on a higher one
    slow_block = Block()
    slow = at.nested(InsertPoint.at_end(slow_block))

    def lock_rest(
        inner: LoweringBuilder, element: SSAValue, carried: list[SSAValue]
    ) -> list[SSAValue]:
        then_block, else_block = Block(), Block()
        then_at = inner.nested(InsertPoint.at_end(then_block))
        (held,) = then_at.call(
            runtime_function("irgl_claim_lock"), [claims, element, prio]
        )
        then_block.add_op(scf.YieldOp(held))
        else_block.add_op(scf.YieldOp(carried[0]))
        return [
            inner.op(
                scf.IfOp(
                    carried[0], [IntegerType(1)], Region(then_block), Region(else_block)
                )
            )
        ]

    (held,) = _for_each_element(slow, op, lock_rest, [true])
    slow_block.add_op(scf.YieldOp(held))
    fast_block = Block()
    fast_block.add_op(scf.YieldOp(true))
    taken = at.op(
        scf.IfOp(fast, [IntegerType(1)], Region(fast_block), Region(slow_block))
    )

    # commit: every cell, unless a higher priority took it meanwhile (one
    # CAS each, issued back to back like the fast path's)
    commit_block = Block()
    commit_at = at.nested(InsertPoint.at_end(commit_block))
    commit_all = all_of("irgl_claim_commit")
    (committed,) = _for_each_element(commit_at, op, commit_all, [true])
    commit_block.add_op(scf.YieldOp(committed))
    gave_up_block = Block()
    gave_up_block.add_op(scf.YieldOp(taken))
    won = at.op(
        scf.IfOp(taken, [IntegerType(1)], Region(commit_block), Region(gave_up_block))
    )

    body = take_body(op.body)
    each("irgl_claim_unlock", at.nested(InsertPoint.before(body.last_op)))  # type: ignore[arg-type]
    lost_block = Block()
    each("irgl_claim_unlock", at.nested(InsertPoint.at_end(lost_block)))
    else_region = _else_region(op)
    if else_region is not None:
        for inner_op in list(else_region.block.ops):
            inner_op.detach()
            lost_block.add_op(inner_op)
    else:
        lost_block.add_op(scf.YieldOp())
    at.stmt(scf.IfOp(won, [], Region(body), Region(lost_block)))


def _unroll_loops(op: ExclusiveOp, unroll: int) -> None:
    """`#pragma unroll N` (`irgl_rt.unroll`) on the `scf.for` loops of an
    Exclusive's body: a critical section runs alone where its contenders
    wait for it (a drain's one-item windows), and its loops' iterations are
    then limited by their loads' latency, not by other threads."""
    for inner in op.body.walk():
        if isinstance(inner, scf.ForOp) and UNROLL_ATTR not in inner.attributes:
            inner.attributes[UNROLL_ATTR] = IntegerAttr(unroll, i64)


def _else_region(op: ExclusiveOp) -> Region | None:
    if not op.else_body.blocks:
        return None
    return Region(take_body(op.else_body))


class LowerExclusive(RewritePattern):
    """`irgl_rt.collective` around an Exclusive → the claim protocol (claim
    locks where the collective is marked `locks`)."""

    def __init__(
        self,
        hashed_priority: bool = False,
        sized_priority: bool = False,
        alone_wins: bool = True,
        unroll: int = 1,
        warp_alone: bool = False,
        nested: bool = True,
        block_claims: int = 0,
    ):
        self.nested = nested
        self.block_claims = block_claims
        self.hashed_priority = hashed_priority
        self.sized_priority = sized_priority
        self.alone_wins = alone_wins
        self.unroll = unroll
        self.warp_alone = warp_alone

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CollectiveOp, rewriter: PatternRewriter) -> None:
        exclusive = op.inner
        if not isinstance(exclusive, ExclusiveOp):
            return
        at = LoweringBuilder(
            InsertPoint.before(op), table=symbol_table_of(op), rewriter=rewriter
        )
        if LOCKS_ATTR in op.attributes:
            _lower_exclusive_locked(exclusive, op.rank, at)
        else:
            _lower_exclusive(
                exclusive,
                op.active,
                op.rank,
                at,
                self.hashed_priority,
                self.sized_priority,
                op.alone if self.alone_wins else None,
                self.unroll,
                self.warp_alone,
                self.nested,
                self.block_claims,
            )
        rewriter.erase(op, safe_erase=False)


@dataclass(frozen=True)
class ConvertIrglExclusive(ModulePass):
    """Lower Exclusives (in `irgl_rt.collective`, made by convert-irgl-loops)
    to the three-phase claim protocol (see the module docstring)."""

    name = "convert-irgl-exclusive"

    hashed_priority: bool = False
    """Contenders' priorities are a hash of their rank, not the rank."""

    sized_priority: bool = False
    """Contenders claiming more elements come first (the bit length of the
    claim's size), then a hash of the rank (`irgl_claim_priority`): a hub's
    neighbourhood wins its first round instead of being claimed again and
    again, a chain of neighbourhoods is not won only at its end."""

    alone_wins: bool = True
    """A contender alone in its launch (a collective's `alone`: the ForAll
    has one iteration, e.g. a drain's window of one item) wins without
    claiming its elements."""

    unroll: int = 1
    """`#pragma unroll` on the `scf.for` loops of an Exclusive's body (1:
    none): a critical section that runs alone (a drain's one-item windows)
    is one thread's loop, limited by its loads' latency."""

    warp_alone: bool = False
    """A contender alone in its launch runs its body on its warp, the body's
    reduction loops split over the lanes, where the body allows it; so does
    a winner of an Exclusive marked `irgl.footprint` that claims at least
    `WARP_CLAIMS` elements (each warp runs its winners' bodies in turn:
    `emit_warp_each`; colour on RMAT-18, one H200: 287 -> 178 ms)
    (lowering/warp_alone.py; with `alone_wins`), in a noinline device
    function of its own. On in lower-irgl (`exclusive_warp`): colour on
    RMAT-18 4.4x faster on an H200 (inlined into the control kernel it was
    1.6x slower: the shared path spilled)."""

    block_claims: int = 0
    """With `warp_alone`, a winner of an Exclusive marked `irgl.footprint`
    that claims at least this many elements has its whole block run its
    body (each block runs such winners' bodies in turn, the reduction loops
    split over its threads: `emit_block_each`; 0: never). A hub of RMAT's
    core often wins alone in a drain's window, where a warp would scan its
    neighbours while the block's other warps wait."""

    nested_claims: bool = True
    """An Exclusive marked `irgl.footprint` walks the edges it claims as
    edge loops shared across the block or the warp (left to
    convert-irgl-nested-edges, which runs after this pass); false: each
    contender walks its own."""

    def __post_init__(self) -> None:
        if self.unroll < 1:
            raise DiagnosticException(
                f"convert-irgl-exclusive: unroll must be at least 1, got {self.unroll}"
            )
        if self.block_claims < 0:
            raise DiagnosticException(
                "convert-irgl-exclusive: block_claims must be at least 0, "
                f"got {self.block_claims}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # each rewrite restructures a whole round body: apply the pattern
        # once per collective op rather than through a worklist driver
        pattern = LowerExclusive(
            self.hashed_priority,
            self.sized_priority,
            self.alone_wins,
            self.unroll,
            self.warp_alone,
            self.nested_claims,
            self.block_claims,
        )
        for collective in [o for o in op.walk() if isinstance(o, CollectiveOp)]:
            pattern.match_and_rewrite(collective, PatternRewriter(collective))
        for inner in op.walk():
            if isinstance(inner, ExclusiveOp):
                fail(
                    inner,
                    "'irgl.exclusive' must be lowered with its outermost ForAll: "
                    "run convert-irgl-loops first",
                )
