"""PITFALL's sealed-suite artifacts read together, and what a page shows of a cohort.

Each artifact first holds its own checks (``harness.points.pitfall_suite``); these are the
checks between them, each as PITFALL's ``suite finalize`` and ``shadow resolve`` make
them, and what its writers guarantee between the artifacts they write together:

- a public commitment states its private plan's digest, policy digest, suite id,
  registration time, counts, family counts and dates, exactly as the plan gives them;
- a finalized suite binds that public commitment and plan by digest, holds the plan's
  policy, and one member per planned case (slot, family, scenario and dates);
- a seal belongs to a planned case (by its scenario's digest), one seal per slot, its
  matrix the policy's, each completed attempt with the searches the policy requires, not
  started before registration, its as-of date not before registration in its market;
  in a suite, it is the member's seal by digest and its counts are the member's;
- a resolution binds its seal by digest: the seal's scenario and attempts, the label's
  realized figures recomputed under the scenario's criteria giving its outcome, dated
  inside the prediction window and not after the resolution was made; a label given
  beside it is the one it holds.

:func:`summarize` says what a page shows of each suite; it matches artifacts by digest
and checks nothing itself: show it only for artifacts :func:`check_together` found
holding together.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from harness.points.pitfall_records import (
    LABEL,
    PLAN,
    PLAN_COMMITMENT,
    RESOLUTION,
    SEAL,
    SUITE,
    Label,
    PitfallArtifactError,
    PlanCommitment,
    Resolution,
    Rule,
    Seal,
    SealedSuite,
    SuitePlan,
    typed,
)
from harness.points.pitfall_scenario import Scenario, day, moment, realized_metrics
from harness.points.pitfall_suite import Verified, digest_of, plan_scenarios, seal_scenario


@contextmanager
def _between(first: Verified[Any], second: Verified[Any]) -> Iterator[None]:
    """A Rule broken between two artifacts, raised as the error naming both."""
    try:
        yield
    except Rule as broken:
        where = f"{first.where} with {second.where}"
        kinds = f"{first.artifact_type} / {second.artifact_type}"
        raise PitfallArtifactError(where, kinds, str(broken)) from None


def _same(what: str, stated: Any, derived: Any) -> None:
    if stated != derived:
        raise Rule(f"{what} is {stated!r:.120}, not {derived!r:.120}")


def _policy_sha256(policy: Any) -> str:
    return digest_of(msgspec.to_builtins(policy))


def check_plan_commitment(plan: Verified[SuitePlan], public: Verified[PlanCommitment]) -> None:
    """The public commitment is the one ``suite preregister`` wrote beside this plan."""
    with _between(plan, public):
        p, c = plan.record, public.record
        _same(
            "plan_commitment_sha256 (the private plan's digest)",
            c.plan_commitment_sha256,
            plan.digest,
        )
        _same("policy_sha256", c.policy_sha256, _policy_sha256(p.policy))
        _same("suite_id", c.suite_id, p.suite_id)
        _same("registered_at", c.registered_at, p.registered_at)
        scenarios = plan_scenarios(p)
        _same("case_count", c.case_count, len(p.cases))
        _same("family_counts", c.family_counts, dict(Counter(case.family for case in p.cases)))
        _same("first_as_of", c.first_as_of, min(s.as_of for s in scenarios).isoformat())
        _same(
            "last_window_end", c.last_window_end, max(s.window_end for s in scenarios).isoformat()
        )
        _same("required_model_count", c.required_model_count, len(p.policy.required_models))
        _same("repeats", c.repeats, p.policy.repeats)


def check_suite_commitment(suite: Verified[SealedSuite], public: Verified[PlanCommitment]) -> None:
    """The suite was finalized under this public commitment, after its registration, and
    holds what the commitment counted."""
    with _between(suite, public):
        s, c = suite.record, public.record
        _same("public_plan_commitment_sha256", s.public_plan_commitment_sha256, public.digest)
        _same("plan_commitment_sha256", s.plan_commitment_sha256, c.plan_commitment_sha256)
        _same("suite_id", s.suite_id, c.suite_id)
        _same("the policy's digest", _policy_sha256(s.policy), c.policy_sha256)
        _same("member count", len(s.members), c.case_count)
        _same("members' family counts", dict(Counter(m.family for m in s.members)), c.family_counts)
        _same("first member as_of", min(m.as_of for m in s.members), c.first_as_of)
        _same("last member window_end", max(m.window_end for m in s.members), c.last_window_end)
        if moment(s.created_at, "created_at") < moment(c.registered_at, "registered_at"):
            raise Rule("the suite was finalized before its plan was registered")


def check_suite_plan(suite: Verified[SealedSuite], plan: Verified[SuitePlan]) -> None:
    """The suite is this plan finalized: its digest, suite id and policy, one member per
    case with the case's slot, family, scenario and dates."""
    with _between(suite, plan):
        s, p = suite.record, plan.record
        _same("plan_commitment_sha256", s.plan_commitment_sha256, plan.digest)
        _same("suite_id", s.suite_id, p.suite_id)
        _same("policy", s.policy, p.policy)
        planned = {
            case.scenario_sha256: (case.slot_id, case.family, sc.id, sc.as_of, sc.window_end)
            for case, sc in zip(p.cases, plan_scenarios(p), strict=True)
        }
        members = {
            m.scenario_sha256: (
                m.slot_id,
                m.family,
                m.scenario_id,
                day(m.as_of, "as_of"),
                day(m.window_end, "window_end"),
            )
            for m in s.members
        }
        _same("members' scenario digests", sorted(members), sorted(planned))
        for sha, member in members.items():
            _same(
                f"member {member[0]} (slot, family, scenario, as_of, window_end)",
                member,
                planned[sha],
            )
        if moment(s.created_at, "created_at") < moment(p.registered_at, "registered_at"):
            raise Rule("the suite was finalized before its plan was registered")


Registry = Verified[SuitePlan] | Verified[SealedSuite]


def _slots(registry: Registry) -> dict[str, str]:
    """Scenario digest -> slot, of a plan's cases or a suite's members."""
    record = registry.record
    if isinstance(record, SuitePlan):
        return {case.scenario_sha256: case.slot_id for case in record.cases}
    return {member.scenario_sha256: member.slot_id for member in record.members}


def _check_seal(
    registry: Registry, seal: Verified[Seal], scenario: Scenario, registered: datetime | None
) -> None:
    s, policy = seal.record, registry.record.policy
    _same("the seal's models", s.matrix.models, policy.required_models)
    _same("the seal's reasoning effort", s.matrix.reasoning_effort, policy.reasoning_effort)
    _same("the seal's repeats", s.matrix.repeats, policy.repeats)
    for a in s.results:
        if a.status == "completed" and a.web_search_calls < policy.required_web_search_calls:
            raise Rule(
                f"{a.model} repeat {a.repeat_index} completed with {a.web_search_calls} "
                f"search(es): the policy requires {policy.required_web_search_calls}"
            )
    if registered is not None:
        if moment(s.started_at, "started_at") < registered:
            raise Rule("the seal predates the plan's registration")
        if scenario.as_of < scenario.market_date(registered):
            raise Rule("the seal's as-of date was already past at registration")
    record = registry.record
    if isinstance(record, SealedSuite):
        member = next(m for m in record.members if m.scenario_sha256 == s.scenario_sha256)
        _same(
            f"member {member.slot_id}'s seal_commitment_sha256",
            member.seal_commitment_sha256,
            seal.digest,
        )
        _same(f"member {member.slot_id}'s attempt_count", member.attempt_count, len(s.results))
        _same(
            f"member {member.slot_id}'s completed_count",
            member.completed_count,
            sum(a.status == "completed" for a in s.results),
        )
        _same(
            f"member {member.slot_id}'s (scenario, as_of, window_end)",
            (member.scenario_id, member.as_of, member.window_end),
            (scenario.id, scenario.as_of.isoformat(), scenario.window_end.isoformat()),
        )
        if moment(record.created_at, "created_at") < moment(s.completed_at, "completed_at"):
            raise Rule("the suite was finalized before this seal was completed")


def check_seals(
    registry: Registry, seals: Sequence[Verified[Seal]], registered_at: str | None = None
) -> None:
    """Each seal is of a planned case, one per slot, made under the policy and (given the
    registration time) not before it; in a suite, each is its member's seal."""
    slots = _slots(registry)
    registered = moment(registered_at, "registered_at") if registered_at else None
    taken: dict[str, Verified[Seal]] = {}
    for seal in seals:
        with _between(registry, seal):
            slot = slots.get(seal.record.scenario_sha256)
            if slot is None:
                raise Rule("the seal's scenario was not pre-registered")
            if slot in taken:
                raise Rule(
                    f"slot {slot} has a seal already ({taken[slot].where}): exactly one "
                    "seal per slot"
                )
            taken[slot] = seal
            _check_seal(registry, seal, seal_scenario(seal.record), registered)


def _check_label(scenario: Scenario, label: Label, made: datetime | None) -> dict[str, float]:
    _same("scenario_id", label.scenario_id, scenario.id)
    resolved = day(label.resolved_at, "resolved_at")
    if not scenario.as_of < resolved <= scenario.window_end:
        raise Rule(
            f"resolved_at {resolved} is outside the prediction window "
            f"({scenario.as_of} .. {scenario.window_end}]"
        )
    if made is not None and resolved > scenario.market_date(made):
        raise Rule(
            f"resolved_at {resolved} was still to come in its market when the resolution was made"
        )
    return realized_metrics(scenario, label.realized, label.event_occurred)


def check_label(seal: Verified[Seal], label: Verified[Label]) -> None:
    """The label is of the sealed scenario, dated inside its window, and its realized
    figures give its outcome under the scenario's criteria."""
    with _between(seal, label):
        _check_label(seal_scenario(seal.record), label.record, None)


def check_resolution(seal: Verified[Seal], resolution: Verified[Resolution]) -> None:
    """The resolution is ``shadow resolve``'s of this seal."""
    with _between(seal, resolution):
        s, r = seal.record, resolution.record
        _same("seal_commitment_sha256", r.seal_commitment_sha256, seal.digest)
        scenario = seal_scenario(s)
        label = typed(r.label, Label)
        metrics = _check_label(scenario, label, moment(r.created_at, "created_at"))
        _same("realized_metrics", r.realized_metrics, metrics)
        _same(
            "attempts (model, effort, repeat, status)",
            [(a.model, a.reasoning_effort, a.repeat_index, a.status) for a in r.results],
            [(a.model, a.reasoning_effort, a.repeat_index, a.status) for a in s.results],
        )
        for scored, sealed in zip(r.results, s.results, strict=True):
            if scored.submission != sealed.submission:
                raise Rule(
                    f"{scored.model} repeat {scored.repeat_index}: the scored answer "
                    "is not the sealed one"
                )


def check_label_resolution(label: Verified[Label], resolution: Verified[Resolution]) -> None:
    """The resolution holds this very label, byte for byte once canonical."""
    with _between(label, resolution):
        _same(
            "the label the resolution holds (its digest)",
            digest_of(resolution.record.label),
            label.digest,
        )


@dataclass
class Together:
    """What the artifacts read together showed: each check that held, said in words,
    and each failure, naming the artifacts and the rule."""

    held: list[str] = field(default_factory=list)
    failures: list[PitfallArtifactError] = field(default_factory=list)

    def attempt(self, said: str, check: Any, *args: Any) -> None:
        try:
            check(*args)
        except PitfallArtifactError as exc:
            self.failures.append(exc)
        else:
            self.held.append(said)

    def refuse(self, where: str, kind: str, rule: str) -> None:
        self.failures.append(PitfallArtifactError(where, kind, rule))


def _by_type(artifacts: Sequence[Verified[Any]]) -> dict[str, list[Verified[Any]]]:
    found: dict[str, list[Verified[Any]]] = defaultdict(list)
    for artifact in artifacts:
        found[artifact.artifact_type].append(artifact)
    return found


def _one_per_suite(artifacts: list[Verified[Any]], together: Together) -> dict[str, Verified[Any]]:
    """Each suite id's artifact of one type; two that differ are a failure (a suite is
    registered, planned and finalized once)."""
    chosen: dict[str, Verified[Any]] = {}
    for artifact in artifacts:
        first = chosen.setdefault(artifact.record.suite_id, artifact)
        if first.digest != artifact.digest:
            together.refuse(
                f"{first.where} with {artifact.where}",
                artifact.artifact_type,
                f"two different artifacts for suite {artifact.record.suite_id!r}",
            )
    return chosen


def _check_suites(
    kinds: dict[str, list[Verified[Any]]], together: Together
) -> dict[str, dict[str, Verified[Any]]]:
    """Plan, public commitment and suite of each suite id, checked pairwise."""
    by_kind = {
        kind: _one_per_suite(kinds.get(kind, []), together)
        for kind in (PLAN, PLAN_COMMITMENT, SUITE)
    }
    plans, publics, suites = by_kind[PLAN], by_kind[PLAN_COMMITMENT], by_kind[SUITE]
    for suite_id, plan in plans.items():
        if suite_id in publics:
            together.attempt(
                f"{publics[suite_id].where} commits to the plan {plan.where}",
                check_plan_commitment,
                plan,
                publics[suite_id],
            )
        if suite_id in suites:
            together.attempt(
                f"{suites[suite_id].where} finalizes the plan {plan.where}",
                check_suite_plan,
                suites[suite_id],
                plan,
            )
    for suite_id, suite in suites.items():
        if suite_id in publics:
            together.attempt(
                f"{suite.where} was finalized under {publics[suite_id].where}",
                check_suite_commitment,
                suite,
                publics[suite_id],
            )
    return by_kind


def _registered_at(suite_id: str, by_kind: dict[str, dict[str, Verified[Any]]]) -> str | None:
    for kind in (PLAN, PLAN_COMMITMENT):
        if suite_id in by_kind[kind]:
            return str(by_kind[kind][suite_id].record.registered_at)
    return None


def _check_seals(
    seals: list[Verified[Any]], by_kind: dict[str, dict[str, Verified[Any]]], together: Together
) -> None:
    """Every seal against the suite (else the plan) whose case it seals."""
    registries: list[Registry] = [*by_kind[SUITE].values()]
    registries += [p for i, p in by_kind[PLAN].items() if i not in by_kind[SUITE]]
    for seal in seals:
        owners = [r for r in registries if seal.record.scenario_sha256 in _slots(r)]
        if registries and not owners:
            together.refuse(
                seal.where, SEAL, "its scenario is pre-registered in no plan or suite given with it"
            )
    for registry in registries:
        mine = [s for s in seals if s.record.scenario_sha256 in _slots(registry)]
        if mine:
            registered = _registered_at(registry.record.suite_id, by_kind)
            together.attempt(
                f"{len(mine)} seal(s) hold under {registry.where}",
                check_seals,
                registry,
                mine,
                registered,
            )


def _check_outcomes(kinds: dict[str, list[Verified[Any]]], together: Together) -> None:
    """Resolutions against their seals, labels against their seals and resolutions."""
    seals = {s.digest: s for s in kinds.get(SEAL, [])}
    members = {m.seal_commitment_sha256 for s in kinds.get(SUITE, []) for m in s.record.members}
    for resolution in kinds.get(RESOLUTION, []):
        seal = seals.get(resolution.record.seal_commitment_sha256)
        if seal is not None:
            together.attempt(
                f"{resolution.where} resolves the seal {seal.where}",
                check_resolution,
                seal,
                resolution,
            )
        elif (seals or members) and resolution.record.seal_commitment_sha256 not in members:
            together.refuse(resolution.where, RESOLUTION, "it resolves no seal given with it")
    for label in kinds.get(LABEL, []):
        scenario_id = label.record.scenario_id
        mine = [s for s in seals.values() if s.record.scenario_source.get("id") == scenario_id]
        resolutions = [r for r in kinds.get(RESOLUTION, []) if r.record.scenario_id == scenario_id]
        for seal in mine:
            together.attempt(
                f"{label.where} labels the seal {seal.where}", check_label, seal, label
            )
        for resolution in resolutions:
            together.attempt(
                f"{resolution.where} holds the label {label.where}",
                check_label_resolution,
                label,
                resolution,
            )
        if (seals or kinds.get(RESOLUTION)) and not mine and not resolutions:
            together.refuse(label.where, LABEL, "it labels no seal or resolution given with it")


def check_together(artifacts: Sequence[Verified[Any]]) -> Together:
    """Every check between the artifacts given, each matched to its own by suite id,
    scenario digest, seal digest or scenario id. An artifact that matches nothing given
    beside it of its kind (a seal no given plan or suite registers, a resolution of no
    given seal) is a failure: files read together are one cohort."""
    kinds = _by_type(artifacts)
    together = Together()
    by_kind = _check_suites(kinds, together)
    _check_seals(kinds.get(SEAL, []), by_kind, together)
    _check_outcomes(kinds, together)
    return together


class ResolutionState(msgspec.Struct, frozen=True):
    resolved_at: str
    event_occurred: bool
    resolution_sha256: str
    checked_against_seal: bool


class CaseSummary(msgspec.Struct, frozen=True):
    """One case of a suite: its slot, scenario and dates; its seal (``None`` until one is
    known) with its attempt counts; its resolution, where one was given."""

    slot_id: str
    family: str
    scenario_id: str
    as_of: str
    window_end: str
    seal_commitment_sha256: str | None
    attempt_count: int | None
    completed_count: int | None
    seal_checked: bool
    resolution: ResolutionState | None


class SuiteSummary(msgspec.Struct, frozen=True):
    """What a page shows of one suite. ``stage``: ``registered`` (the public commitment
    alone: counts and dates, no case), ``planned`` (the plan revealed) or ``finalized``
    (the suite index). ``None`` where no artifact given says it."""

    suite_id: str
    stage: str
    registered_at: str | None
    created_at: str | None
    case_count: int
    family_counts: dict[str, int]
    first_as_of: str
    last_window_end: str
    required_model_count: int
    required_models: list[str] | None
    reasoning_effort: str | None
    repeats: int
    required_web_search_calls: int | None
    primary_metric: str | None
    outcome_status: str | None
    plan_commitment_sha256: str
    public_plan_commitment_sha256: str | None
    suite_commitment_sha256: str | None
    sealed_count: int
    resolved_count: int
    cases: list[CaseSummary]


@dataclass
class _Known:
    """The seals and resolutions given, by the digests that find them."""

    seals: dict[str, Verified[Seal]]  # by scenario digest
    resolutions: dict[str, Verified[Resolution]]  # by seal digest
    seal_digests: set[str]


def _resolution(seal_sha: str | None, known: _Known) -> ResolutionState | None:
    found = known.resolutions.get(seal_sha or "")
    if found is None:
        return None
    r = found.record
    checked = seal_sha in known.seal_digests
    return ResolutionState(r.resolved_at, r.event_occurred, found.digest, checked)


def _plan_cases(plan: SuitePlan, known: _Known) -> list[CaseSummary]:
    cases = []
    for case, sc in zip(plan.cases, plan_scenarios(plan), strict=True):
        seal = known.seals.get(case.scenario_sha256)
        results = seal.record.results if seal else None
        digest = seal.digest if seal else None
        cases.append(
            CaseSummary(
                case.slot_id,
                case.family,
                sc.id,
                sc.as_of.isoformat(),
                sc.window_end.isoformat(),
                digest,
                len(results) if results is not None else None,
                sum(a.status == "completed" for a in results) if results is not None else None,
                seal is not None,
                _resolution(digest, known),
            )
        )
    return sorted(cases, key=lambda c: c.slot_id)


def _member_cases(suite: SealedSuite, known: _Known) -> list[CaseSummary]:
    return [
        CaseSummary(
            m.slot_id,
            m.family,
            m.scenario_id,
            m.as_of,
            m.window_end,
            m.seal_commitment_sha256,
            m.attempt_count,
            m.completed_count,
            m.seal_commitment_sha256 in known.seal_digests,
            _resolution(m.seal_commitment_sha256, known),
        )
        for m in suite.members
    ]


def _registered(public: Verified[PlanCommitment]) -> SuiteSummary:
    """A suite of which only the public commitment is known: its counts and dates."""
    c = public.record
    return SuiteSummary(
        suite_id=c.suite_id,
        stage="registered",
        registered_at=c.registered_at,
        created_at=None,
        case_count=c.case_count,
        family_counts=dict(sorted(c.family_counts.items())),
        first_as_of=c.first_as_of,
        last_window_end=c.last_window_end,
        required_model_count=c.required_model_count,
        required_models=None,
        reasoning_effort=None,
        repeats=c.repeats,
        required_web_search_calls=None,
        primary_metric=None,
        outcome_status=None,
        plan_commitment_sha256=c.plan_commitment_sha256,
        public_plan_commitment_sha256=public.digest,
        suite_commitment_sha256=None,
        sealed_count=0,
        resolved_count=0,
        cases=[],
    )


def _revealed(
    public: Verified[PlanCommitment] | None,
    plan: Verified[SuitePlan] | None,
    suite: Verified[SealedSuite] | None,
    known: _Known,
) -> SuiteSummary:
    """A suite whose cases are known, from its finalized index or else its plan."""
    if suite is not None:
        record: SuitePlan | SealedSuite = suite.record
        cases = _member_cases(suite.record, known)
        plan_sha = suite.record.plan_commitment_sha256
        public_sha: str | None = suite.record.public_plan_commitment_sha256
    else:
        assert plan is not None  # a revealed suite has its plan or its index
        record, cases, plan_sha = plan.record, _plan_cases(plan.record, known), plan.digest
        public_sha = public.digest if public else None
    registration = plan or public
    policy = record.policy
    return SuiteSummary(
        suite_id=record.suite_id,
        stage="finalized" if suite else "planned",
        registered_at=registration.record.registered_at if registration else None,
        created_at=suite.record.created_at if suite else None,
        case_count=len(cases),
        family_counts=dict(sorted(Counter(case.family for case in cases).items())),
        first_as_of=min(case.as_of for case in cases),
        last_window_end=max(case.window_end for case in cases),
        required_model_count=len(policy.required_models),
        required_models=list(policy.required_models),
        reasoning_effort=policy.reasoning_effort,
        repeats=policy.repeats,
        required_web_search_calls=policy.required_web_search_calls,
        primary_metric=policy.primary_metric,
        outcome_status=suite.record.outcome_status if suite else None,
        plan_commitment_sha256=plan_sha,
        public_plan_commitment_sha256=public_sha,
        suite_commitment_sha256=suite.digest if suite else None,
        sealed_count=sum(case.seal_commitment_sha256 is not None for case in cases),
        resolved_count=sum(case.resolution is not None for case in cases),
        cases=cases,
    )


def summarize(artifacts: Sequence[Verified[Any]]) -> list[SuiteSummary]:
    """One summary per suite id named by a plan, public commitment or suite given, in
    suite id order, with its cases' seals and resolutions among those given."""
    kinds = _by_type(artifacts)
    known = _Known(
        seals={s.record.scenario_sha256: s for s in kinds.get(SEAL, [])},
        resolutions={r.record.seal_commitment_sha256: r for r in kinds.get(RESOLUTION, [])},
        seal_digests={s.digest for s in kinds.get(SEAL, [])},
    )
    found: dict[str, dict[str, Verified[Any]]] = defaultdict(dict)
    for kind in (PLAN_COMMITMENT, PLAN, SUITE):
        for artifact in kinds.get(kind, []):
            found[artifact.record.suite_id].setdefault(kind, artifact)
    summaries = []
    for _, mine in sorted(found.items()):
        public, plan, suite = mine.get(PLAN_COMMITMENT), mine.get(PLAN), mine.get(SUITE)
        if plan or suite:
            summaries.append(_revealed(public, plan, suite, known))
        elif public:
            summaries.append(_registered(public))
    return summaries
