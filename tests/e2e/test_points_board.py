"""The points board in a real browser: two submitters' answers committed to a sealed set
before its reveal, judged after it by the pinned judge on the real worker, ranked; a late
answer set listed apart; the class bars with their intervals and the radar overlay drawn,
on a desktop and on a phone."""

from __future__ import annotations

import datetime as dt
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from harness.points.artifacts import as_stored
from harness.points.model import plain
from harness.points.questions import questions_points
from harness.points.run import answer_points
from pitweb.points import services
from pitweb.points.engine import engine_points
from pitweb.points.models import PointSet, PointsJob
from pitweb.points.selectors import questions_document
from tests.e2e.test_site import PHONE, charts_drawn
from tests.support.chat_server import serving
from tests.support.points import answerer
from tests.support.points_site import endpoints, point_files, zipped

pytestmark = pytest.mark.django_db(transaction=True)


def _judged(timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while PointsJob.objects.exclude(state__in=PointsJob.FINAL).exists():
        assert time.monotonic() < deadline, "the judge jobs did not finish"
        time.sleep(0.2)
    assert not PointsJob.objects.exclude(state=PointsJob.State.DONE).exists()


def _upload(user: User, cohort: PointSet, body: dict[str, Any]) -> None:
    services.answer_set_upload(
        user=user, point_set=cohort, upload=io.BytesIO(json.dumps(body).encode())
    )


def test_the_points_board_ranks_the_answers_committed_before_the_reveal(
    live_server: Any, page: Any, staff: User, submitter: User, other: User, screenshots: Path
) -> None:
    with serving() as (server, url):
        _, judge = endpoints(url)
        cohort = services.point_set_upload(
            user=staff, name="cohort", title="", archive=io.BytesIO(zipped(point_files(6))),
            state="sealed", reveal_on=dt.date.today(),
        )  # fmt: skip
        truths = {p.question: p.ground_truth for p in engine_points(cohort)}
        asked = questions_points(json.loads(json.dumps(questions_document(cohort))))
        for user, right in ((submitter, 5), (other, 2)):
            known = set(list(truths)[:right])
            server.agent = lambda q, n, k=known: truths[q] if q in k else "It is 99."
            body = as_stored(plain(answer_points(answerer(url), asked)))
            body["experiment"]["agent"]["model"] = f"{user.username}-model"
            _upload(user, cohort, body)
        services.point_set_reveal(point_set=cohort, user=staff, judge=judge)
        _judged()
        late = as_stored(plain(answer_points(answerer(url), asked)))
        late["experiment"]["agent"]["model"] = "came-late"
        _upload(staff, cohort, late)
        services.judge_job_request(user=staff, answer_set=cohort.answer_sets.get(
            model="came-late"), endpoint=judge)  # fmt: skip
        _judged()
    page.goto(live_server.url + "/points/board/")
    table = page.locator("#points-board").inner_text()
    assert "alice-model" in table and "bob-model" in table
    apart = page.locator("#points-apart").inner_text()
    assert "came-late" in apart and "after reveal" in apart
    assert charts_drawn(page) == 2  # the class bars with intervals, the radar overlay
    bars = page.locator("[data-figure='fig-shares'] .trace.bars")
    assert bars.count() == 2 and page.locator("[data-figure='fig-shares'] .errorbar").count() > 0
    page.screenshot(path=str(screenshots / "points-board.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.reload()
    assert charts_drawn(page) == 2
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.screenshot(path=str(screenshots / "points-board-phone.png"), full_page=True)
