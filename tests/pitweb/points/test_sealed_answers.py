"""Answers committed before the reveal: a sealed set takes answer sets made from its
published Questions, logs each one, tells its sender nothing but that it was received,
judges every one at the reveal, and the points board ranks those alone."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from harness import canonical
from harness.forward.log import verify_log
from harness.points.artifacts import as_stored
from harness.points.live import LivePoint, market_day
from harness.points.model import plain
from harness.points.questions import questions_points
from harness.points.run import answer_points
from pitweb.forward.models import LogEntry
from pitweb.points import services
from pitweb.points.engine import engine_points
from pitweb.points.models import AnswerSet, JudgedSet, PointSet, PointsJob
from tests.pitweb.conftest import token_client
from tests.support.chat_server import Chat
from tests.support.points import answerer
from tests.support.points_site import endpoints, point_files, zipped

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def sealed(staff: User, settings: Any) -> PointSet:
    settings.PITWEB_POINTS_JUDGE = "judge"
    return services.point_set_upload(
        user=staff, name="cohort", title="", archive=io.BytesIO(zipped(point_files(4))),
        state="sealed", reveal_on=dt.date.today(),
    )  # fmt: skip


def _questions(point_set: PointSet) -> dict[str, Any]:
    response = Client().get(f"/points/{point_set.name}/questions.json")
    assert response.status_code == 200
    return response.json()


def _answers(url: str, points: list[Any], model: str = "agent-under-test") -> dict[str, Any]:
    made = plain(answer_points(answerer(url), points))
    made["experiment"]["agent"]["model"] = model
    return as_stored(made)


def _upload(user: User, point_set: PointSet, body: dict[str, Any]) -> Any:
    upload = io.BytesIO(json.dumps(body).encode())
    upload.name = "answers.json"
    return token_client(user).post(
        f"/api/points/{point_set.name}/answer-sets/", {"answers": upload}
    )


def _blind(answer: dict[str, Any]) -> dict[str, Any]:
    """An acknowledgement with what differs by right (the digest, the ids) taken out."""
    return {k: v for k, v in answer.items() if k not in ("answer_set", "sha256", "log_entry")}


def test_answers_to_a_sealed_set_are_logged_and_judged_only_at_the_reveal(
    sealed: PointSet, staff: User, submitter: User, other: User, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    endpoints(url)  # the agent, and the pinned judge the settings name
    truths = {p.question: p.ground_truth for p in engine_points(sealed)}
    document = _questions(sealed)
    text = json.dumps(document)
    assert all(truth not in text for truth in truths.values())  # the Questions alone
    asked = questions_points(document)
    server.agent = lambda question, n: truths[question]
    right = _answers(url, asked, model="knows-all")
    server.agent = lambda question, n: "It is 99."
    wrong = _answers(url, asked, model="knows-none")
    # the log holds an entry already (another cohort's seal): both uploads append after it
    today = market_day(timezone.now())
    services.live_cohort_create(user=staff, name="elsewhere", title="", points=[LivePoint(
        id="q", question="Will it rain?", as_of=today, resolves_on=today, resolution="Sky.")])  # fmt: skip
    replies, work = [], []
    for user, body in ((submitter, right), (other, wrong)):
        with CaptureQueriesContext(connection) as queries:
            replies.append(_upload(user, sealed, body))
        work.append([q["sql"][:60] for q in queries.captured_queries])
    assert [r.status_code for r in replies] == [201, 201]
    # the same work for right and wrong answers: the same statements, in the same order
    # (nothing reads a hidden section, nothing is judged), so no timing tells them apart
    assert work[0] == work[1], "\n".join(map(str, work))
    acks = [r.json() for r in replies]
    # the sender learns that it was received, sealed until the reveal: nothing that
    # differs between right and wrong answers but the digest and the model it names
    assert _blind(acks[0]) | {"model": ""} == _blind(acks[1]) | {"model": ""}
    assert acks[0]["received"] == f"received, sealed until {sealed.reveal_on}"
    assert acks[0]["judge_jobs"] == [] and acks[0]["timing"] == "before_reveal"
    assert not PointsJob.objects.exists() and not JudgedSet.objects.exists()
    entries = list(LogEntry.objects.filter(kind="answers").order_by("seq"))
    assert [e.kind for e in LogEntry.objects.order_by("seq")] == ["seal", "answers", "answers"]
    assert entries[0].body["answers"]["answer_set"] == canonical.digest(right)
    assert entries[0].body["answers"]["point_set_commitment"] == sealed.commitment
    assert acks[0]["log_entry"] == {"seq": 2, "digest": entries[0].digest,
                                    "stamped_at": entries[0].body["stamped_at"]}  # fmt: skip
    verify_log(Client().get("/forward/log.json").json())
    # the same body again: the same acknowledgement, no second entry
    again = _upload(submitter, sealed, right)
    assert again.status_code == 200 and LogEntry.objects.count() == 3
    # nobody, staff included, has it judged before the reveal
    staff_client = Client()
    staff_client.force_login(staff)
    early = AnswerSet.objects.get(model="knows-all")
    refused = staff_client.post(
        f"/points/{sealed.name}/jobs/",
        {"kind": "judge", "answer_set": early.pk, "endpoint": "judge"},
    )
    assert refused.status_code == 409 and not PointsJob.objects.exists()
    page = Client().get(f"/points/{sealed.name}/").content.decode()
    assert page.count(f"sealed until {sealed.reveal_on}") >= 2 and "It is 99." not in page
    # the reveal: every answer set received while sealed goes to the site's judge
    jobs = services.point_set_reveal(point_set=sealed, user=staff)
    assert len(jobs) == 2
    judged = {j.answer_set.model: j for j in JudgedSet.objects.select_related("answer_set")}
    assert judged["knows-all"].summary["pass"] == 4 and judged["knows-none"].summary["pass"] == 0
    assert all(j.formal for j in judged.values())
    # answers given once the labels are public: judged at once, and marked so
    server.agent = lambda question, n: truths[question]
    late = _upload(staff, sealed, _answers(url, asked, model="came-late"))
    assert late.status_code == 201 and late.json()["timing"] == "after_reveal"
    assert len(late.json()["judge_jobs"]) == 1
    board = Client().get("/points/board/?table=board&format=json").json()["points_board"]
    assert {r["model"]: r["rank"] for r in board} == {"knows-all": "1", "knows-none": "2"}
    apart = Client().get("/points/board/?table=apart&format=json").json()["points_apart"]
    assert [(a["model"], a["timing"]) for a in apart] == [("came-late", "after_reveal")]
    assert "labels were public" in apart[0]["because"]
    assert "knows-all" in Client().get("/points/board/").content.decode()
    csv = Client().get("/points/board/?table=board&format=csv").content.decode().splitlines()
    assert csv[0].startswith("rank,family,model") and len(csv) == 3
    api = Client().get("/api/points/board/").json()
    assert [r["model"] for r in api["rows"]] == ["knows-all", "knows-none"]
    assert api["rows"][0]["class_intervals"]["completely_correct"]["share"] == 1.0


def test_a_sealed_set_refuses_what_would_tell_a_guess_apart(
    sealed: PointSet, submitter: User, chat: tuple[Chat, str]
) -> None:
    _, url = chat
    points = engine_points(sealed)
    # answers bound to whole files: one built on the true files, one on a wrong guess of a
    # Ground Truth; both refused alike, before anything reads a hidden section
    guessed = [dataclasses.replace(points[0], text=points[0].text.replace("forty", "fifty")),
               *points[1:]]  # fmt: skip
    refusals = [_upload(submitter, sealed, _answers(url, p)) for p in (points, guessed)]
    assert [r.status_code for r in refusals] == [400, 400]
    assert refusals[0].json() == refusals[1].json()
    assert refusals[0].json()["error"]["code"] == "not_bound_by_questions"
    # a cohort's answers answer every point
    part = _upload(submitter, sealed, _answers(url, questions_points(_questions(sealed))[:3]))
    assert part.status_code == 400 and part.json()["error"]["code"] == "incomplete_cohort"
    # a Question not the set's: refused by the engine's check of the Questions
    asked = questions_points(_questions(sealed))
    changed = [dataclasses.replace(asked[0], question=asked[0].question + "?"), *asked[1:]]
    body = _answers(url, changed)
    body["point_suite_sha256"] = sealed.question_digest
    forged = _upload(submitter, sealed, body)
    assert forged.status_code == 400 and forged.json()["error"]["code"] == "invalid_answer_set"
    assert not AnswerSet.objects.exists() and not LogEntry.objects.exists()
