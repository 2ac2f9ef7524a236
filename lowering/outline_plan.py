"""Planning of iteration outlining (irgl-outline-iterations): which
Iterates/Pipes get outlined, and how.

An outermost `irgl.iterate` or `irgl.pipe` of a host function is outlined
when it holds a loop (an Iterate or a looping Pipe), every op of its body
can run on the device (orchestration, `arith`, `scf.if`/`scf.for` of such
ops; no C text, calls or memory operations), the block sizes its kernels
admit intersect (`lowering/block_size.py`, `control_block_size`), none of
its kernels is pinned to another size by another control kernel (a
`PinnedElsewhere`, which the outliner answers with copies of those
kernels), and each result it gives the host can be read back.
`plan_outline` checks that and returns the `Plan` (the kernels, the Any/All
cells, the control block size), or raises `NotOutlinable` with the reason,
which `remark` prints.

Also here: what the control kernel captures from the host function, the
launch bounds it asks for (`resident_threads`), and the checks of the
`control_block` and `control_resident` options.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.dialects import gpu, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irgl_dialect.attributes import Aggregation, IteratorKind
from irgl_dialect.kernels import YieldOp
from irgl_dialect.loops import LoopBase
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import LaunchAttr
from irgl_dialect.runtime_library import RuntimeFunction, overload
from lowering.block_size import BlockConstraint, constraint_of, control_block_size
from lowering.runtime_calls import fail, kernel_module, location_prefix

#: Threads per SM the launch bounds of a data-driven control kernel (one
#: that runs worklists) ask room for (half of what sm_70..sm_90 can hold): at
#: most 64 registers a thread. Measured on an H100 (BFS, MIS, MST): fewer
#: resident warps make each step (grid barrier, loop condition) cheaper,
#: more of them speed up large frontiers; 1024 threads (one block of 1024 per
#: SM) was the best trade-off of those tried (2048 made grid BFS 10% slower).
RESIDENT_THREADS = 1024

#: The most threads an SM holds (sm_70 to sm_90).
SM_THREADS = 2048

#: The same for a topology-driven control kernel (no worklist: every step
#: runs over all nodes), which is bound by memory latency rather than by its
#: barriers: a full SM (at most 32 registers a thread). Measured on an H100,
#: pull PageRank on RMAT 18/20: 3.48/13.9 ms at 1024, 3.05/10.9 ms at 2048.
RESIDENT_THREADS_TOPOLOGY = SM_THREADS


_Orchestration = InvokeOp | IterateOp | PipeOp


class NotOutlinable(Exception):
    """Why an Iterate/Pipe stays a host loop."""


class PinnedElsewhere(NotOutlinable):
    """Kernels of the plan are pinned to another block size by an earlier
    control kernel (the outliner runs copies of them instead)."""

    def __init__(self, message: str, plan: Plan, names: Sequence[str]):
        super().__init__(message)
        self.plan = plan
        self.names = tuple(names)


def lowered_kernels(module: ModuleOp) -> dict[str, gpu.FuncOp]:
    """The lowered kernels of `module`'s kernel module, by name."""
    container = kernel_module(module)
    return {
        op.sym_name.data: op
        for op in container.body.block.ops
        if isinstance(op, gpu.FuncOp) and op.kernel is not None
    }


def launch_of(kernel: gpu.FuncOp) -> LaunchAttr:
    """The `#irgl_rt.launch` of a lowered kernel."""
    launch = LaunchAttr.of(kernel)
    if launch is None:
        fail(kernel, f"kernel @{kernel.sym_name.data} has no #irgl_rt.launch")
    return launch


def kernel_constraint(kernel: gpu.FuncOp) -> BlockConstraint:
    """The block sizes a lowered kernel admits (from its launch bounds)."""
    return constraint_of(launch_of(kernel).bounds or None)


def has_loop(op: IterateOp | PipeOp) -> bool:
    """Is `op` an Iterate or a looping Pipe, or does it hold one?"""
    if isinstance(op, IterateOp) or op.once is None:
        return True
    return any(
        isinstance(inner, IterateOp) or (isinstance(inner, PipeOp) and has_loop(inner))
        for inner in op.body.walk()
    )


@dataclass
class Plan:
    """What an outlinable Iterate/Pipe invokes, and the control block size."""

    kernels: dict[str, gpu.FuncOp] = field(default_factory=dict)
    cells: list[tuple[str, Aggregation]] = field(default_factory=list)
    block_size: int = 0

    @property
    def uses_worklist(self) -> bool:
        return any(launch_of(k).worklist is not None for k in self.kernels.values())

    @property
    def uses_retry(self) -> bool:
        return any(launch_of(k).retries for k in self.kernels.values())

    @property
    def min_blocks(self) -> int:
        """The largest `min_blocks` the kernels' launch bounds declare (0 when
        none declares one)."""
        return max(
            (b[1] for k in self.kernels.values() if len(b := launch_of(k).bounds) == 2),
            default=0,
        )


def holds_invocation(op: Operation) -> bool:
    """Whether `op` is an `scf.if` with an `irgl.invoke` in a branch."""
    return isinstance(op, scf.IfOp) and any(
        isinstance(inner, InvokeOp) for inner in op.walk()
    )


def _check_device_op(op: Operation) -> None:
    """`op` (in an Iterate/Pipe body, not orchestration) must run on the device."""
    if op.dialect_name() == "arith" or isinstance(op, scf.YieldOp):
        return
    if isinstance(op, scf.IfOp | scf.ForOp):
        for inner in op.walk():
            if inner is not op:
                if isinstance(inner, _Orchestration):
                    raise NotOutlinable(
                        f"'{inner.name}' inside '{op.name}' (only directly in an "
                        "Iterate or Pipe body)"
                    )
                _check_device_op(inner)
        return
    raise NotOutlinable(f"'{op.name}' in its body cannot run on the device")


def plan_outline(
    op: IterateOp | PipeOp,
    kernels: dict[str, gpu.FuncOp],
    control_block: int = 0,
    conditional: bool = False,
) -> Plan:
    """The plan of an outlinable `op` (its control block size the largest
    the kernels admit, up to `control_block` when that is set); raises
    NotOutlinable otherwise. With `conditional`, an `scf.if` directly in an
    Iterate or Pipe body may hold invocations (not loops): its condition is
    a value every thread of the control kernel holds alike."""
    if not has_loop(op):
        raise NotOutlinable("it holds no loop (a Pipe once of invocations only)")
    plan = Plan()

    def visit(inner: Operation) -> None:
        if isinstance(inner, InvokeOp | IterateOp):
            name = inner.callee.string_value()
            if name not in kernels:
                fail(
                    inner,
                    f"kernel @{name} has not been lowered: run "
                    "convert-irgl-kernels first",
                )
            plan.kernels[name] = kernels[name]
            if launch_of(kernels[name]).cell is not None:
                aggr = inner.aggregation.data if inner.aggregation else Aggregation.ANY
                if (name, aggr) not in plan.cells:
                    plan.cells.append((name, aggr))
        if isinstance(inner, IterateOp | PipeOp):
            for body_op in inner.body.block.ops:
                visit(body_op)
        elif isinstance(inner, InvokeOp | YieldOp):
            return
        elif conditional and holds_invocation(inner):
            for region in inner.regions:
                for block in region.blocks:
                    for branch_op in block.ops:
                        if isinstance(branch_op, IterateOp | PipeOp):
                            raise NotOutlinable(
                                f"'{branch_op.name}' inside 'scf.if' (a loop "
                                "directly in an Iterate or Pipe body only)"
                            )
                        visit(branch_op)
        else:
            _check_device_op(inner)

    visit(op)
    constraints = [kernel_constraint(k) for k in plan.kernels.values()]
    best = control_block_size(constraints, control_block)
    if best is None:
        raise NotOutlinable(
            "the block sizes its kernels admit do not intersect ("
            + ", ".join(
                f"@{n}: {c.category.value} {c.size}"
                for n, c in zip(plan.kernels, constraints, strict=True)
            )
            + ")"
        )
    plan.block_size = best
    pinned = [
        (name, launch.block)
        for name, kernel in plan.kernels.items()
        if (launch := launch_of(kernel)).pinned and launch.block != plan.block_size
    ]
    if pinned:
        raise PinnedElsewhere(
            "; ".join(
                f"@{name} already runs in a control kernel of block size "
                f"{block}, this one needs {plan.block_size}"
                for name, block in pinned
            ),
            plan,
            [name for name, _ in pinned],
        )
    return plan


def captured_values(op: IterateOp | PipeOp) -> list[SSAValue]:
    """Values the device part of `op` uses that are defined outside it, in
    order of first use (initializers and capacities stay on the host)."""
    seen: dict[SSAValue, None] = {}

    def inside(value: SSAValue) -> bool:
        owner = value.owner
        if isinstance(owner, Block):
            owner = owner.parent_op()
        return owner is not None and (owner is op or op.is_ancestor(owner))

    def visit(inner: Operation) -> None:
        if isinstance(inner, IterateOp):
            operands: Sequence[SSAValue] = inner.args
        elif isinstance(inner, PipeOp):
            operands = ()
        else:
            operands = inner.operands
        for value in operands:
            if not inside(value):
                seen.setdefault(value, None)
        for region in inner.regions:
            for block in region.blocks:
                for child in block.ops:
                    visit(child)

    visit(op)
    return list(seen)


def device_read(t: Attribute) -> RuntimeFunction:
    """The runtime function that copies a carried result of type `t` back."""
    fn = overload("irgl_device_read", t)
    if fn is None:
        raise NotOutlinable(f"a carried value of type {t} cannot be read back")
    return fn


def memref_candidates(op: IterateOp) -> list[SSAValue]:
    """The host memrefs the carried memref slots of an outermost Iterate can
    hold when it ends: their initial values and any value from outside the
    Iterate that its body yields into them. A slot's final memref is read
    back as an index into this list (the control kernel carries one i32 per
    memref slot beside it), so the body may only pass memrefs between slots
    or yield outside ones; anything else keeps the host loop."""
    terminator = op.body.block.last_op
    assert isinstance(terminator, YieldOp)
    candidates: list[SSAValue] = []
    for position, value in zip(op.carried_positions, terminator.values, strict=True):
        if not isinstance(value.type, MemRefType):
            continue
        for source in (op.args[position], value):
            if source in op.body.block.args:
                continue
            if op.is_ancestor(source.owner):
                raise NotOutlinable(
                    f"a carried value of type {value.type} is computed in the "
                    "body and cannot be read back"
                )
            if source not in candidates:
                candidates.append(source)
    return candidates


def read_back_check(op: IterateOp) -> None:
    """Raise if a used result of the outermost Iterate cannot be read back."""
    for result in op.results_:
        if result.uses and not isinstance(result.type, MemRefType):
            device_read(result.type)
    if any(r.uses and isinstance(r.type, MemRefType) for r in op.results_):
        memref_candidates(op)


def reads_in_size(kernel: gpu.FuncOp) -> bool:
    """Does the (not yet lowered) kernel iterate over its `in` worklist?"""
    return launch_of(kernel).worklist is not None and any(
        isinstance(op, LoopBase) and op.iterator.data == IteratorKind.WORKLIST
        for op in kernel.walk()
    )


def outermost(region: Region) -> Iterator[IterateOp | PipeOp]:
    for block in region.blocks:
        for op in block.ops:
            if isinstance(op, IterateOp | PipeOp):
                yield op
            else:
                for inner in op.regions:
                    yield from outermost(inner)


def check_control_block_option(value: int, owner: str) -> None:
    """A `control_block` option is 0 (the largest admitted size) or a block
    size (a power of two from 32 to 1024); raise a ValueError naming
    `owner` otherwise."""
    if value != 0 and not (32 <= value <= 1024 and value & (value - 1) == 0):
        raise ValueError(
            f"{owner}: control_block must be 0 or a power of two from 32 to "
            f"1024, got {value}"
        )


def check_retry_drain_blocks_option(value: int, owner: str) -> None:
    """A `retry_drain_blocks` option is a block count from 1 (block 0 alone)
    to 1024; raise a ValueError naming `owner` otherwise."""
    if not 1 <= value <= 1024:
        raise ValueError(
            f"{owner}: retry_drain_blocks must be from 1 to 1024, got {value}"
        )


def check_control_resident_option(value: int, owner: str) -> None:
    """A `control_resident` option is a thread count from 0 (by kind) to
    SM_THREADS (an SM's most); raise a ValueError naming `owner` otherwise."""
    if not 0 <= value <= SM_THREADS:
        raise ValueError(
            f"{owner}: control_resident must be a thread count from 0 to "
            f"{SM_THREADS}, got {value}"
        )


def resident_threads(plan: Plan, control_resident: int) -> int:
    """Threads per SM the control kernel's launch bounds ask for: the
    `control_resident` option; else, when a kernel it runs declares
    `launch_bounds(max_threads, min_blocks)`, min_blocks blocks of the
    control block size (the largest min_blocks: every kernel keeps at
    least as many of its blocks per SM as it asks for, and the register
    budget a thread gets is the one those bounds give a plain launch);
    else RESIDENT_THREADS with worklists and RESIDENT_THREADS_TOPOLOGY
    without. At most SM_THREADS."""
    if control_resident > 0:
        return control_resident
    if plan.min_blocks > 0:
        return min(plan.min_blocks * plan.block_size, SM_THREADS)
    return RESIDENT_THREADS if plan.uses_worklist else RESIDENT_THREADS_TOPOLOGY


def remark(out: TextIO | None, op: Operation, where: str, text: str) -> None:
    """Print a remark about `op` (an Iterate/Pipe of host function `where`)
    to `out`, with its location; nothing when `out` is None."""
    if out is None:
        return
    at = location_prefix(op)
    callee = f" @{op.callee.string_value()}" if isinstance(op, IterateOp) else ""
    print(f"remark: {at}{op.name}{callee} in @{where}: {text}", file=out)
