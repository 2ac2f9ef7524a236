"""Interleaving the iterations of an edge loop that one thread walks.

A thread that walks a small node's edges one after another waits for each
edge's loads (the edge's destination, then the data at it) before it issues
the next edge's: a chain of dependent memory round trips, the whole cost of
a level of a high-diameter traversal. The iterations of an `irgl.forall`
are independent by the specification (they may run in any order, or at
once), so a thread may run `copies` of them interleaved, operation by
operation:

    scf.for %e = %lo to %hi step (copies * step) {
      copy k (k = 1 ..): %e_k = %e + k * step, %valid_k = %e_k < %hi,
                         %i_k = select(%valid_k, %e_k, %e)
      for every top-level operation X of the body, for every copy k:
        X with copy k's values            (copy 0, and X safe to speculate)
        scf.if %valid_k { X with copy k's values }              (otherwise)
    }

An `scf.if` without results or else branch is not one unit: its
operations are interleaved too, each under the conjunction of the
conditions around it (and `%valid_k`), so that e.g. the atomics of all
copies that found an unvisited node are in flight together instead of one
copy's exchange and push after another's.

Copy 0 is always a real iteration. A later copy past the end runs with
copy 0's index: only operations that cannot go wrong run unguarded for it
— arith operations defined for every operand (not divisions and shifts),
graph accessors, and `memref.load`s whose address operands are derived
from the index through those only (so they equal copy 0's, which were
valid). Everything else (stores, atomics, pushes, regions, calls, loads at
addresses computed from loaded values, divisions, shifts) is guarded by
`%valid_k`; a guarded operation's used results are zero when it did not
run, and nothing unguarded that reads memory depends on them. Inside a
flattened `scf.if`, the total arith operations run unguarded (on zeros
when the condition is false: harmless) and everything else under the
guard. Each copy runs its own operations in program order, so every
iteration does exactly what it did before; only the interleaving across
iterations changes, which ForAll allows. The loads of all copies are
issued together.

A reducing loop carries its partial: each copy's yielded value is combined
into it (a copy past the end contributes the identity).
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irgl_dialect.graph import (
    DegreeOp,
    EdgeDstOp,
    EdgeWeightOp,
    FirstEdgeOp,
    LastEdgeOp,
)
from irgl_dialect.kernels import YieldOp
from lowering.builders import LoweringBuilder, zero_of
from lowering.reductions import combine, identity

#: Reads of the (immutable) graph: the same result for the same operands.
_GRAPH_READS = (FirstEdgeOp, LastEdgeOp, DegreeOp, EdgeDstOp, EdgeWeightOp)


#: Integer arith whose C++ form is undefined for some operands (a zero
#: divisor, a shift past the width): never run where the original would not
#: have run it, so that nvcc cannot draw conclusions from it.
_PARTIAL_ARITH = (
    arith.DivSIOp,
    arith.DivUIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
    arith.FloorDivSIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.ShLIOp,
    arith.ShRSIOp,
    arith.ShRUIOp,
)


def _total_arith(op: Operation) -> bool:
    """An arith operation defined for every operand (safe to run on zeros)."""
    return (
        op.dialect_name() == "arith"
        and not op.regions
        and not isinstance(op, _PARTIAL_ARITH)
    )


class NotInterleavable(Exception):
    """The loop body holds an operation that a copy past the end cannot skip
    (a result of a type without a zero)."""


def _zero(type_: Attribute) -> Operation:
    """A zero of `type_`: the result of a guarded operation that did not run."""
    zero = zero_of(type_)
    if zero is None:
        raise NotInterleavable(f"no zero of {type_}")
    return zero


def _is_plain_if(op: Operation) -> bool:
    """An `scf.if` without results and without an else branch."""
    return (
        isinstance(op, scf.IfOp)
        and not op.results
        and not any(
            o
            for b in op.false_region.blocks
            for o in b.ops
            if not isinstance(o, scf.YieldOp)
        )
    )


_Item = tuple[Operation, tuple[SSAValue, ...]]


def _flatten(block: Block, conditions: tuple[SSAValue, ...] = ()) -> list[_Item]:
    """The operations of `block` in program order, each with the conditions
    of the plain `scf.if`s around it (which are not items themselves)."""
    items: list[_Item] = []
    for op in block.ops:
        if isinstance(op, YieldOp | scf.YieldOp) and op is block.last_op:
            continue
        if isinstance(op, scf.IfOp) and _is_plain_if(op):
            items += _flatten(op.true_region.block, (*conditions, op.cond))
        else:
            items.append((op, conditions))
    return items


def check_interleavable(body: Block) -> None:
    """Raise NotInterleavable unless every operation that may be guarded can
    be (its results have zeros)."""
    for op, _ in _flatten(body):
        if _total_arith(op):
            continue  # never guarded
        for result in op.results:
            if result.uses:
                _zero(result.type)


class _Copy:
    """One interleaved iteration: its values, its guard, and which of its
    values equal copy 0's by construction (safe as addresses)."""

    def __init__(self, index: SSAValue, valid: SSAValue | None) -> None:
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.valid = valid
        self.index = index
        self.safe: set[SSAValue] = set()


def _defined_in(value: SSAValue, body: Block) -> bool:
    owner = value.owner
    while isinstance(owner, Operation):
        if owner.parent_block() is body:
            return True
        parent = owner.parent_op()
        if parent is None:
            return False
        owner = parent
    return owner is body


def _speculate(op: Operation, copy: _Copy, body: Block) -> tuple[bool, bool]:
    """(may `op` run unguarded for a copy past the end, are its results safe
    addresses)."""
    if op.regions:
        return False, False

    def safe(value: SSAValue) -> bool:
        return not _defined_in(value, body) or copy.mapping[value] in copy.safe

    operands_safe = all(safe(v) for v in op.operands)
    if isinstance(op, _GRAPH_READS):
        return operands_safe, operands_safe
    if isinstance(op, memref.LoadOp):
        return operands_safe, False
    if _total_arith(op):
        return True, operands_safe
    return False, False


def interleaved_loop(
    at: LoweringBuilder,
    body: Block,
    lo: SSAValue,
    hi: SSAValue,
    step: int | SSAValue,
    copies: int,
    reduction: tuple[str, SSAValue] | None = None,
    values: dict[SSAValue, SSAValue] | None = None,
) -> scf.ForOp:
    """The `scf.for` that runs the ForAll body `body` (`^bb(%e)`, ending in
    `irgl.yield` of nothing or, with `reduction` = (kind, initial partial),
    of the iteration's value) over `[lo, hi)` in steps of `step`, `copies`
    iterations interleaved (see the module docstring). `values` replaces
    values from outside the body in the clones (e.g. by their broadcasts in
    a shared phase). Call check_interleavable first. `body` is cloned, not
    moved."""
    index_type = IndexType()
    carried = [] if reduction is None else [reduction[1].type]
    block = Block(arg_types=[index_type, *carried])
    b = at.nested(InsertPoint.at_end(block))
    first = block.args[0]
    runs = [_Copy(first, None)]

    def times(k: int) -> SSAValue:
        """k * step as an index value."""
        if isinstance(step, int):
            return b.index(k * step)
        return step if k == 1 else b.op(arith.MuliOp(step, b.index(k)))

    for k in range(1, copies):
        e_k = b.op(arith.AddiOp(first, times(k)))
        valid = b.op(arith.CmpiOp(e_k, hi, "slt"))
        runs.append(_Copy(b.op(arith.SelectOp(valid, e_k, first)), valid))
    argument = body.args[0]
    for run in runs:
        run.mapping.update(values or {})
        run.mapping[argument] = run.index
        run.safe.add(run.index)
    terminator = body.last_op
    assert isinstance(terminator, YieldOp)
    guards: dict[tuple[int, tuple[SSAValue, ...]], SSAValue] = {}

    def guard(k: int, conditions: tuple[SSAValue, ...]) -> SSAValue:
        """Copy k's `valid_k && conditions...` (built once per copy and set)."""
        key = (k, conditions)
        if key not in guards:
            run = runs[k]
            if not conditions:
                assert run.valid is not None
                guards[key] = run.valid
            else:
                last = run.mapping.get(conditions[-1], conditions[-1])
                outer = conditions[:-1]
                guards[key] = (
                    last
                    if not outer and run.valid is None
                    else b.op(arith.AndIOp(guard(k, outer), last))
                )
        return guards[key]

    for op, conditions in _flatten(body):
        for k, run in enumerate(runs):
            if not conditions:
                unguarded, safe = (
                    (True, True) if run.valid is None else _speculate(op, run, body)
                )
            else:
                unguarded = _total_arith(op)
                safe = False
            if unguarded:
                clone = b.insert(op.clone(value_mapper=run.mapping))
                results = list(clone.results)
            else:
                # only the results the body uses leave the guard (zeros
                # when it did not run)
                used = [i for i, r in enumerate(op.results) if r.uses]
                then = Block()
                clone = op.clone(value_mapper=run.mapping)
                then.add_op(clone)
                then.add_op(scf.YieldOp(*(clone.results[i] for i in used)))
                other = None
                if used:
                    zeros = [_zero(op.results[i].type) for i in used]
                    yields = scf.YieldOp(*(z.results[0] for z in zeros))
                    other = Region(Block([*zeros, yields]))
                guarded = b.insert(
                    scf.IfOp(
                        guard(k, conditions),
                        [op.results[i].type for i in used],
                        Region(then),
                        other,
                    )
                )
                results = list(clone.results)  # unused outside the guard
                for i, value in zip(used, guarded.results, strict=True):
                    results[i] = value
            for old, new in zip(op.results, results, strict=True):
                run.mapping[old] = new
                new.name_hint = old.name_hint
                if safe and unguarded:
                    run.safe.add(new)
    if reduction is None:
        block.add_op(scf.YieldOp())
    else:
        kind = reduction[0]
        (value,) = terminator.values
        partial = block.args[1]
        for run in runs:
            mine = run.mapping.get(value, value)
            if run.valid is not None:
                mine = b.op(
                    arith.SelectOp(run.valid, mine, b.op(identity(kind, value.type)))
                )
            partial = b.op(combine(kind, partial, mine))
        block.add_op(scf.YieldOp(partial))
    stride = (
        at.index(step * copies)
        if isinstance(step, int)
        else at.op(arith.MuliOp(step, at.index(copies)))
    )
    initial = [] if reduction is None else [reduction[1]]
    return scf.ForOp(lo, hi, stride, initial, Region(block))
