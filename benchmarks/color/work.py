"""What greedy colouring's Exclusives leave to run one after another, counted
on the CPU (no GPU needed).

    python3 benchmarks/color/work.py rmat:14 rmat:16 [--rounds] [--fixed]

``color.mlir``'s contenders each claim their closed neighbourhood, so two
nodes conflict when they are at most two hops apart. Two counts:

- ``drained_work``: the nodes that lose the first round (sized priorities:
  the bit length of the claim's size, then a hash of the thread's rank, as
  ``irgl_claim_priority``), which a drain then attempts, and the edges their
  colour scans read (each scan once per 64-colour band its colour needs,
  colours as a greedy colouring in the order first-round winners, then the
  rest by id). Divided into a measured time, it gives the cost per item and
  per edge of the drain (docs/performance-notes.md).
- ``claim_rounds`` (``--rounds``): a replay of the three-phase claim rounds
  (every contender writes its priority to each cell of its neighbourhood;
  one whose priority stands on all of them wins), the priorities rehashed
  every round (the GPU ranks change as the retried list is compacted) or
  fixed per node (``--fixed``). Each round's (attempted, won). Every
  neighbour of a node of degree d and the node itself are pairwise in
  conflict, so no order takes fewer than d + 1 rounds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irgl_runner.graph_args import resolve_graph
from irgl_runner.graphs import CSRGraph

#: The 32-bit golden-ratio multiplier of the hashed part of a priority.
HASH = 0x9E3779B1


def _neighbourhoods(graph: CSRGraph) -> tuple[np.ndarray, np.ndarray]:
    """(owner, cell) of every entry of every closed neighbourhood."""
    n = graph.num_nodes
    degrees = np.diff(np.asarray(graph.row_start, dtype=np.int64))
    owner = np.concatenate([np.arange(n), np.repeat(np.arange(n), degrees)])
    cell = np.concatenate([np.arange(n), np.asarray(graph.edge_dst, np.int64)])
    return owner, cell


def _priorities(sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``irgl_claim_priority(rank, size)`` for each contender (int64)."""
    bits = np.zeros(len(sizes), np.int64)
    nz = sizes > 0
    bits[nz] = np.floor(np.log2(sizes[nz])).astype(np.int64) + 1
    hashed = (ranks.astype(np.uint64) * np.uint64(HASH)) & np.uint64(0x1FFFFFF)
    return (np.minimum(bits, 31) << 25) + hashed.astype(np.int64) + 1


def _winners(
    contenders: np.ndarray, prio: np.ndarray, owner: np.ndarray, cell: np.ndarray
) -> np.ndarray:
    """The contenders (node ids) whose priority stands on every cell of
    their neighbourhood after all of them wrote (max) to their cells."""
    n = len(prio)
    alive = np.zeros(n, bool)
    alive[contenders] = True
    keep = alive[owner]
    o, c = owner[keep], cell[keep]
    claims = np.zeros(n, np.int64)
    np.maximum.at(claims, c, prio[o])
    lost = np.zeros(n, bool)
    lost[o[claims[c] != prio[o]]] = True
    return contenders[~lost[contenders]]


@dataclass(frozen=True)
class DrainedWork:
    """What a drain attempts after the first claim round."""

    nodes: int
    edges: int
    first_round_winners: int
    drained: int
    drained_degrees: int
    scanned_edges: int
    max_colour: int


def drained_work(graph: CSRGraph) -> DrainedWork:
    """See the module docstring."""
    n = graph.num_nodes
    row_start = np.asarray(graph.row_start, dtype=np.int64)
    dst = np.asarray(graph.edge_dst, dtype=np.int64)
    degrees = np.diff(row_start)
    owner, cell = _neighbourhoods(graph)
    nodes = np.arange(n)
    won = np.zeros(n, bool)
    won[_winners(nodes, _priorities(degrees + 1, nodes), owner, cell)] = True
    colour = np.full(n, -1, np.int64)
    for v in np.concatenate([np.flatnonzero(won), np.flatnonzero(~won)]):
        seen = colour[dst[row_start[v] : row_start[v + 1]]]
        used = np.zeros(len(seen) + 1, bool)
        used[seen[(seen >= 0) & (seen < len(used))]] = True
        colour[v] = int(np.flatnonzero(~used)[0])
    bands = colour // 64 + 1
    drained = ~won
    return DrainedWork(
        n,
        len(dst),
        int(won.sum()),
        int(drained.sum()),
        int(degrees[drained].sum()),
        int((degrees * bands)[drained].sum()),
        int(colour.max()) if n else -1,
    )


def claim_rounds(
    graph: CSRGraph, fixed: bool = False, seed: int = 1
) -> list[tuple[int, int]]:
    """(attempted, won) of every claim round until every node won."""
    n = graph.num_nodes
    degrees = np.diff(np.asarray(graph.row_start, dtype=np.int64))
    owner, cell = _neighbourhoods(graph)
    rng = np.random.default_rng(seed)
    left = np.arange(n)
    rounds: list[tuple[int, int]] = []
    while left.size:
        ranks = left if fixed else rng.permutation(left.size)
        prio = np.zeros(n, np.int64)
        prio[left] = _priorities(degrees[left] + 1, ranks)
        won = _winners(left, prio, owner, cell)
        rounds.append((int(left.size), int(won.size)))
        left = np.setdiff1d(left, won, assume_unique=True)
    return rounds


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("graphs", nargs="+", help="graph specs or files (symmetrized)")
    p.add_argument("--rounds", action="store_true", help="replay the claim rounds")
    p.add_argument("--fixed", action="store_true", help="fixed priorities per node")
    args = p.parse_args(argv)
    for spec in args.graphs:
        graph, _ = resolve_graph(spec, True, False, None)
        work = drained_work(graph)
        print(f"{spec}: {work}")
        if args.rounds:
            rounds = claim_rounds(graph, args.fixed)
            single = sum(1 for _, won in rounds if won == 1)
            print(
                f"  {len(rounds)} claim rounds, {single} with one winner; "
                f"the first: {rounds[:3]}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
