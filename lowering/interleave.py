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

Copy 0 is always a real iteration. A later copy past the end runs with
copy 0's index: only operations that cannot go wrong run unguarded for it —
arith operations, graph accessors and `memref.load` whose address operands
are derived from the index through arith and graph accessors only (so they
equal copy 0's, which were valid) — everything else (stores, atomics,
pushes, regions, calls, loads at addresses computed from loaded values) is
guarded by `%valid_k`; a guarded operation's results are zero when it did
not run, and nothing unguarded that reads memory depends on them. Each
copy runs its own operations in program order, so every iteration does
exactly what it did before; only the interleaving across iterations
changes, which ForAll allows. The loads of all copies are issued together.

A reducing loop carries its partial: each copy's yielded value is combined
into it (a copy past the end contributes the identity).
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
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
from lowering.builders import LoweringBuilder
from lowering.reductions import combine, identity

#: Reads of the (immutable) graph: the same result for the same operands.
_GRAPH_READS = (FirstEdgeOp, LastEdgeOp, DegreeOp, EdgeDstOp, EdgeWeightOp)


class NotInterleavable(Exception):
    """The loop body holds an operation that a copy past the end cannot skip
    (a result of a type without a zero)."""


def _zero(type_: Attribute) -> Operation:
    """A zero of `type_`: the result of a guarded operation that did not run."""
    if isinstance(type_, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, type_))
    if isinstance(type_, IntegerType | IndexType):
        return arith.ConstantOp(IntegerAttr(0, type_))
    raise NotInterleavable(f"no zero of {type_}")


def check_interleavable(body: Block) -> None:
    """Raise NotInterleavable unless every top-level operation of `body` can
    be guarded (its results have zeros)."""
    for op in body.ops:
        if isinstance(op, YieldOp) or op.dialect_name() == "arith":
            continue  # never guarded
        for result in op.results:
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
    if op.dialect_name() == "arith":
        return True, operands_safe
    return False, False


def interleaved_loop(
    at: LoweringBuilder,
    body: Block,
    lo: SSAValue,
    hi: SSAValue,
    step: int,
    copies: int,
    reduction: tuple[str, SSAValue] | None = None,
) -> scf.ForOp:
    """The `scf.for` that runs the ForAll body `body` (`^bb(%e)`, ending in
    `irgl.yield` of nothing or, with `reduction` = (kind, initial partial),
    of the iteration's value) over `[lo, hi)` in steps of `step`, `copies`
    iterations interleaved (see the module docstring). Call
    check_interleavable first. `body` is cloned, not moved."""
    index_type = IndexType()
    carried = [] if reduction is None else [reduction[1].type]
    block = Block(arg_types=[index_type, *carried])
    b = at.nested(InsertPoint.at_end(block))
    first = block.args[0]
    runs = [_Copy(first, None)]
    for k in range(1, copies):
        e_k = b.op(arith.AddiOp(first, b.index(k * step)))
        valid = b.op(arith.CmpiOp(e_k, hi, "slt"))
        runs.append(_Copy(b.op(arith.SelectOp(valid, e_k, first)), valid))
    argument = body.args[0]
    for run in runs:
        run.mapping[argument] = run.index
        run.safe.add(run.index)
    terminator = body.last_op
    assert isinstance(terminator, YieldOp)
    for op in body.ops:
        if op is terminator:
            continue
        for run in runs:
            unguarded, safe = (
                (True, True) if run.valid is None else _speculate(op, run, body)
            )
            if unguarded:
                clone = b.insert(op.clone(value_mapper=run.mapping))
                results = list(clone.results)
            else:
                assert run.valid is not None
                then = Block()
                clone = op.clone(value_mapper=run.mapping)
                then.add_op(clone)
                then.add_op(scf.YieldOp(*clone.results))
                other = Block()
                other_values: list[SSAValue] = []
                for result in op.results:
                    zero = _zero(result.type)
                    other.add_op(zero)
                    other_values.append(zero.results[0])
                other.add_op(scf.YieldOp(*other_values))
                guarded = b.insert(
                    scf.IfOp(
                        run.valid,
                        [r.type for r in op.results],
                        Region(then),
                        Region(other),
                    )
                )
                results = list(guarded.results)
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
    stride = at.index(step * copies)
    initial = [] if reduction is None else [reduction[1]]
    return scf.ForOp(lo, hi, stride, initial, Region(block))
