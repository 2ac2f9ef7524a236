"""Every example lowers with lower-irgl, emits CUDA and compiles with nvcc
for sm_90 on its own (one translation unit per example).

The two DMR examples take their geometry from `examples/dmr_mesh.cuh`, which
they `irgl.cinclude`: the emitted CUDA holds the header's text, so it compiles
without the header beside it. The header is also built for the host and run
(dmr_example_mesh_check.cpp) to check that its refinement terminates with a
conforming mesh. The complete DMR program, `benchmarks/dmr/dmr.mlir`, is
compiled and run by test_app_dmr.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import nvcc_object_errors

from irgl_runner.api import emit_cuda

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
USES_MESH_LIBRARY = {"dmr_pipe.mlir", "dmr_refine.mlir"}
MESH_CHECK = Path(__file__).with_name("dmr_example_mesh_check.cpp")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_lowers_and_compiles(example: Path, tmp_path: Path) -> None:
    cuda = emit_cuda(example)
    assert "__global__" in cuda and "irgl." not in cuda.split("// gpu.module")[-1]
    if example.name in USES_MESH_LIBRARY:
        # The header is inlined, not #included.
        assert '// irgl.cinclude "dmr_mesh.cuh"' in cuda
        assert '#include "dmr_mesh' not in cuda
        assert "void build_cavity(" in cuda
    # Compiled away from examples/: nothing beside the .cu is needed.
    assert nvcc_object_errors(cuda) is None


def test_dmr_examples_need_the_shipped_header() -> None:
    """Both DMR examples include the header, and it ships in examples/."""
    assert (ROOT / "examples" / "dmr_mesh.cuh").is_file()
    for name in USES_MESH_LIBRARY:
        assert 'irgl.cinclude "dmr_mesh.cuh"' in (ROOT / "examples" / name).read_text()


@pytest.mark.parametrize("variant", ["refine", "pipe"])
def test_dmr_example_mesh_library_refines(variant: str, tmp_path: Path) -> None:
    """The examples' geometry, run sequentially on the host, refines the unit
    square until no triangle is bad and leaves a conforming mesh."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no host C++ compiler")
    exe = tmp_path / "check"
    flags = ["-DUSE_PIPE"] if variant == "pipe" else []
    subprocess.run(
        [cxx, "-O2", "-std=c++17", *flags, f"-I{ROOT / 'examples'}", str(MESH_CHECK)]
        + ["-o", str(exe)],
        check=True,
        capture_output=True,
    )
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # 0.05 edges on the unit square: 2 triangles become 2048.
    assert proc.stdout.startswith("live=2048 "), proc.stdout
