"""Platform figures: one run priced with reference prices whatever its submitter used,
with an interval from a block bootstrap over entry sessions, and ranks that are ranges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, load_prices, run
from harness.agents import stub
from harness.market.scoring import Trade, total_return
from harness.receipt.rescore import (
    RankRange,
    RescoreRefused,
    block_bootstrap,
    delta_bootstrap,
    rank_ranges,
    rescore,
)
from tests.support.data import build_prices


def _trade(session: str, ret: float | None) -> Trade:
    status = "priced" if ret is not None else "no_price"
    return Trade("r-0", "8-K", "X", session, "2023-03-10", None, None, ret, status)


def test_one_session_or_equal_sessions_give_a_point_interval() -> None:
    one = block_bootstrap([_trade("2023-03-01", 0.02), _trade("2023-03-01", 0.04)])
    assert (one.total_return, one.low, one.high) == (pytest.approx(0.03),) * 3
    assert (one.trades, one.priced, one.sessions) == (2, 2, 1)
    same = block_bootstrap([_trade(f"2023-03-0{d}", 0.01) for d in range(1, 6)])
    assert same.low == same.high == pytest.approx(0.01)


def test_two_sessions_give_the_interval_a_hand_computes() -> None:
    # replicates draw (a,a), (a,b), (b,a), (b,b) with a quarter each: the 2.5% and 97.5%
    # percentiles of the replicate means are a and b themselves
    trades = [_trade("2023-03-01", -0.02), _trade("2023-03-02", 0.06), _trade("2023-03-02", None)]
    figure = block_bootstrap(trades)
    assert figure.total_return == pytest.approx(0.02) == total_return(trades)
    assert (figure.low, figure.high) == (pytest.approx(-0.02), pytest.approx(0.06))
    assert (figure.trades, figure.priced, figure.sessions) == (3, 2, 2)
    assert block_bootstrap(trades) == figure  # seeded: the same every time


def test_trades_of_one_session_are_resampled_together() -> None:
    # one session of ten equal trades against one session of one: a trade-level bootstrap
    # would weight the big session's trades apart; the block bootstrap keeps them together
    trades = [_trade("2023-03-01", 0.10)] * 10 + [_trade("2023-03-02", -0.10)]
    figure = block_bootstrap(trades)
    assert figure.low == pytest.approx(-0.10) and figure.high == pytest.approx(0.10)


def test_no_priced_trade_gives_no_figure() -> None:
    figure = block_bootstrap([_trade("2023-03-01", None)])
    assert (figure.total_return, figure.low, figure.high, figure.priced) == (None, None, None, 0)


def test_a_deltas_interval_draws_the_same_sessions_for_both_arms() -> None:
    # two sessions: draws (1,1), (2,2) and the mixed ones give deltas 0.02, 0.04 and 0.03
    main = [_trade("2023-03-01", 0.02), _trade("2023-03-02", 0.06)]
    control = [_trade("2023-03-01", 0.00), _trade("2023-03-02", 0.02)]
    low, high = delta_bootstrap(main, control) or (None, None)
    assert (low, high) == (pytest.approx(0.02), pytest.approx(0.04))
    # an arm against itself: no difference in any draw
    assert delta_bootstrap(main, main) == (0.0, 0.0)
    # no priced trade in the control: no delta, no interval
    assert delta_bootstrap(main, [_trade("2023-03-01", None)]) is None
    assert delta_bootstrap(main, control) == delta_bootstrap(main, control)  # seeded


def test_rank_ranges_against_a_hand_count_and_ties_tie() -> None:
    intervals = [(0.10, 0.20), (0.15, 0.30), (0.40, 0.50), (0.10, 0.20), (-0.30, -0.20)]
    ranges = rank_ranges(intervals)
    assert ranges == [
        RankRange(2, 4),  # only the third lies wholly above; four overlap it or lie above
        RankRange(2, 4),
        RankRange(1, 1),
        RankRange(2, 4),  # the same interval as the first: the same range
        RankRange(5, 5),
    ]
    assert [r.label for r in ranges] == ["2-4", "2-4", "1", "2-4", "5"]


@pytest.fixture(scope="module")
def two_submitters(
    march_release: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[Path]]:
    """The stub run twice on one release, each submitter with a price file of their own."""
    root = tmp_path_factory.mktemp("submitters")
    outs = []
    for seed in (1, 2):
        prices = build_prices(root / f"prices-{seed}.csv", march_release, seed=seed)
        out = root / f"run-{seed}"
        run(
            stub(),
            RunConfig(
                bundle_path=str(march_release),
                forms=("8-K",),
                start="2023-03-01",
                end="2023-03-08",
                prices={"path": str(prices), "source": f"vendor {seed}"},
                trajectory_path=str(out / "trajectory.jsonl"),
                receipt_path=str(out / "receipt.json"),
                probe=2,
            ),
        )
        outs.append(out)
    return build_prices(root / "reference.csv", march_release, seed=99), outs


def _self_reported(out: Path) -> list[Any]:
    body = json.loads((out / "receipt.json").read_text())["body"]
    return [c["total_return"] for c in body["cells"]]


def test_two_submitters_prices_differ_the_platform_figure_does_not(
    march_release: Path, two_submitters: tuple[Path, list[Path]]
) -> None:
    reference, outs = two_submitters
    assert _self_reported(outs[0]) != _self_reported(outs[1])  # their own prices disagree
    prices = load_prices(reference, source="the platform's reference", pulled_at="2026-11-30")
    figures = [
        rescore(
            out / "receipt.json",
            trajectory=out / "trajectory.jsonl",
            release=march_release,
            prices=prices,
        )
        for out in outs
    ]
    assert figures[0].to_json() == figures[1].to_json()
    main_pit = figures[0].cells[("main", "pit")]
    assert (
        main_pit.total_return is not None and main_pit.low <= main_pit.total_return <= main_pit.high
    )
    assert figures[0].prices["source"] == "the platform's reference"
    deltas = figures[0].deltas()["pit"]
    shifted = figures[0].cells[("shifted", "pit")].total_return
    assert deltas["main_minus_shifted"] == pytest.approx(main_pit.total_return - shifted)
    interval = figures[0].to_json()["contamination_interval_95"]["pit"]["main_minus_shifted"]
    assert interval is not None and interval[0] <= interval[1]


def test_rescore_refuses_artifacts_that_do_not_hold_together(
    march_release: Path, two_submitters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    reference, outs = two_submitters
    prices = load_prices(reference, source="reference", pulled_at="")
    edited = tmp_path / "trajectory.jsonl"
    edited.write_text(
        (outs[0] / "trajectory.jsonl").read_text().replace('"picks":["r-', '"picks":["r-0', 1)
    )
    with pytest.raises(RescoreRefused) as info:
        rescore(outs[0] / "receipt.json", trajectory=edited, release=march_release, prices=prices)
    assert [c.name for c in info.value.failed] == ["trajectory_sha256"]


def test_the_cli_prints_the_platform_figures(
    march_release: Path, two_submitters: tuple[Path, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    reference, outs = two_submitters
    argv = ["rescore", str(outs[0] / "receipt.json"), "--trajectory",
            str(outs[0] / "trajectory.jsonl"), "--bundle", str(march_release),
            "--prices", str(reference), "--source", "reference"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("prices reference.csv sha256:") and out.count("95% [") == 9
    # the stub buys alike on every arm: the board's rule finds no sign of memory
    assert "  memory no_sign_of_memory  (pit main-shifted [+0.00%, +0.00%] at 95%" in out
    assert main([*argv, "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert len(figures["cells"]) == 9 and "block bootstrap" in figures["method"]["interval"]
    assert figures["memory_verdict"] == "no_sign_of_memory"
