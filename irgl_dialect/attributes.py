"""Types and enum attributes of the irgl dialect."""

from __future__ import annotations

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    TypeAttribute,
)
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.utils.str_enum import StrEnum


@irdl_attr_definition
class GraphType(ParametrizedAttribute, TypeAttribute):
    """A CSR graph: node count, per-node edge ranges, edge destinations, weights.

    Node and edge properties are ordinary memrefs indexed by node or edge id;
    the graph value itself is only read through the `irgl.graph.*` accessors.
    """

    name = "irgl.graph"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        if parser.parse_optional_punctuation("<") is not None:
            parser.raise_error("!irgl.graph takes no parameters")
        return []


class KernelKind(StrEnum):
    """Where a kernel runs: a plain IrGL kernel on the GPU, the host, or a
    CUDA `__device__` function."""

    PLAIN = "plain"
    HOST = "host"
    DEVICE = "device"


class IteratorKind(StrEnum):
    """What a ForAll/For traverses."""

    RANGE = "range"
    NODES = "nodes"
    EDGES = "edges"
    WORKLIST = "worklist"


class Aggregation(StrEnum):
    """How the ReduceAndReturn values of one invocation are combined."""

    ANY = "any"
    ALL = "all"


class TermCond(StrEnum):
    """When Iterate keeps invoking its kernel."""

    WHILE = "while"
    UNTIL = "until"


class ExtraCond(StrEnum):
    """How Iterate combines its extra condition with the default one."""

    AND = "and"
    OR = "or"


class ExclusiveForm(StrEnum):
    """How an Exclusive names the elements it locks."""

    ARRAY = "array"
    ITERATOR = "iterator"


@irdl_attr_definition
class KernelKindAttr(EnumAttribute[KernelKind], SpacedOpaqueSyntaxAttribute):
    name = "irgl.kernel_kind"


@irdl_attr_definition
class IteratorKindAttr(EnumAttribute[IteratorKind], SpacedOpaqueSyntaxAttribute):
    name = "irgl.iterator"


@irdl_attr_definition
class AggregationAttr(EnumAttribute[Aggregation], SpacedOpaqueSyntaxAttribute):
    name = "irgl.aggregation"


@irdl_attr_definition
class TermCondAttr(EnumAttribute[TermCond], SpacedOpaqueSyntaxAttribute):
    name = "irgl.term_cond"


@irdl_attr_definition
class ExtraCondAttr(EnumAttribute[ExtraCond], SpacedOpaqueSyntaxAttribute):
    name = "irgl.extra_cond"


@irdl_attr_definition
class ExclusiveFormAttr(EnumAttribute[ExclusiveForm], SpacedOpaqueSyntaxAttribute):
    name = "irgl.exclusive_form"
