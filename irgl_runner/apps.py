"""How a benchmark application is described and run (the ``AppSpec`` protocol).

Each benchmark lives in ``benchmarks/<name>/`` with ``<name>.mlir`` (the IrGL
program) and ``app.py``, which defines a module-level ``APP: AppSpec``::

    from pathlib import Path

    from irgl_runner.apps import AppSpec, ArraySpec, RunContext
    from irgl_runner.reference import INF, bfs_levels, compare_exact


    def init_level(ctx: RunContext) -> np.ndarray:
        level = np.full(ctx.graph.num_nodes, INF, dtype=np.int32)
        level[ctx.source] = 0
        return level


    APP = AppSpec(
        name="bfs",
        mlir=Path(__file__).with_name("bfs.mlir"),
        host_fn="main",  # @main(%g: !graph, %level: memref<?xi32>, %src: index)
        outputs=[ArraySpec("level", "int32", init=init_level)],
        args=lambda ctx: [ctx.device_graph, ctx.arrays["level"], ctx.source],
        check=lambda ctx: compare_exact(
            "level", ctx.outputs["level"], bfs_levels(ctx.graph, ctx.source)
        ),
    )

What ``irgl-bench run APP`` does with it (see :func:`execute`):

1. loads the graph (``symmetrize``/``weighted`` say how) and picks the source;
2. lowers ``mlir`` to CUDA, compiles and loads it, uploads the graph, and
   builds ``ctx.input = load_input(ctx)`` if the app has a ``load_input``
   (an input that is not a graph, e.g. the mesh of DMR);
3. allocates every :class:`ArraySpec` in ``outputs`` on the device;
4. one warm-up run and ``reps`` timed runs; before each, every array is reset
   from its ``init`` (not timed), then ``args(ctx)`` builds the arguments of
   ``irgl_entry_<host_fn>`` (whose parameter kinds come from the program's
   ABI) and the call is timed up to device synchronization;
5. copies back the arrays with ``read_back=True`` into ``ctx.outputs`` (and the
   host function's result, if it has one, into ``ctx.result``);
6. calls ``check(ctx)``: ``None`` means the output is right, a string says what
   is wrong (``irgl_runner.reference`` has references and ``compare_*``
   helpers that return exactly that);
7. ``--output FILE`` writes ``"node value"`` lines of ``output_array``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .graphs import CSRGraph, check_min_weight

__all__ = [
    "AppError",
    "AppSpec",
    "ArraySpec",
    "ProgramLike",
    "RunContext",
    "default_benchmarks_dir",
    "execute",
    "load_app",
]

#: Initial contents of a device array: a scalar fill value, or a function of the run.
InitValue = int | float | Callable[["RunContext"], np.ndarray]

#: Length of a device array: "nodes", "edges", "init" (the length of what a
#: callable ``init`` returns), a number, or a function of the graph.
Length = str | int | Callable[[CSRGraph], int]


class AppError(Exception):
    """A benchmark app that cannot be found, loaded or is malformed."""


@dataclass
class ArraySpec:
    """A device array (usually node data) the runner allocates for the app.

    - ``name``: key in ``ctx.arrays`` / ``ctx.outputs``.
    - ``dtype``: numpy dtype (``"int32"``, ``"float32"``, ...), matching the
      memref element type.
    - ``init``: a scalar fill value, or ``init(ctx) -> ndarray`` of the array's
      length; applied before every run (warm-up and timed ones).
    - ``length``: ``"nodes"`` (default), ``"edges"``, an int, ``f(graph)``,
      or ``"init"``: whatever length the callable ``init`` gives.
    - ``read_back``: copy it to ``ctx.outputs`` after the last run (set False
      for scratch arrays).
    - ``every_run``: apply ``init`` before every run (default); False: before
      the first only, for scratch that the program overwrites before reading
      it. Uploading such arrays again between timed runs only evicts the
      graph from the GPU's L2 (TC's four scratch arrays are 168 MB on the
      2048x2048 grid; the L2 holds 50 MB).
    """

    name: str
    dtype: str | np.dtype | type = "int32"
    init: InitValue = 0
    length: Length = "nodes"
    read_back: bool = True
    every_run: bool = True

    def size(self, graph: CSRGraph) -> int:
        """Number of elements for ``graph``."""
        if callable(self.length):
            return int(self.length(graph))
        if self.length == "nodes":
            return graph.num_nodes
        if self.length == "edges":
            return graph.num_edges
        if isinstance(self.length, int):
            return self.length
        if self.length == "init":
            raise AppError(
                f"array {self.name!r}: length 'init' is known only from init(ctx)"
            )
        raise AppError(f"array {self.name!r}: bad length {self.length!r}")

    def initial(self, ctx: RunContext) -> np.ndarray:
        """The initial host contents for this run."""
        if self.length == "init":
            if not callable(self.init):
                raise AppError(
                    f"array {self.name!r}: length 'init' needs a callable init"
                )
            values = np.asarray(self.init(ctx), dtype=self.dtype)
            if values.ndim != 1:
                raise AppError(
                    f"array {self.name!r}: init gave shape {values.shape}, expected 1-D"
                )
            return values
        n = self.size(ctx.graph)
        if callable(self.init):
            values = np.asarray(self.init(ctx), dtype=self.dtype)
            if values.shape != (n,):
                raise AppError(
                    f"array {self.name!r}: init gave shape {values.shape}, "
                    f"expected ({n},)"
                )
            return values
        return np.full(n, self.init, dtype=self.dtype)


#: Above this many edges a run on rank partitions is checked with the app's
#: ``validate`` (linear in the edges) instead of its reference ``check``.
REFERENCE_EDGES = 2**31


@dataclass
class AppSpec:
    """One benchmark application (``APP`` in ``benchmarks/<name>/app.py``).

    - ``name``: the app name (the directory name).
    - ``mlir``: path of the IrGL MLIR program.
    - ``host_fn``: host function to call (``irgl_entry_<host_fn>``).
    - ``outputs``: device arrays to allocate, initialize and read back.
    - ``args``: ``args(ctx) -> list`` of the host function's arguments, in
      order (``ctx.device_graph``, ``ctx.arrays[...]``, ``ctx.source``, ints,
      floats, bools).
    - ``check``: ``check(ctx) -> str | None`` against a CPU reference
      (``None`` = correct); ``None`` to skip checking.
    - The host function's parameter and result types come from the program
      (its ABI); a result lands in ``ctx.result``.
    - ``symmetrize`` / ``weighted``: how graph files are loaded for this app.
    - ``uses_source``: whether the app takes a source node (selects the default).
    - ``output_array``: which array ``--output`` writes (default: the first
      read-back array).
    - ``params``: free-form constants for ``args``/``check`` (e.g. tolerance).
    - ``load_input``: ``load_input(ctx) -> object`` builds an input that is not
      a graph (stored in ``ctx.input`` before the arrays are allocated, once
      per :func:`execute`); ``None`` for graph apps.
    - ``describe``: ``describe(ctx) -> dict`` facts about the output that
      ``irgl-bench run`` adds to its JSON record (e.g. DMR's final triangle
      count and smallest angle); ``None``: none.
    - ``distributed_mlir``: the program ``--gpus N`` runs when ``mlir``
      cannot be distributed (irgl-distribute says why), e.g. BFS's
      level-synchronous form; ``None``: ``mlir``.
    - ``source_work``: ``source_work(graph, source) -> {name: count}``, the
      reads of a search from ``source`` replayed on the CPU from the
      program's own decisions (BFS: top-down edges and bottom-up reads); the
      robustness benchmark judges per-source spreads by them besides the
      reached edges. ``None``: reached edges only.
    - ``validate``: ``validate(ctx) -> str | None``, a check in time linear
      in the edges without a reference run (:mod:`irgl_runner.validate`),
      for graphs too large for ``check``'s reference (runs on rank
      partitions use it above :data:`REFERENCE_EDGES` edges); ``None``: none.
    - ``min_weight``: the smallest edge weight the app accepts (``None``:
      any), with ``min_weight_reason`` saying why; :meth:`check_graph`
      rejects graphs below it (SSSP: 0, since a negative edge makes a negative
      cycle and the relaxation never ends).
    """

    name: str
    mlir: Path
    host_fn: str
    outputs: list[ArraySpec]
    args: Callable[[RunContext], Sequence[object]]
    check: Callable[[RunContext], str | None] | None = None
    symmetrize: bool = True
    weighted: bool = True
    uses_source: bool = True
    output_array: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    load_input: Callable[[RunContext], Any] | None = None
    describe: Callable[[RunContext], dict[str, Any]] | None = None
    min_weight: int | None = None
    min_weight_reason: str = ""
    distributed_mlir: Path | None = None
    source_work: Callable[[CSRGraph, int], Mapping[str, int]] | None = None
    validate: Callable[[RunContext], str | None] | None = None

    def __post_init__(self) -> None:
        self.mlir = Path(self.mlir)
        if self.distributed_mlir is not None:
            self.distributed_mlir = Path(self.distributed_mlir)
        names = [a.name for a in self.outputs]
        if len(set(names)) != len(names):
            raise AppError(f"app {self.name!r}: duplicate array names in {names}")
        if self.output_array is not None and self.output_array not in names:
            raise AppError(
                f"app {self.name!r}: output_array {self.output_array!r} "
                f"is not one of {names}"
            )

    def check_graph(self, graph: CSRGraph, source: str = "<in-memory graph>") -> None:
        """Raise :class:`~irgl_runner.graphs.GraphFormatError` if ``graph``
        has an edge lighter than ``min_weight``."""
        if self.min_weight is not None:
            reason = self.min_weight_reason or "it cannot handle lighter edges"
            check_min_weight(
                graph,
                self.min_weight,
                f"{self.name} needs edge weights >= {self.min_weight}: {reason}",
                source,
            )

    @property
    def primary_output(self) -> str | None:
        """Name of the array ``--output`` writes, if any."""
        if self.output_array is not None:
            return self.output_array
        return next((a.name for a in self.outputs if a.read_back), None)


@dataclass
class RunContext:
    """Everything ``args`` and ``check`` may look at for one benchmark run."""

    app: AppSpec
    graph: CSRGraph
    source: int = 0
    device_graph: Any = None  # api.DeviceGraph
    arrays: dict[str, Any] = field(default_factory=dict)  # name -> api.DeviceArray
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    result: Any = None
    times_ms: list[float] = field(default_factory=list)
    input: Any = None  # what app.load_input built (e.g. a mesh), if anything

    @property
    def params(self) -> dict[str, Any]:
        """The app's ``params``."""
        return self.app.params


class ProgramLike(Protocol):
    """What :func:`execute` needs from :class:`irgl_runner.api.Program`."""

    last_result: Any

    def upload_graph(self, graph: CSRGraph) -> Any: ...
    def alloc(self, n: int, dtype: Any) -> Any: ...
    def time_call(self, host_fn: str, *args: object) -> float: ...


def alloc_outputs(
    app: AppSpec, program: ProgramLike, ctx: RunContext
) -> dict[str, Any]:
    """Allocate ``ctx.arrays``, the app's outputs, on ``program`` (not yet
    filled); return each one's initial values."""
    initial = {spec.name: spec.initial(ctx) for spec in app.outputs}
    for spec in app.outputs:
        ctx.arrays[spec.name] = program.alloc(
            len(initial[spec.name]), np.dtype(spec.dtype)
        )
    return initial


def execute(
    app: AppSpec,
    program: ProgramLike,
    graph: CSRGraph,
    source: int = 0,
    reps: int = 5,
    warmup: int = 1,
    reinit_all: bool = False,
) -> RunContext:
    """Upload, run ``warmup`` + ``reps`` times (re-initializing arrays), read back.

    Only the host-function call is timed (see ``Program.time_call``); the
    times of the ``reps`` runs are in ``ctx.times_ms``.  Does not check.
    Arrays whose spec has ``every_run=False`` are initialized before the
    first run only, unless ``reinit_all``.  A graph the app rejects
    (:meth:`AppSpec.check_graph`) raises ``GraphFormatError`` first.
    """
    app.check_graph(graph)
    ctx = RunContext(app, graph, source)
    ctx.device_graph = program.upload_graph(graph)
    if app.load_input is not None:
        ctx.input = app.load_input(ctx)
    initial = alloc_outputs(app, program, ctx)
    again = {spec.name for spec in app.outputs if spec.every_run or reinit_all}
    for i in range(warmup + reps):
        for name, values in initial.items():
            if i == 0 or name in again:
                ctx.arrays[name].from_numpy(values)
        ms = program.time_call(app.host_fn, *app.args(ctx))
        if i >= warmup:
            ctx.times_ms.append(ms)
    ctx.result = program.last_result
    ctx.outputs = {
        s.name: ctx.arrays[s.name].to_numpy() for s in app.outputs if s.read_back
    }
    return ctx


def default_benchmarks_dir() -> Path:
    """The repository's ``benchmarks/`` directory."""
    return Path(__file__).resolve().parent.parent / "benchmarks"


def load_app(name: str, benchmarks_dir: str | Path | None = None) -> AppSpec:
    """Import ``<benchmarks_dir>/<name>/app.py`` and return its ``APP``."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise AppError(f"bad app name {name!r}")
    base = (
        Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
    )
    path = base / name / "app.py"
    if not path.is_file():
        known = sorted(p.parent.name for p in base.glob("*/app.py"))
        raise AppError(
            f"no app {name!r}: {path} does not exist "
            f"(known apps: {', '.join(known) or 'none'})"
        )
    mod_spec = importlib.util.spec_from_file_location(f"irgl_bench_app_{name}", path)
    if mod_spec is None or mod_spec.loader is None:
        raise AppError(f"cannot import {path}")
    module = importlib.util.module_from_spec(mod_spec)
    # registered while it runs, as a normal import is (dataclasses need it)
    previous = sys.modules.get(mod_spec.name)
    sys.modules[mod_spec.name] = module
    try:
        mod_spec.loader.exec_module(module)
    except Exception as e:
        if previous is None:
            sys.modules.pop(mod_spec.name, None)
        else:
            sys.modules[mod_spec.name] = previous
        raise AppError(f"{path}: import failed: {type(e).__name__}: {e}") from e
    app = getattr(module, "APP", None)
    if not isinstance(app, AppSpec):
        raise AppError(f"{path} must define APP = AppSpec(...)")
    return app
