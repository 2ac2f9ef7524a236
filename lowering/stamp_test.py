"""A round stamp's exchange is skipped where the stamp already holds the round.

A round stamp (lowering/round_stamps.py: a node array a round kernel uses
only to exchange the round counter into a node's entry, pushing the node
when the old entry differs from the counter, as in benchmarks/cc/cc_lp.mlir
and benchmarks/sssp/sssp.mlir) is exchanged once for every improvement of a
node in a round, though only the first of them pushes. irgl-stamp-test
reads the entry first and exchanges only where it differs from the counter:

    %cur = memref.load %stamp[%v] {irgl_rt.coherent}
    %seen = arith.cmpi eq, %cur, %ROUND : i32
    %last = scf.if %seen -> (i32) {
      scf.yield %cur : i32
    } else {
      %old = "memref.atomic_rmw"(%ROUND, %stamp, %v) <{kind = 2 : i64}> ...
      scf.yield %old : i32
    }

This is exact: in a kernel that uses the array only so, every write during
the kernel stores the same counter, so an entry that holds it keeps it and
an exchange there would return it, and the push it guards would not
happen. The load reads the element where atomics update it (`__ldcg`),
so a line an SM cached in an earlier round of a persistent control kernel
(SSSP's counter restarts at each distance window) cannot show the counter
before this round stored it. A hub's neighbour improved by many threads in
a round then costs one exchange and loads, not an atomic each.

The load pays only where nodes improve several times in a round, which
is where the graph has hubs: on a grid or a uniform random graph each
node improves about once per round and the load only delays the
exchange. So with `skew` S > 0 (the default 32) the test runs only where
the kernel's graph has a node of degree over S times the mean degree
(`max_degree * num_nodes > S * num_edges`, a uniform branch on the
graph's sizes), and the exchange is unconditional elsewhere:

    %hubs = arith.cmpi sgt, (max_degree * num_nodes), (S * num_edges)  (i64)
    %seen = scf.if %hubs -> (i1) {
      %cur = memref.load %stamp[%v] {irgl_rt.coherent}
      scf.yield (%cur == %ROUND)
    } else {
      scf.yield false
    }

A kernel without a graph argument, or `skew=0`, always tests.

Run it after irgl-distribute (whose round-stamp rule reads the plain
exchange) and before convert-irgl-kernels.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp, UnitAttr, i1, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import GraphType
from irgl_dialect.graph import MaxDegreeOp, NumEdgesOp, NumNodesOp
from irgl_dialect.kernels import KernelOp
from irgl_dialect.runtime import COHERENT_LOAD_ATTR
from lowering.builders import LoweringBuilder, emit_if
from lowering.round_stamps import stamp_counter

#: A hub: a node of more than this many times the graph's mean degree (the
#: default `skew`; benchmarks/sssp/app.py chooses SSSP's window by it too).
HUB_SKEW = 32

_CMPI_EQ = 0
_CMPI_SGT = 4


def _has_hubs(at: LoweringBuilder, graph: SSAValue, skew: int) -> SSAValue:
    """`max_degree * num_nodes > skew * num_edges` of `graph` (an i1),
    computed in i64: the products overflow a 32-bit index."""

    def wide(query: type[MaxDegreeOp | NumNodesOp | NumEdgesOp]) -> SSAValue:
        return at.op(arith.IndexCastOp(at.op(query(graph)), i64))

    most, nodes, edges = wide(MaxDegreeOp), wide(NumNodesOp), wide(NumEdgesOp)
    lhs = at.op(arith.MuliOp(most, nodes))
    rhs = at.op(arith.MuliOp(at.const(skew, i64), edges))
    return at.op(arith.CmpiOp(lhs, rhs, _CMPI_SGT))


def _test_first(
    exchange: memref.AtomicRMWOp, graph: SSAValue | None, skew: int
) -> None:
    """Rewrites one stamp exchange into a load and an exchange where the
    entry differs from the counter, the load only where `graph` has hubs
    when `graph` is given (see the module docstring)."""
    at = LoweringBuilder(InsertPoint.before(exchange))

    def seen(b: LoweringBuilder) -> list[SSAValue]:
        load = memref.LoadOp.get(exchange.memref, exchange.indices)
        load.attributes[COHERENT_LOAD_ATTR] = UnitAttr()
        cur = b.op(load)
        return [b.op(arith.CmpiOp(cur, exchange.value, _CMPI_EQ))]

    if graph is None:
        (held,) = seen(at)
    else:
        (held,) = emit_if(
            at,
            _has_hubs(at, graph, skew),
            seen,
            lambda b: [b.const(0, i1)],
            [i1],
        )
    (last,) = emit_if(
        at,
        held,
        lambda _: [exchange.value],
        lambda b: [b.op(exchange.clone())],
        [exchange.result.type],
    )
    exchange.result.replace_all_uses_with(last)
    Rewriter.erase_op(exchange)


def _graph_of(kernel: KernelOp) -> SSAValue | None:
    """The kernel's first graph parameter, if any."""
    return next(
        (a for a in kernel.body.block.args if isinstance(a.type, GraphType)), None
    )


@dataclass(frozen=True)
class IrglStampTest(ModulePass):
    """Each kernel's round-stamp exchanges (round_stamps.stamp_counter) read
    the entry first and exchange only where it is not yet the round counter,
    on graphs with hubs (see the module docstring); lowers to a load and
    `scf.if`s."""

    name = "irgl-stamp-test"

    remarks: bool = False
    """Print each kernel's stamps whose exchanges are tested first."""

    skew: int = HUB_SKEW
    """Test only where the graph's largest degree exceeds `skew` times its
    mean degree (0: always)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            args = kernel.body.block.args
            for position, arg in enumerate(args):
                if stamp_counter(kernel, position) is None:
                    continue
                exchanges = [
                    use.operation
                    for use in list(arg.uses)
                    if isinstance(use.operation, memref.AtomicRMWOp)
                ]
                graph = _graph_of(kernel) if self.skew > 0 else None
                for exchange in exchanges:
                    _test_first(exchange, graph, self.skew)
                if self.remarks:
                    print(
                        f"remark: irgl-stamp-test: @{kernel.sym_name.data}: "
                        f"argument {position}: {len(exchanges)} round-stamp "
                        "exchange(s) skipped where the entry holds the counter"
                        + (
                            f" (on graphs of degree over {self.skew}x the mean)"
                            if graph is not None
                            else ""
                        ),
                        file=sys.stderr,
                    )
