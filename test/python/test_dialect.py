"""Unit tests of the irgl dialect: Python constructors, verifiers, placement
helpers, and the examples and bad programs end to end."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    ModuleOp,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from irgl_dialect import placement
from irgl_dialect.attributes import (
    Aggregation,
    ExclusiveForm,
    ExtraCond,
    GraphType,
    IteratorKind,
    KernelKind,
    TermCond,
)
from irgl_dialect.c_escape import CBlockOp, CDeclGlobalOp, CExprOp, NamesOp, NopOp
from irgl_dialect.dialect import Irgl
from irgl_dialect.graph import EdgeDstOp, EdgeWeightOp, NumNodesOp
from irgl_dialect.kernels import KernelOp, ReturnOp, YieldOp
from irgl_dialect.loops import ForAllOp, ForOp
from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
from irgl_dialect.runtime import GridSizeOp, IrglRuntime
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
from irgl_tools.opt_main import main as irgl_opt_main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.mlir"))
BAD_PROGRAMS = sorted((REPO / "test/filecheck/dialect/bad-programs").glob("*.mlir"))
IRGL_OPT = [sys.executable, str(REPO / "tools" / "irgl-opt")]

I32_ARRAY = MemRefType(i32, [DYNAMIC_INDEX])
INDEX_ARRAY = MemRefType(IndexType(), [DYNAMIC_INDEX])


# --------------------------------------------------------------------------
# Building IR with the Python constructors
# --------------------------------------------------------------------------


def kernel(
    name: str,
    inputs: Sequence[Attribute],
    build: Callable[..., object],
    *,
    kind: KernelKind = KernelKind.PLAIN,
    launch_bounds: Sequence[int] | None = None,
) -> KernelOp:
    """A kernel whose body `build(*args)` fills, ended by irgl.return."""
    op = KernelOp(name, inputs, kind=kind, launch_bounds=launch_bounds)
    with ImplicitBuilder(op.body):
        build(*op.body.block.args)
        ReturnOp()
    return op


def loop(
    cls: type[ForAllOp] | type[ForOp],
    iterator: IteratorKind,
    bounds: Sequence[SSAValue],
    build: Callable[[SSAValue], object],
) -> ForAllOp | ForOp:
    """A ForAll/For whose body `build(index)` fills, ended by irgl.yield."""
    op = cls(iterator, bounds)
    with ImplicitBuilder(op.body):
        build(op.index)
        YieldOp()
    return op


def body(build: Callable[[], object] = lambda: None) -> Region:
    """A single-block region filled by `build`, ended by irgl.yield."""
    region = Region(Block())
    with ImplicitBuilder(region):
        build()
        YieldOp()
    return region


def module(*ops: Operation) -> ModuleOp:
    return ModuleOp(list(ops))


def context() -> Context:
    ctx = Context()
    for dialect in (
        builtin.Builtin,
        arith.Arith,
        memref.MemRef,
        scf.Scf,
        func.Func,
        gpu.GPU,
        Irgl,
        IrglRuntime,
    ):
        ctx.load_dialect(dialect)
    return ctx


def parse(text: str) -> ModuleOp:
    return Parser(context(), text).parse_module()


def bfs_module() -> ModuleOp:
    """The BFS kernel and a host kernel that iterates it, built in Python."""

    def bfs_body(g: SSAValue, level: SSAValue, lvl: SSAValue) -> None:
        inf = arith.ConstantOp.from_int_and_width(1 << 30, 32)

        def visit(slot: SSAValue) -> None:
            n = PopOp(slot)

            def edge(e: SSAValue) -> None:
                dst = EdgeDstOp(g, e)
                old = memref.LoadOp.get(level, [dst])
                unseen = arith.CmpiOp(old, inf, "eq")
                if_op = scf.IfOp(unseen, [], Region(Block()))
                with ImplicitBuilder(if_op.true_region):
                    memref.StoreOp.get(lvl, level, [dst])
                    PushOp(dst.result)
                    scf.YieldOp()

            loop(ForAllOp, IteratorKind.EDGES, [g, n.item], edge)

        loop(ForAllOp, IteratorKind.WORKLIST, [], visit)

    def main_body(g: SSAValue, level: SSAValue, src: SSAValue) -> None:
        one = arith.ConstantOp.from_int_and_width(1, 32)
        iterate = IterateOp("bfs", [g, level, one.result], carried=[2], initial=[src])
        block = iterate.body.block
        assert block.first_op is not None
        block.erase_op(block.first_op)  # the default empty irgl.yield
        with ImplicitBuilder(iterate.body):
            nxt = arith.AddiOp(block.args[0], one)
            YieldOp([nxt.result])

    return module(
        kernel("bfs", [GraphType(), I32_ARRAY, i32], bfs_body),
        kernel(
            "main",
            [GraphType(), I32_ARRAY, IndexType()],
            main_body,
            kind=KernelKind.HOST,
        ),
    )


def test_build_bfs_verifies_and_round_trips() -> None:
    mod = bfs_module()
    mod.verify()
    text = str(mod)
    assert " in worklist {" in text
    assert "irgl.iterate @bfs(" in text and "initial [" in text
    again = parse(text)
    again.verify()
    assert str(again) == text


def test_build_every_construct() -> None:
    """Atomic, Exclusive (both forms), Retry, Respawn, barriers,
    ReduceAndReturn, C escapes and graph accessors in one plain kernel, driven
    by Invoke/Iterate/Pipe in a host kernel."""

    def work(g: SSAValue, locks: SSAValue, claims: SSAValue, cells: SSAValue) -> None:
        c0 = arith.ConstantOp.from_int_and_width(0, IndexType())
        n = NumNodesOp(g)
        CBlockOp("count += $0;", [n.result], reads=[locks], writes=[claims])
        SyncRunningThreadsOp()

        def each(slot: SSAValue) -> None:
            item = PopOp(slot)
            AtomicOp(locks, item.item, body(lambda: NopOp()))
            AtomicOp(
                locks,
                item.item,
                body(lambda: RespawnOp(item.item)),
                body(lambda: RetryOp(item.item, merge=True)),
            )
            ExclusiveOp(claims, ExclusiveForm.ARRAY, cells, [n.result], body())
            ExclusiveOp(
                claims,
                ExclusiveForm.ITERATOR,
                cells,
                [c0.result, n.result, n.result],
                body(lambda: PushOp(item.item)),
                body(lambda: RetryOp(item.item)),
            )
            LocalBarrierOp()
            weight = EdgeWeightOp(g, item.item)
            CExprOp("$0 > 0", [weight.result], i1)

        loop(ForAllOp, IteratorKind.WORKLIST, [], each)

    def reduce(flag: SSAValue) -> None:
        ReduceAndReturnOp(flag)

    def host(
        g: SSAValue, locks: SSAValue, claims: SSAValue, cells: SSAValue, flag: SSAValue
    ) -> None:
        c0 = arith.ConstantOp.from_int_and_width(0, IndexType())
        args = [g, locks, claims, cells]
        InvokeOp("reduce", [flag], Aggregation.ANY)
        IterateOp(
            "reduce", [flag], term_cond=TermCond.UNTIL, aggregation=Aggregation.ALL
        )
        PipeOp(
            once=True,
            initial=[c0.result],
            body=body(
                lambda: (
                    InvokeOp("work", args),
                    PipeOp(body=body(lambda: InvokeOp("work", args))),
                )
            ),
        )
        IterateOp("work", args, initial_array=cells, initial_count=c0.result)

    inputs = [GraphType(), I32_ARRAY, I32_ARRAY, INDEX_ARRAY]
    mod = module(
        NamesOp(["INF"]),
        CDeclGlobalOp("int", "count", "0", dont_move=True),
        kernel("work", inputs, work, launch_bounds=[256, 2]),
        kernel("reduce", [i1], reduce),
        kernel("main", [*inputs, i1], host, kind=KernelKind.HOST),
    )
    mod.verify()
    text = str(mod)
    for expected in (
        "irgl.atomic",
        "} else {",
        " merge",
        "irgl.exclusive",
        "array(",
        "iterator(",
        "step",
        "irgl.reduce_and_return",
        "irgl.invoke any @reduce(",
        "irgl.iterate until all @reduce(",
        "irgl.pipe once initial [",
        "launch_bounds(256, 2)",
        'irgl.cdecl_global "int" "count" = "0" dont_move',
    ):
        assert expected in text, expected
    assert str(parse(text)) == text


def test_iterate_extra_condition() -> None:
    def frontier() -> None:
        loop(ForAllOp, IteratorKind.WORKLIST, [], lambda slot: None)

    def host(src: SSAValue) -> None:
        iterate = IterateOp("frontier", [], extra=ExtraCond.OR, initial=[src])
        block = iterate.body.block
        assert block.first_op is not None
        block.erase_op(block.first_op)
        with ImplicitBuilder(iterate.body):
            stop = arith.ConstantOp.from_int_and_width(0, 1)
            YieldOp([], stop.result)

    mod = module(
        kernel("frontier", [], frontier),
        kernel("main", [IndexType()], host, kind=KernelKind.HOST),
    )
    mod.verify()
    assert "extra or {" in str(mod)
    assert "irgl.yield extra %" in str(mod)


def test_runtime_ops_build() -> None:
    block = builtin.IndexType()
    fn = func.FuncOp("grid", ((block,), (block,)))
    with ImplicitBuilder(fn.body):
        size = GridSizeOp(
            builtin.SymbolRefAttr("m", ["k"]), fn.body.block.args[0], resident=True
        )
        func.ReturnOp(size.result)
    mod = module(fn)
    mod.verify()
    assert "irgl_rt.grid_size @m::@k, %0 resident" in str(mod)


# --------------------------------------------------------------------------
# Verifiers (with the rule named in the message)
# --------------------------------------------------------------------------


def verify_error(mod: ModuleOp) -> str:
    with pytest.raises(VerifyException) as info:
        mod.verify()
    return str(info.value)


def test_kernel_construct_in_host_kernel() -> None:
    def host(locks: SSAValue, i: SSAValue) -> None:
        AtomicOp(locks, i, body())

    mod = module(kernel("h", [I32_ARRAY, IndexType()], host, kind=KernelKind.HOST))
    message = verify_error(mod)
    assert placement.RULE_KERNEL_CONSTRUCT in message
    assert "in a host kernel" in message


def test_orchestration_in_plain_kernel() -> None:
    mod = module(
        kernel("k", [], lambda: None),
        kernel("p", [], lambda: InvokeOp("k", [])),
    )
    assert placement.RULE_ORCHESTRATION in verify_error(mod)


def test_nested_exclusive() -> None:
    def k(claims: SSAValue, cells: SSAValue, n: SSAValue) -> None:
        def each(i: SSAValue) -> None:
            inner = body(
                lambda: ExclusiveOp(claims, ExclusiveForm.ARRAY, cells, [n], body())
            )
            ExclusiveOp(claims, ExclusiveForm.ARRAY, cells, [n], inner)

        loop(ForAllOp, IteratorKind.RANGE, [n, n], each)

    mod = module(kernel("k", [I32_ARRAY, INDEX_ARRAY, IndexType()], k))
    assert placement.RULE_EXCLUSIVE in verify_error(mod)


def test_invoke_checks_callee_and_arguments() -> None:
    target = kernel("k", [i32], lambda x: None)

    def missing() -> None:
        InvokeOp("nope", [])

    def wrong_count() -> None:
        InvokeOp("k", [])

    assert placement.RULE_CALLEE in verify_error(
        module(target, kernel("h", [], missing, kind=KernelKind.HOST))
    )
    target = kernel("k", [i32], lambda x: None)
    assert placement.RULE_ARGUMENTS in verify_error(
        module(target, kernel("h", [], wrong_count, kind=KernelKind.HOST))
    )


def test_worklist_kernel_needs_a_pipe() -> None:
    def wl() -> None:
        loop(ForAllOp, IteratorKind.WORKLIST, [], lambda slot: None)

    mod = module(
        kernel("w", [], wl),
        kernel("h", [], lambda: InvokeOp("w", []), kind=KernelKind.HOST),
    )
    assert placement.RULE_WORKLIST_CONTEXT in verify_error(mod)


def test_iterate_needs_termination() -> None:
    mod = module(
        kernel("k", [], lambda: None),
        kernel("h", [], lambda: IterateOp("k", []), kind=KernelKind.HOST),
    )
    assert placement.RULE_TERMINATION in verify_error(mod)


def test_launch_bounds_range() -> None:
    mod = module(kernel("k", [], lambda: None, launch_bounds=[4096]))
    assert "must be in [1, 1024], got 4096" in verify_error(mod)


def test_rule_error_names_the_rule() -> None:
    error = placement.rule_error(NopOp(), "is misplaced", placement.RULE_SYNC)
    assert str(error) == f"'irgl.nop' is misplaced (rule: {placement.RULE_SYNC})"


# --------------------------------------------------------------------------
# Placement helpers
# --------------------------------------------------------------------------


def test_placement_helpers() -> None:
    mod = parse(
        """
        irgl.kernel @k(%locks: memref<?xi32>, %claims: memref<?xi32>,
                       %cells: memref<?xindex>, %n: index, %b: i1) {
          irgl.forall %slot in worklist {
            %item = irgl.wl.pop %slot
            irgl.exclusive %claims array(%cells[%n]) : memref<?xi32>, memref<?xindex> {
              irgl.retry %item
            }
            irgl.forall %i in range(%n, %n) {
              irgl.nop
            }
          }
        }
        irgl.kernel @plain(%b: i1) {
          irgl.reduce_and_return %b
        }
        irgl.kernel device @dev() {
          irgl.nop
        }
        irgl.kernel host @h() {
          irgl.nop
        }
        """
    )
    mod.verify()
    k, plain, dev, host = (op for op in mod.ops if isinstance(op, KernelOp))
    ops = {type(op): op for op in k.walk()}
    exclusive, retry, nop = ops[ExclusiveOp], ops[RetryOp], ops[NopOp]
    outer = exclusive.parent_op()
    assert isinstance(outer, ForAllOp)

    assert placement.enclosing_kernel(nop) is k
    assert placement.kernel_kind_of(nop) == "plain"
    assert placement.kernel_kind_of(next(iter(dev.body.ops))) == "device"
    assert placement.kernel_kind_of(next(iter(host.body.ops))) == "host"
    assert placement.kernel_kind_of(k) is placement.Context.OUTSIDE

    inner = nop.parent_op()
    assert placement.enclosing_foralls(nop) == [inner, outer]
    assert placement.enclosing_foralls(retry) == [outer]
    assert placement.is_directly_under_outermost_forall(exclusive)
    assert not placement.is_directly_under_outermost_forall(nop)

    assert placement.kernel_uses_worklist(k)
    assert placement.kernel_uses_retry(k)
    assert placement.kernel_uses_grid_sync(k)
    assert not placement.kernel_reduces(k)
    assert placement.kernel_reduces(plain)
    assert not placement.kernel_uses_worklist(plain)
    assert not placement.kernel_uses_grid_sync(plain)


def test_kernel_kind_in_partially_lowered_ir() -> None:
    """The placement rules leave irgl ops in lowered functions alone; the
    lowering's own queries (lowering/kernel_context.py) see what kernel each
    function was."""
    from lowering import kernel_context

    mod = parse(
        """
        "gpu.module"() <{sym_name = "kernels"}> ({
          "gpu.func"() <{function_type = () -> (), kernel}> ({
            irgl.nop
            "gpu.return"() : () -> ()
          }) {sym_name = "k"} : () -> ()
          func.func @d() {
            irgl.nop
            func.return
          }
        }) : () -> ()
        func.func @h() {
          irgl.nop
          func.return
        }
        """
    )
    nops = [op for op in mod.walk() if isinstance(op, NopOp)]
    assert [kernel_context.kernel_kind_of(op) for op in nops] == [
        "plain",
        "device",
        "host",
    ]
    assert all(placement.kernel_kind_of(op) is placement.Context.LOWERED for op in nops)


# --------------------------------------------------------------------------
# The examples and the bad programs, end to end
# --------------------------------------------------------------------------


def run_opt(
    *args: str, stdin: str | None = None, tool: Sequence[str] = IRGL_OPT
) -> str:
    proc = subprocess.run(
        [*tool, *args], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def all_examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every example in one file, split by `// -----` (one process per step)."""
    path = tmp_path_factory.mktemp("examples") / "all.mlir"
    path.write_text("\n// -----\n".join(p.read_text() for p in EXAMPLES))
    return path


def test_examples_exist() -> None:
    names = {p.stem for p in EXAMPLES}
    assert {"bfs", "boruvka", "dmr_refine", "dmr_pipe", "dynamic_pipe"} <= names


def test_examples_round_trip(all_examples: Path) -> None:
    """Every example verifies, and printing it in custom form equals going
    through the generic form and back."""
    split = "--split-input-file"
    custom = run_opt(str(all_examples), split)
    generic = run_opt(str(all_examples), split, "--print-op-generic")
    again = run_opt(split, stdin=generic)
    assert custom.count("builtin.module") == len(EXAMPLES)
    assert again == custom


def test_examples_parse_with_plain_xdsl_opt(all_examples: Path) -> None:
    """xdsl-opt finds the irgl dialect through the xdsl.universe entry point."""
    xdsl_opt = Path(sys.executable).parent / "xdsl-opt"
    if not xdsl_opt.exists():
        pytest.skip("xdsl-opt is not installed beside this Python")
    custom = run_opt(str(all_examples), "--split-input-file")
    plain = run_opt(str(all_examples), "--split-input-file", tool=[str(xdsl_opt)])
    assert plain == custom


def test_every_example_has_a_lit_test() -> None:
    lit_dir = REPO / "test/filecheck/examples"
    missing = [p.name for p in EXAMPLES if not (lit_dir / p.name).exists()]
    assert not missing, f"examples without a test in {lit_dir}: {missing}"


@pytest.mark.parametrize("program", BAD_PROGRAMS, ids=lambda p: p.stem)
def test_bad_program_exits_1_without_traceback(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert irgl_opt_main([str(program)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "internal error" not in err
    located = f"{program.name}:" in err or "^^^" in err
    assert located, err
