"""What did it cost to run, measured: a model-calling agent's run through the recording
proxy (a loopback HTTPS model that reports its usage as OpenAI's does), uploaded and
verified; staff register a rate card; the board shows the tokens measured, the cost at the
card and the ranked figure per dollar; a forged token count fails verification."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from harness import run
from harness.agents.adapters.plain import from_callable
from harness.receipt.build import receipt_text
from harness.receipt.ratecard import parse_rate_card, price_usage, run_usage
from pitweb.board.query import SECTIONS
from pitweb.pricing.models import RateCard, RateCardEdited
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run
from tests.support.loopback_agents import openai_agent
from tests.support.model_server import SECRET, DetailedUsageHandler, egress_config, serving_https
from tests.support.sandbox import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)

CARD = {
    "schema_version": "pit-harness.rate-card.v1",
    "source": "test prices, not a provider's",
    "as_of": "2026-12-01",
    # $2.50 per million input tokens, $1.25 cached, $10 per million output
    "models": {"loopback-1-2026-01-01": {"input": 2500, "cached_input": 1250, "output": 10000}},
}


@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory, site_release: Path) -> Artifacts:
    require_sandbox()
    out = tmp_path_factory.mktemp("model-run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIT_TEST_MODEL_KEY", SECRET)
        with serving_https(DetailedUsageHandler, out / "model") as (port, cert, _):
            agent = openai_agent(f"https://127.0.0.1:{port}/v1")
            run(
                from_callable(agent),
                egress_config(site_release, out, port, cert, end="2023-03-08", probe=0),
            )
    return Artifacts(out / "receipt.json", out / "trajectory.jsonl", None)


def _row(run_id: str) -> dict[str, Any]:
    board = Client().get("/api/leaderboard/?all=1").json()
    return next(r for name in SECTIONS for r in board[name] if r["run_id"] == run_id)


def test_the_board_shows_measured_tokens_and_their_cost_at_the_rate_card(
    priced_release: Any, submitter: User, staff: User, model_run: Artifacts, tmp_path: Path
) -> None:
    uploaded = submit_run(submitter, model_run)
    assert uploaded.proven
    row = _row(uploaded.run_id)
    body = json.loads(model_run.receipt.read_text())["body"]
    usage = run_usage(body["cells"])
    assert usage is not None
    assert row["model_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert row["rate_card_version"] is None and "model_cost_usd" not in row  # no card yet

    card = tmp_path / "card.json"
    card.write_text(json.dumps(CARD))
    out = io.StringIO()
    call_command("register_rate_card", str(card), "--reason", "test prices", stdout=out)
    assert out.getvalue().startswith("registered rate card v1 sha256:")
    row = _row(uploaded.run_id)
    priced = price_usage(usage, parse_rate_card(card.read_bytes()))
    # the cost is the card's prices over the receipt's measured tokens, to the nanodollar
    plain_in = usage["input_tokens"] - usage["cached_input_tokens"]
    expected = (
        plain_in * 2500 + usage["cached_input_tokens"] * 1250 + usage["output_tokens"] * 10000
    )
    assert row["model_cost_nanodollars"] == priced.nanodollars == expected
    assert row["model_cost_whole"] is True and row["rate_card_version"] == 1
    per_dollar = row["platform_shifted_pit"] / (expected / 1e9)
    assert row["return_per_dollar"] == pytest.approx(per_dollar)
    html = Client().get("/benchmarks/", follow=True).content.decode()
    assert "tokens measured" in html and "(rate card v1)" in html
    page = Client().get(f"/runs/{uploaded.body_sha256[7:]}/?submission={uploaded.pk}")
    text = page.content.decode()
    assert "Model usage, measured" in text and "rate card v1" in text
    assert row["model_cost_usd"] in text and 'id="usage-grid"' in text
    # a registered card is never edited; the same card again is its version
    registered = RateCard.objects.get()
    registered.reason = "rewritten"
    with pytest.raises(RateCardEdited):
        registered.save()
    call_command("register_rate_card", str(card), "--reason", "again", stdout=out)
    assert RateCard.objects.count() == 1


def test_a_bad_rate_card_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    for content in (
        {**CARD, "models": {"m": {"input": -1, "output": 1}}},
        {**CARD, "surprise": 1},
        {**CARD, "schema_version": "other"},
    ):
        card = tmp_path / "card.json"
        card.write_text(json.dumps(content))
        with pytest.raises(CommandError):
            call_command("register_rate_card", str(card), "--reason", "bad")
    card.write_text("{" + " " * 70_000 + "}")
    with pytest.raises(CommandError, match="larger than a rate card"):
        call_command("register_rate_card", str(card), "--reason", "too big")
    assert RateCard.objects.count() == 0


def test_a_forged_token_count_fails_verification_and_shows_no_cost(
    priced_release: Any, submitter: User, model_run: Artifacts, tmp_path: Path
) -> None:
    receipt = json.loads(model_run.receipt.read_text())
    body = receipt["body"]
    cell = next(c for c in body["cells"] if c["usage"]["by_model"])
    name = next(iter(cell["usage"]["by_model"]))
    cell["usage"]["by_model"][name]["output_tokens"] //= 2  # a cheaper-looking run
    cell["usage"]["output_tokens"] //= 2
    forged = tmp_path / "receipt.json"
    forged.write_text(receipt_text(body, receipt["emitted_at"]))
    uploaded = submit_run(submitter, Artifacts(forged, model_run.trajectory, None))
    uploaded = Run.objects.get(pk=uploaded.pk)
    assert not uploaded.proven and "usage" in uploaded.failed_check
    row = _row(uploaded.run_id)
    assert row["numbers"] == "withheld" and "model_tokens" not in row
    # nothing unproven travels either
    exported = Client().get(f"/runs/{uploaded.body_sha256[7:]}/every-eval-ever.json")
    assert exported.status_code == 409 and "withheld" in exported.json()
