"""The device form of orchestration: the body of a control kernel.

`ControlLowering` builds, in the control kernel of irgl-outline-iterations,
what convert-irgl-orchestration builds on the host: each invocation is a
`func.call` of the invoked kernel's body as a device function followed by
`irgl_grid_sync()`; worklist sizes, overflow flags and Any/All cells are
read on the device (once per block, broadcast through shared memory); in/out
and in/retry are swapped there (the handles are SSA values every thread
holds alike, rotated through a fourth, spare worklist that global thread 0
empties one step ahead, so one grid barrier per invocation suffices; the
retry worklist is the spare when no kernel retries; each Any/All cell has
three slots, one per step, reset two steps ahead); an Iterate or a looping
Pipe becomes an `scf.while` whose condition (worklist not empty, the
Any/All result, the extra And/Or condition) and body (carried values) are
evaluated there. `ControlState` is what every thread carries from step to
step. The small-worklist mode refines the rounds of a loop
(`lowering/outline_small_worklist.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, MemRefType, i1, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irgl_dialect.attributes import Aggregation, ExtraCond, TermCond
from irgl_dialect.kernels import YieldOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import WorklistType
from irgl_dialect.runtime_library import runtime_function
from lowering.builders import LoweringBuilder
from lowering.outline_plan import Plan, holds_invocation, launch_of

#: Runs one step of an invocation at a builder: its body on the given
#: worklists (in, out, retry) and size of in, then its barrier.
RunStep = Callable[[LoweringBuilder, Sequence[SSAValue], SSAValue | None], None]


def rt_call(b: LoweringBuilder, name: str, args: Sequence[SSAValue]) -> list[SSAValue]:
    """Call the runtime function `name` (from the runtime library)."""
    return b.call(runtime_function(name), args)


def rt_value(b: LoweringBuilder, name: str, args: Sequence[SSAValue]) -> SSAValue:
    """A runtime call with one result."""
    return b.call_value(runtime_function(name), args)


def boolean(b: LoweringBuilder, value: bool) -> SSAValue:
    """An i1 constant."""
    return b.const(int(value), i1)


def if_then(
    b: LoweringBuilder, condition: SSAValue, then: Callable[[LoweringBuilder], object]
) -> None:
    """`if (condition) { then }` at `b`."""
    branch = scf.IfOp(condition, [], Region(Block()))
    b.insert(branch)
    inner = b.nested(InsertPoint.at_end(branch.true_region.block))
    then(inner)
    inner.insert(scf.YieldOp())


def positive(b: LoweringBuilder, size: SSAValue) -> SSAValue:
    """`size > 0`."""
    return b.op(arith.CmpiOp(size, b.index(0), "sgt"))


RoundBuilder = Callable[
    [LoweringBuilder, list[SSAValue]], tuple[SSAValue, list[SSAValue]]
]
"""Builds one round of a loop from its carried values; returns the loop
condition and the next carried values."""


@dataclass
class ControlState:
    """The worklist handles every thread of a control kernel holds, the size
    of `in` once read after the last grid barrier, and the step counter that
    selects cell slots."""

    worklists: list[SSAValue]
    """[in, out, retry, spare], or [] without worklists."""
    size: SSAValue | None
    """`irgl_ctl_size(in)` (index), or None until it is read; loop-carried
    (so always read at loop boundaries) when there are worklists."""
    epoch: SSAValue

    def values(self) -> list[SSAValue]:
        if not self.worklists:
            return [self.epoch]
        assert self.size is not None, "read the in size before a loop boundary"
        return [*self.worklists, self.size, self.epoch]

    def types(self) -> list[Attribute]:
        return [v.type for v in self.values()]

    @staticmethod
    def of(values: Sequence[SSAValue], with_worklists: bool) -> ControlState:
        values = list(values)
        if not with_worklists:
            return ControlState([], None, values[-1])
        return ControlState(values[:4], values[4], values[-1])


class ControlLowering:
    """Builds the body of one control kernel from an Iterate/Pipe."""

    def __init__(
        self,
        plan: Plan,
        bodies: dict[str, str],
        mapping: dict[SSAValue, SSAValue],
        cells: dict[tuple[str, Aggregation], SSAValue],
        status: SSAValue,
        state: ControlState,
        sized: set[str],
        gridded: set[str],
        geometry: tuple[SSAValue, SSAValue] | None,
    ):
        self.plan = plan
        self.bodies = bodies
        self.mapping = mapping
        self.cells = cells
        self.status = status
        self.state = state
        self.sized = sized
        """Kernels whose device body takes the size of `in`."""
        self.gridded = gridded
        """Kernels whose device body takes the calling block and the number
        of blocks."""
        self.geometry = geometry
        """`gpu.block_id x` and `gpu.grid_dim x` (when some body is gridded)."""
        self.block_mode = False
        """Building code that block 0 alone runs (small-worklist mode)."""
        self.small_flag: SSAValue | None = None
        """Building a round that both the grid and block 0 alone run (the
        small-worklist mode's `merged` form): true while block 0 runs it."""
        self.drained: set[str] = set()
        """Kernels whose retry storms block 0 drains (gridded and sized:
        `_drain`)."""
        self.drain_solo = True
        """Drains run streaks of one-item windows where items contend
        (`_Drain.solo`)."""
        self.lone_wins: set[str] = set()
        """Drained kernels whose only retries are their lost Exclusives
        (`_Drain.lone_wins`)."""
        self.drain_blocks = 1
        """The blocks of a drain's team (`_Drain.blocks`)."""
        self.retry_merged = False
        """An invocation that retries runs its first attempt and its retry
        rounds from one call of its body (a do-while), not from a call
        before the retry loop and one inside it."""

    # -- steps ---------------------------------------------------------

    def invoke(
        self,
        b: LoweringBuilder,
        name: str,
        args: Sequence[SSAValue],
        aggregation: Aggregation | None,
    ) -> SSAValue | None:
        """One invocation: run the body, barrier, retry rounds, advance."""
        kernel = self.plan.kernels[name]
        launch = launch_of(kernel)
        uses_worklist = launch.worklist is not None
        operands = [self.mapping.get(a, a) for a in args]
        epoch = self.state.epoch
        self._prologue(b)
        slot = None
        if launch.cell is not None:
            cell = self.cells[(name, aggregation or Aggregation.ANY)]
            slot = rt_value(b, "irgl_ctl_cell_slot", [cell, epoch])
        cell_args = [slot] if slot is not None else []
        grid_args = self._grid_arguments(b) if name in self.gridded else []
        # in the small-worklist mode (worklist kernels only) every run is
        # followed by irgl_ctl_size_check, whose first barrier is the step's
        assert uses_worklist or not self.block_mode

        def call(
            at: LoweringBuilder,
            worklists: Sequence[SSAValue],
            size: SSAValue | None,
            grid: Sequence[SSAValue],
        ) -> None:
            sizes = [size] if size is not None and name in self.sized else []
            at.stmt(
                func.CallOp(
                    self.bodies[name],
                    [*operands, *worklists, *cell_args, *sizes, *grid],
                    [],
                )
            )

        def run(
            at: LoweringBuilder, worklists: Sequence[SSAValue], size: SSAValue | None
        ) -> None:
            call(at, worklists, size, grid_args)
            if self.block_mode:
                return
            if self.small_flag is None:
                rt_call(at, "irgl_grid_sync", [])
                return
            # the merged round: a grid barrier unless block 0 runs it alone
            if_then(
                at,
                at.negate(self.small_flag),
                lambda inside: rt_call(inside, "irgl_grid_sync", []),
            )

        if not uses_worklist:
            run(b, [], None)
        else:
            size = self._in_size(b) if name in self.sized else None
            w_in, w_out, w_retry, w_spare = self.state.worklists
            drain = None
            if (
                launch.retries
                and name in self.drained
                and not self.block_mode
                and size is not None
            ):
                drain = _Drain(
                    call,
                    w_out,
                    self.status,
                    size,
                    self.drain_solo,
                    self.drain_solo and name in self.lone_wins,
                    self.drain_blocks,
                )
            if launch.retries and self.retry_merged:
                w_in, w_retry, w_spare = self._attempts(
                    b, run, w_in, w_out, w_retry, w_spare, size, drain
                )
            else:
                run(
                    b, [w_in, w_out, w_retry if self.plan.uses_retry else w_spare], size
                )
                if launch.retries:
                    w_in, w_retry, w_spare = self._retry_rounds(
                        b, run, w_in, w_out, w_retry, w_spare, drain
                    )
            # in := out, out := spare (emptied before the barrier), spare := in
            self.state.worklists = [w_out, w_spare, w_retry, w_in]
            # the new in's size and overflow check in one read (thread 0 of
            # each block), right after the step's barrier
            self.state.size = rt_value(b, "irgl_ctl_size_check", [w_out, self.status])
        one = b.index(1)
        self.state.epoch = b.op(arith.AddiOp(epoch, one))
        if aggregation is None or slot is None:
            return None
        return rt_value(b, "irgl_ctl_cell_value", [slot])

    def _grid_arguments(self, b: LoweringBuilder) -> list[SSAValue]:
        """The calling block and the number of blocks a gridded device body
        maps its iterations over: block 0 of 1 in the small-worklist mode."""
        if self.block_mode:
            return [b.index(0), b.index(1)]
        assert self.geometry is not None, "gridded bodies need the geometry"
        if self.small_flag is None:
            return list(self.geometry)
        block, blocks = self.geometry
        return [
            b.op(arith.SelectOp(self.small_flag, b.index(0), block)),
            b.op(arith.SelectOp(self.small_flag, b.index(1), blocks)),
        ]

    def _prologue(self, b: LoweringBuilder) -> None:
        """Thread 0 empties the spare worklist and resets the next cell slots
        (visible after the barrier that ends this step)."""
        if self.state.worklists:
            rt_call(b, "irgl_ctl_clear", [self.state.worklists[3]])
        for cell in self.cells.values():
            rt_call(b, "irgl_ctl_cell_prepare", [cell, self.state.epoch])

    def _drain_between_barriers(
        self,
        b: LoweringBuilder,
        drain: _Drain,
        retried: SSAValue,
        losers: SSAValue,
        size: SSAValue,
    ) -> None:
        """Block 0 drains the `size` items of `retried` (`_Drain`) between two
        grid barriers: every block has read the retried items' count before
        block 0 changes it, and they are done after the second."""
        assert self.geometry is not None, "drained bodies are gridded"
        rt_call(b, "irgl_grid_sync", [])
        drain.build(b, self.geometry[0], retried, losers, size)
        rt_call(b, "irgl_grid_sync", [])

    def _attempts(
        self,
        b: LoweringBuilder,
        run: RunStep,
        w_in: SSAValue,
        w_out: SSAValue,
        w_retry: SSAValue,
        w_spare: SSAValue,
        size: SSAValue | None,
        drain: _Drain | None = None,
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The first attempt and the retry rounds of an invocation from one
        call of its body (`retry_merged`): do { run(in, out, retry); n :=
        the size of retry } while (n > 0: in, retry, spare := retry, spare,
        in (emptied)). The worklists, the emptying and, with `drain`, the
        storm test (at most one in 16 of the round's items won, at most 256:
        block 0 drains the retried items, and the loop ends) are those of the
        first attempt followed by `_retry_rounds`; returns (in, retry, spare)
        after the last round."""
        types = [WorklistType()] * 3
        index = IndexType()
        sized = [size] if size is not None else []
        before = Block(arg_types=[*types, *(v.type for v in sized)])
        after = Block(arg_types=[*types, index])
        loop = scf.WhileOp(
            [w_in, w_retry, w_spare, *sized], [*types, index], [before], [after]
        )
        b.insert(loop)
        body = b.nested(InsertPoint.at_end(before))
        cur_in, cur_retry, cur_spare = before.args[:3]
        cur_size = before.args[3] if size is not None else None
        run(body, [cur_in, w_out, cur_retry], cur_size)
        retried = rt_value(body, "irgl_ctl_size_check", [cur_retry, self.status])
        live = positive(body, retried)
        if drain is not None:
            assert cur_size is not None
            storm = rt_value(body, "irgl_ctl_drain_storm", [retried, cur_size])
            storm = body.op(arith.AndIOp(live, storm))
            if self.small_flag is not None:  # block 0 alone drains nothing
                storm = body.op(arith.AndIOp(storm, body.negate(self.small_flag)))
            branch = scf.IfOp(storm, [i1], Region(Block()), Region(Block()))
            body.insert(branch)
            drained = body.nested(InsertPoint.at_end(branch.true_region.block))
            self._drain_between_barriers(drained, drain, cur_retry, cur_spare, retried)
            drained.insert(scf.YieldOp(boolean(drained, False)))
            kept = body.nested(InsertPoint.at_end(branch.false_region.block))
            kept.insert(scf.YieldOp(live))
            live = branch.results[0]
        body.insert(scf.ConditionOp(live, cur_in, cur_retry, cur_spare, retried))
        rounds = b.nested(InsertPoint.at_end(after))
        old_in, new_in, new_retry, new_size = after.args
        rt_call(rounds, "irgl_ctl_clear", [old_in])
        rounds.insert(
            scf.YieldOp(
                new_in, new_retry, old_in, *([new_size] if size is not None else [])
            )
        )
        return loop.results[0], loop.results[1], loop.results[2]

    def _retry_rounds(
        self,
        b: LoweringBuilder,
        run: RunStep,
        w_in: SSAValue,
        w_out: SSAValue,
        w_retry: SSAValue,
        w_spare: SSAValue,
        drain: _Drain | None = None,
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """while (retry has work) { in, retry, spare := retry, spare, in; run }
        (the size of retry read by the condition goes on to the body). With
        `drain`, a round in which at most one in 16 attempted items won (and
        at most 256: `irgl_ctl_drain_storm`) is followed by block 0 draining
        the retried items instead (`_Drain`), and the loop ends."""
        types = [WorklistType()] * 3
        carried = [drain.attempted] if drain is not None else []
        before = Block(arg_types=[*types, *(v.type for v in carried)])
        after = Block(arg_types=[*types, IndexType(), *(v.type for v in carried)])
        loop = scf.WhileOp(
            [w_in, w_retry, w_spare, *carried],
            [*types, IndexType(), *(v.type for v in carried)],
            [before],
            [after],
        )
        b.insert(loop)
        cond = b.nested(InsertPoint.at_end(before))
        size = rt_value(cond, "irgl_ctl_size_check", [before.args[1], self.status])
        live = positive(cond, size)
        cond.insert(scf.ConditionOp(live, *before.args[:3], size, *before.args[3:]))
        body = b.nested(InsertPoint.at_end(after))
        old_in, new_in, new_retry, new_size = after.args[:4]

        def grid_round(at: LoweringBuilder) -> None:
            """in, retry, spare := retry, spare, in (emptied); run."""
            rt_call(at, "irgl_ctl_clear", [old_in])
            run(at, [new_in, w_out, new_retry], new_size)
            at.insert(scf.YieldOp(new_in, new_retry, old_in))

        if drain is None:
            grid_round(body)
            return loop.results[0], loop.results[1], loop.results[2]
        storm = rt_value(body, "irgl_ctl_drain_storm", [new_size, after.args[4]])
        if self.small_flag is not None:  # block 0 alone drains nothing
            storm = body.op(arith.AndIOp(storm, body.negate(self.small_flag)))
        branch = scf.IfOp(storm, types, Region(Block()), Region(Block()))
        body.insert(branch)
        drained = body.nested(InsertPoint.at_end(branch.true_region.block))
        self._drain_between_barriers(drained, drain, new_in, new_retry, new_size)
        # the retried items are done: the next condition reads an empty retry
        drained.insert(scf.YieldOp(old_in, new_in, new_retry))
        grid_round(body.nested(InsertPoint.at_end(branch.false_region.block)))
        body.insert(scf.YieldOp(*branch.results, new_size))
        return loop.results[0], loop.results[1], loop.results[2]

    # -- structure -----------------------------------------------------

    def lower_ops(self, b: LoweringBuilder, ops: Sequence[Operation]) -> None:
        for op in ops:
            if isinstance(op, InvokeOp):
                aggr = op.aggregation.data if op.aggregation else None
                result = self.invoke(b, op.callee.string_value(), op.args, aggr)
                if op.result is not None:
                    assert result is not None
                    self.mapping[op.result] = result
            elif isinstance(op, IterateOp):
                self.iterate(b, op)  # results mapped; no read-back inside
            elif isinstance(op, PipeOp):
                self.pipe(b, op)
            elif holds_invocation(op):
                assert isinstance(op, scf.IfOp)
                self.branch(b, op)
            elif not isinstance(op, YieldOp):
                clone = op.clone(value_mapper=self.mapping)
                b.insert(clone)
                for old, new in zip(op.results, clone.results, strict=True):
                    self.mapping[old] = new

    def branch(self, b: LoweringBuilder, op: scf.IfOp) -> None:
        """An `scf.if` whose branches invoke kernels (irgl-outline-iterations
        `conditional`): every thread takes the same branch (its condition is
        a value they hold alike), and the state the steps carry (worklist
        handles, the size of `in`, the step counter) leaves each branch as
        results of the `scf.if`, beside its own."""
        with_wls = bool(self.state.worklists)
        self._boundary(b)
        start = self.state
        own = [r.type for r in op.results]
        cond = self.mapping.get(op.cond, op.cond)
        branch = scf.IfOp(
            cond, [*own, *start.types()], Region(Block()), Region(Block())
        )
        b.insert(branch)
        for new, old in (
            (branch.true_region, op.true_region),
            (branch.false_region, op.false_region),
        ):
            self.state = ControlState(list(start.worklists), start.size, start.epoch)
            at = b.nested(InsertPoint.at_end(new.block))
            ops = list(old.block.ops) if old.blocks else []
            yielded: list[SSAValue] = []
            if ops and isinstance(ops[-1], scf.YieldOp):
                yielded = list(ops[-1].operands)
                ops = ops[:-1]
            self.lower_ops(at, ops)
            self._boundary(at)
            at.insert(
                scf.YieldOp(
                    *(self.mapping.get(v, v) for v in yielded), *self.state.values()
                )
            )
        for old_result, new_result in zip(
            op.results, branch.results[: len(own)], strict=True
        ):
            self.mapping[old_result] = new_result
        self.state = ControlState.of(branch.results[len(own) :], with_wls)

    def _in_size(self, b: LoweringBuilder) -> SSAValue:
        """The size of `in` (read once after each barrier that changes it)."""
        if self.state.size is None:
            in_ = self.state.worklists[0]
            self.state.size = rt_value(b, "irgl_ctl_size", [in_])
        return self.state.size

    def _has_work(self, b: LoweringBuilder) -> SSAValue:
        return positive(b, self._in_size(b))

    def _boundary(self, b: LoweringBuilder) -> None:
        """Read what loop-carried state needs before a loop boundary."""
        if self.state.worklists:
            self._in_size(b)

    def iterate(
        self,
        b: LoweringBuilder,
        op: IterateOp,
        candidates: Sequence[SSAValue] = (),
    ) -> tuple[list[SSAValue], dict[int, SSAValue]]:
        """The Iterate as an `scf.while`; its results, and with `candidates`
        (see `memref_candidates`) the i32 index into them of each carried
        memref slot's final value, by slot."""
        name = op.callee.string_value()
        kernel = self.plan.kernels[name]
        uses_worklist = launch_of(kernel).worklist is not None
        positions = op.carried_positions
        tracked = [
            j
            for j, p in enumerate(positions)
            if candidates and isinstance(op.args[p].type, MemRefType)
        ]
        inits = [self.mapping.get(op.args[p], op.args[p]) for p in positions]
        inits += [
            b.const(candidates.index(op.args[positions[j]]), i32) for j in tracked
        ]
        carried_types = [v.type for v in inits]
        first = self._has_work(b) if uses_worklist else boolean(b, True)
        self._boundary(b)
        state_types = self.state.types()
        with_wls = bool(self.state.worklists)
        before = Block(arg_types=[i1, *carried_types, *state_types])
        before.add_op(scf.ConditionOp(before.args[0], *before.args[1:]))
        after = Block(arg_types=[*carried_types, *state_types])
        loop = scf.WhileOp(
            [first, *inits, *self.state.values()],
            [*carried_types, *state_types],
            [before],
            [after],
        )
        b.insert(loop)
        body = b.nested(InsertPoint.at_end(after))
        ncarried = len(carried_types)
        self.state = ControlState.of(after.args[ncarried:], with_wls)
        outs = self._round(
            body,
            op,
            list(after.args[:ncarried]),
            lambda at, carried: self._iterate_round(
                at, op, carried, tracked, candidates
            ),
        )
        body.insert(scf.YieldOp(*outs))
        self.state = ControlState.of(loop.results[ncarried:], with_wls)
        nvalues = len(positions)
        results: list[SSAValue] = list(loop.results[:nvalues])
        for old, new in zip(op.results_, results, strict=True):
            self.mapping[old] = new
        identities: dict[int, SSAValue] = {
            j: loop.results[nvalues + i] for i, j in enumerate(tracked)
        }
        return results, identities

    def _iterate_round(
        self,
        body: LoweringBuilder,
        op: IterateOp,
        carried: list[SSAValue],
        tracked: Sequence[int] = (),
        candidates: Sequence[SSAValue] = (),
    ) -> tuple[SSAValue, list[SSAValue]]:
        """One round of an Iterate: the invocation and the body; returns the
        loop condition and the next carried values (after the Iterate's own,
        the i32 names of its `tracked` memref slots, see `iterate`)."""
        name = op.callee.string_value()
        uses_worklist = launch_of(self.plan.kernels[name]).worklist is not None
        args = list(op.args)
        nvalues = len(op.carried_positions)
        values_in, names_in = carried[:nvalues], carried[nvalues:]
        for position, value in zip(op.carried_positions, values_in, strict=True):
            args[position] = value
        for old, new in zip(op.body.block.args, values_in, strict=True):
            self.mapping[old] = new
        aggr = op.aggregation.data if op.aggregation else None
        result = self.invoke(body, name, args, aggr)
        terminator = op.body.block.last_op
        assert isinstance(terminator, YieldOp)
        self.lower_ops(body, [o for o in op.body.block.ops if o is not terminator])
        conditions: list[SSAValue] = []
        if uses_worklist:
            conditions.append(self._has_work(body))
        if op.term_cond is not None and result is not None:
            value = result
            if op.term_cond.data == TermCond.UNTIL:
                value = body.op(arith.XOrIOp(result, boolean(body, True)))
            conditions.append(value)
        condition = conditions[0] if conditions else boolean(body, True)
        for other in conditions[1:]:
            condition = body.op(arith.AndIOp(condition, other))
        if op.extra is not None and terminator.extra is not None:
            combine = arith.AndIOp if op.extra.data == ExtraCond.AND else arith.OrIOp
            extra = self.mapping.get(terminator.extra, terminator.extra)
            condition = body.op(combine(condition, extra))
        values = [self.mapping.get(v, v) for v in terminator.values]
        block_args: list[SSAValue] = list(op.body.block.args)
        for j in tracked:
            source = terminator.values[j]
            if source in block_args:
                k = block_args.index(source)
                values.append(names_in[tracked.index(k)])
            else:
                values.append(body.const(candidates.index(source), i32))
        self._boundary(body)
        return condition, values

    def pipe(self, b: LoweringBuilder, op: PipeOp) -> None:
        ops = [o for o in op.body.block.ops if not isinstance(o, YieldOp)]
        if op.once is not None:
            self.lower_ops(b, ops)
            return
        with_wls = bool(self.state.worklists)
        self._boundary(b)
        state_types = self.state.types()
        before = Block(arg_types=[i1, *state_types])
        before.add_op(scf.ConditionOp(before.args[0], *before.args[1:]))
        after = Block(arg_types=state_types)
        loop = scf.WhileOp(
            [boolean(b, True), *self.state.values()], state_types, [before], [after]
        )
        b.insert(loop)
        body = b.nested(InsertPoint.at_end(after))
        self.state = ControlState.of(after.args, with_wls)
        outs = self._round(body, op, [], lambda at, _: self._pipe_round(at, ops))
        body.insert(scf.YieldOp(*outs))
        self.state = ControlState.of(loop.results, with_wls)

    def _pipe_round(
        self, body: LoweringBuilder, ops: Sequence[Operation]
    ) -> tuple[SSAValue, list[SSAValue]]:
        """One round of a looping Pipe; it goes on while `in` has work."""
        self.lower_ops(body, ops)
        if not self.state.worklists:
            return boolean(body, False), []
        return self._has_work(body), []

    def _round(
        self,
        b: LoweringBuilder,
        loop: IterateOp | PipeOp,
        carried: list[SSAValue],
        build: RoundBuilder,
    ) -> list[SSAValue]:
        """One round of `loop` at `b`; returns what the loop's after region
        yields (condition, carried values, state). The small-worklist mode
        (`SmallWorklistLowering`) overrides it."""
        condition, values = build(b, carried)
        return [condition, *values, *self.state.values()]


CallBody = Callable[
    [LoweringBuilder, Sequence[SSAValue], SSAValue | None, Sequence[SSAValue]], None
]
"""Builds a call of an invoked kernel's device body: (builder, worklists,
size of in, grid arguments)."""


def _teamed(
    name: str, args: list[SSAValue], team: SSAValue | None
) -> tuple[str, list[SSAValue]]:
    """The control-kernel runtime call `name(args)` of a drain, or with a
    team its team form `irgl_ctl_team_<rest of name>(args, team)`."""
    if team is None:
        return name, args
    return name.replace("irgl_ctl_", "irgl_ctl_team_", 1), [*args, team]


@dataclass
class _Drain:
    """Block 0 draining a retry storm of a gridded, sized device body (the
    runtime's `irgl_ctl_drain_*`): pass after pass over the retried items,
    each in windows of `irgl_ctl_drain_window` items, a window being one
    call of the body on `irgl_wl_window(retried, head)` with a grid of one
    block (its Exclusive phases end in block barriers); a pass's losers go
    back to the front of the retried worklist for the next pass. With
    `blocks` > 1 the first `blocks` blocks of the grid take each window as a
    team (team barriers between its phases), while windows hold at least
    the runtime's `IRGL_DRAIN_TEAM_ITEMS` items (1 by default); from the
    first smaller one block 0 goes on alone and the others leave the drain
    (`irgl_ctl_drain_team`)."""

    call: CallBody
    out: SSAValue
    status: SSAValue
    attempted: SSAValue
    """The size of `in` of the invocation's first round (the first
    storm test's denominator)."""
    solo: bool = True
    """Where a window let at most one of its items win, streaks of one-item
    windows follow (`irgl_ctl_drain_next`, `_left`, `_streak`); else each
    window holds twice the last one's winners."""
    lone_wins: bool = False
    """The body retries only its lost Exclusives, and a launch's only
    contender wins without claims (`solo`): a one-item window retries
    nothing, so its losers are not read back (`irgl_ctl_drain_losers`)."""
    blocks: int = 1
    """The blocks of a drain's team (`retry_drain_blocks`; 1: block 0
    alone)."""

    def build(
        self,
        b: LoweringBuilder,
        block: SSAValue,
        retried: SSAValue,
        losers: SSAValue,
        size: SSAValue,
    ) -> None:
        """`if (block == 0) { passes }` (with a team: `if (block is in the
        first window's team)`) at `b`: `retried` holds `size` items,
        `losers` is empty; both are empty afterwards (visible to the other
        blocks after the next grid barrier)."""
        team: SSAValue | None = None
        if self.blocks > 1:
            # the first window: as if every item had won (a block's worth)
            start = rt_value(b, "irgl_ctl_drain_window", [size])
            team = rt_value(
                b, "irgl_ctl_drain_team_start", [b.index(self.blocks), start]
            )
            first = rt_value(b, "irgl_ctl_drain_member", [team])
        else:
            first = b.op(arith.CmpiOp(block, b.index(0), "eq"))
        only = scf.IfOp(first, [], Region(Block()))
        b.insert(only)
        at = b.nested(InsertPoint.at_end(only.true_region.block))
        if team is None:
            start = rt_value(at, "irgl_ctl_drain_window", [size])
        index = IndexType()
        # passes: (items left, window size[, team])
        carried = [size, start] + ([team] if team is not None else [])
        before = Block(arg_types=[index] * len(carried))
        after = Block(arg_types=[index] * len(carried))
        passes = scf.WhileOp(carried, [index] * len(carried), [before], [after])
        at.insert(passes)
        cond = at.nested(InsertPoint.at_end(before))
        more = positive(cond, before.args[0])
        if team is not None:  # a block that left the team leaves the drain
            member = rt_value(cond, "irgl_ctl_drain_member", [before.args[2]])
            more = cond.op(arith.AndIOp(more, member))
        cond.insert(scf.ConditionOp(more, *before.args))
        body = at.nested(InsertPoint.at_end(after))
        count, window = after.args[:2]
        now_team = after.args[2] if team is not None else None
        _, window, lost, now_team = self._pass(
            body, block, retried, losers, count, window, now_team
        )
        rt_call(
            body, *_teamed("irgl_ctl_drain_move", [retried, losers, lost], now_team)
        )
        body.insert(scf.YieldOp(lost, window, *([now_team] if now_team else [])))
        at.insert(scf.YieldOp())

    def _pass(
        self,
        b: LoweringBuilder,
        block: SSAValue,
        retried: SSAValue,
        losers: SSAValue,
        count: SSAValue,
        window: SSAValue,
        team: SSAValue | None,
    ) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue | None]:
        """One pass over the `count` items of `retried` in windows; returns
        (head, next window size, losers of the pass, team after it). With
        `solo` the pass also carries the streak's length and its one-item
        windows left; with a team, the team (a block that left it stops)."""
        index = IndexType()
        zero = b.index(0)
        init = [zero, window, zero]
        if self.solo:
            init += [b.index(1), zero]
        if team is not None:
            init.append(team)
        before = Block(arg_types=[index] * len(init))
        after = Block(arg_types=[index] * len(init))
        loop = scf.WhileOp(init, [index] * len(init), [before], [after])
        b.insert(loop)
        cond = b.nested(InsertPoint.at_end(before))
        head = before.args[0]
        more = cond.op(arith.CmpiOp(head, count, "slt"))
        if team is not None:
            member = rt_value(cond, "irgl_ctl_drain_member", [before.args[-1]])
            more = cond.op(arith.AndIOp(more, member))
        cond.insert(scf.ConditionOp(more, *before.args))
        body = b.nested(InsertPoint.at_end(after))
        head, want, lost = after.args[:3]
        now_team = after.args[-1] if team is not None else None
        rest = body.op(arith.SubiOp(count, head))
        k = body.op(arith.MinSIOp(want, rest))
        view = rt_value(body, "irgl_wl_window", [retried, head])
        geometry = (
            [body.index(0), body.index(1)] if now_team is None else [block, now_team]
        )
        self.call(body, [view, self.out, losers], k, geometry)
        read = (
            ("irgl_ctl_drain_losers", [losers, self.status, k, lost])
            if self.lone_wins
            else ("irgl_ctl_size_check", [losers, self.status])
        )
        now = rt_value(body, *_teamed(*read, now_team))
        new_losers = body.op(arith.SubiOp(now, lost))
        won = body.op(arith.SubiOp(k, new_losers))
        solo: list[SSAValue] = []  # the streak's length, its windows left
        if self.solo:
            streak, left = after.args[3:5]
            nxt = rt_value(body, "irgl_ctl_drain_next", [won, k, left])
            left_after = rt_value(body, "irgl_ctl_drain_left", [won, k, streak, left])
            streak_after = rt_value(body, "irgl_ctl_drain_streak", [won, k, streak])
            solo = [streak_after, left_after]
        else:
            nxt = rt_value(body, "irgl_ctl_drain_window", [won])
        moved = body.op(arith.AddiOp(head, k))
        rest_team: list[SSAValue] = []
        if now_team is not None:
            rest_team = [rt_value(body, "irgl_ctl_drain_team", [now_team, nxt])]
        body.insert(scf.YieldOp(moved, nxt, now, *solo, *rest_team))
        results = loop.results
        return (
            results[0],
            results[1],
            results[2],
            results[-1] if team is not None else None,
        )
