"""The typed launch information (`#irgl_rt.launch`, `#irgl_rt.forall`):
construction, accessors and located diagnostics for bad values."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from irgl_dialect.runtime import ForAllAttr, IrglRuntime, LaunchAttr


def _parse(text: str):
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(IrglRuntime)
    return Parser(ctx, text, "attr.mlir").parse_attribute()


def test_round_trip_and_accessors() -> None:
    text = (
        "#irgl_rt.launch<block = 128, worklist = 1, cell = 4, bounds = [128, 4], "
        "grid_sync, retry>"
    )
    attr = _parse(text)
    assert isinstance(attr, LaunchAttr)
    assert (attr.block, attr.worklist, attr.cell, attr.bounds) == (128, 1, 4, (128, 4))
    assert attr.cooperative and attr.retries
    assert str(attr) == text
    plain = LaunchAttr(256)
    assert str(plain) == "#irgl_rt.launch<block = 256>"
    assert plain.worklist is None and not plain.cooperative


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#irgl_rt.launch<block = 0>", "block size must be in 1..1024, got 0"),
        ("#irgl_rt.launch<block = 2048>", "block size must be in 1..1024, got 2048"),
        (
            "#irgl_rt.launch<block = 512, bounds = [256]>",
            "block size 512 exceeds its launch bounds (256)",
        ),
        ("#irgl_rt.launch<block = 32, retry>", "retry needs worklist arguments"),
        (
            "#irgl_rt.launch<block = 32, bounds = [32, 1, 1]>",
            "bounds must have one or two values, got 3",
        ),
        ("#irgl_rt.launch<block = 32, color = 1>", "unknown entry 'color'"),
        ("#irgl_rt.launch<worklist = 1>", "needs `block = <size>`"),
        ("#irgl_rt.launch<block = 32, block = 64>", "'block' given twice"),
        ("#irgl_rt.forall<sideways>", "must be <grid_stride> or <uniform>"),
    ],
)
def test_bad_attribute_is_a_located_parse_error(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        _parse(text)
    assert message in str(info.value)
    assert "attr.mlir:1:" in str(info.value)


def test_forall_marker() -> None:
    assert _parse("#irgl_rt.forall<uniform>") == ForAllAttr(ForAllAttr.UNIFORM)
    assert not ForAllAttr(ForAllAttr.GRID_STRIDE).uniform
    with pytest.raises(VerifyException, match="must be <grid_stride> or <uniform>"):
        ForAllAttr("sideways")


def test_launch_verifier_on_construction() -> None:
    with pytest.raises(VerifyException, match="exceeds its launch bounds"):
        LaunchAttr(512, launch_bounds=(256,))


def test_collective_holds_exactly_one_op() -> None:
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IndexType, i1
    from xdsl.ir import Block, Region

    from irgl_dialect.runtime import CollectiveOp

    active = arith.ConstantOp.from_int_and_width(1, i1)
    rank = arith.ConstantOp.from_int_and_width(0, IndexType())
    empty = CollectiveOp(active.result, rank.result, Region(Block()))
    with pytest.raises(VerifyException, match="exactly one operation, got 0"):
        empty.verify()
    one = CollectiveOp(
        active.result,
        rank.result,
        Region(Block([arith.ConstantOp.from_int_and_width(2, IndexType())])),
    )
    one.verify()
    assert isinstance(one.inner, arith.ConstantOp)


def test_collective_results_are_those_of_its_op() -> None:
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IndexType, f64, i1
    from xdsl.ir import Block, Region

    from irgl_dialect.runtime import CollectiveOp

    active = arith.ConstantOp.from_int_and_width(1, i1)
    rank = arith.ConstantOp.from_int_and_width(0, IndexType())

    def wrap(result_types: list) -> CollectiveOp:
        inner = arith.ConstantOp.from_int_and_width(2, IndexType())
        return CollectiveOp(
            active.result, rank.result, Region(Block([inner])), result_types
        )

    wrap([IndexType()]).verify()
    with pytest.raises(VerifyException, match="results must be those of the op"):
        wrap([f64]).verify()
    wrap([]).verify()  # forwarding nothing is fine
    with pytest.raises(VerifyException, match="results must be those of the op"):
        wrap([IndexType(), IndexType()]).verify()


def test_control_and_pinned_flags() -> None:
    text = "#irgl_rt.launch<block = 256, bounds = [256, 4], grid_sync, control>"
    control = _parse(text)
    assert isinstance(control, LaunchAttr)
    assert control.control and not control.pinned
    assert str(control) == text
    pinned = LaunchAttr(256, worklist_arg=2, uses_retry=True).pinned_to(128)
    assert (pinned.block, pinned.worklist, pinned.retries) == (128, 2, True)
    assert pinned.pinned and not pinned.control
    assert str(pinned) == "#irgl_rt.launch<block = 128, worklist = 2, retry, pinned>"
    with pytest.raises(ParseError, match="control needs grid_sync"):
        _parse("#irgl_rt.launch<block = 32, control>")
    with pytest.raises(VerifyException, match="control needs grid_sync"):
        LaunchAttr(32, control=True)


def test_device_body_marker() -> None:
    from xdsl.dialects.builtin import NoneAttr, SymbolRefAttr

    from irgl_dialect.runtime import DeviceBodyAttr

    attr = _parse("#irgl_rt.device_body<@bfs>")
    assert attr == DeviceBodyAttr("bfs")
    assert isinstance(attr, DeviceBodyAttr) and attr.kernel_name == "bfs"
    assert not attr.in_size
    sized = _parse("#irgl_rt.device_body<@bfs, in_size>")
    assert sized == DeviceBodyAttr("bfs", in_size=True) and sized != attr
    assert str(sized) == "#irgl_rt.device_body<@bfs, in_size>"
    with pytest.raises(ParseError, match="expected `in_size`"):
        _parse("#irgl_rt.device_body<@bfs, size>")
    with pytest.raises(ParseError, match="needs a kernel symbol"):
        _parse('#irgl_rt.device_body<"bfs">')
    with pytest.raises(VerifyException, match="same gpu.module"):
        DeviceBodyAttr.new(
            (SymbolRefAttr("m", ["bfs"]), NoneAttr(), NoneAttr())
        ).verify()
    gridded = _parse("#irgl_rt.device_body<@bfs, in_size, grid>")
    assert isinstance(gridded, DeviceBodyAttr) and isinstance(sized, DeviceBodyAttr)
    assert gridded == DeviceBodyAttr("bfs", in_size=True, grid=True)
    assert gridded.grid and gridded.in_size and not sized.grid
    assert str(gridded) == "#irgl_rt.device_body<@bfs, in_size, grid>"
    assert _parse("#irgl_rt.device_body<@bfs, grid>") == DeviceBodyAttr(
        "bfs", grid=True
    )
    with pytest.raises(ParseError, match="expected `grid`"):
        _parse("#irgl_rt.device_body<@bfs, in_size, in_size>")
    with pytest.raises(ParseError, match="expected `>`"):
        _parse("#irgl_rt.device_body<@bfs, grid, in_size>")


def test_forall_retry_blocked_marker() -> None:
    """Retry backoff's mapping (`, retry_blocked`) round-trips on both kinds."""
    for rounds in (ForAllAttr.GRID_STRIDE, ForAllAttr.UNIFORM):
        text = f"#irgl_rt.forall<{rounds}, retry_blocked>"
        attr = _parse(text)
        assert attr == ForAllAttr(rounds, retry_blocked=True)
        assert isinstance(attr, ForAllAttr) and attr.retry_blocked
        assert str(attr) == text
    assert not ForAllAttr(ForAllAttr.UNIFORM).retry_blocked
    assert str(ForAllAttr(ForAllAttr.UNIFORM)) == "#irgl_rt.forall<uniform>"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#irgl_rt.forall<uniform, blocked>", "expected `retry_blocked`"),
        ("#irgl_rt.forall<sideways, retry_blocked>", "must be <grid_stride> or"),
    ],
)
def test_bad_forall_marker_is_a_located_parse_error(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        _parse(text)
    assert message in str(info.value)
    assert "attr.mlir:1:" in str(info.value)
