"""The CUDA emitter: prints lowered IrGL IR as one CUDA C++ file.

`CudaTarget` (`-t cuda`) is registered by the `irgl` universe through
`get_cuda_target`; `CudaPrinter` (in `cuda_emitter.printer`) does the work.
The runtime the emitted code calls is `cuda_emitter/runtime/irgl_runtime.cuh`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.utils.target import Target


def get_cuda_target() -> type[Target]:
    """The `cuda` target class (imported lazily, for fast tool start-up)."""
    from cuda_emitter.target import CudaTarget

    return CudaTarget


__all__ = ["get_cuda_target"]
