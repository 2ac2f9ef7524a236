"""The CUDA emitter (`-t cuda`) on the hand-written lowered IR of
test/filecheck/cuda/: every valid input is emitted and compiled with
`nvcc -arch=sm_90 -std=c++17 -c` (three nvcc runs in all), and every case of
errors.mlir must fail with a diagnostic. The nvcc tests are skipped when nvcc
or the runtime header is missing; no GPU is needed.
"""

from __future__ import annotations

import subprocess
from io import StringIO
from pathlib import Path

import pytest
from conftest import nvcc_path
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException

from cuda_emitter import get_cuda_target
from cuda_emitter.target import RUNTIME_HEADER, CudaTarget
from irgl_dialect.runtime import IrglRuntime

ROOT = Path(__file__).resolve().parents[2]
CUDA_TESTS = ROOT / "test" / "filecheck" / "cuda"
RUNTIME_DIR = ROOT / "cuda_emitter" / "runtime"
ERRORS = CUDA_TESTS / "errors.mlir"
VALID_INPUTS = sorted(p for p in CUDA_TESTS.glob("*.mlir") if p != ERRORS)
ERROR_CASES = ERRORS.read_text().split("// -----")
INCLUDE_LINE = f'#include "{RUNTIME_HEADER}"'


def _context() -> Context:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    ctx.register_dialect(IrglRuntime.name, lambda: IrglRuntime)
    return ctx


def _parse(ctx: Context, text: str, name: str) -> ModuleOp:
    module = Parser(ctx, text, name).parse_module()
    module.verify()
    return module


def emit(path: Path, **options: object) -> str:
    """The CUDA text of the lowered-IR file `path` (CudaTarget options as kwargs)."""
    ctx = _context()
    output = StringIO()
    CudaTarget(**options).emit(ctx, _parse(ctx, path.read_text(), str(path)), output)  # type: ignore[arg-type]
    return output.getvalue()


def _nvcc() -> str:
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    if not (RUNTIME_DIR / RUNTIME_HEADER).is_file():
        pytest.skip(f"the runtime header {RUNTIME_HEADER} is not written yet")
    return nvcc


def _compile(nvcc: str, source: Path, *flags: str) -> None:
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", *flags, "-c", source.name, "-o", "out.o"]
    proc = subprocess.run(
        cmd, cwd=source.parent, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"


def test_target_is_registered_with_its_options() -> None:
    target_class = get_cuda_target()
    assert target_class is CudaTarget
    assert target_class.name == "cuda"
    target = CudaTarget.from_spec(
        parse_spec("cuda{arch=sm_80 index-bitwidth=64 inline-runtime=false}")
    )
    assert target == CudaTarget(arch="sm_80", index_bitwidth=64, inline_runtime=False)
    with pytest.raises(ValueError, match="index-bitwidth must be 32 or 64"):
        CudaTarget(index_bitwidth=16)
    for arch in ("sm_1", "sm_52", "compute_90", "90"):
        with pytest.raises(ValueError, match="arch must be sm_<NN> with NN >= 60"):
            CudaTarget(arch=arch)
    assert CudaTarget(arch="sm_90a").arch == "sm_90a"


def test_unlowered_module_asks_for_lower_irgl() -> None:
    ctx = _context()
    from irgl_dialect.dialect import Irgl

    ctx.load_dialect(Irgl)
    module = _parse(ctx, (ROOT / "examples" / "bfs.mlir").read_text(), "bfs.mlir")
    with pytest.raises(DiagnosticException, match="run the lowering first") as info:
        CudaTarget().emit(ctx, module, StringIO())
    assert "--lower-irgl" in str(info.value)
    assert "'irgl.kernel'" in str(info.value)


@pytest.mark.parametrize("path", VALID_INPUTS, ids=lambda p: p.name)
def test_emits_without_the_runtime(path: Path) -> None:
    text = emit(path, inline_runtime=False, index_bitwidth=64)
    assert "#define IRGL_INDEX_BITS 64\n" in text
    assert INCLUDE_LINE in text


@pytest.mark.parametrize(
    "case", ERROR_CASES, ids=[f"case{i}" for i in range(len(ERROR_CASES))]
)
def test_errors_are_diagnostics(case: str) -> None:
    ctx = _context()
    with pytest.raises(DiagnosticException, match="^CUDA emitter: "):
        CudaTarget().emit(ctx, _parse(ctx, case, "errors.mlir"), StringIO())


def test_bfs_is_self_contained(tmp_path: Path) -> None:
    """The default output compiles with no include path: the runtime is inlined."""
    nvcc = _nvcc()
    text = emit(CUDA_TESTS / "bfs-lowered.mlir")
    assert INCLUDE_LINE not in text
    assert "#pragma once" not in text
    source = tmp_path / "bfs.cu"
    source.write_text(text)
    _compile(nvcc, source)


@pytest.mark.parametrize("index_bits", [32, 64])
def test_every_input_compiles(tmp_path: Path, index_bits: int) -> None:
    """All valid inputs in one translation unit: each file's code (after the
    runtime #include) in a namespace of its own, the runtime included once."""
    nvcc = _nvcc()
    parts = [f"#define IRGL_INDEX_BITS {index_bits}", INCLUDE_LINE]
    for path in VALID_INPUTS:
        text = emit(path, inline_runtime=False, index_bitwidth=index_bits)
        _, body = text.split(INCLUDE_LINE + "\n", 1)
        namespace = path.stem.replace("-", "_")
        # every program exports the same C symbol for Program to call
        body = body.replace("irgl_preload_kernels", f"irgl_preload_kernels_{namespace}")
        parts.append(f"namespace {namespace} {{\n{body}}}  // namespace {namespace}")
    source = tmp_path / "all.cu"
    source.write_text("\n".join(parts) + "\n")
    _compile(nvcc, source, f"-I{RUNTIME_DIR}")
