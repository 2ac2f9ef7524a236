"""Programs linked with the runtime library (irgl_runner.build): an emitted
program compiles with only the runtime's declarations (IRGL_RUNTIME_LIBRARY;
with C text in host code that names std also <string>, IRGL_HOST_C_TEXT)
and links one shared library of the runtime's host code, built once per
cache and flags, its device code built apart from its host code; C text in
host code that needs more of the runtime, a `.cu` file and
IRGL_RUNTIME_LIBRARY=0 compile the whole header."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import check_build_flags, nvcc_path

from irgl_runner.build import (
    DEFAULT_NVCC_FLAGS,
    EmittedProgram,
    compile_cuda,
    emit_program,
    runtime_library_path,
)

ROOT = Path(__file__).resolve().parents[2]
CC = ROOT / "benchmarks" / "cc" / "cc.mlir"
DMR = ROOT / "benchmarks" / "dmr" / "dmr.mlir"

#: A host function with C text that throws irgl::Error.
HOST_C_TEXT = """
irgl.kernel host @main(%a: memref<?xi32>) {
  irgl.cblock "if ($0 == nullptr) throw irgl::Error(\\"no array\\");"
      (%a : memref<?xi32>)
}
"""
#: Host C text that builds its message with std::string.
HOST_C_STD = """
irgl.kernel host @main(%a: memref<?xi32>) {
  irgl.cblock "if (!$0) throw irgl::Error(std::string(\\"no \\") + \\"array\\");"
      (%a : memref<?xi32>)
}
"""
#: Host C text using a part of the runtime the library does not declare.
HOST_C_INTERNALS = """
irgl.kernel host @main(%a: memref<?xi32>) {
  irgl.cblock "if ($0 == nullptr) irgl::set_last_error(\\"no array\\");"
      (%a : memref<?xi32>)
}
"""


def test_host_c_text_is_detected(tmp_path: Path) -> None:
    # cc's C text is inside a kernel: device code, which every build has
    assert not emit_program(CC).host_c_text
    # dmr includes a header of host and device code at the file's scope
    assert emit_program(DMR).host_c_text
    assert not emit_program(DMR).host_c_std  # (irgl::Error is no std::)
    src = tmp_path / "c.mlir"
    src.write_text(HOST_C_TEXT)
    assert emit_program(src).host_c_text and not emit_program(src).host_c_std
    src.write_text(HOST_C_STD)
    assert emit_program(src).host_c_text and emit_program(src).host_c_std


def _readelf(so: Path) -> str:
    return subprocess.run(
        ["readelf", "-d", str(so)], capture_output=True, text=True, check=True
    ).stdout


def _needed(so: Path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", _readelf(so))


#: The programs here are built to be linked and inspected, not run: the
#: compile-check flags (every phase, little device optimization).
FLAGS = check_build_flags()


@pytest.fixture
def nvcc() -> str:
    found = nvcc_path()
    if found is None:
        pytest.skip("nvcc not found")
    return found


def test_program_links_the_runtime_library(tmp_path: Path, nvcc: str) -> None:
    cache = tmp_path / "cache"
    cc = compile_cuda(emit_program(CC), nvcc=nvcc, cache=cache, flags=FLAGS)
    runtimes = sorted(cache.glob("libirgl_runtime_*.so"))
    assert len(runtimes) == 1
    assert _needed(cc) and runtimes[0].name in _needed(cc)
    assert "$ORIGIN" in _readelf(cc)  # found beside the program, wherever the cache is
    # the runtime's exports come from the library, the entry points from the program
    defined = subprocess.run(
        ["nm", "-D", "--defined-only", str(runtimes[0])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert " irgl_graph_create" in defined and "irgl_entry_" not in defined
    program = subprocess.run(
        ["nm", "-D", "--defined-only", str(cc)], capture_output=True, text=True
    ).stdout
    assert "irgl_entry_main" in program and " irgl_graph_create" not in program
    # a second program with the same flags links the same library
    pr = compile_cuda(
        emit_program(ROOT / "benchmarks" / "pr_pull" / "pr_pull.mlir"),
        nvcc=nvcc,
        cache=cache,
        flags=FLAGS,
    )
    assert sorted(cache.glob("libirgl_runtime_*.so")) == runtimes
    assert runtimes[0].name in _needed(pr)


def _symbols(so: Path) -> str:
    return subprocess.run(["nm", str(so)], capture_output=True, text=True).stdout


def test_device_code_is_built_apart(
    tmp_path: Path, nvcc: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nvcc compiles the device code into a fatbinary while the host
    compiler compiles the host code alone; the fatbinary is linked beside
    it (a hidden symbol, not exported) and its kernels are loaded from it.
    IRGL_DEVICE_APART=0 builds the whole program with nvcc."""
    apart = compile_cuda(emit_program(CC), nvcc=nvcc, cache=tmp_path / "a", flags=FLAGS)
    assert " irgl_program_fatbin" in _symbols(apart)
    exported = subprocess.run(
        ["nm", "-D", "--defined-only", str(apart)], capture_output=True, text=True
    ).stdout
    assert "irgl_program_fatbin" not in exported and "irgl_entry_main" in exported
    assert not list((tmp_path / "a").glob("*.fatbin"))  # the parts are removed
    monkeypatch.setenv("IRGL_DEVICE_APART", "0")
    whole = compile_cuda(emit_program(CC), nvcc=nvcc, cache=tmp_path / "w", flags=FLAGS)
    assert "irgl_program_fatbin" not in _symbols(whole)


def test_device_code_apart_needs_the_library_api(tmp_path: Path) -> None:
    """A CUDA runtime without the library API that finds a loaded kernel
    (before CUDA 12.4) builds programs whole."""
    from irgl_runner.build import _LIBRARY_API, _loads_libraries

    old = tmp_path / "old"
    old.mkdir()
    (old / "cuda_runtime_api.h").write_text(
        "extern cudaError_t cudaLibraryLoadData(void);\n"
    )
    assert not _loads_libraries(old)
    new = tmp_path / "new"
    new.mkdir()
    (new / "cuda_runtime_api.h").write_text(
        "".join(f"extern cudaError_t {name}(void);\n" for name in _LIBRARY_API)
    )
    assert _loads_libraries(new)
    assert not _loads_libraries(tmp_path / "missing")


#: Host C text that only nvcc compiles.
HOST_C_FOR_NVCC = (
    "irgl.kernel host @main(%a: memref<?xi32>) {\n"
    '  irgl.cblock "\\n#ifndef __CUDACC__\\n#error this host code is for nvcc\\n'
    '#endif\\nif ($0 == nullptr) throw irgl::Error(\\"no array\\");"\n'
    "      (%a : memref<?xi32>)\n"
    "}\n"
)


def test_host_code_for_nvcc_builds_whole(tmp_path: Path, nvcc: str) -> None:
    """Where the host compiler rejects the host code alone, nvcc builds the
    whole program (linked with the runtime library) instead."""
    src = tmp_path / "c.mlir"
    src.write_text(HOST_C_FOR_NVCC)
    so = compile_cuda(emit_program(src), nvcc=nvcc, cache=tmp_path / "c", flags=FLAGS)
    assert "irgl_program_fatbin" not in _symbols(so)
    assert any("irgl_runtime" in n for n in _needed(so))


def test_whole_header_builds(
    tmp_path: Path, nvcc: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    src = tmp_path / "c.mlir"
    src.write_text(HOST_C_INTERNALS)
    host_c = compile_cuda(emit_program(src), nvcc=nvcc, cache=cache, flags=FLAGS)
    text_only = compile_cuda(emit_program(CC).cuda, nvcc=nvcc, cache=cache, flags=FLAGS)
    monkeypatch.setenv("IRGL_RUNTIME_LIBRARY", "0")
    switched_off = compile_cuda(emit_program(CC), nvcc=nvcc, cache=cache, flags=FLAGS)
    for so in (host_c, text_only, switched_off):
        assert not any("irgl_runtime" in n for n in _needed(so))
    # the host C text's program still builds its device code apart (its host
    # code with the whole header); the others are nvcc's whole builds
    assert " irgl_program_fatbin" in _symbols(host_c)
    assert "irgl_program_fatbin" not in _symbols(switched_off)


@pytest.mark.parametrize("text", [HOST_C_TEXT, HOST_C_STD], ids=["error", "std"])
def test_host_c_text_links_the_runtime_library(
    tmp_path: Path, nvcc: str, text: str
) -> None:
    """C text in host code that throws irgl::Error compiles against the
    declarations (with IRGL_HOST_C_TEXT where it names std::string) and
    links the library."""
    cache = tmp_path / "cache"
    src = tmp_path / "c.mlir"
    src.write_text(text)
    so = compile_cuda(emit_program(src), nvcc=nvcc, cache=cache, flags=FLAGS)
    runtimes = sorted(cache.glob("libirgl_runtime_*.so"))
    assert len(runtimes) == 1 and runtimes[0].name in _needed(so)


def test_runtime_library_key_follows_index_width_and_flags(tmp_path: Path) -> None:
    """Programs of other index widths or flags get other libraries (the key
    is computed without nvcc: library_path does not compile)."""
    from irgl_runner.build import _prepare

    program = emit_program(CC)
    wide = emit_program(CC, target="cuda{index-bitwidth=64}")
    base = _prepare(program, ["-arch=sm_90"], ())[4]
    assert base is not None
    assert _prepare(wide, ["-arch=sm_90"], ())[4] not in (None, base)
    assert _prepare(program, ["-arch=sm_90", "-DIRGL_SYNC_LAUNCH"], ())[4] != base
    # the profile's counters live in the program's module: whole header
    assert _prepare(program, ["-DIRGL_PROFILE_CONTROL"], ())[4] is None
    assert _prepare(program, ["-DIRGL_COUNT_EDGES"], ())[4] is None  # its counter too
    host_c = EmittedProgram(program.cuda, (), True)
    host_std = EmittedProgram(program.cuda, (), True, host_c_std=True)
    assert _prepare(host_std, ["-arch=sm_90"], ())[4] == base  # the same library
    assert "-DIRGL_HOST_C_TEXT" in _prepare(host_std, ["-arch=sm_90"], ())[2]
    assert "-DIRGL_HOST_C_TEXT" not in _prepare(host_c, ["-arch=sm_90"], ())[2]
    assert "-DIRGL_HOST_C_TEXT" not in _prepare(program, ["-arch=sm_90"], ())[2]
    assert runtime_library_path(base, tmp_path).name == f"libirgl_runtime_{base}.so"


def test_target_for_numbers_large_graphs_in_64_bits() -> None:
    from irgl_runner.build import DEFAULT_TARGET, INDEX32_LIMIT, target_for

    assert target_for(1000, 2000) == DEFAULT_TARGET
    assert target_for(10, INDEX32_LIMIT) == DEFAULT_TARGET
    assert target_for(10, INDEX32_LIMIT + 1) == "cuda{index-bitwidth=64}"
    assert target_for(INDEX32_LIMIT + 1, 0) == "cuda{index-bitwidth=64}"


def test_index_bits_environment_forces_64_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    from irgl_runner.build import DEFAULT_TARGET, INDEX32_LIMIT, target_for
    from irgl_runner.errors import UsageError

    monkeypatch.setenv("IRGL_INDEX_BITS", "64")
    assert target_for(10, 20) == "cuda{index-bitwidth=64}"
    monkeypatch.setenv("IRGL_INDEX_BITS", "32")
    assert target_for(10, 20) == DEFAULT_TARGET
    assert target_for(10, INDEX32_LIMIT + 1) == "cuda{index-bitwidth=64}"
    monkeypatch.setenv("IRGL_INDEX_BITS", "16")
    with pytest.raises(UsageError, match="IRGL_INDEX_BITS must be 32 or 64"):
        target_for(10, 20)


def test_emit_program_remembers_only_what_its_text_decides(tmp_path: Path) -> None:
    """emit_program lowers a program once per text, pipeline and target in a
    process; an edit of the file is a new text, and a program that
    `irgl.cinclude`s a header is lowered again every time (the header is part
    of the result)."""
    program = tmp_path / "p.mlir"
    program.write_text(HOST_C_TEXT)
    first = emit_program(program)
    assert emit_program(program) is first
    assert emit_program(program, "lower-irgl{block_size=128}") is not first
    program.write_text(HOST_C_TEXT.replace("no array", "no input"))
    assert "no input" in emit_program(program).cuda
    (tmp_path / "h.cuh").write_text("// header one\n")
    included = tmp_path / "q.mlir"
    included.write_text('irgl.cinclude "h.cuh"\n' + HOST_C_TEXT)
    assert "header one" in emit_program(included).cuda
    (tmp_path / "h.cuh").write_text("// header two\n")
    assert "header two" in emit_program(included).cuda


def _fake_nvcc(folder: Path, knows_split: bool) -> Path:
    """An `nvcc` that records each run's arguments in args.txt and writes
    the file after -o; without `knows_split` it fails as nvcc before CUDA 12
    does on --split-compile."""
    script = folder / "nvcc"
    reject = (
        ""
        if knows_split
        else 'case "$*" in *--split-compile*) '
        "echo \"nvcc fatal : Unknown option '--split-compile=0'\" >&2; "
        "exit 1;; esac\n"
    )
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{folder}/args.txt"\n'
        + reject
        + 'while [ $# -gt 0 ]; do [ "$1" = -o ] && : > "$2"; shift; done\n'
    )
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("knows_split", [True, False])
def test_split_compile_only_where_nvcc_knows_it(
    tmp_path: Path, knows_split: bool
) -> None:
    """The default flags ask for --split-compile=0; an nvcc that rejects the
    option (before CUDA 12) compiles without it, and is not given it again."""
    nvcc = _fake_nvcc(tmp_path, knows_split)
    assert "--split-compile=0" in DEFAULT_NVCC_FLAGS
    for text in ("__global__ void k() {}\n", "__global__ void j() {}\n"):
        compile_cuda(text, nvcc=str(nvcc), cache=tmp_path / "c")
    runs = [line.split() for line in (tmp_path / "args.txt").read_text().splitlines()]
    with_split = ["--split-compile=0" in args for args in runs]
    # knows it: both builds with it; else the first fails, runs again without
    # it, and the second build is given none
    assert with_split == ([True, True] if knows_split else [True, False, False])
    assert all("-arch=sm_90" in args for args in runs)


#: A kernel, and host C text that reads its result through a part of the
#: runtime the library does not declare (irgl_copy_to_host).
KERNEL_AND_HOST_INTERNALS = """
irgl.kernel @fill(%a: memref<?xi32>, %n: index) {
  %z = arith.constant 0 : index
  %two = arith.constant 2 : i32
  irgl.forall %i in range(%z, %n) {
    %v = arith.index_cast %i : index to i32
    %w = arith.muli %v, %two : i32
    memref.store %w, %a[%i] : memref<?xi32>
  }
}

irgl.kernel host @main(%a: memref<?xi32>, %n: index) -> i32 {
  irgl.invoke @fill(%a, %n) : (memref<?xi32>, index)
  %r = irgl.cexpr "[&] { int v = -1; irgl_copy_to_host(&v, $0 + 3, 4); return v; }()"
      (%a : memref<?xi32>) : i32
  irgl.return %r : i32
}
"""


@pytest.mark.gpu
def test_whole_header_host_code_runs_kernels_built_apart(tmp_path: Path) -> None:
    """Host code compiled with the whole runtime header (its C text needs
    more than the library declares) loads and launches the kernels of the
    fatbinary built beside it."""
    import numpy as np

    from irgl_runner.api import Program
    from irgl_runner.build import build

    source = tmp_path / "internals.mlir"
    source.write_text(KERNEL_AND_HOST_INTERNALS)
    so = build(source, cache=tmp_path / "cache")
    assert " irgl_program_fatbin" in _symbols(so)
    assert not any("irgl_runtime" in n for n in _needed(so))
    program = Program(so)
    a = program.alloc(100, np.int32)
    assert program.call("main", a, 100) == 6
    np.testing.assert_array_equal(a.to_numpy(), np.arange(100, dtype=np.int32) * 2)
