"""Chunked, threaded numpy work for large graphs (generation and cleaning).

numpy releases the GIL in the loops used here (random fills of separate bit
generators, comparisons, sorts, gathers), so a thread pool over chunks scales
on a many-core host.  Results never depend on the thread count or the chunk
size: every chunk computes exactly what the serial code computes for its slice.

``IRGL_GEN_THREADS`` sets the thread count (default: the CPUs this process may
use) and ``IRGL_GEN_CHUNK`` the elements per chunk (default ``2**18``; tests
set it small to exercise many chunks on small graphs).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

import numpy as np

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_CHUNK = 1 << 18


def threads() -> int:
    """Worker threads for chunked work (``IRGL_GEN_THREADS`` or the usable CPUs)."""
    env = os.environ.get("IRGL_GEN_THREADS", "").strip()
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def chunk_size() -> int:
    """Elements per chunk (``IRGL_GEN_CHUNK``, default ``2**18``; always even)."""
    env = os.environ.get("IRGL_GEN_CHUNK", "").strip()
    size = int(env) if env else DEFAULT_CHUNK
    return max(2, size + (size & 1))


def spans(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` cut into consecutive spans of ``size`` (the last shorter)."""
    return [(lo, min(lo + size, stop)) for lo in range(start, stop, size)]


def pmap(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]``, on the thread pool when there are several."""
    items = list(items)
    workers = min(threads(), len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def minmax(arr: np.ndarray) -> tuple[int, int]:
    """``(arr.min(), arr.max())`` of a non-empty 1-D array, chunked and threaded."""
    size = max(chunk_size(), 1 << 20)
    if arr.shape[0] <= size:
        return int(arr.min()), int(arr.max())
    parts = pmap(
        lambda s: (int(arr[s[0] : s[1]].min()), int(arr[s[0] : s[1]].max())),
        spans(0, arr.shape[0], size),
    )
    return min(p[0] for p in parts), max(p[1] for p in parts)


# ------------------------------------------------------------- random streams
#
# A PCG64 ``Generator`` hands out 32-bit values from 64-bit draws: the low half
# first, the high half kept for the next 32-bit request.  Float32 draws
# (``random(dtype=float32)``: ``(u32 >> 8) * 2**-24``) and the Lemire bounded
# int32 draws with a power-of-two range (``integers(1, 65, dtype=int32)``) take
# exactly one 32-bit value each, so the value at stream position ``i`` can be
# drawn by a copy of the generator advanced by ``i // 2`` 64-bit steps: chunks
# of one long draw can be made in parallel and give the serial values.


def substream(state: Mapping[str, Any], offset: int) -> np.random.PCG64:
    """A PCG64 at 32-bit stream position ``offset`` (even) from ``state``
    (a PCG64 state with no buffered half)."""
    assert offset % 2 == 0 and not state["has_uint32"]
    bg = np.random.PCG64()
    cast(Any, bg).state = state
    bg.advance(offset // 2)
    return bg


def raw_uint32(bg: np.random.PCG64, count: int) -> np.ndarray:
    """The next ``count`` 32-bit values of ``bg`` (as ``next_uint32`` gives them)."""
    words = bg.random_raw((count + 1) // 2)
    if not words.dtype.isnative or words.dtype.byteorder == ">":  # pragma: no cover
        words = words.astype("<u8")
    return words.view("<u4")[:count]


def skip_uint32(rng: np.random.Generator, count: int) -> None:
    """Move ``rng`` past ``count`` 32-bit values, as if it had drawn them."""
    if count <= 0:
        return
    bg = rng.bit_generator
    if not isinstance(bg, np.random.PCG64) or count < 8:
        rng.random(count, dtype=np.float32)
        return
    if bg.state["has_uint32"]:
        rng.random(1, dtype=np.float32)
        count -= 1
    bg.advance(count // 2)  # also drops any buffered half
    if count % 2:
        rng.random(1, dtype=np.float32)


def draw_uint32_each(
    rng: np.random.Generator,
    count: int,
    draw: Callable[[np.random.Generator, int], np.ndarray],
    dtype: type | np.dtype,
) -> np.ndarray:
    """``draw(rng, count)``, made in parallel chunks; ``draw(g, k)`` must take
    exactly one 32-bit value of ``g`` per output (see above).  ``rng`` ends in
    the state the single call leaves it in."""
    size = chunk_size()
    bg = rng.bit_generator
    if count < 2 * size or not isinstance(bg, np.random.PCG64):
        return draw(rng, count)
    out = np.empty(count, dtype=dtype)
    head = 0
    if bg.state["has_uint32"]:
        out[:1] = draw(rng, 1)
        head = 1
    base = bg.state
    body = (count - head) // 2 * 2

    def fill(span: tuple[int, int]) -> None:
        lo, hi = span
        gen = np.random.Generator(substream(base, lo - head))
        out[lo:hi] = draw(gen, hi - lo)

    pmap(fill, spans(head, head + body, size))
    bg.advance(body // 2)
    if head + body < count:
        out[head + body :] = draw(rng, 1)
    return out
