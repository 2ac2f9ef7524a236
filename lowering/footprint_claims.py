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
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, i32, i64
from xdsl.ir import Block, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.graph import EdgeDstOp, FirstEdgeOp, LastEdgeOp, NumNodesOp
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp
from irgl_dialect.runtime import UNROLL_ATTR, CollectiveOp, NestedEdgesAttr
from irgl_dialect.runtime_library import runtime_function
from lowering.builders import LoweringBuilder, emit_if
from lowering.exclusive_footprint import EdgesElement, Footprint, NodeElement

#: (builder, element, whether the body writes it, carried) -> next carried.
Visit = Callable[[LoweringBuilder, SSAValue, bool, list[SSAValue]], list[SSAValue]]
#: (builder, carried) -> next carried, for an element out of range.
Outside = Callable[[LoweringBuilder, list[SSAValue]], list[SSAValue]]


def _edge_block(
    at: LoweringBuilder, element: EdgesElement, carried: list[SSAValue]
) -> tuple[Block, LoweringBuilder, SSAValue]:
    """The body block of a loop over `element`'s edges (an edge index, then
    `carried`'s types), a builder at its end and the edge's destination."""
    block = Block(arg_types=[IndexType(), *[v.type for v in carried]])
    inner = at.nested(InsertPoint.at_end(block))
    return block, inner, inner.op(EdgeDstOp(element.graph, block.args[0]))


class FootprintClaims:
    """The claims of one footprint Exclusive (see the module docstring).

    Each phase is emitted in the round body, reached by every thread: a
    node element is the contender's own step, under a test of whether it
    takes part; an edges element whose node can be named is an edge loop
    marked `#irgl_rt.nested_edges` in an `irgl_rt.collective`, which
    convert-irgl-nested-edges shares across the block or the warp where the
    node has many edges (a hub's contender no longer walks its edges alone
    while the others wait at the barrier); else (or without `nested`) each
    contender walks it, with `unroll` > 1 asking for `#pragma unroll` (its
    loads in flight together)."""

    def __init__(
        self,
        footprint: Footprint,
        cells: SSAValue,
        rank: SSAValue,
        at: LoweringBuilder,
        unroll: int = 1,
        nested: bool = True,
    ):
        self.footprint = footprint
        self.unroll = unroll
        self.nested = nested
        self.cells = cells
        self.rank = rank
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

    # ------------------------------------------------------------ elements

    def _nodes_step(
        self,
        at: LoweringBuilder,
        taking_part: SSAValue,
        visit: Visit,
        init: list[SSAValue],
        outside: Outside | None = None,
    ) -> list[SSAValue]:
        """The node elements, for a thread `taking_part` (else `init`)."""
        nodes = [e for e in self.footprint.elements if isinstance(e, NodeElement)]
        if not nodes:
            return init

        def step(b: LoweringBuilder) -> list[SSAValue]:
            carried = init
            for element in nodes:
                carried = self._in_range(
                    b, element.value, element.writes, visit, carried, outside
                )
            return carried

        return emit_if(at, taking_part, step, lambda _: init, [v.type for v in init])

    def _edges_step(
        self,
        at: LoweringBuilder,
        element: EdgesElement,
        taking_part: SSAValue,
        visit: Visit,
        checks: bool,
    ) -> SSAValue | None:
        """An edges element for the threads `taking_part`; with `checks`,
        `visit` returns one i1 per edge and the result is their conjunction
        (true for the others)."""
        node = _edges_node(element) if self.nested else None
        if node is None:
            return self._edges_serial(at, element, taking_part, visit, checks)
        block, inner, dst = _edge_block(at, element, [])
        if checks:
            (ok,) = visit(inner, dst, element.writes, [inner.const(1, IntegerType(1))])
            block.add_op(YieldOp([inner.op(arith.ExtUIOp(ok, i32))]))
            one = at.const(1, i32)
            loop = ForAllOp(
                IteratorKind.EDGES, [element.graph, node], Region(block), "min", one
            )
        else:
            visit(inner, dst, element.writes, [])
            block.add_op(YieldOp())
            loop = ForAllOp(IteratorKind.EDGES, [element.graph, node], Region(block))
        NestedEdgesAttr().attach(loop)
        collective = CollectiveOp(
            taking_part,
            self.rank,
            Region(Block([loop])),
            [i32] if checks else [],
        )
        at.stmt(collective)
        if not checks:
            return None
        return at.op(arith.CmpiOp(collective.outs[0], at.const(0, i32), "ne"))

    def _edges_serial(
        self,
        at: LoweringBuilder,
        element: EdgesElement,
        taking_part: SSAValue,
        visit: Visit,
        checks: bool,
    ) -> SSAValue | None:
        """`_edges_step` as each thread's own loop over its edges."""
        true = at.const(1, IntegerType(1))
        init = [true] if checks else []

        def walk(b: LoweringBuilder) -> list[SSAValue]:
            block, inner, dst = _edge_block(b, element, init)
            block.add_op(
                scf.YieldOp(*visit(inner, dst, element.writes, list(block.args[1:])))
            )
            loop = scf.ForOp(
                element.first, element.last, b.index(1), init, Region(block)
            )
            if self.unroll > 1:
                loop.attributes[UNROLL_ATTR] = IntegerAttr(self.unroll, i64)
            b.stmt(loop)
            return list(loop.results)

        results = emit_if(at, taking_part, walk, lambda _: init, [v.type for v in init])
        return results[0] if checks else None

    def _every(
        self,
        at: LoweringBuilder,
        taking_part: SSAValue,
        visit: Visit,
        checks: bool,
        outside: Outside | None = None,
    ) -> SSAValue | None:
        """`visit` on every element for the threads `taking_part`; with
        `checks`, the conjunction of its results (true for the others)."""
        true = at.const(1, IntegerType(1))
        init = [true] if checks else []
        carried = self._nodes_step(at, taking_part, visit, init, outside)
        result = carried[0] if checks else None
        for element in self.footprint.elements:
            if isinstance(element, EdgesElement):
                ok = self._edges_step(at, element, taking_part, visit, checks)
                if ok is not None and result is not None:
                    result = at.both(result, ok)
        return result

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
        return emit_if(
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

    # -------------------------------------------------------------- phases

    def race(self, at: LoweringBuilder, contends: SSAValue) -> None:
        """Phase 1."""
        prio = self.prio
        assert prio is not None

        def visit(b: LoweringBuilder, x: SSAValue, writes: bool, _: list) -> list:
            self._write(b, x, prio)
            self._write(b, self._writer(b, x), prio if writes else b.const(0, i32))
            return []

        def mark(b: LoweringBuilder, _: list) -> list:
            self._write(b, self.flag, b.const(1, i32))
            return []

        self._every(at, contends, visit, checks=False, outside=mark)

    def settle(self, at: LoweringBuilder, contends: SSAValue) -> None:
        """Phase 2 (after the race's barrier): every thread reads the flag;
        a contender raises its cells where it lost one, or the top cell in a
        crowded round."""
        prio = self.prio
        assert prio is not None
        flag = self._read(at, self.flag)
        crowd = self.crowd = at.op(arith.CmpiOp(flag, at.const(0, i32), "ne"))

        def by_top(b: LoweringBuilder) -> list[SSAValue]:
            self._raise(b, self.top)
            return []

        emit_if(at, at.both(contends, crowd), by_top)
        settling = at.both(contends, at.negate(crowd))

        def held(
            inner: LoweringBuilder, x: SSAValue, writes: bool, carried: list
        ) -> list:
            mine = inner.op(arith.CmpiOp(self._read(inner, x), prio, "eq"))
            if writes:
                writer = self._read(inner, self._writer(inner, x))
                mine = inner.both(mine, inner.op(arith.CmpiOp(writer, prio, "eq")))
            return [inner.both(carried[0], mine)]

        kept = self._every(at, settling, held, checks=True)
        assert kept is not None
        lost = at.both(settling, at.negate(kept))

        def up(inner: LoweringBuilder, x: SSAValue, writes: bool, _: list) -> list:
            self._raise(inner, x)
            if writes:
                self._raise(inner, self._writer(inner, x))
            return []

        self._every(at, lost, up, checks=False)

    def decide(self, at: LoweringBuilder, deciding: SSAValue) -> SSAValue:
        """Phase 3 (after the settling barrier), in the round body: whether a
        `deciding` contender won (the highest of a crowded round clears the
        flag and its cell)."""
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

            emit_if(b, top, clear)
            return [top]

        false = at.const(0, i1)
        (topped,) = emit_if(
            at, at.both(deciding, crowd), by_top, lambda _: [false], [i1]
        )

        def mine(
            inner: LoweringBuilder, x: SSAValue, writes: bool, carried: list
        ) -> list:
            if writes:
                ok = inner.op(arith.CmpiOp(self._read(inner, x), prio, "eq"))
            else:
                writer = self._read(inner, self._writer(inner, x))
                ok = inner.op(arith.CmpiOp(writer, prio, "sle"))
            return [inner.both(carried[0], ok)]

        checking = at.both(deciding, at.negate(crowd))
        kept = self._every(at, checking, mine, checks=True)
        assert kept is not None
        return at.op(arith.SelectOp(crowd, topped, kept))


def _edges_node(element: EdgesElement) -> SSAValue | None:
    """The node whose edges `element` walks, where its bounds still say so:
    `first_edge`/`last_edge` of one node, or the results of the `scf.if`
    by which convert-irgl-loops carries them and the node out of an active
    thread's part of the round."""
    first, last = element.first, element.last
    if isinstance(first.owner, FirstEdgeOp) and isinstance(last.owner, LastEdgeOp):
        node = first.owner.element
        return node if last.owner.element == node else None
    guard = first.owner
    if (
        not isinstance(guard, scf.IfOp)
        or last.owner is not guard
        or not isinstance(first, OpResult)
        or not isinstance(last, OpResult)
    ):
        return None
    yielded = guard.true_region.block.last_op
    if not isinstance(yielded, scf.YieldOp):
        return None
    inner_first = yielded.operands[first.index].owner
    inner_last = yielded.operands[last.index].owner
    if not isinstance(inner_first, FirstEdgeOp) or not isinstance(
        inner_last, LastEdgeOp
    ):
        return None
    if inner_first.element != inner_last.element:
        return None
    if inner_first.graph != element.graph:
        return None
    for index, value in enumerate(yielded.operands):
        if value == inner_first.element:
            return guard.results[index]
    return None
