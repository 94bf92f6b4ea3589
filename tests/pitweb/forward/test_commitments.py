"""Commitments on the forward track: appended to a hash-chained log whose published copy
verifies offline (harness.forward.log.verify_log), refused for an HTTP agent, another's
agent, a changed package or bad input (nothing stored), withdrawn by a new entry once;
the log's rows never edited through the ORM, and a row changed behind the site's back
published as it is, so the chain names it."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone

from harness import canonical
from harness.forward.log import LogError, live_commitments, verify_log
from pitweb.core.errors import SubmissionError
from pitweb.execution.models import RegisteredAgent
from pitweb.forward import services
from pitweb.forward.models import Commitment, LogEntry, LogEntryEdited
from pitweb.releases.models import Release
from tests.pitweb.conftest import token_client
from tests.pitweb.forward.conftest import AGENT, BENCH

pytestmark = pytest.mark.django_db


def commit(agent: RegisteredAgent, release: Release, **given: Any) -> Commitment:
    return services.commitment_create(
        by=given.pop("by", agent.owner), agent=agent, release=release, **{**BENCH, **given}
    )


def published() -> dict[str, Any]:
    response = Client().get("/forward/log.json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="commitments-log.json"'
    found: dict[str, Any] = response.json()
    return found


def nothing_stored() -> None:
    assert LogEntry.objects.count() == 0 and Commitment.objects.count() == 0


def test_commits_append_entry_one_then_two_and_the_published_chain_verifies(
    agent: RegisteredAgent, registered: Release, submitter: User
) -> None:
    before = timezone.now().replace(microsecond=0)
    first = commit(agent, registered)
    second = commit(agent, registered, model_version="demo-1", training_cutoff="2022-12-31")
    assert (first.entry.seq, second.entry.seq) == (1, 2)
    log = published()
    entries = verify_log(log, heads=[f"1:{first.entry.digest}"])
    assert [e.seq for e in entries] == [1, 2]
    assert entries[1].prev == first.entry.digest == log["entries"][1]["prev"]
    assert log["head"] == {"seq": 2, "digest": second.entry.digest}
    assert Client().get("/forward/log/head.json").json() == log["head"]
    made = entries[1].commit
    assert made is not None
    assert made.agent.digest == agent.digest and made.agent.transport == "stdio"
    assert made.benchmark.release_digest == registered.content_digest
    assert made.benchmark.arms == ("main", "shifted") and made.benchmark.forms == ("8-K",)
    assert made.model.training_cutoff == "2022-12-31" and made.submitter == submitter.username
    # the site's clock, to the second
    stamped = datetime.fromisoformat(entries[0].stamped_at.replace("Z", "+00:00"))
    assert before <= stamped <= timezone.now()
    assert first.committed_at == stamped


def test_an_http_agent_cannot_be_committed(
    http_agent: RegisteredAgent, registered: Release, submitter: User
) -> None:
    with pytest.raises(SubmissionError) as refused:
        commit(http_agent, registered)
    assert refused.value.code == "http_not_committable"
    assert "what answers behind a URL can change" in refused.value.message
    body = {**BENCH, "agent": "web", "release": registered.content_digest}
    response = token_client(submitter).post("/api/commitments/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "http_not_committable"
    nothing_stored()


def test_only_the_owner_commits_an_agent(
    agent: RegisteredAgent, registered: Release, other: User, staff: User
) -> None:
    for someone in (other, staff):
        with pytest.raises(SubmissionError) as refused:
            commit(agent, registered, by=someone)
        assert refused.value.http_status == 403
    body = {**BENCH, "agent": agent.name, "release": registered.content_digest}
    assert token_client(other).post("/api/commitments/", body, format="json").status_code == 404
    assert token_client(staff).post("/api/commitments/", body, format="json").status_code == 403
    assert Client().post("/api/commitments/", body, format="json").status_code in (401, 403)
    nothing_stored()


def test_a_package_changed_since_its_registration_is_refused(
    agent: RegisteredAgent, registered: Release, script: Path
) -> None:
    script.write_text(AGENT + "# another agent now\n")
    with pytest.raises(SubmissionError) as refused:
        commit(agent, registered)
    assert refused.value.code == "agent_changed"
    nothing_stored()


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ({"forms": ["NOPE"]}, "invalid_forms"),
        ({"forms": []}, "invalid_forms"),
        ({"hold_sessions": 0}, "invalid_hold"),
        ({"hold_sessions": 251}, "invalid_hold"),
        ({"clocks": ["sundial"]}, "invalid_clocks"),
        ({"arms": []}, "invalid_arms"),
        ({"training_cutoff": "2023-13-01"}, "invalid_cutoff"),
        ({"training_cutoff": "yesterday"}, "invalid_cutoff"),
        ({"model_version": "m\x00"}, "unreadable_input"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_stored(
    agent: RegisteredAgent, registered: Release, given: dict[str, Any], code: str
) -> None:
    with pytest.raises(SubmissionError) as refused:
        commit(agent, registered, **given)
    assert refused.value.code == code
    nothing_stored()


def test_a_release_with_a_newer_version_is_refused(
    agent: RegisteredAgent, registered: Release
) -> None:
    Release.objects.create(
        content_digest="sha256:" + "e" * 64, name=registered.name,
        manifest={**registered.manifest,
                  "parent": {"content_digest": registered.content_digest, "name": registered.name}},
        window_start=registered.window_start, window_end=registered.window_end,
        row_count=registered.row_count, storage_prefix="elsewhere", parent=registered, version=2,
    )  # fmt: skip
    with pytest.raises(SubmissionError) as refused:
        commit(agent, registered)
    assert refused.value.code == "release_superseded"
    nothing_stored()


def test_a_stated_time_before_the_logs_last_stamp_is_refused(
    agent: RegisteredAgent, registered: Release
) -> None:
    moment = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    commit(agent, registered, at=moment)
    with pytest.raises(SubmissionError) as refused:
        commit(agent, registered, at=moment - timedelta(seconds=1))
    assert refused.value.code == "stamp_before_log"
    assert LogEntry.objects.count() == 1


def test_a_withdrawal_appends_an_entry_and_a_second_is_refused(
    agent: RegisteredAgent, registered: Release, submitter: User, other: User
) -> None:
    made = commit(agent, registered)
    with pytest.raises(SubmissionError) as refused:
        services.commitment_withdraw(by=other, commitment=made, reason="not mine")
    assert refused.value.http_status == 403
    row = services.commitment_withdraw(by=submitter, commitment=made, reason="a bug found")
    assert (row.seq, row.kind) == (2, "withdraw")
    made.refresh_from_db()
    assert made.withdrawal == row and not made.live
    with pytest.raises(SubmissionError) as again:
        services.commitment_withdraw(by=submitter, commitment=made, reason="twice")
    assert again.value.code == "already_withdrawn"
    response = token_client(submitter).post(
        "/api/commitments/1/withdraw/", {"reason": "thrice"}, format="json"
    )
    assert response.status_code == 409
    entries = verify_log(published())
    assert len(entries) == 2 and live_commitments(entries) == []
    withdraw = entries[1].withdraw
    assert withdraw is not None
    assert (withdraw.withdraws, withdraw.entry, withdraw.reason) == (
        1, made.entry.digest, "a bug found",
    )  # fmt: skip


def test_a_log_entry_is_never_edited_or_removed_through_the_orm(
    agent: RegisteredAgent, registered: Release
) -> None:
    row = commit(agent, registered).entry
    row.body = {**row.body, "seq": 7}
    with pytest.raises(LogEntryEdited):
        row.save()
    with pytest.raises(LogEntryEdited):
        row.delete()
    assert LogEntry.objects.get().body["seq"] == 1


def _edit_body(seq: int, body: dict[str, Any]) -> None:
    """The row changed behind the site's back, in SQL (as a database's owner could)."""
    table = LogEntry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET body = %s WHERE seq = %s", [canonical.line(body), seq])


def test_a_row_edited_in_the_database_breaks_the_published_log(
    agent: RegisteredAgent, registered: Release
) -> None:
    first = commit(agent, registered)
    commit(agent, registered)
    kept = f"1:{first.entry.digest}"
    verify_log(published(), heads=[kept])
    edited = dict(first.entry.body)
    edited["commit"] = {**edited["commit"], "model": {"model_version": "claimed later",
                                                        "training_cutoff": ""}}  # fmt: skip
    _edit_body(1, edited)
    log = published()
    assert log["entries"][0]["commit"]["model"]["model_version"] == "claimed later"  # as stored
    with pytest.raises(LogError, match="entry 2: names previous digest"):
        verify_log(log)
    # and the last entry edited: the head every page states no longer matches it
    _edit_body(1, first.entry.body)
    last = LogEntry.objects.get(seq=2)
    _edit_body(2, {**last.body, "stamped_at": "2000-01-01T00:00:00Z"})
    with pytest.raises(LogError):
        verify_log(published())
    # nothing is appended over the damage
    with pytest.raises(SubmissionError) as refused:
        commit(agent, registered)
    assert refused.value.code == "log_damaged"
    assert LogEntry.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_get_consecutive_numbers_and_one_chain(
    agent: RegisteredAgent, registered: Release, monkeypatch: pytest.MonkeyPatch
) -> None:
    if connection.vendor != "postgresql":
        # on SQLite a writer takes the database's lock as its transaction begins (mode
        # IMMEDIATE): two appends never overlap at all
        pytest.skip("two appends that overlap need PostgreSQL")
    threads = 3
    # every thread's first look at the tail waits for the others: they all find the empty
    # log and build entry 1, so two of them lose on the unique number and try again
    together = threading.Barrier(threads)
    first_look = threading.local()
    original = services._locked_tail

    def tail_together() -> LogEntry | None:
        found = original()
        if not getattr(first_look, "done", False):
            first_look.done = True
            together.wait(timeout=30)
        return found

    monkeypatch.setattr(services, "_locked_tail", tail_together)
    errors: list[BaseException] = []

    def append() -> None:
        try:
            commit(agent, registered)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=append) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert errors == []
    entries = verify_log(published())
    assert [e.seq for e in entries] == [1, 2, 3]
    assert Commitment.objects.count() == 3
