"""Where ``irgl-bench run`` runs a program: the ``--backend`` choices.

A :class:`Backend` says whether it can run here (checked before anything is
compiled), adds its own command-line options, and loads an app as a program
that :func:`irgl_runner.apps.execute` can run. The built-in backend is
``cuda`` (lower, emit, nvcc, run on the GPU); another module adds one with
:func:`register_backend` and by being listed in :data:`PLUGIN_MODULES`.
"""

from __future__ import annotations

import argparse
import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .apps import AppSpec, ProgramLike

__all__ = [
    "BACKENDS",
    "Backend",
    "DEFAULT_BACKEND",
    "PLUGIN_MODULES",
    "RunnableProgram",
    "cuda_unavailable",
    "load_plugins",
    "register_backend",
]


class RunnableProgram(ProgramLike, Protocol):
    """A loaded program as ``irgl-bench run`` uses it."""

    def device_name(self) -> str:
        """What ran it (the JSON line's ``gpu`` field)."""
        ...


@dataclass(frozen=True)
class Backend:
    """One ``--backend`` choice."""

    name: str
    help: str
    unavailable: Callable[[], str | None]
    """Why it cannot run on this machine (``None``: it can); checked first."""
    load: Callable[[AppSpec, argparse.Namespace], RunnableProgram]
    """Build and load ``app`` with the parsed ``irgl-bench run`` options."""
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    """Adds this backend's own options to ``irgl-bench run`` (default None)."""
    options: tuple[str, ...] = ()
    """The ``dest`` names of those options: giving one with another backend is
    a usage error."""
    warmup: int = 1
    """Untimed runs before the timed ones."""
    failures: tuple[type[Exception], ...] = ()
    """What a failing run raises besides :class:`IrglError` (reported as a
    failed run, not a traceback)."""
    describe: Callable[[argparse.Namespace], dict[str, object]] | None = None
    """Extra fields of the JSON line (e.g. the schedule)."""
    lowers: bool = True
    """Whether it lowers the program with ``-p/--pipeline`` (giving ``-p`` to
    a backend that does not is a usage error)."""
    simulates_ranks: bool = False
    """Whether its ``load`` runs ``--gpus N`` itself, on N simulated ranks in
    this process (else ``--gpus`` starts one process a GPU)."""


#: The backends by name, in the order ``--help`` lists them.
BACKENDS: dict[str, Backend] = {}

DEFAULT_BACKEND = "cuda"

#: Modules imported (once) before the command line is parsed; each registers
#: its backends with :func:`register_backend` when imported.
PLUGIN_MODULES: tuple[str, ...] = ("irgl_interpreter.backend",)


def register_backend(backend: Backend) -> None:
    """Make ``backend`` a ``--backend`` choice (replacing one of that name)."""
    BACKENDS[backend.name] = backend


def load_plugins() -> None:
    """Import :data:`PLUGIN_MODULES` (they register their backends)."""
    from importlib import import_module

    for module in PLUGIN_MODULES:
        import_module(module)


# ---------------------------------------------------------------------- cuda

_CUDA_SUCCESS = 0


def cuda_unavailable() -> str | None:
    """Why no CUDA GPU can be used here (no driver, driver error, no device);
    ``None`` when one can. Asks the driver library directly (no compiling)."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return (
            "no NVIDIA GPU driver on this machine (libcuda.so.1 not found); "
            "the cuda backend needs an NVIDIA GPU"
        )
    rc = driver.cuInit(0)
    if rc != _CUDA_SUCCESS:
        name = ctypes.c_char_p()
        driver.cuGetErrorName(rc, ctypes.byref(name))
        what = name.value.decode() if name.value else f"error {rc}"
        return f"the CUDA driver cannot start ({what}); is an NVIDIA GPU present?"
    count = ctypes.c_int(0)
    rc = driver.cuDeviceGetCount(ctypes.byref(count))
    if rc != _CUDA_SUCCESS or count.value == 0:
        return "the CUDA driver finds no GPU"
    return None


def _cuda_load(app: AppSpec, args: argparse.Namespace) -> RunnableProgram:
    from .api import Program
    from .build import build, prefetch_runtime_library

    if "distribute" not in args.pipeline:  # (programs for several GPUs link none)
        prefetch_runtime_library()  # nvcc builds it while the program lowers
    return Program(build(app.mlir, pipeline=args.pipeline))


register_backend(
    Backend(
        name="cuda",
        help="lower to CUDA, compile with nvcc, run on the GPU",
        unavailable=cuda_unavailable,
        load=_cuda_load,
    )
)
