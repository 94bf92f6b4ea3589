"""PITFALL's sealed-suite and live-shadow artifacts: a cohort built as PITFALL's tools
write one verifies with the digests PITFALL computes; one changed byte, another
canonicalization, the earlier namespace, a seal before registration, a plan and
commitment that disagree, and the other broken rules are each refused, naming the rule;
the command's output and exit codes."""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.points.pitfall_cohort import (
    check_plan_commitment,
    check_seals,
    check_together,
    summarize,
)
from harness.points.pitfall_records import PitfallArtifactError
from harness.points.pitfall_suite import (
    Verified,
    read_file,
    verify,
    verify_commitment,
    verify_label,
    verify_plan,
    verify_plan_commitment,
    verify_resolution,
    verify_seal,
    verify_suite,
)
from tests.support import pitfall_cohort as build

# What PITFALL 0.17.0's own writers (``suite preregister``, ``shadow run``, ``suite
# finalize``, ``shadow resolve``, at commit e8b8d2c) commit to for this very cohort: the
# same inputs and times given to its code gave these digests, and artifacts equal to
# the builder's field for field.
PITFALL_DIGESTS = {
    "plan": "5a62cbc8ccb945808dc4fe755f96869eae0837e18666614b51bdf2930b521fc8",
    "public": "eeb3b9835835d218c4e5fee5db0869bf81263d123b3b8e427e2f66bc3b5f747f",
    "seal": "faf9b187a09828735e29adf3808e41326abc1e3d830700cca988134eb9e0d627",
    "suite": "1870ecde099b0c3f9c7b21783958d038931dd687131d61f5e731ac3d2dae936a",
    "resolution": "3af98723d78c394a9190a2e7547e3883ef4fa42c6ae89448d4eccf628fcbcd12",
}
NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture()
def cohort() -> dict[str, Any]:
    return build.cohort()


def _all(cohort: dict[str, Any]) -> list[Verified[Any]]:
    artifacts = [cohort["plan"], cohort["public"], *cohort["seals"], cohort["suite"]]
    artifacts += [cohort["label"], cohort["resolution"]]
    return [verify(a, where=f"#{i}", now=NOW) for i, a in enumerate(artifacts)]


def _failures(artifacts: list[dict[str, Any]]) -> list[str]:
    verified = [verify(a, where=f"#{i}", now=NOW) for i, a in enumerate(artifacts)]
    return [str(f) for f in check_together(verified).failures]


# -- a cohort as PITFALL writes it ------------------------------------------------------


def test_a_cohort_built_as_pitfall_writes_it_verifies_with_pitfalls_own_digests(
    cohort: dict[str, Any],
) -> None:
    assert verify_plan(cohort["plan"]).digest == PITFALL_DIGESTS["plan"]
    assert verify_plan_commitment(cohort["public"]).digest == PITFALL_DIGESTS["public"]
    assert verify_seal(cohort["seals"][0]).digest == PITFALL_DIGESTS["seal"]
    assert verify_suite(cohort["suite"]).digest == PITFALL_DIGESTS["suite"]
    assert verify_resolution(cohort["resolution"]).digest == PITFALL_DIGESTS["resolution"]
    assert verify_label(cohort["label"], now=NOW).record.event_occurred is True
    together = check_together(_all(cohort))
    assert together.failures == []
    # plan/public, suite/plan, suite/public, the seals, resolution/seal, label/seal and
    # label/resolution
    assert len(together.held) == 7


def test_the_public_commitment_names_no_scenario(cohort: dict[str, Any]) -> None:
    text = json.dumps(cohort["public"], ensure_ascii=False)
    assert "scenario" not in text and "cn-a-live-suite-1" not in text and "测试公司" not in text


def test_the_summary_shows_what_a_page_needs(cohort: dict[str, Any]) -> None:
    (summary,) = summarize(_all(cohort))
    assert (summary.suite_id, summary.stage) == ("a-share-shadow-hard-2026", "finalized")
    assert summary.registered_at == build.REGISTERED_AT
    assert summary.created_at == build.FINALIZED_AT
    assert summary.case_count == 6
    assert summary.family_counts == {"cash": 2, "factory": 2, "rd": 2}
    assert (summary.first_as_of, summary.last_window_end) == (build.AS_OF, build.WINDOW_END)
    assert (summary.required_model_count, summary.repeats) == (2, 3)
    assert summary.required_models == ["model-a", "model-b"]
    assert summary.outcome_status == "unresolved"
    assert (summary.sealed_count, summary.resolved_count) == (6, 1)
    assert summary.public_plan_commitment_sha256 == PITFALL_DIGESTS["public"]
    first, second = summary.cases[:2]
    assert (first.slot_id, first.as_of, first.attempt_count, first.seal_checked) == (
        "slot-1", build.AS_OF, 6, True,
    )  # fmt: skip
    assert first.resolution is not None and first.resolution.resolved_at == build.RESOLVED_AT
    assert first.resolution.checked_against_seal and second.resolution is None


def test_before_the_reveal_the_summary_has_counts_and_dates_and_no_case(
    cohort: dict[str, Any],
) -> None:
    (summary,) = summarize([verify(cohort["public"])])
    assert (summary.stage, summary.case_count, summary.cases) == ("registered", 6, [])
    assert summary.required_models is None and summary.outcome_status is None
    planned = [verify(cohort["plan"]), *(verify(s) for s in cohort["seals"][:4])]
    (summary,) = summarize(planned)
    assert (summary.stage, summary.sealed_count, summary.resolved_count) == ("planned", 4, 0)
    assert [c.seal_commitment_sha256 is None for c in summary.cases] == [False] * 4 + [True] * 2


def test_failed_attempts_stay_in_the_cohort_and_are_counted(cohort: dict[str, Any]) -> None:
    plan = cohort["plan"]
    seals = cohort["seals"]
    seals[2] = build.seal(plan["cases"][2]["scenario_source"], failed=(("model-b", 2),))
    suite = build.finalize(plan, cohort["public"], seals)
    assert _failures([plan, cohort["public"], *seals, suite]) == []
    (summary,) = summarize([verify(a) for a in (plan, *seals, suite)])
    assert (summary.cases[2].completed_count, summary.cases[2].attempt_count) == (5, 6)


# -- the commitment --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("plan", lambda a: a["cases"][0]["scenario_source"]["security"].update(name_as_of="测试公司9")),
        ("public", lambda a: a.update(case_count=7)),
        ("suite", lambda a: a["members"][0].update(completed_count=5)),
        ("resolution", lambda a: a["results"][0]["score"].update(brier_loss=0.01)),
        ("seal", lambda a: a["results"][0]["submission"].update(event_probability=0.9)),
    ],
)  # fmt: skip
def test_one_changed_field_is_refused_as_a_digest_mismatch(
    cohort: dict[str, Any], name: str, change: Any
) -> None:
    artifact = copy.deepcopy(cohort["seals"][0] if name == "seal" else cohort[name])
    change(artifact)
    with pytest.raises(PitfallArtifactError, match="commitment digest mismatch") as caught:
        verify(artifact, where=f"{name}.json")
    assert str(caught.value).startswith(f"{name}.json: {artifact['artifact_type']}: ")


def test_one_changed_byte_of_a_file_is_refused(cohort: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "public.json"
    text = json.dumps(cohort["public"], ensure_ascii=False, indent=2)
    path.write_text(text, encoding="utf-8")
    assert read_file(path).digest == PITFALL_DIGESTS["public"]
    path.write_text(text.replace("2026-02-10", "2026-02-11", 1), encoding="utf-8")
    with pytest.raises(PitfallArtifactError, match="commitment digest mismatch"):
        read_file(path)


def test_another_canonicalization_or_algorithm_is_refused(cohort: dict[str, Any]) -> None:
    plan = copy.deepcopy(cohort["plan"])
    plan["commitment"]["canonicalization"] = "json-sort-keys-ascii-v1"
    with pytest.raises(PitfallArtifactError, match=r"canonicalization .* is unsupported"):
        verify_commitment(plan, where="plan.json")
    plan = copy.deepcopy(cohort["plan"])
    plan["commitment"]["algorithm"] = "sha512"
    with pytest.raises(PitfallArtifactError, match="algorithm 'sha512' is unsupported"):
        verify_commitment(plan)
    # the same record hashed with its non-ASCII text escaped is another digest
    plan = copy.deepcopy(cohort["plan"])
    body = {k: v for k, v in plan.items() if k != "commitment"}
    escaped = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    plan["commitment"]["payload_sha256"] = hashlib.sha256(escaped.encode()).hexdigest()
    with pytest.raises(PitfallArtifactError, match="commitment digest mismatch"):
        verify_commitment(plan)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path to every scalar in ``value``."""
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _leaves(item, (*path, i))]
    return [path]


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
SEAL = build.cohort()["seals"][1]
SEAL_LEAVES = [path for path in _leaves(SEAL) if path[0] != "commitment"]


@settings(max_examples=300, deadline=None)
@given(path=st.sampled_from(SEAL_LEAVES), value=SCALARS)
def test_any_value_of_a_seal_changed_is_refused(path: tuple[Any, ...], value: Any) -> None:
    seal = copy.deepcopy(SEAL)
    *parents, last = path
    holder = seal
    for step in parents:
        holder = holder[step]
    # the same value of the same type writes the same bytes: not a change
    assume(not (type(holder[last]) is type(value) and holder[last] == value))
    holder[last] = value
    with pytest.raises(PitfallArtifactError, match="commitment digest mismatch"):
        verify_commitment(seal)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda c: c.clear(), "must hold exactly algorithm, canonicalization, payload_sha256"),
        (lambda c: c.update(signed_at="2026-01-01"), "must hold exactly"),
        (lambda c: c.update(payload_sha256="ABC"), "64 lowercase hex digits"),
    ],
)
def test_a_malformed_commitment_is_refused(cohort: dict[str, Any], change: Any, why: str) -> None:
    public = copy.deepcopy(cohort["public"])
    change(public["commitment"])
    with pytest.raises(PitfallArtifactError, match=why):
        verify(public)
    del public["commitment"]
    with pytest.raises(PitfallArtifactError, match="commitment is missing"):
        verify(public)


def test_the_earlier_namespace_is_refused_saying_so(cohort: dict[str, Any]) -> None:
    seal = copy.deepcopy(cohort["seals"][0])
    seal["artifact_type"] = "finagentbench_live_shadow_seal"
    with pytest.raises(PitfallArtifactError, match=r"earlier finagentbench_\* namespace") as caught:
        verify(build.recommitted(seal), where="old-seal.json")
    assert caught.value.where == "old-seal.json"
    assert caught.value.artifact_type == "finagentbench_live_shadow_seal"
    with pytest.raises(PitfallArtifactError, match="points import"):
        verify({"artifact_type": "pitfall_point_baseline", "schema_version": 1})


def test_a_field_pitfall_never_writes_is_refused_naming_it(cohort: dict[str, Any]) -> None:
    suite = copy.deepcopy(cohort["suite"])
    suite["leaderboard_rank"] = 1
    with pytest.raises(PitfallArtifactError, match="unknown field `leaderboard_rank`"):
        verify(build.recommitted(suite))


# -- each artifact's own rules ---------------------------------------------------------


def test_a_plan_cannot_register_an_as_of_already_past_in_its_market() -> None:
    # 15:00 UTC is 23:00 in Shanghai, still the as-of date there: admitted
    assert verify_plan(build.plan("2026-02-10T15:00:00+00:00")).record.suite_id
    # 16:30 UTC is 00:30 the next day in Shanghai: the as-of date is past
    with pytest.raises(PitfallArtifactError, match=r"cases\[0\]: as_of 2026-02-10 was already"):
        verify_plan(build.plan("2026-02-10T16:30:00+00:00"))


def test_a_plan_case_whose_scenario_digest_differs_is_refused(cohort: dict[str, Any]) -> None:
    plan = copy.deepcopy(cohort["plan"])
    plan["cases"][3]["scenario_source"]["prompt"] = "另一个问题"
    with pytest.raises(PitfallArtifactError, match=r"cases\[3\] scenario digest mismatch"):
        verify_plan(build.recommitted(plan))


def test_a_policy_under_the_hard_suite_floor_is_refused(cohort: dict[str, Any]) -> None:
    plan = copy.deepcopy(cohort["plan"])
    plan["policy"]["repeats"] = 2
    with pytest.raises(PitfallArtifactError, match="repeats must be at least 3"):
        verify_plan(build.recommitted(plan))
    public = copy.deepcopy(cohort["public"])
    public["family_counts"] = {"rd": 4, "cash": 2}
    with pytest.raises(PitfallArtifactError, match="at least 3 families"):
        verify_plan_commitment(build.recommitted(public))


def test_a_seal_whose_counted_searches_differ_from_its_trace_is_refused(
    cohort: dict[str, Any],
) -> None:
    seal = copy.deepcopy(cohort["seals"][0])
    seal["results"][1]["web_search_calls"] = 8
    with pytest.raises(PitfallArtifactError, match=r"web_search_calls 8, but its trace holds 1"):
        verify_seal(build.recommitted(seal))
    seal = copy.deepcopy(cohort["seals"][0])
    seal["results"][1]["events"].pop()  # the search removed, its digest left as it was
    with pytest.raises(PitfallArtifactError, match="trace digest mismatch"):
        verify_seal(build.recommitted(seal))


def test_a_seal_run_after_its_as_of_date_or_with_the_outcome_visible_is_refused(
    cohort: dict[str, Any],
) -> None:
    source = cohort["plan"]["cases"][0]["scenario_source"]
    # 16:30 UTC is the 11th in Shanghai: a day late; 15:00 UTC the evening before: early
    late = build.seal(
        source, started_at="2026-02-10T16:30:00+00:00", completed_at="2026-02-10T17:00:00+00:00"
    )
    with pytest.raises(PitfallArtifactError, match="run on 2026-02-11 in its market, not on"):
        verify_seal(late)
    early = build.seal(source, started_at="2026-02-09T15:00:00+00:00")
    with pytest.raises(PitfallArtifactError, match="run on 2026-02-09 in its market, not on"):
        verify_seal(early)
    assert verify_seal(build.seal(source, started_at="2026-02-09T16:30:00+00:00")).digest
    seal = copy.deepcopy(cohort["seals"][0])
    seal["harness"]["outcome_visible_to_agent"] = True
    with pytest.raises(PitfallArtifactError, match="outcome_visible_to_agent must be false"):
        verify_seal(build.recommitted(seal))


def test_a_seal_with_an_attempt_at_another_effort_is_refused(cohort: dict[str, Any]) -> None:
    seal = copy.deepcopy(cohort["seals"][0])
    seal["results"][0]["reasoning_effort"] = "high"
    with pytest.raises(PitfallArtifactError, match="reasoning_effort differs from the seal"):
        verify_seal(build.recommitted(seal))


def test_a_seal_missing_an_attempt_is_refused(cohort: dict[str, Any]) -> None:
    seal = copy.deepcopy(cohort["seals"][0])
    del seal["results"][-1]
    with pytest.raises(PitfallArtifactError, match="exactly one attempt per model and repeat"):
        verify_seal(build.recommitted(seal))


def test_an_answer_against_its_threshold_or_off_its_allowlist_is_refused(
    cohort: dict[str, Any],
) -> None:
    for change, why in (
        ({"prediction": "no_event"}, "agree with the 0.5 probability threshold"),
        ({"evidence_urls": ["https://example.com/x"]}, "'example.com' is not allowlisted"),
    ):
        seal = copy.deepcopy(cohort["seals"][0])
        seal["results"][0]["submission"].update(change)
        with pytest.raises(PitfallArtifactError, match=why):
            verify_seal(build.recommitted(seal))


def test_a_suite_with_a_wrong_attempt_count_or_resolved_status_is_refused(
    cohort: dict[str, Any],
) -> None:
    suite = copy.deepcopy(cohort["suite"])
    suite["members"][0]["attempt_count"] = 5
    with pytest.raises(PitfallArtifactError, match="attempt_count 5: the policy requires 6"):
        verify_suite(build.recommitted(suite))
    suite = copy.deepcopy(cohort["suite"])
    suite["outcome_status"] = "resolved"
    with pytest.raises(PitfallArtifactError, match="a finalized suite remains unresolved"):
        verify_suite(build.recommitted(suite))


def test_a_resolution_whose_score_differs_from_its_probability_is_refused(
    cohort: dict[str, Any],
) -> None:
    resolution = copy.deepcopy(cohort["resolution"])
    resolution["results"][0]["score"]["brier_loss"] = 0.0
    with pytest.raises(PitfallArtifactError, match=r"results\[0\] .* score differs"):
        verify_resolution(build.recommitted(resolution))


def test_a_label_cannot_resolve_in_the_future(cohort: dict[str, Any]) -> None:
    with pytest.raises(PitfallArtifactError, match="cannot resolve in the future"):
        verify_label(cohort["label"], now=datetime(2026, 10, 29, tzinfo=UTC))
    late = copy.deepcopy(cohort["label"])
    late["outcome_sources"][0]["published_at"] = "2026-11-02"
    with pytest.raises(PitfallArtifactError, match="published after resolved_at"):
        verify_label(late)


# -- artifacts read together -----------------------------------------------------------


def test_a_seal_started_before_registration_is_refused(cohort: dict[str, Any]) -> None:
    plan = build.plan("2026-02-10T03:00:00+00:00")  # an hour after the seals started
    public = build.public(plan)
    suite = build.finalize(plan, public, cohort["seals"])
    failures = _failures([plan, public, *cohort["seals"], suite])
    assert len(failures) == 1 and "the seal predates the plan's registration" in failures[0]


def test_a_commitment_to_another_plan_is_refused(cohort: dict[str, Any]) -> None:
    other = build.plan("2026-02-09T03:00:00+00:00")
    with pytest.raises(PitfallArtifactError, match="plan_commitment_sha256") as caught:
        check_plan_commitment(
            verify(cohort["plan"], where="plan.json"), verify(build.public(other), where="pub")
        )
    assert caught.value.where == "plan.json with pub"


def test_a_public_commitment_stating_other_figures_is_refused(cohort: dict[str, Any]) -> None:
    public = copy.deepcopy(cohort["public"])
    public["last_window_end"] = "2026-12-31"
    failures = _failures([cohort["plan"], build.recommitted(public)])
    assert len(failures) == 1 and "last_window_end is '2026-12-31', not '2026-11-30'" in failures[0]


def test_a_suite_binds_exactly_one_seal_per_slot(cohort: dict[str, Any]) -> None:
    plan = cohort["plan"]
    rerun = build.seal(plan["cases"][0]["scenario_source"], failed=(("model-a", 1),))
    failures = _failures([plan, *cohort["seals"], rerun])
    assert any("slot slot-1 has a seal already" in f for f in failures)
    # the suite's member names the first seal: the rerun is not it
    failures = _failures([cohort["suite"], rerun])
    assert any("slot-1's seal_commitment_sha256" in f for f in failures)
    stranger = build.seal(build.scenario(9))
    failures = _failures([plan, stranger])
    assert failures == [
        "#1: pitfall_live_shadow_seal: its scenario is pre-registered in no plan or suite "
        "given with it"
    ]


def test_a_seal_under_another_matrix_is_refused(cohort: dict[str, Any]) -> None:
    plan = verify(cohort["plan"], where="plan.json")
    source = cohort["plan"]["cases"][0]["scenario_source"]
    wrong = verify(build.seal(source, models=("model-a", "model-c")), where="seal.json")
    with pytest.raises(PitfallArtifactError, match="the seal's models"):
        check_seals(plan, [wrong], build.REGISTERED_AT)


def test_a_flipped_outcome_is_refused_against_its_seal(cohort: dict[str, Any]) -> None:
    seal = cohort["seals"][0]
    # a label saying no event with growth of 30%, and a resolution scored consistently on it
    flipped = build.label(seal["scenario_source"]["id"], growth=0.3, event=False)
    resolution = build.resolve(seal, flipped)
    assert verify_resolution(resolution).record.event_occurred is False  # alone, it holds
    failures = _failures([seal, resolution])
    assert len(failures) == 1 and "event_occurred disagrees" in failures[0]
    assert any("event_occurred disagrees" in f for f in _failures([seal, flipped]))


def test_a_resolution_of_another_seal_or_outside_the_window_is_refused(
    cohort: dict[str, Any],
) -> None:
    seals = cohort["seals"]
    failures = _failures([seals[1], cohort["resolution"]])
    assert failures == ["#1: pitfall_live_shadow_resolution: it resolves no seal given with it"]
    early = build.label(seals[0]["scenario_source"]["id"])
    early["resolved_at"] = early["outcome_sources"][0]["published_at"] = "2026-02-10"
    failures = _failures([seals[0], build.resolve(seals[0], early)])
    assert any("outside the prediction window" in f for f in failures)


def test_a_label_given_beside_a_resolution_must_be_the_one_it_holds(
    cohort: dict[str, Any],
) -> None:
    other = copy.deepcopy(cohort["label"])
    other["outcome_sources"][0]["title"] = "另一份报告"
    failures = _failures([cohort["seals"][0], other, cohort["resolution"]])
    assert len(failures) == 1
    assert failures[0].startswith(
        "#1 with #2: pitfall_live_shadow_label / pitfall_live_shadow_resolution: the label "
        "the resolution holds (its digest) is "
    )


# -- the command -----------------------------------------------------------------------


def _write(folder: Path, artifacts: dict[str, Any]) -> list[str]:
    paths = []
    for name, artifact in artifacts.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(artifact, ensure_ascii=False, indent=2), encoding="utf-8")
        paths.append(str(path))
    return paths


def _files(cohort: dict[str, Any], folder: Path) -> list[str]:
    named = {"public": cohort["public"], "plan": cohort["plan"], "suite": cohort["suite"]}
    named |= {f"seal-{i}": s for i, s in enumerate(cohort["seals"], start=1)}
    named |= {"label": cohort["label"], "resolution": cohort["resolution"]}
    return _write(folder, named)


def test_the_command_verifies_a_cohort_and_exits_0(
    cohort: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _files(cohort, tmp_path)
    assert main(["points", "pitfall-suite", *files]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"verified  {files[0]}  pitfall_sealed_suite_plan_commitment  "
        f"sha256 {PITFALL_DIGESTS['public']}"
    )
    assert sum(line.startswith("verified  ") for line in out) == 11
    assert sum(line.startswith("held      ") for line in out) == 7
    assert "suite a-share-shadow-hard-2026: finalized; registered 2026-02-09T02:00:00+00:00, " \
        "finalized 2026-02-10T04:00:00+00:00" in out  # fmt: skip
    assert "  outcome unresolved: 6 of 6 sealed, 1 of 6 resolved" in out
    assert any("slot-1  rd  cn-a-live-suite-1  as of 2026-02-10" in line for line in out)
    assert out[-1] == "ALL HOLD: 11 artifact(s), 7 check(s) between them"


def test_the_command_names_each_failure_and_exits_1(
    cohort: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    legacy = copy.deepcopy(cohort["seals"][1])
    legacy["artifact_type"] = "finagentbench_live_shadow_seal"
    tampered = copy.deepcopy(cohort["public"])
    tampered["repeats"] = 4
    files = _write(tmp_path, {"plan": cohort["plan"], "public": tampered})
    files += _write(tmp_path, {"legacy": build.recommitted(legacy)})
    files.append(str(tmp_path / "missing.json"))
    assert main(["points", "pitfall-suite", *files]) == 1
    out = capsys.readouterr().out
    assert f"REFUSED   {files[1]}: pitfall_sealed_suite_plan_commitment: commitment digest " in out
    assert f"REFUSED   {files[2]}: finagentbench_live_shadow_seal: the earlier " in out
    assert f"REFUSED   {files[3]}: unreadable: " in out
    assert out.splitlines()[-1] == "NOT verified: 3 failure(s)"


def test_the_command_reports_as_json(
    cohort: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    public = copy.deepcopy(cohort["public"])
    public["first_as_of"] = "2026-02-11"
    files = _write(tmp_path, {"plan": cohort["plan"], "public": build.recommitted(public)})
    assert main(["points", "pitfall-suite", "--json", *files]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert [a["verified"] for a in report["artifacts"]] == [True, True]
    assert report["artifacts"][0]["payload_sha256"] == PITFALL_DIGESTS["plan"]
    assert len(report["failures"]) == 1 and "first_as_of is '2026-02-11'" in report["failures"][0]
    assert report["suites"][0]["stage"] == "planned"
    assert report["suites"][0]["cases"][0]["as_of"] == build.AS_OF


def test_the_help_names_the_verb_and_what_it_checks(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse wraps at hyphens too: one line per text
    with pytest.raises(SystemExit):
        main(["points", "--help"])
    assert "pitfall-suite" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["points", "pitfall-suite", "--help"])
    text = capsys.readouterr().out
    for name in ("pitfall_sealed_suite_plan_commitment", "json-sort-keys-utf8-v1", "--json"):
        assert name in text
    assert "finagentbench_* namespace is refused" in text and "Exit 0" in text
