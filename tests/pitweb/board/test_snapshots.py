"""Snapshots: a board frozen with its digest, cited from the board, never changed by
what happens afterwards, and its page lists what did happen since."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client

from harness import canonical
from harness.snapshot import redacted, verify_snapshot
from pitweb.board.models import Snapshot, SnapshotEdited
from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run, token_client
from tests.support.data import build_prices

pytestmark = pytest.mark.django_db(transaction=True)


def _json(snapshot_id: int) -> bytes:
    response = Client().get(f"/snapshots/{snapshot_id}/?format=json")
    assert response.status_code == 200
    return response.content


def test_a_snapshot_never_changes_and_its_page_lists_what_happened_since(
    priced_release: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    site_release: Path,
    tmp_path: Path,
    settings: Any,
) -> None:
    from pitweb.pricing.services import reference_prices_register

    settings.PITWEB_MIN_RANKED_TRADES = 1
    a, b = submit_run(submitter, stub_run), submit_run(submitter, picky_run)
    assert (
        "No snapshot of this view yet" in Client().get("/benchmarks/", follow=True).content.decode()
    )
    made = token_client(staff).post(
        "/api/snapshots/", {"reason": "cited in a paper"}, format="json"
    )
    assert made.status_code == 201, made.content
    sid = made.json()["snapshot"]
    frozen = _json(sid)
    digest = made.json()["content_digest"]
    assert verify_snapshot(frozen.decode(), digest).ok  # anyone can check it, offline
    board = Client().get(f"/api/snapshots/{sid}/").json()["content"]["board"]
    assert {r["run_id"] for r in board["ranked"]} == {a.run_id, b.run_id}
    # the board cites it (a snapshot bumps the board, so the cached page shows it)
    page = Client().get("/benchmarks/", follow=True).content.decode()
    assert f'href="/snapshots/{sid}/"' in page and "Cite this board" in page
    assert "Nothing has happened" in Client().get(f"/snapshots/{sid}/").content.decode()
    # then: a re-verification, a new price version, a flag and a withdrawal
    services.run_reverify(run=b, staff=staff, reason="new verifier")
    reference_prices_register(
        release=priced_release, path=build_prices(tmp_path / "v2.csv", site_release, seed=77),
        source="SYNTHETIC v2", pulled_at="generated", staff=staff, reason="better bars",
    )  # fmt: skip
    services.run_set_flag(run=b, staff=staff, flag="look again", reason="a reader wrote")
    services.run_withdraw(run=a, owner=submitter, reason="superseded")
    live = Client().get("/api/leaderboard/").json()
    assert [r["run_id"] for r in live["ranked"]] == [b.run_id]
    assert live["ranked"][0]["prices_version"] == 2  # the live board moved on
    # a snapshot never changes but for the withdrawn run's row, removed (its digest kept)
    assert _json(sid).decode() == canonical.line(redacted(json.loads(frozen), {a.pk}))
    assert verify_snapshot(_json(sid).decode(), digest).ok
    page = Client().get(f"/snapshots/{sid}/").content.decode()
    for happened in ("reverify: new verifier", "re-verification job", "reference prices v2",
                     "flag: a reader wrote"):  # fmt: skip
        assert happened in page, happened
    assert "withdraw: superseded" not in page and a.run_id not in page
    assert b.run_id in page  # the frozen rows, as they stood
    since = Client().get(f"/api/snapshots/{sid}/").json()["since"]
    assert [e["at"] for e in since] == sorted(e["at"] for e in since)
    csv_text = Client().get(f"/snapshots/{sid}/?format=csv").content.decode()
    assert csv_text.startswith("section,") and b.run_id in csv_text
    snapshot = Snapshot.objects.get(pk=sid)
    snapshot.reason = "edited"
    with pytest.raises(SnapshotEdited):
        snapshot.save()


def test_only_staff_publish_and_bad_requests_change_nothing(
    priced_release: Any, submitter: User, staff: User, stub_run: Artifacts
) -> None:
    submit_run(submitter, stub_run)
    assert token_client(submitter).post(
        "/api/snapshots/", {"reason": "mine"}, format="json"
    ).status_code in (401, 403)
    assert Client().post("/api/snapshots/", {"reason": "x"}).status_code in (401, 403)
    owner = Client()
    owner.force_login(submitter)
    refused = owner.post("/snapshots/publish", {"reason": "x", "confirm": "yes"})
    assert refused.status_code == 403
    visitor = Client().post("/snapshots/publish", {"reason": "x", "confirm": "yes"})
    assert visitor.status_code == 302 and visitor["Location"].startswith("/accounts/login/")
    bad = token_client(staff).post(
        "/api/snapshots/", {"reason": "x", "start": "not a day"}, format="json"
    )
    assert bad.status_code == 400
    assert token_client(staff).post("/api/snapshots/", {}, format="json").status_code == 400
    desk_form = Client()
    desk_form.force_login(staff)
    long = desk_form.post(
        "/snapshots/publish", {"reason": "x", "release": "r" * 700, "confirm": "yes"}, follow=True
    )
    assert (
        long.status_code == 200
        and "Nothing was done: a snapshot is of one benchmark" in long.content.decode()
    )
    desk = Client()
    desk.force_login(staff)
    unconfirmed = desk.post("/snapshots/publish", {"reason": "x"}, follow=True)
    assert "Nothing was done" in unconfirmed.content.decode()
    assert Snapshot.objects.count() == 0
    for key in ("x", "-1", "99999999999999999999999", "٣", "0"):
        assert Client().get(f"/snapshots/{key}/").status_code == 404
        assert Client().get(f"/api/snapshots/{key}/").status_code == 404
    # the staff form publishes the board drawn with its filters
    done = desk.post(
        "/snapshots/publish", {"reason": "release view", "form": "8-K", "confirm": "yes"}
    )
    snapshot = Snapshot.objects.get()
    assert done["Location"] == f"/snapshots/{snapshot.pk}/"
    # the form named the one benchmark: the snapshot is of its board, reached either way
    assert '"benchmark":"' in snapshot.filters_key and '"form":null' in snapshot.filters_key
    assert "Cite this board" in Client().get("/benchmarks/?form=8-K", follow=True).content.decode()
    assert "Cite this board" in Client().get("/benchmarks/", follow=True).content.decode()


def test_the_weekly_schedule_publishes_each_benchmarks_board(
    priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    from pitweb.board.tasks import publish_weekly_snapshot

    run = submit_run(submitter, stub_run)
    entry = django_settings.CELERY_BEAT_SCHEDULE["weekly-board-snapshot"]
    assert entry["task"] == "pitweb.board.tasks.publish_weekly_snapshot"
    [sid] = publish_weekly_snapshot()  # one benchmark: one snapshot
    snapshot = Snapshot.objects.get(pk=sid)
    assert snapshot.published_by is None and "weekly" in snapshot.reason
    assert run.run_id in Client().get(f"/snapshots/{sid}/").content.decode()
    assert "by the weekly schedule" in Client().get(f"/snapshots/{sid}/").content.decode()
    assert Run.objects.count() == 1
