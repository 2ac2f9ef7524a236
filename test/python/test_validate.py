"""The linear-time validators (irgl_runner.validate): they accept the CPU
references' results and reject each kind of wrong one."""

from __future__ import annotations

import numpy as np
import pytest

from irgl_runner import validate
from irgl_runner.generators import generate
from irgl_runner.graphs import CSRGraph
from irgl_runner.reference import INF, bfs_levels, cc_min_labels, sssp_distances
from irgl_runner.validate import cc_labels_problem, distances_problem, edge_blocks

GRAPHS = ["rmat:8", "grid:9x7", "islands:300:5", "star:50", "path:40"]


def _source(graph: CSRGraph) -> int:
    return int(np.argmax(graph.degrees()))


@pytest.mark.parametrize("spec", GRAPHS)
def test_edge_blocks_cover_every_edge_once(spec: str) -> None:
    g = generate(spec)
    parts = list(edge_blocks(g, block_edges=7))
    src = np.concatenate([p[0] for p in parts])
    dst = np.concatenate([p[1] for p in parts])
    np.testing.assert_array_equal(src, g.edge_src())
    np.testing.assert_array_equal(dst, g.edge_dst)
    assert len(parts) > 1 or g.num_edges <= 7


@pytest.mark.parametrize("spec", GRAPHS)
def test_references_pass(spec: str) -> None:
    g = generate(spec)
    s = _source(g)
    assert distances_problem("level", g, s, bfs_levels(g, s), weighted=False) is None
    assert distances_problem("dist", g, s, sssp_distances(g, s), weighted=True) is None
    assert cc_labels_problem(g, cc_min_labels(g)) is None


def test_wrong_distances_are_named() -> None:
    g = generate("rmat:8")
    s = _source(g)
    good = sssp_distances(g, s).astype(np.int64)
    reached = np.flatnonzero((good != INF) & (np.arange(g.num_nodes) != s))
    v = int(reached[-1])

    def problem(d: np.ndarray) -> str | None:
        return distances_problem("dist", g, s, d, weighted=True)

    too_far = good.copy()
    too_far[v] += 1  # an edge now shortens it
    assert "shortens node" in (problem(too_far) or "")
    too_near = good.copy()
    too_near[v] -= 1  # nothing puts it there (or an edge from it shortens another)
    assert problem(too_near) is not None
    unreached = good.copy()
    unreached[v] = INF
    assert "shortens node" in (problem(unreached) or "")
    bad_source = good.copy()
    bad_source[s] = 1
    assert "the source" in (problem(bad_source) or "")
    assert "values, expected" in (problem(good[:-1]) or "")
    # every distance one lower but the source: each loses its tight edge
    lower = np.where(good == INF, INF, np.maximum(good - 1, 0))
    lower[s] = 0
    assert problem(lower) is not None


def test_an_isolated_reach_is_caught() -> None:
    # two islands: claiming the other island reached needs tight edges
    g = generate("islands:40:2")
    s = 0
    good = bfs_levels(g, s).astype(np.int64)
    far = np.flatnonzero(good == INF)
    assert far.size
    fake = good.copy()
    fake[far] = 3  # internally consistent? no: nothing reaches them from s
    assert distances_problem("level", g, s, fake, weighted=False) is not None


def test_wrong_labels_are_named() -> None:
    g = generate("islands:300:5")
    good = cc_min_labels(g).astype(np.int64)
    assert cc_labels_problem(g, good) is None
    # a component labelled with a larger member: some node is below its label
    comp = good[good != np.arange(g.num_nodes)]
    root = int(good[np.flatnonzero(good != np.arange(g.num_nodes))[0]])
    members = np.flatnonzero(good == root)
    relabelled = good.copy()
    relabelled[members] = members.max()
    assert "at most its own" in (cc_labels_problem(g, relabelled) or "")
    # one node split off its component
    split = good.copy()
    split[members[-1]] = members[-1]
    assert "joins labels" in (cc_labels_problem(g, split) or "")
    # a label that is not labelled with itself
    chained = good.copy()
    chained[root] = 0 if root else 1
    assert cc_labels_problem(g, chained) is not None
    assert comp.size  # the graph has non-trivial components


def test_blocks_on_threads_give_the_serial_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Blocks of 7 edges on 4 threads: the same verdicts and the same first
    wrong edge as one thread."""
    g = generate("rmat:8")
    s = _source(g)
    good = sssp_distances(g, s).astype(np.int64)
    reached = np.flatnonzero((good != INF) & (np.arange(g.num_nodes) != s))
    too_far = good.copy()
    too_far[reached[::7]] += 1
    labels = cc_min_labels(g).astype(np.int64)
    split = labels.copy()
    split[reached[-1]] = reached[-1]

    def verdicts() -> list[str | None]:
        return [
            distances_problem("dist", g, s, good, weighted=True),
            distances_problem("dist", g, s, too_far, weighted=True),
            cc_labels_problem(g, labels),
            cc_labels_problem(g, split),
        ]

    monkeypatch.setattr(validate, "BLOCK_EDGES", 7)
    monkeypatch.setenv("IRGL_GEN_THREADS", "1")
    serial = verdicts()
    monkeypatch.setenv("IRGL_GEN_THREADS", "4")
    assert len(validate.row_spans(g)) > 4
    assert verdicts() == serial
    assert serial[0] is None and serial[2] is None
    assert "shortens node" in (serial[1] or "") and "joins labels" in (serial[3] or "")
