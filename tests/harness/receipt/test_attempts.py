"""Attempts: a family's best upload is ranked on an interval drawn at the Šidák level for
all its attempts, so the luckiest of many reads as such."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, load_prices, run
from harness.agents import stub
from harness.receipt.attempts import (
    RANKED_CELL,
    Attempt,
    attempts_of,
    family_best,
    sidak_confidence,
)
from harness.receipt.rescore import RescoreRefused
from tests.support.data import build_prices


def test_sidak_confidence_is_095_for_one_attempt_and_wider_for_more() -> None:
    assert sidak_confidence(1) == pytest.approx(0.95)
    assert sidak_confidence(20) == pytest.approx(0.95 ** (1 / 20)) == pytest.approx(0.997439, 1e-6)
    # twenty intervals at that level all hold together with probability 0.95
    assert sidak_confidence(20) ** 20 == pytest.approx(0.95)
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="positive integer"):
            sidak_confidence(bad)  # type: ignore[arg-type]


def _first(n: int) -> Any:
    def agent(prompt: str, tools: Any) -> list[str]:
        return [row["row_key"] for row in tools.pit_list(limit=n)["rows"]]

    agent.__qualname__ = f"first_{n}"
    return agent


@pytest.fixture(scope="module")
def family(
    march_release: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[Path]]:
    """Three attempts of one family: the stub, an agent buying the first row of each bell,
    and one that buys nothing (no figure, still an attempt)."""
    root = tmp_path_factory.mktemp("family")
    receipts = []
    for name, agent in (("stub", stub()), ("first", _first(1)), ("none", _first(0))):
        out = root / name
        run(
            agent,
            RunConfig(
                bundle_path=str(march_release),
                forms=("8-K",),
                start="2023-03-01",
                end="2023-03-15",
                trajectory_path=str(out / "trajectory.jsonl"),
                receipt_path=str(out / "receipt.json"),
                probe=0,
                agent_process="in_process",
            ),
        )
        receipts.append(out / "receipt.json")
    return build_prices(root / "reference.csv", march_release, seed=99), receipts


def test_the_best_attempts_interval_widens_with_every_attempt_counted(
    march_release: Path, family: tuple[Path, list[Path]]
) -> None:
    reference, receipts = family
    prices = load_prices(reference, source="reference", pulled_at="2026-12-03")
    attempts = attempts_of(receipts, release=march_release, prices=prices)
    assert [a.figure is None for a, _ in attempts] == [False, False, True]
    alone = family_best(attempts[:1])
    assert alone.confidence == pytest.approx(0.95)
    figure = attempts[0][0].figure
    assert figure is not None and alone.interval == (figure.low, figure.high)  # N = 1: itself
    three = family_best(attempts)
    assert three.attempts == 3 and three.confidence == pytest.approx(0.95 ** (1 / 3))
    best = max((a for a, _ in attempts if a.figure), key=lambda a: a.figure.total_return)  # type: ignore[union-attr]
    assert three.best == best
    assert best.figure is not None and three.interval is not None
    low, high = three.interval
    assert low <= best.figure.low and high >= best.figure.high  # never narrower
    assert (low, high) != (best.figure.low, best.figure.high)
    # the same upload twenty times is twenty attempts, and wider than three of it
    twenty, thrice = family_best([attempts[0]] * 20), family_best([attempts[0]] * 3)
    assert twenty.attempts == 20 and twenty.interval is not None and thrice.interval is not None
    assert twenty.interval[0] <= thrice.interval[0] and twenty.interval[1] >= thrice.interval[1]
    assert twenty.interval != thrice.interval


def test_a_family_with_no_priced_figure_has_no_best_but_counts_its_attempts() -> None:
    from harness.receipt.rescore import Rescore

    result = family_best([(Attempt("a", "x", None), Rescore(prices={}))] * 4)
    assert result.attempts == 4 and result.best is None and result.interval is None
    assert result.to_json()["best"] is None


def test_the_cli_prints_each_attempt_and_the_best_of_n(
    march_release: Path, family: tuple[Path, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    reference, receipts = family
    argv = ["attempts", *map(str, receipts), "--bundle", str(march_release),
            "--prices", str(reference), "--source", "reference"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "best of 3" in out and "no priced figure" in out and out.count("95% [") == 2
    assert "family-wise confidence 98.3048%" in out
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["attempts"] == 3 and result["cell"] == list(RANKED_CELL)
    assert result["best"]["interval_family_wise"][0] <= result["best"]["interval_95_alone"][0]


def test_an_attempt_whose_artifacts_do_not_hold_together_is_refused(
    march_release: Path, family: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    reference, receipts = family
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "receipt.json").write_bytes(receipts[1].read_bytes())
    lines = (receipts[1].parent / "trajectory.jsonl").read_text().splitlines()
    (forged / "trajectory.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    prices = load_prices(reference, source="reference", pulled_at="2026-12-03")
    with pytest.raises(RescoreRefused):
        attempts_of([receipts[0], forged / "receipt.json"], release=march_release, prices=prices)


def test_the_stored_tails_draw_exactly_the_interval_the_whole_bootstrap_draws() -> None:
    """A board stores only the tails; for every family size they must give the interval
    block_bootstrap gives from all 2,000 replicates, and refuse a level they cannot reach."""
    from harness.market.scoring import Trade
    from harness.receipt.attempts import family_interval
    from harness.receipt.rescore import Tails, block_bootstrap, bootstrap_tails

    rng = random.Random(7)
    trades = [
        Trade(
            f"k{i}",
            "8-K",
            "T",
            f"2024-03-{1 + i % 20:02d}",
            "x",
            1.0,
            1.0,
            rng.gauss(0.01, 0.05),
            "priced",
        )
        for i in range(60)
    ]
    trades.append(Trade("none", "8-K", "T", "2024-03-02", "x", None, None, None, "no_prices"))
    tails = bootstrap_tails(trades)
    assert tails is not None and len(tails.low) == len(tails.high) < 60
    for n in (1, 2, 3, 7, 20, 100, 10_000):
        whole = block_bootstrap(trades, confidence=sidak_confidence(n))
        assert family_interval(tails, n) == (whole.low, whole.high)
    assert Tails.from_json(json.loads(json.dumps(tails.to_json()))) == tails
    with pytest.raises(ValueError, match="do not reach"):
        tails.interval(0.5)
    assert bootstrap_tails(trades[-1:]) is None  # nothing priced, no tails
