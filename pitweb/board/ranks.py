"""Rank ranges that one changed run does not rewrite.

A run's rank range counts the intervals of every other ranked run (rank low: 1 + those
wholly above it; rank high: those overlapping or above, itself included), so one new run
moves the ranges of most rows by one: at 100,000 runs, some 60,000 rows written for one
upload. Instead a stored board keeps a *base*: the sorted lows and highs of every
interval as they stood at its last whole computation. Each entry stores its range counted
against the base, and the board keeps the *delta* since: the intervals added (+1) and
taken away (-1). A page adds the delta's counts to each row it shows, which is exact:
counting over (base + added - removed) is the base's count plus the added's minus the
removed's. A change writes only its own rows; once the delta grows past ``DELTA_MAX``
the board is computed whole again and the delta starts empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from harness.receipt.rescore import rank_bounds

# intervals in the delta past which a board is computed whole (a page's rows are
# adjusted by each: 100 rows x 1,000 intervals is a small vectorised sum)
DELTA_MAX = 1000

Interval = tuple[float, float]
# (low, high, count): an interval added (count > 0) or taken away (count < 0)
Delta = list[list[float]]


def base_bytes(lows: Sequence[float], highs: Sequence[float]) -> bytes:
    """The base as stored: every interval's low, sorted, then every high, sorted."""
    return np.concatenate([np.sort(np.asarray(lows, np.float64)),
                           np.sort(np.asarray(highs, np.float64))]).tobytes()  # fmt: skip


def against_base(
    base: bytes, lows: Sequence[float], highs: Sequence[float]
) -> tuple[list[int], list[int]]:
    """The rank ranges of these intervals counted against the base's intervals."""
    stored = np.frombuffer(base, dtype=np.float64)
    half = len(stored) // 2
    return rank_bounds(lows, highs, against=(stored[:half], stored[half:]))


def merged(delta: Delta, added: Iterable[Interval], removed: Iterable[Interval]) -> Delta:
    """The delta with these intervals added and taken away; an interval added and then
    taken away again cancels out."""
    net: Counter[Interval] = Counter()
    for low, high, count in delta:
        net[(low, high)] += int(count)
    for interval in added:
        net[interval] += 1
    for interval in removed:
        net[interval] -= 1
    return [[low, high, count] for (low, high), count in sorted(net.items()) if count]


def adjusted(delta: Delta, rows: Sequence[tuple[int, int, float, float]]) -> list[tuple[int, int]]:
    """Each (base rank low, base rank high, interval low, interval high) row's rank
    range over the base and the delta."""
    if not rows:
        return []
    best = np.array([r[0] for r in rows], dtype=np.int64)
    worst = np.array([r[1] for r in rows], dtype=np.int64)
    if delta:
        table = np.asarray(delta, dtype=np.float64)
        lows, highs, counts = table[:, 0], table[:, 1], table[:, 2].astype(np.int64)
        low = np.array([r[2] for r in rows], dtype=np.float64)
        high = np.array([r[3] for r in rows], dtype=np.float64)
        best += ((lows[None, :] > high[:, None]) * counts).sum(axis=1)
        worst += ((highs[None, :] >= low[:, None]) * counts).sum(axis=1)
    return list(zip(best.tolist(), worst.tolist(), strict=True))
