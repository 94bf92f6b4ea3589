"""The placebo split: the contamination delta before and after a declared training cutoff.

An agent that remembers the period only up to a cutoff leaks only before it: the split
shows a delta above zero before and none after; ``verify`` makes it again from the
trajectory and refuses a forged one; a window that does not cross the cutoff has none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, canonical, load_prices, run
from harness.agents import memory_cheat
from harness.agents.adapters.plain import from_callable
from harness.cli import main
from harness.market.scoring import Trade
from harness.receipt.build import receipt_text
from harness.receipt.placebo import placebo, placebo_reading, side_of
from harness.receipt.rederive import rederive
from harness.receipt.rescore import delta_bootstrap, rescore

CUTOFF = "2023-03-08"
START, END = "2023-03-01", "2023-03-17"
FORMS = ("8-K",)
HOLD = 5
STATED = {"source": "SYNTHETIC", "pulled_at": "x"}


def _rows_memory(release: Path, prices: Path) -> dict[tuple[str, str], bool]:
    """Which (issuer, filing date) rose over the hold: what the agent remembers."""
    remembered = memory_cheat.remember(
        release,
        load_prices(prices, **STATED),
        forms=FORMS,
        start=START,
        end=END,
        hold_sessions=HOLD,
    )
    return {(m["issuer"], m["date"]): bool(m["rose"]) for m in remembered["remembered"]}


def _leaks_before_the_cutoff(rose: dict[tuple[str, str], bool]) -> Any:
    """At a bell on or before the cutoff, it buys what it remembers rising (and what it
    does not recognise); after the cutoff it remembers nothing and buys every new filing,
    as the stub does. On the shifted arm every date is ten years on: nothing recognised."""

    def agent(prompt: str, tools: Any) -> list[str]:
        listed = tools.pit_list(limit=None)
        picks = []
        for row in listed["rows"]:
            known = rose.get((row.get("issuer") or "", row.get("partition_date") or ""))
            if listed["session_date"] <= CUTOFF and known is False:
                continue
            picks.append(row["row_key"])
        return picks

    return from_callable(agent, name="leaks-before-cutoff")


def _config(release: Path, prices: Path, out: Path, **extra: Any) -> RunConfig:
    return RunConfig(
        bundle_path=str(release),
        forms=FORMS,
        start=START,
        end=END,
        clocks=("pit",),
        hold_sessions=HOLD,
        probe=0,
        agent_process="in_process",
        prices={"path": str(prices), **STATED},  # type: ignore[arg-type]
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
        **extra,
    )


@pytest.fixture(scope="module")
def leaky_run(
    march_release: Path, march_prices: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("placebo")
    agent = _leaks_before_the_cutoff(_rows_memory(march_release, march_prices))
    run(agent, _config(march_release, march_prices, out, training_cutoff=CUTOFF))
    return out


def _body(out: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((out / "receipt.json").read_text())["body"]
    return body


def test_an_agent_leaking_before_the_cutoff_shows_a_delta_before_and_none_after(
    leaky_run: Path,
) -> None:
    split = _body(leaky_run)["placebo"]
    assert split["cutoff"] == CUTOFF and "on or before 2023-03-08" in split["split"]
    before, after = split["clocks"]["pit"]["before"], split["clocks"]["pit"]["after"]
    assert before["main_minus_shifted"] > 0
    assert before["main_minus_shifted_interval_95"][0] > 0
    low, high = after["main_minus_shifted_interval_95"]
    assert low <= 0 <= high and abs(after["main_minus_shifted"]) < 1e-9
    assert min(before["sessions"], after["sessions"]) >= 3
    assert before["shifted_trades"] > before["main_trades"]  # main skipped remembered falls
    assert after["shifted_trades"] == after["main_trades"]
    assert placebo_reading(split, "pit").endswith(
        "consistent with memory of the period before the cutoff."
    )


def test_the_split_verifies_and_the_cli_prints_it(
    leaky_run: Path, march_release: Path, march_prices: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = rederive(
        leaky_run / "receipt.json",
        trajectory=leaky_run / "trajectory.jsonl",
        release=march_release,
        prices=load_prices(march_prices, **STATED),
    )
    assert result.ok, result.first_mismatch
    assert [c.status for c in result.checks if c.name == "placebo"] == ["ok"]
    code = main(
        [
            "verify",
            str(leaky_run / "receipt.json"),
            "--trajectory",
            str(leaky_run / "trajectory.jsonl"),
            "--bundle",
            str(march_release),
            "--prices",
            str(march_prices),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "placebo split at the declared cutoff 2023-03-08" in out
    assert "pit    before main-shifted" in out and "after  main-shifted" in out
    assert "consistent with memory of the period before the cutoff" in out


def test_without_the_price_file_the_split_is_skipped_not_passed(
    leaky_run: Path, march_release: Path
) -> None:
    result = rederive(
        leaky_run / "receipt.json",
        trajectory=leaky_run / "trajectory.jsonl",
        release=march_release,
    )
    assert result.ok
    assert [(c.name, c.status) for c in result.checks if c.status == "skipped"] == [
        ("cell_scores", "skipped"),
        ("placebo", "skipped"),
    ]


def _forge(out: Path, forged: Path, change: Any) -> None:
    receipt = json.loads((out / "receipt.json").read_text())
    change(receipt["body"])
    forged.mkdir()
    (forged / "receipt.json").write_text(receipt_text(receipt["body"], receipt["emitted_at"]))


def test_a_forged_placebo_delta_fails_verify(
    leaky_run: Path,
    march_release: Path,
    march_prices: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def erase(body: dict[str, Any]) -> None:  # the delta before the cutoff, made to vanish
        body["placebo"]["clocks"]["pit"]["before"]["main_minus_shifted"] = 0.0

    _forge(leaky_run, tmp_path / "forged", erase)
    result = rederive(
        tmp_path / "forged" / "receipt.json",
        trajectory=leaky_run / "trajectory.jsonl",
        release=march_release,
        prices=load_prices(march_prices, **STATED),
    )
    wrong = result.first_mismatch
    assert wrong is not None and wrong.name == "placebo"
    assert wrong.detail.startswith("placebo.clocks.pit.before.main_minus_shifted: re-derived +")
    assert wrong.detail.endswith("the receipt says +0.0000% (0.000000)")
    code = main(
        [
            "verify",
            str(tmp_path / "forged" / "receipt.json"),
            "--trajectory",
            str(leaky_run / "trajectory.jsonl"),
            "--bundle",
            str(march_release),
            "--prices",
            str(march_prices),
        ]
    )
    assert code == 1
    assert "scores MISMATCH  placebo: placebo.clocks.pit.before" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda b: b.pop("placebo"), id="split removed"),
        pytest.param(
            lambda b: b["placebo"]["clocks"]["pit"]["after"].update(main_trades=1), id="count"
        ),
    ],
)
def test_a_removed_or_recounted_split_fails_verify(
    leaky_run: Path, march_release: Path, march_prices: Path, tmp_path: Path, change: Any
) -> None:
    _forge(leaky_run, tmp_path / "forged", change)
    result = rederive(
        tmp_path / "forged" / "receipt.json",
        trajectory=leaky_run / "trajectory.jsonl",
        release=march_release,
        prices=load_prices(march_prices, **STATED),
    )
    assert result.first_mismatch is not None and result.first_mismatch.name == "placebo"


def test_a_window_that_does_not_cross_the_cutoff_has_no_split(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    for cutoff, name in (("", "none"), ("2023-02-28", "after"), ("2023-03-31", "before")):
        out = tmp_path / name
        body = run("stub", _config(march_release, march_prices, out, training_cutoff=cutoff)).body
        assert "placebo" not in body
        assert "placebo" not in (out / "receipt.json").read_text()
        figures = rescore(
            out / "receipt.json",
            trajectory=out / "trajectory.jsonl",
            release=march_release,
            prices=load_prices(march_prices, **STATED),
        )
        assert "placebo" not in figures.to_json()


def test_a_split_added_to_a_window_that_does_not_cross_is_refused(
    march_release: Path, march_prices: Path, tmp_path: Path, leaky_run: Path
) -> None:
    out = tmp_path / "honest"
    run("stub", _config(march_release, march_prices, out))
    _forge(out, tmp_path / "forged", lambda b: b.update(placebo=_body(leaky_run)["placebo"]))
    result = rederive(
        tmp_path / "forged" / "receipt.json",
        trajectory=out / "trajectory.jsonl",
        release=march_release,
    )  # no price file: the claim is refused all the same
    wrong = result.first_mismatch
    assert wrong is not None and wrong.name == "placebo"
    assert "does not cross the declared training cutoff (none declared)" in wrong.detail


def test_the_platform_figures_carry_the_split_priced_with_the_reference_prices(
    leaky_run: Path, march_release: Path, march_prices: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = rescore(
        leaky_run / "receipt.json",
        trajectory=leaky_run / "trajectory.jsonl",
        release=march_release,
        prices=load_prices(march_prices, **STATED),
    )
    split = figures.to_json()["placebo"]
    # priced with the run's own file here: the very split its receipt states
    assert canonical.dumps(split) == canonical.dumps(_body(leaky_run)["placebo"])
    files = ["--trajectory", str(leaky_run / "trajectory.jsonl"), "--bundle", str(march_release)]
    reference = ["--prices", str(march_prices), "--source", "SYNTHETIC"]
    assert main(["rescore", str(leaky_run / "receipt.json"), *files, *reference]) == 0
    assert "placebo split at the declared cutoff 2023-03-08" in capsys.readouterr().out


# -- the split and its reading, on trades made by hand ------------------------------------


def _trade(session: str, ret: float | None) -> Trade:
    status = "priced" if ret is not None else "no_price"
    return Trade(f"r-{session}-{ret}", "8-K", "T", session, session, 1.0, 1.0, ret, status)


def test_the_cutoff_day_is_before_and_the_next_after() -> None:
    assert side_of(_trade("2024-02-29", 0.1), "2024-02-29") == "before"
    assert side_of(_trade("2024-03-01", 0.1), "2024-02-29") == "after"


def test_the_split_is_each_sides_delta_with_the_paired_bootstrap() -> None:
    days = ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01", "2024-03-04"]
    main = [_trade(d, r) for d in days for r in (0.02, 0.03)] + [_trade(days[0], None)]
    shifted = [_trade(d, r) for d in days for r in (0.01, -0.01)]
    split = placebo(
        {("main", "pit"): main, ("shifted", "pit"): shifted}, ["pit", "dump"], "2024-02-29"
    )
    assert set(split["clocks"]) == {"pit"}  # no main arm at dump: nothing to split
    before, after = split["clocks"]["pit"]["before"], split["clocks"]["pit"]["after"]
    assert before == {
        "sessions": 3,
        "main_trades": 6,
        "shifted_trades": 6,
        "main_minus_shifted": pytest.approx(0.025),
        "main_minus_shifted_interval_95": list(
            delta_bootstrap([t for t in main if t.entry_session <= "2024-02-29"], shifted[:6]) or []
        ),
    }
    assert after["main_trades"] == 4 and after["sessions"] == 2
    assert "redacted_trades" not in before and "main_minus_redacted" not in after  # no such arm


def test_an_arm_without_a_priced_trade_on_a_side_has_no_delta() -> None:
    main = [_trade("2024-02-28", 0.01), _trade("2024-03-01", None)]
    redacted = [_trade("2024-02-28", 0.0)]
    split = placebo({("main", "pit"): main, ("redacted", "pit"): redacted}, ["pit"], "2024-02-29")
    after = split["clocks"]["pit"]["after"]
    assert after == {
        "sessions": 0,
        "main_trades": 0,
        "redacted_trades": 0,
        "main_minus_redacted": None,
        "main_minus_redacted_interval_95": None,
    }


def _side(low: float, high: float, trades: int = 20, sessions: int = 5) -> dict[str, Any]:
    return {
        "sessions": sessions,
        "main_trades": trades,
        "shifted_trades": trades,
        "main_minus_shifted": (low + high) / 2,
        "main_minus_shifted_interval_95": [low, high],
    }


def _reading(before: dict[str, Any], after: dict[str, Any]) -> str:
    split = {
        "cutoff": "2024-02-29",
        "split": "",
        "clocks": {"pit": {"before": before, "after": after}},
    }
    return placebo_reading(split, "pit")


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        (_side(0.004, 0.02), _side(-0.01, 0.01), "consistent with memory of the period before"),
        (_side(0.004, 0.02), _side(0.001, 0.01), "the delta persists past the cutoff"),
        (_side(-0.01, 0.01), _side(0.001, 0.01), "the delta persists past the cutoff"),
        (_side(-0.01, 0.02), _side(-0.01, 0.01), "the split shows nothing either way"),
        (_side(-0.02, -0.01), _side(-0.01, 0.01), "is below zero before the cutoff and not"),
        (_side(0.004, 0.02), _side(-0.02, -0.01), "not the pattern memory predicts"),
        (_side(0.004, 0.02, trades=3), _side(-0.01, 0.01), "Too few priced trades before the"),
        (_side(0.004, 0.02), _side(-0.01, 0.01, sessions=2), "Too few priced trades after the"),
    ],
)
def test_the_reading_says_only_what_the_intervals_support(
    before: dict[str, Any], after: dict[str, Any], said: str
) -> None:
    reading = _reading(before, after)
    assert said in reading
    if "Too few" not in said:  # the intervals it rests on, as a reader checks them
        assert f"{before['main_minus_shifted_interval_95'][0] * 100:+.2f} to" in reading
    claims = ("memory of the period", "persists", "shows nothing", "not the pattern", "Too few")
    assert sum(claim in reading for claim in claims) == 1  # one reading, never two


def test_the_reading_of_a_side_without_a_delta_or_a_clock_without_a_split() -> None:
    none = {**_side(0, 0), "main_minus_shifted": None, "main_minus_shifted_interval_95": None}
    assert _reading(_side(0.004, 0.02), none).startswith("Too few priced trades after the cutoff")
    assert _reading(none, none).startswith("Too few priced trades before the cutoff and after")
    no_shift = {"sessions": 5, "main_trades": 20}
    assert "no shifted arm" in _reading(no_shift, no_shift)
    assert placebo_reading({"clocks": {}}, "dump") == "No placebo split at the dump clock."
