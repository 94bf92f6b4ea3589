"""Answer sets, judged sets and their verdicts as types: every field each one holds.

Each is a closed ``msgspec.Struct`` (an unknown field is refused when a body is decoded
into it). The writers in ``harness.points.artifacts`` build these and write their plain
form (:func:`plain`), whose canonical JSON is the file's body; ``harness.points.verify``
checks a body's keys against the fields declared here, so the writer and the checker
cannot drift apart. The experiment, the capabilities and the summary's figures stay open
objects: each is checked, field by field, by the verifier's own rules.

A measured figure is a ``Number``: a whole number stays one, so a record's plain form is,
byte for byte, the body it was made from (a float field would write ``12`` as ``12.0``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import field


class Record(msgspec.Struct, forbid_unknown_fields=True):
    """A closed part of an answer or judged set."""


Number = float | int


# -- answer sets ---------------------------------------------------------------------------


class Cost(Record, forbid_unknown_fields=True):
    usd: Number | None
    source: str


class Answer(Record, forbid_unknown_fields=True):
    """One answer to one point (``sample`` 0 when each point is answered once), bound to
    the point's hashes, with what was measured of it."""

    point_id: str
    sample: int
    point_sha256: str
    question_sha256: str
    status: str
    text: str
    finish_reason: str | None
    model_returned: str | None
    attempts: int | None
    latency_seconds: Number | None
    answered_at: str | None
    tokens: dict[str, int]
    cost: Cost
    tool_counts: dict[str, int]
    error: str | None


# what each answer measured (the rest binds it to its point)
MEASURED = tuple(
    f.name
    for f in msgspec.structs.fields(Answer)
    if f.name not in ("point_id", "sample", "point_sha256", "question_sha256")
)


class AnswerSummary(Record, forbid_unknown_fields=True):
    answers: int
    completed: int
    harness_error: int
    tokens: dict[str, int]
    cost_usd: Number | None
    tool_calls: int


class AnswerSet(Record, forbid_unknown_fields=True):
    artifact_type: Literal["pit_answer_set"]
    schema_version: int
    status: Literal["complete", "incomplete"]
    experiment: dict[str, Any]
    point_count: int
    samples_per_point: int
    point_ids: list[str]
    point_suite_sha256: str
    answers: list[Answer]
    summary: AnswerSummary
    capabilities: dict[str, Any]
    capability_line: str


# -- judged sets ---------------------------------------------------------------------------


class VerdictJudge(Record, forbid_unknown_fields=True):
    model_configured: str
    model_returned: str | None
    effort: str


class VerdictRecord(Record, forbid_unknown_fields=True):
    """The judge's verdict on one answer as a judged set records it (made from the
    judge's ``harness.points.judge.JudgeReply``): its class (None for a harness error)
    and decisive reason, the outcome, who judged and when, and the raw reply."""

    point_id: str
    sample: int
    judged_class: str | None = field(name="class")
    decisive_reason: str
    outcome: str
    judge: VerdictJudge
    attempts: int
    latency_seconds: Number | None
    judged_at: str
    raw: str
    error: str


class Judge(Record, forbid_unknown_fields=True):
    """The set's one judge, and every model its provider said it ran."""

    model: str
    effort: str
    models_returned: list[str]


class ControlCheck(Record, forbid_unknown_fields=True):
    judged_class: str | None = field(name="class")
    raw: str
    error: str
    passed: bool


class NegativeControl(Record, forbid_unknown_fields=True):
    point_id: str
    checks: dict[str, ControlCheck]
    flagged: bool


class Stability(Record, forbid_unknown_fields=True):
    items: int
    repeats: int
    stride: int
    flip_rate: Number | None
    raw_agreement: Number | None
    fleiss_kappa: Number | None
    ratings: dict[str, list[str]]
    items_with_harness_errors: dict[str, list[str]]
    replies: dict[str, list[str]]


class Controls(Record, forbid_unknown_fields=True):
    positive: dict[str, dict[str, Any]]
    negative: list[NegativeControl]
    stability: Stability


class Rules(Record, forbid_unknown_fields=True):
    """The reliability gates a judge's controls are held to (``harness.points.gates``)."""

    negative_control_failure_share_max: Number
    flip_rate_max: Number
    fleiss_kappa_min: Number


class ReliabilityFigures(Record, forbid_unknown_fields=True):
    points: int
    positive_controls_held: int
    negative_controls_failed: int
    stability_items: int
    flip_rate: Number | None
    fleiss_kappa: Number | None
    fleiss_kappa_defined: bool


class Reliability(Record, forbid_unknown_fields=True):
    """What the controls make of the set: ``usable``, or ``judge_unreliable`` with each
    rule it broke, worded."""

    status: Literal["usable", "judge_unreliable"]
    rules: Rules
    figures: ReliabilityFigures
    broken: list[str]


class PointRecord(Record, forbid_unknown_fields=True):
    """Per point: who answered and judged it, when, its counts and pass@k."""

    point_id: str
    agent_model: str | None
    judge_model: str
    date: str
    n_answers: int
    n_scored: int
    n_pass: int
    n_harness_error: int
    passk: dict[str, Number]
    capabilities: str


class JudgedSet(Record, forbid_unknown_fields=True):
    artifact_type: Literal["pit_judged_set"]
    schema_version: int
    answer_set_sha256: str
    experiment: dict[str, Any]
    judge: Judge
    controls: Controls
    reliability: Reliability
    verdicts: list[VerdictRecord]
    points: list[PointRecord]
    summary: dict[str, Any]
    capabilities: dict[str, Any]
    capability_line: str


# -- PITFALL's judged point set, as imported -------------------------------------------------


class PitfallUsage(Record, forbid_unknown_fields=True):
    """PITFALL's token figures, one side's (the agent's or the judge's)."""

    input_tokens: int
    cached_input_tokens: int
    cache_write_input_tokens: int
    output_tokens: int
    reasoning_output_tokens: int


class PitfallSummary(Record, forbid_unknown_fields=True):
    """The summary PITFALL's verify requires of its artifact."""

    completed: int
    failed: int
    class_counts: dict[str, int]
    agent_usage: PitfallUsage
    judge_usage: PitfallUsage
    web_search_calls: int


def keys(kind: type[msgspec.Struct]) -> frozenset[str]:
    """The keys a body of ``kind`` holds: its fields, by the names they are written as."""
    return frozenset(f.encode_name for f in msgspec.structs.fields(kind))


def names(kind: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of ``kind`` in the order they are declared."""
    return tuple(f.encode_name for f in msgspec.structs.fields(kind))


def plain(record: msgspec.Struct) -> dict[str, Any]:
    """A record as the plain dict its file's canonical body is written from."""
    out: dict[str, Any] = msgspec.to_builtins(record)
    return out
