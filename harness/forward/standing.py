"""The forward board's figures: what a committed agent made on sessions nobody knew when
it committed, beside what it made on as many sessions just before, and the difference.

A commitment is executed on every version of its release line; each forward run covers
the sessions from the commitment to that version's end, so the windows overlap. ``pooled``
joins them: each entry session's trades come from the first window (in version order)
that reached it, so no trade counts twice. The forward figure is the same block bootstrap
the main board uses (``harness.receipt.rescore.block_bootstrap``: the mean return of the
priced trades, whole entry sessions resampled); its family-wise interval is the same
Šidák widening (``harness.receipt.attempts``), counted over every commitment of the
family. **Decay** is the backtest's return minus the forward one. The two windows share no
session, so its interval resamples each window's sessions on its own (two independent
block bootstraps, one seeded draw): a decay whose interval lies above zero is an edge that
did not survive the future.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from harness.market.scoring import Trade
from harness.receipt.attempts import family_interval, sidak_confidence
from harness.receipt.bootstrap import (
    BOOTSTRAP_REPLICATES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    decay_bootstrap,
)
from harness.receipt.rescore import Figure, Tails, block_bootstrap, bootstrap_tails, rank_ranges

METHOD = {
    "forward": "mean return of the priced trades entered after the commitment, every forward "
    "window joined (each entry session from the first version that reached it)",
    "interval": f"{CONFIDENCE:.0%} percentile interval, block bootstrap over entry sessions, "
    f"{BOOTSTRAP_REPLICATES} replicates, seed {BOOTSTRAP_SEED}",
    "ranked_interval": "the same bootstrap at the family-wise level 0.95^(1/commitments): every "
    "commitment of a family (submitter, agent name) on the benchmark counts, withdrawn or not",
    "backtest": "the same agent over as many sessions just before the commitment",
    "decay": "backtest return minus forward return; its interval resamples each window's entry "
    "sessions on its own (the windows share none)",
}


@dataclass(frozen=True)
class Window:
    """One forward (or backtest) run's trades and the last session its window holds."""

    end: str
    trades: Sequence[Trade]


def pooled(windows: Sequence[Window]) -> list[Trade]:
    """Every window's trades joined, in the order given (oldest version first): a window
    adds only the trades entered after every session an earlier window reached (its end,
    and the entry sessions of its trades), so overlapping windows count each trade once."""
    out: list[Trade] = []
    reached = ""
    for window in windows:
        out.extend(t for t in window.trades if t.entry_session > reached)
        last_entry = max((t.entry_session for t in window.trades), default="")
        reached = max(reached, window.end, last_entry)
    return out


@dataclass(frozen=True)
class Standing:
    """One commitment's forward figures."""

    forward: Figure
    backtest: Figure | None
    decay: float | None
    decay_interval: tuple[float, float] | None
    tails: Tails | None  # the forward figure's bootstrap tails: its family-wise interval

    def to_json(self) -> dict[str, Any]:
        return {
            "forward": self.forward.to_json(),
            "backtest": None if self.backtest is None else self.backtest.to_json(),
            "decay": self.decay,
            "decay_interval_95": None if self.decay_interval is None else list(self.decay_interval),
        }


def standing(windows: Sequence[Window], backtest: Sequence[Trade] | None) -> Standing:
    """A commitment's forward figure over its windows joined, its backtest's figure, and
    the decay between them (None where either has no priced trade)."""
    ahead = pooled(windows)
    forward = block_bootstrap(ahead)
    behind = None if backtest is None else block_bootstrap(list(backtest))
    decay = None
    if behind is not None and behind.total_return is not None and forward.total_return is not None:
        decay = behind.total_return - forward.total_return
    interval = None if backtest is None else decay_bootstrap(backtest, ahead)
    return Standing(forward, behind, decay, interval, bootstrap_tails(ahead))


@dataclass(frozen=True)
class Entrant:
    """A commitment on the board: its family (submitter, agent name) and its standing."""

    family: tuple[str, str]
    seq: int
    standing: Standing


@dataclass(frozen=True)
class Placing:
    """A family's place: its best commitment, the commitments counted, its ranked
    interval (family-wise) and rank range; ``needs`` the priced forward trades it lacks to
    be ranked (0: ranked)."""

    family: tuple[str, str]
    best: Entrant
    commitments: int
    confidence: float
    interval: tuple[float, float] | None
    rank: tuple[int, int] | None
    needs: int

    @property
    def ranked(self) -> bool:
        return self.rank is not None


def forward_board(entrants: Sequence[Entrant], *, min_trades: int) -> list[Placing]:
    """The families ranked on their best commitment's pooled forward return: its interval
    drawn at the Šidák level for every commitment of the family (``family_interval``) and
    rank ranges from those intervals (``rank_ranges``). A family whose best has fewer than
    ``min_trades`` priced forward trades is listed after the ranked ones, unranked, with
    the count it needs. Ranked families come first, best figure first."""
    families: dict[tuple[str, str], list[Entrant]] = {}
    for entrant in entrants:
        families.setdefault(entrant.family, []).append(entrant)
    placed: list[Placing] = []
    for family, members in families.items():
        count = len(members)

        def key(e: Entrant) -> tuple[bool, float, int]:
            figure = e.standing.forward
            rankable = figure.priced >= min_trades and figure.total_return is not None
            return (
                rankable,
                figure.total_return if figure.total_return is not None else -1e9,
                -e.seq,
            )

        best = max(members, key=key)
        figure, tails = best.standing.forward, best.standing.tails
        needs = max(0, min_trades - figure.priced)
        interval = None
        if tails is not None and figure.total_return is not None and needs == 0:
            interval = family_interval(tails, count)
        placed.append(
            Placing(
                family,
                best,
                count,
                sidak_confidence(count),
                interval,
                None,
                needs if interval is None else 0,
            )
        )
    ranked = [p for p in placed if p.interval is not None]
    ranges = rank_ranges([p.interval for p in ranked if p.interval is not None])
    ranked = [
        Placing(p.family, p.best, p.commitments, p.confidence, p.interval, (r.low, r.high), 0)
        for p, r in zip(ranked, ranges, strict=True)
    ]
    ranked.sort(key=lambda p: (-(p.best.standing.forward.total_return or 0.0), p.best.seq))
    rest = sorted((p for p in placed if p.interval is None), key=lambda p: (p.needs, p.best.seq))
    return ranked + rest


def forward_curve(trades: Sequence[Trade], committed_on: date) -> list[dict[str, Any]]:
    """The forward return as it stood after each entry session: for every session with a
    priced trade, the calendar days since the commitment, the priced trades entered
    through it and their mean (the last point is the board's forward figure)."""
    by_session: dict[str, list[float]] = {}
    for trade in trades:
        if trade.ret is not None:
            by_session.setdefault(trade.entry_session, []).append(trade.ret)
    out = []
    total, count = 0.0, 0
    for day in sorted(by_session):
        total += sum(by_session[day])
        count += len(by_session[day])
        out.append(
            {"date": day, "days": (date.fromisoformat(day) - committed_on).days,
             "trades": count, "forward_return": total / count}
        )  # fmt: skip
    return out


def trades_json(cells: dict[tuple[str, str], list[Trade]]) -> dict[str, list[list[Any]]]:
    """Each cell's trades as stored beside a forward run's platform figures
    (``"arm/clock"``: each trade's fields in ``Trade``'s order)."""
    return {f"{arm}/{clock}": [list(t) for t in trades] for (arm, clock), trades in cells.items()}


def trades_of(stored: dict[str, Any] | None, arm: str, clock: str) -> list[Trade] | None:
    """One cell's trades from ``trades_json``'s form; None when the cell was not kept."""
    cell = (stored or {}).get(f"{arm}/{clock}")
    return None if cell is None else [Trade(*fields) for fields in cell]


def decay_reading(interval: Sequence[float] | None) -> str:
    """What a decay's 95% interval supports, and no more."""
    if interval is None:
        return "no interval: a window without priced trades"
    low, high = interval
    if low > 0:
        return "edge lost: the backtest beat the forward run by more than chance explains"
    if high < 0:
        return "better forward than in its backtest, by more than chance explains"
    return "no decay the data can tell from zero"
