"""Checks of upstream (scf, arith) ops that xDSL's verifiers leave out but
that printing and the CUDA emitter rely on. Each raises a diagnostic at the
offending op, like `placement.verify_dominance`."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from irgl_dialect.placement import located_error

RULE_YIELDS = "scf.if yields its results from both branches"
RULE_PREDICATE = "comparison predicates are known"


def verify_if_yields(root: Operation) -> None:
    """Every `scf.if` below `root` with results has both branches, each
    ending in an `scf.yield` of values of the result types.

    xDSL's scf.if verifier does not check this (an `else {}` gets an empty
    implicit yield), and the CUDA emitter relies on it. Raised like
    `verify_dominance`, at the scf.if.
    """
    for op in root.walk():
        if op.name != "scf.if" or not op.results:
            continue
        expected = [r.type for r in op.results]
        for region in op.regions:
            last = region.blocks.first.last_op if region.blocks.first else None
            found = None if last is None else [v.type for v in last.operands]
            if last is None or last.name != "scf.yield" or found != expected:
                types = ", ".join(map(str, expected))
                message = (
                    f"'scf.if' has results ({types}), so each branch must end "
                    f"with scf.yield of values of those types (rule: {RULE_YIELDS})"
                )
                raise located_error(op, message, DiagnosticException(message))


#: Number of predicates of arith.cmpi and arith.cmpf (xDSL checks no range).
_PREDICATE_COUNTS = {
    "arith.cmpi": len(arith.CMPI_COMPARISON_OPERATIONS),
    "arith.cmpf": len(arith.CMPF_COMPARISON_OPERATIONS),
}


def verify_predicates(root: Operation) -> None:
    """The predicate of every arith.cmpi/cmpf below `root` is in range (xDSL
    accepts any integer; printing or emitting the op then fails). Raised like
    `verify_dominance`, at the comparison."""
    for op in root.walk():
        count = _PREDICATE_COUNTS.get(op.name)
        if count is None:
            continue
        predicate = op.properties.get("predicate")
        value = getattr(getattr(predicate, "value", None), "data", None)
        if isinstance(value, int) and 0 <= value < count:
            continue
        message = (
            f"'{op.name}' predicate must be an integer in [0, {count - 1}], got "
            f"{predicate} (rule: {RULE_PREDICATE})"
        )
        raise located_error(op, message, DiagnosticException(message))
