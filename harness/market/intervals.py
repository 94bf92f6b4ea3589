"""The settings every interval of the figures is drawn with (a fixed seed, so the same
trades give the same interval on any machine), and where a percentile interval's ends
fall among sorted replicates. Below both the receipt's bootstraps
(``harness.receipt.bootstrap``) and the market figures (``harness.market.index``)."""

from __future__ import annotations

BOOTSTRAP_REPLICATES = 2000
BOOTSTRAP_SEED = 20230301
CONFIDENCE = 0.95


def percentile_indices(confidence: float, replicates: int) -> tuple[int, int]:
    """The sorted replicates' indices of a percentile interval's ends."""
    tail = (1.0 - confidence) / 2.0
    return int(tail * (replicates - 1)), int((1.0 - tail) * (replicates - 1) + 0.5)
