"""The demo's deliberate cheat: it remembers which filings rose and wins on the main arm
only; the shifted and redacted arms hide what it remembers, and its edge is gone."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.agents import memory_cheat
from harness.agents.external import command_agent
from harness.market.prices import load_prices
from harness.receipt.memory import memory_verdict
from harness.receipt.rescore import Rescore
from tests.support.priced import END, FORMS, HOLD, START, pit, priced_run


@pytest.fixture(scope="module")
def memory(
    tmp_path_factory: pytest.TempPathFactory, march_release: Path, march_news_prices: Path
) -> Path:
    prices = load_prices(march_news_prices, source="SYNTHETIC test prices", pulled_at="generated")
    remembered = memory_cheat.remember(
        march_release, prices, forms=FORMS, start=START, end=END, hold_sessions=HOLD
    )
    path = tmp_path_factory.mktemp("memory") / "memory.json"
    memory_cheat.write_memory(path, remembered)
    return path


def _cheat(memory: Path) -> str:
    return shlex.join([sys.executable, memory_cheat.__file__, str(memory)])


@pytest.fixture(scope="module")
def cheat(
    tmp_path_factory: pytest.TempPathFactory,
    march_release: Path,
    march_news_prices: Path,
    memory: Path,
) -> tuple[Rescore, dict[str, Any]]:
    out = tmp_path_factory.mktemp("cheat")
    return priced_run(out, march_release, march_news_prices, agent_cmd=_cheat(memory))


@pytest.fixture(scope="module")
def stub(
    tmp_path_factory: pytest.TempPathFactory, march_release: Path, march_news_prices: Path
) -> Rescore:
    return priced_run(
        tmp_path_factory.mktemp("stub"), march_release, march_news_prices, agent="stub"
    )[0]


def test_the_memory_holds_risers_and_fallers_of_the_window(memory: Path) -> None:
    remembered = json.loads(memory.read_text())
    assert remembered["about"].startswith("DELIBERATE CHEAT")
    rose = [m["rose"] for m in remembered["remembered"]]
    assert True in rose and False in rose
    assert {m["date"] for m in remembered["remembered"]} <= {
        f"2023-03-{d:02d}" for d in range(1, 11)
    }


def test_the_cheat_wins_on_the_main_arm(
    cheat: tuple[Rescore, dict[str, Any]], stub: Rescore
) -> None:
    figures, _ = cheat
    main, shifted = pit(figures, "main"), pit(figures, "shifted")
    assert main[1] > shifted[2]  # its main interval lies wholly above its shifted one
    assert main[0] > pit(stub, "main")[0]


@pytest.mark.parametrize("arm", ["shifted", "redacted"])
def test_on_a_control_arm_the_cheat_recognises_nothing_and_buys_like_the_stub(
    cheat: tuple[Rescore, dict[str, Any]], stub: Rescore, arm: str
) -> None:
    figures, _ = cheat
    assert pit(figures, arm) == pit(stub, arm)
    trades = figures.trades[(arm, "pit")]
    assert [t.row_key for t in trades] == [t.row_key for t in stub.trades[(arm, "pit")]]


def test_the_cheat_is_a_score_from_memory_and_the_stub_is_not(
    cheat: tuple[Rescore, dict[str, Any]], stub: Rescore
) -> None:
    figures, body = cheat
    assert body["probe"]["verdict"] == "mask_holds"  # it reads no date back
    interval = figures.delta_intervals()["pit"]["main_minus_shifted"]
    assert interval is not None and interval[0] > 0
    assert memory_verdict(interval, body["probe"]["verdict"]) == "score_from_memory"
    honest = stub.delta_intervals()["pit"]["main_minus_shifted"]
    assert memory_verdict(honest, "mask_holds") == "no_sign_of_memory"


def test_the_memory_file_is_part_of_the_agents_identity(memory: Path, tmp_path: Path) -> None:
    """Another memory is another agent: the receipt's digest of it changes."""
    other = tmp_path / "memory.json"
    remembered = json.loads(memory.read_text())
    remembered["remembered"][0]["rose"] = not remembered["remembered"][0]["rose"]
    memory_cheat.write_memory(other, remembered)
    first, second = command_agent(_cheat(memory)), command_agent(_cheat(other))
    assert first.name == second.name  # the same command line, as the board names it
    assert first.source_sha256() != second.source_sha256()


def test_a_remembered_fall_is_skipped_and_an_unknown_filing_bought() -> None:
    rows = [
        {"row_key": "r-up", "issuer": "Apex Inc.", "partition_date": "2023-03-01"},
        {"row_key": "r-down", "issuer": "Birch Co.", "partition_date": "2023-03-01"},
        {"row_key": "r-shifted", "issuer": "Apex Inc.", "partition_date": "2033-03-01"},
        {"row_key": "r-redacted", "issuer": None, "partition_date": "2023-03-01"},
    ]
    rose = {("Apex Inc.", "2023-03-01"): True, ("Birch Co.", "2023-03-01"): False}
    decision = memory_cheat.decide(rows, rose)
    assert decision["picks"] == ["r-up", "r-shifted", "r-redacted"]
    assert decision["text"] == "recognised 2 of 4 new filings; buying 3"
