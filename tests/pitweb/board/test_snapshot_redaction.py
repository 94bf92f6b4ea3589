"""A snapshot stays citable without publishing again what was taken down: a row whose run
is withdrawn or hidden after publication is "removed after this snapshot" on its page,
CSV, JSON and API, with its row digest only, and the snapshot's digest still verifies
offline (harness.snapshot)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from importlib import import_module
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from harness import canonical
from harness.snapshot import REMOVED, row_digest, snapshot_digest, verify_snapshot
from pitweb.board import services as board_services
from pitweb.board.models import Snapshot
from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run, token_client

pytestmark = pytest.mark.django_db(transaction=True)


def surfaces(sid: int) -> dict[str, str]:
    """Everything a visitor can read of the snapshot."""
    out = {
        "page": Client().get(f"/snapshots/{sid}/").content.decode(),
        "csv": Client().get(f"/snapshots/{sid}/?format=csv").content.decode(),
        "json": Client().get(f"/snapshots/{sid}/?format=json").content.decode(),
        "api": Client().get(f"/api/snapshots/{sid}/").content.decode(),
    }
    for name, text in out.items():
        assert text, name
    return out


def withdrawn(run: Run, submitter: User, staff: User) -> None:
    services.run_withdraw(run=run, owner=submitter, reason="superseded by a better run")


def hidden(run: Run, submitter: User, staff: User) -> None:
    services.run_set_hidden(run=run, staff=staff, hidden=True, reason="a secret leaked in it")


@pytest.mark.parametrize("take_down", [withdrawn, hidden], ids=["withdrawn", "hidden"])
def test_a_run_taken_down_after_a_snapshot_leaves_it_and_the_digest_still_verifies(
    priced_release: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    settings: Any,
    take_down: Callable[[Run, User, User], None],
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    a, b = submit_run(submitter, stub_run), submit_run(submitter, picky_run)
    made = token_client(staff).post("/api/snapshots/", {"reason": "cited"}, format="json")
    assert made.status_code == 201, made.content
    sid, digest = made.json()["snapshot"], made.json()["content_digest"]
    before = surfaces(sid)
    assert verify_snapshot(before["json"], digest).ok  # offline, with the harness alone
    [row_a] = [
        r for rows in json.loads(before["json"])["board"].values() for r in rows
        if r["run_id"] == a.run_id
    ]  # fmt: skip
    take_down(a, submitter, staff)
    after = surfaces(sid)
    for name, text in after.items():
        # nothing of the run: no id, body, figure or reason for taking it down
        for secret in (a.run_id, a.body_sha256, "superseded by", "a secret leaked"):
            assert secret not in text, (name, secret)
        assert b.run_id in text, name  # the other run stays, as it stood
    assert "1 row removed after this snapshot" in after["page"]
    assert row_digest(row_a) in after["page"] and row_digest(row_a) in after["csv"]
    exported = json.loads(after["json"])
    removed = [r for rows in exported["board"].values() for r in rows if r.get(REMOVED)]
    assert removed == [{REMOVED: True, "row_digest": row_digest(row_a)}]
    check = verify_snapshot(after["json"], digest)
    assert check.ok and check.removed == 1
    [csv_row] = [
        r for r in csv.DictReader(io.StringIO(after["csv"])) if r["row_digest"] == row_digest(row_a)
    ]
    assert csv_row["removed_after_snapshot"] == "True" and csv_row["run_id"] == ""
    api = json.loads(after["api"])
    assert api["content_digest"] == digest
    assert snapshot_digest(api["content"]) == digest


def test_a_snapshot_published_before_row_digests_is_carried_over_and_verifies(
    priced_release: Any, submitter: User, stub_run: Artifacts, settings: Any
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    run = submit_run(submitter, stub_run)
    [new] = board_services.snapshot_scheduled()
    body = json.loads(new.content)
    # as the first release stored it: version 1, the digest over the whole text
    body["snapshot_version"] = 1
    old_text = canonical.line(body)
    old_digest = "sha256:" + canonical.sha256_hex(old_text.encode())
    Snapshot.objects.filter(pk=new.pk).update(content=old_text, content_digest=old_digest)
    migration = import_module("pitweb.runs.migrations.0020_snapshot_row_digests")
    state = MigrationExecutor(connection).loader.project_state(
        ("runs", "0020_snapshot_row_digests")
    )
    migration.to_row_digests(state.apps, None)
    carried = Snapshot.objects.get(pk=new.pk)
    text = Client().get(f"/snapshots/{new.pk}/?format=json").content.decode()
    assert json.loads(text)["digest_v1"] == old_digest
    assert verify_snapshot(text, carried.content_digest).ok
    assert run.run_id in Client().get(f"/snapshots/{new.pk}/").content.decode()
