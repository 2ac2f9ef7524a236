"""All eight benchmark applications on the CPU interpreter (no GPU): small
graphs with isolated nodes, self loops, duplicate edges and a star (cleaned
as `irgl-bench` cleans every input), under several schedules, each checked
by its app's own checker; DMR on a small mesh. Also `irgl-bench run
--backend interp`."""

from __future__ import annotations

import functools
import json
from types import SimpleNamespace

import numpy as np
import pytest

from irgl_interpreter.apps import run_app
from irgl_interpreter.dmr import compiler
from irgl_runner import bench_cli, generators
from irgl_runner.apps import AppSpec, load_app
from irgl_runner.graphs import COOGraph, CSRGraph, clean

GRAPH_APPS = ["bfs", "sssp", "cc", "mis", "mst", "pr", "pr_pull", "tc", "color"]
SCHEDULES = ["sequential", "random:7"]


def _mixed_raw() -> COOGraph:
    """18 nodes: a random core with duplicate edges and self loops, a star
    (hub 9, leaves 10..15) and isolated nodes 16 and 17."""
    rng = np.random.default_rng(5)
    core_src = rng.integers(0, 9, 20)
    core_dst = rng.integers(0, 9, 20)
    src = [*core_src.tolist(), 3, 3, 4, 9, 9, 9, 9, 9, 9, 2, 5]
    dst = [*core_dst.tolist(), 3, 7, 4, 10, 11, 12, 13, 14, 15, 2, 9]
    src += [3, 10]  # duplicates of 3->7 and of 9->10 reversed
    dst += [7, 9]
    weights = rng.integers(1, 20, len(src)).astype(np.int32)
    return COOGraph(18, np.array(src), np.array(dst), weights)


def _random_raw() -> COOGraph:
    coo = generators.uniform_random(40, 70, seed=3, raw=True)
    assert isinstance(coo, COOGraph)
    return coo


RAW = {"mixed": _mixed_raw, "random": _random_raw}


@functools.cache
def small_graph(name: str, symmetrize: bool, weighted: bool) -> CSRGraph:
    graph = clean(RAW[name](), symmetrize=symmetrize)
    if not weighted:
        graph.weights = None
    return graph


def test_mixed_graph_has_what_it_claims() -> None:
    raw = _mixed_raw()
    pairs = list(zip(raw.src.tolist(), raw.dst.tolist(), strict=True))
    assert any(s == d for s, d in pairs), "self loops"
    assert len(set(pairs)) < len(pairs), "duplicate edges"
    graph = small_graph("mixed", True, True)
    degrees = graph.degrees()
    assert degrees[16] == degrees[17] == 0, "isolated nodes"
    assert degrees[9] >= 6, "a star"


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("graph_name", sorted(RAW))
@pytest.mark.parametrize("name", GRAPH_APPS)
def test_app_on_interpreter(name: str, graph_name: str, schedule: str) -> None:
    app: AppSpec = load_app(name)
    graph = small_graph(graph_name, app.symmetrize, app.weighted)
    source = 9 if app.uses_source else 0  # the hub of the star, or node 9
    run = run_app(app, graph, schedule, source=source)
    assert run.problem is None, f"{name} on {graph_name} ({schedule}): {run.problem}"
    assert run.stats.invocations > 0


def test_schedules_change_the_execution_not_the_result() -> None:
    app = load_app("sssp")
    graph = small_graph("random", True, True)
    runs = [run_app(app, graph, s) for s in ("sequential", "reversed", "random:1")]
    assert all(r.problem is None for r in runs)
    dist = [r.ctx.outputs["dist"] for r in runs]
    assert all(np.array_equal(dist[0], d) for d in dist[1:])
    visits = {r.stats.edge_visits for r in runs}
    assert len(visits) > 1, "the orders should relax edges differently"


def test_sssp_windows_are_exact_across_gaps() -> None:
    """SSSP works in distance windows 2048 wide: weights of 0, of the width
    itself and of several widths (gaps that leave windows empty) still give
    the exact distances, in every schedule (the app's checker compares with
    the CPU reference)."""
    chain = [5000, 3000, 0, 1, 2047, 2048, 2049, 0, 4096, 7]
    src = [*range(10), 0, 2, 4, 1, 6, 3]
    dst = [*range(1, 11), 5, 7, 10, 9, 8, 11]
    weights = np.array([*chain, 9000, 4000, 10000, 20000, 4000, 2], dtype=np.int32)
    graph = clean(COOGraph(12, np.array(src), np.array(dst), weights), symmetrize=True)
    app = load_app("sssp")
    for schedule in ("sequential", "reversed", "random:4"):
        run = run_app(app, graph, schedule, source=0)
        assert run.problem is None, f"{schedule}: {run.problem}"
        dist = run.ctx.outputs["dist"]
        assert dist.max() > 7 * 2048, "the distances should span several windows"


def test_sssp_window_follows_density_and_hubs() -> None:
    """SSSP's window is 64 wide on a dense graph without hubs and 2048 on a
    sparse one or one with a hub, and the narrow one gives the exact
    distances with several windows (the app's checker: the CPU reference)."""
    from irgl_runner.rank_partitions import RankGraph

    app = load_app("sssp")
    dense = clean(generators.uniform_random(300, 3000, seed=4, raw=True), True)
    sparse = clean(generators.uniform_random(300, 600, seed=4, raw=True), True)
    hub = generators.generate("hub:300:1")

    def width(graph: CSRGraph | RankGraph) -> int:
        """The host function's last argument, the window's width."""
        ctx = SimpleNamespace(
            graph=graph, device_graph=None, arrays={"dist": None}, source=0
        )
        return app.args(ctx)[-1]  # type: ignore[arg-type]

    assert (width(dense), width(sparse), width(hub)) == (64, 2048, 2048)
    # a rank knows the global sizes and largest degree, not its partition's
    rank = RankGraph(300, dense.num_edges, np.zeros(0), None, dense.max_degree())  # type: ignore[arg-type]
    assert width(rank) == 64
    assert dense.weights is not None
    heavy = CSRGraph(300, dense.row_start, dense.edge_dst, dense.weights * 10)
    assert width(heavy) == 64
    for schedule in ("sequential", "random:2"):
        run = run_app(app, heavy, schedule, source=0)
        assert run.problem is None, f"{schedule}: {run.problem}"
        assert run.ctx.outputs["dist"].max() > 2 * 64, "several windows"


@pytest.mark.parametrize("schedule", ["sequential", "reversed", "random:4"])
def test_bfs_turns_bottom_up_on_a_heavy_frontier(schedule: str) -> None:
    """From RMAT's hub the second frontier holds most edges, so BFS hands
    the rest to `bfs_bottom_up`, whose nodes stop at their first parent:
    the levels are exact and far fewer edges are read than top-down reads
    (every edge of every reached node, once)."""
    graph = generators.generate("rmat:11")
    hub = int(np.argmax(np.diff(graph.row_start)))
    run = run_app(load_app("bfs"), graph, schedule, source=hub)
    assert run.problem is None, run.problem
    assert run.stats.edge_visits < graph.num_edges // 10


def test_bfs_stays_top_down_on_light_frontiers() -> None:
    """A graph whose frontiers never reach a quarter of its edges (a chain of
    cliques, six nodes each: more than 4 edges a node, diameter in the
    hundreds) stays top-down: every edge of every reached node is read
    exactly once."""
    cliques, size = 200, 6
    src, dst = [], []
    for c in range(cliques):
        members = range(c * size, (c + 1) * size)
        src += [a for a in members for b in members if a < b]
        dst += [b for a in members for b in members if a < b]
        if c + 1 < cliques:
            src.append(c * size + size - 1)
            dst.append((c + 1) * size)
    graph = clean(
        COOGraph(cliques * size, np.array(src), np.array(dst), None), symmetrize=True
    )
    assert graph.num_edges > 4 * graph.num_nodes
    run = run_app(load_app("bfs"), graph, "random:2", source=0)
    assert run.problem is None, run.problem
    assert run.stats.edge_visits == graph.num_edges


needs_cxx = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler")


@needs_cxx
@pytest.mark.parametrize("schedule", ["sequential", "random:3,fail=0.3"])
def test_dmr_on_interpreter(schedule: str) -> None:
    app = load_app("dmr")
    app.params["points"] = 24
    graph = generators.generate("random:24:0")
    run = run_app(app, graph, schedule)
    assert run.problem is None, run.problem
    assert run.ctx.result == 0
    meta = run.ctx.outputs["meta"]
    assert meta[10] > 0, "the mesh had bad triangles to refine"


def test_irgl_bench_run_backend_interp(capsys: pytest.CaptureFixture[str]) -> None:
    rc = bench_cli.main(
        [
            "run",
            "bfs",
            "--graph",
            "random:30:60",
            "--backend",
            "interp",
            "--schedule",
            "random:2",
            "--reps",
            "1",
            "--no-cache",
        ]
    )
    assert rc == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["app"] == "bfs"
    assert record["check"] == "passed"
    assert record["backend"] == "interp"
    assert record["schedule"] == "random:2"
    assert "CPU interpreter" in record["gpu"]
    assert record["edges"] > 0 and len(record["times_ms"]) == 1


def test_dmr_record_reports_the_refined_mesh(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """DMR's JSON record carries the refined mesh next to the time (the
    app's `describe`): its triangles and points, and a smallest angle of at
    least 30 degrees where the input's was below it."""
    args = ["run", "dmr", "--graph", "random:40:0", "--no-cache", "--reps", "1"]
    assert bench_cli.main([*args, "--backend", "interp"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["check"] == "passed"
    assert record["initial_min_angle"] < 30.0 <= record["min_angle"]
    assert record["triangles"] > record["initial_triangles"]
    assert record["points"] == 40 + record["inserted"] + record["split"]


def test_irgl_bench_bad_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "bfs", "--graph", "random:5:5", "--no-cache", "--backend"]
    assert bench_cli.main([*args, "interp", "--schedule", "random"]) == 2
    assert "random needs a seed" in capsys.readouterr().err
    assert bench_cli.main([*args, "cuda", "--schedule", "reversed"]) == 2
    assert "only to --backend interp" in capsys.readouterr().err


def _rmat_with_a_small_component(size: int) -> tuple[CSRGraph, int]:
    """RMAT 11 (dense: more than 4 edges a node, with isolated nodes) plus a
    path of `size` nodes of its own; returns the graph and the path's first
    node."""
    core = generators.generate("rmat:11").to_coo()
    n = core.num_nodes
    path_src = np.arange(n, n + size - 1)
    weights = None
    if core.weights is not None:
        weights = np.concatenate(
            [core.weights, np.ones(size - 1, dtype=core.weights.dtype)]
        )
    graph = clean(
        COOGraph(
            n + size,
            np.concatenate([core.src, path_src]),
            np.concatenate([core.dst, path_src + 1]),
            weights,
        ),
        symmetrize=True,
    )
    assert graph.num_edges > 4 * graph.num_nodes
    return graph, n


@pytest.mark.parametrize("app_name", ["bfs", "sssp"])
@pytest.mark.parametrize("schedule", ["sequential", "reversed", "random:4"])
def test_work_proportional_to_what_is_reached(app_name: str, schedule: str) -> None:
    """From an isolated source BFS and SSSP read no edge (at most 64, the
    issue's bound), and from a source in a 6-node path they read only the
    path's edges (BFS: each once; SSSP: a few times at most): a frontier that
    runs dry ends the search, with no bottom-up pass over the rest of the
    graph."""
    size = 6
    graph, first = _rmat_with_a_small_component(size)
    isolated = int(np.flatnonzero(graph.degrees() == 0)[0])
    app = load_app(app_name)
    run = run_app(app, graph, schedule, source=isolated)
    assert run.problem is None, run.problem
    assert run.stats.edge_visits <= 64
    run = run_app(app, graph, schedule, source=first)
    assert run.problem is None, run.problem
    path_edges = 2 * (size - 1)
    if app_name == "bfs":
        assert run.stats.edge_visits == path_edges
    else:
        assert run.stats.edge_visits <= 4 * path_edges
