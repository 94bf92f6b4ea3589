"""Attempts on the site: every upload of a family counts, the board ranks one row per
family on its best's family-wise (Šidák) interval, and withdrawing never uncounts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client

from harness.agents.adapters.plain import from_callable
from harness.market.prices import load_prices
from harness.receipt.attempts import attempts_of, family_best
from pitweb.board import families as selectors
from pitweb.runs.models import Family, Run
from tests.pitweb.conftest import Artifacts, make_run, submit_run, token_client

pytestmark = pytest.mark.django_db(transaction=True)

ATTEMPTS = 20


def _first(n: int) -> Any:
    def agent(prompt: str, tools: Any) -> list[str]:
        return [r["row_key"] for r in tools.pit_list(limit=n)["rows"]]

    return from_callable(agent, name="tuned")  # one agent name: one family


@pytest.fixture(scope="module")
def twenty(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> list[Artifacts]:
    """Twenty variations of one agent (each buys the first n filings of a session, under
    its own model version: the same agent name, so one family)."""
    root = tmp_path_factory.mktemp("twenty")
    return [
        make_run(
            site_release,
            root / f"n{n}",
            site_prices,
            agent=_first(n),
            probe=0,
            model_version=f"tuned-{n}",
        )
        for n in range(1, ATTEMPTS + 1)
    ]


@pytest.fixture()
def uploaded(
    priced_release: Any, submitter: User, twenty: list[Artifacts], settings: Any
) -> list[Run]:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    return [submit_run(submitter, a) for a in twenty]


def _board() -> dict[str, Any]:
    return Client().get("/api/leaderboard/").json()  # type: ignore[no-any-return]


def test_twenty_uploads_rank_as_one_row_best_of_20_on_the_harness_sidak_interval(
    uploaded: list[Run], twenty: list[Artifacts], site_release: Path, reference_file: Path
) -> None:
    board = _board()
    ours = [r for r in board["ranked"] if r["agent"] == "tuned"]
    assert len(ours) == 1, "a family ranks once, on its best"
    row = ours[0]
    assert row["attempts"] == ATTEMPTS
    assert row["ranked_confidence"] == pytest.approx(0.95 ** (1 / ATTEMPTS))
    # the same numbers the harness gives for the same receipts, priced with the same file
    prices = load_prices(reference_file, source="SYNTHETIC reference prices", pulled_at="")
    expected = family_best(
        attempts_of([a.receipt for a in twenty], release=site_release, prices=prices)
    )
    assert expected.best is not None and expected.interval is not None
    assert row["run_id"] == expected.best.run_id
    assert row["ranked_interval"] == list(expected.interval)
    alone = [row["platform_shifted_pit_low"], row["platform_shifted_pit_high"]]
    assert row["ranked_interval"][0] < alone[0] and row["ranked_interval"][1] > alone[1]
    # the page says it, and the family's other attempts are one click away
    page = Client().get("/benchmarks/", follow=True).content.decode()
    assert "best of 20 attempts" in page and f'href="/families/{row["family"]}/"' in page
    family = Client().get(f"/families/{row['family']}/").content.decode()
    assert "20 attempts" in family and family.count('class="run"') >= ATTEMPTS
    assert "99.74%" in family  # 0.95^(1/20)
    data = Client().get(f"/api/families/{row['family']}/").json()
    assert data["attempts"] == ATTEMPTS and data["attempts_shown"] == ATTEMPTS
    assert data["best"]["interval_family_wise"] == list(expected.interval)
    assert sum(r.get("family_best", False) for r in data["runs"]) == 1


def test_withdrawing_keeps_the_count_and_takes_the_run_off_every_public_page(
    uploaded: list[Run], submitter: User, other: User
) -> None:
    best = next(r for r in _board()["ranked"] if r["agent"] == "tuned")
    sha = best["body_sha256"].removeprefix("sha256:")
    # another user cannot withdraw it: answered as if it did not exist
    refused = token_client(other).post(
        f"/api/runs/{sha}/withdraw/", {"reason": "not mine"}, format="json"
    )
    assert refused.status_code == 404
    assert Run.objects.get(pk=best["submission"]).withdrawn_at is None
    done = token_client(submitter).post(
        f"/api/runs/{sha}/withdraw/", {"reason": "a lucky draw"}, format="json"
    )
    assert done.status_code == 200, done.content
    after = [r for r in _board()["ranked"] if r["agent"] == "tuned"]
    assert len(after) == 1 and after[0]["submission"] != best["submission"]
    assert after[0]["attempts"] == ATTEMPTS, "withdrawing never uncounts"
    assert after[0]["ranked_confidence"] == pytest.approx(0.95 ** (1 / ATTEMPTS))
    assert Family.objects.get(pk=best["family"]).attempts == ATTEMPTS
    assert Client().get(f"/runs/{sha}/").status_code == 404  # public page gone
    owner = Client()
    owner.force_login(submitter)
    page = owner.get(f"/runs/{sha}/").content.decode()
    assert "withdrawn by its submitter" in page
    family = Client().get(f"/api/families/{best['family']}/").json()
    assert family["attempts"] == ATTEMPTS and family["attempts_shown"] == ATTEMPTS - 1
    # twice changes nothing more, and is in the changelog once
    token_client(submitter).post(f"/api/runs/{sha}/withdraw/", {"reason": "again"}, format="json")
    assert Client().get("/changelog/").content.decode().count("withdraw") >= 1
    from pitweb.core.models import AuditEvent

    assert AuditEvent.objects.filter(action="withdraw").count() == 1


def test_the_same_body_again_is_no_new_attempt_and_a_refused_upload_counts_nothing(
    priced_release: Any, submitter: User, twenty: list[Artifacts]
) -> None:
    first = submit_run(submitter, twenty[0])
    again = submit_run(submitter, twenty[0])
    assert again.pk == first.pk and first.family.attempts == 1
    from pitweb.core.errors import SubmissionError

    with pytest.raises(SubmissionError):
        submit_run(submitter, twenty[1], trajectory=b'{"not": "the trajectory"}\n')
    assert Family.objects.get(pk=first.family_id).attempts == 1
    assert Run.objects.filter(family=first.family).count() == 1


def test_two_submitters_are_two_families_and_a_hidden_family_is_not_found(
    priced_release: Any, submitter: User, other: User, staff: User, twenty: list[Artifacts],
    settings: Any,
) -> None:  # fmt: skip
    from pitweb.runs import services

    settings.PITWEB_MIN_RANKED_TRADES = 1
    mine = [submit_run(submitter, a) for a in twenty[:3]]
    theirs = submit_run(other, twenty[0])
    assert theirs.family_id != mine[0].family_id
    ranked = [r for r in _board()["ranked"] if r["agent"] == "tuned"]
    assert sorted((r["submitter"], r["attempts"]) for r in ranked) == sorted(
        [(other.username, 1), (submitter.username, 3)]
    )
    services.run_set_hidden(run=theirs, staff=staff, hidden=True, reason="test")
    assert Client().get(f"/families/{theirs.family_id}/").status_code == 404
    assert Client().get(f"/api/families/{theirs.family_id}/").status_code == 404
    assert selectors.family_attempts(AnonymousUser(), theirs.family_id) is None
    for bad in ("x", "-1", "99999999999999999999999", "١"):
        assert Client().get(f"/families/{bad}/").status_code == 404
        assert Client().get(f"/api/families/{bad}/").status_code == 404


def test_the_run_pages_withdraw_form_is_the_owners_and_needs_a_confirmation(
    priced_release: Any, submitter: User, other: User, twenty: list[Artifacts]
) -> None:
    run = submit_run(submitter, twenty[0])
    sha = run.body_sha256.removeprefix("sha256:")
    owner, stranger = Client(), Client()
    owner.force_login(submitter)
    stranger.force_login(other)
    page = owner.get(f"/runs/{sha}/?submission={run.pk}").content.decode()
    assert 'id="withdraw-form"' in page and "1 attempt of its family" in page
    assert 'id="withdraw-form"' not in stranger.get(f"/runs/{sha}/").content.decode()
    form = {"submission": run.pk, "reason": "superseded"}
    assert stranger.post(f"/runs/{sha}/withdraw", {**form, "confirm": "yes"}).status_code == 404
    assert Client().post(f"/runs/{sha}/withdraw", {**form, "confirm": "yes"}).status_code == 404
    unconfirmed = owner.post(f"/runs/{sha}/withdraw", form, follow=True).content.decode()
    assert "Nothing was done" in unconfirmed
    run.refresh_from_db()
    assert run.withdrawn_at is None
    empty = owner.post(f"/runs/{sha}/withdraw", {**form, "reason": " ", "confirm": "yes"})
    run.refresh_from_db()
    assert empty.status_code == 302 and run.withdrawn_at is None  # a reason is required
    done = owner.post(f"/runs/{sha}/withdraw", {**form, "confirm": "yes"}, follow=True)
    run.refresh_from_db()
    assert run.withdrawn_at is not None and "still counted" in done.content.decode()
    assert Family.objects.get(pk=run.family_id).attempts == 1


def test_runs_stored_before_attempts_were_counted_are_counted_by_the_migration(
    priced_release: Any, submitter: User, other: User, twenty: list[Artifacts]
) -> None:
    import importlib

    from django.apps import apps

    mine = [submit_run(submitter, a) for a in twenty[:3]]
    theirs = submit_run(other, twenty[0])
    Run.objects.update(family=None)
    Family.objects.all().delete()
    migration = importlib.import_module("pitweb.runs.migrations.0016_families_and_withdrawal")
    migration.count_stored_runs(apps, None)
    counted = {
        (f.submitter.username, f.agent): f.attempts
        for f in Family.objects.select_related("submitter")
    }
    assert counted == {(submitter.username, "tuned"): 3, (other.username, "tuned"): 1}
    assert len({r.family_id for r in Run.objects.filter(pk__in=[m.pk for m in mine])}) == 1
    assert Run.objects.get(pk=theirs.pk).family.attempts == 1  # type: ignore[union-attr]


def test_a_score_kept_without_tails_is_scored_again_not_ranked_unwidened(
    uploaded: list[Run],
) -> None:
    import importlib

    from django.apps import apps

    from pitweb.pricing.models import PlatformScore

    assert any(r["agent"] == "tuned" for r in _board()["ranked"])
    PlatformScore.objects.update(shifted_pit_tails=None)  # as stored before tails were kept
    migration = importlib.import_module("pitweb.pricing.migrations.0002_ranked_tails")
    migration.score_again(apps, None)
    assert set(PlatformScore.objects.values_list("state", flat=True)) == {"pending"}
    from pitweb.runs import services

    services.board_changed()
    board = _board()
    assert not board["ranked"]
    assert all(r["platform_status"].startswith("pending") for r in board["unranked"])
