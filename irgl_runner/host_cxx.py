"""Build C/C++ text into a shared library with the host C++ compiler.

Used where C helpers of a program run on the CPU: DMR's geometry in the
CPU driver (`benchmarks/dmr/cpu.py`) and in the interpreter
(`irgl_interpreter/dmr.py`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


class HostBuildError(RuntimeError):
    """No host C++ compiler, or it rejected the source."""


def compiler() -> str | None:
    """The host C++ compiler: ``$CXX``, ``g++`` or ``c++``; None if absent."""
    for name in (os.environ.get("CXX"), "g++", "c++"):
        if name and shutil.which(name):
            return name
    return None


def build_shared_library(source: str, stem: str) -> ctypes.CDLL:
    """Compile ``source`` (C++17, -O2) into ``lib<stem>.so`` in a temporary
    folder keyed by the source's hash and load it."""
    cxx = compiler()
    if cxx is None:
        raise HostBuildError("no host C++ compiler (set $CXX)")
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"irgl_{stem}_{key}_{os.getpid()}"
    out.mkdir(exist_ok=True)
    cpp, so = out / f"{stem}.cpp", out / f"lib{stem}.so"
    cpp.write_text(source)
    proc = subprocess.run(
        [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-o", str(so), str(cpp)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise HostBuildError(f"{cxx} failed on {cpp}:\n{proc.stderr}")
    return ctypes.CDLL(str(so))
