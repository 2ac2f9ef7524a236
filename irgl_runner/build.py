"""Build IrGL programs: lower and emit in process, compile with nvcc, cache.

The compiler runs inside this process: the MLIR file is parsed with the irgl
dialects, the pass pipeline (default :data:`DEFAULT_PIPELINE`) is applied as
given, and the `cuda` target prints the module. The host ABI of the entry
points comes from the lowered module (:mod:`cuda_emitter.host_abi`) and is
written as a JSON manifest beside the cached `.cu`/`.so`, so that a cached
library knows its ABI without the compiler::

    so = build("benchmarks/bfs/bfs.mlir", pipeline="lower-irgl{block_size=128}")
    # ~/.cache/irgl/irgl_<key>.so and irgl_<key>.abi.json
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.target import Target

from cuda_emitter.host_abi import (
    AbiTypeError,
    EntryPoint,
    dump_manifest,
    entry_points,
    manifest_path,
)
from cuda_emitter.target import RUNTIME_HEADER
from irgl_dialect.runtime import CBlockOp, CDeclOp, CExprOp, CGlobalOp
from irgl_dialect.syntax import parse_remembered
from irgl_tools.universe import IRGL_UNIVERSE
from lowering.convert_irgl_c import add_include_dir

from .errors import CompileError, UsageError

__all__ = [
    "CompileError",
    "DEFAULT_NVCC_FLAGS",
    "DEFAULT_PIPELINE",
    "DEFAULT_TARGET",
    "INDEX32_LIMIT",
    "EmittedProgram",
    "build",
    "cache_dir",
    "compile_cuda",
    "emit_cuda",
    "emit_program",
    "extra_nvcc_flags",
    "library_path",
    "prefetch_runtime_library",
    "runtime_include_dir",
    "target_for",
]

#: The pass pipeline a program is lowered with unless told otherwise.
DEFAULT_PIPELINE = "lower-irgl"

#: The target that prints the lowered module (an xDSL target spec).
DEFAULT_TARGET = "cuda"

DEFAULT_NVCC_FLAGS: tuple[str, ...] = (
    "-arch=sm_90",
    # nvcc's -O sets the host compiler's level only (device code is the same,
    # cubin for cubin); the host side is launches and checks, and -O1 builds
    # it in about 0.5 CPU s less than -O3 (docs/performance-notes.md)
    "-O1",
    # cicc and ptxas take a program's kernels on every core: BFS (two control
    # kernels) builds in about 0.8 of the time; the machine code of the
    # kernels whose device bodies are all inlined is the same byte for byte,
    # and colour's and DMR's (bodies called) ran as fast (H200); dropped
    # where nvcc rejects it
    "--split-compile=0",
    # nvcc's own steps in parallel (the host side's preprocessing and cudafe++
    # beside cicc and ptxas): one program builds in about 0.96 of the time on
    # two cores (colour 2.13 -> 2.08 s, DMR 2.08 -> 2.00, BFS 2.09 -> 2.00),
    # the ten apps with -j 2 as fast; every nvcc that targets sm_90 has it
    "--threads=0",
    "-std=c++17",
    "-shared",
    "-Xcompiler",
    "-fPIC",
)


# ------------------------------------------------------------------ compiler


@dataclass(frozen=True)
class EmittedProgram:
    """The CUDA text of a lowered program and the ABI of its entry points."""

    cuda: str
    entry_points: tuple[EntryPoint, ...]
    host_c_text: bool = False
    """Whether C text (`irgl.cblock`, `irgl.cexpr`, `irgl.cdecl`,
    `irgl.cglobal`) reaches host code or the file's scope: such text may use
    more of the runtime than the library declares (then the program compiles
    with the whole header, see :func:`compile_cuda`)."""
    host_c_std: bool = False
    """Whether that C text names ``std``: it then compiles with <string> and
    <stdexcept> (``-DIRGL_HOST_C_TEXT``, about 0.3 s more), which a program
    linked with the runtime library otherwise does without (irgl::Error and
    the C headers every program has)."""


def _context() -> Context:
    """A context with every dialect xDSL knows plus the irgl ones."""
    ctx = Context()
    multiverse = Universe.get_multiverse()
    for name, factory in multiverse.all_dialects.items():
        ctx.register_dialect(name, factory)
    known = set(ctx.registered_dialect_names)
    for name, factory in IRGL_UNIVERSE.all_dialects.items():
        if name not in known:
            ctx.register_dialect(name, factory)
    return ctx


def _passes() -> dict[str, Callable[[], type[ModulePass]]]:
    passes = dict(Universe.get_multiverse().all_passes)
    for name, factory in IRGL_UNIVERSE.all_passes.items():
        passes.setdefault(name, factory)
    return passes


def _target(spec_text: str) -> Target:
    spec = parse_spec(spec_text)
    targets = dict(Universe.get_multiverse().all_targets)
    for name, factory in IRGL_UNIVERSE.all_targets.items():
        targets.setdefault(name, factory)
    factory = targets.get(spec.name)
    if factory is None:
        raise CompileError(
            f"unknown target {spec.name!r} (known: {', '.join(sorted(targets))})"
        )
    return factory()().from_spec(spec)


#: Lines of the printed module kept above and below a verifier's underline.
_CONTEXT_LINES = 4

_UNDERLINE = re.compile(r"\s*\^+-*\s*")


def _shorten(note: str) -> str:
    """A verifier note (the whole module, the failing op underlined) cut to the
    lines around the underline."""
    lines = note.rstrip().split("\n")
    marks = [i for i, line in enumerate(lines) if _UNDERLINE.fullmatch(line)]
    if not marks or len(lines) <= 4 * _CONTEXT_LINES:
        return note.rstrip()
    first = max(marks[0] - _CONTEXT_LINES, 0)
    last = min(marks[-1] + _CONTEXT_LINES + 3, len(lines))
    return "\n".join(["...", *lines[first:last], "..."])


def _diagnostic(error: BaseException) -> str:
    """An xDSL diagnostic with its notes (verifier errors underline the op)."""
    parts = [str(error).rstrip()]
    parts += [_shorten(str(note)) for note in getattr(error, "__notes__", ())]
    return "\n".join(p for p in parts if p)


def _parse(ctx: Context, text: str, name: str) -> ModuleOp:
    """Parse a module (ParseError carries ``name:line:col``) with the
    project's :class:`SourceParser`: an operand defined only in its op's own
    region is a located parse error, not a failure later on."""
    return parse_remembered(ctx, text, name)


def _verify(module: ModuleOp) -> None:
    """Verify a module (VerifyException underlines the failing op)."""
    module.verify()


def emit_program(
    mlir: str | os.PathLike[str],
    pipeline: str = DEFAULT_PIPELINE,
    target: str = DEFAULT_TARGET,
) -> EmittedProgram:
    """Parse the MLIR file `mlir`, apply `pipeline` (an xDSL pass-pipeline
    spec, used as given: `"lower-irgl{ticket_locks=true}"` lowers once, with
    that option) and print it with `target`. The program's directory is
    added to the `include_dirs` of `lower-irgl`/`convert-irgl-c`.

    The module is verified after parsing and after every pass. Raises
    :class:`CompileError` with the compiler's diagnostic. A result is
    remembered for the rest of the process (same text, pipeline and target),
    except for programs that `irgl.cinclude` headers and pipelines that print
    remarks.
    """
    path = Path(mlir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CompileError(f"{path}: no such MLIR file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CompileError(f"{path}: cannot read: {e}") from None
    # the headers beside the program are part of the result, and remarks are
    # printed while it lowers: those lower every time
    if "cinclude" in text or "remarks" in pipeline:
        return _emit(path, text, pipeline, target)
    return _emit_memo(str(path.resolve()), str(path), text, pipeline, target)


@functools.lru_cache(maxsize=128)
def _emit_memo(
    _resolved: str, name: str, text: str, pipeline: str, target: str
) -> EmittedProgram:
    """:func:`_emit` of a program without `irgl.cinclude`, remembered per
    process: the result depends only on the text, the pipeline and the target
    (an ablation lowers each app under every configuration to find the
    identical ones, then again to build them)."""
    return _emit(Path(name), text, pipeline, target)


def _emit(path: Path, text: str, pipeline: str, target: str) -> EmittedProgram:
    """Lower and print the program `text` read from `path` (see
    :func:`emit_program`)."""
    name = str(path)
    try:
        ctx = _context()
        try:
            passes = PassPipeline.parse_spec(
                _passes(), pipeline, lambda _p, module, _n: _verify(module)
            )
        except (ValueError, TypeError) as e:
            raise CompileError(f"bad pass pipeline {pipeline!r}: {e}") from None
        # `irgl.cinclude` headers ship beside the program.
        passes = add_include_dir(passes, str(path.resolve().parent))
        try:
            emitter = _target(target)
        except (ValueError, TypeError) as e:
            raise CompileError(f"bad target {target!r}: {e}") from None
        module = _parse(ctx, text, name)
        if not passes.passes:
            _verify(module)
        passes.apply(ctx, module)
        out = StringIO()
        emitter.emit(ctx, module, out)
        abi = entry_points(module)
        host_c = _host_c_texts(module)
    except CompileError:
        raise
    except ParseError as e:
        raise CompileError(_diagnostic(e)) from None
    except (DiagnosticException, AbiTypeError) as e:
        raise CompileError(f"{name}: error: {_diagnostic(e)}") from None
    except Exception as e:  # a compiler defect: a message, never a traceback
        if os.environ.get("IRGL_DEBUG"):
            raise
        raise CompileError(
            f"{name}: internal compiler error ({type(e).__name__}): {e}\n"
            "(set IRGL_DEBUG=1 for a traceback and please report it)"
        ) from None
    return EmittedProgram(
        out.getvalue(),
        abi,
        host_c_text=bool(host_c),
        host_c_std=any(_NAMES_STD.search(t) for t in host_c),
    )


_NAMES_STD = re.compile(r"\bstd\b")


def _host_c_texts(module: ModuleOp) -> list[str]:
    """The C text of a lowered module outside its `gpu.module` (kernels' C
    text sees only the runtime's device functions, which every build has)."""
    texts: list[str] = []
    for op in module.walk():
        if isinstance(op, CBlockOp | CDeclOp | CExprOp | CGlobalOp):
            parent = op.parent_op()
            while parent is not None and not isinstance(parent, gpu.ModuleOp):
                parent = parent.parent_op()
            if parent is None:
                if isinstance(op, CDeclOp):
                    init = op.init.data if op.init is not None else ""
                    texts.append(f"{op.c_type.data} {init}")
                else:
                    texts.append(op.text.data)
    return texts


def emit_cuda(
    mlir: str | os.PathLike[str],
    pipeline: str = DEFAULT_PIPELINE,
    target: str = DEFAULT_TARGET,
) -> str:
    """The CUDA text of an IrGL MLIR file (see :func:`emit_program`)."""
    return emit_program(mlir, pipeline, target).cuda


# ------------------------------------------------------------------ nvcc


def cache_dir() -> Path:
    """Where compiled libraries live: ``$IRGL_CACHE_DIR`` or ``~/.cache/irgl``."""
    env = os.environ.get("IRGL_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "irgl"


def runtime_include_dir() -> Path:
    """The folder of ``irgl_runtime.cuh``, from the installed ``cuda_emitter``
    package (``importlib.resources``)."""
    folder = resources.files("cuda_emitter").joinpath("runtime")
    return Path(str(folder))


def _looks_like_path(src: str | os.PathLike[str]) -> bool:
    if isinstance(src, os.PathLike):
        return True
    return "\n" not in src and len(src) < 4096 and Path(src).is_file()


def extra_nvcc_flags() -> list[str]:
    """nvcc flags added to every build: ``$IRGL_NVCC_FLAGS``, split like a
    shell (e.g. ``-DIRGL_PROFILE_CONTROL`` for the control kernels' barrier
    profile, see docs/lowered-ir.md). They are part of the cache key."""
    return shlex.split(os.environ.get("IRGL_NVCC_FLAGS", ""))


def _prepare(
    source: str | os.PathLike[str] | EmittedProgram,
    flags: Sequence[str],
    include_dirs: Sequence[str | os.PathLike[str]],
) -> tuple[str, tuple[EntryPoint, ...] | None, list[str], str, str | None]:
    """The CUDA text, the ABI (for an :class:`EmittedProgram`), nvcc's
    arguments, the cache key of ``source`` and the key of the runtime library
    it links (None: it compiles the whole runtime header)."""
    includes = [runtime_include_dir(), *map(Path, include_dirs)]
    abi: tuple[EntryPoint, ...] | None = None
    if isinstance(source, EmittedProgram):
        text, abi = source.cuda, source.entry_points
    elif _looks_like_path(source):
        path = Path(source)
        try:
            text = path.read_text()
        except OSError as e:
            raise CompileError(
                f"cannot read CUDA source {path}: {e.strerror or e}"
            ) from None
        includes.append(path.resolve().parent)
    else:
        text = str(source)
    flags = [*flags, *extra_nvcc_flags()]
    library = _runtime_library_key(source, flags, text)
    if library is not None:  # (its key derives from what this key covers)
        flags = [*flags, "-DIRGL_RUNTIME_LIBRARY"]
        if isinstance(source, EmittedProgram) and source.host_c_std:
            flags.append("-DIRGL_HOST_C_TEXT")  # <string>, <stdexcept>
    args = [*flags, *(f"-I{d}" for d in includes)]
    h = hashlib.sha256()
    h.update(text.encode())
    h.update(b"\0" + "\0".join(flags).encode())
    # Include dirs by their headers, not their paths: a cache directory built
    # on one machine is reused on another with the checkout elsewhere.
    for d in includes:  # a changed header must force a rebuild
        h.update(b"\0-I\0")
        h.update(_headers_digest(Path(d)))
    return text, abi, args, h.hexdigest()[:32], library


def _headers_digest(folder: Path) -> bytes:
    """The names and contents of the `.cuh`/`.h` headers of `folder`."""
    h = hashlib.sha256()
    for hdr in sorted(folder.glob("*.cuh")) + sorted(folder.glob("*.h")):
        h.update(hdr.name.encode() + b"\0" + hdr.read_bytes())
    return h.digest()


_INDEX_BITS = re.compile(r"^#define IRGL_INDEX_BITS (\d+)$", re.MULTILINE)


def _runtime_library_key(
    source: str | os.PathLike[str] | EmittedProgram, flags: Sequence[str], text: str
) -> str | None:
    """The key of the runtime library an emitted program links, or None where
    it compiles the whole header: a `.cu` file or text, a
    program for several GPUs, the control kernels' profile
    (``-DIRGL_PROFILE_CONTROL``), a counting build (``-DIRGL_COUNT_EDGES``:
    their device variables are the program's) or ``IRGL_RUNTIME_LIBRARY=0`` in the
    environment. The key covers the header, the flags (they may change the
    runtime's host code, e.g. ``-DIRGL_SYNC_LAUNCH``) and the index width."""
    if not isinstance(source, EmittedProgram) or "\n#define IRGL_DISTRIBUTED" in text:
        return None
    bits = _INDEX_BITS.search(text)
    return _library_key(flags, int(bits.group(1)) if bits else 32)


def _library_key(flags: Sequence[str], index_bits: int) -> str | None:
    """The runtime library's key for these flags (``$IRGL_NVCC_FLAGS``
    included) and index width; None where programs compile the whole header
    (see :func:`_runtime_library_key`)."""
    if (
        # the profile's counters are device variables of the program's module,
        # which the library's host code (irgl_outline_finish) cannot read
        any("IRGL_PROFILE_CONTROL" in f or "IRGL_COUNT_EDGES" in f for f in flags)
        or os.environ.get("IRGL_RUNTIME_LIBRARY", "1") == "0"
    ):
        return None
    h = hashlib.sha256(b"irgl runtime library\0")
    h.update(str(index_bits).encode())
    h.update(b"\0" + "\0".join(flags).encode())
    h.update(_headers_digest(runtime_include_dir()))
    return h.hexdigest()[:24]


def prefetch_runtime_library(
    target: str = DEFAULT_TARGET,
    flags: Sequence[str] = DEFAULT_NVCC_FLAGS,
    nvcc: str = "nvcc",
    cache: str | os.PathLike[str] | None = None,
) -> threading.Thread | None:
    """Start building the runtime library that programs of ``target`` and
    ``flags`` link (:func:`compile_cuda`), in a thread, if ``cache`` lacks it,
    so that nvcc compiles it while the caller lowers and emits (0.4-0.6 s for
    an app); the program's compile then waits for it under its lock. Returns
    the thread (None: nothing to build). A failure is left to the program's
    compile, which builds the library again and reports nvcc's message."""
    flags = [*flags, *extra_nvcc_flags()]
    bits = 64 if "index-bitwidth=64" in target.replace(" ", "") else 32
    key = _library_key(flags, bits)
    out_dir = Path(cache) if cache is not None else cache_dir()
    if key is None or runtime_library_path(key, out_dir).is_file():
        return None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # the program's compile says why

    def run() -> None:
        try:
            _runtime_library(key, flags, bits, nvcc, out_dir)
        except (CompileError, OSError):
            pass  # the program's compile tries again and reports it

    thread = threading.Thread(target=run, name="irgl-runtime-library")
    thread.start()
    return thread


def library_path(
    source: str | os.PathLike[str] | EmittedProgram,
    flags: Sequence[str] = DEFAULT_NVCC_FLAGS,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """Where :func:`compile_cuda` puts (and looks for) the library of
    ``source``, without compiling: ``irgl_<key>.so`` under ``cache`` (default
    :func:`cache_dir`)."""
    key = _prepare(source, flags, include_dirs)[3]
    out_dir = Path(cache) if cache is not None else cache_dir()
    return out_dir / f"irgl_{key}.so"


def compile_cuda(
    source: str | os.PathLike[str] | EmittedProgram,
    flags: Sequence[str] = DEFAULT_NVCC_FLAGS,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    nvcc: str = "nvcc",
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """Compile CUDA source (an :class:`EmittedProgram`, a ``.cu`` path or the
    text itself) to a shared library.

    The library is cached under :func:`cache_dir` keyed by the SHA-256 of the
    source, the flags and the headers of the include dirs (their contents,
    not their paths), and reused when present. An :class:`EmittedProgram`'s
    ABI manifest is written beside it (``irgl_<key>.abi.json``, read by
    :class:`irgl_runner.api.Program`). An :class:`EmittedProgram` compiles
    against the runtime's declarations only and links
    ``libirgl_runtime_<key>.so`` beside it (built once per key, while the
    first program compiles; see :func:`_runtime_library_key`); one whose
    host C text does not compile so compiles the whole header, as other
    sources do. Raises :class:`CompileError` with nvcc's output.
    """
    text, abi, args, key, library = _prepare(source, flags, include_dirs)
    out_dir = Path(cache) if cache is not None else cache_dir()
    so = out_dir / f"irgl_{key}.so"
    manifest = manifest_path(so)
    if abi is not None and not manifest.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        _atomic_write(manifest, dump_manifest(abi))
    if so.is_file():
        return so
    out_dir.mkdir(parents=True, exist_ok=True)
    # One nvcc run per key even when several processes (pytest-xdist
    # workers, `irgl-bench build -j`) ask for it at once: the others wait for
    # the lock and then find the library.
    with _key_lock(out_dir / f".irgl_{key}.lock"):
        if so.is_file():
            return so
        cu = out_dir / f"irgl_{key}.cu"
        _atomic_write(cu, text)
        tmp = out_dir / f".irgl_{key}.{os.getpid()}.{threading.get_ident()}.so"
        link = [
            f"-L{out_dir}",
            f"-lirgl_runtime_{library}",
            "-Xlinker",
            "-rpath,$ORIGIN",
        ]
        if library is None:
            _nvcc([nvcc, *args, "-o", str(tmp), str(cu)], cu, tmp)
        elif isinstance(source, EmittedProgram) and source.host_c_text:
            # C text in host code may use more of the runtime than the
            # library declares: where it does not compile so, it compiles
            # with the whole header (whose diagnostics are then the ones
            # that count)
            try:
                _link_with_library(
                    nvcc, args, text, flags, library, link, cu, tmp, out_dir
                )
            except CompileError:
                whole = [a for a in args if a not in _LIBRARY_DEFINES]
                _nvcc([nvcc, *whole, "-o", str(tmp), str(cu)], cu, tmp)
        else:
            _link_with_library(nvcc, args, text, flags, library, link, cu, tmp, out_dir)
        os.replace(tmp, so)
    return so


#: What a program linked with the runtime library is compiled with.
_LIBRARY_DEFINES = ("-DIRGL_RUNTIME_LIBRARY", "-DIRGL_HOST_C_TEXT")


def _library_thread(
    errors: list[BaseException],
    library: str,
    flags: Sequence[str],
    text: str,
    nvcc: str,
    out_dir: Path,
) -> threading.Thread:
    """A thread (not started) that builds the runtime library `library` for
    the program `text` (its index width), its exception appended to
    `errors`."""
    bits = _INDEX_BITS.search(text)
    return threading.Thread(
        target=_capture(
            errors,
            _runtime_library,
            library,
            [*flags, *extra_nvcc_flags()],
            int(bits.group(1)) if bits else 32,
            nvcc,
            out_dir,
        )
    )


def _link_with_library(
    nvcc: str,
    args: Sequence[str],
    text: str,
    flags: Sequence[str],
    library: str,
    link: Sequence[str],
    cu: Path,
    tmp: Path,
    out_dir: Path,
) -> None:
    """Compile `cu` against the runtime's declarations into `tmp`, linked
    with the runtime library `library` (built beside it if missing): its
    device code and host code apart where it can (:func:`_build_apart`),
    else by one nvcc run."""
    if _DEVICE_CODE_APART in text and os.environ.get("IRGL_DEVICE_APART", "1") != "0":
        toolchain = _host_toolchain(nvcc, args)
        if toolchain is not None and _loads_libraries(toolchain.include):
            try:
                _build_apart(
                    nvcc, args, toolchain, flags, library, text, cu, tmp, out_dir
                )
                return
            except _HostPassFailed:
                pass  # nvcc compiles the whole program, as it would have
    if runtime_library_path(library, out_dir).is_file():
        # (the -l after the source: the linker keeps only libraries that
        # something before them needs)
        _nvcc([nvcc, *args, "-o", str(tmp), str(cu), *link], cu, tmp)
    else:
        # the program compiles while the runtime library (if not built
        # yet) compiles beside it; then one short link
        built: list[BaseException] = []
        runtime = _library_thread(built, library, flags, text, nvcc, out_dir)
        runtime.start()
        obj = tmp.with_suffix(".o")
        try:
            _nvcc([nvcc, *args, "-c", "-o", str(obj), str(cu)], cu, obj)
            runtime.join()
            if built:
                raise built[0]
            flags_only = [a for a in args if not a.startswith(("-I", "-D"))]
            _nvcc([nvcc, *flags_only, "-o", str(tmp), str(obj), *link], cu, tmp)
        finally:
            runtime.join()
            obj.unlink(missing_ok=True)


#: Marks an emitted program whose host code compiles without its device
#: code (the printer's `IRGL_HOST_ONLY` branch).
_DEVICE_CODE_APART = "\nIRGL_PROGRAM_DEVICE_CODE()\n"


@functools.lru_cache(maxsize=8)
def _loads_libraries(include: Path) -> bool:
    """Whether the CUDA runtime of `include` finds a loaded library's
    kernels (cudaLibraryGetKernelCount, cudaFuncGetName: CUDA 12.4 and
    later), which a program built apart needs."""
    try:
        header = (include / "cuda_runtime_api.h").read_text(errors="replace")
    except OSError:
        return False
    return all(f" {name}(" in header for name in _LIBRARY_API)


#: What the runtime's irgl::detail::library_kernel calls.
_LIBRARY_API = (
    "cudaLibraryLoadData",
    "cudaLibraryGetKernelCount",
    "cudaLibraryEnumerateKernels",
    "cudaFuncGetName",
)


class _HostPassFailed(Exception):
    """The host compiler did not compile a program's host code alone."""


def _build_apart(
    nvcc: str,
    args: Sequence[str],
    toolchain: _HostToolchain,
    flags: Sequence[str],
    library: str,
    text: str,
    cu: Path,
    tmp: Path,
    out_dir: Path,
) -> None:
    """Build `cu` (holding `text`) into `tmp` in two passes at once: nvcc
    compiles the device code into a fatbinary (no cudafe++, no host
    compiler), while the host compiler compiles the host code alone
    (``-DIRGL_HOST_ONLY``: the kernels are `irgl::KernelRef`s, loaded from
    the fatbinary at their first use);
    then one link puts the fatbinary beside the host code (an assembler
    ``.incbin``). BFS builds in about 1.7 instead of 2.2 s on two cores.
    Host code that does not compile against the runtime library's
    declarations (C text using more of the runtime) compiles with the whole
    runtime header instead, and the program does not link the library.
    Raises :class:`_HostPassFailed` where the host compiler rejects the host
    code either way (C text for nvcc), :class:`CompileError` where nvcc
    rejects the device code."""
    fatbin = tmp.with_suffix(".fatbin")
    obj = tmp.with_suffix(".host.o")
    blob = tmp.with_suffix(".device.S")
    device = [a for a in args if a != "-shared"]
    errors: list[BaseException] = []
    threads = [
        threading.Thread(
            target=_capture(
                errors,
                _nvcc,
                [nvcc, *device, "--fatbin", "-o", str(fatbin), str(cu)],
                cu,
                fatbin,
            )
        )
    ]
    if not runtime_library_path(library, out_dir).is_file():
        threads.append(_library_thread(errors, library, flags, text, nvcc, out_dir))
    for thread in threads:
        thread.start()
    host = dataclasses.replace(toolchain, flags=(*toolchain.flags, "-DIRGL_HOST_ONLY"))
    linked = [f"-L{out_dir}", f"-lirgl_runtime_{library}", "-Wl,-rpath,$ORIGIN"]
    try:
        try:
            _nvcc(host.compile(cu, obj, shared=False), cu, obj)
        except CompileError:
            # C text in host code may use more of the runtime than the
            # library declares: the host code with the whole runtime header,
            # still beside the device pass (C text for nvcc fails again)
            whole = [f for f in host.flags if f not in _LIBRARY_DEFINES]
            try:
                _nvcc(
                    dataclasses.replace(host, flags=tuple(whole)).compile(
                        cu, obj, shared=False
                    ),
                    cu,
                    obj,
                )
            except CompileError as e:
                raise _HostPassFailed(str(e)) from None
            linked = []
        finally:
            for thread in threads:
                thread.join()
        if errors:
            raise errors[0]
        path = str(fatbin.resolve()).replace("\\", "\\\\").replace('"', '\\"')
        blob.write_text(
            "// the program's device code, loaded by its host code\n"
            ".section .rodata\n.balign 64\n"
            ".globl irgl_program_fatbin\n.hidden irgl_program_fatbin\n"
            f'irgl_program_fatbin:\n.incbin "{path}"\n'
            '.section .note.GNU-stack,"",@progbits\n'
        )
        link = [
            toolchain.compiler,
            "-shared",
            "-o",
            str(tmp),
            str(obj),
            str(blob),
            *linked,
            *toolchain.runtime(),
        ]
        _nvcc(link, cu, tmp)
    finally:
        for part in (fatbin, obj, blob):
            part.unlink(missing_ok=True)


#: nvcc executables that rejected ``--split-compile`` (before CUDA 12).
_NO_SPLIT_COMPILE: set[str] = set()


def _nvcc(cmd: list[str], source: Path, output: Path) -> None:
    """Run nvcc (or the host compiler); raise :class:`CompileError` with its
    output if it fails (removing a partial `output`). An nvcc that does not know
    ``--split-compile=...`` runs again without it (and is not given it
    again)."""
    split = [a for a in cmd if a.startswith("--split-compile")]
    if split and cmd[0] in _NO_SPLIT_COMPILE:
        cmd = [a for a in cmd if a not in split]
        split = []
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise CompileError(
            f"nvcc not found (tried {cmd[0]!r}); is the CUDA toolkit on PATH?"
        ) from None
    if proc.returncode != 0 and split and "split-compile" in proc.stderr:
        _NO_SPLIT_COMPILE.add(cmd[0])
        _nvcc(cmd, source, output)
        return
    if proc.returncode != 0:
        output.unlink(missing_ok=True)
        raise CompileError(
            f"{Path(cmd[0]).name} failed (exit {proc.returncode}) on {source}:\n"
            + (proc.stderr.strip() or proc.stdout.strip())
        )


def _capture(
    errors: list[BaseException], fn: Callable[..., object], *args: object
) -> Callable[[], None]:
    """`fn(*args)` for a thread, its exception appended to `errors`."""

    def run() -> None:
        try:
            fn(*args)
        except BaseException as e:  # re-raised by the thread that joins
            errors.append(e)

    return run


def runtime_library_path(key: str, cache: str | os.PathLike[str] | None = None) -> Path:
    """The shared library of the runtime's host code with key ``key``
    (``libirgl_runtime_<key>.so`` beside the programs that link it)."""
    out_dir = Path(cache) if cache is not None else cache_dir()
    return out_dir / f"libirgl_runtime_{key}.so"


def _runtime_library(
    key: str, flags: Sequence[str], index_bits: int, nvcc: str, out_dir: Path
) -> Path:
    """Build (once per key, under a lock) the runtime library: the header
    compiled with ``IRGL_RUNTIME_LIBRARY_BUILD``, the program's flags and
    index width. Programs find it through their ``$ORIGIN`` run path."""
    lib = runtime_library_path(key, out_dir)
    if lib.is_file():
        return lib
    with _key_lock(out_dir / f".libirgl_runtime_{key}.lock"):
        if lib.is_file():
            return lib
        cu = out_dir / f"libirgl_runtime_{key}.cu"
        _atomic_write(
            cu,
            "// The runtime's host code, linked by the programs beside it.\n"
            + f"#define IRGL_INDEX_BITS {index_bits}\n"
            + "#define IRGL_RUNTIME_LIBRARY_BUILD 1\n"
            + f'#include "{RUNTIME_HEADER}"\n',
        )
        tmp = (
            out_dir / f".libirgl_runtime_{key}.{os.getpid()}.{threading.get_ident()}.so"
        )
        host = _host_compile_command(nvcc, flags, cu, tmp)
        try:
            if host is None:
                raise CompileError("no host compiler or static CUDA runtime")
            _nvcc(host, cu, tmp)
        except CompileError:  # nvcc builds it, as it builds the programs
            nvcc_cmd = [nvcc, *flags, f"-I{runtime_include_dir()}", "-o", str(tmp)]
            _nvcc([*nvcc_cmd, str(cu)], cu, tmp)
        os.replace(tmp, lib)
    return lib


@functools.lru_cache(maxsize=8)
def _cuda_root(nvcc: str) -> Path | None:
    """The CUDA toolkit ``nvcc`` runs from, as its dry run names it (``_HERE_``,
    the toolkit's ``bin``; an nvcc on PATH may be a script calling it), None
    where it does not say (not found, or not nvcc)."""
    try:
        proc = subprocess.run(
            [nvcc, "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    here = re.search(r"^#\$ _HERE_=(.+)$", proc.stdout + proc.stderr, re.MULTILINE)
    return Path(here.group(1).strip()).parent if here else None


def _first(paths: Sequence[Path]) -> Path | None:
    """The first of ``paths`` that exists, None where none does."""
    return next((p for p in paths if p.exists()), None)


#: nvcc options whose value is the next argument and is not the host
#: compiler's (the tools' own options, targets, output names).
_NVCC_VALUE_OPTIONS = frozenset(
    {
        *(
            f"-X{tool}"
            for tool in ("cicc", "ptxas", "nvlink", "fatbinary", "cudafe", "archive")
        ),
        *(f"--{tool}-options" for tool in ("ptxas", "nvlink", "fatbinary", "archive")),
        "-Xlinker",
        "--linker-options",
        "-arch",
        "--gpu-architecture",
        "-code",
        "--gpu-code",
        "-gencode",
        "--generate-code",
        "-o",
        "--output-file",
        "-x",
        "--x",
    }
)


@dataclass(frozen=True)
class _HostToolchain:
    """What builds host code without nvcc: the host C++ compiler, its flags
    from the program's, CUDA's headers and its static runtime."""

    compiler: str
    flags: tuple[str, ...]
    include: Path
    cudart: Path

    def compile(self, source: Path, output: Path, *, shared: bool) -> list[str]:
        """The command compiling C++ `source` into a shared library
        (`shared`, linked with CUDA's static runtime) or an object file."""
        command = [
            self.compiler,
            "-x",
            "c++",
            "-std=c++17",
            "-fPIC",
            "-shared" if shared else "-c",
            *self.flags,
            f"-I{self.include}",
            f"-I{runtime_include_dir()}",
            "-o",
            str(output),
            str(source),
        ]
        return [*command, *self.runtime()] if shared else command

    def runtime(self) -> list[str]:
        """The link arguments of CUDA's static runtime."""
        return ["-x", "none", str(self.cudart), "-ldl", "-lrt", "-lpthread"]


def _host_toolchain(nvcc: str, flags: Sequence[str]) -> _HostToolchain | None:
    """The host compiler nvcc would use (``-ccbin``, else ``$IRGL_CXX``,
    else ``$NVCC_CCBIN``, else ``g++``), CUDA's headers and its static
    runtime from nvcc's toolkit, and of the program's flags those the host
    compiler takes (``-D``, ``-U``, ``-I``, ``-O``, ``-Xcompiler``). None
    where the compiler, the headers or the static runtime is missing."""
    root = _cuda_root(nvcc)
    if root is None:
        return None
    targets = sorted(root.glob("targets/*"))
    include = _first(
        [root / "include" / "cuda_runtime.h"]
        + [t / "include" / "cuda_runtime.h" for t in targets]
    )
    cudart = _first(
        [root / d / "libcudart_static.a" for d in ("lib64", "lib")]
        + [t / "lib" / "libcudart_static.a" for t in targets]
    )
    compiler = os.environ.get("IRGL_CXX") or os.environ.get("NVCC_CCBIN") or "g++"
    host_flags: list[str] = []
    args = iter(flags)
    for flag in args:  # an option's value is taken with it
        if flag in ("-ccbin", "--compiler-bindir"):
            compiler = next(args, compiler)
        elif flag in ("-Xcompiler", "--compiler-options"):
            host_flags += next(args, "").split(",")
        elif flag in _NVCC_VALUE_OPTIONS:
            next(args, None)  # (`-Xcicc -O2` is cicc's, not the host's)
        elif flag.startswith(("-D", "-U", "-I", "-O")):
            host_flags.append(flag)
    if include is None or cudart is None or shutil.which(compiler) is None:
        return None
    return _HostToolchain(compiler, tuple(host_flags), include.parent, cudart)


def _host_compile_command(
    nvcc: str, flags: Sequence[str], source: Path, output: Path
) -> list[str] | None:
    """The command that builds the runtime library with the host C++
    compiler (the library holds no device code, so neither cudafe++ nor cicc
    runs: 0.9 instead of 1.9 s on two cores; see :func:`_host_toolchain`).
    None where the toolchain is missing (nvcc builds the library then, as it
    does where the host compiler fails)."""
    toolchain = _host_toolchain(nvcc, flags)
    return toolchain.compile(source, output, shared=True) if toolchain else None


@contextmanager
def _key_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if absent) for the
    block: processes and threads building the same cache key take turns.
    Where ``fcntl`` is missing (not POSIX) the block runs unlocked; the
    library is still published by an atomic rename."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - CUDA hosts here are POSIX
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, so a
    reader (another process's nvcc) never sees it half written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


#: The most nodes or edges a 32-bit `irgl_index` build takes (the runtime
#: refuses a graph with more: irgl_graph_create).
INDEX32_LIMIT = 2**31 - 2


#: ``IRGL_INDEX_BITS=64`` builds with 64-bit indices whatever the graph's size.
INDEX_BITS_ENV = "IRGL_INDEX_BITS"


def target_for(num_nodes: int, num_edges: int) -> str:
    """The cuda target for a graph of this size: 64-bit `irgl_index` where
    32 bits cannot number its nodes or edges (or ``$IRGL_INDEX_BITS`` is 64),
    else the default. Raises :class:`UsageError` for another value there."""
    bits = os.environ.get(INDEX_BITS_ENV, "").strip()
    if bits not in ("", "32", "64"):
        raise UsageError(f"${INDEX_BITS_ENV} must be 32 or 64, not {bits!r}")
    if bits == "64" or max(num_nodes, num_edges) > INDEX32_LIMIT:
        return "cuda{index-bitwidth=64}"
    return DEFAULT_TARGET


def build(
    mlir: str | os.PathLike[str],
    pipeline: str = DEFAULT_PIPELINE,
    target: str = DEFAULT_TARGET,
    *,
    flags: Sequence[str] = DEFAULT_NVCC_FLAGS,
    nvcc: str = "nvcc",
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """Lower, emit and compile an IrGL MLIR file; the cached library's path
    (its ABI manifest beside it). See :func:`compile_cuda` for the rest."""
    program = emit_program(mlir, pipeline, target)
    return compile_cuda(program, flags=flags, nvcc=nvcc, cache=cache)
