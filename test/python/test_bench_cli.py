"""irgl-bench CLI, the ctypes API and compile caching, all without a GPU.

The API is exercised against a host-only C mock of the runtime ABI
(compiled with the system C compiler; skipped if there is none), and
``compile_cuda`` against a fake ``nvcc`` script.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cuda_emitter.host_abi import (
    AbiKind,
    AbiValue,
    EntryPoint,
    dump_manifest,
    load_manifest,
    manifest_path,
)
from irgl_runner import bench_cli, graph_args
from irgl_runner.api import (
    CompileError,
    IrglError,
    IrglRuntimeError,
    Program,
    compile_cuda,
    emit_cuda,
    emit_program,
)
from irgl_runner.backends import BACKENDS
from irgl_runner.generators import generate
from irgl_runner.graphs import load_graph, read_gr
from irgl_runner.reference import INF, bfs_levels

REPO = Path(__file__).resolve().parents[2]

MOCK_RUNTIME = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int64_t n, m; int64_t *rs, *dst; } Graph;
static const char *err = "no error";

void *irgl_graph_create(int64_t n, int64_t m, const int64_t *rs, const int64_t *dst,
                        const int32_t *w) {
  (void)w;
  if (n > 1000000) { err = "mock: graph too large"; return 0; }
  Graph *g = malloc(sizeof *g);
  g->n = n; g->m = m;
  g->rs = malloc(8 * (n + 1)); memcpy(g->rs, rs, 8 * (n + 1));
  g->dst = malloc(8 * (m ? m : 1)); memcpy(g->dst, dst, 8 * m);
  return g;
}
void irgl_graph_destroy(void *p) { Graph *g = p; free(g->rs); free(g->dst); free(g); }
void *irgl_device_alloc(int64_t bytes) { return malloc(bytes); }
void irgl_device_free(void *p) { free(p); }
int irgl_copy_to_device(void *d, const void *s, int64_t b) {
  memcpy(d, s, b); return 0;
}
int irgl_copy_to_host(void *d, const void *s, int64_t b) {
  memcpy(d, s, b); return 0;
}
int irgl_device_synchronize(void) { return 0; }
const char *irgl_device_name(void) { return "Mock Device"; }
int irgl_device_memory(long long *out) { out[0] = 1000; out[1] = 80000; return 0; }
int irgl_warm_up(void) { return 0; }
const char *irgl_last_error(void) { return err; }

/* @main(%g: graph, %level: memref<?xi32>, %src: index): host BFS */
int irgl_entry_main(void *gp, void *levelp, int64_t src) {
  Graph *g = gp; int32_t *level = levelp;
  if (src < 0 || src >= g->n) { err = "mock: source out of range"; return 1; }
  int64_t *queue = malloc(8 * (g->n ? g->n : 1)), head = 0, tail = 0;
  for (int64_t i = 0; i < g->n; i++) level[i] = 1073741823;
  level[src] = 0; queue[tail++] = src;
  while (head < tail) {
    int64_t u = queue[head++];
    for (int64_t e = g->rs[u]; e < g->rs[u + 1]; e++) {
      int64_t v = g->dst[e];
      if (level[v] == 1073741823) { level[v] = level[u] + 1; queue[tail++] = v; }
    }
  }
  free(queue);
  return 0;
}

/* @sum(%a: memref<?xf64>, %n: index, %scale: f64, %neg: i1) -> f64 */
int irgl_entry_sum(void *ap, int64_t n, double scale, int neg, double *result) {
  double *a = ap, s = 0;
  for (int64_t i = 0; i < n; i++) s += a[i];
  *result = (neg ? -s : s) * scale;
  return 0;
}

/* @count(%a: memref<?xi32>, %n: index, %k: i32) -> index: elements equal to k */
int irgl_entry_count(void *ap, int64_t n, int64_t k, int64_t *result) {
  int32_t *a = ap; int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += a[i] == k;
  *result = c;
  return 0;
}

/* @positive(%x: f64) -> i1 */
int irgl_entry_positive(double x, int *result) { *result = x > 0; return 0; }

/* @touch(%a: memref<?xi32>): no result */
int irgl_entry_touch(void *ap) { ((int32_t *)ap)[0] = 42; return 0; }
"""


def _abi(name: str, params: str, result: str | None = None) -> EntryPoint:
    def value(t: str) -> AbiValue:
        kind = {
            "!irgl.graph": AbiKind.POINTER,
            "index": AbiKind.INT,
            "i32": AbiKind.INT,
            "f64": AbiKind.FLOAT,
            "i1": AbiKind.BOOL,
        }.get(t, AbiKind.POINTER)
        return AbiValue(kind, t)

    return EntryPoint(
        name,
        tuple(value(t) for t in params.split()),
        None if result is None else value(result),
    )


#: The ABI of the mock's entry points, as a build's manifest would give it.
MOCK_ABI = (
    _abi("main", "!irgl.graph memref<?xi32> index"),
    _abi("sum", "memref<?xf64> index f64 i1", "f64"),
    _abi("count", "memref<?xi32> index i32", "index"),
    _abi("positive", "f64", "i1"),
    _abi("touch", "memref<?xi32>"),
)


@pytest.fixture(scope="module")
def mock_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the mock runtime")
    d = tmp_path_factory.mktemp("mock")
    (d / "mock.c").write_text(MOCK_RUNTIME)
    so = d / "libmock.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-o", str(so), str(d / "mock.c")], check=True
    )
    manifest_path(so).write_text(dump_manifest(MOCK_ABI))
    return so


def use_mock(monkeypatch: pytest.MonkeyPatch, so: Path) -> list[str]:
    """Make ``--backend cuda`` load the mock (no GPU check); the pipelines it
    was asked for land in the returned list."""
    pipelines: list[str] = []

    def load(app: object, args: argparse.Namespace) -> Program:
        pipelines.append(args.pipeline)
        return Program(so)

    monkeypatch.setitem(
        BACKENDS,
        "cuda",
        dataclasses.replace(BACKENDS["cuda"], unavailable=lambda: None, load=load),
    )
    return pipelines


def run_cli(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = bench_cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ error paths


def test_missing_graph_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["run", "bfs", "--graph", str(tmp_path / "nope.gr")], capsys
    )
    assert code == 2 and out == ""
    assert err.strip() == f"irgl-bench: error: {tmp_path / 'nope.gr'}: no such file"


def test_corrupt_graph_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.gr"
    bad.write_bytes(struct.pack("<4Q", 1, 0, 10, 20) + b"\0" * 40)
    code, _, err = run_cli(["run", "bfs", "--graph", str(bad)], capsys)
    assert code == 2
    assert "bad.gr" in err and "truncated" in err and len(err.strip().splitlines()) == 1
    el = tmp_path / "bad.txt"
    el.write_text("0 1\n1 two\n")
    code, _, err = run_cli(["run", "bfs", "--graph", str(el)], capsys)
    assert code == 2 and "line 2: 'two' is not an integer" in err


def test_cli_subprocess_has_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "trunc.gr"
    bad.write_bytes(b"\x01\0\0\0")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "irgl_runner.bench_cli",
            "run",
            "bfs",
            "--graph",
            str(bad),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"irgl-bench: error: {bad}: "
        "file is 4 bytes, too short for the 32-byte .gr header"
    ]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "no_such_app", "--graph", "grid:2x2"], "no app 'no_such_app'"),
        (["run", "bfs", "--graph", "rmat:abc"], "bad graph spec 'rmat:abc'"),
        (
            ["run", "bfs", "--graph", "grid:3x3", "--source", "9"],
            "source 9 out of range for 9 nodes",
        ),
        (
            ["run", "bfs", "--graph", "grid:3x3", "--reps", "0"],
            "--reps must be at least 1",
        ),
        (["gen", "nonsense", "-o", "x.gr"], "not a generator spec"),
    ],
)
def test_usage_errors_exit_2(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        [*args, "--no-cache"] if args[0] == "run" else args, capsys
    )
    assert code == 2 and out == ""
    assert fragment in err and "Traceback" not in err


def test_bad_hot_node_count_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """IRGL_DIST_HOT that is not a count: a usage error naming it, before
    any rank runs (here the interpreter's simulated ranks)."""
    monkeypatch.setenv("IRGL_DIST_HOT", "many")
    args = ["run", "sssp", "--graph", "rmat:6", "--backend", "interp"]
    code, out, err = run_cli(
        [*args, "--gpus", "2", "--reps", "1", "--no-cache"], capsys
    )
    assert code == 2 and out == ""
    assert "IRGL_DIST_HOT must be a count of nodes, got 'many'" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------------ gen


def test_gen_writes_gr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "g.gr"
    code, out, _ = run_cli(["gen", "rmat:6:4", "-o", str(out_file)], capsys)
    assert code == 0
    info = json.loads(out)
    g, ref = read_gr(out_file), generate("rmat:6:4")
    assert info == {
        "graph": "rmat:6:4",
        "nodes": 64,
        "edges": ref.num_edges,
        "file": str(out_file),
    }
    np.testing.assert_array_equal(g.edge_dst, ref.edge_dst)
    np.testing.assert_array_equal(g.weights, ref.weights)


def test_resolve_graph_caches(tmp_path: Path) -> None:
    g1, spec = graph_args.resolve_graph("grid:5x4", cache_dir=tmp_path)
    cached = tmp_path / "grid_5x4.gr"
    assert spec is not None and cached.is_file()
    g2, _ = graph_args.resolve_graph("grid:5x4", cache_dir=tmp_path)
    np.testing.assert_array_equal(g1.edge_dst, g2.edge_dst)
    cached.write_bytes(b"junk")  # a corrupt cache entry is regenerated
    g3, _ = graph_args.resolve_graph("grid:5x4", cache_dir=tmp_path)
    np.testing.assert_array_equal(g1.weights, g3.weights)
    assert read_gr(cached).num_nodes == 20


def test_default_source() -> None:
    g, spec = graph_args.resolve_graph("rmat:7:8")
    src = graph_args.default_source(g, spec)
    assert g.degrees()[src] == g.degrees().max()
    g2, spec2 = graph_args.resolve_graph("grid:3x3")
    assert graph_args.default_source(g2, spec2) == 0


# ----------------------------------------------------------- API with the mock


def test_program_api(mock_so: Path) -> None:
    prog = Program(mock_so)  # the ABI comes from the manifest beside it
    assert set(prog.entry_points) == {"main", "sum", "count", "positive", "touch"}
    assert prog.device_name() == "Mock Device"
    arr = prog.alloc(4, np.float64).from_numpy(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(arr.to_numpy(), [1, 2, 3, 4])
    assert prog.call("sum", arr, 4, 0.5, True) == -5.0
    assert prog.call("sum", arr, 2, 1, False) == 3.0  # an int for an f64 is fine
    ms = prog.time_call("sum", arr, 4, 1.0, False)
    assert ms >= 0 and prog.last_result == 10.0
    ints = prog.alloc(5, "int32").from_numpy(np.array([3, 1, 3, 3, 0]))
    assert prog.call("count", ints, 5, np.int32(3)) == 3
    assert prog.call("positive", 2.5) is True
    assert prog.call("positive", -1.0) is False
    assert prog.call("touch", ints) is None
    assert ints.to_numpy()[0] == 42
    with pytest.raises(TypeError, match="@sum takes 4 arguments, got 2"):
        prog.call("sum", arr, 4)
    with pytest.raises(
        TypeError,
        match=r"@sum argument 0 \(memref<\?xf64>\): got a device array of int32",
    ):
        prog.call("sum", ints, 4, 1.0, False)
    with pytest.raises(TypeError, match=r"@count argument 2 \(i32\): cannot pass"):
        prog.call("count", ints, 5, 1.5)
    with pytest.raises(ValueError, match="3 values for a device array of 4"):
        arr.from_numpy(np.zeros(3))
    arr.free()
    arr.free()  # idempotent


def test_program_needs_an_abi(mock_so: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.so"
    shutil.copy(mock_so, bare)  # no manifest beside it
    with pytest.raises(IrglError, match="has no ABI manifest"):
        Program(bare).call("positive", 1.0)
    # the escape hatch: an explicit ABI
    assert Program(bare, entry_points=MOCK_ABI).call("positive", 1.0) is True
    manifest_path(bare).write_text("{}")
    with pytest.raises(IrglError, match="not a valid ABI manifest"):
        Program(bare)


def test_program_errors(mock_so: Path) -> None:
    prog = Program(mock_so)
    g = prog.upload_graph(generate("grid:3x3"))
    level = prog.alloc(9, np.int32)
    with pytest.raises(IrglRuntimeError, match="mock: source out of range"):
        prog.call("main", g, level, 99)
    with pytest.raises(IrglError, match="no entry point @nope"):
        prog.call("nope", 1)
    with pytest.raises(TypeError, match="expected a device value, got str"):
        prog.call("main", "x", level, 0)
    with pytest.raises(TypeError, match="got a graph, expected a device array"):
        prog.call("main", g, g, 0)
    prog.call("main", g, level, 4)
    assert level.to_numpy().tolist() == [2, 1, 2, 1, 0, 1, 2, 1, 2]
    g.free()


def test_upload_graph_failure(mock_so: Path) -> None:
    from irgl_runner.graphs import CSRGraph

    prog = Program(mock_so)
    big = CSRGraph(
        2_000_000, np.zeros(2_000_001, dtype=np.int64), np.zeros(0, dtype=np.int64)
    )
    with pytest.raises(
        IrglRuntimeError, match="irgl_graph_create: mock: graph too large"
    ):
        prog.upload_graph(big)


def test_run_bfs_with_mock(
    mock_so: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pipelines = use_mock(monkeypatch, mock_so)
    g = tmp_path / "g.txt"
    g.write_text("# two pieces\n0 1\n1 2\n2 3\n5 6\n")  # node 4 isolated
    out_file = tmp_path / "levels.txt"
    code, out, err = run_cli(
        ["run", "bfs", "--graph", str(g), "--reps", "3", "--output", str(out_file)],
        capsys,
    )
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert (
        rec["app"] == "bfs" and rec["graph"] == str(g) and rec["gpu"] == "Mock Device"
    )
    assert rec["nodes"] == 7 and rec["edges"] == 8 and rec["source"] == 0
    assert len(rec["times_ms"]) == 3 and rec["median_ms"] == sorted(rec["times_ms"])[1]
    assert rec["check"] == "passed" and pipelines == ["lower-irgl"]
    assert rec["edges_per_s"] is None or rec["edges_per_s"] > 0
    assert out_file.read_text().splitlines() == [
        "0 0",
        "1 1",
        "2 2",
        "3 3",
        f"4 {INF}",
        f"5 {INF}",
        f"6 {INF}",
    ]


def test_run_rmat_default_source_and_check_failure(
    mock_so: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pipelines = use_mock(monkeypatch, mock_so)
    pipeline = "lower-irgl{block_size=128 ticket_locks=true}"
    code, out, err = run_cli(
        ["run", "bfs", "--graph", "rmat:6:4", "--reps", "1", "--no-cache"]
        + ["-p", pipeline],
        capsys,
    )
    assert code == 0, err
    rec = json.loads(out)
    g, spec = graph_args.resolve_graph("rmat:6:4")
    assert (
        rec["source"] == graph_args.default_source(g, spec) and rec["check"] == "passed"
    )
    assert pipelines == [pipeline]  # passed through as given

    # A wrong answer: the check catches it, the JSON line still comes, exit code 1.
    from irgl_runner.apps import load_app

    app = load_app("bfs")
    monkeypatch.setattr(bench_cli, "load_app", lambda name, d=None: app)
    monkeypatch.setattr(app, "check", lambda ctx: "level: wrong on purpose")
    code, out, err = run_cli(
        ["run", "bfs", "--graph", "grid:4x4", "--reps", "1", "--no-cache"], capsys
    )
    assert code == 1 and json.loads(out)["check"] == "failed"
    assert (
        err.strip() == "irgl-bench: error: bfs: wrong output: level: wrong on purpose"
    )


def test_bfs_app_check_detects_errors(mock_so: Path) -> None:
    from irgl_runner.apps import execute, load_app

    app = load_app("bfs")
    graph = generate("grid:4x4")
    ctx = execute(app, Program(mock_so), graph, source=5, reps=2)
    assert len(ctx.times_ms) == 2
    np.testing.assert_array_equal(ctx.outputs["level"], bfs_levels(graph, 5))
    assert app.check is not None and app.check(ctx) is None
    ctx.outputs["level"][3] += 1
    problem = app.check(ctx)
    assert problem is not None and "node 3" in problem


# ----------------------------------------------------------------- compilation


def test_compile_cuda_cache_with_fake_nvcc(
    tmp_path: Path, fake_nvcc: tuple[Path, Path]
) -> None:
    fake, log = fake_nvcc
    cache = tmp_path / "cache"
    so1 = compile_cuda("int x;\n", nvcc=str(fake), cache=cache)
    so2 = compile_cuda("int x;\n", nvcc=str(fake), cache=cache)
    assert so1 == so2 and so1.is_file() and len(log.read_text().splitlines()) == 1
    args = log.read_text().split()
    for flag in ["-arch=sm_90", "-O1", "-std=c++17", "-shared", "-Xcompiler", "-fPIC"]:
        assert flag in args
    so3 = compile_cuda("int y;\n", nvcc=str(fake), cache=cache)
    so4 = compile_cuda("int x;\n", nvcc=str(fake), cache=cache, flags=["-O0"])
    assert len({so1, so3, so4}) == 3 and len(log.read_text().splitlines()) == 3
    cu = tmp_path / "prog.cu"
    cu.write_text("int x;\n")
    assert (
        compile_cuda(cu, nvcc=str(fake), cache=cache) != so1
    )  # its directory joins the include path


def _toolkit(root: Path, log: Path, archive: bool = True) -> Path:
    """A fake CUDA toolkit under ``root``: an nvcc whose dry run names its
    bin folder, cuda_runtime.h, the static runtime unless not ``archive``,
    and a host compiler (``cxx``) that logs its arguments and writes its
    output."""
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda_runtime.h").write_text("")
    if archive:
        (root / "lib64").mkdir()
        (root / "lib64" / "libcudart_static.a").write_text("")
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\necho '#$ _HERE_={root / 'bin'}'\n")
    cxx = root / "cxx"
    cxx.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        'echo built > "$out"\n'
    )
    for tool in (nvcc, cxx):
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return nvcc


def test_the_runtime_library_is_built_by_the_host_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime library holds no device code: the host compiler builds it
    (``$IRGL_CXX``), with the toolkit's headers and static runtime that
    nvcc's dry run points to, and of the flags those a host compiler takes;
    without the static runtime, or where the host compiler fails, nvcc
    builds it."""
    from irgl_runner.build import _host_compile_command, _runtime_library

    log = tmp_path / "cxx.log"
    nvcc = _toolkit(tmp_path / "cuda", log)
    monkeypatch.setenv("IRGL_CXX", str(tmp_path / "cuda" / "cxx"))
    flags = [
        "-arch=sm_90",
        "-O1",
        "--threads=0",
        "-Xcompiler",
        "-fPIC,-g",
        "-DIRGL_SYNC_LAUNCH",
        "-Xcicc",
        "-O2",
        "-Xptxas",
        "-O3",
    ]
    (tmp_path / "out").mkdir()
    lib = _runtime_library("k1", flags, 32, str(nvcc), tmp_path / "out")
    assert lib.read_text() == "built\n"
    (call,) = log.read_text().splitlines()
    args = call.split()
    assert args[:3] == ["-x", "c++", "-std=c++17"]
    assert {"-O1", "-fPIC", "-g", "-DIRGL_SYNC_LAUNCH"} <= set(args)
    assert "-arch=sm_90" not in args and "--threads=0" not in args
    # the device tools' options and their values are not the host's
    assert not {"-Xcicc", "-O2", "-Xptxas", "-O3"} & set(args)
    assert f"-I{tmp_path / 'cuda' / 'include'}" in args
    # the archive after `-x none`: linked, not compiled as C++
    assert args[-6:-4] == ["-x", "none"]
    assert args[-4].endswith("libcudart_static.a")
    bare = _toolkit(tmp_path / "bare", tmp_path / "bare.log", archive=False)
    assert _host_compile_command(str(bare), flags, Path("x.cu"), Path("x.so")) is None
    # a host compiler that fails: nvcc builds the library
    failing = tmp_path / "cuda" / "cxx"
    failing.write_text("#!/bin/sh\necho 'error: no' >&2\nexit 1\n")
    nvcc.write_text(
        f"#!/bin/sh\necho '#$ _HERE_={tmp_path / 'cuda' / 'bin'}'\n"
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        '[ -n "$out" ] && [ "$out" != /dev/null ] && echo nvcc > "$out"\n'
    )
    (tmp_path / "out2").mkdir()
    lib = _runtime_library("k2", flags, 32, str(nvcc), tmp_path / "out2")
    assert lib.read_text() == "nvcc\n"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_runtime_header_builds_as_a_host_library(tmp_path: Path) -> None:
    """The runtime header compiles with the host compiler alone into the
    library programs link (its device code parsed, never emitted)."""
    from irgl_runner.build import _host_compile_command, _runtime_library

    if _host_compile_command("nvcc", [], Path("x.cu"), Path("x.so")) is None:
        pytest.skip("no host compiler or static CUDA runtime beside nvcc")
    lib = _runtime_library("host", ["-O1"], 32, "nvcc", tmp_path)
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True
    ).stdout
    exported = {
        line.split()[-1] for line in out.splitlines() if " T " in line or " W " in line
    }
    assert "irgl_warm_up" in exported  # the ABI functions
    assert any("irgl_pipe_create" in name for name in exported)  # the host API


def test_the_runtime_library_is_prefetched_once(
    tmp_path: Path, fake_nvcc: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """prefetch_runtime_library builds the library a program links before the
    program is emitted; the program's compile then finds it."""
    from irgl_runner.build import emit_program, prefetch_runtime_library

    fake, log = fake_nvcc
    cache = tmp_path / "cache"
    monkeypatch.delenv("IRGL_NVCC_FLAGS", raising=False)
    monkeypatch.delenv("IRGL_RUNTIME_LIBRARY", raising=False)
    thread = prefetch_runtime_library(nvcc=str(fake), cache=cache)
    assert thread is not None
    thread.join()
    assert prefetch_runtime_library(nvcc=str(fake), cache=cache) is None  # there
    program = emit_program(Path(__file__).parents[2] / "benchmarks/cc/cc.mlir")
    compile_cuda(program, nvcc=str(fake), cache=cache)
    calls = log.read_text().splitlines()
    assert sum("libirgl_runtime_" in c and ".cu" in c for c in calls) == 1
    assert len(calls) == 2  # the library, then the program linked with it
    # a 64-bit build links another library; none where programs link none
    wide = prefetch_runtime_library(
        "cuda{index-bitwidth=64}", nvcc=str(fake), cache=cache
    )
    assert wide is not None
    wide.join()
    assert sum("libirgl_runtime_" in c for c in log.read_text().splitlines()) == 2
    monkeypatch.setenv("IRGL_RUNTIME_LIBRARY", "0")
    assert prefetch_runtime_library(nvcc=str(fake), cache=tmp_path / "c2") is None


def test_compile_cuda_runs_nvcc_once_for_concurrent_builders(tmp_path: Path) -> None:
    """Processes (pytest-xdist workers, `irgl-bench build -j`) that ask for the
    same library at once share one nvcc run: the others wait on the key's
    lock and then find the library."""
    log = tmp_path / "calls.log"
    fake = tmp_path / "nvcc"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        "sleep 0.3\n"
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        'echo built > "$out"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    cache = tmp_path / "cache"
    code = (
        "import sys; from irgl_runner.build import compile_cuda; "
        "print(compile_cuda('int z;\\n', nvcc=sys.argv[1], cache=sys.argv[2]))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(fake), str(cache)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outs) == 1 and Path(outs.pop()).read_text() == "built\n"
    assert len(log.read_text().splitlines()) == 1


def test_compile_cuda_failure_message(tmp_path: Path) -> None:
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho 'prog.cu(3): error: expected a ;' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(CompileError, match=r"(?s)nvcc failed \(exit 1\).*expected a ;"):
        compile_cuda("bad", nvcc=str(fake), cache=tmp_path / "c")
    with pytest.raises(CompileError, match="nvcc not found"):
        compile_cuda("x", nvcc=str(tmp_path / "missing-nvcc"), cache=tmp_path / "c")


def test_emit_cuda_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="no such MLIR file"):
        emit_cuda(tmp_path / "nope.mlir")


def test_emit_cuda_in_process_and_pipeline_as_given(tmp_path: Path) -> None:
    """The pipeline is used as given (options once, no second lower-irgl)."""
    from irgl_runner.apps import load_app

    mst_app = load_app("mst")
    ticket = tmp_path / "mst64.mlir"  # the MST program with 64-bit lock words
    ticket.write_text(mst_app.check.__globals__["ticket_lock_mlir"]())  # type: ignore[union-attr]
    default = emit_program(ticket)
    tickets = emit_program(ticket, pipeline="lower-irgl{ticket_locks=true}")
    assert tickets.cuda != default.cuda
    assert [e.name for e in tickets.entry_points] == ["main"]
    # a second lower-irgl would fail: nothing irgl is left to lower, so
    # equal text means the option reached the one run
    twice = emit_program(ticket, pipeline="lower-irgl{ticket_locks=true},lower-irgl")
    assert twice.cuda == tickets.cuda
    with pytest.raises(CompileError, match=r"bad pass pipeline 'nope'"):
        emit_program(ticket, pipeline="nope")
    with pytest.raises(CompileError, match=r"not found in expected arguments"):
        emit_program(ticket, pipeline="lower-irgl{bogus=1}")


def test_compile_errors_are_located_diagnostics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("irgl.kernel host @main(%n: index) {\n  %x = arith.addi %n, %q\n}\n")
    with pytest.raises(CompileError) as info:
        emit_program(bad)
    assert str(info.value).startswith(f"{bad}:")
    wrong = tmp_path / "wrong.mlir"
    wrong.write_text(
        "func.func @main(%n: index) -> i32 {\n"
        "  %x = arith.addi %n, %n : index\n"
        "  func.return %x : index\n}\n"
    )
    with pytest.raises(CompileError) as info:
        emit_program(wrong, pipeline="")
    text = str(info.value)
    assert text.startswith(f"{wrong}: error: ") and "^^^^" in text
    assert len(text.splitlines()) < 20  # the module is cut to the failing op


def test_run_reports_compile_errors_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app_dir = tmp_path / "apps" / "broken"
    app_dir.mkdir(parents=True)
    (app_dir / "broken.mlir").write_text("irgl.kernel host @main( {\n")
    (app_dir / "app.py").write_text(
        "from pathlib import Path\n"
        "from irgl_runner.apps import AppSpec\n"
        "APP = AppSpec(name='broken', mlir=Path(__file__).with_name('broken.mlir'),\n"
        "              host_fn='main', outputs=[], args=lambda ctx: [],\n"
        "              uses_source=False)\n"
    )
    cuda = BACKENDS["cuda"]
    monkeypatch.setitem(
        BACKENDS, "cuda", dataclasses.replace(cuda, unavailable=lambda: None)
    )
    code, out, err = run_cli(
        ["run", "broken", "--graph", "grid:2x2", "--no-cache"]
        + ["--benchmarks-dir", str(tmp_path / "apps")],
        capsys,
    )
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith(f"irgl-bench: error: {app_dir / 'broken.mlir'}:1:")


def test_run_without_gpu_says_so_before_compiling(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_build(app: object, args: object) -> Program:
        raise AssertionError("compiled although no GPU is present")

    monkeypatch.setitem(
        BACKENDS,
        "cuda",
        dataclasses.replace(
            BACKENDS["cuda"], unavailable=lambda: "no GPU here", load=no_build
        ),
    )
    code, out, err = run_cli(
        ["run", "bfs", "--graph", "grid:2x2", "--no-cache"], capsys
    )
    assert code == 1 and out == ""
    assert (
        err.strip() == "irgl-bench: error: cannot run with --backend cuda: no GPU here"
    )


def test_cuda_unavailable_names_the_reason() -> None:
    from irgl_runner.backends import cuda_unavailable

    reason = cuda_unavailable()
    assert reason is None or "GPU" in reason or "CUDA" in reason


@pytest.mark.parametrize("suffix", [".gr", ".mtx", ".txt", ".el"])
def test_gen_writes_the_format_its_suffix_names(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / f"g{suffix}"
    code, _, err = run_cli(["gen", "rmat:6:4", "-o", str(out_file)], capsys)
    assert code == 0, err
    head = out_file.read_bytes()[:60]
    if suffix == ".gr":
        assert head[:8] == struct.pack("<Q", 1)
    elif suffix == ".mtx":
        assert head.startswith(b"%%MatrixMarket matrix coordinate integer general")
    else:
        assert head.startswith(b"# 64 nodes")
    ref = generate("rmat:6:4")
    back = load_graph(out_file)
    # an edge list cannot hold isolated nodes after the last edge's
    n = back.num_nodes if suffix in (".txt", ".el") else ref.num_nodes
    np.testing.assert_array_equal(back.row_start, ref.row_start[: n + 1])
    np.testing.assert_array_equal(back.edge_dst, ref.edge_dst)
    np.testing.assert_array_equal(back.weights, ref.weights)


def test_gen_errors_name_what_the_user_gave(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing" / "dir" / "x.gr"
    code, out, err = run_cli(["gen", "rmat:4", "-o", str(missing)], capsys)
    assert code == 2 and out == ""
    assert err.strip() == f"irgl-bench: error: {missing}: No such file or directory"
    code, _, err = run_cli(["gen", "grid:0x5", "-o", str(tmp_path / "g.gr")], capsys)
    assert code == 2 and "grid dimensions must be at least 1x1" in err
    code, _, err = run_cli(["gen", "rmat:4", "-o", str(tmp_path / "g.csv")], capsys)
    assert code == 2 and "unknown graph file extension '.csv'" in err


def test_build_writes_the_abi_manifest(tmp_path: Path) -> None:
    """build(): in-process CUDA (the same text irgl-opt prints), a library from
    (here a fake) nvcc, and the ABI manifest beside it, read by Program."""
    from irgl_runner.api import build
    from irgl_runner.build import runtime_include_dir

    fake = tmp_path / "nvcc"
    fake.write_text(
        "#!/bin/sh\n"
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        'echo built > "$out"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    bfs = REPO / "benchmarks" / "bfs" / "bfs.mlir"
    so = build(bfs, nvcc=str(fake), cache=tmp_path / "cache")
    cu = so.with_suffix(".cu")
    opt = Path(sys.executable).with_name("irgl-opt")
    printed = subprocess.run(
        [str(opt), "--lower-irgl", "-t", "cuda", str(bfs)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert cu.read_text() == printed
    (main,) = load_manifest(manifest_path(so).read_text())
    assert main.name == "main" and main.result is None
    assert [p.kind for p in main.params] == [
        AbiKind.POINTER,
        AbiKind.POINTER,
        AbiKind.INT,
    ]
    assert [p.mlir_type for p in main.params][1:] == ["memref<?xi32>", "index"]
    assert (runtime_include_dir() / "irgl_runtime.cuh").is_file()


class _CountingProgram:
    """A ``ProgramLike`` that counts the uploads into each array."""

    last_result: object = None

    class _Array:
        def __init__(self, n: int, dtype: np.dtype) -> None:
            self.values = np.zeros(n, dtype=dtype)
            self.uploads = 0

        def from_numpy(self, values: np.ndarray) -> _CountingProgram._Array:
            self.values[:] = values
            self.uploads += 1
            return self

        def to_numpy(self) -> np.ndarray:
            return self.values.copy()

    def upload_graph(self, graph: object) -> None:
        return None

    def alloc(self, n: int, dtype: np.dtype) -> _CountingProgram._Array:
        return self._Array(n, dtype)

    def time_call(self, host_fn: str, *args: object) -> float:
        return 1.0


@pytest.mark.parametrize("reinit_all", [False, True])
def test_execute_uploads_scratch_once(reinit_all: bool) -> None:
    """An array declared ``every_run=False`` gets its initial value before
    the first run only (``reinit_all`` restores every run); the others
    before each of the warm-up and timed runs."""
    from irgl_runner.apps import ArraySpec, execute, load_app

    app = dataclasses.replace(
        load_app("tc"),
        outputs=[
            ArraySpec("data", "int32", init=7),
            ArraySpec("scratch", "int32", init=-1, read_back=False, every_run=False),
        ],
        args=lambda ctx: [ctx.arrays["data"], ctx.arrays["scratch"]],
    )
    ctx = execute(
        app,
        _CountingProgram(),  # type: ignore[arg-type]
        generate("grid:3x3"),
        reps=3,
        warmup=1,
        reinit_all=reinit_all,
    )
    assert len(ctx.times_ms) == 3
    assert ctx.arrays["data"].uploads == 4  # type: ignore[attr-defined]
    assert ctx.arrays["scratch"].uploads == (4 if reinit_all else 1)  # type: ignore[attr-defined]
    assert list(ctx.outputs) == ["data"]


def test_tc_scratch_is_uploaded_once() -> None:
    """TC overwrites its four scratch arrays before reading them, so they
    are uploaded once; the count array is set before every run."""
    from irgl_runner.apps import load_app

    outputs = load_app("tc").outputs
    assert {s.name for s in outputs if not s.every_run} == {
        "nout",
        "nin",
        "unsorted",
        "lists",
    }
    assert [s.name for s in outputs if s.every_run] == ["count"]


@pytest.mark.parametrize("reinit", [[], ["--reinit-all"]])
def test_tc_runs_again_on_its_own_scratch(
    reinit: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """On the interpreter, TC's later runs find the scratch of the earlier
    ones (uploaded once) and still count right, on the DAG path (rmat:6)
    and the sparse one (grid); ``--reinit-all`` is recorded."""
    for graph in ("rmat:6", "grid:6x6"):
        code, out, err = run_cli(
            ["run", "tc", "--graph", graph, "--backend", "interp", "--reps", "3"]
            + ["--no-cache", *reinit],
            capsys,
        )
        assert code == 0, err
        rec = json.loads(out.strip().splitlines()[-1])
        assert rec["check"] == "passed" and len(rec["times_ms"]) == 3
        assert rec.get("reinit_all", False) is bool(reinit)


def test_interp_run_reports_its_work(capsys: pytest.CaptureFixture[str]) -> None:
    """`--backend interp`'s JSON line gives what the last call did: a BFS
    from an isolated node visits no edge and pushes nothing (its init
    kernel pushes a source only if it has edges; issue 26's work
    proportional to what is reached, from the shell), one from a node with
    edges (the hub) visits some and pushes more."""
    base = ["run", "bfs", "--graph", "isolated:2000:200", "--backend", "interp"]
    code, out, _ = run_cli([*base, "--reps", "1", "--source", "0"], capsys)
    assert code == 0
    record = json.loads(out.strip().splitlines()[-1])
    assert record["check"] == "passed"
    assert (record["edge_visits"], record["pushes"]) == (0, 0)
    assert record["invocations"] == 1  # the init kernel alone
    from irgl_runner.generators import generate

    hub = int(generate("isolated:2000:200").degrees().argmax())
    code, out, _ = run_cli([*base, "--reps", "1", "--source", str(hub)], capsys)
    record = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and record["edge_visits"] > 0 and record["pushes"] > 1


# ------------------------------------------- --gpus on simulated ranks


@pytest.mark.parametrize("policy", ["oec", "cvc"])
def test_interp_gpus_simulates_ranks(
    policy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--backend interp --gpus N`: the distributed program on N simulated
    ranks in this process, checked like any run, its communication in the
    JSON line."""
    args = ["run", "cc", "--graph", "rmat:6", "--backend", "interp", "--reps", "1"]
    code, out, _ = run_cli([*args, "--gpus", "3", "--policy", policy], capsys)
    assert code == 0
    record = json.loads(out.strip().splitlines()[-1])
    assert record["check"] == "passed"
    assert (record["ranks"], record["policy"]) == (3, policy)
    assert "3 simulated ranks" in record["gpu"]
    assert len(record["edge_visits_by_rank"]) == 3
    for key in ("pushes_by_rank", "atomics_by_rank", "atomic_changes_by_rank"):
        assert len(record[key]) == 3 and sum(record[key]) > 0, key
    assert all(
        changed <= done
        for changed, done in zip(
            record["atomic_changes_by_rank"], record["atomics_by_rank"], strict=True
        )
    )
    assert record["values_reduced"] > 0 and record["collectives"] > 0
    # under an edge-cut the labels are reduced only (lowering/reduce_only.py)
    assert (record["values_broadcast"] > 0) == (policy == "cvc")
    # ... and a mirror is pushed by its bit there (lowering/mirror_pushes.py)
    assert len(record["mirror_pushes_by_rank"]) == 3
    assert (sum(record["mirror_pushes_by_rank"]) > 0) == (policy == "oec")


def test_interp_gpus_reports_what_does_not_distribute(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "mst", "--graph", "rmat:6", "--backend", "interp"]
    code, out, err = run_cli([*args, "--gpus", "2"], capsys)
    assert code == 2 and out == ""
    assert "mst cannot run on several ranks" in err
    assert "mst.mlir:" in err and "cannot distribute" in err  # located
    assert "Traceback" not in err


def test_gpus_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "bfs", "--graph", "rmat:5", "--backend", "interp"]
    code, _, err = run_cli([*base, "--gpus", "0"], capsys)
    assert code == 2 and "--gpus must be at least 1, got 0" in err
    code, _, err = run_cli([*base, "--gpus", "2", "--rank-partitions"], capsys)
    assert code == 2 and "--rank-partitions applies only to several GPUs" in err
    path = ["run", "bfs", "--graph", "path:2", "--backend", "interp", "--gpus", "4"]
    code, out, err = run_cli(path, capsys)
    assert code == 2 and out == ""
    assert "the graph has 2 nodes, fewer than the 4 ranks" in err
    assert "Traceback" not in err


def test_cuda_gpus_without_a_gpu_fails_before_compiling(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No driver: exit 1 at once (nothing compiled, no rank started), naming
    the simulated ranks instead."""
    from irgl_runner import backends, distributed

    def no_launch(_args: argparse.Namespace) -> int:
        raise AssertionError("started ranks without a GPU")

    monkeypatch.setattr(distributed, "run_from_bench", no_launch)
    cuda = dataclasses.replace(
        backends.BACKENDS["cuda"], unavailable=lambda: "no GPU in this test"
    )
    monkeypatch.setitem(backends.BACKENDS, "cuda", cuda)
    code, out, err = run_cli(["run", "bfs", "--graph", "rmat:5", "--gpus", "2"], capsys)
    assert code == 1 and out == ""
    assert "cannot run on 2 GPUs with --backend cuda: no GPU in this test" in err
    assert "--backend interp --gpus N simulates N ranks" in err
