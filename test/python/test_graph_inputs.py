"""Graphs from memory (numpy edge lists, edge_index, scipy, networkx) through
the one cleaning path; graphs passed directly to the interpreter; apps that
reject light edges (SSSP's negative weights) at load; the README's
interpreter example."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from irgl_interpreter import load_program, run_host
from irgl_runner import bench_cli
from irgl_runner.apps import execute, load_app
from irgl_runner.generators import generate
from irgl_runner.graphs import (
    COOGraph,
    CSRGraph,
    GraphFormatError,
    as_graph,
    check_min_weight,
    clean,
)
from irgl_runner.reference import bfs_levels

REPO = Path(__file__).resolve().parents[2]
INF = 1073741823


def same(a: CSRGraph, b: CSRGraph) -> None:
    """Assert two CSR graphs are identical (weights included)."""
    assert a.num_nodes == b.num_nodes
    np.testing.assert_array_equal(a.row_start, b.row_start)
    np.testing.assert_array_equal(a.edge_dst, b.edge_dst)
    if a.weights is None or b.weights is None:
        assert a.weights is None and b.weights is None
    else:
        np.testing.assert_array_equal(a.weights, b.weights)


def random_edges(seed: int = 5, n: int = 30, m: int = 120):
    """Raw edges with duplicates and self loops (what clean() must handle)."""
    rng = np.random.default_rng(seed)
    return (
        n,
        rng.integers(0, n, m),
        rng.integers(0, n, m),
        rng.integers(1, 50, m),
    )


# ------------------------------------------------------------------ numpy edges


@pytest.mark.parametrize("symmetrize", [False, True])
def test_from_edges_is_clean_of_the_coo(symmetrize: bool) -> None:
    n, src, dst, w = random_edges()
    g = CSRGraph.from_edges(src, dst, w, num_nodes=n, symmetrize=symmetrize)
    same(g, clean(COOGraph(n, src, dst, w), symmetrize=symmetrize))
    assert not np.any(g.edge_src() == g.edge_dst)  # self loops dropped
    g.validate()


def test_from_edges_lists_floats_and_node_count() -> None:
    g = CSRGraph.from_edges([0, 1, 1], [1, 2, 2], [4.0, 3.0, 9.0])
    assert g.num_nodes == 3  # max id + 1
    assert g.edge_dst.tolist() == [1, 2] and g.weights is not None
    assert g.weights.tolist() == [4, 3]  # the duplicate keeps the smaller weight
    assert CSRGraph.from_edges([0], [1], num_nodes=10).num_nodes == 10
    empty = CSRGraph.from_edges(np.zeros(0, int), np.zeros(0, int))
    assert empty.num_nodes == 0 and empty.num_edges == 0


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"src": [0, -1], "dst": [1, 0]}, "source node id -1 out of range"),
        ({"src": [0, 1], "dst": [1]}, "1-D arrays of one length"),
        ({"src": [0.5], "dst": [1]}, "src has non-integer values"),
        ({"src": ["a"], "dst": [1]}, "src must hold integers"),
        ({"src": [0, 1], "dst": [1, 0], "weights": [1]}, "1 weights for 2 edges"),
        ({"src": [0], "dst": [1], "weights": [0.5]}, "non-integer values"),
        ({"src": [0], "dst": [1], "weights": [2**40]}, "do not fit in int32"),
        ({"src": [0], "dst": [5], "num_nodes": 3}, "destination node id 5"),
    ],
)
def test_from_edges_rejects_bad_input(kwargs: dict, fragment: str) -> None:
    with pytest.raises(GraphFormatError, match=re.escape(fragment)):
        CSRGraph.from_edges(**kwargs)


def test_from_edges_num_nodes_must_be_an_int() -> None:
    with pytest.raises(TypeError, match="num_nodes must be an int"):
        CSRGraph.from_edges([0], [1], num_nodes="3")  # type: ignore[arg-type]


def test_from_edge_index() -> None:
    n, src, dst, w = random_edges(seed=8)
    ei = np.stack([src, dst])
    same(
        CSRGraph.from_edge_index(ei, w, num_nodes=n),
        CSRGraph.from_edges(src, dst, w, num_nodes=n),
    )
    with pytest.raises(GraphFormatError, match="pass its transpose"):
        CSRGraph.from_edge_index(ei.T)
    with pytest.raises(GraphFormatError, match=r"expected \(2, E\)"):
        CSRGraph.from_edge_index(src)


def test_from_edge_index_torch_tensor() -> None:
    torch = pytest.importorskip("torch")
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    g = CSRGraph.from_edge_index(ei, torch.tensor([3.0, 4.0, 5.0]))
    assert g.edge_dst.tolist() == [1, 2, 0]
    assert g.weights is not None and g.weights.tolist() == [3, 4, 5]


# ------------------------------------------------------------------------ scipy


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"])
def test_from_scipy_any_format(fmt: str) -> None:
    g = generate("random:40:160")
    m = g.to_scipy().asformat(fmt)
    same(CSRGraph.from_scipy(m), g)
    same(CSRGraph.from_scipy(sp.csr_array(g.to_scipy())), g)  # sparse arrays too


def test_from_scipy_values_and_options() -> None:
    dense = np.array([[0, 3, 0], [0, 0, 7], [2, 0, 0]])
    g = CSRGraph.from_scipy(sp.csr_matrix(dense))
    assert g.edge_dst.tolist() == [1, 2, 0] and g.weights is not None
    assert g.weights.tolist() == [3, 7, 2]
    assert CSRGraph.from_scipy(sp.csr_matrix(dense), weighted=False).weights is None
    assert CSRGraph.from_scipy(sp.csr_matrix(dense != 0)).weights is None
    both = CSRGraph.from_scipy(sp.csr_matrix(dense), symmetrize=True)
    assert both.num_edges == 6
    with pytest.raises(GraphFormatError, match="3x2; a graph needs a square"):
        CSRGraph.from_scipy(sp.csr_matrix(np.ones((3, 2))))
    with pytest.raises(GraphFormatError, match="non-integer"):
        CSRGraph.from_scipy(sp.csr_matrix(np.array([[0, 0.5], [0, 0]])))
    with pytest.raises(TypeError, match="needs a scipy sparse matrix"):
        CSRGraph.from_scipy(dense)


# --------------------------------------------------------------------- networkx


def test_from_networkx() -> None:
    nx = pytest.importorskip("networkx")
    und = nx.Graph()
    und.add_edge(0, 1, weight=4)
    und.add_edge(1, 2)  # no weight: 1
    und.add_edge(2, 2, weight=9)  # self loop: dropped
    g = CSRGraph.from_networkx(und)
    assert g.num_nodes == 3 and g.weights is not None
    assert list(
        zip(g.edge_src().tolist(), g.edge_dst.tolist(), g.weights.tolist(), strict=True)
    ) == [
        (0, 1, 4),
        (1, 0, 4),
        (1, 2, 1),
        (2, 1, 1),
    ]
    assert CSRGraph.from_networkx(und, weight=None).weights is None

    di = nx.DiGraph([(2, 0), (0, 1)])  # ids 0..n-1 in another order keep their ids
    d = CSRGraph.from_networkx(di)
    assert d.weights is None
    assert list(zip(d.edge_src().tolist(), d.edge_dst.tolist(), strict=True)) == [
        (0, 1),
        (2, 0),
    ]
    assert CSRGraph.from_networkx(di, symmetrize=True).num_edges == 4

    multi = nx.MultiDiGraph()
    multi.add_edge("a", "b", weight=5)
    multi.add_edge("a", "b", weight=2)
    mg = CSRGraph.from_networkx(multi)  # labels numbered in node order
    assert mg.num_edges == 1 and mg.weights is not None and mg.weights.tolist() == [2]

    bad = nx.Graph()
    bad.add_edge(0, 1, weight="heavy")
    with pytest.raises(GraphFormatError, match="non-numeric"):
        CSRGraph.from_networkx(bad)
    with pytest.raises(TypeError, match="needs a networkx graph"):
        CSRGraph.from_networkx([(0, 1)])


def test_from_networkx_matches_generator() -> None:
    nx = pytest.importorskip("networkx")
    g = generate("grid:5x4")
    h = nx.from_scipy_sparse_array(g.to_scipy(), create_using=nx.DiGraph)
    same(CSRGraph.from_networkx(h), g)


# ---------------------------------------------------------------------- as_graph


def test_as_graph() -> None:
    g = generate("random:20:60")
    assert as_graph(g) is g
    same(as_graph(g.to_scipy()), g)
    with pytest.raises(TypeError, match=r"CSRGraph\.from_edge_index"):
        as_graph(np.zeros((2, 3), dtype=int))
    with pytest.raises(TypeError, match="a scipy sparse matrix or a networkx graph"):
        as_graph("graph.gr")


def test_check_min_weight() -> None:
    g = CSRGraph.from_edges([0, 1, 2], [1, 2, 0], [5, -3, 1])
    check_min_weight(g, -3, "fine")
    with pytest.raises(GraphFormatError, match="edge 1 -> 2 has weight -3; why"):
        check_min_weight(g, 0, "why")
    unweighted = CSRGraph.from_edges([0], [1])
    check_min_weight(unweighted, 1, "ones are fine")
    with pytest.raises(GraphFormatError, match="edge 0 -> 1 has weight 1"):
        check_min_weight(unweighted, 2, "too light")


# ------------------------------------------------------ graphs into the interpreter


@pytest.fixture(scope="module")
def bfs_module():
    return load_program(REPO / "benchmarks" / "bfs" / "bfs.mlir")


def test_run_host_accepts_scipy_and_networkx(bfs_module) -> None:
    g = generate("random:40:120")
    expected = bfs_levels(g, 0)
    inputs: list[object] = [g.to_scipy(), sp.coo_array(g.to_scipy())]
    try:
        import networkx as nx

        inputs.append(nx.from_scipy_sparse_array(g.to_scipy(), create_using=nx.DiGraph))
    except ImportError:
        pass
    for graph in inputs:
        level = np.full(g.num_nodes, INF, dtype=np.int32)
        run_host(bfs_module, "main", [graph, level, 0])
        np.testing.assert_array_equal(level, expected, err_msg=type(graph).__name__)


def test_run_host_rejects_non_graphs(bfs_module) -> None:
    level = np.full(4, INF, dtype=np.int32)
    with pytest.raises(TypeError, match=r"argument 0 of @main .*expected a graph"):
        run_host(bfs_module, "main", [np.zeros((2, 3), dtype=int), level, 0])


# -------------------------------------------------------- light edges at load


@pytest.mark.parametrize(
    ("app", "line", "fragment"),
    [
        ("sssp", "0 1 -1", "edge 0 -> 1 has weight -1; sssp needs edge weights >= 0"),
        ("mst", "0 1 0", "edge 0 -> 1 has weight 0; mst needs edge weights >= 1"),
    ],
)
def test_cli_rejects_light_edges(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    app: str,
    line: str,
    fragment: str,
) -> None:
    path = tmp_path / "n.txt"
    path.write_text(line + "\n")
    code = bench_cli.main(["run", app, "--graph", str(path), "--backend", "interp"])
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err and str(path) in err


def test_cli_negative_sssp_subprocess_ends(tmp_path: Path) -> None:
    """The issue's reproducer: it looped forever; now exit 2, no traceback."""
    path = tmp_path / "n.txt"
    path.write_text("0 1 -1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "irgl_runner.bench_cli", "run", "sssp"]
        + ["--graph", str(path), "--backend", "interp"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "negative" in proc.stderr and "Traceback" not in proc.stderr


def test_execute_rejects_light_edges_before_running() -> None:
    class NoProgram:
        """Any use would fail the test: the check comes first."""

        last_result = None

        def upload_graph(self, graph: CSRGraph) -> object:
            raise AssertionError("uploaded a graph the app rejects")

        def alloc(self, n: int, dtype: object) -> object:
            raise AssertionError("allocated")

        def time_call(self, host_fn: str, *args: object) -> float:
            raise AssertionError("ran")

    g = CSRGraph.from_edges([0, 1], [1, 2], [3, -1], symmetrize=True)
    with pytest.raises(GraphFormatError, match="sssp needs edge weights >= 0"):
        execute(load_app("sssp"), NoProgram(), g)


# -------------------------------------------------------------- README example


def readme_python_blocks() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_interpreter_example_runs() -> None:
    blocks = [b for b in readme_python_blocks() if "run_host" in b]
    assert blocks, "README has no interpreter example"
    for block in blocks:
        proc = subprocess.run(
            [sys.executable, "-c", block],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr


def test_readme_gpu_example_is_self_contained() -> None:
    """Every name the GPU example reads is imported or assigned in it (it
    used an undefined ``graph``); the GPU run is in test_array_interop."""
    import ast
    import builtins

    (block,) = [b for b in readme_python_blocks() if "Program(" in b]
    tree = ast.parse(block)
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    used = {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    assert not used - defined, f"undefined in the README: {sorted(used - defined)}"
