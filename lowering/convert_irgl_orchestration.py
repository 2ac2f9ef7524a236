"""convert-irgl-orchestration: Invoke, Iterate and Pipe become host loops.

Runs after convert-irgl-kernels, on host `func.func`s. The outermost Pipe or
Iterate of a worklist kernel creates a pipe context (`irgl_pipe_create`: the
in, out and retry worklists), fills it from its initializer and destroys it
at the end; nested ones use the context of their nearest enclosing Pipe or
Iterate, found by walking the host code with the context in hand (so a
worklist may flow to whichever kernel the host's control flow picks:
dynamic piping).

An invocation is a `gpu.launch_func` sized by `irgl_rt.grid_size`, passing
the context's worklists and a reduction cell where the kernel needs them.
A kernel that retries is re-launched with `in` and `retry` swapped while
`retry` is not empty; afterwards `in` and `out` are swapped
(`irgl_pipe_advance`). With `retry_backoff` each re-launch of a kernel
that retries after conflicts (an `irgl.retry` without `merge`) gets the grid
`irgl_pipe_backoff_grid(pipe, grid, block)`: in retry round r (the runtime
counts the rounds in the `in` handle) just enough blocks for one thread per
2^r retried items, which is how convert-irgl-loops `retry_backoff` maps them
(contiguous blocks of at least 2^r items per thread). Fewer contending
threads per round after every round that still had conflicts, and smaller
cooperative launches (cheaper grid barriers), until a single block runs
what is left. Iterate is a `scf.while` whose condition combines
"the worklist is not empty", the While/Until Any/All condition on the
aggregated return value and the extra And/Or condition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, scf
from xdsl.dialects.builtin import (
    ModuleOp,
    SymbolRefAttr,
    i1,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irgl_dialect.attributes import Aggregation, ExtraCond, GraphType, TermCond
from irgl_dialect.kernels import YieldOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import GridSizeOp, LaunchAttr
from irgl_dialect.runtime_library import runtime_function
from irgl_dialect.sync import retries_on_conflict
from lowering.builders import LoweringBuilder
from lowering.pipe_context import open_pipe
from lowering.runtime_calls import KERNEL_MODULE, fail


def _not_empty(b: LoweringBuilder, size: SSAValue) -> SSAValue:
    """`size > 0`."""
    return b.op(arith.CmpiOp(size, b.index(0), "sgt"))


def _rt(b: LoweringBuilder, name: str, args: Sequence[SSAValue]) -> list[SSAValue]:
    """Call the runtime function `name` (from the runtime library)."""
    return b.call(runtime_function(name), args)


@dataclass
class _FunctionState:
    """Per host function: cells created at entry and destroyed at exit."""

    entry: Block
    exits: Sequence[Operation]
    cells: dict[tuple[str, Aggregation], SSAValue] = field(default_factory=dict)
    graph: SSAValue | None = None

    def cell(self, kernel: str, aggregation: Aggregation) -> SSAValue:
        key = (kernel, aggregation)
        if key not in self.cells:
            entry = LoweringBuilder(InsertPoint.at_start(self.entry))
            is_any = entry.const(int(aggregation == Aggregation.ANY), i1)
            (cell,) = _rt(entry, "irgl_cell_create", [is_any])
            for exit_op in self.exits:
                _rt(_before(exit_op), "irgl_cell_destroy", [cell])
            self.cells[key] = cell
        return self.cells[key]


def _lookup_kernel(module: ModuleOp, name: str, op: Operation) -> gpu.FuncOp:
    for op in module.body.block.ops:
        if isinstance(op, gpu.ModuleOp) and op.sym_name.data == KERNEL_MODULE:
            for inner in op.body.block.ops:
                if isinstance(inner, gpu.FuncOp) and inner.sym_name.data == name:
                    return inner
    fail(op, f"kernel @{name} has not been lowered: run convert-irgl-kernels first")


class _Lowering:
    """Lowers the orchestration ops of one host function."""

    def __init__(
        self, module: ModuleOp, function: func.FuncOp, retry_backoff: bool = False
    ):
        self.module = module
        self.retry_backoff = retry_backoff
        block = function.body.block
        exits = [op for op in block.ops if isinstance(op, func.ReturnOp)]
        graph = next((a for a in block.args if isinstance(a.type, GraphType)), None)
        self.state = _FunctionState(entry=block, exits=exits, graph=graph)

    # -- traversal --------------------------------------------------------

    def lower_region(self, region: Region, pipe: SSAValue | None) -> None:
        for block in region.blocks:
            for op in list(block.ops):
                self.lower_op(op, pipe)

    def lower_op(self, op: Operation, pipe: SSAValue | None) -> None:
        if isinstance(op, InvokeOp):
            self.lower_invoke(op, pipe)
        elif isinstance(op, IterateOp):
            self.lower_iterate(op, pipe)
        elif isinstance(op, PipeOp):
            self.lower_pipe(op, pipe)
        else:
            for region in op.regions:
                self.lower_region(region, pipe)

    # -- pipe contexts ------------------------------------------------------

    def open_pipe(
        self,
        op: IterateOp | PipeOp,
        builder: LoweringBuilder,
    ) -> SSAValue:
        pipe, _ = open_pipe(builder, op, lambda: self._capacity_graph(op))
        return pipe

    def _capacity_graph(self, op: Operation) -> SSAValue:
        if self.state.graph is None:
            fail(
                op,
                f"'{op.name}' needs `capacity %n`: its host kernel has no "
                "!irgl.graph argument to size the worklists by",
            )
        return self.state.graph

    # -- invocations ----------------------------------------------------------

    def launch(
        self,
        builder: LoweringBuilder,
        kernel: gpu.FuncOp,
        args: Sequence[SSAValue],
        pipe: SSAValue | None,
        aggregation: Aggregation | None,
        op: Operation,
    ) -> SSAValue | None:
        """Launch `kernel` once (re-launching on retried items); return the
        aggregated return value when `aggregation` is given."""
        name = kernel.sym_name.data
        operands = list(args)
        launch = _launch_of(kernel)
        uses_worklist = launch.worklist is not None
        if uses_worklist and pipe is None:
            fail(
                op,
                f"'{op.name}' of @{name}, which uses the worklist, needs an "
                "enclosing Pipe or Iterate",
            )
        cell = None
        if launch.cell is not None:
            cell = self.state.cell(name, aggregation or Aggregation.ANY)
            _rt(builder, "irgl_cell_reset", [cell])
        block_size = builder.index(launch.block)
        symbol = SymbolRefAttr(KERNEL_MODULE, [name])
        grid = builder.insert(
            GridSizeOp(symbol, block_size, resident=launch.cooperative)
        ).results[0]
        one = builder.index(1)

        def emit_launch(at: LoweringBuilder, blocks: SSAValue = grid) -> None:
            extra: list[SSAValue] = []
            if uses_worklist:
                assert pipe is not None
                for which in ("irgl_pipe_in", "irgl_pipe_out", "irgl_pipe_retry"):
                    extra += _rt(at, which, [pipe])
            if cell is not None:
                extra.append(cell)
            at.insert(
                gpu.LaunchFuncOp(
                    symbol,
                    [blocks, one, one],
                    [block_size, one, one],
                    None,
                    operands + extra,
                )
            )

        emit_launch(builder)
        if uses_worklist and launch.retries:
            assert pipe is not None
            backoff = self.retry_backoff and retries_on_conflict(kernel)
            self._retry_loop(builder, pipe, emit_launch, grid, block_size, backoff)
        if uses_worklist:
            assert pipe is not None
            _rt(builder, "irgl_pipe_advance", [pipe])
        if aggregation is None or cell is None:
            return None
        return _rt(builder, "irgl_cell_read", [cell])[0]

    def _retry_loop(
        self,
        builder: LoweringBuilder,
        pipe: SSAValue,
        emit_launch: Callable[[LoweringBuilder, SSAValue], None],
        grid: SSAValue,
        block_size: SSAValue,
        backoff: bool,
    ) -> None:
        """while (retry not empty) { in <-> retry; launch } (with `backoff`,
        on `irgl_pipe_backoff_grid` blocks)"""
        loop = scf.WhileOp([], [], Region(Block()), Region(Block()))
        builder.insert(loop)
        before = loop.before_region.block
        inner = _at_end(before)
        (size,) = _rt(inner, "irgl_pipe_retry_size", [pipe])
        inner.insert(scf.ConditionOp(_not_empty(inner, size)))
        body = _at_end(loop.after_region.block)
        _rt(body, "irgl_pipe_advance_retry", [pipe])
        if backoff:
            (grid,) = _rt(body, "irgl_pipe_backoff_grid", [pipe, grid, block_size])
            grid.name_hint = "backoff_grid"
        emit_launch(body, grid)
        body.insert(scf.YieldOp())

    def lower_invoke(self, op: InvokeOp, pipe: SSAValue | None) -> None:
        kernel = _lookup_kernel(self.module, op.callee.string_value(), op)
        builder = _before(op)
        aggregation = op.aggregation.data if op.aggregation is not None else None
        result = self.launch(builder, kernel, op.args, pipe, aggregation, op)
        if op.result is not None:
            assert result is not None
            op.result.replace_all_uses_with(result)
        Rewriter.erase_op(op)

    def lower_iterate(self, op: IterateOp, pipe: SSAValue | None) -> None:
        kernel = _lookup_kernel(self.module, op.callee.string_value(), op)
        builder = _before(op)
        uses_worklist = _launch_of(kernel).worklist is not None
        owned = None
        if uses_worklist and pipe is None:
            owned = pipe = self.open_pipe(op, builder)
        positions = op.carried_positions
        inits = [op.args[p] for p in positions]
        carried_types = [v.type for v in inits]

        first = (
            _not_empty(builder, _rt(builder, "irgl_pipe_in_size", [pipe])[0])
            if uses_worklist and pipe is not None
            else builder.const(1, i1)
        )
        before = Block(arg_types=[i1, *carried_types])
        before.add_op(scf.ConditionOp(before.args[0], *before.args[1:]))
        after_block = op.body.block
        op.body.detach_block(after_block)
        loop = scf.WhileOp(
            [first, *inits],
            carried_types,
            Region(before),
            Region(after_block),
        )
        builder.insert(loop)
        terminator = after_block.last_op
        assert isinstance(terminator, YieldOp)

        # launch at the top of the body, with the current carried values
        args = list(op.args)
        for position, value in zip(positions, after_block.args, strict=True):
            args[position] = value
        top = after_block.first_op
        assert top is not None
        top_builder = _before(top)
        aggregation = op.aggregation.data if op.aggregation is not None else None
        result = self.launch(top_builder, kernel, args, pipe, aggregation, op)

        # nested orchestration in the body (it inherits this pipe context)
        for inner in list(after_block.ops):
            if inner is not terminator and not _is_before(inner, top):
                self.lower_op(inner, pipe)

        end = _before(terminator)
        keep_going = self._continue_condition(
            end, op, uses_worklist, pipe, result, terminator
        )
        Rewriter.replace_op(terminator, scf.YieldOp(keep_going, *terminator.values))
        for old, new in zip(op.results_, loop.results, strict=True):
            old.replace_all_uses_with(new)
        if owned is not None:
            after = _before(op)
            _rt(after, "irgl_pipe_destroy", [owned])
        Rewriter.erase_op(op)

    def _continue_condition(
        self,
        end: LoweringBuilder,
        op: IterateOp,
        uses_worklist: bool,
        pipe: SSAValue | None,
        result: SSAValue | None,
        terminator: YieldOp,
    ) -> SSAValue:
        conditions: list[SSAValue] = []
        if uses_worklist and pipe is not None:
            (size,) = _rt(end, "irgl_pipe_in_size", [pipe])
            conditions.append(_not_empty(end, size))
        if op.term_cond is not None and result is not None:
            value = result
            if op.term_cond.data == TermCond.UNTIL:
                value = end.insert(arith.XOrIOp(result, end.const(1, i1))).results[0]
            conditions.append(value)
        condition = conditions[0] if conditions else end.const(1, i1)
        for other in conditions[1:]:
            condition = end.insert(arith.AndIOp(condition, other)).results[0]
        if op.extra is not None and terminator.extra is not None:
            combine = arith.AndIOp if op.extra.data == ExtraCond.AND else arith.OrIOp
            condition = end.insert(combine(condition, terminator.extra)).results[0]
        return condition

    def lower_pipe(self, op: PipeOp, pipe: SSAValue | None) -> None:
        builder = _before(op)
        owned = None
        if pipe is None:
            owned = pipe = self.open_pipe(op, builder)
        body = op.body.block
        terminator = body.last_op
        assert isinstance(terminator, YieldOp)
        if op.once is not None:
            for inner in list(body.ops):
                if inner is terminator:
                    continue
                inner.detach()
                builder.insert(inner)
                self.lower_op(inner, pipe)
        else:
            # do { body } while (in not empty)
            before = Block(arg_types=[i1])
            before.add_op(scf.ConditionOp(before.args[0]))
            op.body.detach_block(body)
            loop = scf.WhileOp([builder.const(1, i1)], [], Region(before), Region(body))
            builder.insert(loop)
            for inner in list(body.ops):
                if inner is not terminator:
                    self.lower_op(inner, pipe)
            end = _before(terminator)
            (size,) = _rt(end, "irgl_pipe_in_size", [pipe])
            Rewriter.replace_op(terminator, scf.YieldOp(_not_empty(end, size)))
        if owned is not None:
            _rt(builder, "irgl_pipe_destroy", [owned])
        Rewriter.erase_op(op)


def _launch_of(kernel: gpu.FuncOp) -> LaunchAttr:
    """The launch information convert-irgl-kernels put on `kernel`."""
    launch = LaunchAttr.of(kernel)
    if launch is None:
        fail(kernel, f"kernel @{kernel.sym_name.data} has no #irgl_rt.launch")
    return launch


def _before(op: Operation) -> LoweringBuilder:
    return LoweringBuilder(InsertPoint.before(op))


def _at_end(block: Block) -> LoweringBuilder:
    return LoweringBuilder(InsertPoint.at_end(block))


def _is_before(a: Operation, b: Operation) -> bool:
    """Is `a` before `b` in the same block?"""
    op = a.next_op
    while op is not None:
        if op is b:
            return True
        op = op.next_op
    return False


@dataclass(frozen=True)
class ConvertIrglOrchestration(ModulePass):
    """Lower irgl.invoke / irgl.iterate / irgl.pipe in host functions to
    scf loops, gpu.launch_func and pipe-context runtime calls.

    Option: `retry_backoff` (bool, false): size each re-launch of a retrying
    kernel by `irgl_pipe_backoff_grid` (see the module docstring;
    `-p 'convert-irgl-orchestration{retry_backoff=true}'`).
    """

    name = "convert-irgl-orchestration"

    retry_backoff: bool = False
    """Re-launch a retrying kernel on fewer blocks in each retry round."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.body.block.ops):
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _Lowering(op, function, self.retry_backoff).lower_region(
                    function.body, None
                )
