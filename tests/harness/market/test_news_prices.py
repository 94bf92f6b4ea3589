"""SYNTHETIC prices with news: a stock rises over the session its news arrives and gives
it back over the next ones; the walk's random draws are the same with or without news."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import pytest

from harness.market.prices import news_sessions, synth_prices

NEWS_DAY = date(2023, 3, 8)


def _bars(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    with path.open() as file:
        return {
            (r["symbol"], r["date"]): (float(r["open"]), float(r["close"]))
            for r in csv.DictReader(file)
        }


def _write(
    path: Path, news: dict[str, list[date]] | None
) -> dict[tuple[str, str], tuple[float, float]]:
    synth_prices(
        path, symbols=["AAA", "BBB"], start=date(2023, 3, 1), end=date(2023, 3, 31), seed=3,
        news=news, news_jump=0.02, news_fade=4,
    )  # fmt: skip
    return _bars(path)


def test_no_news_and_news_of_nobody_write_the_same_walk(tmp_path: Path) -> None:
    _write(tmp_path / "a.csv", None)
    _write(tmp_path / "b.csv", {"ZZZ": [NEWS_DAY]})
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_news_lifts_its_session_then_fades_and_leaves_other_stocks_alone(tmp_path: Path) -> None:
    plain = _write(tmp_path / "plain.csv", None)
    moved = _write(tmp_path / "news.csv", {"AAA": [NEWS_DAY]})
    assert {k: v for k, v in moved.items() if k[0] == "BBB"} == {
        k: v for k, v in plain.items() if k[0] == "BBB"
    }
    days = sorted(d for s, d in plain if s == "AAA")
    at = days.index(NEWS_DAY.isoformat())
    assert all(moved[("AAA", d)] == plain[("AAA", d)] for d in days[:at])  # nothing before

    def excess(day: str) -> float:  # the session's open-to-close move beyond the walk's
        return (
            moved[("AAA", day)][1] / moved[("AAA", day)][0]
            - plain[("AAA", day)][1] / plain[("AAA", day)][0]
        )

    assert excess(days[at]) == pytest.approx(0.02, abs=2e-4)
    assert [excess(d) for d in days[at + 1 : at + 5]] == pytest.approx([-0.005] * 4, abs=2e-4)
    assert excess(days[at + 5]) == pytest.approx(0.0, abs=2e-4)


def test_news_arrives_at_the_first_bell_the_filing_is_knowable_at_the_pit_clock() -> None:
    rows = [
        # no acceptance stamp: knowable after the nightly index, so the next session
        {
            "form": "8-K",
            "ticker": "AAA",
            "partition_date": "2023-03-08",
            "published_at": "2023-03-08",
            "acceptance_at": None,
        },
        # accepted before the open: the same session
        {
            "form": "8-K",
            "ticker": "BBB",
            "partition_date": "2023-03-08",
            "published_at": "2023-03-08",
            "acceptance_at": "2023-03-08T08:00:00-05:00",
        },
        {
            "form": "4",
            "ticker": "CCC",
            "partition_date": "2023-03-08",
            "published_at": "2023-03-08",
            "acceptance_at": None,
        },
        {
            "form": "8-K",
            "ticker": None,
            "partition_date": "2023-03-08",
            "published_at": "2023-03-08",
            "acceptance_at": None,
        },
    ]
    assert news_sessions(rows, form="8-K") == {"AAA": [date(2023, 3, 9)], "BBB": [date(2023, 3, 8)]}


def test_the_command_line_writes_the_demos_kind_of_market(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``prices synth --news 8-K`` writes what the demo writes (its source statement names
    the command): the release's 8-Ks as news, from the release's first day."""
    from harness.cli import main
    from harness.release.bundle import Bundle

    argv = [
        "prices",
        "synth",
        "--bundle",
        str(march_release),
        "--end",
        "2023-05-31",
        "--seed",
        "11",
    ]
    assert main([*argv, "--out", str(tmp_path / "cli.csv"), "--news", "8-K"]) == 0
    assert main([*argv, "--out", str(tmp_path / "plain.csv")]) == 0
    capsys.readouterr()
    rows = Bundle.load(march_release).rows("main")
    synth_prices(
        tmp_path / "direct.csv", symbols=sorted({r["ticker"] for r in rows if r["ticker"]}),
        start=date(2023, 3, 1), end=date(2023, 5, 31), seed=11,
        news=news_sessions(rows, form="8-K"),
    )  # fmt: skip
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "direct.csv").read_bytes()
    assert (tmp_path / "plain.csv").read_bytes() != (tmp_path / "cli.csv").read_bytes()
