"""benchmarks/color/work.py: the CPU count of what colour's drain attempts
and the replay of its claim rounds (the figures in docs/performance-notes.md,
"Solo windows in the drain")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from irgl_runner.graph_args import resolve_graph

WORK = Path(__file__).resolve().parents[2] / "benchmarks" / "color" / "work.py"


@pytest.fixture(scope="module")
def work() -> ModuleType:
    spec = importlib.util.spec_from_file_location("color_work", WORK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["color_work"] = module  # its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


def test_a_star_runs_one_leaf_a_round(work: ModuleType) -> None:
    """Every leaf claims the hub: the hub wins first (the largest claim),
    then one leaf a round, whatever the order."""
    graph, _ = resolve_graph("star:40", True, False, None)
    for fixed in (False, True):
        rounds = work.claim_rounds(graph, fixed)
        assert len(rounds) == graph.num_nodes
        assert all(won == 1 for _, won in rounds)
    drained = work.drained_work(graph)
    assert (drained.first_round_winners, drained.drained) == (1, graph.num_nodes - 1)
    assert drained.max_colour == 1


@pytest.mark.parametrize("spec", ["rmat:8", "grid:6x5", "random:200:600"])
def test_rounds_and_work_add_up(work: ModuleType, spec: str) -> None:
    graph, _ = resolve_graph(spec, True, False, None)
    degrees = graph.degrees()
    rounds = work.claim_rounds(graph)
    assert sum(won for _, won in rounds) == graph.num_nodes
    assert all(won >= 1 for _, won in rounds)  # the highest priority always wins
    # a node and its neighbours are pairwise in conflict
    assert len(rounds) >= int(degrees.max()) + 1
    drained = work.drained_work(graph)
    assert drained.first_round_winners + drained.drained == graph.num_nodes
    # the same first round as the replay with each node's id as its rank
    assert drained.first_round_winners == work.claim_rounds(graph, True)[0][1]
    assert drained.scanned_edges >= drained.drained_degrees
    assert drained.max_colour <= int(degrees.max())  # greedy: at most d colours + 1


def test_priorities_match_the_runtime(work: ModuleType) -> None:
    """irgl_claim_priority: bit length of the size in bits 25.., then the low
    25 bits of rank * 0x9E3779B1, plus one."""
    prio = work._priorities(np.array([1, 2, 3, 4, 100]), np.array([0, 1, 2, 3, 4]))
    expected = [
        (1 << 25) + 1,
        (2 << 25) + ((1 * 0x9E3779B1) & 0x1FFFFFF) + 1,
        (2 << 25) + ((2 * 0x9E3779B1) & 0x1FFFFFF) + 1,
        (3 << 25) + ((3 * 0x9E3779B1) & 0x1FFFFFF) + 1,
        (7 << 25) + ((4 * 0x9E3779B1) & 0x1FFFFFF) + 1,
    ]
    assert prio.tolist() == expected
