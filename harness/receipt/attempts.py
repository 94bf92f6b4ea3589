"""Attempts: the luckiest of many uploads reads as such.

A submitter who uploads twenty variations of one agent and lets the best stand has run
twenty trials; the best one's 95% interval, read alone, overstates how sure its figure is.
A family's (submitter, agent name) ranked interval is therefore the same block bootstrap
at the family-wise level for its N attempts (Šidák): each interval at confidence
``0.95 ** (1 / N)``, so that all N hold together with probability 0.95 (for independent
trials). With N = 1 it is the plain 95% interval; with N = 20 it is a 99.74% one, wider.

Worked example: twenty attempts, the best's shifted/pit figure +1.2% with a 95% interval of
[+0.1%, +2.3%] alone. At 0.95^(1/20) = 99.744% (0.128% in each tail) a near-normal bootstrap
widens by z(0.99872)/z(0.975) = 3.016/1.960 = 1.54, to about [-0.5%, +2.9%]: it spans zero.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.market.prices import Prices
from harness.receipt.bootstrap import CONFIDENCE
from harness.receipt.rescore import Figure, Rescore, Tails, bootstrap_tails, rescore

# the figure a board ranks on: the shifted arm, pit clock (what survives the controls)
RANKED_CELL = ("shifted", "pit")


def sidak_confidence(attempts: int, confidence: float = CONFIDENCE) -> float:
    """The per-attempt confidence at which ``attempts`` intervals hold together with
    probability ``confidence`` (Šidák): ``confidence ** (1 / attempts)``."""
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts must be a positive integer, got {attempts!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence ** (1.0 / attempts))


@dataclass(frozen=True)
class Attempt:
    """One upload of a family, as priced alike: its ranked cell's figure alone (95%)."""

    name: str
    run_id: str | None
    figure: Figure | None  # None: no priced figure in the ranked cell


@dataclass(frozen=True)
class FamilyBest:
    """The best attempt of a family and its family-wise interval."""

    attempts: int
    confidence: float
    best: Attempt | None  # None when no attempt has a figure
    interval: tuple[float, float] | None

    def to_json(self) -> dict[str, Any]:
        best = self.best
        return {
            "attempts": self.attempts,
            "confidence": self.confidence,
            "cell": list(RANKED_CELL),
            "best": None
            if best is None or best.figure is None
            else {
                "name": best.name,
                "run_id": best.run_id,
                "total_return": best.figure.total_return,
                "interval_95_alone": [best.figure.low, best.figure.high],
                "interval_family_wise": list(self.interval) if self.interval else None,
            },
        }


def family_best(
    attempts: list[tuple[Attempt, Rescore]], *, confidence: float = CONFIDENCE
) -> FamilyBest:
    """The attempt with the highest ranked figure, its interval re-drawn at the Šidák
    level for all the attempts counted (an attempt without a figure still counts)."""
    n = len(attempts)
    level = sidak_confidence(n, confidence)
    scored = [(a, a.figure.total_return, r) for a, r in attempts if a.figure is not None]
    if not scored:
        return FamilyBest(n, level, None, None)
    best, _, result = max(scored, key=lambda item: item[1] or 0.0)
    tails = ranked_tails(result)
    assert tails is not None  # a figure has priced trades
    return FamilyBest(n, level, best, family_interval(tails, n, confidence=confidence))


def ranked_tails(result: Rescore) -> Tails | None:
    """The ranked cell's bootstrap tails: what a board stores with a platform score so
    that the family-wise interval for any number of attempts is a lookup."""
    trades = result.trades.get(RANKED_CELL)
    return None if trades is None else bootstrap_tails(trades)


def family_interval(
    tails: Tails, attempts: int, *, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The ranked interval of a family's best: its bootstrap at the Šidák level for
    ``attempts`` (the same interval ``block_bootstrap`` draws at that level)."""
    return tails.interval(sidak_confidence(attempts, confidence))


def attempts_of(
    receipts: list[str | os.PathLike[str]], *, release: str | os.PathLike[str], prices: Prices
) -> list[tuple[Attempt, Rescore]]:
    """Each receipt priced alike (its trajectory read from beside it, as the receipt
    names it); refused (``RescoreRefused``) where one does not hold together."""
    out = []
    for path in receipts:
        receipt = Path(path)
        body = json.loads(receipt.read_text())["body"]
        trajectory = receipt.parent / Path(body["trajectory"]["path"]).name
        result = rescore(receipt, trajectory=trajectory, release=release, prices=prices)
        figure = result.cells.get(RANKED_CELL)
        usable = figure if figure is not None and figure.total_return is not None else None
        out.append((Attempt(str(receipt), body.get("run_id"), usable), result))
    return out
