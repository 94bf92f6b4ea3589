"""Platform figures on the site: every run priced with its release's reference prices,
versioned, re-scored when a version is added, and the board ranking on them."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from pitweb.board.query import SECTIONS
from pitweb.core.errors import SubmissionError
from pitweb.core.models import AuditEvent
from pitweb.pricing.models import PlatformScore
from pitweb.pricing.services import reference_prices_register
from pitweb.releases.models import ReferencePrices, ReferencePricesEdited
from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, make_run, submit_run
from tests.support.data import build_prices

pytestmark = pytest.mark.django_db(transaction=True)


def submit(user: User, artifacts: Artifacts) -> Run:
    return submit_run(user, artifacts)  # type: ignore[no-any-return]


def board() -> dict[str, Any]:
    return Client().get("/api/leaderboard/?all=1").json()


def row_of(run: Run) -> dict[str, Any]:
    everything = board()
    return next(r for name in SECTIONS for r in everything[name] if r["run_id"] == run.run_id)


@pytest.fixture(scope="module")
def two_price_files(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path
) -> list[Artifacts]:
    """One agent, two submitters, each with price bars of their own."""
    root = tmp_path_factory.mktemp("two-submitters")
    runs = []
    for seed in (31, 32):
        prices = build_prices(root / f"prices-{seed}.csv", site_release, seed=seed)
        runs.append(make_run(site_release, root / f"run-{seed}", prices))
    return runs


def test_one_agent_priced_with_two_files_gets_one_platform_figure(
    priced_release: Any, submitter: User, other: User, two_price_files: list[Artifacts]
) -> None:
    first, second = submit(submitter, two_price_files[0]), submit(other, two_price_files[1])
    assert first.run_id != second.run_id  # the prices are bound into the run's identity
    a, b = row_of(first), row_of(second)
    # the receipts disagree: each was priced with its submitter's bars
    assert a["self_reported_main_pit"] != b["self_reported_main_pit"]
    # the platform priced both with the release's reference prices: one figure
    for key in (
        "platform_shifted_pit",
        "platform_shifted_pit_low",
        "platform_shifted_pit_high",
        "platform_main_pit",
        "platform_delta_shifted_pit",
        "platform_delta_redacted_pit",
    ):
        assert a[key] == b[key] and a[key] is not None, key
    assert a["prices_version"] == b["prices_version"] == 1
    assert a["rank"] == b["rank"]  # equal figures tie


def test_a_new_reference_version_rescores_every_run_and_rows_name_it(
    priced_release: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    tmp_path: Path,
    site_release: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = submit(submitter, stub_run)
    v1 = row_of(run)
    assert v1["prices_version"] == 1 and v1["platform_shifted_pit"] is not None
    newer = build_prices(tmp_path / "reference-v2.csv", site_release, seed=77)

    # while the re-scoring job waits, the row says so and shows no number of either version
    from pitweb.pricing import tasks

    monkeypatch.setattr(tasks.rescore_run_task, "delay", lambda *a, **k: None)
    reference, created = reference_prices_register(
        release=priced_release,
        path=newer,
        source="SYNTHETIC reference prices, second pull",
        pulled_at="2026-12-01",
        staff=staff,
        reason="a corrected pull",
    )
    assert created and reference.version == 2
    waiting = row_of(run)
    assert waiting["platform_status"] == "pending (prices v2)"
    assert waiting["prices_version"] == 2 and "platform_shifted_pit" not in waiting
    assert run.run_id in {r["run_id"] for r in board()["unranked"]}
    html = Client().get("/benchmarks/", follow=True).content.decode()
    assert "pending (prices v2)" in html

    # the job runs: the row shows the new version's figure
    monkeypatch.undo()
    score = PlatformScore.objects.get(run=run, prices=reference)
    tasks.rescore_run_task.delay(score.pk)
    v2 = row_of(run)
    assert v2["prices_version"] == 2 and v2["prices_source"].endswith("second pull")
    assert v2["prices_sha256"] == reference.file_sha256
    assert v2["platform_shifted_pit"] != v1["platform_shifted_pit"]
    assert run.run_id in {r["run_id"] for r in board()["ranked"]}
    # the first version and its score are kept, never edited
    assert PlatformScore.objects.filter(run=run).count() == 2
    first = ReferencePrices.objects.get(release=priced_release, version=1)
    first.source = "rewritten"
    with pytest.raises(ReferencePricesEdited):
        first.save()
    assert AuditEvent.objects.filter(action="reference_prices").count() == 2
    csv_rows = list(
        csv.DictReader(io.StringIO(Client().get("/leaderboard.csv", follow=True).content.decode()))
    )
    assert {r["prices_version"] for r in csv_rows} == {"2"}


def test_the_same_file_again_is_the_same_version_and_a_bad_file_changes_nothing(
    priced_release: Any, reference_file: Path, tmp_path: Path, staff: User
) -> None:
    again, created = reference_prices_register(
        release=priced_release,
        path=reference_file,
        source="SYNTHETIC reference prices",
        pulled_at="",
        staff=staff,
        reason="twice",
    )
    assert not created and again.version == 1
    broken = tmp_path / "broken.csv"
    broken.write_text("date,symbol,open\n2023-03-01,AAA,-5\n")
    with pytest.raises(SubmissionError) as refused:
        reference_prices_register(
            release=priced_release,
            path=broken,
            source="somewhere",
            pulled_at="",
            staff=staff,
            reason="broken",
        )
    assert refused.value.code == "invalid_prices" and "positive" in refused.value.message
    with pytest.raises(SubmissionError) as no_reason:
        reference_prices_register(
            release=priced_release,
            path=reference_file,
            source="x",
            pulled_at="",
            staff=staff,
            reason=" ",
        )
    assert no_reason.value.code == "reason_required"
    assert ReferencePrices.objects.count() == 1


def test_staff_register_prices_from_the_command_line(
    registered: Any, reference_file: Path, staff: User
) -> None:
    out = io.StringIO()
    call_command(
        "register_prices",
        registered.name,
        str(reference_file),
        "--source",
        "SYNTHETIC",
        "--reason",
        "first prices",
        "--staff",
        staff.username,
        stdout=out,
    )
    assert out.getvalue().startswith(f"registered {registered.name} prices v1 sha256:")
    assert ReferencePrices.objects.get().registered_by == staff


def test_unconfined_runs_are_marked_and_the_isolated_filter_drops_them(
    priced_release: Any,
    submitter: User,
    other: User,
    stub_run: Artifacts,
    tmp_path: Path,
    site_release: Path,
    site_prices: Path,
) -> None:
    isolated = submit(submitter, stub_run)
    loose = submit(  # another submitter's: a family of its own, so both rows are ranked
        other,
        make_run(site_release, tmp_path / "in-process", site_prices, agent_process="in_process"),
    )
    assert isolated.agent_isolated and not loose.agent_isolated
    assert row_of(loose)["could_read_future_data"] is True
    assert row_of(isolated)["could_read_future_data"] is False
    answer = board()
    everything = {r["run_id"] for name in SECTIONS for r in answer[name]}
    assert {isolated.run_id, loose.run_id} <= everything
    filtered = Client().get("/api/leaderboard/?isolated=1&all=1").json()
    kept = {r["run_id"] for name in SECTIONS for r in filtered[name]}
    assert isolated.run_id in kept and loose.run_id not in kept
    html = Client().get("/benchmarks/", follow=True).content.decode()
    assert html.count("⚠ could read future</span>") == 2  # the legend's, and the loose run's


def test_a_scorer_failure_is_ours_and_refused_artifacts_get_no_figure(
    registered: Any,
    reference_file: Path,
    submitter: User,
    stub_run: Artifacts,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.receipt.rederive import Check
    from harness.receipt.rescore import RescoreRefused
    from pitweb.pricing import scoring

    run = submit(submitter, stub_run)
    calls: list[int] = []

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(scoring, "rescore", broken)
    reference_prices_register(
        release=registered,
        path=reference_file,
        source="SYNTHETIC",
        pulled_at="",
        staff=None,
        reason="first",
    )
    score = PlatformScore.objects.get(run=run)
    assert score.state == "harness_error" and len(calls) == 3  # retried, then given up
    row = row_of(run)
    assert (
        row["platform_status"] == "no figure (prices v1): the scorer failed (ours, not the run's)"
    )
    assert row["verification"] == "verified"  # never counted against the run
    assert run.run_id in {r["run_id"] for r in board()["unranked"]}

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RescoreRefused([Check("trajectory_sha256", "mismatch", "stated 0.4321")])

    monkeypatch.setattr(scoring, "rescore", refused)
    services.run_reverify(run=run, staff=User.objects.create_user("s", is_staff=True), reason="r")
    score.refresh_from_db()
    assert score.state == "refused"
    assert score.message == "the artifacts do not hold together: trajectory_sha256"
    assert "0.4321" not in str(board())


def test_the_methodology_page_writes_the_rule_and_the_run_api_carries_platform_figures(
    priced_release: Any, submitter: User, stub_run: Artifacts, settings: Any
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 42
    html = Client().get("/methodology/").content.decode()
    for needle in (
        "at least 42 priced trades",
        "rank low is 1 plus the number of runs whose interval lies wholly above",
        "block bootstrap over entry sessions",
        "pit-harness rescore",
        "the agent was not re-run",
        "declared by the submitter's harness (not verifiable)",
    ):
        assert needle in html, needle
    assert 'href="/methodology/"' in Client().get("/benchmarks/", follow=True).content.decode()
    run = submit(submitter, stub_run)
    detail = Client().get(f"/api/runs/{run.body_sha256[7:]}/").json()
    assert detail["platform"]["prices_version"] == 1
    assert detail["platform"]["platform_shifted_pit"] == pytest.approx(run.platform.shifted_pit)
    assert "the agent was not re-run" in detail["verification_level_words"]


def test_staff_register_prices_over_the_api_and_others_cannot(
    registered: Any, reference_file: Path, staff: User, submitter: User
) -> None:
    from tests.pitweb.conftest import token_client

    url = f"/api/releases/{registered.digest_hex}/prices/"

    def form() -> dict[str, Any]:
        handle = io.BytesIO(reference_file.read_bytes())
        handle.name = "reference.csv"
        return {"prices": handle, "source": "SYNTHETIC", "pulled_at": "x", "reason": "first"}

    assert token_client(submitter).post(url, form(), format="multipart").status_code == 403
    assert Client().post(url, form()).status_code in (401, 403)
    assert ReferencePrices.objects.count() == 0
    created = token_client(staff).post(url, form(), format="multipart")
    assert created.status_code == 201 and created.json()["version"] == 1
    again = token_client(staff).post(url, form(), format="multipart")
    assert again.status_code == 200 and again.json()["version"] == 1
    bad = form()
    bad["prices"] = io.BytesIO(b"date,symbol,open\nnot-a-date,AAA,1\n")
    bad["prices"].name = "bad.csv"
    refused = token_client(staff).post(url, bad, format="multipart")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_prices"
    listed = Client().get(url).json()
    assert [v["version"] for v in listed] == [1] and listed[0]["source"] == "SYNTHETIC"
    schema = Client().get("/api/schema/?format=json").json()
    assert "/api/releases/{digest}/prices/" in schema["paths"]


def test_an_unpriced_upload_gets_platform_figures_too(
    priced_release: Any, submitter: User, tmp_path: Path, site_release: Path
) -> None:
    unpriced = make_run(site_release, tmp_path / "unpriced")
    run = submit(submitter, unpriced)
    assert run.body["protocol"]["P4_costs_and_frictions"]["prices"] is None
    row = row_of(run)
    assert row["self_reported_main_pit"] is None
    assert row["platform_shifted_pit"] is not None and row["prices_version"] == 1
