"""Runs whose ranks read only their own partition (``--rank-partitions``),
without GPUs: the launcher's preparation, each rank's RankGraph, the app
driver on a RankGraph, and the launcher's check of rank 0's outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from irgl_runner import rank_partitions
from irgl_runner.apps import execute, load_app
from irgl_runner.errors import IrglError
from irgl_runner.generators import generate
from irgl_runner.graphs import CSRGraph
from irgl_runner.partition import build_partition, master_bounds
from irgl_runner.reference import bfs_levels


def _plan(tmp_path: Path, graph: CSRGraph, policy: str, ranks: int) -> dict[str, Any]:
    return rank_partitions.prepare_rank_partitions(graph, policy, ranks, tmp_path)


@pytest.mark.parametrize("policy", ["oec", "cvc"])
def test_each_rank_reads_its_own_partition(tmp_path: Path, policy: str) -> None:
    graph = generate("rmat:7")
    shared = _plan(tmp_path, graph, policy, 4)
    assert len(shared["files"]) == 4 and all(Path(f).is_file() for f in shared["files"])
    assert shared["num_nodes"] == graph.num_nodes
    assert shared["num_edges"] == graph.num_edges
    assert shared["max_degree"] == graph.max_degree() > 0
    assert shared["bounds"] == [int(b) for b in master_bounds(graph, 4)]
    for rank in range(4):
        rg = rank_partitions.rank_graph(shared, policy, rank, 4)
        assert rg.part.equals(build_partition(graph, policy, 4, rank))
        assert (rg.num_nodes, rg.num_edges) == (graph.num_nodes, graph.num_edges)
        assert rg.max_degree() == graph.max_degree()
    # a second preparation reuses the files
    before = [Path(f).stat().st_mtime_ns for f in shared["files"]]
    _plan(tmp_path, graph, policy, 4)
    assert [Path(f).stat().st_mtime_ns for f in shared["files"]] == before


@pytest.mark.parametrize("policy", ["oec", "cvc"])
def test_folded_rank_partitions(tmp_path: Path, policy: str) -> None:
    """With folded master blocks the launcher relabels the graph once; each
    rank's file is the folded partition, the plan's blocks in partition
    ids, and the contiguous files stay apart."""
    from irgl_runner.partition_fold import FoldMap

    graph = generate("rmat:7")
    plain = _plan(tmp_path, graph, policy, 4)
    shared = rank_partitions.prepare_rank_partitions(
        graph, policy, 4, tmp_path, fold=True
    )
    assert set(shared["files"]).isdisjoint(plain["files"])
    want = FoldMap.of(graph, 4).rank_bounds
    assert shared["bounds"] == [int(b) for b in want]
    for rank in range(4):
        rg = rank_partitions.rank_graph(shared, policy, rank, 4)
        assert rg.part.fold is not None
        assert rg.part.equals(build_partition(graph, policy, 4, rank, fold=True))


def test_a_rank_refuses_another_ranks_partition(tmp_path: Path) -> None:
    graph = generate("rmat:6")
    shared = _plan(tmp_path, graph, "oec", 2)
    swapped = {**shared, "files": shared["files"][::-1]}
    with pytest.raises(IrglError, match="holds rank 1 of 2"):
        rank_partitions.rank_graph(swapped, "oec", 0, 2)
    missing = {**shared, "files": [str(tmp_path / "gone.npz"), shared["files"][1]]}
    with pytest.raises(IrglError, match="cannot read its partition"):
        rank_partitions.rank_graph(missing, "oec", 0, 2)


class _HostArray:
    def __init__(self, n: int, dtype: Any) -> None:
        self.data = np.zeros(n, dtype=dtype)

    def from_numpy(self, values: np.ndarray) -> None:
        self.data[:] = values

    def to_numpy(self) -> np.ndarray:
        return self.data.copy()


class _FakeProgram:
    """What execute needs of a program; records the graph it was given."""

    last_result: Any = None

    def __init__(self) -> None:
        self.uploaded: Any = None

    def upload_graph(self, graph: Any) -> Any:
        self.uploaded = graph
        return object()

    def alloc(self, n: int, dtype: Any) -> _HostArray:
        return _HostArray(n, dtype)

    def time_call(self, host_fn: str, *args: object) -> float:
        return 1.0


@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", "pr_pull"])
def test_apps_run_on_what_a_rank_knows(tmp_path: Path, name: str) -> None:
    """execute reads a RankGraph's sizes (and its edges' weights) only."""
    app = load_app(name)
    graph = generate("rmat:6")
    shared = _plan(tmp_path, graph, "oec", 2)
    rg = rank_partitions.rank_graph(shared, "oec", 1, 2)
    program = _FakeProgram()
    ctx = execute(app, program, cast(CSRGraph, rg), 3, reps=2, warmup=1)
    assert program.uploaded is rg and len(ctx.times_ms) == 2
    for spec in app.outputs:
        if spec.read_back:
            assert ctx.outputs[spec.name].shape[0] == graph.num_nodes


def test_the_launcher_checks_rank_zeros_outputs() -> None:
    app = load_app("bfs")
    graph = generate("rmat:6")
    source = int(np.argmax(graph.degrees()))
    good = {"level": bfs_levels(graph, source).astype(np.int32)}
    record: dict[str, Any] = {}
    check = rank_partitions.check_in_launcher
    assert check(app, graph, source, record, good, no_check=False) is None
    assert record["check"] == "passed"
    bad = {"level": good["level"].copy()}
    bad["level"][source] = 5
    problem = check(app, graph, source, record, bad, no_check=False)
    assert problem is not None and record["check"] == "failed"
    assert record["problem"] == problem
    skipped: dict[str, Any] = {}
    assert check(app, graph, source, skipped, bad, no_check=True) is None
    assert skipped["check"] == "skipped"


def test_the_launcher_validates_a_graph_too_large_for_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above REFERENCE_EDGES the launcher runs the app's linear-time
    validate instead of its reference check."""
    app = load_app("sssp")
    graph = generate("rmat:6")
    source = int(np.argmax(graph.degrees()))
    from irgl_runner.reference import sssp_distances

    dist = sssp_distances(graph, source).astype(np.int32)
    monkeypatch.setattr(rank_partitions, "REFERENCE_EDGES", 10)
    monkeypatch.setattr(
        app, "check", lambda ctx: "the reference ran"
    )  # must not be called
    check = rank_partitions.check_in_launcher
    record: dict[str, Any] = {}
    assert check(app, graph, source, record, {"dist": dist}, no_check=False) is None
    assert record == {"check": "passed", "checked_by": "validation"}
    dist[source] = 3
    assert check(app, graph, source, record, {"dist": dist}, no_check=False)
    assert record["check"] == "failed"


def test_partitions_are_built_as_many_at_once_as_memory_holds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    graph = generate("rmat:8")
    share = (graph.row_start.nbytes + graph.edge_dst.nbytes + graph.weights.nbytes) // 4  # pyright: ignore[reportOptionalMemberAccess]
    per_build = rank_partitions.BUILD_PEAK_FACTOR["oec"] * share
    monkeypatch.setattr(rank_partitions, "MEMINFO", tmp_path / "no-meminfo")
    pages = {"SC_PAGE_SIZE": 1}
    for free, fits in ((per_build * 3, 3), (per_build // 2, 1)):
        pages["SC_AVPHYS_PAGES"] = free
        monkeypatch.setattr(rank_partitions.os, "sysconf", pages.__getitem__)
        assert rank_partitions._fits(graph, "oec", 4) == fits  # pyright: ignore[reportPrivateUsage]
    # MemAvailable counts the page cache a build can take back (free pages
    # alone would say one build at a time)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemFree: 1 kB\nMemAvailable: {per_build * 2 // 1024 + 1} kB\n")
    monkeypatch.setattr(rank_partitions, "MEMINFO", meminfo)
    assert rank_partitions._fits(graph, "oec", 4) == 2  # pyright: ignore[reportPrivateUsage]
