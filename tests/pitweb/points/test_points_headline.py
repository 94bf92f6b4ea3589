"""No headline from a judge that failed: a rubber-stamp judged set, made through the real
services and worker, shows no accuracy, interval, class distribution, radar trace or
pass@k on any page, export, chart or API answer, only the rule it broke and what its
controls gave. Beside that, what a result shows: pass@k where a set has several answers
per point, the range an accuracy would take over its harness errors, and each verdict's
judge model and time in the verdict exports."""

from __future__ import annotations

import csv as csv_module
import datetime as dt
import html
import io
import json
import re
import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.points.artifacts import answer_set
from harness.points.metrics import CLASSES, harness_error_range, pass_at_k, wilson
from harness.points.model import plain
from pitweb.points import services
from pitweb.points.engine import engine_points
from pitweb.points.models import PointSet
from tests.pitweb.conftest import token_client
from tests.support.chat_server import JUDGE_MODEL_RETURNED, Chat
from tests.support.points_site import (
    answered_by,
    endpoints,
    judged_by,
    knows_first,
)

pytestmark = pytest.mark.django_db(transaction=True)

# every key under which a figure of a judged set's verdicts could be stated
FIGURE_KEYS = (
    "pass", "fail", "accuracy", "accuracy_low", "accuracy_high", "accuracy_if_errors_fail",
    "accuracy_if_errors_pass", "pass_at_k", *CLASSES,
)  # fmt: skip


def _chart_figures(page: str) -> dict[str, Any]:
    """Every figure a page embeds for Plotly, by its script's id."""
    found = re.findall(
        r'<script id="(fig-[\w-]+)" type="application/json">(.*?)</script>', page, re.S
    )
    return {name: json.loads(text) for name, text in found}


def _figures_in(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in FIGURE_KEYS if k in row and row[k] is not None}


def _floats(value: Any, judged: int) -> list[float]:
    """Every fraction a JSON answer holds, however deep, but in another judged set's row."""
    if isinstance(value, dict):
        if value.get("judged_set", judged) != judged:
            return []
        return [x for v in value.values() for x in _floats(v, judged)]
    if isinstance(value, list):
        return [x for v in value for x in _floats(v, judged)]
    return [value] if isinstance(value, float) else []


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def test_a_rubber_stamp_judged_set_shows_no_accuracy_anywhere(
    point_set: PointSet, chat: tuple[Chat, str], submitter: User, settings: Any
) -> None:
    server, url = chat
    knows_first(server, point_set)
    agent, judge = endpoints(url)
    answers = answered_by(point_set, agent)
    server.judge_mode = "stamp"  # passes everything, its negative controls included
    stamped = judged_by(answers, judge, stride=1)
    assert stamped.status == "judge_unreliable"
    server.judge_mode = "good"  # a result on the same page, so its charts are drawn
    good = judged_by(answers, judge, stride=1)
    assert good.status == "usable"
    [rule] = stamped.broken_rules
    assert rule.startswith("negative controls failed on 4 of 4 point(s)")
    # what a rubber stamp's headline would read: 4 of 4, and its Wilson interval
    low, _ = wilson(4, 4)
    leaks = [_pct(1.0), _pct(low), "pass@1"]
    name, pk = point_set.name, stamped.pk
    settings.PITWEB_POINTS_JUDGE = "judge"
    upload = io.BytesIO(json.dumps(answers.body).encode())
    upload.name = "answers.json"
    api = token_client(submitter).post(f"/api/points/{name}/answer-sets/", {"answers": upload})
    assert api.status_code == 200, api.content  # the same answers: the same answer set
    job = stamped.jobs.get()
    answered = {
        "api answer-set upload": api.content.decode(),
        "job progress": Client().get(f"/points/jobs/{job.pk}.json").content.decode(),
    }
    client = Client()
    pages = {
        url: client.get(url).content.decode()
        for url in (
            "/points/", "/points/?format=csv", "/points/?format=json", f"/points/{name}/",
            f"/points/{name}/?table=judged&format=csv", f"/points/{name}/?table=judged&format=json",
            f"/points/{name}/?table=suites&format=csv", f"/points/{name}/?table=suites&format=json",
            f"/points/{name}/judged/{pk}/", f"/points/{name}/judged/{pk}/?format=csv",
            f"/points/{name}/judged/{pk}/?format=json",
            f"/points/{name}/judged/{pk}/?class=completely_correct&format=csv",
        )
    }  # fmt: skip
    for where, text in {**pages, **answered}.items():
        # the rule's own words say "(100.0%)" of the controls: the rule is not a figure
        scanned = html.unescape(text).replace(rule, "")
        for leak in leaks:
            assert leak not in scanned, (where, leak)
        if "json" in where or where.startswith(("api", "job")):
            numbers = _floats(json.loads(text), pk)
            assert not [x for x in numbers if x == 1.0 or abs(x - low) < 1e-6], where
    # the table, as JSON and CSV: the stamp's row has no figure, names its rule and controls
    rows = client.get(f"/points/{name}/?table=judged&format=json").json()["judged_sets"]
    row = next(r for r in rows if r["judged_set"] == pk)
    assert _figures_in(row) == {}
    assert row["figures_withheld_because"] == f"judge unreliable: {rule}"
    assert row["not_ranked_because"] == f"judge unreliable: {rule}"  # not "the set is public"
    assert (row["control_points"], row["positive_controls_held"]) == (4, 4)
    assert row["negative_controls_failed"] == 4
    assert _figures_in(next(r for r in rows if r["judged_set"] == good.pk))["accuracy"] == 0.25
    table = pages[f"/points/{name}/?table=judged&format=csv"].splitlines()
    header = table[0].split(",")
    [stamp_line] = [line for line in table[1:] if line.startswith(f"{pk},")]
    cells = dict(zip(header, next(csv_module.reader([stamp_line])), strict=True))
    assert all(cells[k] == "" for k in FIGURE_KEYS), cells
    assert cells["figures_withheld_because"] == f"judge unreliable: {rule}"
    # the per-suite accuracy has no row of it
    suites = client.get(f"/points/{name}/?table=suites&format=json").json()["suites"]
    assert suites and {s["judged_set"] for s in suites} == {good.pk}
    # the charts: the class bars and the suites draw the good set only (and no radar: a
    # radar of one trace overlays nothing)
    page = pages[f"/points/{name}/"]
    figures = _chart_figures(page)
    assert "fig-distribution" in figures and "fig-radar" not in figures
    label = f"judged set {pk})"
    for chart, figure in figures.items():
        # a long label is drawn over lines: read it as one
        drawn = json.dumps(figure, ensure_ascii=False).replace("<br>", " ")
        assert label not in drawn, chart  # no trace, bar or axis label of it
        assert f"judged set {good.pk})" in drawn, chart
    # the pages: the rule and the controls' figures in place of the headline
    judged_page = html.unescape(pages[f"/points/{name}/judged/{pk}/"])
    assert f"judge unreliable: {rule}" in judged_page
    assert "positive held on 4 of 4 point(s), negative failed on 4" in judged_page
    assert "accuracy" not in judged_page.split('id="headline"')[1].split("</p>")[0].lower()
    assert f"judge unreliable: {rule}" in html.unescape(page)


def test_pass_at_k_is_shown_for_a_set_with_several_answers_per_point(
    point_set: PointSet, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    truths = {p.question: p.ground_truth for p in engine_points(point_set)}
    first, second = [p.question for p in engine_points(point_set)][:2]
    asked: dict[str, int] = {}
    lock = threading.Lock()

    def agent(question: str, n: int) -> str:
        """The first point right every time, the second right once, the rest never."""
        with lock:
            asked[question] = asked.get(question, 0) + 1
            once = asked[question] == 1
        right = question == first or (question == second and once)
        return truths[question] if right else "It is 99."

    server.agent = agent
    endpoint, judge = endpoints(url)
    job = services.answer_job_request(user=None, point_set=point_set, endpoint=endpoint, samples=2)
    job.refresh_from_db()
    assert job.state == "done" and job.answer_set is not None, job.message
    judged = judged_by(job.answer_set, judge, stride=1)
    assert judged.status == "usable"
    correct = [2, 1, 0, 0]
    expected = {
        str(k): sum(pass_at_k(2, c, k) for c in correct) / len(correct) for k in (1, 2)
    }  # 0.375 and 0.5
    rows = Client().get("/points/four/?table=judged&format=json").json()["judged_sets"]
    assert rows[0]["pass_at_k"] == pytest.approx(expected)
    for where in ("/points/four/", f"/points/four/judged/{judged.pk}/"):
        page = Client().get(where).content.decode()
        assert f"pass@1 {_pct(expected['1'])}" in page, where
        assert f"pass@2 {_pct(expected['2'])}" in page, where
    csv = Client().get("/points/four/?table=judged&format=csv").content.decode()
    [line] = list(csv_module.DictReader(io.StringIO(csv)))
    assert json.loads(line["pass_at_k"]) == pytest.approx(expected)


def test_each_verdict_export_row_names_its_judge_model_and_time(
    point_set: PointSet, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    knows_first(server, point_set)
    agent, judge = endpoints(url)
    judged = judged_by(answered_by(point_set, agent), judge, stride=1)
    base = f"/points/four/judged/{judged.pk}/"
    rows = Client().get(base + "?format=json").json()["verdicts"]
    assert len(rows) == 4
    body = {(v["point_id"], v["sample"]): v for v in judged.body["verdicts"]}
    for row in rows:
        stored = body[(row["point_id"], row["sample"])]
        assert row["judge_model"] == "gpt-5.6-sol"
        assert row["judge_model_returned"] == JUDGE_MODEL_RETURNED
        assert row["judged_at"] == stored["judged_at"]
        assert dt.datetime.fromisoformat(row["judged_at"]).tzinfo is not None
    lines = list(
        csv_module.DictReader(io.StringIO(Client().get(base + "?format=csv").content.decode()))
    )
    assert len(lines) == 4
    for line in lines:
        assert line["judge_model"] == "gpt-5.6-sol"
        assert line["judge_model_returned"] == JUDGE_MODEL_RETURNED
        assert line["judged_at"] == body[(line["point_id"], int(line["sample"]))]["judged_at"]


def test_the_range_over_harness_errors_is_shown_beside_the_accuracy(
    point_set: PointSet, chat: tuple[Chat, str], submitter: User, settings: Any
) -> None:
    server, url = chat
    knows_first(server, point_set)
    agent, judge = endpoints(url)
    answered = answered_by(point_set, agent)
    clean = judged_by(answered, judge, stride=1)  # none of its answers missing
    made = answered.body
    # the same answers, uploaded with the second point's answer never given
    records = [
        {**a, "text": "", "status": "harness_error", "error": "agent call failed: HTTP 500"}
        if a["point_id"] == "p-1" else a
        for a in made["answers"]
    ]  # fmt: skip
    experiment = {**made["experiment"], "agent": {**made["experiment"]["agent"], "model": "mine"}}
    body = plain(answer_set(engine_points(point_set), records, experiment, made["capabilities"]))
    settings.PITWEB_POINTS_JUDGE = "judge"
    uploaded, created = services.answer_set_upload(
        user=submitter, point_set=point_set, upload=io.BytesIO(json.dumps(body).encode())
    )
    assert created
    judged = uploaded.judged.get()
    assert judged.status == "usable"
    passed, failed, errors = 1, 2, 1
    assert (judged.summary["pass"], judged.summary["fail"]) == (passed, failed)
    assert judged.summary["harness_error"] == errors
    low, high = harness_error_range(passed, failed, errors)  # 1/4 and 2/4
    rows = Client().get("/points/four/?table=judged&format=json").json()["judged_sets"]
    row = next(r for r in rows if r["judged_set"] == judged.pk)
    assert (row["accuracy_if_errors_fail"], row["accuracy_if_errors_pass"]) == (low, high)
    assert row["accuracy_if_errors_fail"] <= row["accuracy"] <= row["accuracy_if_errors_pass"]
    whole = next(r for r in rows if r["judged_set"] == clean.pk)
    assert whole["accuracy_if_errors_fail"] is None  # no harness error: no range to state
    range_words = f"{_pct(low)} to {_pct(high)}"
    assert range_words in Client().get("/points/four/").content.decode()
    assert range_words in Client().get(f"/points/four/judged/{judged.pk}/").content.decode()
