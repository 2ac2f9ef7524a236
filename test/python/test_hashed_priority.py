"""convert-irgl-exclusive `hashed_priority`: the hashed priorities of every
rank a grid can have are unique and positive i32s (the protocol's progress
argument needs a unique highest priority), and they are not ordered like
the ranks (neighbouring ranks do not always lose to the next one)."""

from __future__ import annotations

import numpy as np

from lowering.convert_irgl_exclusive import HASH_BITS, HASH_MULTIPLIER


def _priorities(ranks: np.ndarray) -> np.ndarray:
    mixed = (ranks.astype(np.uint64) * np.uint64(HASH_MULTIPLIER)) & np.uint64(
        (1 << HASH_BITS) - 1
    )
    return (mixed + np.uint64(1)).astype(np.int64)


def test_priorities_are_unique_and_positive() -> None:
    # far more threads than a co-resident grid holds (132 SMs x 2048)
    ranks = np.arange(1 << 22)
    prio = _priorities(ranks)
    assert prio.min() >= 1 and prio.max() <= np.iinfo(np.int32).max
    assert len(np.unique(prio)) == len(prio)


def test_neighbouring_ranks_are_not_ordered() -> None:
    prio = _priorities(np.arange(1 << 16))
    rising = np.mean(prio[1:] > prio[:-1])
    assert 0.3 < rising < 0.7
