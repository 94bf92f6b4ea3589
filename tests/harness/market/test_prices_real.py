"""Prices: the loader on the real FRED closes, and a run priced from them."""

from __future__ import annotations

import csv
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, load_prices, run
from harness.agents.adapters.plain import from_callable
from harness.market.prices import PriceError
from harness.release.bundle import Bundle
from harness.release.store import write_release
from tests.support.data import shared_path


def fred_closes() -> tuple[Path, dict[tuple[str, date], float]]:
    path = shared_path("data", "prices", "us-indices-1d.csv")
    closes = {}
    with path.open() as handle:
        for row in csv.DictReader(handle):
            if row["close"] not in ("", "."):
                closes[(row["symbol"], date.fromisoformat(row["date"]))] = float(row["close"])
    return path, closes


def test_close_only_file_switches_the_basis_to_close() -> None:
    path, closes = fred_closes()
    prices = load_prices(path, source="FRED", pulled_at="2026-11-01")
    assert prices.basis == "close"
    assert len(prices) == len(closes)
    some = sorted(closes)[len(closes) // 2]
    assert prices.price(*some) == closes[some]
    statement = prices.statement()
    assert statement["verified_by_harness"] is False and statement["source"] == "FRED"


def test_run_priced_from_real_index_closes(tmp_path: Path) -> None:
    path, closes = fred_closes()
    days = sorted({d for (_, d) in closes if date(2023, 3, 1) <= d <= date(2023, 3, 31)})
    # one 8-K a day "filed" by each index symbol, published on the day, so the dump clock
    # enters at the next session's close (close-only basis) and exits five sessions on
    rows = []
    for day in days[:10]:
        for symbol in ("SPX", "DJI", "IXIC"):
            rows.append(
                {
                    "accession": f"0000000001-23-{len(rows):06d}",
                    "form": "8-K",
                    "cik": f"{len(rows) + 1:010d}",
                    "issuer": f"Index {symbol}",
                    "ticker": symbol,
                    "title": f"8-K - Index {symbol}",
                    "partition_date": day.isoformat(),
                    "published_at": day.isoformat(),
                    "acceptance_at": None,
                    "filename": None,
                }
            )
    release = tmp_path / "release"
    write_release(
        release,
        name="index-fixture",
        rows=rows,
        window=("2023-03-01", "2023-03-31"),
        provenance="test",
        source={"kind": "test"},
        row_key_secret=bytes(32),
    )

    def buy_all(prompt: str, tools: Any) -> list[str]:
        return [r["row_key"] for r in tools.pit_list(limit=None)["rows"]]

    result = run(
        from_callable(buy_all),
        RunConfig(
            bundle_path=str(release),
            start="2023-03-01",
            end="2023-03-14",
            arms=("main",),
            clocks=("dump",),
            hold_sessions=5,
            trajectory_path=str(tmp_path / "t.jsonl"),
            receipt_path=str(tmp_path / "r.json"),
        ),
        prices=load_prices(path, source="FRED", pulled_at="2026-11-01"),
    )
    trades = result.trades("main", "dump")
    written = {r["row_key"]: r for r in Bundle.load(release).rows("main")}
    assert trades and all(t.status == "priced" for t in trades)
    sessions = sorted(d for d in days)
    expected = []
    for t in trades:
        filed = written[t.row_key]["partition_date"]
        entry = next(d for d in sessions if d > date.fromisoformat(filed))
        exit_ = (
            sessions[sessions.index(entry) + 5]
            if sessions.index(entry) + 5 < len(sessions)
            else None
        )
        if exit_ is None:  # past March: take it from the file itself
            later = sorted(d for (s, d) in closes if s == t.ticker and d > entry)
            exit_ = later[4]
        assert t.entry_session == entry.isoformat() and t.exit_session == exit_.isoformat()
        expected.append(closes[(t.ticker, exit_)] / closes[(t.ticker, entry)] - 1)  # type: ignore[index]
    assert result.total_return("main", "dump") == pytest.approx(sum(expected) / len(expected))
    assert result.body["protocol"]["P4_costs_and_frictions"]["entry"].endswith(
        "(close-only price file)"
    )
    assert date.fromisoformat(trades[0].entry_session) - date.fromisoformat(
        rows[0]["partition_date"]
    ) < timedelta(days=5)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("when,what\n2023-01-03,SPX\n", "header must be date,symbol,open,close"),
        ("date,symbol,close\n2023-01-03,SPX,abc\n", "is not a number"),
        ("date,symbol,close\n2023-13-03,SPX,1\n", "is not YYYY-MM-DD"),
        ("date,symbol,close\n2023-01-03,SPX,-4\n", "positive finite"),
        ("date,symbol,close\n2023-01-03,SPX,nan\n", "no prices"),
        ("date,symbol,close\n2023-01-03,SPX,1\n2023-01-03,SPX,2\n", "a second bar"),
    ],
)
def test_bad_price_files_are_refused_with_the_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "p.csv"
    path.write_text(content)
    with pytest.raises(PriceError, match=message):
        load_prices(path, source="test", pulled_at="")
