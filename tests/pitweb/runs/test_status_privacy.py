"""The status page, its exports and every job history name only what the visitor may see:
jobs of runs they may not see are counted, with their state and time, but with no run id,
body hash, submission or link; workers go by a pseudonym for all but staff."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from pitweb.jobs.models import WorkerBeat
from pitweb.runs import services
from pitweb.runs.models import Run, VerificationJob
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)

HOST, PID = "build-box-7.internal", "48213"
WORKER = f"{HOST}:{PID}"


@dataclass(frozen=True)
class Seeded:
    runs: dict[str, Run]  # by what it is: shown, alices_private, bobs_private, hidden
    jobs: dict[str, VerificationJob]


def copy_of(template: Run, n: int, **fields: Any) -> Run:
    """A run with a body hash and run id of its own, copied from a real one."""
    return Run.objects.create(
        **{
            f.name: getattr(template, f.name)
            for f in Run._meta.concrete_fields
            if f.name not in ("id", "run_id", "body_sha256", "submitted_at", *fields)
        },
        run_id=hashlib.sha256(f"run id {n}".encode()).hexdigest()[:16],
        body_sha256="sha256:" + hashlib.sha256(f"body {n}".encode()).hexdigest(),
        **fields,
    )


@pytest.fixture()
def seeded(registered: Any, submitter: User, other: User, stub_run: Artifacts) -> Seeded:
    """Alice's public run (verified for real), her private run, Bob's private run and a
    hidden public run of Bob's; one finished job each, all run by one worker."""
    shown = submit_run(submitter, stub_run)
    runs = {
        "shown": shown,
        "alices_private": copy_of(shown, 1, visibility="private"),
        "bobs_private": copy_of(shown, 2, visibility="private", submitter=other),
        "hidden": copy_of(shown, 3, hidden=True, submitter=other),
    }
    services.board_changed()
    now = timezone.now()
    VerificationJob.objects.filter(run=shown).update(worker=WORKER)
    jobs = {"shown": VerificationJob.objects.get(run=shown)}
    for n, (what, run) in enumerate(runs.items()):
        if what != "shown":
            jobs[what] = VerificationJob.objects.create(
                run=run,
                kind="verify",
                state="mismatch" if what == "hidden" else "verified",
                worker=WORKER,
                finished_at=now + timedelta(seconds=n),
            )
    WorkerBeat.objects.create(name=WORKER, started_at=now, last_seen=now, isolation=True)
    return Seeded(runs, jobs)


# who sees which run, by the rule visible_runs implements (public and unhidden, one's
# own, staff everything), written out here so the test does not read it from the code
SEES = {
    "anonymous": {"shown"},
    "alice": {"shown", "alices_private"},
    "bob": {"shown", "bobs_private", "hidden"},
    "staff": {"shown", "alices_private", "bobs_private", "hidden"},
}


def client_for(who: str, users: dict[str, User]) -> Client:
    client = Client()
    if who != "anonymous":
        client.force_login(users[who])
    return client


@pytest.fixture()
def users(submitter: User, other: User, staff: User) -> dict[str, User]:
    return {"alice": submitter, "bob": other, "staff": staff}


def identities(run: Run) -> list[str]:
    sha = run.body_sha256.removeprefix("sha256:")
    return [run.run_id, sha, sha[:12], f"submission={run.pk}"]


def names(text: str, identity: str) -> bool:
    """``identity`` stands in ``text`` on its own (not inside a longer hex or number)."""
    return re.search(rf"(?<![0-9a-f]){re.escape(identity)}(?![0-9a-f])", text) is not None


def status_texts(client: Client) -> dict[str, str]:
    return {
        path: client.get(path).content.decode()
        for path in (
            "/status/",
            "/status/?format=json",
            "/status/?table=recent_latencies&format=csv",
            "/status/?table=recent_latencies&format=json",
            "/status/?table=workers&format=csv",
            "/status/?table=workers&format=json",
        )
    }


@pytest.mark.parametrize("who", list(SEES))
def test_the_status_page_names_only_runs_the_visitor_may_see(
    who: str, seeded: Seeded, users: dict[str, User]
) -> None:
    client = client_for(who, users)
    texts = status_texts(client)
    for path, text in texts.items():
        for what, run in seeded.runs.items():
            if what not in SEES[who]:
                for identity in identities(run):
                    assert not names(text, identity), (who, path, what, identity)
    for what in SEES[who]:  # and what they may see is named, with its link
        run = seeded.runs[what]
        for path in ("/status/", "/status/?format=json"):
            for identity in (run.run_id, run.body_sha256[7:], f"submission={run.pk}"):
                assert names(texts[path], identity), (path, identity)
    data = client.get("/status/?format=json").json()
    rows = data["recent_latencies"]
    # every finished job is still counted, with its state and its time
    assert len(rows) == len(seeded.jobs)
    assert sorted(r["state"] for r in rows) == sorted(j.state for j in seeded.jobs.values())
    assert all(isinstance(r["seconds"], float) and r["seconds"] >= 0 for r in rows)
    named = {r["run_id"] for r in rows if r["run_id"] is not None}
    assert named == {seeded.runs[what].run_id for what in SEES[who]}
    for row in rows:
        if row["run_id"] is None:
            assert row["job"] is None and row["page"] is None
    exported = list(
        csv.DictReader(
            io.StringIO(client.get("/status/?table=recent_latencies&format=csv").content.decode())
        )
    )
    assert {r["run_id"] for r in exported if r["run_id"]} == named
    html = client.get("/status/").content.decode()
    hidden_rows = len(seeded.jobs) - len(SEES[who])
    assert html.count('<span class="muted">a run you may not see</span>') == hidden_rows


@pytest.mark.parametrize("who", ["anonymous", "alice", "bob"])
def test_workers_go_by_a_pseudonym_with_no_host_for_all_but_staff(
    who: str, seeded: Seeded, users: dict[str, User]
) -> None:
    client = client_for(who, users)
    for path, text in status_texts(client).items():
        assert HOST not in text and PID not in text, path
    [worker] = client.get("/status/?format=json").json()["workers"]
    assert worker["worker"].startswith("worker-") and worker["state"] == "live"
    # the shown run's job history everywhere: the same pseudonym, never the host
    shown = seeded.runs["shown"]
    sha = shown.body_sha256.removeprefix("sha256:")
    job = seeded.jobs["shown"]
    for path in (
        f"/runs/{sha}/",
        f"/runs/{sha}/tables/jobs?format=csv",
        f"/runs/{sha}/tables/jobs?format=json",
        f"/api/runs/{sha}/",
        f"/api/jobs/{job.pk}/",
    ):
        response = client.get(path)
        text = response.content.decode()
        assert response.status_code == 200, path
        assert HOST not in text and PID not in text, path
        assert worker["worker"] in text, path
    assert client.get(f"/api/jobs/{job.pk}/").json()["worker"] == worker["worker"]


def test_staff_see_every_run_and_the_workers_host(seeded: Seeded, users: dict[str, User]) -> None:
    client = client_for("staff", users)
    [worker] = client.get("/status/?format=json").json()["workers"]
    assert worker["worker"] == WORKER
    job = seeded.jobs["hidden"]
    assert client.get(f"/api/jobs/{job.pk}/").json()["worker"] == WORKER
    rows = client.get("/status/?format=json").json()["recent_latencies"]
    assert all(r["run_id"] and r["page"] and r["job"] for r in rows)


@pytest.mark.parametrize("who", ["anonymous", "alice"])
def test_a_job_of_a_run_one_may_not_see_answers_like_no_job(
    who: str, seeded: Seeded, users: dict[str, User]
) -> None:
    client = client_for(who, users)
    unknown = max(j.pk for j in seeded.jobs.values()) + 1000
    expected = client.get(f"/api/jobs/{unknown}/")
    assert expected.status_code == 404
    for what, job in seeded.jobs.items():
        if what in SEES[who]:
            continue
        response = client.get(f"/api/jobs/{job.pk}/")
        assert response.status_code == 404, what
        assert response.json() == json.loads(expected.content), what
