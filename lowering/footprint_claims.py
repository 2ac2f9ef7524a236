"""The three-phase claim protocol over an Exclusive's footprint, with modes.

convert-irgl-exclusive lowers an Exclusive marked `irgl.footprint`
(irgl-exclusive-footprint) with these claims instead of its lock set's. Its
object is the kernel's claim cells, `2 * N + 2` i32 cells for a graph of
`N` nodes: `any[x] = cells[x]`, `writer[x] = cells[N + x]`, then a flag
`cells[2N]` and a cell `cells[2N + 1]` for elements out of range.

- race: a contender stores its priority into `any[x]` of each element, and
  into `writer[x]` if it writes `x`, else 0 (so that a cell it reads holds
  this round's value).
- settle (after a grid barrier): a contender that finds a cell not holding
  its priority (`any[x]`, and `writer[x]` of an element it writes) raises
  every cell it stored a priority in to its priority (atomicMax). Then
  `any[x]` holds the highest priority of the contenders on `x`, and
  `writer[x]` that of its writers (0 without one).
- check (after a grid barrier): a contender wins when `any[x]` is its
  priority on every element it writes (no higher contender touches it) and
  `writer[x]` is at most its priority on every element it reads (no higher
  writer). Two winners never share an element one of them writes, and the
  highest contender always wins.

An element at `N` or beyond (a value from outside the Exclusive not below
the node count; the edges' destinations always are) has no cells: its
contender sets the flag in the race, and every contender reads the flag
before settling. Then the round is decided by `cells[2N + 1]`: every
contender raises it to its priority, only the highest wins, and it clears
the flag and the cell before running its body (the others have read the
flag by then, and a cleared cell only makes them lose).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerType, i32
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irgl_dialect.graph import EdgeDstOp, NumNodesOp
from irgl_dialect.runtime_library import runtime_function
from lowering.builders import LoweringBuilder
from lowering.exclusive_footprint import EdgesElement, Footprint, NodeElement

#: (builder, element, whether the body writes it, carried) -> next carried.
Visit = Callable[[LoweringBuilder, SSAValue, bool, list[SSAValue]], list[SSAValue]]
#: (builder, carried) -> next carried, for an element out of range.
Outside = Callable[[LoweringBuilder, list[SSAValue]], list[SSAValue]]


def _if(
    at: LoweringBuilder,
    cond: SSAValue,
    then: Callable[[LoweringBuilder], list[SSAValue]],
    otherwise: Callable[[LoweringBuilder], list[SSAValue]] | None = None,
    types: list | None = None,
) -> list[SSAValue]:
    """`scf.if cond` with the two branches filled by `then` / `otherwise`."""
    then_block = Block()
    then_block.add_op(scf.YieldOp(*then(at.nested(InsertPoint.at_end(then_block)))))
    else_region = None
    if otherwise is not None:
        else_block = Block()
        else_block.add_op(
            scf.YieldOp(*otherwise(at.nested(InsertPoint.at_end(else_block))))
        )
        else_region = Region(else_block)
    op = scf.IfOp(cond, types or [], Region(then_block), else_region)
    at.stmt(op)
    return list(op.results)


class FootprintClaims:
    """The claims of one footprint Exclusive (see the module docstring)."""

    def __init__(self, footprint: Footprint, cells: SSAValue, at: LoweringBuilder):
        self.footprint = footprint
        self.cells = cells
        self.nodes = at.op(NumNodesOp(footprint.graph))
        self.flag = at.op(arith.MuliOp(self.nodes, at.index(2)))
        self.top = at.op(arith.AddiOp(self.flag, at.index(1)))
        self.prio: SSAValue | None = None
        self.crowd: SSAValue | None = None

    def count(self, at: LoweringBuilder) -> SSAValue:
        """How many elements the contender claims (sized priorities)."""
        total = at.index(0)
        for element in self.footprint.elements:
            if isinstance(element, NodeElement):
                more = at.index(1)
            else:
                more = at.op(arith.SubiOp(element.last, element.first))
            total = at.op(arith.AddiOp(total, more))
        return total

    def _each(
        self,
        at: LoweringBuilder,
        visit: Visit,
        init: list[SSAValue] | None = None,
        outside: Outside | None = None,
    ) -> list[SSAValue]:
        """Visit every element (an edges element: a loop over the edges);
        a node element out of range gets `outside` instead (or nothing)."""
        carried: list[SSAValue] = list(init or [])
        for element in self.footprint.elements:
            if isinstance(element, NodeElement):
                carried = self._in_range(
                    at, element.value, element.writes, visit, carried, outside
                )
                continue
            assert isinstance(element, EdgesElement)
            first, last = element.first, element.last
            block = Block(arg_types=[IndexType(), *[v.type for v in carried]])
            inner = at.nested(InsertPoint.at_end(block))
            dst = inner.op(EdgeDstOp(element.graph, block.args[0]))
            nexts = visit(inner, dst, element.writes, list(block.args[1:]))
            block.add_op(scf.YieldOp(*nexts))
            loop = scf.ForOp(first, last, at.index(1), carried, Region(block))
            at.stmt(loop)
            carried = [*loop.results]
        return carried

    def _in_range(
        self,
        at: LoweringBuilder,
        x: SSAValue,
        writes: bool,
        visit: Visit,
        carried: list[SSAValue],
        outside: Outside | None = None,
    ) -> list[SSAValue]:
        """`visit` where `x` has cells; `outside` (or nothing) where not."""
        below = at.op(arith.CmpiOp(x, self.nodes, "slt"))
        ok = at.both(at.op(arith.CmpiOp(x, at.index(0), "sge")), below)
        return _if(
            at,
            ok,
            lambda b: visit(b, x, writes, carried),
            lambda b: outside(b, carried) if outside else carried,
            [v.type for v in carried],
        )

    def _write(self, at: LoweringBuilder, i: SSAValue, value: SSAValue) -> None:
        at.call(runtime_function("irgl_claim_write"), [self.cells, i, value])

    def _raise(self, at: LoweringBuilder, i: SSAValue) -> None:
        assert self.prio is not None
        at.call(runtime_function("irgl_claim_raise"), [self.cells, i, self.prio])

    def _read(self, at: LoweringBuilder, i: SSAValue) -> SSAValue:
        return at.call_value(runtime_function("irgl_claim_read"), [self.cells, i])

    def _writer(self, at: LoweringBuilder, x: SSAValue) -> SSAValue:
        return at.op(arith.AddiOp(self.nodes, x))

    def race(self, at: LoweringBuilder) -> None:
        """Phase 1 of a contender."""
        prio = self.prio
        assert prio is not None

        def visit(b: LoweringBuilder, x: SSAValue, writes: bool, _: list) -> list:
            self._write(b, x, prio)
            self._write(b, self._writer(b, x), prio if writes else b.const(0, i32))
            return []

        def mark(b: LoweringBuilder, _: list) -> list:
            self._write(b, self.flag, b.const(1, i32))
            return []

        self._each(at, visit, outside=mark)

    def read_crowd(self, at: LoweringBuilder) -> None:
        """After the race's barrier, every thread: whether an element was
        out of range this round."""
        flag = self._read(at, self.flag)
        self.crowd = at.op(arith.CmpiOp(flag, at.const(0, i32), "ne"))

    def settle(self, at: LoweringBuilder) -> None:
        """Phase 2 of a contender."""
        prio, crowd = self.prio, self.crowd
        assert prio is not None and crowd is not None
        true = at.const(1, IntegerType(1))

        def by_top(b: LoweringBuilder) -> list[SSAValue]:
            self._raise(b, self.top)
            return []

        def by_cells(b: LoweringBuilder) -> list[SSAValue]:
            def held(
                inner: LoweringBuilder, x: SSAValue, writes: bool, carried: list
            ) -> list:
                mine = inner.op(arith.CmpiOp(self._read(inner, x), prio, "eq"))
                if writes:
                    writer = self._read(inner, self._writer(inner, x))
                    mine = inner.both(mine, inner.op(arith.CmpiOp(writer, prio, "eq")))
                return [inner.both(carried[0], mine)]

            (kept,) = self._each(b, held, [true])

            def raise_all(c: LoweringBuilder) -> list[SSAValue]:
                def up(
                    inner: LoweringBuilder, x: SSAValue, writes: bool, _: list
                ) -> list:
                    self._raise(inner, x)
                    if writes:
                        self._raise(inner, self._writer(inner, x))
                    return []

                self._each(c, up)
                return []

            _if(b, b.negate(kept), raise_all)
            return []

        _if(at, crowd, by_top, by_cells)

    def won(self, at: LoweringBuilder) -> SSAValue:
        """Phase 3 of a contender: whether it won (the highest of a crowded
        round clears the flag and its cell)."""
        prio, crowd = self.prio, self.crowd
        assert prio is not None and crowd is not None
        i1 = IntegerType(1)

        def by_top(b: LoweringBuilder) -> list[SSAValue]:
            top = b.op(arith.CmpiOp(self._read(b, self.top), prio, "eq"))

            def clear(c: LoweringBuilder) -> list[SSAValue]:
                zero = c.const(0, i32)
                self._write(c, self.flag, zero)
                self._write(c, self.top, zero)
                return []

            _if(b, top, clear)
            return [top]

        def by_cells(b: LoweringBuilder) -> list[SSAValue]:
            def mine(
                inner: LoweringBuilder, x: SSAValue, writes: bool, carried: list
            ) -> list:
                if writes:
                    ok = inner.op(arith.CmpiOp(self._read(inner, x), prio, "eq"))
                else:
                    writer = self._read(inner, self._writer(inner, x))
                    ok = inner.op(arith.CmpiOp(writer, prio, "sle"))
                return [inner.both(carried[0], ok)]

            return self._each(b, mine, [b.const(1, i1)])

        return _if(at, crowd, by_top, by_cells, [i1])[0]
