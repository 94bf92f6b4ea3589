"""A score from memory, flagged: the deliberate cheat's run is called so on its board row,
its page, the board's CSV and API, read from the stored platform figures by the
harness's rule; an honest run on the same release is not."""

from __future__ import annotations

import csv
import importlib
import io
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

from harness.receipt.memory import memory_verdict
from pitweb.board.query import SECTIONS
from pitweb.pricing.models import PlatformScore
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def uploaded(
    priced_release: Any, submitter: User, stub_run: Artifacts, memory_cheat_run: Artifacts
) -> dict[str, Run]:
    return {
        "stub": submit_run(submitter, stub_run),
        "cheat": submit_run(submitter, memory_cheat_run),
    }


def _rows() -> dict[str, dict[str, Any]]:
    board = Client().get("/api/leaderboard/?all=1").json()
    return {r["run_id"]: r for name in SECTIONS for r in board[name]}


def test_the_cheats_row_is_a_score_from_memory_and_the_honest_row_is_not(
    uploaded: dict[str, Run],
) -> None:
    rows = _rows()
    cheat, honest = rows[uploaded["cheat"].run_id], rows[uploaded["stub"].run_id]
    assert cheat["mask_verdict"] == "mask_holds"
    assert cheat["platform_delta_shifted_pit"] > cheat["platform_delta_shifted_pit_low"] > 0
    assert cheat["memory_verdict"] == "score_from_memory"
    assert cheat["memory_words"].startswith("score from memory: main beat shifted by +")
    assert honest["memory_verdict"] == "no_sign_of_memory"
    assert honest["platform_delta_shifted_pit_low"] == honest["platform_delta_shifted_pit_high"]


def test_the_verdict_is_the_harness_rule_over_the_stored_figures(
    uploaded: dict[str, Run],
) -> None:
    rows = _rows()
    for run in uploaded.values():
        score = PlatformScore.objects.get(run=run)
        assert score.figures is not None
        interval = score.figures["contamination_interval_95"]["pit"]["main_minus_shifted"]
        expected = memory_verdict(interval, run.body["probe"]["verdict"])
        assert rows[run.run_id]["memory_verdict"] == expected


def test_the_board_page_flags_the_cheat_in_words_and_not_the_honest_run(
    uploaded: dict[str, Run],
) -> None:
    benchmark = uploaded["cheat"].benchmark
    assert benchmark is not None and benchmark == uploaded["stub"].benchmark
    page = Client().get(f"/benchmarks/{benchmark.key}/").content.decode()
    rows = {
        key: page[page.index(f">{run.run_id}</a>") :].split("</tr>", 1)[0]
        for key, run in uploaded.items()
    }
    assert "score from memory</span>" in rows["cheat"]
    assert "Score from memory: main beat shifted by +" in rows["cheat"]
    assert "score from memory" not in rows["stub"].lower()


def test_the_run_page_heads_with_the_verdict(uploaded: dict[str, Run]) -> None:
    cheat = uploaded["cheat"]
    page = Client().get(f"/runs/{cheat.body_sha256.removeprefix('sha256:')}/").content.decode()
    verdicts = page[page.index('id="verdicts"') :].split("</ul>", 1)[0]
    assert 'class="verdict-bad">score from memory: main beat shifted by +' in verdicts
    assert 'id="memory-verdict"' in page
    honest = uploaded["stub"]
    other = Client().get(f"/runs/{honest.body_sha256.removeprefix('sha256:')}/").content.decode()
    assert "score from memory" not in other[: other.index('id="memory-verdict"')]


def test_the_board_csv_carries_the_verdict_and_the_interval(uploaded: dict[str, Run]) -> None:
    text = Client().get("/api/leaderboard.csv", {"all": 1}).content.decode()
    rows = {r["run_id"]: r for r in csv.DictReader(io.StringIO(text))}
    cheat = rows[uploaded["cheat"].run_id]
    assert cheat["memory_verdict"] == "score_from_memory"
    assert float(cheat["platform_delta_shifted_pit_low"]) > 0
    assert rows[uploaded["stub"].run_id]["memory_verdict"] == "no_sign_of_memory"


def test_scores_stored_before_the_intervals_were_kept_get_them_from_their_figures(
    uploaded: dict[str, Run],
) -> None:
    kept = list(
        PlatformScore.objects.order_by("pk").values_list(
            "delta_shifted_pit_low", "delta_shifted_pit_high"
        )
    )
    PlatformScore.objects.update(
        delta_shifted_pit_low=None, delta_shifted_pit_high=None,
        delta_redacted_pit_low=None, delta_redacted_pit_high=None,
    )  # fmt: skip
    migration = importlib.import_module("pitweb.pricing.migrations.0003_delta_intervals")
    migration.read_off(apps, None)
    again = list(
        PlatformScore.objects.order_by("pk").values_list(
            "delta_shifted_pit_low", "delta_shifted_pit_high"
        )
    )
    assert again == kept and all(low is not None for low, _ in again)
