"""The API describes itself: every closed set of values it returns is a named enum in the
OpenAPI schema whose values are the model's or the harness's whole set (a value added
there without the schema fails here), each value described in the pages' words."""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

import pytest
from django.test import Client
from django.utils.text import capfirst

from harness.points.metrics import CLASSES, outcome
from harness.points.model import Reliability
from harness.receipt.memory import MEMORY_VERDICTS
from harness.receipt.model import CellStatus, Verdict
from pitweb.execution import enums as execution_enums
from pitweb.execution.models import ExecutionCell, ExecutionJob, ExecutionState
from pitweb.forward import enums as forward_enums
from pitweb.forward.models import ForwardRun, LogEntry
from pitweb.points import enums as points_enums
from pitweb.points.models import AnswerSet, JudgedSet, PointSet, PointSetState
from pitweb.runs import enums as run_enums
from pitweb.runs.models import (
    CutoffRelation,
    JobState,
    VerificationJob,
    VerificationLevel,
    Visibility,
)
from pitweb.runs.presentation import LEVEL_WORDS, MASK_WORDS
from pitweb.runs.presentation import words as said

# the harness's sets for judged points: the six classes; every outcome ``outcome`` gives
# (a class, or none for a harness error); the judge's reliability, and "imported" for
# another judge's verdicts, which no control of ours ran on
JUDGED_CLASSES = set(CLASSES)
OUTCOMES = {outcome(c) for c in (*CLASSES, None)}
RELIABILITY = {*get_args(get_type_hints(Reliability)["status"]), JudgedSet.Status.IMPORTED}

# (response component, field): (the enum's stable name, the whole set it must equal)
CLOSED: dict[tuple[str, str], tuple[str, set[str]]] = {
    ("RunOut", "verification_level"): ("VerificationLevelEnum", set(VerificationLevel.values)),
    ("RunDetailOut", "verification_level"): (
        "VerificationLevelEnum",
        set(VerificationLevel.values),
    ),
    ("RunOut", "status"): ("VerificationStateEnum", set(JobState.values)),
    ("RunOut", "mask_verdict"): ("MaskVerdictEnum", {*get_args(Verdict), "not_run"}),
    ("RunOut", "visibility"): ("VisibilityEnum", set(Visibility.values)),
    ("JobOut", "state"): ("VerificationStateEnum", set(JobState.values)),
    ("JobOut", "kind"): ("VerificationJobKindEnum", set(VerificationJob.Kind.values)),
    ("ExecutionOut", "state"): ("ExecutionStateEnum", set(ExecutionState.values)),
    ("ExecutionOut", "kind"): ("ExecutionKindEnum", set(ExecutionJob.Kind.values)),
    ("CellOut", "state"): ("ExecutionCellStateEnum", set(ExecutionCell.State.values)),
    ("CellOut", "status"): ("CellStatusEnum", set(get_args(CellStatus))),
    ("BoardRowOut", "verification"): ("VerificationStateEnum", set(JobState.values)),
    ("BoardRowOut", "verification_level"): (
        "VerificationLevelEnum",
        set(VerificationLevel.values),
    ),
    ("BoardRowOut", "mask_verdict"): ("MaskVerdictEnum", {*get_args(Verdict), "not_run"}),
    ("BoardRowOut", "memory_verdict"): ("MemoryVerdictEnum", set(MEMORY_VERDICTS)),
    ("BoardRowOut", "cutoff_relation"): (
        "CutoffRelationEnum",
        set(CutoffRelation.values) - {""},
    ),
    ("PointSetOut", "state"): ("PointSetStateEnum", set(PointSetState.values)),
    ("PointSetDetailOut", "state"): ("PointSetStateEnum", set(PointSetState.values)),
    ("JudgedRowOut", "status"): ("JudgeReliabilityEnum", RELIABILITY),
    ("JudgedRowOut", "origin"): ("JudgedSetOriginEnum", set(JudgedSet.Origin.values)),
    ("JudgedRowOut", "answers"): ("AnswerSetOriginEnum", set(AnswerSet.Origin.values)),
    ("JudgedSetOut", "status"): ("JudgeReliabilityEnum", RELIABILITY),
    ("ReliabilityOut", "status"): ("JudgeReliabilityEnum", RELIABILITY),
    ("ClassCountOut", "class"): ("JudgedClassEnum", JUDGED_CLASSES),
    ("VerdictOut", "class"): ("JudgedClassEnum", JUDGED_CLASSES),
    ("VerdictOut", "outcome"): ("VerdictOutcomeEnum", OUTCOMES),
    ("AnswerSetOut", "origin"): ("AnswerSetOriginEnum", set(AnswerSet.Origin.values)),
    ("AnswerSetOut", "timing"): ("AnswerSetTimingEnum", set(AnswerSet.Timing.values)),
    ("JudgedRowOut", "timing"): ("AnswerSetTimingEnum", set(AnswerSet.Timing.values)),
    ("PointSetOut", "kind"): ("PointSetKindEnum", set(PointSet.Kind.values)),
    ("CommitmentOut", "state"): ("CommitmentStateEnum", {"live", "withdrawn"}),
    ("ForwardRunOut", "kind"): ("ForwardRunKindEnum", set(ForwardRun.Kind.values)),
    ("ForwardRunOut", "status"): ("ForwardRunStatusEnum", set(ForwardRun.Status.values)),
    ("EntryOut", "kind"): ("LogEntryKindEnum", set(LogEntry.Kind.values)),
}
# a field of a response by one of these names holds a closed set wherever it appears
CLOSED_NAMES = {
    "state",
    "status",
    "kind",
    "verification",
    "verification_level",
    "mask_verdict",
    "visibility",
    "class",
    "outcome",
    "origin",
    "timing",
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    found: dict[str, Any] = Client().get("/api/schema/?format=json").json()
    return found


def enum_names(field: dict[str, Any]) -> list[str]:
    """The enum components a property refers to (a blank choice is its own BlankEnum)."""
    refs = [field.get("$ref")] + [o.get("$ref") for o in field.get("oneOf", [])]
    names = [r.rsplit("/", 1)[1] for r in refs if r]
    return [n for n in names if n not in ("BlankEnum", "NullEnum")]


@pytest.mark.parametrize(("component", "field"), sorted(CLOSED))
def test_each_closed_set_is_a_named_enum_of_the_whole_set(
    schema: dict[str, Any], component: str, field: str
) -> None:
    components = schema["components"]["schemas"]
    name, values = CLOSED[(component, field)]
    assert enum_names(components[component]["properties"][field]) == [name]
    assert set(components[name]["enum"]) == values


def test_every_closed_name_in_a_response_is_an_enum(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    loose = [
        f"{component}.{field}"
        for component, body in components.items()
        if not component.endswith("Request")
        for field, spec in body.get("properties", {}).items()
        if field in CLOSED_NAMES and not enum_names(spec)
    ]
    assert loose == []


def test_each_value_is_described_in_the_pages_words(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    for value, words in LEVEL_WORDS.items():
        assert f"* `{value}` - {words}" in components["VerificationLevelEnum"]["description"]
    for value, words in MASK_WORDS.items():
        assert f"* `{value}` - {words}" in components["MaskVerdictEnum"]["description"]
    choices = [
        run_enums.VERIFICATION_LEVEL, run_enums.RUN_STATE, run_enums.JOB_KIND,
        run_enums.VISIBILITY, run_enums.MASK_VERDICT, run_enums.MEMORY_VERDICT,
        run_enums.CUTOFF_RELATION,
        execution_enums.EXECUTION_STATE,
        execution_enums.EXECUTION_KIND, execution_enums.CELL_STATE, execution_enums.CELL_STATUS,
        points_enums.JUDGED_CLASS, points_enums.OUTCOME, points_enums.RELIABILITY,
        points_enums.POINT_SET_STATE, points_enums.JUDGED_ORIGIN, points_enums.ANSWER_ORIGIN,
        forward_enums.ENTRY_KIND, forward_enums.COMMITMENT_STATE, forward_enums.RUN_KIND,
        forward_enums.RUN_STATUS,
    ]  # fmt: skip
    described = " ".join(c.get("description", "") for c in components.values())
    for value, words in (pair for chosen in choices for pair in chosen):
        assert words.strip() and f"* `{value}` - {words}" in described, value


def test_a_client_can_learn_that_reexecuted_exists(schema: dict[str, Any]) -> None:
    level = schema["components"]["schemas"]["VerificationLevelEnum"]
    assert "reexecuted" in level["enum"] and "re-executed:" in level["description"]


def test_judged_points_say_each_value_as_the_points_pages_do(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    classes = components["JudgedClassEnum"]["description"]
    for c in CLASSES:  # the points pages head a class's column with ``c|words|capfirst``
        assert f"* `{c}` - {capfirst(said(c))}" in classes
    assert "* `numeric_factual_error` - Numeric factual error" in classes
    for name in ("VerdictOutcomeEnum", "JudgeReliabilityEnum"):  # ``value|words``
        described = components[name]["description"]
        for value in components[name]["enum"]:
            assert f"* `{value}` - {said(value)}: " in described
    assert "* `HARNESS_ERROR` - harness error: " in components["VerdictOutcomeEnum"]["description"]
