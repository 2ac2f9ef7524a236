"""Shared pytest helpers: finding nvcc, detecting an NVIDIA GPU, and one
nvcc build cache for the whole session.

Tests marked `@pytest.mark.gpu` are skipped when no GPU is present.

Every test that compiles a program goes through :func:`shared_build_cache`
(``irgl_runner.build``'s content-keyed cache): a program that several tests
build (the same CUDA text and flags) is compiled once per session, also
across pytest-xdist workers (`pytest -n auto`), which wait on the key's lock
instead of running nvcc again.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from irgl_runner.build import EmittedProgram


@functools.cache
def nvcc_path() -> str | None:
    """nvcc from $PATH, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; None if absent."""
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (
        os.environ.get("CUDA_HOME"),
        os.environ.get("CUDA_PATH"),
        "/usr/local/cuda",
    ):
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return str(Path(root) / "bin" / "nvcc")
    return None


@functools.cache
def has_gpu() -> bool:
    """True when `nvidia-smi -L` succeeds and lists at least one GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and "GPU" in proc.stdout


#: The session's build cache: set by the controlling pytest process (and
#: inherited by its xdist workers), or by the user to keep builds between runs.
BUILD_CACHE_ENV = "IRGL_TEST_BUILD_CACHE"

_OWNED_CACHE = pytest.StashKey[str]()


#: Comma-separated GPU indices to spread pytest-xdist workers over
#: (``IRGL_TEST_GPUS=0,1,2,3 pytest -m gpu -n 16``): worker ``gwK`` sees only
#: the (K mod count)-th of them. Unset: every worker sees every GPU.
TEST_GPUS_ENV = "IRGL_TEST_GPUS"


def worker_gpu(worker: str | None, gpus: str | None) -> str | None:
    """The ``CUDA_VISIBLE_DEVICES`` value for xdist worker ``worker``
    (``gw0``, ``gw1``, ...) under ``$IRGL_TEST_GPUS`` = ``gpus``; None to
    leave it as it is (not a worker, or no list)."""
    names = [g.strip() for g in (gpus or "").split(",") if g.strip()]
    if not names or not worker or not worker.startswith("gw"):
        return None
    try:
        index = int(worker[2:])
    except ValueError:
        return None
    return names[index % len(names)]


def pytest_configure(config: pytest.Config) -> None:
    """Make the session's build cache (a temporary folder, removed at the
    end) unless ``$IRGL_TEST_BUILD_CACHE`` names one already: xdist workers
    inherit the controller's, so they share it. An xdist worker under
    ``$IRGL_TEST_GPUS`` keeps to its GPU (before anything starts CUDA)."""
    gpu = worker_gpu(
        os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get(TEST_GPUS_ENV)
    )
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    if os.environ.get(BUILD_CACHE_ENV):
        return
    folder = tempfile.mkdtemp(prefix="irgl-test-builds-")
    os.environ[BUILD_CACHE_ENV] = folder
    config.stash[_OWNED_CACHE] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the build cache this process made."""
    folder = config.stash.get(_OWNED_CACHE, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(BUILD_CACHE_ENV, None)


def shared_build_cache() -> Path:
    """The nvcc build cache of this test session (see the module docstring):
    pass it as ``cache=`` to ``build``/``compile_cuda`` wherever the test
    does not look at the cache itself."""
    folder = os.environ.get(BUILD_CACHE_ENV)
    if not folder:  # imported outside a pytest session
        folder = tempfile.mkdtemp(prefix="irgl-test-builds-")
        os.environ[BUILD_CACHE_ENV] = folder
    return Path(folder)


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Skip tests marked `gpu` when no GPU is present."""
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU (nvidia-smi -L lists none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


#: What a test that only asks "does this CUDA compile" adds to the build's
#: flags: little device optimization (cicc at -O1, ptxas at -O0). Every
#: phase still runs (front end, PTX generation, assembly, host compile,
#: link), in a third of the time (BFS: 6.6 wall s with the real flags, 2.1
#: here; cicc at -O0 leaves ptxas so much more PTX that BFS took 3.0 s and
#: every app was slower); programs that run on the GPU are built with the
#: real flags.
COMPILE_CHECK_FLAGS = ("-Xcicc", "-O1", "-Xptxas", "-O0")


def check_build_flags(*extra: str) -> tuple[str, ...]:
    """The build's flags for a compile check: ``irgl_runner``'s defaults
    without ``--split-compile`` (the test workers already take every core:
    compiling tests ran 8% longer with it) plus :data:`COMPILE_CHECK_FLAGS`
    and `extra`."""
    from irgl_runner.build import DEFAULT_NVCC_FLAGS

    base = (f for f in DEFAULT_NVCC_FLAGS if not f.startswith("--split-compile"))
    return (*base, *COMPILE_CHECK_FLAGS, *extra)


def nvcc_object_errors(cuda: str | EmittedProgram) -> str | None:
    """Compile CUDA text (or an emitted program) with nvcc (skipping the
    test when nvcc is missing); None on success, else nvcc's diagnostics.

    The build is ``irgl_runner``'s own, as ``irgl-bench run`` makes it: the
    program compiles against the runtime's declarations and links the
    runtime library (``compile_cuda``'s library build, once per session),
    with ``DEFAULT_NVCC_FLAGS`` (``-arch=sm_90 -O1 -std=c++17 -shared``) plus
    :data:`COMPILE_CHECK_FLAGS` (:func:`check_build_flags`), into
    :func:`shared_build_cache`, so a program that several tests check is
    compiled once per session. Text is first compiled as a program without
    C text in host code; where that fails, as one with it (``irgl::Error``
    and the standard headers, else the whole header: 1.3× the time of a
    small program, so not for every program), whose diagnostics count.
    """
    from irgl_runner.build import EmittedProgram, compile_cuda
    from irgl_runner.errors import CompileError

    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    if isinstance(cuda, EmittedProgram):
        tries = [cuda]
    else:
        tries = [
            EmittedProgram(cuda, ()),
            EmittedProgram(cuda, (), host_c_text=True, host_c_std=True),
        ]
    error = ""
    for program in tries:
        try:
            compile_cuda(
                program,
                flags=check_build_flags(),
                nvcc=nvcc,
                cache=shared_build_cache(),
            )
        except CompileError as e:
            error = str(e)
        else:
            return None
    return error


def irgl_opt(*args: str) -> subprocess.CompletedProcess[str]:
    """Run irgl-opt's `main` in this process (what the console script runs,
    without half a second of interpreter start and imports a call), its
    output captured as a process's would be."""
    from irgl_tools.opt_main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse: --help, usage errors
            code = e.code if isinstance(e.code, int) else 1
    return subprocess.CompletedProcess(
        ["irgl-opt", *args], code, out.getvalue(), err.getvalue()
    )


def emitted_code(app: str, pipeline: str) -> str:
    """The CUDA that `pipeline` makes of benchmark `app`, without the runtime."""
    from irgl_runner.apps import load_app

    proc = irgl_opt("-p", pipeline, "-t", "cuda", str(load_app(app).mlir))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("// ---- end irgl_runtime.cuh ----")[1]


@functools.cache
def app_program(app: str, pipeline: str):  # -> irgl_runner.api.Program
    """Benchmark `app` built with `pipeline` (once per test session)."""
    from irgl_runner.api import Program, build
    from irgl_runner.apps import load_app

    return Program(build(load_app(app).mlir, pipeline, cache=shared_build_cache()))


def assert_app_passes_its_check(app_name: str, graph, pipeline: str) -> None:
    """Run benchmark `app_name` built with `pipeline` on the GPU on `graph`
    (a CSRGraph; its weights dropped for unweighted apps, the source the
    default for RMAT) and assert that its CPU check passes."""
    from irgl_runner import generators
    from irgl_runner.apps import execute, load_app
    from irgl_runner.graph_args import default_source

    assert has_gpu()
    app = load_app(app_name)
    if not app.weighted:
        graph.weights = None
    source = default_source(graph, generators.parse_spec("rmat:10"))
    program = app_program(app_name, pipeline)
    ctx = execute(app, program, graph, source=source, reps=1, warmup=0)
    assert app.check is not None
    problem = app.check(ctx)
    assert problem is None, problem


#: A plain kernel and a host kernel that iterates it; the host's Iterate is
#: on line 8 and uses `%n`, which is defined in the Iterate's own body.
OWN_REGION_OPERAND = """\
irgl.kernel @b(%g: !irgl.graph, %LEVEL: i32) {
  irgl.forall %wlidx in worklist {
    %n = irgl.wl.pop %wlidx
  }
}
irgl.kernel host @main(%g: !irgl.graph, %src: index) {
  %c1 = arith.constant 1 : i32
  %r = irgl.iterate @b(%g, %lvl = %n) : (!irgl.graph, i32) initial [%src] {
    %n = arith.addi %lvl, %c1 : i32
    irgl.yield %n : i32
  }
}
"""


def assert_driver_passes(args: list[str], what: str, timeout: int = 300) -> None:
    """Run a Python driver (``python -c DRIVER ARGS...``) in a subprocess with
    a time limit (a lost chunk or a hang must fail, not stall the suite); it
    must exit 0 and print ``: ok``."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} did not finish in {timeout} s")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and ": ok" in proc.stdout, out


def run_host_program(tmp_path: Path, name: str, source: str) -> None:
    """Build ``source`` (C++ including ``irgl_runtime.cuh``) with nvcc as a
    host program, run it, and require it to print ``ok`` (skips without
    nvcc)."""
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    runtime = Path(__file__).resolve().parents[2] / "cuda_emitter" / "runtime"
    (tmp_path / f"{name}.cu").write_text(source)
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", f"-I{runtime}", f"{name}.cu"]
    build = subprocess.run(
        [*cmd, "-o", name], cwd=tmp_path, capture_output=True, text=True
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run(
        [str(tmp_path / name)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout


@pytest.fixture
def fake_nvcc(tmp_path: Path) -> tuple[Path, Path]:
    """An nvcc that logs its calls and writes a dummy library; (it, its log).
    Its dry run names no toolkit, so it builds the runtime library too."""
    log = tmp_path / "nvcc.log"
    fake = tmp_path / "nvcc"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$*" in *--dryrun*) exit 0;; esac\n'
        f'echo "$@" >> {log}\n'
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        'echo built > "$out"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake, log
