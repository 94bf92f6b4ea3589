"""Trades and returns: the one place a cell's score is computed.

A pick made at a session's bell enters long at that session's opening auction and
exits at the opening auction ``hold_sessions`` sessions later (on a close-only price
file: at those sessions' closes), with no costs, slippage or shorts. A trade's return
is ``exit / entry - 1``; a cell's ``total_return`` is the mean over its priced trades,
each trade one equal unit of capital, not compounded. Trades that cannot be priced
(no ticker, no bar) are counted and left out of the mean.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, NamedTuple

from harness import canonical
from harness.market.calendar import SessionTable
from harness.market.clocks import acceptance_instant
from harness.market.prices import Prices


class Trade(NamedTuple):
    """One trade; a tuple, because a whole-release run makes millions of them."""

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
        return self._asdict()


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
        entry_iso, exit_iso = entry_day.isoformat(), exit_day.isoformat()
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
                    entry_iso,
                    exit_iso,
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


def _fixed(value: float | None) -> str | None:
    return None if value is None else canonical.dumps(value)


def trades_digest(trades: list[Trade]) -> str:
    """sha256 over the canonical JSON of the trade records, in trade order; each record
    is ``[row_key, form, ticker, entry_session, exit_session, entry_price, exit_price,
    ret, status]`` with floats as strings fixed at six decimals. Anyone holding the
    trajectory, the release and the prices can rebuild the trades and compare."""
    records = [
        t
        if t.entry_price is None and t.exit_price is None and t.ret is None
        else (*t[:5], _fixed(t.entry_price), _fixed(t.exit_price), _fixed(t.ret), t.status)
        for t in trades
    ]
    return "sha256:" + hashlib.sha256(canonical.line(records).encode()).hexdigest()


def delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def entered_before_acceptance(
    picks: Iterable[tuple[int, Iterable[str]]],
    main_by_key: dict[str, dict[str, Any]],
    table: SessionTable,
) -> int:
    """Trades entered at an opening auction that began before EDGAR accepted the
    filing: trades no one could have made (the leaky clock shows them; dump and pit
    none by construction)."""
    count = 0
    for session, keys in picks:
        bell = table.opens[session]
        for key in keys:
            accepted = acceptance_instant(main_by_key[key])
            if accepted is not None and bell < accepted:
                count += 1
    return count


def add_by_form(by_form: dict[str, dict[str, Any]], cell: str, trades: list[Trade]) -> None:
    """P6: trades and returns per form, per cell."""
    groups: dict[str, list[Trade]] = {}
    for t in trades:
        groups.setdefault(t.form, []).append(t)
    for form, group in sorted(groups.items()):
        by_form.setdefault(form, {})[cell] = {
            "trades": len(group),
            "priced_trades": sum(1 for t in group if t.ret is not None),
            "total_return": total_return(group),
        }
