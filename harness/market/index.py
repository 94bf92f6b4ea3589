"""A market index a cell's trades are measured against: was it the market?

A long-only basket in a rising month wins by beta. Given an index series (daily levels in
the price file's own form, ``date,symbol,open,close`` or close-only, such as FRED's S&P
500), each cell's same trades are measured four ways:

- **excess return**: each priced trade's return minus the index's over the same hold
  (entry to exit session), averaged like ``total_return``;
- **the daily series**: on each session of the cell's span, the mean one-session return
  of the trades open over it (a trade is open over the sessions after its entry up to
  its exit; a trade with a missing bar leaves out the sessions that bar bounds);
- **beta and alpha**: ordinary least squares of that series on the index's daily
  returns (alpha per session), each with a 95% interval from a moving block bootstrap
  over sessions (blocks of ``hold_sessions`` sessions, since a trade's returns run that
  long; the same seed and replicates as every other interval);
- **up and down sessions**: the series split by the index's move that session (up,
  down; a flat session is counted in neither), with the mean return on each side.

The index is priced on the trades' basis: at the opening auction if its file has opens,
else (a close-only index against trades at the auction) at the close before the auction,
the level the auction opens from, less the overnight move; the statement says which.

All arithmetic is plain Python floats in a fixed order, so the figures are the same on
every machine and ``verify`` re-derives them exactly.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from harness.market.calendar import SessionTable
from harness.market.intervals import (
    BOOTSTRAP_REPLICATES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    percentile_indices,
)
from harness.market.prices import PriceError, Prices, load_prices
from harness.market.scoring import Trade

MIN_SESSIONS = 3  # fewer sessions in the series than this: no beta, no alpha


class MarketIndexError(PriceError):
    """An index series that cannot be used."""


@dataclass(frozen=True)
class MarketIndex:
    """One symbol of a price file, read as the market a run is measured against."""

    series: Prices
    symbol: str
    levels: dict[date, float]

    def reference(self) -> dict[str, str]:
        """What a run's config binds of its index."""
        return {**self.series.reference(), "symbol": self.symbol}

    def statement(self, trades_basis: str) -> dict[str, Any]:
        """What the receipt records of it: declared, not verified."""
        return {
            "source": self.series.source,
            "pulled_at": self.series.pulled_at,
            "symbol": self.symbol,
            "file": self.series.file_name,
            "file_sha256": "sha256:" + self.series.file_sha256,
            "levels": len(self.levels),
            "basis": self.basis(trades_basis),
            "verified_by_harness": False,
        }

    def basis(self, trades_basis: str) -> str:
        if self.series.basis == trades_basis:
            return "the trades' own: " + (
                "the opening auction" if trades_basis == "open" else "the close"
            )
        if trades_basis == "open":
            return "the close before each opening auction (a close-only index)"
        return "the opening auction after each close (an index with opens only)"

    def level(self, table: SessionTable, session: int, trades_basis: str) -> float | None:
        """The index's level where a trade at session ``session`` is priced."""
        if self.series.basis != trades_basis:
            session += -1 if trades_basis == "open" else 1
        if not 0 <= session < len(table.sessions):
            return None
        return self.levels.get(table.sessions[session])


def load_index(
    path: str | os.PathLike[str], *, symbol: str, source: str, pulled_at: str
) -> MarketIndex:
    """``symbol``'s levels from a price file; refused when the file holds none of them."""
    if not symbol.strip():
        raise MarketIndexError("an index needs the symbol of its series in the file")
    series = load_prices(path, source=source, pulled_at=pulled_at)
    levels = series.series_of(symbol)
    if not levels:
        found = ", ".join(sorted(series.symbols())[:10])
        raise MarketIndexError(f"{series.file_name}: no levels for {symbol!r} (it holds {found})")
    return MarketIndex(series, symbol, levels)


def bound_index(path: str | os.PathLike[str], bound: dict[str, Any]) -> MarketIndex:
    """The index a run's config binds (``bound``: its ``benchmark_index``, possibly empty),
    read from ``path``: the symbol and statement are the config's, only the file's bytes
    are the reader's (an empty binding names no symbol, and loading refuses)."""
    return load_index(
        path,
        symbol=str(bound.get("symbol") or ""),
        source=str(bound.get("source") or "as stated in the receipt"),
        pulled_at=str(bound.get("pulled_at") or ""),
    )


@dataclass(frozen=True)
class Fit:
    """Least squares of the cell's daily returns on the index's."""

    beta: float
    alpha: float  # per session

    @staticmethod
    def of(x: Sequence[float], y: Sequence[float]) -> Fit | None:
        return _fit(*_sums(x, y))


def _sums(x: Sequence[float], y: Sequence[float]) -> tuple[int, float, float, float, float]:
    sx = sy = sxx = sxy = 0.0
    for a, b in zip(x, y, strict=True):
        sx += a
        sy += b
        sxx += a * a
        sxy += a * b
    return len(x), sx, sy, sxx, sxy


def _fit(n: int, sx: float, sy: float, sxx: float, sxy: float) -> Fit | None:
    if n < MIN_SESSIONS:
        return None
    spread = sxx - sx * sx / n
    if spread <= 1e-18 * max(sxx, 1e-300):  # the index did not move: no beta
        return None
    beta = (sxy - sx * sy / n) / spread
    return Fit(beta, (sy - beta * sx) / n)


@dataclass(frozen=True)
class Series:
    """A cell's daily returns beside the index's, session by session."""

    sessions: list[str]
    returns: list[float]  # the mean over the trades open that session
    index: list[float]


def daily_series(
    trades: Sequence[Trade],
    *,
    prices: Prices,
    index: MarketIndex,
    table: SessionTable,
) -> Series:
    """The cell's one-session returns on each session a priced trade was open over and
    the index moved (see the module's account)."""
    position = {day.isoformat(): n for n, day in enumerate(table.sessions)}
    basis = prices.basis
    sums: dict[int, list[float]] = {}
    for trade in trades:
        if trade.ret is None or trade.ticker is None:
            continue
        first, last = position[trade.entry_session], position[trade.exit_session]
        before = trade.entry_price
        for session in range(first + 1, last + 1):
            now = prices.price(trade.ticker, table.sessions[session])
            if before is not None and now is not None:
                sums.setdefault(session, []).append(now / before - 1.0)
            before = now
    series = Series([], [], [])
    for session in sorted(sums):
        then = index.level(table, session - 1, basis)
        now = index.level(table, session, basis)
        if then is None or now is None:
            continue
        moves = sums[session]
        series.sessions.append(table.sessions[session].isoformat())
        series.returns.append(sum(moves) / len(moves))
        series.index.append(now / then - 1.0)
    return series


def excess_returns(
    trades: Sequence[Trade], *, index: MarketIndex, table: SessionTable, basis: str
) -> list[float]:
    """Each priced trade's return less the index's over its hold, in trade order; a
    trade whose hold the index does not cover is left out."""
    position = {day.isoformat(): n for n, day in enumerate(table.sessions)}
    out = []
    for trade in trades:
        if trade.ret is None:
            continue
        entry = index.level(table, position[trade.entry_session], basis)
        exit_ = index.level(table, position[trade.exit_session], basis)
        if entry is not None and exit_ is not None:
            out.append(trade.ret - (exit_ / entry - 1.0))
    return out


def fit_intervals(
    series: Series,
    *,
    block: int,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """95% intervals of (beta, alpha) from a moving block bootstrap: blocks of ``block``
    consecutive sessions of the series drawn with replacement until the series' length
    is reached (the last block cut short). A draw with no spread in the index is drawn
    again. None when the series has no fit."""
    n = len(series.returns)
    if Fit.of(series.index, series.returns) is None:
        return None
    block = max(1, min(block, n))
    # prefix sums: a block's sums in four subtractions
    prefix = [(0.0, 0.0, 0.0, 0.0)]
    for a, b in zip(series.index, series.returns, strict=True):
        sx, sy, sxx, sxy = prefix[-1]
        prefix.append((sx + a, sy + b, sxx + a * a, sxy + a * b))
    starts = n - block + 1
    whole, rest = divmod(n, block)
    rng = random.Random(seed)
    betas: list[float] = []
    alphas: list[float] = []
    while len(betas) < replicates:
        sx = sy = sxx = sxy = 0.0
        for k in range(whole + (1 if rest else 0)):
            start = rng.randrange(starts)
            stop = start + (block if k < whole else rest)
            hi, lo = prefix[stop], prefix[start]
            sx += hi[0] - lo[0]
            sy += hi[1] - lo[1]
            sxx += hi[2] - lo[2]
            sxy += hi[3] - lo[3]
        fit = _fit(n, sx, sy, sxx, sxy)
        if fit is not None:
            betas.append(fit.beta)
            alphas.append(fit.alpha)
    betas.sort()
    alphas.sort()
    low, high = percentile_indices(confidence, replicates)
    return (betas[low], betas[high]), (alphas[low], alphas[high])


def _side(series: Series, up: bool) -> dict[str, Any]:
    picked = [
        r for r, m in zip(series.returns, series.index, strict=True) if m != 0 and (m > 0) == up
    ]
    return {"sessions": len(picked), "mean_return": sum(picked) / len(picked) if picked else None}


def market_figures(
    trades: Sequence[Trade],
    *,
    prices: Prices,
    index: MarketIndex,
    table: SessionTable,
    hold_sessions: int,
    series: Series | None = None,
) -> dict[str, Any]:
    """A cell's ``market`` entry in the receipt (see the module's account); ``series``:
    the cell's ``daily_series``, when the caller made it already."""
    excess = excess_returns(trades, index=index, table=table, basis=prices.basis)
    if series is None:
        series = daily_series(trades, prices=prices, index=index, table=table)
    fit = Fit.of(series.index, series.returns)
    intervals = fit_intervals(series, block=hold_sessions) if fit is not None else None
    return {
        "excess_return": sum(excess) / len(excess) if excess else None,
        "excess_trades": len(excess),
        "sessions": len(series.returns),
        "beta": None if fit is None else fit.beta,
        "beta_interval_95": None if intervals is None else list(intervals[0]),
        "alpha_per_session": None if fit is None else fit.alpha,
        "alpha_interval_95": None if intervals is None else list(intervals[1]),
        "up_sessions": _side(series, up=True),
        "down_sessions": _side(series, up=False),
    }
