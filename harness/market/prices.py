"""Daily prices supplied by the user, and the statement of where they came from.

The file is a long CSV ``date,symbol,open,close``. The harness fetches nothing and
checks nothing about the source: it records the user's ``source`` and ``pulled_at``
in the receipt (P4) as a declaration.

Entry is the opening auction. A file with no ``open`` column (daily closes only, such
as FRED's index series) cannot price an opening auction, so such a file switches the
price basis to ``close``: a trade enters at the entry session's close and exits at the
exit session's close. That forgoes the entry day's move rather than borrowing the
overnight gap from before the auction, and the receipt says which basis was used.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any


class PriceError(ValueError):
    """A price file that cannot be read as ``date,symbol,open,close``."""


@dataclass(frozen=True)
class Prices:
    source: str
    pulled_at: str
    basis: str  # "open" or "close"
    file_name: str
    file_sha256: str
    _bars: dict[tuple[str, date], float] = field(repr=False)
    path: str = ""  # where it was read from (kept out of the agent's sandbox)

    def reference(self) -> dict[str, str]:
        """What a run's config binds of the prices it used."""
        return {
            "file": self.file_name,
            "file_sha256": "sha256:" + self.file_sha256,
            "source": self.source,
            "pulled_at": self.pulled_at,
        }

    def price(self, symbol: str, day: date) -> float | None:
        return self._bars.get((symbol, day))

    def __len__(self) -> int:
        return len(self._bars)

    def symbols(self) -> set[str]:
        return {symbol for symbol, _ in self._bars}

    def series_of(self, symbol: str) -> dict[date, float]:
        """One symbol's bars by day."""
        return {day: value for (name, day), value in self._bars.items() if name == symbol}

    def last_day(self) -> date | None:
        """The latest day any bar is for (None: no bars)."""
        return max((day for _, day in self._bars), default=None)

    def statement(self) -> dict[str, object]:
        """What the receipt records under P4: declared, not verified."""
        return {
            "source": self.source,
            "pulled_at": self.pulled_at,
            "basis": self.basis,
            "file": self.file_name,
            "file_sha256": "sha256:" + self.file_sha256,
            "bars": len(self._bars),
            "verified_by_harness": False,
        }


def _number(text: str, where: str) -> float | None:
    text = text.strip()
    if text in ("", ".", "NA", "NaN", "nan", "null"):
        return None  # FRED writes "." for a missing observation
    try:
        value = float(text)
    except ValueError:
        raise PriceError(f"{where}: {text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise PriceError(f"{where}: price {text!r} must be a positive finite number")
    return value


def price_reference(path: str | os.PathLike[str], *, source: str, pulled_at: str) -> Prices:
    """The prices a run binds, without their bars: for work that names the prices but
    prices nothing (a cell run alone; its run's assembly loads them whole). Its
    ``reference()`` is the one ``load_prices`` gives for the same file."""
    file = Path(path)
    if not source.strip():
        raise PriceError("prices need a source statement (where the bars came from)")
    try:
        with open(file, "rb") as handle:
            sha = hashlib.file_digest(handle, "sha256").hexdigest()
    except FileNotFoundError:
        raise PriceError(f"{file.name}: no such price file") from None
    return Prices(
        source=source.strip(),
        pulled_at=pulled_at,
        basis="",
        file_name=file.name,
        file_sha256=sha,
        _bars={},
        path=os.fspath(file),
    )


def load_prices(path: str | os.PathLike[str], *, source: str, pulled_at: str) -> Prices:
    file = Path(path)
    if not source.strip():
        raise PriceError("prices need a source statement (where the bars came from)")
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise PriceError(f"{file.name}: no such price file") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PriceError(f"{file.name}: not UTF-8 text") from None
    reader = csv.DictReader(text.splitlines())
    columns = {c.strip().lower() for c in reader.fieldnames or []}
    missing = {"date", "symbol"} - columns
    if missing or not ({"open", "close"} & columns):
        raise PriceError(
            f"{file.name}: header must be date,symbol,open,close (close-only is accepted); "
            f"got {','.join(reader.fieldnames or [])}"
        )
    basis = "open" if "open" in columns else "close"
    bars: dict[tuple[str, date], float] = {}
    for number, record in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "") for k, v in record.items() if k}
        where = f"{file.name} line {number}"
        try:
            day = date.fromisoformat(row["date"].strip())
        except ValueError:
            raise PriceError(f"{where}: date {row['date']!r} is not YYYY-MM-DD") from None
        symbol = row["symbol"].strip()
        if not symbol:
            raise PriceError(f"{where}: empty symbol")
        value = _number(row[basis], where)
        if value is None:
            continue
        if (symbol, day) in bars:
            raise PriceError(f"{where}: a second bar for {symbol} on {day}")
        bars[(symbol, day)] = value
    if not bars:
        raise PriceError(f"{file.name}: no prices")
    return Prices(
        source=source.strip(),
        pulled_at=pulled_at,
        basis=basis,
        file_name=file.name,
        file_sha256=hashlib.sha256(raw).hexdigest(),
        _bars=bars,
        path=os.fspath(file),
    )


def synth_prices(
    out: str | os.PathLike[str],
    *,
    symbols: list[str],
    start: date,
    end: date,
    seed: int,
    news: Mapping[str, Iterable[date]] | None = None,
    news_jump: float = 0.02,
    news_fade: int = 10,
    market: str | None = None,
    market_volatility: float = 0.01,
) -> int:
    """Write a SYNTHETIC long price file (random walks, open and close per session).

    For demos only: the numbers describe no market. Returns the number of bars.

    ``news`` (``news_sessions``): for a symbol, the sessions on which news of it arrives.
    Over such a session the stock rises by ``news_jump`` more than its walk, then gives
    that back evenly over the next ``news_fade`` sessions: a market where buying at the
    first bell a filing is knowable pays and buying a session late does not. The walk's
    random draws are the same with or without news, so without it the file is the plain
    random walk, byte for byte.

    ``market``: a symbol for a SYNTHETIC index written beside the stocks (each session
    opening where the last closed), with every stock moving on it by a beta of its own
    drawn from 0.5 to 1.5: a market a run's beta and alpha can be measured against. The
    market's session moves have a standard deviation of ``market_volatility``; its draws
    come from a generator of their own, so without it the file is the plain walk, byte
    for byte.
    """
    import random

    from harness.market.calendar import sessions_for

    table = sessions_for(start, end)
    days = [d for d in table.sessions if start <= d <= end]
    rng = random.Random(seed)
    lines = ["date,symbol,open,close"]
    swings, betas = _market(market, sorted(set(symbols)), len(days), seed, market_volatility)
    if market:
        level = 1000.0
        for n, day in enumerate(days):
            opened, level = level, level * (1.0 + swings[n])
            lines.append(f"{day.isoformat()},{market},{opened:.4f},{level:.4f}")
    for symbol in sorted(set(symbols)):
        price = rng.uniform(8.0, 300.0)
        drift = rng.gauss(0.0002, 0.0008)
        moves = _news_moves(days, (news or {}).get(symbol, ()), news_jump, news_fade)
        for n, day in enumerate(days):
            opened = price * (1.0 + rng.gauss(0.0, 0.01))
            price = opened * (
                1.0 + drift + rng.gauss(0.0, 0.015) + moves.get(n, 0.0) + betas[symbol] * swings[n]
            )
            lines.append(f"{day.isoformat()},{symbol},{opened:.4f},{price:.4f}")
    Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1


def _market(
    market: str | None, symbols: list[str], sessions: int, seed: int, volatility: float
) -> tuple[list[float], dict[str, float]]:
    """A SYNTHETIC market's session moves and each stock's beta on it (none: zeros)."""
    import random

    if not market:
        return [0.0] * sessions, dict.fromkeys(symbols, 0.0)
    if market in symbols:
        raise PriceError(f"the market symbol {market!r} is also a stock's")
    rng = random.Random(f"market:{seed}")
    swings = [rng.gauss(0.0003, volatility) for _ in range(sessions)]
    return swings, {symbol: rng.uniform(0.5, 1.5) for symbol in symbols}


def _news_moves(
    days: list[date], sessions: Iterable[date], jump: float, fade: int
) -> dict[int, float]:
    """Each day's extra open-to-close move from the news: ``jump`` on a news session,
    ``-jump / fade`` on each of the ``fade`` sessions after it (news on nearby sessions
    adds up)."""
    where = {day: n for n, day in enumerate(days)}
    moves: dict[int, float] = {}
    for session in sorted(set(sessions)):
        n = where.get(session)
        if n is None:
            continue
        moves[n] = moves.get(n, 0.0) + jump
        for after in range(n + 1, min(n + fade, len(days) - 1) + 1):
            moves[after] = moves.get(after, 0.0) - jump / fade
    return moves


def news_sessions(rows: Iterable[dict[str, Any]], *, form: str) -> dict[str, list[date]]:
    """For each ticker, the sessions at whose opening bell one of its ``form`` filings
    first became knowable at the pit clock (the bell a trade on it enters): the news
    ``synth_prices`` moves a demo market with."""
    from harness.market.calendar import sessions_for
    from harness.market.clocks import known_at

    chosen = [r for r in rows if r.get("form") == form and r.get("ticker")]
    if not chosen:
        return {}
    days = [date.fromisoformat(r["partition_date"]) for r in chosen]
    table = sessions_for(min(days), max(days))
    out: dict[str, set[date]] = {}
    for row in chosen:
        entry = table.first_open_after(known_at(row, "pit")[0])
        out.setdefault(row["ticker"], set()).add(table.sessions[entry])
    return {ticker: sorted(found) for ticker, found in sorted(out.items())}
