"""Thread-block size categories of kernels (spec: "Compiling Kernel
Invocations").

An ElasticBlock kernel runs with any block size, a ShrinkableBlock kernel
with any size up to a bound (from `__launch_bounds__`), a FixedBlock kernel
with exactly one size (e.g. when shared memory is sized by the block). The
kernels of an outlined Pipe must share one size: the largest in the
intersection of their sets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

MAX_BLOCK = 1024
WARP = 32


class BlockCategory(Enum):
    ELASTIC = "ElasticBlock"
    SHRINKABLE = "ShrinkableBlock"
    FIXED = "FixedBlock"


@dataclass(frozen=True)
class BlockConstraint:
    """The set T_k of block sizes a kernel admits."""

    category: BlockCategory
    size: int = MAX_BLOCK
    """The upper bound (Shrinkable) or the only size (Fixed)."""

    def sizes(self) -> frozenset[int]:
        """All admitted sizes (whole warps, at most 1024 threads)."""
        if self.category == BlockCategory.FIXED:
            return frozenset({self.size})
        bound = MAX_BLOCK if self.category == BlockCategory.ELASTIC else self.size
        return frozenset(range(WARP, bound + 1, WARP)) or frozenset({bound})


def check_block_size_option(value: int, owner: str) -> None:
    """A `block_size` pass option must be a power of two from one warp (32)
    to 1024 threads; raise a ValueError naming `owner` otherwise."""
    if not (WARP <= value <= MAX_BLOCK and value & (value - 1) == 0):
        raise ValueError(
            f"{owner}: block_size must be a power of two from {WARP} to "
            f"{MAX_BLOCK}, got {value}"
        )


def constraint_of(
    launch_bounds: tuple[int, ...] | None, fixed: int | None = None
) -> BlockConstraint:
    """The category of a kernel from its launch bounds and fixed size, if any."""
    if fixed is not None:
        return BlockConstraint(BlockCategory.FIXED, fixed)
    if launch_bounds:
        return BlockConstraint(BlockCategory.SHRINKABLE, launch_bounds[0])
    return BlockConstraint(BlockCategory.ELASTIC)


def choose_block_size(launch_bounds: tuple[int, ...] | None, preferred: int) -> int:
    """The block size of one kernel: `preferred` if admitted, else the
    largest admitted size below it (or the smallest admitted size)."""
    sizes = constraint_of(launch_bounds).sizes()
    if preferred in sizes:
        return preferred
    below = [s for s in sizes if s <= preferred]
    return max(below) if below else min(sizes)


def control_block_size(
    constraints: Iterable[BlockConstraint], preferred: int = 0
) -> int | None:
    """T_control = ∩ T_k; None when it is empty. Its largest member, or with
    `preferred` > 0 the largest member up to `preferred` (the smallest
    member when all are larger)."""
    common: frozenset[int] | None = None
    for constraint in constraints:
        sizes = constraint.sizes()
        common = sizes if common is None else common & sizes
    if not common:
        return None
    if preferred > 0:
        below = [s for s in common if s <= preferred]
        return max(below) if below else min(common)
    return max(common)
