"""A live-shadow cohort on the site, along a clock the test moves: sealed before its as-of
date (refused after), answered before it passes (refused after), each point resolved after
its resolution date (refused before), finalized and judged only when its last point is."""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.forward.log import verify_log
from harness.points.artifacts import as_stored
from harness.points.model import plain
from harness.points.questions import questions_points
from harness.points.run import answer_points
from pitweb.forward.models import LogEntry
from pitweb.points.models import AnswerSet, JudgedSet, PointSet, PointsJob
from tests.pitweb.conftest import token_client
from tests.support.chat_server import Chat
from tests.support.points import answerer
from tests.support.points_site import endpoints

pytestmark = pytest.mark.django_db(transaction=True)

TRUTHS = {"up-by-tenth": "Yes: it closed at 101.2.", "down-by-twelfth": "No: it closed at 99.9."}
PLAN = {
    "points": [
        {"id": "up-by-tenth", "question": "As of 2026-03-03, will the demo index close above "
         "100 on 2026-03-10? Answer yes or no, with the close.", "as_of": "2026-03-03",
         "resolves_on": "2026-03-10", "resolution": "The index's official close on 2026-03-10."},
        {"id": "down-by-twelfth", "question": "As of 2026-03-03, will the demo index close "
         "above 100 on 2026-03-12? Answer yes or no, with the close.", "as_of": "2026-03-03",
         "resolves_on": "2026-03-12", "resolution": "The index's official close on 2026-03-12."},
    ]
}  # fmt: skip


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """The site's clock, set to a UTC moment (``2026-03-02T15:00``) and moved by the test."""
    now: list[dt.datetime] = []
    monkeypatch.setattr("django.utils.timezone.now", lambda: now[-1])

    def set_to(moment: str) -> None:
        now.append(dt.datetime.fromisoformat(moment).replace(tzinfo=dt.UTC))

    return set_to


def _staff(staff: User) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def _seal(client: Client, plan: dict[str, Any], name: str = "march-cohort") -> Any:
    upload = io.BytesIO(json.dumps(plan).encode())
    upload.name = "plan.json"
    return client.post("/points/live/", {"name": name, "title": "March", "plan": upload})


def _upload(user: User, body: dict[str, Any]) -> Any:
    upload = io.BytesIO(json.dumps(body).encode())
    upload.name = "answers.json"
    return token_client(user).post("/api/points/march-cohort/answer-sets/", {"answers": upload})


def _resolve(client: Client, point_id: str) -> Any:
    return client.post(
        "/points/march-cohort/resolve/",
        {"point_id": point_id, "ground_truth": TRUTHS[point_id], "provenance": "Exchange close."},
    )


def test_a_live_cohort_from_seal_to_judgment(
    staff: User, submitter: User, other: User, chat: tuple[Chat, str], settings: Any,
    clock: Callable[[str], None],
) -> None:  # fmt: skip
    settings.PITWEB_POINTS_JUDGE = "judge"
    server, url = chat
    endpoints(url)
    clock("2026-03-04T03:00")  # 22:00 on the 3rd in New York: the as-of date, not yet passed
    client = _staff(staff)
    late = {"points": [{**PLAN["points"][0], "as_of": "2026-03-02"}]}
    refused = _seal(client, late, name="too-late")
    assert refused.status_code == 400 and b"has passed" in refused.content
    assert not PointSet.objects.exists() and not LogEntry.objects.exists()
    assert _seal(client, PLAN).status_code == 302
    cohort = PointSet.objects.get(name="march-cohort")
    assert cohort.live and cohort.state == "sealed" and cohort.seal_entry is not None
    assert cohort.seal_entry.body["seal"]["plan"] == cohort.commitment
    page = Client().get("/points/march-cohort/").content.decode()
    assert "live-shadow cohort" in page and "Answers are taken until 2026-03-03" in page
    # answered from its published Questions while its as-of date has not passed
    document = Client().get("/points/march-cohort/questions.json").json()
    server.agent = lambda question, n: TRUTHS["up-by-tenth"] if "03-10" in question else "Yes."
    answers = as_stored(plain(answer_points(answerer(url), questions_points(document))))
    received = _upload(submitter, answers)
    assert received.status_code == 201, received.content
    assert received.json()["received"].startswith("received, sealed until")
    # a day later (New York), the answers are closed
    clock("2026-03-04T15:00")
    answers_other = {**answers, "experiment": {**answers["experiment"], "agent": {
        **answers["experiment"]["agent"], "model": "came-late"}}}  # fmt: skip
    closed = _upload(other, answers_other)
    assert closed.status_code == 409 and closed.json()["error"]["code"] == "answers_closed"
    assert AnswerSet.objects.count() == 1
    # the site's workers are held to the same date; and nothing is judged before the last
    # outcome exists
    late_job = client.post("/points/march-cohort/jobs/", {"kind": "answer", "endpoint": "agent"})
    assert late_job.status_code == 409 and b"answers closed" in late_job.content
    early_judge = client.post(
        "/points/march-cohort/jobs/",
        {"kind": "judge", "endpoint": "judge", "answer_set": AnswerSet.objects.get().pk},
    )
    assert early_judge.status_code == 409 and not PointsJob.objects.exists()
    # a point resolves only once its resolution date has passed in New York
    clock("2026-03-11T03:00")  # 23:00 on the 10th there
    early = _resolve(client, "up-by-tenth")
    assert early.status_code == 400 and b"after that date has passed" in early.content
    clock("2026-03-11T15:00")
    assert _resolve(client, "up-by-tenth").status_code == 302
    cohort.refresh_from_db()
    assert cohort.state == "sealed" and not PointsJob.objects.exists()  # one still open
    assert _resolve(client, "up-by-tenth").status_code == 409  # resolved once
    clock("2026-03-13T15:00")
    assert _resolve(client, "down-by-twelfth").status_code == 302
    cohort.refresh_from_db()
    assert cohort.state == "revealed" and len(cohort.suite_sha256) == 64
    judged = JudgedSet.objects.get()
    assert judged.formal and judged.summary["pass"] == 1 and judged.summary["fail"] == 1
    board = Client().get("/points/board/?table=board&format=json").json()["points_board"]
    assert [(r["family"], r["rank"], r["pass"]) for r in board] == [("alice", "1", 1)]
    entries = verify_log(Client().get("/forward/log.json").json())
    assert [e.kind for e in entries] == ["seal", "answers"]
    page = Client().get("/points/march-cohort/").content.decode()
    assert "Every point is resolved" in page and TRUTHS["down-by-twelfth"] in page
