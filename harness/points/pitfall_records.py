"""PITFALL's sealed-suite and live-shadow artifacts as types: every field its writers put
in each one (PITFALL 0.17.0, ``sealed_suite.py`` and ``live_shadow.py``).

Six artifacts, all ``schema_version`` 1:

- ``pitfall_sealed_suite_plan``: the private plan (``suite preregister``): the policy and
  every case's slot, family, outcome-free scenario and its digest;
- ``pitfall_sealed_suite_plan_commitment``: the public, opaque commitment to that plan:
  counts, dates and digests, no scenario;
- ``pitfall_live_shadow_seal``: one scenario's attempts (model x repeat), sealed on its
  as-of date (``shadow run``);
- ``pitfall_sealed_suite``: the finalized index binding one seal per slot
  (``suite finalize``), ``outcome_status`` ``unresolved``;
- ``pitfall_live_shadow_label``: a matured outcome, written by hand, with no commitment of
  its own;
- ``pitfall_live_shadow_resolution``: a seal's attempts scored against a label
  (``shadow resolve``), binding the seal by its digest and holding the label.

The records PITFALL's tools write are closed: a field its writer never writes is refused,
naming it (a reader that skipped it would show a cohort without what it says). What
people author (a scenario, a label, a submission, an event trace) stays an open object,
checked by the rules PITFALL applies to it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

PLAN = "pitfall_sealed_suite_plan"
PLAN_COMMITMENT = "pitfall_sealed_suite_plan_commitment"
SUITE = "pitfall_sealed_suite"
SEAL = "pitfall_live_shadow_seal"
LABEL = "pitfall_live_shadow_label"
RESOLUTION = "pitfall_live_shadow_resolution"
ARTIFACT_TYPES = (PLAN, PLAN_COMMITMENT, SUITE, SEAL, LABEL, RESOLUTION)
LEGACY_PREFIX = "finagentbench_"


class Rule(ValueError):
    """A rule an artifact breaks, said without naming the artifact (its reader does)."""


class PitfallArtifactError(ValueError):
    """A PITFALL artifact, or artifacts read together, that break a rule: the message
    names the artifact (its file, or two of them), its type and the rule."""

    def __init__(self, where: str, artifact_type: str, rule: str) -> None:
        super().__init__(f"{where}: {artifact_type}: {rule}")
        self.where = where
        self.artifact_type = artifact_type
        self.rule = rule


class Closed(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A part of an artifact PITFALL's tools write: these fields, no other."""


class Commitment(Closed, frozen=True):
    algorithm: str
    canonicalization: str
    payload_sha256: str


class Policy(Closed, frozen=True):
    required_models: list[str]
    reasoning_effort: str
    repeats: int
    required_web_search_calls: int
    minimum_case_count: int
    minimum_family_count: int
    minimum_cases_per_family: int
    primary_metric: str


class PlanCase(Closed, frozen=True):
    slot_id: str
    family: str
    scenario_source: dict[str, Any]
    scenario_sha256: str


class SuitePlan(Closed, frozen=True):
    schema_version: Literal[1]
    artifact_type: Literal["pitfall_sealed_suite_plan"]
    suite_id: str
    registered_at: str
    policy: Policy
    cases: list[PlanCase]
    publication_guardrail: str
    commitment: Commitment


class PlanCommitment(Closed, frozen=True):
    schema_version: Literal[1]
    artifact_type: Literal["pitfall_sealed_suite_plan_commitment"]
    suite_id: str
    registered_at: str
    case_count: int
    family_counts: dict[str, int]
    first_as_of: str
    last_window_end: str
    required_model_count: int
    repeats: int
    plan_commitment_sha256: str
    policy_sha256: str
    timestamp_guardrail: str
    commitment: Commitment


class Member(Closed, frozen=True):
    slot_id: str
    family: str
    scenario_id: str
    scenario_sha256: str
    seal_commitment_sha256: str
    as_of: str
    window_end: str
    attempt_count: int
    completed_count: int


class SealedSuite(Closed, frozen=True):
    schema_version: Literal[1]
    artifact_type: Literal["pitfall_sealed_suite"]
    suite_id: str
    created_at: str
    plan_commitment_sha256: str
    public_plan_commitment_sha256: str
    policy: Policy
    members: list[Member]
    outcome_status: str
    resolution_guardrail: str
    commitment: Commitment


class Matrix(Closed, frozen=True):
    models: list[str]
    reasoning_effort: str
    repeats: int


class Attempt(Closed, frozen=True):
    """One model's attempt at a scenario: ``submission`` when completed, ``error`` when
    failed, never both."""

    model: str
    reasoning_effort: str
    status: str
    executed_at: str
    latency_seconds: float
    web_search_calls: int
    events: list[dict[str, Any]]
    events_sha256: str
    usage: dict[str, int]
    repeat_index: int
    submission: dict[str, Any] | None = None
    error: str | None = None


class Seal(Closed, frozen=True):
    schema_version: Literal[1]
    artifact_type: Literal["pitfall_live_shadow_seal"]
    sealed_at: str
    scenario_source: dict[str, Any]
    scenario_sha256: str
    agent_payload: dict[str, Any]
    agent_payload_sha256: str
    harness: dict[str, Any]
    matrix: Matrix
    started_at: str
    completed_at: str
    duration_seconds: float
    results: list[Attempt]
    timestamp_guardrail: str
    commitment: Commitment


class Label(msgspec.Struct, frozen=True):
    """A matured outcome, authored by hand: the fields PITFALL requires (others may be
    present; PITFALL reads none of them). It carries no commitment: the resolution that
    holds it binds it."""

    schema_version: Literal[1]
    artifact_type: Literal["pitfall_live_shadow_label"]
    scenario_id: str
    resolved_at: str
    event_occurred: bool
    realized: dict[str, Any]
    outcome_sources: list[dict[str, Any]]


class Score(Closed, frozen=True):
    brier_score: float
    brier_loss: float
    log_loss: float
    classification_correct: bool


class ScoredAttempt(Closed, frozen=True):
    """A seal's attempt as its resolution scores it: ``submission`` and ``score`` only
    when it completed."""

    model: str
    reasoning_effort: str
    repeat_index: int
    status: str
    submission: dict[str, Any] | None = None
    score: Score | None = None


class Resolution(Closed, frozen=True):
    schema_version: Literal[1]
    artifact_type: Literal["pitfall_live_shadow_resolution"]
    created_at: str
    seal_commitment_sha256: str
    scenario_id: str
    resolved_at: str
    event_occurred: bool
    realized_metrics: dict[str, float]
    label: dict[str, Any]
    results: list[ScoredAttempt]
    commitment: Commitment


Record = SuitePlan | PlanCommitment | SealedSuite | Seal | Label | Resolution
KINDS: dict[str, type[Record]] = {
    PLAN: SuitePlan,
    PLAN_COMMITMENT: PlanCommitment,
    SUITE: SealedSuite,
    SEAL: Seal,
    LABEL: Label,
    RESOLUTION: Resolution,
}

Kind = TypeVar("Kind", bound=msgspec.Struct)


# a TypeVar, not def typed[Kind: ...]: the harness runs on Python 3.11 too
def typed(data: dict[str, Any], kind: type[Kind]) -> Kind:  # noqa: UP047, RUF100
    """``data`` as the record ``kind`` declares (every field, each of its type, and no
    other where the record is closed); a Rule naming the field otherwise."""
    try:
        return msgspec.convert(data, kind, strict=True)
    except msgspec.ValidationError as exc:
        raise Rule(f"not the shape PITFALL writes: {exc}") from None
