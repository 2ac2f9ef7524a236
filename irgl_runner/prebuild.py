"""``irgl-bench build``: compile apps ahead of time into the program cache, on
a machine with nvcc and no GPU, so that the GPU machine only runs them::

    export IRGL_CACHE_DIR=$PWD/build/irgl-cache
    irgl-bench build --ablation              # every app x configuration
    irgl-bench build --ablation --check      # there: is everything cached?

A library's cache key is its content (:func:`irgl_runner.build.library_path`:
the CUDA text, the nvcc flags and the runtime headers, not their paths), so
a cache directory built on one machine is found by ``irgl-bench run``/``all``
on another with ``IRGL_CACHE_DIR`` pointing at the carried copy, wherever the
checkout is (same flags, hence ``-arch=sm_90``). Emitting is in process and
fast; only nvcc is skipped. :data:`MANIFEST_NAME` in the cache lists what
was built (app, configuration, pipeline, library).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from cuda_emitter.host_abi import manifest_path

from .build import (
    DEFAULT_NVCC_FLAGS,
    EmittedProgram,
    compile_cuda,
    emit_program,
    library_path,
    prefetch_runtime_library,
)
from .errors import CompileError

__all__ = [
    "MANIFEST_NAME",
    "BuildItem",
    "BuildOutcome",
    "build_all",
    "nvcc_version",
    "read_manifest",
    "write_manifest",
]

#: The list of prebuilt programs in the cache directory.
MANIFEST_NAME = "irgl-builds.json"


@dataclass(frozen=True)
class BuildItem:
    """One app under one configuration (its pipeline)."""

    app: str
    config: str
    pipeline: str
    mlir: Path


@dataclass
class BuildOutcome:
    """What became of a :class:`BuildItem`.

    ``status``: ``"compiled"`` (nvcc ran), ``"cached"`` (the library was
    there), ``"missing"`` (``check`` only: it is not there) or
    ``"error: <message>"``.
    """

    item: BuildItem
    status: str
    library: Path | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the library is in the cache."""
        return self.status in ("compiled", "cached")


def _one_line(text: str, limit: int = 400) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def build_all(
    items: Sequence[BuildItem],
    cache: Path,
    jobs: int = 1,
    nvcc: str = "nvcc",
    check: bool = False,
    progress: TextIO | None = None,
) -> list[BuildOutcome]:
    """Emit every item and compile each distinct library that is not in
    ``cache`` yet (``jobs`` nvcc runs at a time), each as soon as it is
    emitted: the emitter (Python, one core) overlaps the first nvcc runs.
    With ``check``, only say which are there (nvcc is not run). One outcome
    per item, in order."""
    out = progress
    if not check and any("distribute" not in item.pipeline for item in items):
        # nvcc builds the library the programs link while the first emits
        prefetch_runtime_library(nvcc=nvcc, cache=cache)
    emitted: list[EmittedProgram | None] = []
    outcomes: list[BuildOutcome] = []

    def compile_one(k: int) -> tuple[str, float]:
        start = time.monotonic()
        program, lib = emitted[k], outcomes[k].library
        assert program is not None and lib is not None
        was_there = lib.is_file()  # then only its ABI manifest is written
        try:
            compile_cuda(program, nvcc=nvcc, cache=cache)
        except CompileError as e:
            return "error: " + _one_line(str(e)), time.monotonic() - start
        return ("cached" if was_there else "compiled"), time.monotonic() - start

    # one nvcc run per distinct library not there yet (configurations often
    # give the same program): the items of each, the first one compiled
    todo: dict[Path, list[int]] = {}
    futures: dict[Future[tuple[str, float]], list[int]] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for k, item in enumerate(items):
            try:
                program = emit_program(item.mlir, item.pipeline)
            except CompileError as e:
                emitted.append(None)
                outcomes.append(BuildOutcome(item, "error: " + _one_line(str(e))))
                continue
            emitted.append(program)
            lib = library_path(program, DEFAULT_NVCC_FLAGS, cache=cache)
            there = lib.is_file() and manifest_path(lib).is_file()
            outcomes.append(
                BuildOutcome(item, "cached" if there else "missing", library=lib)
            )
            if check or there:
                continue
            if lib in todo:
                todo[lib].append(k)
            else:
                todo[lib] = [k]
                futures[pool.submit(compile_one, k)] = todo[lib]
        for future in as_completed(futures):
            status, seconds = future.result()
            ks = futures[future]
            for n, k in enumerate(ks):
                o = outcomes[k]
                o.status = "cached" if n and status == "compiled" else status
                o.seconds = 0.0 if n else seconds
                if not o.ok:
                    o.library = None
            if out is not None:
                names = ", ".join(
                    f"{outcomes[k].item.app} [{outcomes[k].item.config}]" for k in ks
                )
                out.write(f"irgl-bench build: {names}: {status} ({seconds:.1f} s)\n")
                out.flush()
    return outcomes


def nvcc_version(nvcc: str = "nvcc") -> str | None:
    """The last line of ``nvcc --version`` (``None`` if it does not run)."""
    try:
        proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    except OSError:
        return None
    lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    return lines[-1] if proc.returncode == 0 and lines else None


def read_manifest(cache: Path) -> dict:
    """The cache's :data:`MANIFEST_NAME` (an empty one if absent or unreadable)."""
    try:
        doc = json.loads((cache / MANIFEST_NAME).read_text())
    except (OSError, ValueError):
        return {"programs": []}
    if not isinstance(doc, dict) or not isinstance(doc.get("programs"), list):
        return {"programs": []}
    return doc


def write_manifest(
    cache: Path, outcomes: Sequence[BuildOutcome], nvcc: str | None
) -> Path:
    """Add the built items to the cache's manifest (replacing earlier entries
    of the same app and pipeline); its path. Library names are relative to
    the cache, so the directory can move."""
    doc = read_manifest(cache)
    fresh = {(o.item.app, o.item.pipeline): o for o in outcomes if o.ok}
    kept = [
        e
        for e in doc["programs"]
        if isinstance(e, dict) and (e.get("app"), e.get("pipeline")) not in fresh
    ]
    for o in fresh.values():
        assert o.library is not None
        kept.append(
            {
                "app": o.item.app,
                "config": o.item.config,
                "pipeline": o.item.pipeline,
                "library": o.library.name,
            }
        )
    doc = {
        "updated": datetime.now().astimezone().isoformat(timespec="seconds"),
        "nvcc": nvcc,
        "nvcc_flags": list(DEFAULT_NVCC_FLAGS),
        "programs": kept,
    }
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / MANIFEST_NAME
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, path)
    return path
