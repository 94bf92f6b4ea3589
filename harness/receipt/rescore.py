"""Platform figures: every run priced alike, with its uncertainty, and ranks that say how
sure they are.

A receipt's own scores come from whatever prices its submitter had. ``rescore`` re-derives
a run's trades from its trajectory (after ``rederive`` has checked that the trajectory,
config and release are the ones the receipt binds and that every pick was knowable) and
prices them with a reference price file, so runs over one release are compared on one
set of prices. Each cell's figure carries a 95% interval from a seeded block bootstrap
over entry sessions: trades entered in one session share that session's market, so a
session's trades are resampled together. ``rank_ranges`` turns figures with intervals
into rank ranges: a run is surely behind only the runs whose intervals lie wholly above
its own.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from harness.market.calendar import sessions_for
from harness.market.frictions import CostModel, net_trades
from harness.market.index import MarketIndex, Series, daily_series, market_figures
from harness.market.prices import Prices
from harness.market.scoring import Trade, make_trades, total_return

# the bootstrap's settings and paired delta, offered here as they always were
from harness.receipt.bootstrap import BOOTSTRAP_REPLICATES as BOOTSTRAP_REPLICATES
from harness.receipt.bootstrap import BOOTSTRAP_SEED as BOOTSTRAP_SEED
from harness.receipt.bootstrap import CONFIDENCE as CONFIDENCE
from harness.receipt.bootstrap import delta_bootstrap as delta_bootstrap
from harness.receipt.bootstrap import percentile_indices, session_sums
from harness.receipt.build import crosses_cutoff
from harness.receipt.placebo import placebo
from harness.receipt.rederive import Check, as_main_picks, read_trail, rederive
from harness.release.bundle import Bundle
from harness.vocabulary import CLOCKS


@dataclass(frozen=True)
class Figure:
    """One cell's platform return: the mean over its priced trades, and its interval."""

    total_return: float | None
    low: float | None
    high: float | None
    trades: int
    priced: int
    sessions: int  # entry sessions with a priced trade: the bootstrap's blocks

    def to_json(self) -> dict[str, Any]:
        return {
            "total_return": self.total_return,
            "interval_95": None if self.low is None else [self.low, self.high],
            "trades": self.trades,
            "priced_trades": self.priced,
            "priced_sessions": self.sessions,
        }


def _replicate_means(sums: list[tuple[float, int]], replicates: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    means = []
    for _ in range(replicates):
        drawn = rng.choices(sums, k=len(sums))
        means.append(sum(s for s, _ in drawn) / sum(n for _, n in drawn))
    means.sort()
    return means


def block_bootstrap(
    trades: list[Trade],
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> Figure:
    """The mean return of the priced trades and a percentile interval from resampling
    whole entry sessions with replacement (a fixed seed: the same trades, the same
    interval, on any machine)."""
    sums = session_sums(trades)
    figure = total_return(trades)
    priced = sum(n for _, n in sums)
    if figure is None:
        return Figure(None, None, None, len(trades), 0, 0)
    means = _replicate_means(sums, replicates, seed)
    low, high = percentile_indices(confidence, replicates)
    return Figure(figure, means[low], means[high], len(trades), priced, len(sums))


@dataclass(frozen=True)
class Tails:
    """A block bootstrap's lowest and highest replicate means, ascending: enough to draw
    its percentile interval at any confidence from 95% up (every family-wise level),
    exactly as ``block_bootstrap`` draws it from all of them."""

    replicates: int
    low: tuple[float, ...]
    high: tuple[float, ...]

    def interval(self, confidence: float) -> tuple[float, float]:
        low, high = percentile_indices(confidence, self.replicates)
        first_high = self.replicates - len(self.high)
        if low >= len(self.low) or high < first_high:
            raise ValueError(f"the tails kept do not reach a {confidence:.2%} interval")
        return self.low[low], self.high[high - first_high]

    def to_json(self) -> dict[str, Any]:
        return {"replicates": self.replicates, "low": list(self.low), "high": list(self.high)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tails:
        return cls(int(data["replicates"]), tuple(data["low"]), tuple(data["high"]))


def bootstrap_tails(
    trades: list[Trade],
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> Tails | None:
    """The tails of ``block_bootstrap``'s replicates that its interval at ``confidence``
    or any higher one reads; None when no trade is priced."""
    sums = session_sums(trades)
    if not sums:
        return None
    means = _replicate_means(sums, replicates, seed)
    low, high = percentile_indices(confidence, replicates)
    keep = max(low + 1, replicates - high)
    return Tails(replicates, tuple(means[:keep]), tuple(means[-keep:]))


@dataclass(frozen=True)
class RankRange:
    low: int
    high: int

    @property
    def label(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


def rank_ranges(intervals: list[tuple[float, float]]) -> list[RankRange]:
    """For each (low, high) interval: rank low = 1 + the runs whose interval lies wholly
    above it; rank high = the runs whose interval overlaps it or lies above it (itself
    included). Equal intervals get equal ranges: ties tie. O(n log n)."""
    lows, highs = rank_bounds([low for low, _ in intervals], [high for _, high in intervals])
    return [RankRange(low, high) for low, high in zip(lows, highs, strict=True)]


def rank_bounds(
    lows: ArrayLike, highs: ArrayLike, *, against: tuple[ArrayLike, ArrayLike] | None = None
) -> tuple[list[int], list[int]]:
    """``rank_ranges`` over the intervals' lows and highs given apart, as two lists (rank
    low, rank high): vectorised, for a board of 100,000 rows. ``against``: the lows and
    highs of the intervals to count (by default, the same ones)."""
    low = np.asarray(lows, dtype=np.float64)
    high = np.asarray(highs, dtype=np.float64)
    other_low, other_high = (low, high) if against is None else against
    ordered_low = np.sort(np.asarray(other_low, dtype=np.float64))
    ordered_high = np.sort(np.asarray(other_high, dtype=np.float64))
    n = len(ordered_low)
    best = 1 + n - np.searchsorted(ordered_low, high, side="right")
    worst = n - np.searchsorted(ordered_high, low, side="left")
    return best.tolist(), worst.tolist()


class RescoreRefused(ValueError):
    """The artifacts do not hold together, so no figure is derived from them."""

    def __init__(self, failed: list[Check]) -> None:
        self.failed = failed
        super().__init__("; ".join(f"{c.name}: {c.detail}" for c in failed))


@dataclass
class Rescore:
    prices: dict[str, Any]
    cells: dict[tuple[str, str], Figure] = field(default_factory=dict)
    # each cell's priced trades, for an interval drawn again at another level (attempts)
    trades: dict[tuple[str, str], list[Trade]] = field(default_factory=dict, repr=False)
    # the declared training cutoff, only when the run's window crosses it: the figures
    # then carry the placebo split (and others stay as they were)
    cutoff: str | None = None
    # at a stated cost level (``costs``) and against a market index (``index``): each
    # cell's figure net of the costs and its market figures; absent when not asked for
    costs: dict[str, Any] | None = None
    after_costs: dict[tuple[str, str], Figure] = field(default_factory=dict)
    index: dict[str, Any] | None = None
    market: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # the pit clock's daily series beside the index's, for a page to draw their
    # cumulative returns (``harness.market.index.daily_series``)
    series: dict[tuple[str, str], Series] = field(default_factory=dict)

    def deltas(self) -> dict[str, dict[str, float | None]]:
        """Per clock, the platform contamination deltas: main minus each control arm."""
        out: dict[str, dict[str, float | None]] = {}
        for clock in CLOCKS:
            main = self.cells.get(("main", clock))
            if main is None:
                continue
            out[clock] = {}
            for arm in ("shifted", "redacted"):
                other = self.cells.get((arm, clock))
                both = main.total_return is not None and other and other.total_return is not None
                out[clock][f"main_minus_{arm}"] = (
                    main.total_return - other.total_return  # type: ignore[operator,union-attr]
                    if both
                    else None
                )
        return out

    def delta_intervals(self) -> dict[str, dict[str, list[float] | None]]:
        """Per clock, a 95% interval for each platform contamination delta (paired block
        bootstrap, ``delta_bootstrap``); None where the delta has none."""
        out: dict[str, dict[str, list[float] | None]] = {}
        for clock in CLOCKS:
            main = self.trades.get(("main", clock))
            if main is None:
                continue
            out[clock] = {}
            for arm in ("shifted", "redacted"):
                control = self.trades.get((arm, clock))
                found = delta_bootstrap(main, control) if control is not None else None
                out[clock][f"main_minus_{arm}"] = list(found) if found else None
        return out

    def _measured(self, arm: str, clock: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        net = self.after_costs.get((arm, clock))
        if net is not None:
            out["after_costs"] = {
                "total_return": net.total_return,
                "interval_95": None if net.low is None else [net.low, net.high],
            }
        if (arm, clock) in self.market:
            out["market"] = self.market[(arm, clock)]
        series = self.series.get((arm, clock))
        if series is not None:
            out["series"] = {
                "sessions": series.sessions,
                "returns": series.returns,
                "index": series.index,
            }
        return out

    def placebo(self) -> dict[str, Any] | None:
        """The placebo split priced with these prices (``harness.receipt.placebo``), for
        a run whose window crosses its declared cutoff; None otherwise."""
        if self.cutoff is None:
            return None
        return placebo(self.trades, [c for c in CLOCKS if ("main", c) in self.trades], self.cutoff)

    def to_json(self) -> dict[str, Any]:
        split = self.placebo()
        return {
            **({} if split is None else {"placebo": split}),
            "prices": self.prices,
            "method": {
                "figure": "mean return of the priced trades, re-derived from the trajectory "
                "and priced with the reference prices",
                "interval": f"{CONFIDENCE:.0%} percentile interval, block bootstrap over entry "
                f"sessions, {BOOTSTRAP_REPLICATES} replicates, seed {BOOTSTRAP_SEED}",
                "delta_interval": f"{CONFIDENCE:.0%} percentile interval of main minus the "
                "control, the same entry sessions drawn for both arms",
            },
            **({} if self.costs is None else {"costs": self.costs}),
            **({} if self.index is None else {"benchmark_index": self.index}),
            "cells": [
                {"arm": arm, "clock": clock, **figure.to_json(), **self._measured(arm, clock)}
                for (arm, clock), figure in self.cells.items()
            ],
            "contamination": self.deltas(),
            "contamination_interval_95": self.delta_intervals(),
        }


def rescore(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str],
    release: str | os.PathLike[str],
    prices: Prices,
    check_release: bool = True,
    costs: CostModel | None = None,
    index: MarketIndex | None = None,
) -> Rescore:
    """Platform figures for one run: its trades re-derived from the trajectory and priced
    with ``prices``. Refused (``RescoreRefused``) unless the trajectory, config and release
    are the ones the receipt binds and every pick was knowable when it was made. With
    ``costs`` each cell's figure net of them too (the platform's stated cost level, beside
    the gross one); with ``index`` each cell's market figures against it."""
    checked = rederive(receipt, trajectory=trajectory, release=release, check_release=check_release)
    failed = [c for c in checked.checks if c.status == "mismatch"]
    if failed:
        raise RescoreRefused(failed)
    trail = read_trail(Path(trajectory))
    config = trail.start.get("config") or {}
    bundle = Bundle.load(
        release, forms=config.get("forms") or None, start=config.get("start"), end=config.get("end")
    )
    main_by_key = {r["row_key"]: r for r in bundle.rows("main")}
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    index_of = {d.isoformat(): i for i, d in enumerate(table.sessions)}
    result = Rescore(
        prices={**prices.reference(), "basis": prices.basis},
        cutoff=str(config["training_cutoff"]) if crosses_cutoff(config) else None,
        costs=None if costs is None else costs.to_json(),
        index=None if index is None else index.statement(prices.basis),
    )
    hold = int(config.get("hold_sessions", 5))
    main_picks = as_main_picks(bundle, trail.picks)  # a control arm's keys are its own
    for arm in config.get("arms", []):
        for clock in config.get("clocks", []):
            picks = [(index_of[day], keys) for day, keys in main_picks.get((arm, clock), [])]
            trades = make_trades(
                picks,
                main_by_key=main_by_key,
                table=table,
                hold_sessions=hold,
                prices=prices,
            )
            result.trades[(arm, clock)] = trades
            result.cells[(arm, clock)] = block_bootstrap(trades)
            if costs is not None:
                result.after_costs[(arm, clock)] = block_bootstrap(net_trades(trades, costs))
            if index is not None:
                series = daily_series(trades, prices=prices, index=index, table=table)
                result.market[(arm, clock)] = market_figures(
                    trades, prices=prices, index=index, table=table, hold_sessions=hold,
                    series=series,
                )  # fmt: skip
                if clock == "pit":
                    result.series[(arm, clock)] = series
    return result
