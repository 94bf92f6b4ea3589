"""The forward track's pages and API: the log's head on every page that cites it, the
commitments table with its CSV and JSON, a commitment's permalink, the owner's forms
(CSRF, post-redirect-get, errors in the form with nothing stored), the API and its
schema, and the head a board snapshot carries in its digest."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.forward.log import verify_log
from harness.snapshot import verify_snapshot
from pitweb.execution.models import RegisteredAgent
from pitweb.forward import services
from pitweb.forward.models import Commitment, LogEntry
from pitweb.releases.models import Release
from tests.pitweb.conftest import Artifacts, submit_run, token_client
from tests.pitweb.forward.conftest import BENCH

pytestmark = pytest.mark.django_db


def signed_in(user: User, password: str) -> Client:
    client = Client()
    assert client.login(username=user.username, password=password)
    return client


def test_the_track_page_shows_the_head_and_each_commitment_with_its_exports(
    agent: RegisteredAgent,
    registered: Release,
) -> None:
    empty = Client().get("/forward/")
    assert empty.status_code == 200 and "the log is empty" in empty.content.decode()
    made = services.commitment_create(by=agent.owner, agent=agent, release=registered, **BENCH)
    page = Client().get("/forward/").content.decode()
    assert made.entry.digest in page and "entry <strong>1</strong>" in page
    assert "waiter" in page and "not declared" in page and 'href="/forward/commitments/1/"' in page
    assert 'href="/forward/"' in Client().get("/").content.decode()  # the site's menu
    rows = list(csv.DictReader(io.StringIO(Client().get("/forward/?format=csv").content.decode())))
    assert [(r["seq"], r["agent"], r["state"]) for r in rows] == [("1", "waiter", "live")]
    assert json.loads(rows[0]["forms"]) == ["8-K"]
    shown = Client().get("/forward/?format=json").json()["commitments"]
    assert shown[0]["agent_digest"] == agent.digest and shown[0]["forward_runs"] == []


def test_a_commitments_page_shows_its_entry_as_hashed_and_how_to_check_it(
    agent: RegisteredAgent,
    registered: Release,
) -> None:
    made = services.commitment_create(by=agent.owner, agent=agent, release=registered, **BENCH)
    page = Client().get("/forward/commitments/1/")
    text = page.content.decode()
    assert page.status_code == 200
    assert made.entry.digest in text and "none: the first entry" in text
    assert "pit-harness commitments verify commitments-log.json --head 1:" in text
    assert "http://testserver/forward/log.json" in text
    assert "&quot;kind&quot;:&quot;commit&quot;" in text  # canonical JSON: no spaces
    assert Client().get("/forward/commitments/2/").status_code == 404
    services.commitment_withdraw(by=agent.owner, commitment=made, reason="found a bug")
    # a withdraw entry's number leads to the commitment it withdrew
    moved = Client().get("/forward/commitments/2/")
    assert moved.status_code == 302 and moved["Location"] == "/forward/commitments/1/#withdrawal"
    text = Client().get("/forward/commitments/1/").content.decode()
    assert "found a bug" in text and "withdrawn" in text and "entry <strong>2</strong>" in text


def test_the_log_is_revalidated_by_its_head(
    agent: RegisteredAgent,
    registered: Release,
) -> None:
    first = Client().get("/forward/log.json")
    assert first["Cache-Control"] == "no-cache"
    again = Client().get("/forward/log.json", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    services.commitment_create(by=agent.owner, agent=agent, release=registered, **BENCH)
    after = Client().get("/forward/log.json", HTTP_IF_NONE_MATCH=first["ETag"])
    assert after.status_code == 200 and len(after.json()["entries"]) == 1


def test_the_owner_commits_from_the_form_and_is_sent_to_the_commitments_page(
    agent: RegisteredAgent,
    registered: Release,
    submitter: User,
) -> None:
    client = signed_in(submitter, "pw-alice")
    form = client.get("/forward/commit/?agent=waiter")
    assert form.status_code == 200 and registered.content_digest in form.content.decode()
    assert 'href="/forward/commit/?agent=waiter"' in client.get("/agents/").content.decode()
    posted = client.post("/forward/commit/", {
        "agent": "waiter", "release": registered.content_digest, "hold_sessions": "5",
        "forms": ["8-K"], "clocks": ["pit", "dump"], "arms": ["main"],
        "model_version": "", "training_cutoff": "2022-12-31",
    })  # fmt: skip
    assert posted.status_code == 302 and posted["Location"] == "/forward/commitments/1/"
    made = Commitment.objects.get()
    assert made.clocks == ["dump", "pit"] and made.training_cutoff == "2022-12-31"


def test_a_refused_commitment_is_said_in_the_form_and_nothing_is_stored(
    http_agent: RegisteredAgent,
    registered: Release,
    submitter: User,
) -> None:
    client = signed_in(submitter, "pw-alice")
    posted = client.post("/forward/commit/", {
        "agent": "web", "release": registered.content_digest, "hold_sessions": "5",
        "forms": ["8-K"], "clocks": ["pit"], "arms": ["main"],
    })  # fmt: skip
    assert posted.status_code == 400
    assert "what answers behind a URL can change" in posted.content.decode()
    assert LogEntry.objects.count() == 0
    bad = client.post("/forward/commit/", {"agent": "web", "hold_sessions": "0"})
    assert bad.status_code == 400 and LogEntry.objects.count() == 0
    assert Client().get("/forward/commit/").status_code == 302  # to sign in


def test_the_forms_need_the_csrf_token(
    agent: RegisteredAgent,
    registered: Release,
    submitter: User,
) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="alice", password="pw-alice")
    posted = client.post("/forward/commit/", {"agent": "waiter"})
    assert posted.status_code == 403
    services.commitment_create(by=submitter, agent=agent, release=registered, **BENCH)
    assert client.post("/forward/commitments/1/withdraw", {"reason": "x"}).status_code == 403
    assert LogEntry.objects.count() == 1


def test_the_owner_withdraws_from_the_commitments_page(
    agent: RegisteredAgent,
    registered: Release,
    submitter: User,
    other: User,
) -> None:
    services.commitment_create(by=submitter, agent=agent, release=registered, **BENCH)
    assert (
        "withdraw-form"
        not in signed_in(other, "pw-bob").get("/forward/commitments/1/").content.decode()
    )
    refused = signed_in(other, "pw-bob").post("/forward/commitments/1/withdraw", {"reason": "x"})
    assert refused.status_code == 403 and LogEntry.objects.count() == 1
    client = signed_in(submitter, "pw-alice")
    assert "withdraw-form" in client.get("/forward/commitments/1/").content.decode()
    empty = client.post("/forward/commitments/1/withdraw", {"reason": ""})
    assert empty.status_code == 400 and LogEntry.objects.count() == 1
    done = client.post("/forward/commitments/1/withdraw", {"reason": "a bug"})
    assert done.status_code == 302 and done["Location"] == "/forward/commitments/1/"
    again = client.post("/forward/commitments/1/withdraw", {"reason": "twice"})
    assert again.status_code == 409 and "already withdrawn" in again.content.decode()
    assert LogEntry.objects.count() == 2


def test_the_api_commits_lists_withdraws_and_publishes_the_log(
    agent: RegisteredAgent,
    registered: Release,
    submitter: User,
) -> None:
    api = token_client(submitter)
    body = {**BENCH, "agent": "waiter", "release": registered.content_digest,
            "model_version": "demo-1", "training_cutoff": "2022-12-31"}  # fmt: skip
    made = api.post("/api/commitments/", body, format="json")
    assert made.status_code == 201, made.content
    shown = made.json()
    assert (shown["seq"], shown["state"], shown["model_version"]) == (1, "live", "demo-1")
    assert Client().get("/api/commitments/").json()[0]["entry_digest"] == shown["entry_digest"]
    gone = api.post("/api/commitments/1/withdraw/", {"reason": "a bug"}, format="json")
    assert gone.status_code == 201 and gone.json()["kind"] == "withdraw"
    assert (
        api.post("/api/commitments/9/withdraw/", {"reason": "x"}, format="json").status_code == 404
    )
    log = Client().get("/api/commitments/log/").json()
    assert log == Client().get("/forward/log.json").json()
    assert [e.seq for e in verify_log(log)] == [1, 2]
    schema = Client().get("/api/schema/?format=json").json()
    for path in ("/api/commitments/", "/api/commitments/log/", "/api/commitments/{seq}/withdraw/"):
        assert path in schema["paths"], path


@pytest.mark.django_db(transaction=True)
def test_a_board_snapshot_carries_the_logs_head_in_its_digest(
    agent: RegisteredAgent, priced_release: Release, submitter: User, staff: User,
    stub_run: Artifacts, settings: Any,
) -> None:  # fmt: skip
    settings.PITWEB_MIN_RANKED_TRADES = 1
    submit_run(submitter, stub_run)
    made = services.commitment_create(by=submitter, agent=agent, release=priced_release, **BENCH)
    published = token_client(staff).post("/api/snapshots/", {"reason": "cited"}, format="json")
    assert published.status_code == 201, published.content
    sid, digest = published.json()["snapshot"], published.json()["content_digest"]
    text = Client().get(f"/snapshots/{sid}/?format=json").content.decode()
    assert json.loads(text)["commitment_log_head"] == {"seq": 1, "digest": made.entry.digest}
    assert verify_snapshot(text, digest).ok
    forged = text.replace(made.entry.digest, "sha256:" + "0" * 64)
    assert not verify_snapshot(forged, digest).ok
    assert made.entry.digest in Client().get(f"/snapshots/{sid}/").content.decode()


@pytest.mark.parametrize("seq", ["0", "99999999999999999999999", "1x", "-1"])
def test_a_malformed_or_missing_entry_number_is_not_found(seq: str, submitter: User) -> None:
    assert Client().get(f"/forward/commitments/{seq}/").status_code == 404
    api = token_client(submitter)
    gone = api.post(f"/api/commitments/{seq}/withdraw/", {"reason": "x"}, format="json")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
