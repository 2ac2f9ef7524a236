"""Dialect structure and hardening: module layering, trait-based placement,
uniform loops around grid barriers, and irgl-opt's located diagnostics."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import nvcc_object_errors

from irgl_dialect import placement
from irgl_dialect.dialect import Irgl

REPO = Path(__file__).resolve().parents[2]
IRGL_OPT = [sys.executable, str(REPO / "tools" / "irgl-opt")]
MODULES = sorted(p.stem for p in (REPO / "irgl_dialect").glob("*.py"))

#: The dependency order of irgl_dialect's modules (each imports only modules
#: before it): attributes < placement < upstream_checks < kernels < syntax <
#: loops < worklist, sync < orchestration; runtime < runtime_library,
#: c_escape; graph; distributed (the irgl_dist dialect, on attributes and
#: placement); and dialect imports the irgl ones.
LAYERS = [
    "attributes",
    "placement",
    "upstream_checks",
    "kernels",
    "syntax",
    "loops",
    "worklist",
    "sync",
    "orchestration",
    "runtime",
    "runtime_library",
    "c_escape",
    "graph",
    "distributed",
    "dialect",
]


def _dialect_imports(module: str) -> set[str]:
    """The irgl_dialect modules that `module` imports (anywhere in it)."""
    tree = ast.parse((REPO / "irgl_dialect" / f"{module}.py").read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("irgl_dialect."):
                found.add(node.module.split(".", 1)[1])
    return found


def test_dialect_modules_import_in_layers() -> None:
    """No import circle: every module imports only modules of lower layers
    (function-level imports included)."""
    assert set(LAYERS) | {"__init__"} == set(MODULES)
    for module in LAYERS:
        lower = set(LAYERS[: LAYERS.index(module)])
        assert _dialect_imports(module) <= lower, module


@pytest.mark.parametrize("module", [m for m in MODULES if m != "__init__"])
def test_each_dialect_module_imports_alone(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", f"import irgl_dialect.{module}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_placement_asks_traits_not_classes() -> None:
    """placement.py names no op class and no lowered dialect."""
    tree = ast.parse((REPO / "irgl_dialect" / "placement.py").read_text())
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not any(m.startswith("xdsl.dialects") for m in imported), imported
    assert _dialect_imports("placement") == {"attributes"}
    kinds = {
        op.name: op.get_trait(placement.AllowedIn)
        for op in Irgl.operations
        if op.get_trait(placement.AllowedIn) is not None
    }
    assert kinds["irgl.atomic"] == placement.kernel_construct("Atomic")
    assert kinds["irgl.invoke"] == placement.orchestration_construct("Invoke")
    assert kinds["irgl.graph.edge_dst"] == placement.graph_element_access()
    markers = {
        op.name for op in Irgl.operations if op.has_trait(placement.SynchronizesGrid)
    }
    assert markers == {"irgl.sync_running_threads", "irgl.exclusive"}


def run_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*IRGL_OPT, *args], input=stdin, capture_output=True, text=True, timeout=60
    )


UNIFORM_LOOPS = """
irgl.kernel @rounds(%x: memref<?xi32>, %n: index, %k: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %kk = arith.index_cast %k : i32 to index
  %m = arith.muli %kk, %c2 : index
  scf.for %r = %c0 to %m step %c1 {
    irgl.forall %i in range(%c0, %n) {
      %v = memref.load %x[%i] : memref<?xi32>
      %w = arith.addi %v, %k : i32
      memref.store %w, %x[%i] : memref<?xi32>
    }
    irgl.sync_running_threads
  }
  irgl.for %r in range(%c0, %n) {
    irgl.for %s in range(%r, %n) {
      irgl.local_barrier
      irgl.sync_running_threads
    }
  }
}
irgl.kernel host @main(%x: memref<?xi32>, %n: index, %k: i32) {
  irgl.invoke @rounds(%x, %n, %k) : (memref<?xi32>, index, i32)
}
"""


def test_sync_in_uniform_loops_verifies_lowers_and_compiles(tmp_path: Path) -> None:
    """Grid barriers in loops with uniform trip counts (kernel arguments,
    constants, arithmetic of them, an enclosing uniform loop's index)."""
    proc = run_opt("--lower-irgl", "-t", "cuda", stdin=UNIFORM_LOOPS)
    assert proc.returncode == 0, proc.stderr
    cuda = proc.stdout
    kernel = cuda[cuda.index("__global__ void rounds(int32_t* x") :]
    assert kernel.count("irgl_grid_sync();") == 2
    assert kernel.count("__syncthreads();") == 1
    assert "cudaLaunchCooperativeKernel" in cuda or "launch_cooperative" in cuda
    assert nvcc_object_errors(cuda) is None


def test_sync_in_data_dependent_loop_is_rejected() -> None:
    program = UNIFORM_LOOPS.replace(
        "%m = arith.muli %kk, %c2 : index",
        "%m = memref.load %x[%c0] : memref<?xi32>\n"
        "  %mi = arith.index_cast %m : i32 to index",
    ).replace("to %m step", "to %mi step")
    proc = run_opt(stdin=program)
    assert proc.returncode == 1
    assert "'irgl.sync_running_threads' must be executed by all threads" in proc.stderr
    assert "stdin:15:5: error:" in proc.stderr
    assert "    irgl.sync_running_threads\n    ^^^" in proc.stderr


def test_version_names_irgl_opt() -> None:
    proc = run_opt("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("irgl-opt ")
    assert "xdsl" in proc.stdout and "xdsl-opt" not in proc.stdout


def test_cut_off_escaped_string_is_a_fast_parse_error(tmp_path: Path) -> None:
    source = tmp_path / "cut.mlir"
    source.write_text('irgl.cblock "' + 'printf(\\"%d\\\\n\\", x);' * 40)
    proc = subprocess.run(
        [*IRGL_OPT, str(source)], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 1
    assert "cut.mlir:1:13" in proc.stderr
    assert "End of file reached before closing string literal" in proc.stderr


def test_module_level_use_of_a_kernel_value_is_located() -> None:
    """Found by the fuzzer: an op moved out of a kernel still uses its values
    (xDSL checks no dominance); the lowering crashed on it."""
    program = """
    %c = arith.addi %n, %n : index
    irgl.kernel @k(%n: index) {
    }
    """
    proc = run_opt("--lower-irgl", stdin=program)
    assert proc.returncode == 1
    assert "'arith.addi' uses %n before (or outside) its definition" in proc.stderr
    assert "stdin:2:5: error:" in proc.stderr
    assert "%c = arith.addi %n, %n : index\n    ^^^" in proc.stderr
    assert "internal error" not in proc.stderr


@pytest.mark.parametrize(
    ("program", "message", "where"),
    [
        (
            '"memref.store"(%v, %x) : (i32, memref<?xi32>) -> ()',
            "'memref.store' is malformed",
            '"memref.store"(%v, %x)',
        ),
        (
            '%f = "arith.constant"() <{value = 1.0e40 : f32}> : () -> f32',
            "float too large",
            "",
        ),
    ],
)
def test_bare_exceptions_become_located_diagnostics(
    program: str, message: str, where: str
) -> None:
    text = "irgl.kernel @k(%x: memref<?xi32>, %v: i32) {\n  " + program + "\n}\n"
    proc = run_opt(stdin=text)
    assert "internal error" not in proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode != 0:
        assert message in proc.stderr
        assert ("^^^" in proc.stderr) or re.match(r"<?stdin>?:\d+:\d+", proc.stderr)
        if where:
            assert where in proc.stderr


def test_callee_checks_and_implicit_yield_are_xdsl_traits() -> None:
    from xdsl.traits import SingleBlockImplicitTerminator, SymbolUserOpInterface

    from irgl_dialect.kernels import YieldOp
    from irgl_dialect.loops import ForAllOp, ForOp
    from irgl_dialect.orchestration import InvokeOp, IterateOp, PipeOp
    from irgl_dialect.sync import AtomicOp, ExclusiveOp

    assert InvokeOp.has_trait(SymbolUserOpInterface)
    assert IterateOp.has_trait(SymbolUserOpInterface)
    for op in (ForAllOp, ForOp, AtomicOp, ExclusiveOp, PipeOp, IterateOp):
        trait = op.get_trait(SingleBlockImplicitTerminator)
        assert trait is not None and trait.op_type is YieldOp, op.name


@pytest.mark.parametrize(
    ("program", "where", "message"),
    [
        (
            "irgl.kernel @k(%n: index) {\n"
            "  irgl.forall %i in range(%i, %n) {\n  }\n}\n",
            "stdin:2:27",
            "the loop's index %i cannot be one of its own bounds",
        ),
        (
            "irgl.kernel @k(%g: !irgl.graph<i32>) {\n}\n",
            "stdin:1:32",
            "!irgl.graph takes no parameters",
        ),
    ],
)
def test_parse_errors_are_located(program: str, where: str, message: str) -> None:
    proc = run_opt(stdin=program)
    assert proc.returncode == 1
    assert proc.stderr.startswith(where + "\n")
    assert message in proc.stderr
