"""Trades and returns: the one place a cell's score is computed.

A pick made at a session's bell enters long at that session's opening auction and
exits at the opening auction ``hold_sessions`` sessions later (on a close-only price
file: at those sessions' closes), with no costs, slippage or shorts. A trade's return
is ``exit / entry - 1``; a cell's ``total_return`` is the mean over its priced trades,
each trade one equal unit of capital, not compounded. Trades that cannot be priced
(no ticker, no bar) are counted and left out of the mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from harness import canonical
from harness.calendar import SessionTable
from harness.prices import Prices


@dataclass(frozen=True)
class Trade:
    row_key: str
    form: str
    ticker: str | None
    entry_session: str
    exit_session: str
    entry_price: float | None
    exit_price: float | None
    ret: float | None
    status: str  # priced | no_prices | no_ticker | no_price

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def make_trades(
    picks: Iterable[tuple[int, Iterable[str]]],
    *,
    main_by_key: dict[str, dict[str, Any]],
    table: SessionTable,
    hold_sessions: int,
    prices: Prices | None,
) -> list[Trade]:
    """``picks``: (session index, accepted row keys) in session order."""
    trades = []
    for session, keys in picks:
        entry_day = table.sessions[session]
        exit_day = table.sessions[session + hold_sessions]
        for key in keys:
            row = main_by_key[key]
            ticker = row.get("ticker")
            entry = exit_ = ret = None
            if prices is None:
                status = "no_prices"
            elif not ticker:
                status = "no_ticker"
            else:
                entry = prices.price(ticker, entry_day)
                exit_ = prices.price(ticker, exit_day)
                if entry is None or exit_ is None:
                    status = "no_price"
                else:
                    ret = exit_ / entry - 1.0
                    status = "priced"
            trades.append(
                Trade(
                    key,
                    row["form"],
                    ticker,
                    entry_day.isoformat(),
                    exit_day.isoformat(),
                    entry,
                    exit_,
                    ret,
                    status,
                )
            )
    return trades


def total_return(trades: list[Trade]) -> float | None:
    priced = [t.ret for t in trades if t.ret is not None]
    return sum(priced) / len(priced) if priced else None


def trades_digest(trades: list[Trade]) -> str:
    return canonical.digest([t.to_json() for t in trades])


def delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b
