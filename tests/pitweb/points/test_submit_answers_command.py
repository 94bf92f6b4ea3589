"""``pit-harness submit answers`` against a live site: an answer set uploaded, judged by
the site's judge on arrival (the loopback chat server plays the models), its figures and
page told (exit 0); a judge that fails its controls is the site's problem (exit 3); a
tampered or misdirected answer set is refused in the API's words with nothing stored
(exit 2); answers to a sealed set are received and logged, nothing to wait for (exit 0);
a site that judges no upload on arrival gives no verdict to wait for (exit 3)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from harness.points.artifacts import as_stored
from harness.points.model import plain
from harness.points.questions import questions_points
from harness.points.run import answer_points
from pitweb.points import services
from pitweb.points.models import AnswerSet, JudgedSet, PointSet
from pitweb.points.selectors import questions_document
from tests.support.chat_server import Chat
from tests.support.points import answerer
from tests.support.points_site import answered_by, endpoints, knows_first, point_files, zipped
from tests.support.submit import Done, submit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def token(submitter: User) -> str:
    from pitweb.accounts.services import token_issue

    return token_issue(user=submitter)


@pytest.fixture()
def answers(point_set: PointSet, chat: tuple[Chat, str], tmp_path: Path) -> Path:
    """An answer set of the four points (the first answered right) as a submitter holds
    it: made by the site's agent model, under the submitter's own model name."""
    server, url = chat
    knows_first(server, point_set)
    agent, _ = endpoints(url)
    made = answered_by(point_set, agent).body
    body = {**made, "experiment": {**made["experiment"], "agent": {"model": "mine"}}}
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(body))
    return path


def send(answers: Path, url: str, token: str, home: Path, point_set: str = "four") -> Done:
    return submit(
        "answers", str(answers), "--point-set", point_set, home=home,
        PITWEB_URL=url, PITWEB_TOKEN=token,
    )  # fmt: skip


def test_an_answer_set_judged_on_arrival_exits_0_with_its_figures_and_page(
    live_server: Any, answers: Path, token: str, settings: Any, submitter: User, tmp_path: Path
) -> None:
    settings.PITWEB_POINTS_JUDGE = "judge"
    done = send(answers, live_server.url, token, tmp_path)
    assert done.code == 0, done
    uploaded = AnswerSet.objects.get(submitter=submitter)
    [judged] = JudgedSet.objects.filter(answer_set=uploaded)
    assert judged.status == "usable"
    lines = done.out.splitlines()
    assert lines[:2] == [
        f"uploaded answer set {uploaded.pk} to point set four",
        f"point set: {live_server.url}/points/four/",
    ]
    assert lines[-2:] == [
        "judged: accuracy 25.0% (95% interval 4.6% to 69.9%), 1 PASS, 3 FAIL, "
        "0 harness errors (outside the denominator)",
        f"page: {live_server.url}/points/four/judged/{judged.pk}/",
    ]
    assert done.err == ""


def test_a_judge_that_fails_its_controls_is_the_sites_problem_exit_3(
    live_server: Any,
    answers: Path,
    token: str,
    settings: Any,
    chat: tuple[Chat, str],
    tmp_path: Path,
) -> None:
    settings.PITWEB_POINTS_JUDGE = "judge"
    chat[0].judge_mode = "stamp"  # passes everything, its negative controls included
    done = send(answers, live_server.url, token, tmp_path)
    assert done.code == 3, done
    [judged] = JudgedSet.objects.filter(answer_set__submitter__isnull=False)
    assert judged.status == "judge_unreliable"
    verdict = done.out.splitlines()[-2]
    assert verdict.startswith("judge_unreliable: judge unreliable: negative controls failed")
    assert verdict.endswith("not a verdict on the answers)") and "PASS" not in verdict


def test_a_tampered_answer_set_is_refused_exit_2_in_words_and_nothing_is_stored(
    live_server: Any, answers: Path, token: str, settings: Any, tmp_path: Path
) -> None:
    settings.PITWEB_POINTS_JUDGE = "judge"
    body = json.loads(answers.read_text())
    body["answers"] = [{**a, "question_sha256": "0" * 64} for a in body["answers"]]
    answers.write_text(json.dumps(body))
    before = AnswerSet.objects.count()
    done = send(answers, live_server.url, token, tmp_path)
    assert done.code == 2, done
    assert done.err.startswith("pit-harness: refused by the site: answers refused: ")
    assert done.err.endswith("(HTTP 400, invalid_answer_set)\n") and "{" not in done.err
    assert AnswerSet.objects.count() == before and done.out == ""


def test_answers_for_a_sealed_set_are_received_and_logged_exit_0(
    live_server: Any, answers: Path, token: str, staff: User, tmp_path: Path,
    chat: tuple[Chat, str],
) -> None:  # fmt: skip
    import datetime as dt

    _, url = chat
    sealed = services.point_set_upload(
        user=staff, name="sealed", title="", archive=io.BytesIO(zipped(point_files(5))),
        state="sealed", reveal_on=dt.date(2030, 1, 1),
    )  # fmt: skip
    # another set's answers: refused, nothing stored
    done = send(answers, live_server.url, token, tmp_path, point_set="sealed")
    assert done.code == 2, done
    assert "(HTTP 400, incomplete_cohort)" in done.err and not sealed.answer_sets.exists()
    # answers made from its published Questions: received, and the log entry told
    asked = questions_points(json.loads(json.dumps(questions_document(sealed))))
    made = tmp_path / "sealed-answers.json"
    made.write_text(json.dumps(as_stored(plain(answer_points(answerer(url), asked)))))
    done = send(made, live_server.url, token, tmp_path, point_set="sealed")
    assert done.code == 0, done
    assert "received, sealed until 2030-01-01" in done.out
    assert "commitment log entry 1 sha256:" in done.out and "judged" not in done.out
    assert not JudgedSet.objects.exists()


def test_an_unknown_point_set_is_refused_exit_2(
    live_server: Any, answers: Path, token: str, tmp_path: Path
) -> None:
    done = send(answers, live_server.url, token, tmp_path, point_set="no-such-set")
    assert done.code == 2, done
    assert "(HTTP 404, not_found)" in done.err


def test_a_site_that_judges_no_upload_on_arrival_gives_no_verdict_exit_3(
    live_server: Any, answers: Path, token: str, settings: Any, tmp_path: Path
) -> None:
    settings.PITWEB_POINTS_JUDGE = ""
    done = send(answers, live_server.url, token, tmp_path)
    assert done.code == 3, done
    assert done.out.splitlines()[-1].startswith("not judged: this site judges uploaded answer")
    assert AnswerSet.objects.filter(origin="uploaded").count() == 1  # stored all the same
