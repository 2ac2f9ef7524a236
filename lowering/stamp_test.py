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

Run it after irgl-distribute (whose round-stamp rule reads the plain
exchange) and before convert-irgl-kernels.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.kernels import KernelOp
from irgl_dialect.runtime import COHERENT_LOAD_ATTR
from lowering.builders import LoweringBuilder, emit_if
from lowering.round_stamps import stamp_counter

_CMPI_EQ = 0


def _test_first(exchange: memref.AtomicRMWOp) -> None:
    """Rewrites one stamp exchange into a load and an exchange where the
    entry differs from the counter (see the module docstring)."""
    at = LoweringBuilder(InsertPoint.before(exchange))
    load = memref.LoadOp.get(exchange.memref, exchange.indices)
    load.attributes[COHERENT_LOAD_ATTR] = UnitAttr()
    cur = at.op(load)
    seen = at.op(arith.CmpiOp(cur, exchange.value, _CMPI_EQ))
    (last,) = emit_if(
        at,
        seen,
        lambda _: [cur],
        lambda b: [b.op(exchange.clone())],
        [exchange.result.type],
    )
    exchange.result.replace_all_uses_with(last)
    Rewriter.erase_op(exchange)


@dataclass(frozen=True)
class IrglStampTest(ModulePass):
    """Each kernel's round-stamp exchanges (round_stamps.stamp_counter) read
    the entry first and exchange only where it is not yet the round counter
    (see the module docstring); lowers to a load and an `scf.if`."""

    name = "irgl-stamp-test"

    remarks: bool = False
    """Print each kernel's stamps whose exchanges are tested first."""

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
                for exchange in exchanges:
                    _test_first(exchange)
                if self.remarks:
                    print(
                        f"remark: irgl-stamp-test: @{kernel.sym_name.data}: "
                        f"argument {position}: {len(exchanges)} round-stamp "
                        "exchange(s) skipped where the entry holds the counter",
                        file=sys.stderr,
                    )
