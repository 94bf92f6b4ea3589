"""PITFALL's sealed-suite and live-shadow artifacts, read as PITFALL writes them and
verified one by one, offline.

Every artifact but a label ends in a commitment, ``{"algorithm": "sha256",
"canonicalization": "json-sort-keys-utf8-v1", "payload_sha256": ...}``, over the record
without it: ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``,
UTF-8. That is PITFALL's own canonical form, not ``harness.canonical`` (which fixes
floats at six decimals), so a digest here is the digest PITFALL computed, byte for byte.
A commitment in another algorithm or canonicalization, one with a field more or less, or
a record one byte away from what it binds is refused.

Each ``verify_*`` makes the checks PITFALL's own verifier makes of that artifact
(``suite verify``, ``shadow verify``, and what ``shadow resolve`` requires of a label),
and those its writers guarantee and its verifier leaves out, as far as the artifact
carries what they need: a seal's search counts recounted from its event traces and its
answers read by PITFALL's submission rules, a resolution's scores recomputed. The checks
between artifacts (a plan and its public commitment, seals and their suite, a resolution
and its seal) are ``harness.points.pitfall_cohort``'s.

Artifacts of PITFALL's earlier ``finagentbench_*`` namespace are refused, as PITFALL's
current verifier refuses them. What a commitment cannot show is when its bytes existed:
PITFALL asks for an external timestamp, which no file here proves.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from harness.points.jsonfile import JsonFileError, read_json
from harness.points.pitfall_records import (
    ARTIFACT_TYPES,
    LABEL,
    LEGACY_PREFIX,
    PLAN,
    PLAN_COMMITMENT,
    RESOLUTION,
    SEAL,
    SUITE,
    Attempt,
    Label,
    PlanCommitment,
    Policy,
    Record,
    Resolution,
    Rule,
    Seal,
    SealedSuite,
    SuitePlan,
    typed,
)
from harness.points.pitfall_records import (
    PitfallArtifactError as PitfallArtifactError,
)
from harness.points.pitfall_scenario import (
    Scenario,
    check_sources,
    day,
    latest_date_anywhere,
    mapping,
    moment,
    probability_of,
    scenario_of,
    score,
    text,
)

ALGORITHM = "sha256"
CANONICALIZATION = "json-sort-keys-utf8-v1"
COMMITMENT_FIELDS = frozenset({"algorithm", "canonicalization", "payload_sha256"})
SHA256 = re.compile(r"[0-9a-f]{64}")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
PRIMARY_METRIC = "mean_brier_loss"
# the floor PITFALL's version-1 hard suite sets, whatever a policy declares above it
FLOOR = {"cases": 6, "families": 3, "per_family": 2, "models": 2, "repeats": 3}
STATUSES = ("completed", "failed")
BASELINE = "pitfall_point_baseline"

R = TypeVar("R", bound=Record)


# Generic and TypeVars, not class Verified[R: ...]: the harness runs on Python 3.11 too
@dataclass(frozen=True)
class Verified(Generic[R]):  # noqa: UP046, RUF100
    """An artifact that held every check of its own: where it was read, its type, its
    digest (the commitment's ``payload_sha256``; a label, which has no commitment, the
    sha256 of its own canonical bytes) and its typed record."""

    where: str
    artifact_type: str
    digest: str
    record: R


def canonical_bytes(value: Any) -> bytes:
    """``value`` in PITFALL's canonicalization (``json-sort-keys-utf8-v1``)."""
    dumped = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return dumped.encode("utf-8")


def digest_of(value: Any) -> str:
    """The sha256 hex PITFALL writes of ``value`` (a scenario's, a policy's, a trace's)."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def payload_sha256(record: Mapping[str, Any]) -> str:
    """The digest a commitment states: of the record without its ``commitment``."""
    return digest_of({key: value for key, value in record.items() if key != "commitment"})


def sha256_hex(value: Any, field: str) -> str:
    if not isinstance(value, str) or not SHA256.fullmatch(value):
        raise Rule(f"{field} must be a sha256 digest, 64 lowercase hex digits")
    return value


def _commitment(record: Any) -> str:
    if not isinstance(record, dict):
        raise Rule("an artifact is a JSON object")
    found = record.get("commitment")
    if not isinstance(found, dict):
        raise Rule("its commitment is missing (or not an object)")
    if set(found) != COMMITMENT_FIELDS:
        # a field beside the three is outside what the digest binds
        raise Rule(
            f"its commitment must hold exactly {', '.join(sorted(COMMITMENT_FIELDS))}, "
            f"not {', '.join(sorted(map(str, found)))}"
        )
    if found["algorithm"] != ALGORITHM:
        raise Rule(
            f"commitment algorithm {found['algorithm']!r:.40} is unsupported "
            f"(PITFALL commits with {ALGORITHM!r})"
        )
    if found["canonicalization"] != CANONICALIZATION:
        raise Rule(
            f"commitment canonicalization {found['canonicalization']!r:.40} is "
            f"unsupported (PITFALL's is {CANONICALIZATION!r})"
        )
    stated = sha256_hex(found["payload_sha256"], "commitment payload_sha256")
    calculated = payload_sha256(record)
    if stated != calculated:
        raise Rule(
            f"commitment digest mismatch: the record hashes to {calculated}, its "
            f"commitment says {stated} (a byte changed since it was committed)"
        )
    return calculated


def verify_commitment(record: Any, *, where: str = "artifact") -> str:
    """The record's ``payload_sha256``, once its commitment is PITFALL's (sha256,
    ``json-sort-keys-utf8-v1``, exactly three fields) and the record hashes to it."""
    kind = record.get("artifact_type") if isinstance(record, dict) else None
    with _naming(where, str(kind)):
        return _commitment(record)


@contextmanager
def _naming(where: str, kind: str) -> Iterator[None]:
    """A Rule broken inside, raised as the error naming the artifact."""
    try:
        yield
    except Rule as broken:
        raise PitfallArtifactError(where, kind, str(broken)) from None


def _committed(data: Any, kind: type[R]) -> tuple[str, R]:  # noqa: UP047, RUF100
    return _commitment(data), typed(data, kind)


def _check_policy(policy: Policy) -> None:
    """The policy as PITFALL's version-1 hard suite admits one."""
    models = policy.required_models
    if len(models) < FLOOR["models"] or len(set(models)) != len(models):
        raise Rule("policy required_models must hold at least 2 unique model ids")
    for model in models:
        text(model, "policy required_models item")
    if policy.reasoning_effort not in EFFORTS:
        raise Rule(f"policy reasoning_effort {policy.reasoning_effort!r:.40} is unsupported")
    if policy.repeats < FLOOR["repeats"]:
        raise Rule("policy repeats must be at least 3")
    if policy.required_web_search_calls < 1:
        raise Rule("policy required_web_search_calls must be at least 1")
    if (
        policy.minimum_case_count < FLOOR["cases"]
        or policy.minimum_family_count < FLOOR["families"]
        or policy.minimum_cases_per_family < FLOOR["per_family"]
    ):
        raise Rule("a hard suite needs at least 6 cases, 3 families and 2 cases per family")
    if policy.primary_metric != PRIMARY_METRIC:
        raise Rule(f"policy primary_metric must be {PRIMARY_METRIC}")


def check_distribution(count: int, families: Counter[str], policy: Policy) -> None:
    """Enough cases, enough families, enough cases in every family."""
    if count < policy.minimum_case_count:
        raise Rule(f"{count} case(s): the policy needs at least {policy.minimum_case_count}")
    if len(families) < policy.minimum_family_count:
        raise Rule(
            f"{len(families)} famil(ies): the policy needs at least {policy.minimum_family_count}"
        )
    thin = sorted(name for name, n in families.items() if n < policy.minimum_cases_per_family)
    if thin:
        raise Rule(
            f"famil(ies) {', '.join(thin)} hold fewer than {policy.minimum_cases_per_family} cases"
        )


def _unique(seen: set[Any], value: Any, what: str) -> None:
    if value in seen:
        raise Rule(f"{what} {value!r:.80} appears twice")
    seen.add(value)


def plan_scenarios(plan: SuitePlan) -> list[Scenario]:
    """Every case's scenario, in the plan's order, once each case holds: its digest is
    its scenario's, no identity repeats, no as-of date was past at registration (in its
    market's calendar), and the families are as the policy requires."""
    registered = moment(plan.registered_at, "registered_at")
    scenarios: list[Scenario] = []
    seen: set[Any] = set()
    families: Counter[str] = Counter()
    for i, case in enumerate(plan.cases):
        try:
            scenario = scenario_of(case.scenario_source)
        except Rule as broken:
            raise Rule(f"cases[{i}]: {broken}") from None
        if scenario.as_of < scenario.market_date(registered):
            raise Rule(
                f"cases[{i}]: as_of {scenario.as_of} was already past at registration "
                f"({plan.registered_at}): a plan cannot preregister a past as_of"
            )
        if case.scenario_sha256 != digest_of(case.scenario_source):
            raise Rule(f"cases[{i}] scenario digest mismatch")
        _unique(seen, ("slot", text(case.slot_id, f"cases[{i}].slot_id")), "slot")
        _unique(seen, ("scenario", scenario.id), "scenario")
        _unique(seen, ("digest", case.scenario_sha256), "scenario digest")
        families[text(case.family, f"cases[{i}].family")] += 1
        scenarios.append(scenario)
    check_distribution(len(plan.cases), families, plan.policy)
    return scenarios


def verify_plan(data: Any, *, where: str = "artifact") -> Verified[SuitePlan]:
    """A private plan (``pitfall_sealed_suite_plan``), as ``suite verify`` checks it."""
    with _naming(where, PLAN):
        digest, plan = _committed(data, SuitePlan)
        _check_policy(plan.policy)
        plan_scenarios(plan)
        return Verified(where, PLAN, digest, plan)


def verify_plan_commitment(data: Any, *, where: str = "artifact") -> Verified[PlanCommitment]:
    """A public plan commitment (``pitfall_sealed_suite_plan_commitment``): the floor's
    counts, family counts that add up, dates and digests that parse."""
    with _naming(where, PLAN_COMMITMENT):
        digest, public = _committed(data, PlanCommitment)
        if public.case_count < FLOOR["cases"]:
            raise Rule("case_count must be at least 6")
        if public.required_model_count < FLOOR["models"]:
            raise Rule("required_model_count must be at least 2")
        if public.repeats < FLOOR["repeats"]:
            raise Rule("repeats must be at least 3")
        counts = public.family_counts
        if len(counts) < FLOOR["families"]:
            raise Rule("family_counts must name at least 3 families")
        if any(not name.strip() or n < FLOOR["per_family"] for name, n in counts.items()):
            raise Rule("every family must be named and hold at least 2 cases")
        if sum(counts.values()) != public.case_count:
            raise Rule("family counts do not add up to case_count")
        moment(public.registered_at, "registered_at")
        if day(public.first_as_of, "first_as_of") >= day(public.last_window_end, "last_window_end"):
            raise Rule("first_as_of must come before last_window_end")
        sha256_hex(public.plan_commitment_sha256, "plan_commitment_sha256")
        sha256_hex(public.policy_sha256, "policy_sha256")
        return Verified(where, PLAN_COMMITMENT, digest, public)


def verify_suite(data: Any, *, where: str = "artifact") -> Verified[SealedSuite]:
    """A finalized suite (``pitfall_sealed_suite``): unique members, each with every
    attempt the policy requires, families as the policy requires, still unresolved."""
    with _naming(where, SUITE):
        digest, suite = _committed(data, SealedSuite)
        _check_policy(suite.policy)
        attempts = len(suite.policy.required_models) * suite.policy.repeats
        seen: set[Any] = set()
        families: Counter[str] = Counter()
        for i, member in enumerate(suite.members):
            _unique(seen, ("slot", text(member.slot_id, f"members[{i}].slot_id")), "slot")
            _unique(
                seen,
                ("digest", sha256_hex(member.scenario_sha256, f"members[{i}].scenario_sha256")),
                "scenario",
            )
            sha256_hex(member.seal_commitment_sha256, f"members[{i}].seal_commitment_sha256")
            families[text(member.family, f"members[{i}].family")] += 1
            if member.attempt_count != attempts:
                raise Rule(
                    f"members[{i}] attempt_count {member.attempt_count}: the policy "
                    f"requires {attempts} (models x repeats)"
                )
            if not 0 <= member.completed_count <= attempts:
                raise Rule(f"members[{i}] completed_count is outside 0..{attempts}")
            as_of = day(member.as_of, f"members[{i}].as_of")
            if day(member.window_end, f"members[{i}].window_end") <= as_of:
                raise Rule(f"members[{i}] window_end must come after as_of")
        check_distribution(len(suite.members), families, suite.policy)
        if suite.outcome_status != "unresolved":
            raise Rule(
                f"outcome_status {suite.outcome_status!r:.40}: a finalized suite remains unresolved"
            )
        moment(suite.created_at, "created_at")
        sha256_hex(suite.plan_commitment_sha256, "plan_commitment_sha256")
        sha256_hex(suite.public_plan_commitment_sha256, "public_plan_commitment_sha256")
        return Verified(where, SUITE, digest, suite)


def search_calls(events: list[dict[str, Any]]) -> int:
    """Web searches in a trace, counted as PITFALL counts them: completed items whose type
    names a web search."""
    count = 0
    for event in events:
        item = event.get("item")
        if event.get("type") == "item.completed" and isinstance(item, dict):
            count += "web_search" in str(item.get("type", "")).lower()
    return count


def _check_attempt(i: int, attempt: Attempt, seal: Seal, scenario: Scenario) -> None:
    where = f"results[{i}] ({attempt.model}, repeat {attempt.repeat_index})"
    if attempt.events_sha256 != digest_of(attempt.events):
        raise Rule(f"{where} trace digest mismatch")
    if attempt.web_search_calls != search_calls(attempt.events):
        raise Rule(
            f"{where} web_search_calls {attempt.web_search_calls}, but its trace "
            f"holds {search_calls(attempt.events)}"
        )
    if attempt.reasoning_effort != seal.matrix.reasoning_effort:
        raise Rule(f"{where} reasoning_effort differs from the seal's matrix")
    if attempt.status not in STATUSES:
        raise Rule(f"{where} status {attempt.status!r:.40} is neither completed nor failed")
    if attempt.status == "completed":
        if attempt.error is not None or attempt.web_search_calls < 1:
            raise Rule(f"{where} completed with an error or without a live web search")
        try:
            probability_of(attempt.submission)
            check_sources(mapping(attempt.submission, "submission"), scenario)
        except Rule as broken:
            raise Rule(f"{where}: {broken}") from None
    elif attempt.submission is not None or not isinstance(attempt.error, str):
        raise Rule(f"{where}: a failed attempt holds its error and no submission")
    executed = moment(attempt.executed_at, f"{where} executed_at")
    start, end = moment(seal.started_at, "started_at"), moment(seal.completed_at, "completed_at")
    if not start <= executed <= end:
        raise Rule(f"{where} executed_at is outside the seal's started_at..completed_at")


def seal_scenario(seal: Seal) -> Scenario:
    """The sealed scenario, once its digest, its agent payload's and its dates hold."""
    if seal.scenario_sha256 != digest_of(seal.scenario_source):
        raise Rule("scenario digest mismatch")
    if seal.agent_payload_sha256 != digest_of(seal.agent_payload):
        raise Rule("agent payload digest mismatch")
    scenario = scenario_of(seal.scenario_source)
    shown = seal.agent_payload
    if (shown.get("scenario_id"), shown.get("as_of"), shown.get("prediction_window_end")) != (
        scenario.id,
        scenario.as_of.isoformat(),
        scenario.window_end.isoformat(),
    ):
        raise Rule("the agent payload names another scenario, as-of date or window end")
    return scenario


def verify_seal(data: Any, *, where: str = "artifact") -> Verified[Seal]:
    """A live-shadow seal (``pitfall_live_shadow_seal``): its scenario's, agent payload's
    and every trace's digest (``shadow verify``), then what ``shadow run`` guarantees:
    run on the scenario's as-of date with the outcome hidden, one attempt per model and
    repeat, searches as its traces count them, answers by the submission rules."""
    with _naming(where, SEAL):
        digest, seal = _committed(data, Seal)
        scenario = seal_scenario(seal)
        if seal.harness.get("outcome_visible_to_agent") is not False:
            raise Rule("harness.outcome_visible_to_agent must be false")
        start = moment(seal.started_at, "started_at")
        if start > moment(seal.completed_at, "completed_at"):
            raise Rule("started_at is after completed_at")
        if scenario.market_date(start) != scenario.as_of:
            raise Rule(
                f"run on {scenario.market_date(start)} in its market, not on its "
                f"as-of date {scenario.as_of}: a live run after as_of can see later "
                "news, one before it cannot have been made by shadow run"
            )
        matrix = seal.matrix
        if not matrix.models or len(set(matrix.models)) != len(matrix.models):
            raise Rule("matrix models must be unique and at least one")
        if matrix.repeats < 1:
            raise Rule("matrix repeats must be at least 1")
        expected = {(m, r) for m in matrix.models for r in range(1, matrix.repeats + 1)}
        found = [(a.model, a.repeat_index) for a in seal.results]
        if len(set(found)) != len(found) or set(found) != expected:
            raise Rule("results are not exactly one attempt per model and repeat of its matrix")
        for i, attempt in enumerate(seal.results):
            _check_attempt(i, attempt, seal, scenario)
        return Verified(where, SEAL, digest, seal)


def _label(data: Any, now: datetime | None) -> Label:
    label = typed(data, Label)
    resolved = day(label.resolved_at, "label resolved_at")
    text(label.scenario_id, "label scenario_id")
    mapping(label.realized, "label realized")
    if not label.outcome_sources:
        raise Rule("label outcome_sources must be a non-empty list")
    for i, source in enumerate(label.outcome_sources):
        mapping(source, f"label outcome_sources[{i}]")
        published = source.get("published_at")
        if (
            published is not None
            and day(published, f"outcome_sources[{i}].published_at") > resolved
        ):
            raise Rule(f"label outcome_sources[{i}] is published after resolved_at")
    if now is not None and resolved > latest_date_anywhere(now):
        raise Rule(
            f"label resolved_at {resolved} has not begun anywhere yet: a label "
            "cannot resolve in the future"
        )
    return label


def verify_label(
    data: Any, *, where: str = "artifact", now: datetime | None = None
) -> Verified[Label]:
    """A matured label (``pitfall_live_shadow_label``), as ``shadow resolve`` reads one
    before it knows the seal: its fields, its sources published by its date, and (given
    ``now``) a date that has begun somewhere. It has no commitment to check."""
    with _naming(where, LABEL):
        return Verified(where, LABEL, digest_of(data), _label(data, now))


def _check_scores(resolution: Resolution) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(resolution.results):
        where = f"results[{i}] ({item.model}, repeat {item.repeat_index})"
        _unique(seen, (item.model, item.repeat_index), "attempt")
        if item.status not in STATUSES:
            raise Rule(f"{where} status {item.status!r:.40} is neither completed nor failed")
        if item.status == "failed":
            if item.submission is not None or item.score is not None:
                raise Rule(f"{where} failed, yet holds a submission or a score")
            continue
        if item.score is None:
            raise Rule(f"{where} completed without a score")
        try:
            probability = probability_of(item.submission)
        except Rule as broken:
            raise Rule(f"{where}: {broken}") from None
        assert item.submission is not None  # probability_of refuses a missing one
        expected = score(probability, item.submission["prediction"], resolution.event_occurred)
        if item.score != expected:
            raise Rule(
                f"{where} score differs from its probability scored against the "
                f"outcome ({expected})"
            )


def verify_resolution(
    data: Any, *, where: str = "artifact", now: datetime | None = None
) -> Verified[Resolution]:
    """A resolution (``pitfall_live_shadow_resolution``): its commitment (``shadow
    verify``), then what ``shadow resolve`` guarantees of what it holds: the label it
    embeds agrees with it and was not dated after it was made (nor, given ``now``, after
    today anywhere), and every completed attempt's score is its probability scored
    against the outcome."""
    with _naming(where, RESOLUTION):
        digest, resolution = _committed(data, Resolution)
        created = moment(resolution.created_at, "created_at")
        sha256_hex(resolution.seal_commitment_sha256, "seal_commitment_sha256")
        label = _label(resolution.label, created)
        if now is not None:
            _label(resolution.label, now)
        if (label.scenario_id, label.resolved_at, label.event_occurred) != (
            resolution.scenario_id,
            resolution.resolved_at,
            resolution.event_occurred,
        ):
            raise Rule("its label names another scenario_id, resolved_at or event_occurred")
        _check_scores(resolution)
        return Verified(where, RESOLUTION, digest, resolution)


VERIFIERS: dict[str, Callable[..., Verified[Any]]] = {
    PLAN: verify_plan,
    PLAN_COMMITMENT: verify_plan_commitment,
    SUITE: verify_suite,
    SEAL: verify_seal,
}


def _kind(data: Any) -> str:
    """The artifact's type, once it is one read here."""
    if not isinstance(data, dict):
        raise Rule("not a PITFALL artifact (a JSON object is expected)")
    kind = data.get("artifact_type")
    if isinstance(kind, str) and kind.startswith(LEGACY_PREFIX):
        raise Rule(
            "the earlier finagentbench_* namespace: PITFALL's current verifier "
            "accepts only pitfall_* artifacts, and keeps such a seal as history, never "
            "a member of a sealed suite"
        )
    if kind == BASELINE:
        raise Rule("a judged-point baseline: `pit-harness points import` reads it")
    if kind not in ARTIFACT_TYPES:
        raise Rule(f"artifact_type {kind!r:.60} is not one read here ({', '.join(ARTIFACT_TYPES)})")
    if data.get("schema_version") != 1 or isinstance(data.get("schema_version"), bool):
        raise Rule(f"schema_version {data.get('schema_version')!r:.20}: only 1 is read")
    return str(kind)


def verify(data: Any, *, where: str = "artifact", now: datetime | None = None) -> Verified[Any]:
    """Any of the six artifacts, by its ``artifact_type``, every check of its own made
    (``now``: the time by which a label's date must have begun somewhere)."""
    raw = data.get("artifact_type") if isinstance(data, dict) else None
    with _naming(where, str(raw)):
        kind = _kind(data)
    if kind == LABEL:
        return verify_label(data, where=where, now=now)
    if kind == RESOLUTION:
        return verify_resolution(data, where=where, now=now)
    return VERIFIERS[kind](data, where=where)


def read_file(path: str | os.PathLike[str], *, now: datetime | None = None) -> Verified[Any]:
    """The artifact in ``path``, read within the file limits and verified."""
    try:
        data = read_json(path)
    except JsonFileError as exc:
        why = str(exc).removeprefix(f"{path}: ")
        raise PitfallArtifactError(str(path), "unreadable", why) from None
    return verify(data, where=str(path), now=now)
