"""The ablation of the throughput optimizations: the ``lower-irgl`` options of
each configuration of ``irgl-bench all --ablation`` and ``irgl-bench build
--ablation``.

Each optimization is one :class:`Optimization` in :data:`OPTIMIZATIONS` (the
``lower-irgl`` options that turn it on and off; adding one to the ablation is
one line there). The configurations, in the order of the table's columns:

- ``none``: every optimization off;
- one per optimization (named after it): that one on (with those it
  ``requires``, and those they require in turn, e.g. ``warp_gather`` with
  ``nested``, ``retry_drain_blocks`` with ``retry_drain`` and ``outline``),
  every other off;
- ``all``: every optimization on;
- ``default``: the pipeline as given (plain ``lower-irgl``: its defaults).

Options of the given pipeline that no optimization sets (``block_size``,
``ticket_locks``, ...) are kept in every configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.utils.arg_spec import ArgSpec, ParameterType, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from lowering.lower_irgl import LowerIrgl

from .errors import UsageError

__all__ = [
    "ALL",
    "DEFAULT",
    "NONE",
    "OPTIMIZATIONS",
    "Configuration",
    "Optimization",
    "configurations",
    "select_configurations",
]

NONE = "none"
ALL = "all"
DEFAULT = "default"


@dataclass(frozen=True)
class Optimization:
    """A throughput optimization: the ``lower-irgl`` options (name, value)
    that turn it on, and those that turn it off."""

    name: str
    on: tuple[tuple[str, ParameterType], ...]
    off: tuple[tuple[str, ParameterType], ...]
    requires: tuple[str, ...] = ()
    """Optimizations it refines, on in its own configuration too (e.g. the
    warp gather changes nested parallelism's thread phase)."""

    @classmethod
    def flag(
        cls, option: str, name: str | None = None, requires: tuple[str, ...] = ()
    ) -> Optimization:
        """The optimization of one boolean ``lower-irgl`` option (``name``
        defaults to the option's)."""
        return cls(name or option, ((option, True),), ((option, False),), requires)

    @property
    def options(self) -> set[str]:
        """Every option it sets, on or off."""
        return {k for k, _ in self.on} | {k for k, _ in self.off}


#: The optimizations of the ablation, in column order. A boolean option is
#: ``Optimization.flag("option")``; any other is spelled out, e.g.
#: ``Optimization("backoff", (("retry_backoff", 64),), (("retry_backoff", 0),))``.
OPTIMIZATIONS: tuple[Optimization, ...] = (
    Optimization.flag("outline"),
    Optimization(
        "small_worklist",
        (("small_worklist", 256),),
        (("small_worklist", 0),),
        requires=("outline",),
    ),
    Optimization.flag("nested_parallelism", "nested"),
    Optimization.flag("warp_gather", requires=("nested",)),
    Optimization(
        "edge_unroll",
        (("edge_unroll", 4),),
        (("edge_unroll", 1),),
        requires=("nested",),
    ),
    Optimization(
        "edge_interleave",
        (("edge_interleave", 4),),
        (("edge_interleave", 1),),
        requires=("nested",),
    ),
    Optimization.flag("warp_spread"),
    Optimization.flag("block_push"),
    Optimization.flag("block_push_edges"),
    Optimization.flag("block_reduce"),
    Optimization.flag("retry_backoff"),
    Optimization.flag("retry_drain", requires=("outline",)),
    Optimization(
        "retry_drain_blocks",
        (("retry_drain_blocks", 32),),
        (("retry_drain_blocks", 1),),
        requires=("retry_drain",),
    ),
    Optimization.flag("hashed_priority"),
    Optimization.flag("sized_priority"),
    Optimization.flag("stamp_test"),
)


@dataclass(frozen=True)
class Configuration:
    """One column of the ablation: its name and the pipeline it is built with."""

    name: str
    pipeline: str


def _base_spec(pipeline: str, optimizations: Sequence[Optimization]) -> ArgSpec:
    """The one ``lower-irgl`` pass of ``pipeline`` (a usage error otherwise,
    or if it sets an option the ablation sets)."""
    try:
        specs = [s.normalize_parameter_names() for s in parse_pipeline(pipeline)]
    except ArgSpecParseError as e:
        raise UsageError(f"bad pass pipeline {pipeline!r}: {e}") from None
    if len(specs) != 1 or specs[0].name != LowerIrgl.name:
        raise UsageError(
            f"--ablation needs a pipeline of one {LowerIrgl.name} pass, "
            f"got {pipeline!r}"
        )
    (spec,) = specs
    ablated = set().union(*(o.options for o in optimizations))
    clash = sorted(ablated & set(spec.parameters))
    if clash:
        raise UsageError(
            f"--ablation sets {', '.join(clash)} itself; remove it from the "
            f"pipeline {pipeline!r}"
        )
    return spec


def _pipeline(
    base: ArgSpec, settings: Sequence[tuple[str, ParameterType]], name: str
) -> str:
    """``base`` with ``settings`` added, as pipeline text (checked against
    :class:`LowerIrgl`'s options)."""
    params = dict(base.parameters)
    for option, value in settings:
        params[option] = (value,)
    spec = ArgSpec(base.name, params)
    try:
        LowerIrgl.from_pass_spec(spec)
    except (ValueError, TypeError) as e:
        raise UsageError(f"ablation configuration {name!r}: {spec}: {e}") from None
    return str(spec)


def configurations(
    pipeline: str = LowerIrgl.name,
    optimizations: Sequence[Optimization] = OPTIMIZATIONS,
) -> list[Configuration]:
    """``none``, each optimization alone, ``all`` and ``default``, built on
    ``pipeline`` (one ``lower-irgl`` pass)."""
    base = _base_spec(pipeline, optimizations)
    names = [o.name for o in optimizations]
    reserved = {NONE, ALL, DEFAULT} & set(names)
    if reserved or len(set(names)) != len(names):
        raise UsageError(f"bad optimization names {names}")

    def settings(enabled: set[str]) -> list[tuple[str, ParameterType]]:
        out: list[tuple[str, ParameterType]] = []
        for o in optimizations:
            out += o.on if o.name in enabled else o.off
        return out

    unknown = {r for o in optimizations for r in o.requires} - set(names)
    if unknown:
        raise UsageError(f"optimizations require unknown {sorted(unknown)}")
    by_name = {o.name: o for o in optimizations}

    def with_required(o: Optimization) -> set[str]:
        enabled, todo = {o.name}, list(o.requires)
        while todo:
            name = todo.pop()
            if name not in enabled:
                enabled.add(name)
                todo += by_name[name].requires
        return enabled

    configs = [Configuration(NONE, _pipeline(base, settings(set()), NONE))]
    for o in optimizations:
        alone = _pipeline(base, settings(with_required(o)), o.name)
        configs.append(Configuration(o.name, alone))
    configs.append(Configuration(ALL, _pipeline(base, settings(set(names)), ALL)))
    configs.append(Configuration(DEFAULT, _pipeline(base, [], DEFAULT)))
    return configs


def select_configurations(
    configs: Sequence[Configuration], names: Sequence[str]
) -> list[Configuration]:
    """The configurations named in ``names`` (all of them when empty), in
    column order; an unknown name is a usage error."""
    if not names:
        return list(configs)
    known = [c.name for c in configs]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(
            f"unknown configuration(s) {', '.join(unknown)} (known: {', '.join(known)})"
        )
    return [c for c in configs if c.name in names]
