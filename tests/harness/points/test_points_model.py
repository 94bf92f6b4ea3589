"""Answer and judged sets and their types are one thing: every key the golden files hold
is a field, every field is in them, and a body the types refuse is not written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness.points import model
from harness.points.artifacts import PointsArtifactError, typed

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def _golden(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((GOLDEN / name).read_text("utf-8"))
    return body


def _timed(value: Any) -> Any:
    """A golden set with its placeholders for times set back to times."""
    if isinstance(value, dict):
        return {k: 0.25 if k == "latency_seconds" else _timed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_timed(v) for v in value]
    return "2026-12-01T00:00:00+00:00" if value == "<volatile>" else value


def test_the_golden_sets_hold_exactly_the_fields_of_their_types() -> None:
    answers, judged = _golden("answer-set.json"), _golden("judged-set.json")
    assert set(answers) == model.keys(model.AnswerSet)
    assert {k for a in answers["answers"] for k in a} == model.keys(model.Answer)
    assert set(answers["summary"]) == model.keys(model.AnswerSummary)
    assert set(judged) == model.keys(model.JudgedSet)
    assert {k for v in judged["verdicts"] for k in v} == model.keys(model.VerdictRecord)
    assert {k for p in judged["points"] for k in p} == model.keys(model.PointRecord)
    assert set(judged["controls"]) == model.keys(model.Controls)
    assert set(judged["controls"]["stability"]) == model.keys(model.Stability)
    assert set(judged["judge"]) == model.keys(model.Judge)


def test_the_golden_sets_decode_into_their_types_and_back() -> None:
    for name, kind in (("answer-set.json", model.AnswerSet), ("judged-set.json", model.JudgedSet)):
        body = _timed(_golden(name))
        record = msgspec.convert(body, kind, strict=True)
        assert model.plain(record) == body


@pytest.mark.parametrize(
    ("name", "kind", "path", "where"),
    [
        ("answer-set.json", model.AnswerSet, ("answers", 0, "extra"), "$.answers[0]"),
        ("answer-set.json", model.AnswerSet, ("answers", 1, "cost", "extra"), "$.answers[1].cost"),
        (
            "judged-set.json",
            model.JudgedSet,
            ("verdicts", 0, "judge", "extra"),
            "$.verdicts[0].judge",
        ),
        (
            "judged-set.json",
            model.JudgedSet,
            ("controls", "stability", "extra"),
            "$.controls.stability",
        ),
    ],
)
def test_a_body_with_an_unknown_field_is_not_written(
    name: str, kind: type[msgspec.Struct], path: tuple[Any, ...], where: str
) -> None:
    body = _timed(_golden(name))
    node = body
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = 1
    with pytest.raises(PointsArtifactError) as caught:
        typed(body, kind)
    assert f"unknown field `extra` - at `{where}`" in str(caught.value)


def test_a_body_with_a_wrong_type_is_not_written_and_the_field_is_named() -> None:
    body = _timed(_golden("judged-set.json"))
    body["verdicts"][3]["attempts"] = "one"
    with pytest.raises(PointsArtifactError, match=r"at `\$.verdicts\[3\].attempts`"):
        typed(body, model.JudgedSet)


def test_the_measured_fields_are_the_answer_less_its_binding() -> None:
    binding = {"point_id", "sample", "point_sha256", "question_sha256"}
    assert set(model.MEASURED) == model.keys(model.Answer) - binding


def test_pitfalls_token_keys_map_onto_the_answer_sets_tokens() -> None:
    from harness.points.baseline import SUMMARY_KEYS, TOKEN_KEYS

    assert list(TOKEN_KEYS) == list(model.names(model.PitfallUsage))
    tokens = {k for a in _golden("answer-set.json")["answers"] for k in a["tokens"]}
    assert tokens <= set(TOKEN_KEYS.values())
    assert {"agent_usage", "judge_usage"} <= SUMMARY_KEYS == model.keys(model.PitfallSummary)
