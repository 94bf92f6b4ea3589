"""The points read API: point sets and judged sets answered exactly as their pages'
JSON shows them (the same selectors), a sealed set's hidden sections never in any
answer, a fixed number of queries however many points or verdicts, and hostile paths
answered 400 or 404 in the site's error envelope, never 500."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from harness.points.metrics import CLASSES
from pitweb.points import services
from pitweb.points.models import AnswerSet, JudgedSet, Point, PointSet, Verdict
from tests.support.chat_server import Chat
from tests.support.points_site import (
    SECRET_SOURCE,
    SECRET_TRUTH,
    answered_by,
    endpoints,
    judged_by,
    knows_first,
    point_files,
    zipped,
)

pytestmark = pytest.mark.django_db


def _set(staff: User, name: str, count: int, state: str = "public") -> PointSet:
    return services.point_set_upload(
        user=staff, name=name, title="", archive=io.BytesIO(zipped(point_files(count))),
        state=state, reveal_on=dt.date(2030, 1, 1) if state == "sealed" else None,
    )  # fmt: skip


def _judged_by_hand(point_set: PointSet, *, quote_truth: bool = False) -> JudgedSet:
    """A judged set written directly: every point completely correct, its reason (and
    answer) quoting the Ground Truth where asked."""
    answers = AnswerSet.objects.create(
        point_set=point_set, sha256=f"sha256:{AnswerSet.objects.count():064d}", model="m",
        origin="uploaded", body={},
    )  # fmt: skip
    count = point_set.points.count()
    judged = JudgedSet.objects.create(
        answer_set=answers, origin="site", status="usable", judge_model="j",
        summary={"class_counts": {"completely_correct": count}, "pass": count, "fail": 0,
                 "harness_error": 0, "accuracy": 1.0, "accuracy_interval_95": [0.4, 1.0]},
    )  # fmt: skip
    for p in point_set.points.all():
        said = p.ground_truth if quote_truth else "right"
        Verdict.objects.create(
            judged_set=judged, point=p, judged_class="completely_correct", outcome="PASS",
            decisive_reason=f"matches: {said}", answer=said,
        )  # fmt: skip
    return judged


def _as_page_row(api_row: dict[str, Any]) -> dict[str, Any]:
    """An API judged row in the page's columns: its distribution as one column a class."""
    row = dict(api_row)
    distribution = row.pop("distribution")
    counts = {d["class"]: d["count"] for d in distribution} if distribution else {}
    return row | {c: counts.get(c) for c in CLASSES}


# -- answers equal the pages' ------------------------------------------------------------


def test_the_point_sets_list_equals_the_pages_json(staff: User) -> None:
    _set(staff, "alpha", 2)
    _set(staff, "beta", 3, state="sealed")
    client = Client()
    page = client.get("/points/?format=json").json()["point_sets"]
    assert client.get("/api/points/").json() == page
    assert [s["state"] for s in page] == ["public", "sealed"]


def test_a_point_set_answers_its_pages_points_and_judged_rows(point_set: PointSet) -> None:
    _judged_by_hand(point_set)
    client = Client()
    answer = client.get(f"/api/points/{point_set.name}/").json()
    questions = client.get(f"/points/{point_set.name}/?table=questions&format=json").json()
    assert answer["points"] == questions["points"] and len(answer["points"]) == 4
    assert answer["points"][0]["ground_truth"].startswith(SECRET_TRUTH)  # public: shown
    judged = client.get(f"/points/{point_set.name}/?table=judged&format=json").json()
    assert [_as_page_row(r) for r in answer["judged_sets"]] == judged["judged_sets"]
    assert answer["state_words"] == point_set.state_words and answer["point_count"] == 4


@pytest.mark.django_db(transaction=True)
def test_judged_sets_answer_their_reliability_distribution_and_verdicts_as_pages_do(
    point_set: PointSet, chat: tuple[Chat, str]
) -> None:
    server, url = chat
    knows_first(server, point_set)
    agent, judge = endpoints(url)
    answers = answered_by(point_set, agent)
    server.judge_mode = "stamp"  # passes everything, its negative controls included
    stamped = judged_by(answers, judge, stride=1)
    server.judge_mode = "good"
    good = judged_by(answers, judge, stride=1)
    client = Client()
    name = point_set.name
    rows = client.get(f"/points/{name}/?table=judged&format=json").json()["judged_sets"]
    for judged in (stamped, good):
        answer = client.get(f"/api/points/{name}/judged/{judged.pk}/").json()
        [row] = [r for r in rows if r["judged_set"] == judged.pk]
        summary = {k: answer[k] for k in (*row, "distribution") if k not in CLASSES}
        assert _as_page_row(summary) == row
        page = client.get(f"/points/{name}/judged/{judged.pk}/?format=json").json()
        assert answer["verdicts"] == page["verdicts"]
        assert answer["reliability"]["status"] == judged.status
        assert answer["reliability"]["broken"] == judged.broken_rules
    bad = client.get(f"/api/points/{name}/judged/{stamped.pk}/").json()
    assert bad["status"] == "judge_unreliable" and bad["figures_withheld_because"]
    assert bad["figures_withheld_because"].startswith("judge unreliable: negative controls")
    assert (bad["accuracy"], bad["distribution"], bad["ranked"]) == (None, None, False)
    fine = client.get(f"/api/points/{name}/judged/{good.pk}/").json()
    assert fine["status"] == "usable" and fine["reliability"]["broken"] == []
    assert fine["accuracy_low"] <= fine["accuracy"] <= fine["accuracy_high"]
    assert [d["class"] for d in fine["distribution"]] == list(CLASSES)
    assert sum(d["count"] for d in fine["distribution"]) == fine["pass"] + fine["fail"]
    outcomes = {(v["class"], v["outcome"]) for v in fine["verdicts"]}
    assert ("completely_correct", "PASS") in outcomes and all(
        o == "FAIL" for c, o in outcomes if c != "completely_correct"
    )


@pytest.mark.parametrize(
    "query", ["class=completely_correct", "class=harness_error", "suite=suite-1", "suite=nope"]
)
def test_the_verdicts_filter_as_the_pages_do(point_set: PointSet, query: str) -> None:
    judged = _judged_by_hand(point_set)
    client = Client()
    base = f"/points/{point_set.name}/judged/{judged.pk}/"
    page = client.get(f"{base}?{query}&format=json").json()["verdicts"]
    answer = client.get(f"/api{base}?{query}").json()["verdicts"]
    assert answer == page
    assert len(answer) == {"class=completely_correct": 4, "suite=suite-1": 2}.get(query, 0)


def test_an_unknown_class_is_refused(point_set: PointSet) -> None:
    judged = _judged_by_hand(point_set)
    response = Client().get(f"/api/points/{point_set.name}/judged/{judged.pk}/?class=PASS")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_imported_verdicts_have_no_reliability_and_say_so(point_set: PointSet) -> None:
    judged = _judged_by_hand(point_set)
    JudgedSet.objects.filter(pk=judged.pk).update(origin="imported", status="imported")
    answer = Client().get(f"/api/points/{point_set.name}/judged/{judged.pk}/").json()
    assert (answer["reliability"], answer["status"], answer["origin"]) == (
        None,
        "imported",
        "imported",
    )


# -- a sealed set --------------------------------------------------------------------------


def test_a_sealed_sets_ground_truth_never_appears_in_any_api_answer(staff: User) -> None:
    sealed = _set(staff, "sealed-one", 3, state="sealed")
    judged = _judged_by_hand(sealed, quote_truth=True)
    secrets = [sealed.suite_sha256, sealed.salt, SECRET_TRUTH, SECRET_SOURCE]
    for p in Point.objects.filter(point_set=sealed):
        secrets += [p.ground_truth, p.provenance, p.point_sha256, p.ground_truth_sha256]
    visitor, staff_client = Client(), Client()
    staff_client.force_login(staff)
    urls = [
        "/api/points/",
        "/api/points/sealed-one/",
        f"/api/points/sealed-one/judged/{judged.pk}/",
        f"/api/points/sealed-one/judged/{judged.pk}/?format=json",
        "/api/schema/?format=json",
    ]
    for client in (visitor, staff_client):
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            text = response.content.decode()
            for secret in secrets:
                assert secret not in text, f"{url} shows {secret[:40]!r}"
    answer = visitor.get(f"/api/points/sealed-one/judged/{judged.pk}/").json()
    assert {(v["answer"], v["decisive_reason"]) for v in answer["verdicts"]} == {(None, None)}
    points = visitor.get("/api/points/sealed-one/").json()["points"]
    assert {p["ground_truth"] for p in points} == {None}
    assert sorted(p["question"] for p in points) == [f"What is figure {n}?" for n in range(3)]


# -- queries -------------------------------------------------------------------------------


def _queries(url: str) -> int:
    client = Client()
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_each_read_costs_the_same_queries_however_many_points_and_verdicts(
    staff: User,
) -> None:
    small, large = _set(staff, "small", 2), _set(staff, "large", 9)
    few, many = _judged_by_hand(small), _judged_by_hand(large)
    _judged_by_hand(large)  # a second judged set on the larger one
    assert _queries("/api/points/") == _queries("/api/points/")  # warm
    one = _queries("/api/points/")
    _set(staff, "more", 1)
    assert _queries("/api/points/") == one
    assert _queries("/api/points/small/") == _queries("/api/points/large/")
    assert _queries(f"/api/points/small/judged/{few.pk}/") == _queries(
        f"/api/points/large/judged/{many.pk}/"
    )


# -- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/api/points/nope/", 404, "not_found"),
        ("/api/points/%00/", 400, "unreadable_input"),
        ("/api/points/four%00/judged/1/", 400, "unreadable_input"),
        ("/api/points/" + "a" * 5000 + "/", 404, "not_found"),
        ("/api/points/four%27%20OR%201=1--/", 404, "not_found"),
        ("/api/points/..%2F..%2Fetc/", 404, "not_found"),
        ("/api/points/four/judged/x/", 400, "invalid_input"),
        ("/api/points/four/judged/-1/", 400, "invalid_input"),
        ("/api/points/four/judged/%D9%A3/", 400, "invalid_input"),  # an Arabic-Indic three
        ("/api/points/four/judged/99999999999999999999999999/", 400, "invalid_input"),
        ("/api/points/four/judged/999999/", 404, "not_found"),
        ("/api/points/nope/judged/1/", 404, "not_found"),
    ],
)
def test_a_hostile_path_is_refused_in_the_error_envelope(
    point_set: PointSet, path: str, status: int, code: str
) -> None:
    response = Client().get(path)
    assert response.status_code == status, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == code and error["message"]


def test_a_judged_set_is_not_read_through_another_sets_name(
    point_set: PointSet, staff: User
) -> None:
    other = _judged_by_hand(_set(staff, "other", 2, state="sealed"), quote_truth=True)
    response = Client().get(f"/api/points/{point_set.name}/judged/{other.pk}/")
    assert response.status_code == 404 and SECRET_TRUTH not in response.content.decode()


def test_the_reads_take_no_write(point_set: PointSet) -> None:
    for method in ("post", "put", "delete"):
        response = getattr(Client(), method)(f"/api/points/{point_set.name}/")
        assert response.status_code == 405
        assert response.json()["error"]["code"] == "method_not_allowed"
    assert PointSet.objects.filter(name=point_set.name).exists()
