"""Short worklists handed to teams of blocks (convert-irgl-loops `edge_teams`).

Nested parallelism gives a node with at least a block's worth of edges to its
block alone: a worklist of one hub (a BFS or SSSP round from a hub source:
a million edges on RMAT-26) is walked by one block while every other block
of the grid idles (3 ms of a 38 ms BFS on two H200s). The grid phase
(`edge_grid_rounds`) shares such a node through donations, which cost
barriers in every round and lose the race with blocks that finish first.

With `edge_teams` = T > 0, an outermost ForAll over the worklist whose body
is reads without effects (the popped item, loads, arithmetic, graph
queries) followed by one edge loop marked for nested scheduling (not
reducing, no loops, barriers or Exclusives in it) gets a second form, taken
when the grid has at least T blocks for each item (`count <= blocks / T`,
the same on every thread, so no barrier is crossed divergently):

    team = blocks / count        // blocks per item, at least T
    k = block / team             // this block's item (a block past
    r = block % team             //   count * team idles)
    n = <the body's reads for position k>
    share = ceil(edges(n) / team)
    walk edges first(n) + r * share .. + share by the block's threads

so a lone hub is walked by the whole grid. The reads run on every thread of
the team (they have no effects, so repeating them changes nothing). No
donation, no barrier: a block finds its item from the worklist's size and
its own id alone. Otherwise, and for every other ForAll, the lowering is
the one before.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import ConstantLike, NoMemoryEffect

from irgl_dialect.attributes import IteratorKind
from irgl_dialect.graph import FirstEdgeOp, LastEdgeOp
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import ForAllOp, ForOp
from irgl_dialect.runtime import NestedEdgesAttr
from irgl_dialect.sync import (
    ExclusiveOp,
    LocalBarrierOp,
    RespawnOp,
    RetryOp,
    SyncRunningThreadsOp,
)
from irgl_dialect.worklist import PopOp
from lowering.builders import LoweringBuilder, clone_body
from lowering.reductions import reduction_of

#: Runtime functions that only read (the popped item of `in`, as
#: `irgl.wl.pop` becomes before the loops are lowered).
_READS = frozenset({"irgl_wl_item", "irgl_wl_size"})

#: Ops an edge loop walked by a team may not hold: loops (convert-irgl-loops
#: has collected its loops already), barriers and what needs the whole grid.
_NOT_IN_TEAM = (
    ForAllOp,
    ForOp,
    scf.ForOp,
    scf.WhileOp,
    ExclusiveOp,
    SyncRunningThreadsOp,
    LocalBarrierOp,
    RetryOp,
    RespawnOp,
)


def _only_reads(op: Operation) -> bool:
    """`op` and what it holds read memory at most (repeating them on every
    thread of a team changes nothing)."""
    for inner in op.walk():
        if inner.has_trait(ConstantLike) or inner.has_trait(NoMemoryEffect):
            continue
        if isinstance(inner, memref.LoadOp | PopOp | scf.YieldOp | scf.IfOp):
            continue
        if isinstance(inner, func.CallOp) and inner.callee.string_value() in _READS:
            continue
        return False
    return True


def team_edge_loop(loop: ForAllOp) -> ForAllOp | None:
    """The edge loop a team of blocks can share for `loop` (an outermost
    ForAll of a plain kernel), or None where `loop` does not qualify: not a
    ForAll over the worklist, a body that is not effect-free reads then one
    non-reducing edge loop marked for nested scheduling, or an edge loop
    holding a loop, a barrier, an Exclusive, a Retry or a Respawn."""
    if loop.iterator.data != IteratorKind.WORKLIST:
        return None
    ops = [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]
    if not ops:
        return None
    edge = ops[-1]
    if not (
        isinstance(edge, ForAllOp)
        and NestedEdgesAttr.of(edge) is not None
        and reduction_of(edge) is None
    ):
        return None
    if any(isinstance(op, _NOT_IN_TEAM) for op in edge.body.walk()):
        return None
    if not all(_only_reads(op) for op in ops[:-1]):
        return None
    return edge


def split_for_teams(
    loop: ForAllOp,
    edge: ForAllOp,
    lb: SSAValue,
    step: SSAValue,
    count: SSAValue,
    teams: int,
) -> None:
    """Put `loop` (whose edge loop `edge` qualifies, :func:`team_edge_loop`)
    in the else branch of `scf.if (count > 0 and count <= blocks / teams)`,
    whose then branch walks `edge` by teams of blocks; `lb`, `step` and
    `count` (its iterations) are the ForAll's, computed before it. The
    caller lowers `loop` where it now stands."""
    b = LoweringBuilder(InsertPoint.before(loop))
    blocks = b.gpu_x(gpu.GridDimOp)
    some = b.op(arith.CmpiOp(count, b.index(0), "sgt"))
    few = b.op(arith.CmpiOp(count, b.op(arith.DivUIOp(blocks, b.index(teams))), "sle"))
    use = b.op(arith.AndIOp(some, few))

    team_block = Block()
    t = b.nested(InsertPoint.at_end(team_block))
    team = t.op(arith.DivUIOp(blocks, count))
    block = t.gpu_x(gpu.BlockIdOp)
    k = t.op(arith.DivUIOp(block, team))
    rank = t.op(arith.SubiOp(block, t.op(arith.MuliOp(k, team))))
    has_item = t.op(arith.CmpiOp(k, count, "ult"))
    item_block = Block()
    t.stmt(scf.IfOp(has_item, [], Region(item_block)))
    t.stmt(scf.YieldOp())

    i = b.nested(InsertPoint.at_end(item_block))
    position = i.op(arith.AddiOp(lb, i.op(arith.MuliOp(k, step))))
    mapping: dict[SSAValue, SSAValue] = {loop.body.block.args[0]: position}
    for op in loop.body.block.ops:
        if op is edge:
            break
        i.insert(op.clone(value_mapper=mapping))
    graph, node = (mapping.get(v, v) for v in edge.bounds)
    first = i.op(FirstEdgeOp(graph, node))
    last = i.op(LastEdgeOp(graph, node))
    length = i.op(arith.SubiOp(last, first))
    share = i.op(arith.CeilDivUIOp(length, team))
    offset = i.op(arith.MinUIOp(i.op(arith.MuliOp(rank, share)), length))
    lo = i.op(arith.AddiOp(first, offset))
    hi = i.op(arith.MinUIOp(i.op(arith.AddiOp(lo, share)), last))
    start = i.op(arith.AddiOp(lo, i.gpu_x(gpu.ThreadIdOp)))
    walk = Block(arg_types=[edge.body.block.args[0].type])
    clone_body(edge.body, walk, {**mapping, edge.body.block.args[0]: walk.args[0]})
    i.stmt(scf.ForOp(start, hi, i.gpu_x(gpu.BlockDimOp), [], Region(walk)))
    i.stmt(scf.YieldOp())

    rest = Block()
    b.stmt(scf.IfOp(use, [], Region(team_block), Region(rest)))
    loop.detach()
    rest.add_op(loop)
    rest.add_op(scf.YieldOp())
