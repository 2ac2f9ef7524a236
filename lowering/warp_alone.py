"""A critical section that runs alone, run by its thread's warp (or block).

Where an Exclusive's contender is alone in its launch (a collective's
`alone`: a retry drain's one-item windows), its body is one thread's code
while the other threads of the block wait at the next barrier; a loop over
a hub's neighbours is then one thread's chain of dependent loads.
convert-irgl-exclusive (`warp_alone`) lets the 32 lanes of that thread's
warp run the body together instead:

- every lane runs the body's code with the contender's values (the values
  it uses from outside the body are broadcast from the contender's lane,
  `irgl_warp_shfl_<T>`), so every lane computes the same values and takes
  the same branches;
- a *reduction loop* (an `scf.for` whose body only reads memory and whose
  every carried value is combined with one of `ori andi xori addi minsi
  maxsi`, used nowhere else) is split over the lanes: lane l runs
  iterations l, l + 32, ..., from the combination's identity, and
  `irgl_warp_reduce_<kind>_<T>` totals the lanes' partials, which are then
  combined with the loop's initial values. Integer combinations are
  associative and commutative, so the total is the one thread's result;
- every operation that writes memory, or whose effects are unknown (a
  runtime call, C text), runs on the contender's lane only, between two
  `irgl_warp_sync` (every lane's earlier reads are done before it, its
  write is visible to every lane after it); its results are broadcast.

A winner of a footprint claim with a very large footprint
(`emit_block_each`) has the whole block run its body the same way: the
values are broadcast from its thread (`irgl_block_bcast_<T>`), a reduction
loop is split over the block's threads and totalled with
`irgl_block_reduce_<kind>_<T>`, and a write runs on its thread between two
`irgl_block_sync`.

A body qualifies only where it has a reduction loop (otherwise the warp
would only repeat the thread's work), every region in it belongs to an
`scf.if`/`scf.for`/`scf.while`, nothing in it allocates, and every value
the lanes must share has a broadcastable type (`BROADCAST_TYPES`) or is a
kernel argument or a constant; otherwise the thread runs it alone as
before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, func, gpu, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IntegerType,
    UnitAttr,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator, MemoryEffectKind, get_effects

from irgl_dialect.runtime import NOINLINE_ATTR, UNROLL_ATTR
from irgl_dialect.runtime_library import (
    BROADCAST_TYPES,
    RuntimeFunction,
    overload,
    runtime_function,
)
from lowering.builders import LoweringBuilder, unique_name, zero_of
from lowering.reductions import block_reduce, combine, identity, warp_reduce

#: Lanes of a warp.
WARP = 32
#: The mask of a whole warp, as the runtime's i32.
FULL_MASK = -1

#: The combining operations a split reduction loop may use, by runtime kind.
_COMBINES: dict[type[arith.SignlessIntegerBinaryOperation], str] = {
    arith.OrIOp: "or",
    arith.AndIOp: "and",
    arith.XOrIOp: "xor",
    arith.AddiOp: "add",
    arith.MinSIOp: "min",
    arith.MaxSIOp: "max",
}

_CONTROL = (scf.IfOp, scf.ForOp, scf.WhileOp)
#: Dialects whose operations compute values and touch no memory.
_PURE_DIALECTS = frozenset({"arith", "math"})


def _reads_only(op: Operation) -> bool:
    """Whether `op` (and everything nested in it) at most reads memory."""
    if isinstance(op, _CONTROL):
        return all(_reads_only(inner) for r in op.regions for inner in r.ops)
    if op.regions:
        return False
    if op.name.split(".", 1)[0] in _PURE_DIALECTS:
        return True  # some (arith.extsi) declare no effects at all
    effects = get_effects(op)
    return effects is not None and all(e.kind == MemoryEffectKind.READ for e in effects)


def reduction_kinds(loop: scf.ForOp) -> list[str] | None:
    """The kind of each carried value of a reduction loop (see the module
    docstring), or None where `loop` is not one."""
    if not loop.iter_args or not all(_reads_only(op) for op in loop.body.block.ops):
        return None
    block = loop.body.block
    yield_op = block.last_op
    assert isinstance(yield_op, scf.YieldOp)
    kinds: list[str] = []
    for acc, step in zip(block.args[1:], yield_op.operands, strict=True):
        combine = step.owner
        if not isinstance(combine, arith.SignlessIntegerBinaryOperation):
            return None
        kind = _COMBINES.get(type(combine))
        if (
            kind is None
            or combine.parent_block() is not block
            or not acc.has_one_use()
            or acc not in combine.operands
            or not step.has_one_use()
            or overload(f"irgl_warp_reduce_{kind}", acc.type) is None
            or overload(f"irgl_block_reduce_{kind}", acc.type) is None
        ):
            return None
        kinds.append(kind)
    return kinds


def has_reduction_loop(region: Region) -> bool:
    """Whether a reduction loop is somewhere in `region`."""
    return any(
        isinstance(op, scf.ForOp) and reduction_kinds(op) is not None
        for op in region.walk()
    )


def _is_uniform_outside(value: SSAValue) -> bool:
    """A value every lane already has: a constant, or a kernel argument."""
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        return isinstance(owner, func.FuncOp | gpu.FuncOp)
    return isinstance(value.owner, arith.ConstantOp)


def _is_terminator(op: Operation) -> bool:
    return op.has_trait(IsTerminator)


def _is_call(op: Operation | None, name: str) -> bool:
    return isinstance(op, func.CallOp) and op.callee.string_value() == name


def _outside_values(block: Block) -> list[tuple[Operation, int, SSAValue]]:
    """(user, operand index, value) of every use in `block` (recursively)
    of a value defined outside it."""
    inside: set[SSAValue] = set(block.args)
    for op in block.walk():
        inside.update(op.results)
        for r in op.regions:
            for inner in r.blocks:
                inside.update(inner.args)
    return [
        (op, i, v)
        for op in block.walk()
        for i, v in enumerate(op.operands)
        if v not in inside
    ]


def _ops_suitable(block: Block) -> bool:
    """The operation rules of the module docstring, recursively."""
    for op in block.ops:
        if _is_terminator(op):
            continue
        if isinstance(op, _CONTROL):
            if not all(_ops_suitable(b) for r in op.regions for b in r.blocks):
                return False
        elif op.regions:
            return False
        elif not _reads_only(op):
            effects = get_effects(op)
            if effects and any(e.kind == MemoryEffectKind.ALLOC for e in effects):
                return False
            if any(r.type not in BROADCAST_TYPES for r in op.results):
                return False
    return True


def warp_alone_suitable(body: Region) -> bool:
    """Whether an Exclusive's body can run on its contender's warp."""
    if len(body.blocks) != 1 or not has_reduction_loop(body):
        return False
    block = body.block
    return _ops_suitable(block) and all(
        _is_uniform_outside(v) or v.type in BROADCAST_TYPES
        for _, _, v in _outside_values(block)
    )


@dataclass
class _Team:
    """Threads that run one contender's code together: a warp or the block.
    Its values live where the team's copy of the body starts."""

    lead: SSAValue
    """Whether this thread is the contender's."""
    rank: SSAValue
    """This thread's index in the team (index)."""
    size: SSAValue
    """The team's threads (index)."""
    share: Callable[[LoweringBuilder, SSAValue], SSAValue]
    """The contender's value, on every thread of the team."""
    total: Callable[[LoweringBuilder, str, SSAValue], SSAValue]
    """The total of a reduction kind's partials over the team."""
    sync: RuntimeFunction
    """The barrier of the team (called with `sync_args`)."""
    sync_args: list[SSAValue]


def _warp_team(at: LoweringBuilder, mask: SSAValue) -> _Team:
    """The warp, for the contender on the lowest lane of `mask`."""
    full = at.const(FULL_MASK, IntegerType(32))
    src = at.call_value(runtime_function("irgl_warp_first"), [mask])

    def share(b: LoweringBuilder, value: SSAValue) -> SSAValue:
        fn = overload("irgl_warp_shfl", value.type)
        assert fn is not None, f"no broadcast of {value.type}"
        return b.call_value(fn, [full, value, src])

    return _Team(
        lead=at.call_value(runtime_function("irgl_warp_is_lane"), [src]),
        rank=at.call_value(runtime_function("irgl_warp_rank"), [full]),
        size=at.index(WARP),
        share=share,
        total=lambda b, kind, v: b.call_value(warp_reduce(kind, v.type), [full, v]),
        sync=runtime_function("irgl_warp_sync"),
        sync_args=[full],
    )


def _thread_id(at: LoweringBuilder) -> SSAValue:
    return at.op(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X)))


def _is_thread(at: LoweringBuilder, tid: SSAValue, owner: SSAValue) -> SSAValue:
    """Whether `tid` (this thread's index in the block) is `owner` (i32)."""
    return at.op(arith.CmpiOp(at.op(arith.IndexCastOp(tid, i32)), owner, "eq"))


def _block_team(at: LoweringBuilder, owner: SSAValue) -> _Team:
    """The block, for the contender on thread `owner` (i32)."""
    tid = _thread_id(at)
    mine = _is_thread(at, tid, owner)

    def share(b: LoweringBuilder, value: SSAValue) -> SSAValue:
        fn = overload("irgl_block_bcast", value.type)
        assert fn is not None, f"no broadcast of {value.type}"
        return b.call_value(fn, [value, owner])

    return _Team(
        lead=mine,
        rank=tid,
        size=at.op(gpu.BlockDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X))),
        share=share,
        total=lambda b, kind, v: b.call_value(block_reduce(kind, v.type), [v]),
        sync=runtime_function("irgl_block_sync"),
        sync_args=[],
    )


class _TeamBody:
    """Rewrites a detached copy of the body for a team (module docstring)."""

    def __init__(self, at: LoweringBuilder, team: _Team):
        self.at = at  # where the broadcasts of outside values go
        self.team = team

    def share_outside(self, block: Block) -> None:
        """Replace the non-uniform values defined outside `block` and used
        in it by broadcasts at `self.at`."""
        shared: dict[SSAValue, SSAValue] = {}
        for op, i, value in _outside_values(block):
            if _is_uniform_outside(value):
                continue
            if value not in shared:
                shared[value] = self.team.share(self.at, value)
            op.operands[i] = shared[value]

    def rewrite(self, block: Block) -> None:
        """Rewrite the operations of `block` (recursively) for the warp."""
        for op in list(block.ops):
            if _is_terminator(op):
                continue
            if isinstance(op, scf.ForOp) and (kinds := reduction_kinds(op)):
                self._split(op, kinds)
            elif isinstance(op, _CONTROL):
                for r in op.regions:
                    for inner in r.blocks:
                        self.rewrite(inner)
            elif not _reads_only(op):
                self._on_lead(op)

    def _split(self, loop: scf.ForOp, kinds: list[str]) -> None:
        """Thread r of the team runs iterations r, r + size, ... from the
        identities; the partials are totalled and combined with the initial
        values."""
        b = LoweringBuilder(InsertPoint.before(loop), table=self.at.table)
        offset = b.op(arith.MuliOp(self.team.rank, loop.step))
        first = b.op(arith.AddiOp(loop.lb, offset))
        stride = b.op(arith.MuliOp(loop.step, self.team.size))
        loop.operands[0] = first
        loop.operands[2] = stride
        inits = list(loop.iter_args)
        for i, (kind, init) in enumerate(zip(kinds, inits, strict=True)):
            loop.operands[3 + i] = b.op(identity(kind, init.type))
        loop.attributes.pop(UNROLL_ATTR, None)
        after = LoweringBuilder(InsertPoint.after(loop), table=self.at.table)
        for kind, init, partial in zip(kinds, inits, list(loop.results), strict=True):
            uses = list(partial.uses)
            total = self.team.total(after, kind, partial)
            combined = after.op(combine(kind, init, total))
            for use in uses:
                use.operation.operands[use.index] = combined

    def _on_lead(self, op: Operation) -> None:
        """`op` on the contender's lane only, between two warp syncs, its
        results broadcast."""
        sync, args = self.team.sync, self.team.sync_args
        b = LoweringBuilder(InsertPoint.before(op), table=self.at.table)
        if not _is_call(op.prev_op, sync.name):  # one between two such ops
            b.call(sync, args)
        types = [r.type for r in op.results]
        then_block = Block()
        else_region: Region | None = None
        if types:
            else_block = Block()
            placeholders = LoweringBuilder(InsertPoint.at_end(else_block))
            zeros = [placeholders.op(zero_of(t)) for t in types]  # type: ignore[arg-type]
            else_block.add_op(scf.YieldOp(*zeros))
            else_region = Region(else_block)
        uses = [list(r.uses) for r in op.results]
        guard = scf.IfOp(self.team.lead, types, Region(then_block), else_region)
        b.stmt(guard)
        op.detach()
        then_block.add_op(op)
        then_block.add_op(scf.YieldOp(*op.results))
        after = LoweringBuilder(InsertPoint.after(guard), table=self.at.table)
        shared = [self.team.share(after, r) for r in guard.results]
        after.call(sync, args)
        for result_uses, value in zip(uses, shared, strict=True):
            for use in result_uses:
                use.operation.operands[use.index] = value


def emit_warp_alone(body: Region, active: SSAValue, at: LoweringBuilder) -> None:
    """At `at`, which every thread of the block reaches together: the warp of
    the one `active` thread runs a copy of the Exclusive's `body` (which
    `warp_alone_suitable` accepted), the other warps skip it. The warp's
    copy is a device function of its own (`_outline`)."""
    full = at.const(FULL_MASK, IntegerType(32))
    ballot = at.call_value(runtime_function("irgl_warp_ballot"), [full, active])
    has = at.op(arith.CmpiOp(ballot, at.const(0, IntegerType(32)), "ne"))
    call = _warp_copy(body, ballot, at)
    at.stmt(scf.IfOp(has, [], Region(Block([call, scf.YieldOp()]))))


def emit_warp_each(body: Region, chosen: SSAValue, at: LoweringBuilder) -> None:
    """At `at`, which every thread of the block reaches together: each warp
    runs a copy of the Exclusive's `body` (which `warp_alone_suitable`
    accepted) for each of its `chosen` threads in turn, the lowest lane
    first, as `emit_warp_alone` does for a lone contender (a device
    function called once per chosen lane: a ballot's mask, its lowest bit
    cleared after each call)."""
    full = at.const(FULL_MASK, IntegerType(32))
    i32_ = IntegerType(32)
    ballot = at.call_value(runtime_function("irgl_warp_ballot"), [full, chosen])
    before = Block(arg_types=[i32_])
    after = Block(arg_types=[i32_])
    loop = scf.WhileOp([ballot], [i32_], [before], [after])
    at.stmt(loop)
    cond = at.nested(InsertPoint.at_end(before))
    more = cond.op(arith.CmpiOp(before.args[0], cond.const(0, i32_), "ne"))
    cond.stmt(scf.ConditionOp(more, before.args[0]))
    mask = after.args[0]
    step = at.nested(InsertPoint.at_end(after))
    step.stmt(_warp_copy(body, mask, at))
    lower = step.op(arith.SubiOp(mask, step.const(1, i32_)))
    step.stmt(scf.YieldOp(step.op(arith.AndIOp(mask, lower))))


def emit_block_each(body: Region, chosen: SSAValue, at: LoweringBuilder) -> None:
    """At `at`, which every thread of the block reaches together: the whole
    block runs a copy of the Exclusive's `body` (which `warp_alone_suitable`
    accepted) for each of its `chosen` threads in turn, the highest thread
    first (`irgl_block_elect`), in a device function of its own."""
    i1_, i32_ = IntegerType(1), IntegerType(32)
    before = Block(arg_types=[i1_])
    after = Block(arg_types=[i1_, i32_])
    loop = scf.WhileOp([chosen], [i1_, i32_], [before], [after])
    at.stmt(loop)
    cond = at.nested(InsertPoint.at_end(before))
    owner = cond.call_value(runtime_function("irgl_block_elect"), [before.args[0]])
    more = cond.op(arith.CmpiOp(owner, cond.const(0, i32_), "sge"))
    cond.stmt(scf.ConditionOp(more, before.args[0], owner))
    want, elected = after.args
    step = at.nested(InsertPoint.at_end(after))
    step.stmt(
        _team_copy(body, lambda b: _block_team(b, elected), at, "irgl_block_alone")
    )
    mine = _is_thread(step, _thread_id(step), elected)
    step.stmt(scf.YieldOp(step.both(want, step.negate(mine))))


def _team_copy(
    body: Region,
    team_of: Callable[[LoweringBuilder], _Team],
    at: LoweringBuilder,
    name: str,
) -> func.CallOp:
    """A copy of `body` for the team `team_of` gives (its values broadcast
    from the contender's thread, `_TeamBody`), outlined into a device
    function named `name` and a number, of the symbol table `at` declares
    into; returns the call."""
    inner_block = Block()
    inner = at.nested(InsertPoint.at_end(inner_block))
    team = team_of(inner)
    copy = body.clone()
    fresh = copy.detach_block(0)
    rewriter = _TeamBody(inner, team)
    rewriter.share_outside(fresh)  # before the rewrite adds the team's values
    rewriter.rewrite(fresh)
    terminator = fresh.last_op
    assert terminator is not None and _is_terminator(terminator)
    terminator.detach()
    terminator.erase()
    for op in list(fresh.ops):
        op.detach()
        inner_block.add_op(op)
    return _outline(inner_block, at, name)


def _warp_copy(body: Region, mask: SSAValue, at: LoweringBuilder) -> func.CallOp:
    """The body for the warp of the lowest lane of `mask`."""
    return _team_copy(body, lambda b: _warp_team(b, mask), at, "irgl_warp_alone")


def _outline(block: Block, at: LoweringBuilder, prefix: str) -> func.CallOp:
    """`block`'s operations as a `func.func` (named `prefix` and a number)
    of the symbol table `at` declares into, marked `#irgl_rt.noinline`
    (`__noinline__`: the team's copy of the body does not take registers
    from the code around the
    call, which runs far more often), its parameters the values the
    operations use from outside; returns the call."""
    table = at.table
    assert table is not None
    outside: list[SSAValue] = []
    constants: list[arith.ConstantOp] = []
    for _, _, value in _outside_values(block):
        if isinstance(value.owner, arith.ConstantOp):
            if value.owner not in constants:
                constants.append(value.owner)
        elif value not in outside:
            outside.append(value)
    for constant in reversed(constants):  # copied in: not parameters
        copy = constant.clone()
        block.insert_op_before(copy, block.first_op)  # pyright: ignore[reportArgumentType]
        constant.result.replace_uses_with_if(
            copy.result,
            lambda use: block.is_ancestor(use.operation),  # pyright: ignore[reportUnknownLambdaType]
        )
    function_block = Block(arg_types=[v.type for v in outside])
    for value, arg in zip(outside, function_block.args, strict=True):
        arg.name_hint = value.name_hint
        value.replace_uses_with_if(
            arg,
            lambda use: block.is_ancestor(use.operation),  # pyright: ignore[reportUnknownLambdaType]
        )
    for op in list(block.ops):
        op.detach()
        function_block.add_op(op)
    function_block.add_op(func.ReturnOp())
    names = {
        op.sym_name.data
        for op in table.regions[0].block.ops
        if isinstance(op, func.FuncOp | gpu.FuncOp)
    }
    name = unique_name(names, prefix)
    function = func.FuncOp(
        name,
        FunctionType.from_lists([v.type for v in outside], []),
        Region(function_block),
        visibility="private",
    )
    function.attributes[NOINLINE_ATTR] = UnitAttr()
    table.regions[0].block.insert_op_before(function, table.regions[0].block.first_op)  # pyright: ignore[reportArgumentType]
    return func.CallOp(name, outside, [])
