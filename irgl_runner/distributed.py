"""Running an IrGL program on several GPUs: one process per GPU, NCCL between them.

A program is lowered with ``lower-irgl{distribute=oec|cvc}`` (``irgl-distribute``
then the NCCL runtime calls, see ``lowering/convert_irgl_dist.py``) and compiled
with NCCL (:func:`build_distributed`). Each process is one *rank*:

- ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (as ``torchrun`` sets them; Open
  MPI's ``OMPI_COMM_WORLD_RANK``/``_SIZE``/``_LOCAL_RANK`` also work) say which
  rank it is and which GPU of its node it uses (:class:`RankEnv`);
- the NCCL communicator is bootstrapped through a file in a directory every
  rank sees (``IRGL_DIST_DIR``, on a shared file system across nodes): rank 0
  writes its NCCL unique id to ``irgl-nccl-id.<run id>`` atomically (a file
  beside it, then a rename), the others poll for it; the run id is
  ``IRGL_DIST_RUN_ID`` (or torchrun's ``TORCHELASTIC_RUN_ID``), so a fresh id
  per run, or a fresh directory, keeps a stale file from an earlier run out;
  rank 0 removes the file once every rank has joined;
- every wait is bounded by ``IRGL_DIST_TIMEOUT`` seconds (default 300): the
  unique id, the communicator's creation and every collective (the runtime
  polls NCCL and aborts the communicator), so a rank that dies or never
  starts gives every surviving rank an error and a non-zero exit, no hang;
- each rank partitions the graph (:func:`irgl_runner.partition.load_or_build_partition`,
  cached), uploads its local graph and exchange lists (``irgl_dist_setup``),
  scatters the node arrays of a call to its local nodes, tracks every array
  argument (its agreed copy), calls the entry point, and all-gathers the
  masters of the node arrays so that every rank holds the global result
  (:class:`DistributedProgram`, which plays :class:`irgl_runner.api.Program`
  for :func:`irgl_runner.apps.execute`).

:func:`launch` (``irgl-bench run APP --graph G --gpus N``) is the only part that
assumes one node: it builds once, then starts N rank processes
(``python -m irgl_runner.distributed``) with a fresh ``IRGL_DIST_DIR`` and waits
for them; if one fails it gives the others the timeout to fail too, then
stops them. On several nodes start ``python -m irgl_runner.distributed APP
--graph G --policy P`` with torchrun or mpirun and a shared ``IRGL_DIST_DIR``.
Rank 0 prints the JSON record (times are of the entry call alone, between
barriers; scattering and gathering are not timed).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from .api import DeviceArray, DeviceGraph, Program
from .apps import AppSpec, execute, load_app
from .build import (
    DEFAULT_NVCC_FLAGS,
    DEFAULT_TARGET,
    compile_cuda,
    emit_program,
    target_for,
)
from .errors import IrglError, IrglRuntimeError, UsageError
from .graph_args import default_cache_dir, default_source, resolve_graph
from .graphs import CSRGraph
from .partition import (
    POLICIES,
    Partition,
    check_every_rank_has_masters,
    hot_count,
    hot_groups,
    hot_min_active,
    hot_nodes,
    load_or_build_partition,
    master_bounds,
    master_ranks,
)
from .partition_fold import FOLD_HELP, FoldMap
from .rank_partitions import (
    RankGraph,
    check_in_launcher,
    prepare_rank_partitions,
    rank_graph,
    save_outputs,
)
from .report import write_output, write_text_atomically

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DistArray",
    "DistGraph",
    "DistributedProgram",
    "NcclNotFound",
    "RankEnv",
    "build_distributed",
    "exchange_unique_id",
    "find_nccl",
    "launch",
    "main",
    "nccl_flags",
    "node_array_positions",
    "run_from_bench",
]

#: Seconds any rank waits for the others (unique id, communicator, collectives).
DEFAULT_TIMEOUT_S = 300.0
#: Bytes of an NCCL unique id (NCCL_UNIQUE_ID_BYTES).
UNIQUE_ID_BYTES = 128

_NCCL_HINT = (
    "install NCCL (pip install nvidia-nccl-cu13, or the libnccl-dev package) "
    "or set IRGL_NCCL_HOME to a directory with include/nccl.h and lib/libnccl.so"
)


class NcclNotFound(IrglError):
    """NCCL's header or library is not where a distributed build looks."""


# ------------------------------------------------------------------- building


@dataclass(frozen=True)
class NcclPaths:
    """Where nccl.h and libnccl live."""

    include: Path
    library: Path


def _candidates() -> list[tuple[Path, Path]]:
    """(include dir, lib dir) pairs to try, in order."""
    out: list[tuple[Path, Path]] = []
    for var in ("IRGL_NCCL_HOME", "NCCL_HOME"):
        home = os.environ.get(var)
        if home:
            out += [(Path(home) / "include", Path(home) / "lib")]
            out += [(Path(home) / "include", Path(home) / "lib64")]
    out.append((Path("/usr/include"), Path("/usr/lib/x86_64-linux-gnu")))
    out.append((Path("/usr/local/include"), Path("/usr/local/lib")))
    try:
        import nvidia.nccl  # pyright: ignore[reportMissingImports]

        for root in nvidia.nccl.__path__:  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            out.append((Path(str(root)) / "include", Path(str(root)) / "lib"))  # pyright: ignore[reportUnknownArgumentType]
    except ImportError:
        pass
    return out


def find_nccl() -> NcclPaths:
    """NCCL's include dir and library (``IRGL_NCCL_HOME``/``NCCL_HOME``, the
    system's, then the ``nvidia-nccl-cu*`` wheel's); :class:`NcclNotFound`
    naming what to install."""
    tried: list[str] = []
    for include, lib in _candidates():
        tried.append(str(include))
        if not (include / "nccl.h").is_file():
            continue
        for name in ("libnccl.so", "libnccl.so.2"):
            if (lib / name).exists():
                return NcclPaths(include, lib / name)
        tried[-1] += f" (no libnccl.so in {lib})"
    raise NcclNotFound(
        "NCCL not found (a program built for several GPUs links it); looked "
        f"for nccl.h in {', '.join(tried)}: {_NCCL_HINT}"
    )


def nccl_flags() -> list[str]:
    """nvcc flags that compile and link against NCCL (with an rpath)."""
    paths = find_nccl()
    return [
        f"-I{paths.include}",
        f"-L{paths.library.parent}",
        f"-l:{paths.library.name}",
        "-Xlinker",
        f"-rpath={paths.library.parent}",
    ]


def node_array_positions(
    mlir: str | os.PathLike[str], policy: str
) -> dict[str, tuple[int, ...]]:
    """Per host function, the positions of its node-array arguments (what
    irgl-distribute's ``#irgl_dist.host`` says); ``UsageError`` with the
    pass's diagnostic if it refuses the program."""
    from irgl_dialect.distributed import HOST_ATTR, HostAttr
    from irgl_interpreter.distributed import DistributionError, distribute
    from irgl_interpreter.interpreter import load_program

    try:
        module = distribute(load_program(Path(mlir)), policy)
    except DistributionError as e:
        raise UsageError(str(e)) from None
    out: dict[str, tuple[int, ...]] = {}
    for op in module.walk():
        host = op.attributes.get(HOST_ATTR)
        name = op.properties.get("sym_name") or op.attributes.get("sym_name")
        if isinstance(host, HostAttr) and name is not None:
            out[str(getattr(name, "data", name))] = host.node_array_positions
    return out


def build_distributed(
    mlir: str | os.PathLike[str],
    policy: str,
    options: str = "",
    flags: Sequence[str] = DEFAULT_NVCC_FLAGS,
    cache: str | os.PathLike[str] | None = None,
    target: str = DEFAULT_TARGET,
) -> Path:
    """Lower ``mlir`` with ``lower-irgl{distribute=POLICY OPTIONS}``, compile it
    with NCCL for ``target`` (:func:`irgl_runner.build.target_for` the graph:
    64-bit indices for a graph 32 bits cannot number); the cached library's
    path."""
    if policy not in POLICIES:
        raise UsageError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")
    extra = nccl_flags()  # before lowering: a missing NCCL fails fast
    pipeline = f"lower-irgl{{distribute={policy}{' ' + options if options else ''}}}"
    program = emit_program(mlir, pipeline, target)
    return compile_cuda(program, flags=[*flags, *extra], cache=cache)


# --------------------------------------------------------------------- ranks


def _env_int(names: Sequence[str]) -> int | None:
    for name in names:
        text = os.environ.get(name)
        if text is not None:
            try:
                return int(text)
            except ValueError:
                raise UsageError(f"{name}={text!r} is not an integer") from None
    return None


@dataclass(frozen=True)
class RankEnv:
    """This process's rank, the world size and its GPU on the node."""

    rank: int
    world: int
    local_rank: int

    @staticmethod
    def from_environ() -> RankEnv:
        """From ``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` (or Open MPI's); a
        process started without them is rank 0 of 1."""
        rank = _env_int(("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"))
        world = _env_int(("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"))
        local = _env_int(("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"))
        rank = 0 if rank is None else rank
        world = 1 if world is None else world
        local = rank if local is None else local
        if world < 1 or not 0 <= rank < world:
            raise UsageError(f"RANK={rank} is out of range for WORLD_SIZE={world}")
        if local < 0:
            raise UsageError(f"LOCAL_RANK={local} is negative")
        return RankEnv(rank, world, local)


def _timeout() -> float:
    text = os.environ.get("IRGL_DIST_TIMEOUT")
    if text is None:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"IRGL_DIST_TIMEOUT={text!r} is not a number") from None
    if value <= 0:
        raise UsageError(f"IRGL_DIST_TIMEOUT must be positive, got {value}")
    return value


def gpu_count(visible_devices: str | None = None) -> int:
    """GPUs this process may use: those ``nvidia-smi -L`` lists on this node
    (0 without a driver), or fewer where ``CUDA_VISIBLE_DEVICES`` names
    fewer (an empty value or one starting with ``-1`` hides every GPU).
    ``visible_devices``: count under this value instead of the process's."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    listed = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    visible = visible_devices
    if visible is None:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return listed
    names = []
    for name in visible.split(","):
        name = name.strip()
        if not name or name.startswith("-"):
            break  # CUDA stops at the first invalid entry
        names.append(name)
    return min(listed, len(names))


def _dist_dir() -> Path:
    text = os.environ.get("IRGL_DIST_DIR")
    if text:
        return Path(text)
    return Path(tempfile.gettempdir()) / f"irgl-dist-{os.getuid()}"


def _run_id() -> str:
    return (
        os.environ.get("IRGL_DIST_RUN_ID")
        or os.environ.get("TORCHELASTIC_RUN_ID")
        or "default"
    )


def _id_path(directory: Path, run_id: str) -> Path:
    return directory / f"irgl-nccl-id.{run_id}"


def exchange_unique_id(
    make_id: Any, env: RankEnv, directory: Path, run_id: str, timeout: float
) -> bytes:
    """Rank 0: ``make_id()`` (128 bytes), written atomically to the id file;
    the others: the file's contents once it appears (``IrglRuntimeError``
    after ``timeout`` seconds)."""
    path = _id_path(directory, run_id)
    if env.rank == 0:
        unique_id: bytes = make_id()
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(unique_id)
        os.replace(tmp, path)
        return unique_id
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        if len(data) == UNIQUE_ID_BYTES:
            return data
        time.sleep(0.05)
    raise IrglRuntimeError(
        f"rank {env.rank} of {env.world}: no NCCL unique id from rank 0 at {path} "
        f"after {timeout:g} s (IRGL_DIST_TIMEOUT): rank 0 did not start or failed "
        "early, or IRGL_DIST_DIR is not a directory shared by every node"
    )


_POINTER_C = ("void*", "const void*", "char*", "const char*", "double*")


def _ctypes_of(c_type: str) -> Any:
    if c_type in _POINTER_C or c_type.endswith("*"):
        return ctypes.c_void_p
    return {"int": ctypes.c_int, "int64_t": ctypes.c_int64, "double": ctypes.c_double}[
        c_type
    ]


@dataclass
class DistArray:
    """A global array on the host, standing in for a device array: each call
    scatters it (node arrays: to the rank's local nodes) and gathers it back."""

    data: np.ndarray

    def from_numpy(self, values: np.ndarray) -> DistArray:
        self.data[:] = np.asarray(values, dtype=self.data.dtype).ravel()
        return self

    def to_numpy(self) -> np.ndarray:
        return self.data.copy()

    def fill(self, value: float) -> DistArray:
        self.data.fill(value)
        return self


@dataclass
class DistGraph:
    """The global graph (or what the rank knows of it), this rank's
    partition and its device copy."""

    graph: CSRGraph | RankGraph
    part: Partition
    device: DeviceGraph
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: folded master blocks: the gathered masters come in partition ids
    fold: FoldMap | None = None


def _select_gpu(env: RankEnv) -> None:
    """Leave only the rank's GPU visible to this process (CUDA reads
    ``CUDA_VISIBLE_DEVICES`` when it starts): the ``LOCAL_RANK``-th of the
    visible ones, so no rank creates a context on another rank's GPU."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(env.local_rank)
        return
    devices = [d for d in visible.split(",") if d.strip()]
    if env.local_rank >= len(devices):
        raise UsageError(
            f"LOCAL_RANK={env.local_rank}, but CUDA_VISIBLE_DEVICES={visible!r} "
            f"names {len(devices)} GPU(s): start at most one rank per GPU"
        )
    os.environ["CUDA_VISIBLE_DEVICES"] = devices[env.local_rank].strip()


class DistributedProgram:
    """One rank of a program built by :func:`build_distributed`; plays
    :class:`irgl_runner.api.Program` for :func:`irgl_runner.apps.execute`."""

    def __init__(
        self,
        so_path: str | os.PathLike[str],
        node_arrays: dict[str, tuple[int, ...]],
        policy: str,
        env: RankEnv | None = None,
        timeout: float | None = None,
        fold: bool = False,
    ) -> None:
        self.env = env or RankEnv.from_environ()
        self.policy = policy
        self.fold = fold
        self.node_arrays = node_arrays
        self.timeout = _timeout() if timeout is None else timeout
        _select_gpu(self.env)  # before the library touches CUDA
        #: host seconds of this rank's set-up steps (`host_s` of the record)
        self.host_s: dict[str, float] = {}
        started = time.perf_counter()
        # every NCCL connection made while the communicator is created, the
        # one step bounded on a thread of its own (see irgl_dist_init)
        os.environ.setdefault("NCCL_RUNTIME_CONNECT", "0")
        self.program = Program(so_path)
        self.last_result: Any = None
        self.graphs: list[DistGraph] = []
        #: per call: the change of :meth:`stats` (bytes, steps, comm_s, rounds)
        self.call_stats: list[dict[str, float]] = []
        lib = self.program._lib  # pyright: ignore[reportPrivateUsage]
        from irgl_dialect.runtime_library import DIST_EXPORTS

        for export in DIST_EXPORTS.values():
            try:
                fn = getattr(lib, export.name)
            except AttributeError:
                raise IrglError(
                    f"{so_path} was not built for several GPUs (no {export.name}): "
                    "build it with irgl_runner.distributed.build_distributed"
                ) from None
            fn.restype = _ctypes_of(export.c_result)
            fn.argtypes = [_ctypes_of(p) for p in export.c_params]
        self._lib = lib

        def make_id() -> bytes:
            buf = ctypes.create_string_buffer(UNIQUE_ID_BYTES)
            self._check(lib.irgl_dist_get_unique_id(buf), "ncclGetUniqueId")
            return buf.raw

        env = self.env
        unique_id = exchange_unique_id(
            make_id, env, _dist_dir(), _run_id(), self.timeout
        )
        uid = ctypes.create_string_buffer(unique_id, UNIQUE_ID_BYTES)
        self._check(
            lib.irgl_dist_init(
                env.rank,
                env.world,
                0,  # the one device _select_gpu left visible
                ctypes.cast(uid, ctypes.c_void_p),
                self.timeout,
            ),
            "irgl_dist_init",
        )
        if env.rank == 0:  # every rank joined: the id file has served
            _id_path(_dist_dir(), _run_id()).unlink(missing_ok=True)
        self.host_s["communicator"] = time.perf_counter() - started

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise IrglRuntimeError(
                f"rank {self.env.rank} of {self.env.world}: {what}: "
                f"{self.program.last_error()}"
            )

    def device_name(self) -> str:
        policy = self.policy + (", folded" if self.fold else "")
        return f"{self.env.world} x {self.program.device_name()} (NCCL, {policy})"

    def upload_graph(self, graph: CSRGraph | RankGraph) -> DistGraph:
        """Partition ``graph`` (cached; a :class:`RankGraph` brings its
        partition), upload this rank's part and its exchange lists."""
        env = self.env
        check_every_rank_has_masters(graph.num_nodes, env.world)
        started = time.perf_counter()
        if isinstance(graph, RankGraph):
            part, bounds = graph.part, graph.bounds
        else:
            part = load_or_build_partition(
                graph, self.policy, env.world, env.rank, fold=self.fold
            )
            # folded: the master blocks in partition ids (as a RankGraph's)
            bounds = (
                master_bounds(graph, env.world)
                if part.fold_bounds is None
                else FoldMap(part.fold_bounds).rank_bounds
            )
        folding = part.fold
        self.host_s["partition"] = time.perf_counter() - started
        started = time.perf_counter()
        device = self.program.upload_graph(part.graph)
        i64 = np.int64

        def flat(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            counts = np.array([len(a) for a in arrays], dtype=i64)
            values = np.concatenate(arrays).astype(i64) if arrays else np.zeros(0, i64)
            return counts, np.ascontiguousarray(values)

        mirror_counts, mirrors = flat(part.mirrors_owned_by)
        master_counts, masters = flat(part.masters_mirrored_on)
        l2g = np.ascontiguousarray(part.local_to_global, dtype=i64)
        has_edges = np.ascontiguousarray(
            np.diff(part.graph.row_start) > 0, dtype=np.uint8
        )
        self._check(
            self._lib.irgl_dist_setup(
                part.num_local,
                part.num_masters,
                part.master_offset,
                l2g.ctypes.data,
                mirror_counts.ctypes.data,
                mirrors.ctypes.data,
                master_counts.ctypes.data,
                masters.ctypes.data,
                has_edges.ctypes.data,
                int(self.policy == "cvc"),
            ),
            "irgl_dist_setup",
        )
        if part.fold_bounds is not None:
            fold_bounds = np.ascontiguousarray(part.fold_bounds, dtype=i64)
            self._check(
                self._lib.irgl_dist_fold(
                    fold_bounds.shape[0] - 1, fold_bounds.ctypes.data
                ),
                "irgl_dist_fold",
            )
        if not isinstance(graph, RankGraph):  # rank partitions: no global degrees
            self._install_hot_nodes(graph, part, bounds, env.world)
        self.host_s["upload"] = time.perf_counter() - started
        dist = DistGraph(
            graph,
            part,
            device,
            np.ascontiguousarray(np.diff(bounds), dtype=i64),
            np.ascontiguousarray(bounds[:-1], dtype=i64),
            folding,
        )
        self.graphs.append(dist)
        return dist

    def _install_hot_nodes(
        self, graph: CSRGraph, part: Partition, bounds: np.ndarray, world: int
    ) -> None:
        """Hands the runtime the hot nodes (irgl_runner.partition.hot_nodes)
        grouped by master rank (hot_groups) as this rank's local ids, -1
        where it holds no copy, and the round size that refreshes them; none
        on one rank, under cvc or with ``IRGL_DIST_HOT=0``."""
        count = hot_count(graph.num_nodes, world, self.policy)
        if count == 0:
            return
        hot = hot_nodes(graph, count)
        groups = hot_groups(hot, master_ranks(bounds, part.fold, hot), world)
        local = np.ascontiguousarray(part.local_ids(groups), dtype=np.int64)
        self._check(
            self._lib.irgl_dist_hot(
                local.shape[0], local.ctypes.data, hot_min_active(count)
            ),
            "irgl_dist_hot",
        )

    def alloc(self, n: int, dtype: Any) -> DistArray:
        return DistArray(np.zeros(n, dtype=np.dtype(dtype)))

    def barrier(self) -> None:
        """Wait for every rank (bounded by the timeout)."""
        self._check(self._lib.irgl_dist_barrier(), "barrier")

    def device_memory(self) -> tuple[int, int]:
        """The most device memory in use on any rank's GPU (every rank calls
        it: an all-reduce), and that GPU's total."""
        used, total = self.program.device_memory()
        most = (ctypes.c_int64 * 1)()
        self._check(
            self._lib.irgl_dist_max_int64(used, ctypes.cast(most, ctypes.c_void_p)),
            "device memory",
        )
        return int(most[0]), total

    def stats(self) -> dict[str, float]:
        """Since the communicator was made: bytes this rank sent, collective
        steps, seconds of its communication stream's time (from the
        compute it waits for to the data in place), rounds (termination
        tests: all-reduced host values)."""
        out = (ctypes.c_double * 4)()
        self._check(
            self._lib.irgl_dist_stats(ctypes.cast(out, ctypes.c_void_p)), "stats"
        )
        return {
            "bytes_sent": out[0],
            "collectives": out[1],
            "comm_s": out[2],
            "rounds": out[3],
        }

    def _upload(self, values: np.ndarray) -> DeviceArray:
        array = self.program.alloc(len(values), values.dtype)
        array.from_numpy(values)
        self._check(
            self._lib.irgl_dist_track(array.ptr, array.nbytes), "irgl_dist_track"
        )
        return array

    def call(self, host_fn: str, *args: object) -> Any:
        """Scatter, call, gather (see the module docstring); the call's time
        in :attr:`last_ms`."""
        nodes = set(self.node_arrays.get(host_fn, ()))
        graphs = [a for a in args if isinstance(a, DistGraph)]
        if nodes and not graphs:
            raise IrglError(f"@{host_fn}: node arrays but no graph argument")
        graph = graphs[0] if graphs else None
        device_args: list[object] = []
        uploaded: list[tuple[int, DistArray, DeviceArray]] = []
        try:
            for i, arg in enumerate(args):
                if isinstance(arg, DistGraph):
                    device_args.append(arg.device)
                elif isinstance(arg, DistArray):
                    values = arg.data
                    if i in nodes:
                        assert graph is not None
                        values = values[graph.part.local_to_global]
                    device = self._upload(np.ascontiguousarray(values))
                    uploaded.append((i, arg, device))
                    device_args.append(device)
                else:
                    device_args.append(arg)
            self.program.synchronize()
            self.barrier()
            before = self.stats()
            t0 = time.perf_counter()
            result = self.program.call(host_fn, *device_args)
            self.program.synchronize()
            after = self.stats()  # this rank's own steps, not the barrier's
            self.barrier()
            self.last_ms = (time.perf_counter() - t0) * 1e3
            self.call_stats.append({k: after[k] - before[k] for k in after})
            for i, arg, device in uploaded:
                if i in nodes:
                    assert graph is not None
                    whole = self.program.alloc(graph.graph.num_nodes, arg.data.dtype)
                    try:
                        self._check(
                            self._lib.irgl_dist_allgather_masters(
                                device.ptr,
                                whole.ptr,
                                arg.data.dtype.itemsize,
                                graph.counts.ctypes.data,
                                graph.offsets.ctypes.data,
                            ),
                            "gathering the results",
                        )
                        gathered = whole.to_numpy()
                        if graph.fold is not None:  # masters in partition ids
                            ids = np.arange(graph.graph.num_nodes, dtype=np.int64)
                            gathered = gathered[graph.fold.to_part(ids)]
                        arg.data[:] = gathered
                    finally:
                        whole.free()
                else:
                    arg.data[:] = device.to_numpy()
        finally:
            for _, _, device in uploaded:
                device.free()
        self.last_result = result
        return result

    def time_call(self, host_fn: str, *args: object) -> float:
        self.call(host_fn, *args)
        return self.last_ms

    def close(self) -> None:
        """Destroy the communicator (bounded)."""
        for graph in self.graphs:
            graph.device.free()
        self.graphs.clear()
        self._check(self._lib.irgl_dist_finalize(), "finalize")


# ------------------------------------------------------------ rank and launcher


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m irgl_runner.distributed",
        description="Run one rank of a benchmark app on several GPUs (RANK, "
        "WORLD_SIZE, LOCAL_RANK from the environment; IRGL_DIST_DIR shared by "
        "all ranks). With --gpus N, start N ranks on this node instead.",
    )
    p.add_argument("app")
    p.add_argument("--graph", required=True)
    p.add_argument("--policy", choices=POLICIES, default="oec")
    p.add_argument("--gpus", type=int, default=None, help="start this many ranks here")
    p.add_argument("--source", type=int, default=None)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--options", default="", help="more lower-irgl options")
    p.add_argument(
        "--mlir", default=None, help="the program to run (default: the app's)"
    )
    p.add_argument("--benchmarks-dir", default=None)
    p.add_argument("--cache-dir", default=None)
    p.add_argument("--no-check", action="store_true")
    p.add_argument(
        "--output", default=None, help="rank 0 writes the primary output here"
    )
    p.add_argument(
        "--rank-partitions",
        action="store_true",
        help="with --gpus: the launcher partitions the graph and checks the "
        "result; each rank reads only its own partition (for a graph whose "
        "copies would not fit the host once per rank)",
    )
    p.add_argument("--fold", action="store_true", help=FOLD_HELP)
    p.add_argument("--plan", default=None, help=argparse.SUPPRESS)
    return p


def _load_app(args: argparse.Namespace) -> AppSpec:
    """The app, running its distributable program (or ``--mlir``)."""
    try:
        app = load_app(args.app, args.benchmarks_dir)
    except Exception as e:  # AppError
        raise UsageError(str(e)) from None
    if getattr(args, "mlir", None):
        return replace(app, mlir=Path(args.mlir))
    if app.distributed_mlir is not None:
        return replace(app, mlir=app.distributed_mlir)
    return app


def _load(args: argparse.Namespace) -> tuple[AppSpec, CSRGraph, Any, int]:
    app = _load_app(args)
    cache = (
        Path(args.cache_dir)
        if args.cache_dir
        else default_cache_dir(args.benchmarks_dir)
    )
    graph, spec = resolve_graph(args.graph, app.symmetrize, app.weighted, cache)
    app.check_graph(graph, args.graph)
    source = args.source if args.source is not None else default_source(graph, spec)
    if app.uses_source and not 0 <= source < graph.num_nodes:
        raise UsageError(f"source {source} out of range for {graph.num_nodes} nodes")
    return app, graph, spec, source


def _per_call(calls: list[dict[str, float]]) -> dict[str, float]:
    """Rank 0's communication in a timed call (medians over the calls):
    bytes sent, milliseconds of its communication stream, rounds, bytes per
    round."""
    if not calls:
        return {}
    bytes_sent = statistics.median(c["bytes_sent"] for c in calls)
    rounds = statistics.median(c["rounds"] for c in calls)
    return {
        "bytes_per_call": round(bytes_sent),
        "comm_ms": round(statistics.median(c["comm_s"] for c in calls) * 1e3, 6),
        "rounds": round(rounds),
        "bytes_per_round": round(bytes_sent / rounds) if rounds else 0,
    }


def run_rank(args: argparse.Namespace) -> int:
    """One rank: build (or take the launcher's plan), run, check; rank 0
    prints the JSON record. Returns the exit code."""
    env = RankEnv.from_environ()
    started = time.perf_counter()
    plan = json.loads(Path(args.plan).read_text()) if args.plan else None
    shared = plan.get("partitions") if plan is not None else None
    graph: CSRGraph | RankGraph
    if shared is not None:  # --rank-partitions: this rank's partition alone
        app = _load_app(args)
        graph = rank_graph(shared, args.policy, env.rank, env.world)
        name, source = str(shared["graph"]), int(shared["source"])
    else:
        app, graph, spec, source = _load(args)
        name = spec.name if spec is not None else args.graph
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    if plan is not None:
        so = Path(plan["library"])
        nodes = {k: tuple(v) for k, v in plan["node_arrays"].items()}
    else:
        nodes = node_array_positions(app.mlir, args.policy)
        target = target_for(graph.num_nodes, graph.num_edges)
        so = build_distributed(app.mlir, args.policy, args.options, target=target)
    built = time.perf_counter() - started
    # the launcher checks a run on rank partitions (it holds the graph)
    checks = not args.no_check and app.check is not None and shared is None
    program = DistributedProgram(
        so, nodes, args.policy, env, fold=getattr(args, "fold", False)
    )
    try:
        # (a RankGraph: execute reads its sizes and weights only)
        started = time.perf_counter()
        ctx = execute(app, program, cast(CSRGraph, graph), source, args.reps, 1)
        executed = time.perf_counter() - started
        problem = app.check(ctx) if checks and app.check is not None else None
        stats = program.stats()
        memory = program.device_memory()
    finally:
        program.close()
    if env.rank == 0:
        median = statistics.median(ctx.times_ms)
        record: dict[str, Any] = {
            "app": app.name,
            "graph": name,
            "nodes": graph.num_nodes,
            "edges": graph.num_edges,
            "gpu": program.device_name(),
            "gpus": env.world,
            "policy": args.policy,
            "fold": getattr(args, "fold", False),
            "source": source if app.uses_source else None,
            "times_ms": [round(t, 6) for t in ctx.times_ms],
            "median_ms": round(median, 6),
            "check": "skipped"
            if not checks
            else ("passed" if problem is None else "failed"),
            # the most device memory a rank's GPU has in use after the runs
            # (its partition, exchange buffers, pooled scratch), and its size
            "gpu_mem_used_bytes": memory[0],
            "gpu_mem_total_bytes": memory[1],
            "rank0_bytes_sent": stats["bytes_sent"],
            "rank0_comm_s": round(stats["comm_s"], 6),
            # where rank 0's wall time went (seconds): reading the graph (or
            # its partition), the library, the communicator, the partition
            # (cached or built), the upload, and every call with the
            # arrays' scatter and gather (the timed calls included)
            "rank0_host_s": {
                k: round(v, 3)
                for k, v in {
                    "graph": loaded,
                    "library": built,
                    **program.host_s,
                    "calls": executed
                    - program.host_s.get("partition", 0.0)
                    - program.host_s.get("upload", 0.0),
                }.items()
            },
            **_per_call(program.call_stats[-len(ctx.times_ms) :]),
        }
        if ctx.result is not None:
            record["result"] = ctx.result
        if problem is not None:
            record["problem"] = problem
        if shared is not None:  # for the launcher, which checks and prints
            save_outputs(Path(shared["outputs"]), ctx.outputs)
            write_text_atomically(Path(shared["record"]), json.dumps(record))
            return 0
        print(json.dumps(record), flush=True)
        if args.output and app.primary_output is not None:
            _write_primary(args.output, ctx.outputs[app.primary_output])
    if problem is not None:
        print(f"rank {env.rank}: {app.name}: wrong output: {problem}", file=sys.stderr)
        return 1
    return 0


def _write_primary(path: str, values: np.ndarray) -> None:
    """Write the primary output to ``path`` through a temporary file and a
    rename: nothing half-written."""
    # the suffix stays: write_output picks the format by it (.npy)
    tmp = Path(path).with_name(f".tmp.{Path(path).name}")
    write_output(tmp, values)
    os.replace(tmp, path)


def launch(args: argparse.Namespace) -> int:
    """Start ``args.gpus`` ranks on this node (see the module docstring);
    the exit code: 0 if every rank succeeded."""
    gpus = int(args.gpus)
    if gpus < 1:
        raise UsageError(f"--gpus must be at least 1, got {gpus}")
    app, graph, spec, source = _load(args)  # warms the graph cache; bad input: 2
    check_every_rank_has_masters(graph.num_nodes, gpus)
    nodes = node_array_positions(app.mlir, args.policy)
    target = target_for(graph.num_nodes, graph.num_edges)
    so = build_distributed(app.mlir, args.policy, args.options, target=target)
    timeout = _timeout()
    with tempfile.TemporaryDirectory(prefix="irgl-dist-") as run_dir:
        plan = Path(run_dir) / "plan.json"
        contents: dict[str, Any] = {"library": str(so), "node_arrays": nodes}
        shared: dict[str, Any] | None = None
        if getattr(args, "rank_partitions", False):
            fold = getattr(args, "fold", False)
            shared = prepare_rank_partitions(graph, args.policy, gpus, fold=fold)
            shared |= {
                "graph": spec.name if spec is not None else args.graph,
                "source": source,
                "outputs": str(Path(run_dir) / "outputs.npz"),
                "record": str(Path(run_dir) / "record.json"),
            }
            contents["partitions"] = shared
        plan.write_text(json.dumps(contents))
        argv = [sys.executable, "-m", "irgl_runner.distributed", args.app]
        argv += ["--graph", args.graph, "--policy", args.policy, "--plan", str(plan)]
        argv += ["--reps", str(args.reps)]
        for flag in ("source", "benchmarks_dir", "cache_dir", "output", "mlir"):
            value = getattr(args, flag, None)
            if value is not None:
                argv += ["--" + flag.replace("_", "-"), str(value)]
        if args.no_check:
            argv.append("--no-check")
        if getattr(args, "fold", False):
            argv.append("--fold")
        procs: list[subprocess.Popen[bytes]] = []
        run_id = uuid.uuid4().hex
        for rank in range(gpus):
            env = dict(os.environ)
            env.update(
                RANK=str(rank),
                WORLD_SIZE=str(gpus),
                LOCAL_RANK=str(rank),
                IRGL_DIST_DIR=run_dir,
                IRGL_DIST_RUN_ID=run_id,
            )
            env.setdefault("NCCL_NVLS_ENABLE", "0")
            procs.append(subprocess.Popen(argv, env=env))
        code = _wait(procs, timeout)
        if code != 0 or shared is None:
            return code
        record = json.loads(Path(shared["record"]).read_text())
        with np.load(shared["outputs"]) as z:
            outputs = {k: z[k] for k in z.files}
        problem = check_in_launcher(app, graph, source, record, outputs, args.no_check)
        print(json.dumps(record), flush=True)
        if args.output and app.primary_output is not None:
            _write_primary(args.output, outputs[app.primary_output])
        if problem is not None:
            print(f"{app.name}: wrong output: {problem}", file=sys.stderr)
            return 1
        return 0


def _wait(procs: list[subprocess.Popen[bytes]], timeout: float) -> int:
    """Wait for every rank; once one fails, give the others `timeout` (plus
    a margin) to fail on their own, then stop them."""
    failed_at: float | None = None
    while True:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            break
        if failed_at is None and any(c not in (None, 0) for c in codes):
            failed_at = time.monotonic()
        if failed_at is not None and time.monotonic() - failed_at > timeout + 30:
            for rank, p in enumerate(procs):
                if p.poll() is None:
                    print(
                        f"irgl-bench: stopping rank {rank} (another rank failed)",
                        file=sys.stderr,
                    )
                    p.kill()
        time.sleep(0.1)
    bad = [(r, c) for r, c in enumerate(p.returncode for p in procs) if c != 0]
    for rank, code in bad:
        print(f"irgl-bench: rank {rank} exited with {code}", file=sys.stderr)
    return 0 if not bad else 1


def run_from_bench(args: argparse.Namespace) -> int:
    """``irgl-bench run APP --graph G --gpus N [--policy P]``: :func:`launch`
    with ``run``'s arguments; the exit code (2: bad input)."""
    ns = argparse.Namespace(
        app=args.app,
        graph=args.graph,
        policy=args.policy,
        gpus=args.gpus,
        source=args.source,
        reps=args.reps,
        options="",
        mlir=None,
        benchmarks_dir=args.benchmarks_dir,
        cache_dir=args.cache_dir,
        no_check=args.no_check,
        output=args.output,
        rank_partitions=getattr(args, "rank_partitions", False),
        fold=getattr(args, "fold", False),
    )
    try:
        return launch(ns)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (IrglError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m irgl_runner.distributed``: one rank, or with ``--gpus``
    the launcher."""
    args = _parser().parse_args(argv)
    try:
        if args.gpus is not None:
            return launch(args)
        return run_rank(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except IrglError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    code = main()
    if code != 0:
        # A failed rank may leave a thread stuck in NCCL (a communicator
        # whose peers never came): leave without the interpreter's and
        # CUDA's teardown, which could wait for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
