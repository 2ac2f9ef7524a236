"""The distributed form on P simulated ranks (irgl_interpreter/distributed.py,
after lowering/distribute.py): every distributable app gives the single-rank
interpreter's result for P = 1..4, both policies, three schedules; programs
the pass refuses say why; the synchronization moves only updated entries."""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import test as xdsl_test

import irgl_interpreter.distributed as dist_interp
from irgl_dialect.distributed import Reduction
from irgl_interpreter.apps import AppRun, run_app
from irgl_interpreter.distributed import (
    Communicator,
    DistributedAppRun,
    DistributionError,
    RankContext,
    run_app_distributed,
    sync_nodes,
    sync_worklist_reduce,
)
from irgl_interpreter.state import IrglRuntimeError, PipeContext
from irgl_runner.apps import AppSpec, load_app
from irgl_runner.generators import generate, grid2d
from irgl_runner.graphs import CSRGraph
from irgl_runner.partition import hot_groups, hot_min_active, partition_graph

REPO = Path(__file__).resolve().parents[2]
RANKS = (1, 2, 3, 4)
SCHEDULES = ("sequential", "reversed", "random:5")

#: app -> (program, graph spec, policies the pass accepts it for)
CASES: dict[str, tuple[Path | None, str, tuple[str, ...]]] = {
    # the shipped bfs.mlir is refused (see test_shipped_programs_refused): the
    # specification's level-by-level BFS is the distributable one
    "bfs": (REPO / "examples/bfs.mlir", "rmat:8", ("oec", "cvc")),
    "sssp": (None, "rmat:7", ("oec", "cvc")),
    # cc.mlir chases parent pointers: label propagation is distributable
    "cc": (REPO / "benchmarks/cc/cc_lp.mlir", "rmat:7", ("oec", "cvc")),
    # pr_pull reads degrees, which a vertex-cut splits: oec only
    "pr_pull": (None, "grid:5x4", ("oec",)),
    # MIS reduces over a popped node's edges, partial under a vertex-cut
    "mis": (None, "rmat:6", ("oec",)),
}


@cache
def graph_of(spec: str) -> CSRGraph:
    return generate(spec)


def app_of(name: str) -> AppSpec:
    program, _, _ = CASES[name]
    app = load_app(name)
    return app if program is None else replace(app, mlir=program)


def source_of(graph: CSRGraph) -> int:
    """A node of largest degree (rmat's node 0 is isolated)."""
    return int(np.argmax(np.diff(graph.row_start)))


@cache
def single(name: str) -> AppRun:
    graph = graph_of(CASES[name][1])
    run = run_app(app_of(name), graph, source=source_of(graph))
    assert run.problem is None
    return run


def output_of(app: AppSpec, run: AppRun) -> np.ndarray:
    return np.asarray(run.ctx.outputs[app.output_array or app.outputs[0].name])


def _distributed(
    name: str, ranks: int, policy: str, schedule: str, **options: Any
) -> DistributedAppRun:
    """The case's program on `ranks` simulated ranks (from its graph's
    largest-degree node), with irgl-distribute's `options`."""
    graph = graph_of(CASES[name][1])
    return run_app_distributed(
        load_app(name),
        graph,
        ranks,
        policy,
        schedule,
        source=source_of(graph),
        mlir=CASES[name][0],
        **options,
    )


PARAMS = [
    (name, policy, ranks)
    for name, (_, _, policies) in CASES.items()
    for policy in policies
    for ranks in RANKS
]


@pytest.mark.parametrize(("name", "policy", "ranks"), PARAMS)
def test_distributed_app_matches_single_rank(name: str, policy: str, ranks: int):
    app = app_of(name)
    reference = output_of(app, single(name))
    for schedule in SCHEDULES:
        run = _distributed(name, ranks, policy, schedule)
        assert run.problem is None, (schedule, run.problem)
        result = output_of(app, run)
        if result.dtype.kind == "f":  # PageRank: the checker passed; and close
            np.testing.assert_allclose(result, reference, rtol=1e-9, atol=1e-12)
        else:
            np.testing.assert_array_equal(result, reference, err_msg=schedule)
        if ranks == 1:
            assert run.comm.total_values == 0
        else:
            assert run.comm.reduce_values + run.comm.broadcast_values > 0


@pytest.mark.parametrize(("name", "exchanges"), [("sssp", 0), ("bfs", 2)])
def test_first_worklist_exchanged_only_with_initial_items(
    name: str, exchanges: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Pipe or Iterate without initial items (SSSP's outer Pipe) starts
    empty on every rank: no exchange of its first worklist
    (irgl_dist_empty_worklist); BFS's Iterate, `initial [%src]`, has one on
    each of its 2 ranks."""
    calls: list[int] = []
    original = dist_interp._filter_initial

    def counted(ctx: RankContext, pipe: PipeContext) -> None:
        calls.append(ctx.rank)
        original(ctx, pipe)

    monkeypatch.setattr(dist_interp, "_filter_initial", counted)
    run = _distributed(name, 2, "oec", "sequential")
    assert run.problem is None, run.problem
    assert len(calls) == exchanges


def test_reached_nodes_are_not_trivial():
    """The BFS and SSSP sources reach most of the graph (else the equality
    above would prove little)."""
    for name in ("bfs", "sssp"):
        out = output_of(app_of(name), single(name))
        assert np.count_nonzero(out < 1073741823) > out.shape[0] // 2


def test_graph_with_isolated_nodes_and_components():
    """Two grids and isolated nodes; CC labels, BFS from the second grid."""
    a, b = grid2d(4, 3), grid2d(3, 3)
    assert isinstance(a, CSRGraph) and isinstance(b, CSRGraph)
    n = a.num_nodes + b.num_nodes + 3
    src = np.concatenate([a.edge_src(), b.edge_src() + a.num_nodes])
    dst = np.concatenate([a.edge_dst, b.edge_dst + a.num_nodes]).astype(np.int64)
    order = np.lexsort((dst, src))
    row_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=row_start[1:])
    graph = CSRGraph(n, row_start, dst[order], None)
    for name in ("cc", "bfs"):
        app = app_of(name)
        source = a.num_nodes + 4
        reference = output_of(app, run_app(app, graph, source=source))
        for policy in ("oec", "cvc"):
            for ranks in (2, 4):
                run = run_app_distributed(
                    load_app(name),
                    graph,
                    ranks,
                    policy,
                    "random:2",
                    source,
                    True,
                    CASES[name][0],
                )
                assert run.problem is None
                np.testing.assert_array_equal(output_of(app, run), reference)


def test_sssp_from_a_node_without_edges_on_ranks() -> None:
    """SSSP pushes its source only if it has edges; under a vertex-cut
    irgl-distribute pushes it whatever its degree (a rank's degree is its
    share of the edges): from an isolated node and from a node with edges,
    every policy and rank count gives the single rank's distances."""
    app = app_of("sssp")
    graph = graph_of(CASES["sssp"][1])
    degrees = np.diff(graph.row_start)
    isolated = int(np.flatnonzero(degrees == 0)[0])
    for source in (isolated, int(np.flatnonzero(degrees == 1)[0])):
        reference = output_of(app, run_app(app, graph, source=source))
        for policy in ("oec", "cvc"):
            for ranks in (2, 3):
                run = run_app_distributed(
                    load_app("sssp"), graph, ranks, policy, "random:3", source
                )
                assert run.problem is None
                np.testing.assert_array_equal(output_of(app, run), reference)
    assert np.count_nonzero(reference < 1073741823) > 1


def _matches_single_rank(
    name: str | AppSpec,
    program: Path,
    spec: str,
    schedule: str,
    mirrors: bool = True,
) -> None:
    """`program` (with app `name`'s arguments and checker) on 2 and 4 ranks
    under both policies gives the single rank's output, which reaches most
    of the graph (`mirrors`: irgl-distribute's option)."""
    app = load_app(name) if isinstance(name, str) else name
    graph = graph_of(spec)
    source = source_of(graph)
    reference = output_of(
        app, run_app(replace(app, mlir=program), graph, source=source)
    )
    assert np.count_nonzero(reference < 1073741823) > graph.num_nodes // 2
    for policy in ("oec", "cvc"):
        for ranks in (2, 4):
            run = run_app_distributed(
                app, graph, ranks, policy, schedule, source, True, program, mirrors
            )
            assert run.problem is None, (policy, ranks, run.problem)
            np.testing.assert_array_equal(output_of(app, run), reference)


@pytest.mark.parametrize("mirrors", [True, False])
def test_sssp_round_stamps_across_phases(mirrors: bool):
    """SSSP with 4-wide windows: dozens of phases, each a run of an Iterate
    whose round stamp is not synchronized after every round
    (lowering/round_stamps.py): the clear between phases is computed on the
    mirrors too (irgl-distribute{mirrors}), or, without that, the stamp is
    synchronized once after each run, before the clear's broadcast; every
    rank count and policy gives the single rank's distances (without the
    one or the other they differ)."""
    app = load_app("sssp")
    narrow = replace(app, args=lambda ctx: [*app.args(ctx)[:-1], 4])
    _matches_single_rank(narrow, app.mlir, "rmat:7", "random:3", mirrors)


@pytest.mark.parametrize("mirrors", [True, False])
def test_round_stamp_in_a_loop_synchronized_after_each_run(mirrors: bool):
    """BFS twice in one Pipe with a round stamp cleared between the passes
    (programs/bfs_two_passes_stamped.mlir), and the levels are the single
    rank's. With irgl-distribute{mirrors} the clear runs on the mirrors too,
    so every copy is cleared; without it irgl-distribute synchronizes the
    stamp once after each pass instead of after every round (a loop encloses
    the Iterate): without that sync a mirror stamped while its master was
    not keeps the first pass's stamp through the clear's broadcast, the
    second pass does not push it, and levels beyond it stay unknown."""
    program = REPO / "test/python/programs/bfs_two_passes_stamped.mlir"
    _matches_single_rank("bfs", program, "rmat:8", "random:4", mirrors)


def test_pr_pull_refused_under_cvc():
    graph = graph_of("grid:5x4")
    with pytest.raises(DistributionError, match="reads the degree of %n"):
        run_app_distributed(load_app("pr_pull"), graph, 2, "cvc")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("bfs", "@init reads the graph.s size"),
        ("cc", "reads the degree of %v, a neighbour"),
        ("pr", "uses the value an atomic add on %residual returns"),
        ("dmr", "C text reads or writes %meta"),
        ("color", "indexes %nbhd with %row"),
    ],
)
def test_shipped_programs_refused(name: str, reason: str):
    """What the pass says about the shipped programs it cannot distribute."""
    graph = graph_of("grid:4x4")
    with pytest.raises(DistributionError, match="cannot distribute: .*" + reason):
        run_app_distributed(load_app(name), graph, 2, "oec")


# ------------------------------------------------------------ sync_nodes


def _on_two_ranks(graph: CSRGraph, step: Any) -> Communicator:
    """`step(ctx)` on each of 2 ranks of `graph` (oec), in threads as the
    interpreter runs them; returns the communicator (its counters)."""
    parts = partition_graph(graph, "oec", 2)
    comm = Communicator(2)
    errors: list[BaseException] = []

    def rank(r: int) -> None:
        try:
            step(RankContext(r, parts[r], comm))
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)
            comm.abort()

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return comm


def _sync_on_ranks(
    graph: CSRGraph,
    arrays: list[np.ndarray],
    before: list[np.ndarray],
    reduction,
    masters_only: bool = False,
) -> Communicator:
    """sync_nodes on 2 ranks of `graph` (oec), with the given contents and
    agreed copies; returns the communicator (its counters)."""

    def step(ctx: RankContext) -> None:
        r = ctx.rank
        ctx.agreed[id(arrays[r])] = (arrays[r], before[r])
        sync_nodes(ctx, xdsl_test.TestOp(), arrays[r], reduction, masters_only)

    return _on_two_ranks(graph, step)


def _reduce_on_ranks(
    local: list[np.ndarray],
    before: list[np.ndarray],
    items: list[list[int]],
    hot: list[int] | None = None,
    contexts: list[RankContext] | None = None,
) -> tuple[Communicator, list[list[int]]]:
    """sync_worklist reduce (min) on 2 ranks of path:8 (oec): each rank's
    contents, last copy and pushed items, and the hot nodes (global ids);
    the communicator and each rank's worklist after it (`contexts` collects
    the ranks' contexts)."""
    pipes = [PipeContext(in_=list(i)) for i in items]
    graph = generate("path:8")
    nodes = np.asarray(hot or [], dtype=np.int64)
    groups = hot_groups(nodes, partition_graph(graph, "oec", 2).owner(nodes), 2)

    def step(ctx: RankContext) -> None:
        r = ctx.rank
        ctx.hot = ctx.part.local_ids(groups)
        ctx.hot_min_active = hot_min_active(len(nodes))
        if contexts is not None:
            contexts.append(ctx)
        ctx.agreed[id(local[r])] = (local[r], before[r])
        sync_worklist_reduce(ctx, xdsl_test.TestOp(), pipes[r], local[r], Reduction.MIN)

    comm = _on_two_ranks(graph, step)
    return comm, [p.in_ for p in pipes]


def test_reduce_only_activates_a_master_where_a_pushed_mirror_improved_it():
    _, parts, _, local, before = _agreed_path8()
    mirror = parts[0].mirrors_owned_by[1][0]  # rank 1's first master
    master = int(parts[0].local_to_global[mirror]) - parts[1].master_offset
    local[0][mirror] = -5
    comm, lists = _reduce_on_ranks(local, before, [[int(mirror)], []])
    assert local[1][master] == -5 and lists[1] == [master]
    assert lists[0] == []  # the mirror went to its owner
    assert comm.stats.reduce_values == 1 and comm.stats.broadcast_values == 0


def test_reduce_only_keeps_a_master_the_pushed_mirror_did_not_improve():
    _, parts, _, local, before = _agreed_path8()
    mirror = parts[0].mirrors_owned_by[1][0]
    master = int(parts[0].local_to_global[mirror]) - parts[1].master_offset
    local[0][mirror] = before[0][mirror] - 1
    local[1][master] = before[0][mirror] - 3  # its own rank went lower
    comm, lists = _reduce_on_ranks(local, before, [[int(mirror)], []])
    assert local[1][master] == before[0][mirror] - 3 and lists == [[], []]
    # no broadcast: the mirror keeps its rank's value, above its master's
    assert local[0][mirror] == before[0][mirror] - 1


def _improved_master_of_rank1() -> tuple[Any, list[np.ndarray], list, int, int, int]:
    """path:8 on two ranks, rank 1's first master lowered to -7 by rank 1
    itself and pushed; rank 0 mirrors it: the partitioning, each rank's copy,
    agreed copy, the master's local id, rank 0's mirror and the global id."""
    _, parts, _, local, before = _agreed_path8()
    mirror = int(parts[0].mirrors_owned_by[1][0])
    node = int(parts[0].local_to_global[mirror])
    master = node - parts[1].master_offset
    local[1][master] = -7
    return parts, local, before, master, mirror, node


def test_reduce_only_refreshes_hot_mirrors_after_a_large_round():
    """A hot node's mirror takes its master's value after the exchange (an
    all-gather of the masters' values), as does the rank's last copy of it,
    so it is not sent back; a node off the list keeps lagging."""
    parts, local, before, master, mirror, node = _improved_master_of_rank1()
    contexts: list[RankContext] = []
    comm, lists = _reduce_on_ranks(local, before, [[], [master]], [node], contexts)
    assert lists == [[], [master]]
    assert local[0][mirror] == -7 and local[1][master] == -7
    rank0 = next(ctx for ctx in contexts if ctx.rank == 0)
    assert rank0.agreed[id(local[0])][1][mirror] == -7  # not sent back
    # each rank sent its group (one value, rank 0's a hole); no mirror
    # changed, so no pair went
    assert comm.stats.allgather_values == 2 and comm.stats.reduce_values == 0
    parts, local, before, master, mirror, node = _improved_master_of_rank1()
    _reduce_on_ranks(local, before, [[], [master]], hot=[(node + 1) % 8])
    assert local[0][mirror] == before[0][mirror]


def test_reduce_only_leaves_hot_mirrors_after_a_small_round():
    """A round that activated fewer masters than 1/16 of the hot nodes (here
    none: the master was lowered, not pushed) refreshes nothing."""
    parts, local, before, master, mirror, node = _improved_master_of_rank1()
    comm, _ = _reduce_on_ranks(local, before, [[], []], hot=list(range(8)))
    assert local[0][mirror] == before[0][mirror]
    assert comm.stats.allgather_values == 0


@pytest.mark.parametrize("name", ["cc", "sssp"])
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("schedule", ["sequential", "random:3"])
def test_hot_nodes_refreshed_give_the_same_result_with_fewer_atomics(
    name: str, ranks: int, schedule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every node hot (IRGL_DIST_HOT=N) against none (0): the single-rank
    output either way; the refresh's all-gathered values, and no more atomics
    (the refreshed mirrors' filters pass less often)."""
    app = app_of(name)
    runs = []
    for count in (str(graph_of(CASES[name][1]).num_nodes), "0"):
        monkeypatch.setenv("IRGL_DIST_HOT", count)
        run = _distributed(name, ranks, "oec", schedule)
        assert run.problem is None, run.problem
        np.testing.assert_array_equal(output_of(app, run), output_of(app, single(name)))
        runs.append(run)
    hot, cold = runs
    assert hot.comm.allgather_values > cold.comm.allgather_values
    assert hot.stats.atomics <= cold.stats.atomics


def test_reduce_only_refuses_a_pushed_mirror_it_would_not_carry():
    _, parts, _, local, before = _agreed_path8()
    mirror = int(parts[0].mirrors_owned_by[1][0])
    with pytest.raises(IrglRuntimeError, match="without changing its entry"):
        _reduce_on_ranks(local, before, [[mirror], []])


def test_sync_nodes_moves_only_updated_entries():
    graph = generate("path:8")
    parts = partition_graph(graph, "oec", 2)
    agreed = np.arange(8, dtype=np.int32) * 10
    local = [agreed[p.local_to_global].copy() for p in parts]
    before = [a.copy() for a in local]
    # rank 0 lowers its mirror of rank 1's first master; nothing else changes
    mirror = parts[0].mirrors_owned_by[1][0]
    node = int(parts[0].local_to_global[mirror])
    local[0][mirror] = -5
    comm = _sync_on_ranks(graph, local, before, Reduction.MIN)
    assert comm.stats.reduce_values == 1
    # the master took the minimum and told every mirror of it (one here)
    master = node - parts[1].master_offset
    assert local[1][master] == -5
    mirrored = sum(int(master in ids) for ids in parts[1].masters_mirrored_on)
    assert comm.stats.broadcast_values == mirrored
    for r, p in enumerate(parts.partitions):
        expected = agreed[p.local_to_global].copy()
        expected[p.local_to_global == node] = -5
        np.testing.assert_array_equal(local[r], expected)


def test_sync_nodes_add_sums_the_changes():
    graph = generate("path:6")
    parts = partition_graph(graph, "oec", 2)
    agreed = np.full(6, 1.5)
    local = [agreed[p.local_to_global].copy() for p in parts]
    before = [a.copy() for a in local]
    mirror = parts[0].mirrors_owned_by[1][0]
    node = int(parts[0].local_to_global[mirror])
    master = node - parts[1].master_offset
    local[0][mirror] += 2.0  # a contribution through the mirror
    local[1][master] += 4.0  # and one on the master's rank
    _sync_on_ranks(graph, local, before, Reduction.ADD)
    assert local[1][master] == 7.5
    assert local[0][mirror] == 7.5


def _agreed_path8() -> tuple[CSRGraph, Any, np.ndarray, list[np.ndarray], list]:
    """path:8 on two ranks (oec) with node ids as an agreed array: the graph,
    the partitioning, the global values, each rank's copy and agreed copy."""
    graph = generate("path:8")
    parts = partition_graph(graph, "oec", 2)
    agreed = np.arange(8, dtype=np.int32)
    local = [agreed[p.local_to_global].copy() for p in parts]
    return graph, parts, agreed, local, [a.copy() for a in local]


def test_sync_nodes_masters_only_broadcasts():
    graph, parts, agreed, local, before = _agreed_path8()
    # rank 1 changes its first master, which rank 0 mirrors
    local[1][0] = 99
    node = int(parts[1].local_to_global[0])
    comm = _sync_on_ranks(graph, local, before, Reduction.SET, masters_only=True)
    assert comm.stats.reduce_values == 0  # nothing went to a master
    assert comm.stats.broadcast_values == 1
    for r, p in enumerate(parts.partitions):
        expected = agreed[p.local_to_global].copy()
        expected[p.local_to_global == node] = 99
        np.testing.assert_array_equal(local[r], expected)


def test_sync_nodes_masters_only_refuses_an_updated_mirror():
    graph, parts, _, local, before = _agreed_path8()
    local[0][parts[0].mirrors_owned_by[1][0]] = -1
    with pytest.raises(IrglRuntimeError, match="masters_only: rank 0 updated a mirror"):
        _sync_on_ranks(graph, local, before, Reduction.SET, masters_only=True)


def test_sync_without_invocation_is_an_error():
    graph = generate("path:4")
    parts = partition_graph(graph, "oec", 1)
    ctx = RankContext(0, parts[0], Communicator(1))
    with pytest.raises(IrglRuntimeError, match="follows no invocation"):
        sync_nodes(ctx, xdsl_test.TestOp(), np.zeros(4, dtype=np.int32), Reduction.MIN)


FOLDED = [
    (name, policy, ranks)
    for name, (_, _, policies) in CASES.items()
    for policy in policies
    for ranks in (2, 3, 4)
]


@pytest.mark.parametrize(("name", "policy", "ranks"), FOLDED)
def test_folded_master_blocks_give_the_single_rank_result(
    name: str, policy: str, ranks: int
) -> None:
    """Folded master blocks (irgl_runner/partition_fold.py: each rank two id
    blocks, one from each end): the same output, a program's global ids and
    host-given nodes translated through the fold."""
    app = app_of(name)
    graph = graph_of(CASES[name][1])
    run = run_app_distributed(
        load_app(name),
        graph,
        ranks,
        policy,
        "random:5",
        source=source_of(graph),
        mlir=CASES[name][0],
        fold=True,
    )
    assert run.problem is None, run.problem
    result = output_of(app, run)
    reference = output_of(app, single(name))
    if result.dtype.kind == "f":
        np.testing.assert_allclose(result, reference, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_array_equal(result, reference)


@pytest.mark.parametrize("name", ["cc", "sssp"])
@pytest.mark.parametrize("policy", ["oec", "cvc"])
@pytest.mark.parametrize("schedule", ["sequential", "random:5"])
def test_round_stamps_tested_after_distribution_give_the_same_result(
    name: str, policy: str, schedule: str
) -> None:
    """irgl-stamp-test after irgl-distribute, as lower-irgl{distribute} runs
    them (`skew=0`: the test on every graph): the single-rank output, the
    same pushes, fewer atomics on some rank."""
    app = app_of(name)
    plain, tested = [
        _distributed(name, 3, policy, schedule, stamp_skew=skew) for skew in (None, 0)
    ]
    assert tested.problem is None, tested.problem
    np.testing.assert_array_equal(output_of(app, tested), output_of(app, single(name)))
    assert tested.stats.pushes == plain.stats.pushes
    assert tested.stats.atomics < plain.stats.atomics


@pytest.mark.parametrize("policy", ["oec", "cvc"])
@pytest.mark.parametrize(
    ("program", "values"),
    [("benchmarks/sssp/sssp.mlir", "dist"), ("benchmarks/cc/cc_lp.mlir", "comp")],
)
def test_round_stamps_of_the_apps_stay_unsynchronized(
    program: str, values: str, policy: str
):
    """SSSP's and CC's rounds synchronize their values only, never their
    round stamp (lowering/round_stamps.py): a change of the program that
    breaks the stamp's rule (SSSP's window steps under an `scf.if` once did)
    doubles the bytes a round sends on several GPUs, with the same result."""
    from irgl_runner.build import emit_program

    cuda = emit_program(REPO / program, f"lower-irgl{{distribute={policy}}}").cuda
    synced = re.findall(r"irgl_dist_sync_nodes_\w+\((\w+),", cuda)
    # under an edge-cut the values are reduced in the worklist's exchange
    reduced = re.findall(r"irgl_dist_sync_worklist_reduce_\w+\(\w+, (\w+),", cuda)
    assert (synced or reduced) and set(synced + reduced) == {values}
    assert bool(reduced) == (policy == "oec")


def _both_ways(
    name: str, ranks: int, schedule: str, option: str
) -> tuple[DistributedAppRun, DistributedAppRun]:
    """The case under oec with irgl-distribute's boolean `option` on, then
    off; both checked against the single rank's output."""
    app = app_of(name)
    runs = (
        _distributed(name, ranks, "oec", schedule, **{option: True}),
        _distributed(name, ranks, "oec", schedule, **{option: False}),
    )
    for run in runs:
        assert run.problem is None, run.problem
        np.testing.assert_array_equal(output_of(app, run), output_of(app, single(name)))
    return runs


@pytest.mark.parametrize("name", ["cc", "sssp"])
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("schedule", ["sequential", "random:3"])
def test_reduce_only_rounds_send_less_for_the_same_result(
    name: str, ranks: int, schedule: str
) -> None:
    """Under an edge-cut SSSP's distances and CC's labels are reduced in the
    worklist's exchange and never broadcast (lowering/reduce_only.py): the
    single-rank output, no broadcast values, fewer values and meetings than
    the full synchronization (`reduce_only=False`)."""
    lean, full = _both_ways(name, ranks, schedule, "reduce_only")
    assert lean.comm.broadcast_values == 0 < full.comm.broadcast_values
    assert lean.comm.total_values < full.comm.total_values
    assert lean.comm.meetings < full.comm.meetings


@pytest.mark.parametrize("name", ["cc", "sssp"])
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("schedule", ["sequential", "random:3"])
def test_mirror_pushes_take_no_worklist_slots(
    name: str, ranks: int, schedule: str
) -> None:
    """A reduce-only round kernel pushes a mirror by its pushed bit
    (`irgl_dist.push_mirror`, lowering/mirror_pushes.py): the single-rank
    output, fewer worklist pushes than with a slot for every mirror
    (`mirror_pushes=False`), and the same values sent."""
    lean, full = _both_ways(name, ranks, schedule, "mirror_pushes")
    assert lean.stats.pushes < full.stats.pushes
    assert lean.stats.mirror_pushes > 0 == full.stats.mirror_pushes
    if schedule == "sequential":  # the same order: the same updates
        assert lean.comm.reduce_values == full.comm.reduce_values


@pytest.mark.parametrize("policy", ["oec", "cvc"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_every_master_sync_skips_the_exchange_to_the_owners(
    policy: str, ranks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CC's first step pushes every node it visits, so every rank pushed all
    its masters: its worklist is synchronized `every_master`, one exchange
    fewer than the full synchronization (the pass made to miss the pattern),
    the same items sent, and the single rank's labels either way."""
    import lowering.distribute as distribute_pass

    app = app_of("cc")
    reference = output_of(app, single("cc"))
    lean = _distributed("cc", ranks, policy, "random:3")
    monkeypatch.setattr(distribute_pass, "_pushes_its_node", lambda *_: False)
    full = _distributed("cc", ranks, policy, "random:3")
    for run in (lean, full):
        assert run.problem is None, run.problem
        np.testing.assert_array_equal(output_of(app, run), reference)
    assert lean.comm.meetings == full.comm.meetings - 1
    assert lean.comm.worklist_items == full.comm.worklist_items


@pytest.mark.parametrize("name", ["cc", "sssp"])
@pytest.mark.parametrize("spec", ["star:40", "grid:6x5", "path:30", "hub:60:3"])
@pytest.mark.parametrize("ranks", [2, 3])
def test_reduce_only_matches_one_rank_on_other_shapes(
    name: str, spec: str, ranks: int
) -> None:
    """Reduce-only rounds on a hub, a grid, a path and a hub graph (mirrors
    that lag for many rounds): the single-rank output under a random
    schedule."""
    app = app_of(name)
    graph = generate(spec)
    source = source_of(graph)
    reference = run_app(app, graph, source=source)
    run = run_app_distributed(
        load_app(name),
        graph,
        ranks,
        "oec",
        "random:11",
        source=source,
        mlir=CASES[name][0],
    )
    assert run.problem is None, run.problem
    assert run.comm.broadcast_values == 0
    np.testing.assert_array_equal(output_of(app, run), output_of(app, reference))


@pytest.mark.parametrize("name", ["cc", "sssp"])
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("schedule", ["sequential", "random:3"])
def test_late_broadcast_brings_mirrors_up_to_date(
    name: str, ranks: int, schedule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`late_broadcast`: the reduce-only exchange also carries the masters
    changed since the last one to their mirrors: the single-rank output,
    broadcast values again, no more atomics than reduce-only alone (mirrors
    lag by a round at most; the hot nodes' refresh, which the late broadcast
    replaces, off)."""
    monkeypatch.setenv("IRGL_DIST_HOT", "0")
    late, lean = _both_ways(name, ranks, schedule, "late_broadcast")
    assert late.comm.broadcast_values > 0 == lean.comm.broadcast_values
    assert late.stats.atomics <= lean.stats.atomics
