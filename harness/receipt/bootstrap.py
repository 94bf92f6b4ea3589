"""The block bootstraps every interval of the platform's figures is drawn with (a delta's
paired one, a decay's over two windows) and their settings.

It lives apart from ``rescore`` (which re-derives a run before it prices it) so that the
receipt's own parts (the placebo split) draw their intervals with the very same code
without importing the re-derivation that checks them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

# the settings and the percentile rule, offered here as they always were
from harness.market.intervals import BOOTSTRAP_REPLICATES as BOOTSTRAP_REPLICATES
from harness.market.intervals import BOOTSTRAP_SEED as BOOTSTRAP_SEED
from harness.market.intervals import CONFIDENCE as CONFIDENCE
from harness.market.intervals import percentile_indices as percentile_indices
from harness.market.scoring import Trade


def session_sums(trades: list[Trade]) -> list[tuple[float, int]]:
    """Each entry session's priced returns, summed and counted: the bootstrap's blocks."""
    blocks: dict[str, list[float]] = {}
    for trade in trades:
        if trade.ret is not None:
            blocks.setdefault(trade.entry_session, []).append(trade.ret)
    return [(sum(v), len(v)) for _, v in sorted(blocks.items())]


def delta_bootstrap(
    main: list[Trade],
    control: list[Trade],
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """A percentile interval for main minus control (each the mean return of its priced
    trades), resampling whole entry sessions, the same draw for both arms: trades of one
    session share its market, whichever arm made them. A draw that leaves one arm with no
    trade says nothing of the difference and is drawn again. None when an arm has no
    priced trade (there is no delta)."""
    blocks: dict[str, tuple[list[float], list[float]]] = {}
    for side, trades in ((0, main), (1, control)):
        for trade in trades:
            if trade.ret is not None:
                blocks.setdefault(trade.entry_session, ([], []))[side].append(trade.ret)
    sums = [(sum(m), len(m), sum(c), len(c)) for _, (m, c) in sorted(blocks.items())]
    if not any(n for _, n, _, _ in sums) or not any(n for _, _, _, n in sums):
        return None
    rng = random.Random(seed)
    deltas: list[float] = []
    while len(deltas) < replicates:
        drawn = rng.choices(sums, k=len(sums))
        n_main, n_control = sum(d[1] for d in drawn), sum(d[3] for d in drawn)
        if n_main and n_control:
            deltas.append(sum(d[0] for d in drawn) / n_main - sum(d[2] for d in drawn) / n_control)
    deltas.sort()
    low, high = percentile_indices(confidence, replicates)
    return deltas[low], deltas[high]


def decay_bootstrap(
    backtest: Sequence[Trade],
    forward: Sequence[Trade],
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """A percentile interval for the backtest's mean return minus the forward one, each
    window's entry sessions resampled with replacement on their own; None when either
    has no priced trade."""
    behind, ahead = session_sums(list(backtest)), session_sums(list(forward))
    if not behind or not ahead:
        return None
    rng = random.Random(seed)
    diffs = []
    for _ in range(replicates):
        b = rng.choices(behind, k=len(behind))
        f = rng.choices(ahead, k=len(ahead))
        diffs.append(
            sum(s for s, _ in b) / sum(n for _, n in b)
            - sum(s for s, _ in f) / sum(n for _, n in f)
        )
    diffs.sort()
    low, high = percentile_indices(confidence, replicates)
    return diffs[low], diffs[high]
