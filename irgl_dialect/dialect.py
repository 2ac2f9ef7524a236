"""The irgl dialect object."""

from xdsl.ir import Dialect

from irgl_dialect.attributes import (
    AggregationAttr,
    ExclusiveFormAttr,
    ExtraCondAttr,
    GraphType,
    IteratorKindAttr,
    KernelKindAttr,
    TermCondAttr,
)
from irgl_dialect.c_escape import (
    CBlockOp,
    CDeclGlobalOp,
    CDeclOp,
    CExprOp,
    CIncludeOp,
    NamesOp,
    NopOp,
)
from irgl_dialect.graph import (
    DegreeOp,
    EdgeDstOp,
    EdgeWeightOp,
    FirstEdgeOp,
    LastEdgeOp,
    MaxDegreeOp,
    NumEdgesOp,
    NumNodesOp,
)
from irgl_dialect.kernels import CallOp, KernelOp, ReturnOp, YieldOp
from irgl_dialect.loops import ForAllOp, ForOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.sync import (
    AtomicOp,
    ExclusiveOp,
    LocalBarrierOp,
    ReduceAndReturnOp,
    RespawnOp,
    RetryOp,
    SyncRunningThreadsOp,
)
from irgl_dialect.worklist import PopOp, PushOp

Irgl = Dialect(
    "irgl",
    [
        KernelOp,
        ReturnOp,
        YieldOp,
        CallOp,
        ForAllOp,
        ForOp,
        PopOp,
        PushOp,
        AtomicOp,
        ExclusiveOp,
        RetryOp,
        RespawnOp,
        ReduceAndReturnOp,
        SyncRunningThreadsOp,
        LocalBarrierOp,
        InvokeOp,
        IterateOp,
        PipeOp,
        CBlockOp,
        CIncludeOp,
        CExprOp,
        CDeclOp,
        CDeclGlobalOp,
        NamesOp,
        NopOp,
        NumNodesOp,
        NumEdgesOp,
        MaxDegreeOp,
        FirstEdgeOp,
        LastEdgeOp,
        DegreeOp,
        EdgeDstOp,
        EdgeWeightOp,
    ],
    [
        GraphType,
        KernelKindAttr,
        IteratorKindAttr,
        AggregationAttr,
        TermCondAttr,
        ExtraCondAttr,
        ExclusiveFormAttr,
    ],
)
