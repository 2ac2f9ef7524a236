"""The interpreter's C escape hatch: device-kernel calls in C text however
they are spaced, and the values registered C implementations return checked
against the CExpr's result type."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from irgl_interpreter import InterpretationFailure, parse_program, run_host


def run(text: str, *args: object, **kw: Any) -> None:
    run_host(parse_program(text), "main", list(args), "sequential", **kw)


# --------------------------------------------------------------------------
# device-kernel calls in C text
# --------------------------------------------------------------------------

CALL = """
irgl.kernel device @combine(%x: i32, %y: i32) -> i32 {
  %c10 = arith.constant 10 : i32
  %t = arith.muli %x, %c10 : i32
  %z = arith.addi %t, %y : i32
  irgl.return %z : i32
}
irgl.kernel host @main(%a: memref<?xi32>, %x: i32, %y: i32) {
  %c0 = arith.constant 0 : index
  %z = irgl.cexpr "TEXT" (%x, %y : i32, i32) : i32
  memref.store %z, %a[%c0] : memref<?xi32>
}
"""


@pytest.mark.parametrize(
    "text",
    [
        "combine($0, $1)",
        "combine($0,$1)",
        "combine( $0 ,$1 )",
        "combine ($0,\\t$1)",
        " combine($0,  $1) ; ",
    ],
)
def test_device_kernel_call_with_any_spacing(text: str) -> None:
    a = np.zeros(1, dtype=np.int32)
    run(CALL.replace("TEXT", text), a, 4, 2)
    assert a[0] == 42


@pytest.mark.parametrize(
    "text", ["combine($1, $0)", "combine($0, $1 + 1)", "combine$0, $1"]
)
def test_other_c_text_is_no_device_kernel_call(text: str) -> None:
    with pytest.raises(InterpretationFailure, match="no Python implementation"):
        run(CALL.replace("TEXT", text), np.zeros(1, dtype=np.int32), 4, 2)


# --------------------------------------------------------------------------
# values of registered implementations
# --------------------------------------------------------------------------

SCALAR = """
irgl.kernel host @main(%a: memref<?xTYPE>, %x: i32) {
  %c0 = arith.constant 0 : index
  %y = irgl.cexpr "f($0)" (%x : i32) : TYPE
  memref.store %y, %a[%c0] : memref<?xTYPE>
}
"""

I1 = """
irgl.kernel host @main(%a: memref<?xi32>, %x: i32) {
  %c0 = arith.constant 0 : index
  %b = irgl.cexpr "f($0)" (%x : i32) : i1
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %v = arith.select %b, %one, %zero : i32
  memref.store %v, %a[%c0] : memref<?xi32>
}
"""


def _scalar(type_: str, fn: Any, dtype: Any) -> np.ndarray:
    a = np.zeros(1, dtype=dtype)
    run(SCALAR.replace("TYPE", type_), a, 3, c_impls={"f($0)": fn})
    return a


def returns_none(x: int) -> None:
    """A C implementation that forgets to return its value."""


def test_none_is_an_error_naming_the_text_and_the_implementation() -> None:
    with pytest.raises(
        InterpretationFailure,
        match=r"the implementation [\w.]*returns_none of C text 'f\(\$0\)' "
        r"returned None \(no value\), but the 'irgl.cexpr' is of type i32",
    ):
        _scalar("i32", returns_none, np.int32)


@pytest.mark.parametrize(
    ("type_", "value", "dtype"),
    [
        ("i32", 1 << 32, np.int32),
        ("i32", -(1 << 31) - 1, np.int32),
        ("i8", 256, np.int8),
        ("i64", 1 << 64, np.int64),
    ],
)
def test_out_of_range_integer_is_an_error(type_: str, value: int, dtype: Any) -> None:
    width = int(type_[1:])
    with pytest.raises(
        InterpretationFailure,
        match=rf"C text 'f\(\$0\)' returned {value} \(int\), out of range for "
        rf"{width} bits, but the 'irgl.cexpr' is of type {type_}",
    ):
        _scalar(type_, lambda x: value, dtype)


def test_integers_that_fit_the_width_go_on_signed() -> None:
    assert _scalar("i32", lambda x: x + 1, np.int32)[0] == 4
    assert _scalar("i32", lambda x: np.int64(-7), np.int32)[0] == -7
    # the unsigned reading of the width: the same bits
    assert _scalar("i32", lambda x: 0xFFFFFFFF, np.int32)[0] == -1
    assert _scalar("i8", lambda x: -128, np.int8)[0] == -128


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1.5, r"1\.5 \(float\)"),
        ("3", r"'3' \(str\)"),
        (np.zeros(2, dtype=np.int32), r"array\(\[0, 0\], dtype=int32\) \(ndarray\)"),
    ],
)
def test_wrong_type_for_an_integer_is_an_error(value: Any, shown: str) -> None:
    with pytest.raises(
        InterpretationFailure, match=rf"returned {shown}, but .* of type i32"
    ):
        _scalar("i32", lambda x: value, np.int32)


def test_i1_takes_a_truth_value() -> None:
    for value, expected in ((True, 1), (np.bool_(False), 0), (1, 1)):
        a = np.zeros(1, dtype=np.int32)
        run(I1, a, 3, c_impls={"f($0)": lambda x, v=value: v})
        assert a[0] == expected
    with pytest.raises(
        InterpretationFailure,
        match=r"returned 2 \(int\), which is neither true nor false, .* type i1",
    ):
        run(I1, np.zeros(1, dtype=np.int32), 3, c_impls={"f($0)": lambda x: 2})


def test_float_takes_a_real_number() -> None:
    assert _scalar("f64", lambda x: x, np.float64)[0] == 3.0
    assert _scalar("f32", lambda x: np.float32(0.5), np.float32)[0] == 0.5
    with pytest.raises(InterpretationFailure, match=r"returned None .* type f64"):
        _scalar("f64", returns_none, np.float64)
    with pytest.raises(InterpretationFailure, match=r"returned 'x' \(str\)"):
        _scalar("f64", lambda x: "x", np.float64)


MEMREF = """
irgl.kernel host @main(%a: memref<?xi32>, %x: i32) {
  %c0 = arith.constant 0 : index
  %m = irgl.cexpr "pick($0)" (%a : memref<?xi32>) : memref<?xi32>
  memref.store %x, %m[%c0] : memref<?xi32>
}
"""


def test_memref_takes_an_array_of_its_element_type_and_rank() -> None:
    a = np.zeros(2, dtype=np.int32)
    run(MEMREF, a, 5, c_impls={"pick($0)": lambda m: m})
    assert a.tolist() == [5, 0]
    for wrong, shown in (
        (np.zeros(2, dtype=np.int64), "an array of int64 of rank 1"),
        (np.zeros((2, 2), dtype=np.int32), "an array of int32 of rank 2"),
        (7, r"7 \(int\)"),
    ):
        with pytest.raises(
            InterpretationFailure,
            match=rf"C text 'pick\(\$0\)' returned {shown}, but .* memref<\?xi32>",
        ):
            run(MEMREF, a, 5, c_impls={"pick($0)": lambda m, w=wrong: w})
