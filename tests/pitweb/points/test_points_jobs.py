"""Answer and judge jobs: a set answered and judged through the engine against loopback
models, a failed positive control that aborts naming the point, a rubber-stamp judge
published as judge_unreliable, a re-judgment linked to the set it follows, and a real
worker killed mid-judging whose replacement resumes without paying twice."""

from __future__ import annotations

import hashlib
import io
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb import celery_app
from pitweb.points import services
from pitweb.points.models import (
    AnswerSet,
    JournalLine,
    JudgedSet,
    ModelEndpoint,
    PointSet,
    PointsJob,
)
from tests.support.chat_server import Chat, section
from tests.support.points_site import answered_by, endpoints, knows_first, point_files, zipped

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_set_is_answered_and_judged_then_judged_again(
    point_set: PointSet, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    knows_first(server, point_set)
    agent, judge = endpoints(url, rate_per_minute=6000, concurrency=2)
    answers = answered_by(point_set, agent)
    assert answers.origin == "answered" and len(answers.body["answers"]) == 4
    job = services.judge_job_request(user=None, answer_set=answers, endpoint=judge, stride=1)
    job.refresh_from_db()
    assert job.state == "done", job.message
    judged = job.judged_set
    assert judged is not None and judged.status == "usable" and judged.origin == "site"
    counts = judged.summary["class_counts"]
    assert (counts["completely_correct"], counts["numeric_factual_error"]) == (1, 3)
    assert judged.verdicts.count() == 4 and judged.previous is None
    assert job.done_calls <= job.total_calls
    page = Client().get("/points/four/?table=judged&format=json").json()["judged_sets"]
    assert [(r["model"], r["pass"], r["fail"], r["ranked"]) for r in page] == [
        ("agent-x", 1, 3, False)  # a public set: development data, never ranked
    ]
    # judged again, with the judge now reading one answer differently
    wrong = section
    server.judge_hook = lambda prompt: (
        "Class: analysis_logic_error\n\nThe step does not follow."
        if "It is 99." in wrong(prompt, "Answer") and "(1)" in wrong(prompt, "GroundTruth")
        else None
    )
    again = services.judge_job_request(user=None, answer_set=answers, endpoint=judge, stride=1)
    again.refresh_from_db()
    second = again.judged_set
    assert second is not None and second.previous == judged
    assert second.changes == [
        {"point_id": "p-1", "sample": 0, "was": "numeric_factual_error",
         "now": "analysis_logic_error"}
    ]  # fmt: skip
    verdicts = Client().get(f"/points/four/judged/{second.pk}/").content.decode()
    assert f"judged set {judged.pk}" in verdicts


def test_a_failed_positive_control_aborts_the_job_naming_the_point(
    point_set: PointSet, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    agent, judge = endpoints(url)
    answers = answered_by(point_set, agent)
    server.judge_mode = "fails-positive"
    job = services.judge_job_request(user=None, answer_set=answers, endpoint=judge)
    job.refresh_from_db()
    assert job.state == "control_failed" and job.judged_set is None
    assert "p-0" in job.message and "nothing judged" in job.message
    assert JudgedSet.objects.count() == 0


def test_a_judge_that_passes_everything_is_published_as_judge_unreliable(
    point_set: PointSet, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    agent, judge = endpoints(url)
    answers = answered_by(point_set, agent)
    server.judge_mode = "stamp"
    job = services.judge_job_request(user=None, answer_set=answers, endpoint=judge)
    job.refresh_from_db()
    judged = job.judged_set
    assert judged is not None and judged.status == "judge_unreliable"
    assert any("negative control" in rule for rule in judged.broken_rules)
    [row] = Client().get("/points/four/?table=judged&format=json").json()["judged_sets"]
    assert row["ranked"] is False and row["status"] == "judge_unreliable"
    # no figure of a failed judge's verdicts, only the rule it broke
    assert row["pass"] is None and row["accuracy"] is None
    assert row["figures_withheld_because"] == "judge unreliable: " + judged.broken_rules[0]


def test_a_remote_endpoint_without_its_key_is_our_harness_error(
    point_set: PointSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PITWEB_TEST_NO_SUCH_KEY", raising=False)
    agent = services.model_register(
        user=None, name="far", base_url="https://models.example.invalid/v1", model="m",
        api_key_env="PITWEB_TEST_NO_SUCH_KEY",
    )  # fmt: skip
    job = services.answer_job_request(user=None, point_set=point_set, endpoint=agent)
    job.refresh_from_db()
    # retried (eagerly, at once) until its attempts are used, then ours, never the model's
    assert job.state == "harness_error" and "PITWEB_TEST_NO_SUCH_KEY" in job.message
    assert AnswerSet.objects.count() == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [("base_url", "file:///etc/passwd"), ("api_key_env", "lower-case"), ("concurrency", 0),
     ("name", "Not A Name"), ("model", "")],
)  # fmt: skip
def test_a_bad_model_registration_is_refused(field: str, value: Any) -> None:
    from pitweb.core.errors import SubmissionError

    good: dict[str, Any] = {"name": "ok", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    with pytest.raises(SubmissionError):
        services.model_register(user=None, **{**good, field: value})
    assert ModelEndpoint.objects.count() == 0


# -- a real worker, killed mid-judging ---------------------------------------------------


def _paid(prompt: str, paid: Counter[str], lock: threading.Lock) -> None:
    with lock:
        paid[hashlib.sha256(prompt.encode()).hexdigest()] += 1


def test_a_worker_killed_mid_judging_is_replaced_without_paying_twice(
    point_set: PointSet, chat: tuple[Chat, str], artifact_dir: Path, tmp_path: Path,
    settings: Any,
) -> None:  # fmt: skip
    from tests.pitweb.jobs.test_worker_integration import (
        real_broker_clean,
        stop,
        wait_for,
        worker,
        worker_env,
    )

    server, url = chat
    knows_first(server, point_set)
    agent, judge = endpoints(url, concurrency=1)
    answers = answered_by(point_set, agent)  # eager: answered in this process
    # a clean judging of the same answers first: how many judge calls a whole job pays
    clean: Counter[str] = Counter()
    lock = threading.Lock()
    server.judge_hook = lambda prompt: _paid(prompt, clean, lock)
    first = services.judge_job_request(user=None, answer_set=answers, endpoint=judge)
    first.refresh_from_db()
    assert first.state == "done"
    # now on a real worker: the judge answers a few calls, then holds the next unanswered
    paid: Counter[str] = Counter()
    hold, held = threading.Event(), threading.Event()

    def judged_until_held(prompt: str) -> None:
        if sum(paid.values()) >= 5 and not hold.is_set():
            held.set()
            hold.wait()  # never answered: the worker is killed while it waits
            return None
        _paid(prompt, paid, lock)
        return None

    server.judge_hook = judged_until_held
    celery_app.conf.task_always_eager = False
    real_broker_clean()
    env = worker_env(artifact_dir)  # the journal is in the database: no folder is shared
    log = tmp_path / "worker.log"
    process = worker(env, log, "judge-a")
    try:
        job = services.judge_job_request(user=None, answer_set=answers, endpoint=judge)
        wait_for(held.is_set, "the judge to hold a call", log)
        stop(process)  # killed mid-judging, five verdicts journalled
    finally:
        stop(process)
    hold.set()
    job.refresh_from_db()
    assert job.state == "running" and sum(paid.values()) == 5
    # the header and one line per paid call, each committed as its call finished
    assert JournalLine.objects.filter(job=job).count() == 1 + 5
    PointsJob.objects.filter(pk=job.pk).update(heartbeat_at=None)  # silent past the limit
    requeued = services.points_requeue_stale()
    assert requeued == [job.pk]
    server.judge_hook = lambda prompt: _paid(prompt, paid, lock)
    process = worker(env, tmp_path / "worker-b.log", "judge-b")
    try:
        wait_for(lambda: _state(job) == "done", "the replacement to finish", log)
    finally:
        stop(process)
    job.refresh_from_db()
    assert job.attempts == 2 and job.judged_set is not None
    # every call paid exactly as often as a clean job pays it: none twice
    assert paid == clean
    assert not JournalLine.objects.filter(job=job).exists()  # served its purpose
    assert job.judged_set.summary == first.judged_set.summary  # type: ignore[union-attr]


def _state(job: PointsJob) -> str:
    job.refresh_from_db()
    return job.state


# -- answer sets uploaded by submitters --------------------------------------------------


def _answer_file(body: dict[str, Any]) -> io.BytesIO:
    import json

    upload = io.BytesIO(json.dumps(body).encode())
    upload.name = "answers.json"
    return upload


def test_an_uploaded_answer_set_is_checked_stored_and_judged_by_the_site(
    point_set: PointSet, chat: tuple[Chat, str], submitter: User, settings: Any
) -> None:
    from tests.pitweb.conftest import token_client

    server, url = chat
    knows_first(server, point_set)
    agent, _ = endpoints(url)
    made = answered_by(point_set, agent)
    settings.PITWEB_POINTS_JUDGE = "judge"
    client = token_client(submitter)
    # a tampered one first: refused, naming why, nothing stored
    tampered = dict(made.body)
    tampered["answers"] = [{**a, "question_sha256": "0" * 64} for a in made.body["answers"]]
    response = client.post("/api/points/four/answer-sets/", {"answers": _answer_file(tampered)})
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_answer_set"
    assert AnswerSet.objects.count() == 1
    # one whose fields hold, but one of them not of its type: refused at the door, not by
    # the judge job that reads it later
    mistyped = dict(made.body)
    mistyped["answers"] = [{**a, "finish_reason": 5} for a in made.body["answers"]]
    response = client.post("/api/points/four/answer-sets/", {"answers": _answer_file(mistyped)})
    assert response.status_code == 400 and "finish_reason" in response.json()["error"]["message"]
    assert AnswerSet.objects.count() == 1
    # a faithful copy under another model's name is its own answer set, judged on arrival
    body = {**made.body, "experiment": {**made.body["experiment"], "agent": {"model": "mine"}}}
    response = client.post("/api/points/four/answer-sets/", {"answers": _answer_file(body)})
    assert response.status_code == 201, response.json()
    uploaded = AnswerSet.objects.get(pk=response.json()["answer_set"])
    assert uploaded.origin == "uploaded" and uploaded.submitter == submitter
    [job] = uploaded.jobs.all()
    job.refresh_from_db()
    assert job.kind == "judge" and job.state == "done" and job.judged_set is not None
    again = client.post("/api/points/four/answer-sets/", {"answers": _answer_file(body)})
    assert again.status_code == 200 and AnswerSet.objects.count() == 2


def test_a_revealed_set_ranks_its_pinned_usable_judged_sets_with_rank_ranges(
    staff: User, chat: tuple[Chat, str]
) -> None:
    import datetime as dt

    server, url = chat
    sealed = services.point_set_upload(
        user=staff, name="sealed-four", title="", archive=io.BytesIO(zipped(point_files(4))),
        state="sealed", reveal_on=dt.date.today(),
    )  # fmt: skip
    knows_first(server, sealed)
    agent, judge = endpoints(url)
    other = services.model_register(user=None, name="agent-b", base_url=url, model="agent-y")
    for endpoint in (agent, other):
        answers = answered_by(sealed, endpoint)
        services.judge_job_request(user=None, answer_set=answers, endpoint=judge)
    rows = Client().get("/points/sealed-four/?table=judged&format=json").json()["judged_sets"]
    assert [r["ranked"] for r in rows] == [False, False]  # sealed: nobody can check it yet
    services.point_set_reveal(point_set=sealed, user=staff)
    rows = Client().get("/points/sealed-four/?table=judged&format=json").json()["judged_sets"]
    assert all(r["ranked"] and r["judge_pinned"] for r in rows)
    # four points each: the intervals overlap, so neither is known to be first
    assert [r["rank"] for r in rows] == ["1-2", "1-2"]
    judged = Client().get(f"/points/sealed-four/judged/{rows[0]['judged_set']}/").content.decode()
    assert "Positive controls held on 4 of 4 points" in judged and "flip rate 0.00" in judged


def test_staff_register_models_on_their_page_and_nobody_else_can(
    staff: User, submitter: User
) -> None:
    form = {"name": "house-judge", "base_url": "https://api.example.org/v1",
            "model": "gpt-5.6-sol", "effort": "xhigh", "api_key_env": "OPENAI_API_KEY",
            "concurrency": "8", "rate_per_minute": "120", "timeout_seconds": "600"}  # fmt: skip
    outsider = Client()
    outsider.force_login(submitter)
    assert outsider.post("/points/models/", form).status_code == 403  # signed in, not staff
    assert ModelEndpoint.objects.count() == 0
    client = Client()
    client.force_login(staff)
    assert client.post("/points/models/", {**form, "concurrency": "lots"}).status_code == 400
    assert client.post("/points/models/", form).status_code == 302
    endpoint = ModelEndpoint.objects.get()
    assert (endpoint.concurrency, endpoint.rate_per_minute) == (8, 120) and endpoint.is_pinned_judge
    page = client.get("/points/models/").content.decode()
    assert "pinned judge" in page and "OPENAI_API_KEY" in page
