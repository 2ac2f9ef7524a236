"""Benchmark applications on the interpreter: the same `AppSpec` (inputs,
arguments, checker) that `irgl-bench run` uses on the GPU.

:class:`InterpProgram` plays the part of the compiled `irgl_runner.api.Program`
for `irgl_runner.apps.execute`: graphs and arrays stay on the host, and
calling the host function interprets it.

    from irgl_runner.apps import load_app
    run = run_app(load_app("bfs"), graph, schedule="random:1")
    assert run.problem is None
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from irgl_interpreter.c_escape import CImpl
from irgl_interpreter.interpreter import load_program, run_host
from irgl_interpreter.state import Graph, Schedule, Stats
from irgl_runner.apps import AppSpec, RunContext, execute
from irgl_runner.graphs import CSRGraph


@dataclass
class HostArray:
    """A 'device' array of the interpreter: a numpy array on the host."""

    data: np.ndarray

    def from_numpy(self, values: np.ndarray) -> HostArray:
        values = np.asarray(values, dtype=self.data.dtype).ravel()
        if values.shape != self.data.shape:
            raise ValueError(
                f"array of {values.shape[0]} values into one of {self.data.shape[0]}"
            )
        self.data[:] = values
        return self

    def to_numpy(self) -> np.ndarray:
        return self.data.copy()

    def fill(self, value: float) -> HostArray:
        self.data.fill(value)
        return self


def app_c_impls(name: str) -> Mapping[str, CImpl]:
    """Python implementations of the C text of benchmark app `name`."""
    if name == "dmr":
        from irgl_interpreter import dmr

        return dmr.c_impls()
    if name == "color":  # @main reads its launch counter back from the device
        return {"irgl_device_read_i32($0)": lambda cells: int(cells[0])}
    return {}


#: Seconds between two progress lines of one interpreter run.
PROGRESS_INTERVAL_S = 5.0


class RunProgress:
    """Progress lines of timed interpreter runs on `stream` (``irgl-bench run
    --backend interp --progress``): while a run goes on, at most one line
    every `interval_s` seconds (default :data:`PROGRESS_INTERVAL_S`), checked
    at every kernel invocation and every few thousand edge visits::

        interp: run 1/5, 12.3 s, 1,234,567 edge visits, 42 kernel invocations

    and, after a run that printed one, the same with ``done``. A run shorter
    than `interval_s` prints nothing."""

    def __init__(
        self,
        stream: TextIO,
        total: int | None = None,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream
        self.total = total
        self.interval_s = PROGRESS_INTERVAL_S if interval_s is None else interval_s
        self.clock = clock
        self.run = 0
        self._start = self._last = 0.0
        self._printed = False

    def begin(self) -> None:
        """A timed run starts."""
        self.run += 1
        self._start = self._last = self.clock()
        self._printed = False

    def update(self, stats: Stats) -> None:
        """The running program's counters (a line if `interval_s` passed)."""
        now = self.clock()
        if now - self._last >= self.interval_s:
            self._last = now
            self._line(stats, now, "")

    def end(self, stats: Stats) -> None:
        """The run finished with `stats` (a line if it printed any)."""
        if self._printed:
            self._line(stats, self.clock(), " done")

    def _line(self, stats: Stats, now: float, what: str) -> None:
        of = f"/{self.total}" if self.total is not None else ""
        self.stream.write(
            f"interp: run {self.run}{of}{what}, {now - self._start:.1f} s, "
            f"{stats.edge_visits:,} edge visits, "
            f"{stats.invocations:,} kernel invocations\n"
        )
        self.stream.flush()
        self._printed = True


class InterpProgram:
    """Runs the host functions of an IrGL program on the interpreter
    (`progress`, if set, reports on each :meth:`time_call`)."""

    def __init__(
        self,
        mlir: str | Path,
        schedule: Schedule | str = "sequential",
        c_impls: Mapping[str, CImpl] | None = None,
    ):
        self.module = load_program(mlir)
        self.schedule = (
            Schedule.parse(schedule) if isinstance(schedule, str) else schedule
        )
        self.c_impls = dict(c_impls or {})
        self.last_result: Any = None
        self.stats = Stats()
        self.seconds = 0.0
        self.progress: RunProgress | None = None
        self._last_stats = Stats()

    def upload_graph(self, graph: CSRGraph) -> Graph:
        return Graph.from_csr(graph)

    def alloc(self, n: int, dtype: Any) -> HostArray:
        return HostArray(np.zeros(n, dtype=np.dtype(dtype)))

    def device_name(self) -> str:
        return f"CPU interpreter, schedule {self.schedule} ({cpu_model()})"

    def call(self, host_fn: str, *args: object) -> Any:
        """Run host function ``host_fn``; its result (or None) as the GPU
        program's ``call`` returns it."""
        values = [a.data if isinstance(a, HostArray) else a for a in args]
        update = self.progress.update if self.progress is not None else None
        run = run_host(
            self.module, host_fn, values, self.schedule, self.c_impls, update
        )
        self._last_stats = run.stats
        self.stats.add(run.stats)
        self.seconds += run.seconds
        self.last_result = run.values[0] if run.values else None
        return self.last_result

    def time_call(self, host_fn: str, *args: object) -> float:
        """Like :meth:`call`, but return the wall time in milliseconds."""
        if self.progress is not None:
            self.progress.begin()
        start = time.perf_counter()
        self.call(host_fn, *args)
        ms = (time.perf_counter() - start) * 1e3
        if self.progress is not None:
            self.progress.end(self._last_stats)
        return ms

    def describe_runs(self) -> dict[str, object]:
        """What the last call did, for `irgl-bench run --backend interp`'s
        JSON line: its edge visits, kernel invocations, worklist pushes,
        atomics and the atomics that changed their element."""
        s = self._last_stats
        return {
            "edge_visits": s.edge_visits,
            "invocations": s.invocations,
            "pushes": s.pushes,
            "atomics": s.atomics,
            "atomic_changes": s.atomic_changes,
        }


@cache
def cpu_model() -> str:
    """The CPU's model name (as `lscpu` shows it), or the platform's."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@dataclass
class AppRun:
    """One app run on the interpreter: the context `check` saw and its verdict."""

    ctx: RunContext
    problem: str | None
    stats: Stats
    seconds: float

    @property
    def edge_visits_per_second(self) -> float:
        return self.stats.edge_visits / self.seconds if self.seconds > 0 else 0.0


def interp_program(
    app: AppSpec,
    schedule: Schedule | str = "sequential",
    c_impls: Mapping[str, CImpl] | None = None,
) -> InterpProgram:
    """The app's program on the interpreter, with the app's C implementations."""
    impls = dict(app_c_impls(app.name))
    impls.update(c_impls or {})
    return InterpProgram(app.mlir, schedule, impls)


def run_app(
    app: AppSpec,
    graph: CSRGraph,
    schedule: Schedule | str = "sequential",
    source: int = 0,
    reps: int = 1,
    check: bool = True,
    c_impls: Mapping[str, CImpl] | None = None,
) -> AppRun:
    """Run `app` on `graph` on the interpreter and check it with its checker."""
    program = interp_program(app, schedule, c_impls)
    ctx = execute(app, program, graph, source, reps=reps, warmup=0)
    problem = app.check(ctx) if check and app.check is not None else None
    return AppRun(ctx, problem, program.stats, program.seconds)
