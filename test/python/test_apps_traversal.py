"""BFS, SSSP and connected components compiled from IrGL: they lower and
compile with nvcc (CI), and on a GPU they agree exactly with scipy's
csgraph on RMAT, 2D-grid, random graphs (built from raw inputs with isolated
nodes, duplicate edges and self loops; a sparse and a dense one), a star, a
hub-heavy graph and a path."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import has_gpu, nvcc_object_errors

from irgl_runner import generators
from irgl_runner.apps import AppSpec, execute, load_app
from irgl_runner.graph_args import default_source
from irgl_runner.graphs import CSRGraph, clean

APPS = ["bfs", "sssp", "cc"]


def _raw_random(n: int, m: int, seed: int) -> CSRGraph:
    coo = generators.uniform_random(n, m, seed=seed, raw=True)
    assert not isinstance(coo, CSRGraph)
    return clean(coo, symmetrize=True)


GRAPHS = {
    "rmat10": lambda: generators.rmat(10, seed=3),
    "grid": lambda: generators.grid2d(37, 23, seed=5),
    "random-raw": lambda: _raw_random(3000, 4000, seed=11),
    # dense, no hub: SSSP's narrow windows (benchmarks/sssp/app.py, `window`)
    "random-dense": lambda: _raw_random(4000, 40000, seed=13),
    "star": lambda: generators.generate("star:5000"),
    "hub": lambda: generators.generate("hub:50000:2"),
    "path": lambda: generators.generate("path:3000"),
}


@functools.cache
def _program(name: str):
    from irgl_runner.api import Program, build

    return Program(build(load_app(name).mlir))


@pytest.mark.parametrize("name", APPS)
def test_app_compiles_with_nvcc(name: str, tmp_path) -> None:
    from irgl_runner.api import emit_cuda

    app: AppSpec = load_app(name)
    assert nvcc_object_errors(emit_cuda(app.mlir)) is None


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", APPS)
def test_app_matches_scipy(name: str, graph_name: str) -> None:
    assert has_gpu()
    app = load_app(name)
    graph = GRAPHS[graph_name]()
    source = (
        default_source(graph, generators.parse_spec("rmat:10")) if name != "cc" else 0
    )
    ctx = execute(app, _program(name), graph, source=source, reps=1, warmup=0)
    assert app.check is not None and app.check(ctx) is None


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["bfs", "sssp"])
def test_one_program_over_graphs_of_changing_size(name: str) -> None:
    """One program, one host thread, graphs large, small, large again and a
    source with no edges: the runtime keeps a pipe's items for the next
    call (reused where they fit, replaced where not), clears the scratch
    slab before the next call's first piece, grows it for node arrays
    larger than it (SSSP's stamps on 150,000 nodes: 600 KB) and reads the
    control kernel's status from mapped host memory; every result is the
    reference's."""
    assert has_gpu()
    app = load_app(name)
    program = _program(name)
    isolated = _raw_random(3000, 500, seed=2)  # many nodes without edges
    lonely = int(np.flatnonzero(isolated.degrees() == 0)[0])
    large = _raw_random(150_000, 300_000, seed=6)
    runs = [
        (generators.rmat(12, seed=4), 0),
        (generators.generate("path:50"), 3),
        (large, 1),
        (generators.rmat(13, seed=9), 5),
        (isolated, lonely),
        (generators.grid2d(9, 7, seed=1), 0),
        (large, 7),
    ]
    for graph, source in runs:
        ctx = execute(app, program, graph, source=source, reps=2, warmup=1)
        assert app.check is not None and app.check(ctx) is None, (graph, source)


@pytest.mark.gpu
def test_calls_from_threads_that_end() -> None:
    """Calls from host threads that end in turn (each with its own scratch
    slab, kept pipe items and mapped status word, freed at its exit), then
    from this thread: every result is the reference's."""
    import threading

    assert has_gpu()
    app = load_app("bfs")
    program = _program("bfs")
    graph = generators.generate("rmat:11")
    problems: list[str | None] = []

    def one_call(source: int) -> None:
        ctx = execute(app, program, graph, source=source, reps=2, warmup=0)
        assert app.check is not None
        problems.append(app.check(ctx))

    for source in (0, 7, 19):
        worker = threading.Thread(target=one_call, args=(source,))
        worker.start()
        worker.join()
    one_call(3)
    assert problems == [None] * 4


@pytest.mark.parametrize("source", [0, 1, 1500])
def test_bfs_leaves_a_star_hub_to_the_bottom_up_pass(source: int) -> None:
    """A node with more than a quarter of the edges (a star's hub) is not
    expanded top-down: the level it would fill is done bottom-up, from the
    hub (one top-down round) or from a leaf (two), on the interpreter in a
    random order: the levels are the reference's either way."""
    from irgl_interpreter.apps import run_app

    graph = generators.generate("star:2000")
    graph.weights = None
    run = run_app(load_app("bfs"), graph, "random:5", source=source)
    assert run.problem is None
    top_down = 1 if source == 0 else 2
    # init, the top-down rounds, bottom-up for the leaves (or the hub and
    # then the leaves), and the pass that finds nothing left
    assert run.stats.invocations <= 1 + top_down + 3


def _undirected(edges: list[tuple[int, int]]) -> CSRGraph:
    from irgl_runner.graphs import COOGraph

    pairs = np.array(edges, dtype=np.int64)
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    return clean(COOGraph(int(pairs.max()) + 1, src, dst, None))


CC_HUB_GRAPHS = {
    "star": lambda: generators.generate("star:2000"),
    "edge": lambda: generators.generate("path:2"),  # both ends hold half
    "two-stars": lambda: _undirected(
        [(0, i) for i in range(2, 50)] + [(1, i) for i in range(50, 90)] + [(0, 1)]
    ),
    "star-and-pair": lambda: _undirected([(5, i) for i in range(6, 60)] + [(1, 2)]),
}


@pytest.mark.parametrize("graph_name", sorted(CC_HUB_GRAPHS))
@pytest.mark.parametrize("schedule", ["sequential", "reversed", "random:2"])
def test_cc_hub_edges_hooked_from_the_leaves(graph_name: str, schedule: str) -> None:
    """CC leaves the edges of a node holding half of them to its neighbours
    (each edge is theirs too); no edge is lost, whatever the order."""
    from irgl_interpreter.apps import run_app

    graph = CC_HUB_GRAPHS[graph_name]()
    graph.weights = None
    assert run_app(load_app("cc"), graph, schedule).problem is None
