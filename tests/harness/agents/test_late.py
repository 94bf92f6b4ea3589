"""The slow baseline's behaviour on a market that moves on news (the demo's kind):
acting at the bell a filing is knowable pays, acting a session late does not."""

from __future__ import annotations

from pathlib import Path

from harness.receipt.rescore import rank_ranges
from tests.support.priced import pit, priced_run


def test_one_session_late_buys_what_the_bell_before_made_knowable(
    tmp_path: Path, march_release: Path, march_news_prices: Path
) -> None:
    figures, _ = priced_run(
        tmp_path, march_release, march_news_prices,
        agent="harness.agents.late:one_session_late",
    )  # fmt: skip
    stub, _ = priced_run(tmp_path / "stub", march_release, march_news_prices, agent="stub")
    late = figures.trades[("main", "pit")]
    sessions = sorted({t.entry_session for t in stub.trades[("main", "pit")]})
    bought = {t.row_key: t.entry_session for t in stub.trades[("main", "pit")]}
    # each filing enters one session after the stub bought it (none on the first bell)
    assert late and all(
        sessions.index(t.entry_session) == sessions.index(bought[t.row_key]) + 1 for t in late
    )


def test_acting_a_session_late_ranks_below_the_stub_in_a_market_that_moves_on_news(
    tmp_path: Path, march_release: Path, march_news_prices: Path
) -> None:
    late, _ = priced_run(
        tmp_path / "late", march_release, march_news_prices,
        agent="harness.agents.late:one_session_late",
    )  # fmt: skip
    stub, _ = priced_run(tmp_path / "stub", march_release, march_news_prices, agent="stub")
    intervals = [pit(stub, "shifted")[1:], pit(late, "shifted")[1:]]
    assert [r.label for r in rank_ranges(intervals)] == ["1", "2"]
