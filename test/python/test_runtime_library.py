"""The runtime-library table (irgl_dialect/runtime_library.py) against the
runtime header, and a module that uses two overloads of one function."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import nvcc_object_errors
from xdsl.dialects.builtin import i16, i32, i64

from cuda_emitter.target import runtime_header_text
from irgl_dialect.runtime_library import (
    HOST_EXPORTS,
    RUNTIME_FUNCTIONS,
    Side,
    overload,
    runtime_function,
)

ROOT = Path(__file__).resolve().parents[2]

_DEFINE = re.compile(r"^#define (IRGL_\w+)\((\w+), (\w+)\)((?:.*\\\n)+.*)$", re.M)
_DECLARATION = re.compile(
    r"^[ \t]*(?P<quals>(?:(?:__host__|__device__|__forceinline__|inline"
    r"|IRGL_EXPORT|IRGL_HOST_API)\s+)*)"
    r"(?P<result>(?:const\s+)?[\w:]+\s*\**)\s*(?P<name>irgl_\w+)\((?P<params>[^)]*)\)",
    re.M,
)


def _expand_macros(text: str) -> str:
    """Expand the header's `IRGL_X(SUFFIX, T)` function-generating macros."""
    for match in _DEFINE.finditer(text):
        name, suffix, type_param, body = match.groups()
        body = body.replace("\\\n", "\n")

        def instantiate(
            use: re.Match[str],
            body: str = body,
            suffix: str = suffix,
            type_param: str = type_param,
        ) -> str:
            suffix_value, type_value = use.group(1), use.group(2)
            out = body.replace(f"##{suffix}", suffix_value)
            return re.sub(rf"\b{type_param}\b", type_value, out)

        text = re.sub(rf"^{name}\((\w+), ([\w:]+)\)$", instantiate, text, flags=re.M)
    return text


def _normalize(c_type: str) -> str:
    return re.sub(r"\s*\*", "*", " ".join(c_type.split()))


def _declarations() -> dict[str, list[tuple[str, tuple[str, ...], str]]]:
    """name -> [(result, parameter types, qualifiers)] for every `irgl_*`
    function the header defines, a declaration of the same function
    (`IRGL_HOST_API`: defined here or in the runtime library) counted once."""
    found: dict[str, list[tuple[str, tuple[str, ...], str]]] = {}
    for match in _DECLARATION.finditer(_expand_macros(runtime_header_text())):
        params = tuple(
            _normalize(re.sub(r"\s*\b\w+$", "", p.strip()))
            for p in match["params"].split(",")
            if p.strip()
        )
        entry = (_normalize(match["result"]), params, match["quals"])
        if entry not in found.setdefault(match["name"], []):
            found[match["name"]].append(entry)
    return found


def _strip_const(c_type: str) -> str:
    return c_type.removeprefix("const ")


@pytest.mark.parametrize("name", sorted(RUNTIME_FUNCTIONS))
def test_header_declares_runtime_function(name: str) -> None:
    fn = RUNTIME_FUNCTIONS[name]
    declarations = _declarations().get(name, [])
    assert len(declarations) == 1, (
        f"the header must define {name} exactly once (overloads are separate "
        f"names), found {len(declarations)}"
    )
    result, params, quals = declarations[0]
    assert result == fn.c_result
    assert tuple(_strip_const(p) for p in params) == fn.c_params
    if fn.side in (Side.DEVICE, Side.BOTH):
        assert "__device__" in quals, f"{name} must be callable on the device"
    if fn.side in (Side.HOST, Side.BOTH):
        assert "__device__" not in quals or "__host__" in quals


@pytest.mark.parametrize("name", sorted(HOST_EXPORTS))
def test_header_declares_host_export(name: str) -> None:
    export = HOST_EXPORTS[name]
    declarations = _declarations().get(name, [])
    assert len(declarations) == 1
    result, params, quals = declarations[0]
    assert "IRGL_EXPORT" in quals
    assert result == export.c_result
    assert params == export.c_params


def test_macro_expansion_finds_overloads() -> None:
    decls = _declarations()
    assert decls["irgl_warp_shfl_f64"] == [
        ("double", ("int32_t", "double", "int32_t"), "__device__ __forceinline__ ")
    ]
    assert "irgl_block_bcast_i1" in decls


def test_overloads_are_separate_entries() -> None:
    assert overload("irgl_lock_try", i32) is runtime_function("irgl_lock_try_i32")
    assert overload("irgl_lock_try", i64) is runtime_function("irgl_lock_try_i64")
    assert overload("irgl_lock_try", i16) is None
    assert str(runtime_function("irgl_lock_release_i64").function_type) == (
        "(memref<?xi64>, index) -> ()"
    )


def _lower_to_cuda(path: Path) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "irgl-opt"),
            str(path),
            "--lower-irgl",
            "-t",
            "cuda",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_i32_and_i64_locks_in_one_module_compile(tmp_path: Path) -> None:
    source = tmp_path / "locks.mlir"
    source.write_text(
        """
irgl.kernel @locks(%a: memref<?xi32>, %b: memref<?xi64>, %c: memref<8xi32>,
                   %x: memref<?xi32>, %i: index) {
  irgl.atomic %a[%i] : memref<?xi32> {
    %one = arith.constant 1 : i32
    memref.store %one, %x[%i] : memref<?xi32>
  }
  irgl.atomic %b[%i] : memref<?xi64> {
    %two = arith.constant 2 : i32
    memref.store %two, %x[%i] : memref<?xi32>
  }
  irgl.atomic %c[%i] : memref<8xi32> {
  } else {
    %three = arith.constant 3 : i32
    memref.store %three, %x[%i] : memref<?xi32>
  }
}
"""
    )
    cuda = _lower_to_cuda(source)
    for name in ("lock_try_i32", "lock_try_i64", "lock_release_i64"):
        assert f"irgl_{name}(" in cuda.split("// ---- end irgl_runtime.cuh ----")[1]
    assert nvcc_object_errors(cuda) is None
