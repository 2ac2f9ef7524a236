"""The `xdsl.universe` plugin: makes xdsl-opt (and irgl-opt) know the irgl
irgl_rt and irgl_dist dialects, the lowering passes and the `cuda` target."""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.universe import Universe
from xdsl.utils.target import Target

from lowering.registry import PASS_FACTORIES


def _irgl() -> Dialect:
    from irgl_dialect.dialect import Irgl

    return Irgl


def _irgl_rt() -> Dialect:
    from irgl_dialect.runtime import IrglRuntime

    return IrglRuntime


def _irgl_dist() -> Dialect:
    from irgl_dialect.distributed import IrglDist

    return IrglDist


def _cuda() -> type[Target]:
    from cuda_emitter import get_cuda_target

    return get_cuda_target()


IRGL_UNIVERSE = Universe(
    all_dialects={"irgl": _irgl, "irgl_rt": _irgl_rt, "irgl_dist": _irgl_dist},
    all_passes=dict(PASS_FACTORIES),
    all_targets={"cuda": _cuda},
)
