"""The forward board's figures: windows joined without counting a trade twice, the decay
and its interval, and the attempts rule over commitments."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from harness.forward.standing import (
    Entrant,
    Window,
    decay_bootstrap,
    forward_board,
    forward_curve,
    pooled,
    standing,
)
from harness.market.scoring import Trade
from harness.receipt.attempts import family_interval
from harness.receipt.rescore import block_bootstrap, bootstrap_tails


def _trade(key: str, day: str, ret: float | None) -> Trade:
    status = "priced" if ret is not None else "no_price"
    return Trade(key, "8-K", "T", day, day, 1.0, None if ret is None else 1.0 + ret, ret, status)


def _days(first: date, n: int) -> list[str]:
    return [(first + timedelta(days=i)).isoformat() for i in range(n)]


def _window(first: date, n: int, rets: list[float], per_day: int = 3) -> list[Trade]:
    days = _days(first, n)
    return [
        _trade(f"{d}-{k}", d, rets[(i * per_day + k) % len(rets)])
        for i, d in enumerate(days)
        for k in range(per_day)
    ]


def test_overlapping_windows_count_each_trade_once() -> None:
    v1 = _window(date(2024, 3, 1), 5, [0.01, -0.02])
    v2 = _window(date(2024, 3, 1), 10, [0.01, -0.02])  # the same five sessions, five more
    joined = pooled([Window(v1[-1].entry_session, v1), Window(v2[-1].entry_session, v2)])
    assert len(joined) == len(v2)
    assert [t.row_key for t in joined] == [t.row_key for t in v2]
    # an earlier window's sessions come from it, not from a later re-run that differs
    changed = [t._replace(ret=0.5) for t in v2]
    joined = pooled([Window("2024-03-05", v1), Window("2024-03-10", changed)])
    assert sum(t.ret == 0.5 for t in joined) == len(v2) - len(v1)


def test_standing_is_the_main_boards_bootstrap_of_the_joined_trades() -> None:
    ahead = _window(date(2024, 3, 1), 12, [0.02, -0.01, 0.0])
    behind = _window(date(2024, 2, 1), 12, [0.03, 0.01, 0.02])
    found = standing([Window("2024-03-12", ahead)], behind)
    assert found.forward == block_bootstrap(ahead)
    assert found.backtest == block_bootstrap(behind)
    assert found.decay == pytest.approx(found.backtest.total_return - found.forward.total_return)
    assert found.tails == bootstrap_tails(ahead)


def test_an_edge_gone_forward_has_a_decay_interval_above_zero() -> None:
    behind = _window(date(2024, 2, 1), 15, [0.03, 0.05, 0.01, 0.04])
    ahead = _window(date(2024, 3, 1), 15, [0.02, -0.03, 0.01, -0.01])
    low, high = decay_bootstrap(behind, ahead)
    assert 0 < low < high
    # the same agent, no edge either side: the interval holds zero
    flat = _window(date(2024, 2, 1), 15, [0.02, -0.03, 0.01, -0.01])
    low, high = decay_bootstrap(flat, ahead)
    assert low < 0 < high
    assert decay_bootstrap([], ahead) is None
    assert decay_bootstrap([_trade("x", "2024-02-01", None)], ahead) is None


def _entrant(submitter: str, agent: str, seq: int, rets: list[float], n: int = 12) -> Entrant:
    ahead = _window(date(2024, 3, 1), n, rets)
    return Entrant((submitter, agent), seq, standing([Window("2024-03-31", ahead)], None))


def test_every_commitment_of_a_family_widens_its_ranked_interval() -> None:
    rets = [0.02, -0.01, 0.01, 0.0]
    alone = forward_board([_entrant("a", "x", 1, rets)], min_trades=10)
    many = forward_board(
        [
            _entrant("a", "x", 1, rets),
            _entrant("a", "x", 2, [-0.05]),
            _entrant("a", "x", 3, [-0.04]),
        ],
        min_trades=10,
    )
    assert alone[0].commitments == 1 and many[0].commitments == 3
    assert many[0].best.seq == 1  # the best of the three is the one ranked
    lo1, hi1 = alone[0].interval or (0, 0)
    lo3, hi3 = many[0].interval or (0, 0)
    assert lo3 < lo1 and hi3 > hi1
    tails = many[0].best.standing.tails
    assert tails is not None and many[0].interval == family_interval(tails, 3)


def test_too_few_trades_are_listed_not_ranked_with_the_count_needed() -> None:
    board = forward_board(
        [_entrant("a", "x", 1, [0.01, 0.0]), _entrant("b", "y", 2, [0.5], n=2)], min_trades=30
    )
    assert [p.family for p in board] == [("a", "x"), ("b", "y")]
    assert board[0].ranked and board[0].rank == (1, 1)
    assert not board[1].ranked and board[1].needs == 30 - 6 and board[1].interval is None


def test_rank_ranges_overlap_where_intervals_do() -> None:
    board = forward_board(
        [
            _entrant("a", "x", 1, [0.05, 0.02, 0.08, 0.01]),
            _entrant("b", "y", 2, [0.051, 0.021, 0.081, 0.011]),
            _entrant("c", "z", 3, [-0.05, -0.02, -0.08, -0.01]),
        ],
        min_trades=10,
    )
    ranks = {p.family[0]: p.rank for p in board}
    assert ranks["c"] == (3, 3)
    assert ranks["a"] == (1, 2) and ranks["b"] == (1, 2)


def test_the_curve_ends_at_the_forward_figure() -> None:
    ahead = [*_window(date(2024, 3, 1), 6, [0.02, -0.01, 0.0]), _trade("u", "2024-03-02", None)]
    curve = forward_curve(ahead, date(2024, 2, 29))
    assert [p["days"] for p in curve] == list(range(1, 7))
    assert curve[-1]["trades"] == 18
    assert curve[-1]["forward_return"] == pytest.approx(block_bootstrap(ahead).total_return)
