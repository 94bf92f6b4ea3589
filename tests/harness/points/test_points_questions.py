"""Answering a sealed set before its reveal: its published Questions, an answer set bound
by them alone, checked once the files are revealed without reading a hidden section."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from harness.points import Point, load_points
from harness.points.artifacts import (
    PointsArtifactError,
    answer_set,
    as_stored,
    read_artifact,
    typed,
)
from harness.points.markdown import PointError
from harness.points.model import AnswerSet, plain
from harness.points.questions import load_questions, questions_document, questions_points
from harness.points.run import answer_points, judge_answer_set
from harness.points.seal import commitment, new_salt, question_digest
from harness.points.verify import verify_answers, verify_judged
from tests.support.chat_server import Chat
from tests.support.data import shared_path
from tests.support.points import answerer, judge, knows
from tests.support.points import points_cli as _cli


@pytest.fixture(scope="module")
def points() -> list[Point]:
    return load_points(shared_path("data", "pitfall", "points"))[:4]


def _document(points: list[Point]) -> dict[str, Any]:
    return questions_document(
        point_set="cohort-1", reveal_on="2027-01-04",
        commitment=commitment(new_salt(), points), points=points,
    )  # fmt: skip


def test_the_document_holds_the_questions_and_nothing_hidden(points: list[Point]) -> None:
    document = _document(points)
    text = json.dumps(document)
    for point in points:
        assert point.ground_truth not in text and point.provenance not in text
        assert point.point_sha256 not in text
    read = questions_points(document)
    assert [p.id for p in read] == sorted(p.id for p in points)
    assert all(p.text == p.ground_truth == p.provenance == "" for p in read)
    assert question_digest(read) == question_digest(points) == document["question_digest"]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d["points"][0].update(question=d["points"][0]["question"] + " "),
        lambda d: d.update(question_digest="sha256:" + "0" * 64),
        lambda d: d["points"].pop(),
        lambda d: d["points"].reverse(),
        lambda d: d["points"][0].update(ground_truth="a hidden section smuggled in"),
        lambda d: d.update(artifact_type="pit_answer_set"),
        lambda d: d.update(extra=1),
    ],
)
def test_a_document_that_does_not_hold_is_refused(points: list[Point], spoil: Any) -> None:
    document = _document(points)
    spoil(document)
    with pytest.raises(PointError):
        questions_points(document)


def test_answers_bound_by_questions_verify_against_the_revealed_files(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    state.agent = knows(points, lambda i, n: i % 2 == 0)
    asked = questions_points(_document(points))
    answers = as_stored(plain(answer_points(answerer(url), asked)))
    assert answers["point_suite_sha256"] == question_digest(points)
    assert {a["point_sha256"] for a in answers["answers"]} == {""}
    # the revealed files check it by its Questions, and the judge judges it as any other
    assert [p.id for p in verify_answers(answers, points)] == sorted(p.id for p in points)
    judged = as_stored(
        plain(judge_answer_set(judge(url), typed(answers, AnswerSet), points, stride=1))
    )
    assert verify_judged(judged, answers, points)["pass"] == 2
    # a Question changed after the answers were made: refused
    changed = [dataclasses.replace(points[0], question=points[0].question + " (edited)")]
    with pytest.raises(PointsArtifactError, match="point_suite_sha256"):
        verify_answers(answers, changed + points[1:])
    # an answer bound by Questions that also claims a file hash: refused
    forged = copy.deepcopy(answers)
    forged["answers"][0]["point_sha256"] = points[0].point_sha256
    with pytest.raises(PointsArtifactError, match="bound by Questions states a point_sha256"):
        verify_answers(forged, points)


def test_whole_files_and_questions_alone_do_not_mix(points: list[Point]) -> None:
    asked = questions_points(_document(points))
    records = [{"point_id": p.id, "text": "x"} for p in points]
    with pytest.raises(PointsArtifactError, match="some points are whole files"):
        answer_set([*asked[:2], *points[2:]], records, {})


def test_answer_from_the_command_line_with_the_published_questions(
    server: tuple[Chat, str], points: list[Point], tmp_path: Path
) -> None:
    state, url = server
    state.agent = knows(points, lambda i, n: True)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(_document(points)), encoding="utf-8")
    out = tmp_path / "answers.json"
    done = _cli("answer", "--questions", str(questions), "--out", str(out),
                "--base-url", url, "--model", "m")  # fmt: skip
    assert done.returncode == 0, done.stderr
    body = read_artifact(out)
    assert body["point_suite_sha256"] == question_digest(points)
    assert len(load_questions(questions)) == len(points)
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    done = _cli("answer", "--questions", str(tmp_path / "broken.json"), "--out",
                str(tmp_path / "x.json"), "--base-url", url, "--model", "m")  # fmt: skip
    assert done.returncode != 0 and "not a readable JSON document" in done.stderr
    assert not (tmp_path / "x.json").exists()
