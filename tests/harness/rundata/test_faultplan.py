"""Fault plans (``sharpebench.fault-plan.v1``) as sharpebench checks them: every refusal
rule before anything starts, the identity (reformatting keeps it, reordering changes it)
and the pure draws with sharpebench's pinned values."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from harness.rundata import faultplan
from harness.rundata.faultplan import FaultPlanError, parse_plan

# The plan sharpebench's own tests build on: one fault of each armable mode.
PLAN: dict[str, Any] = {
    "schema_version": "sharpebench.fault-plan.v1",
    "seed": 7,
    "declared_relaxations": [
        "submission_acceptance",
        "read_your_writes",
        "position_sign_convention",
    ],
    "faults": [
        {"id": "lag", "cohort_ppm": 1_000_000,
         "fault": {"mode": "projection_lag", "max_lag_steps": 3}},
        {"id": "flip", "group": "book", "cohort_ppm": 400_000,
         "fault": {"mode": "amount_sign", "max_span_steps": 2}},
        {"id": "limit", "group": "book", "cohort_ppm": 600_000,
         "fault": {"mode": "rate_limit", "max_rejected_presentations": 64}},
    ],
}  # fmt: skip


def _bytes(plan: dict[str, Any]) -> bytes:
    return json.dumps(plan).encode()


def _with(change: Any) -> dict[str, Any]:
    plan = copy.deepcopy(PLAN)
    change(plan)
    return plan


def test_a_plan_is_accepted_with_its_declarations_folded_and_sorted() -> None:
    plan = parse_plan(_bytes(_with(lambda p: p["declared_relaxations"].append("read_your_writes"))))
    assert plan.declared_relaxations == [
        "read_your_writes", "position_sign_convention", "submission_acceptance"
    ]  # fmt: skip
    assert [f.mode for f in plan.faults] == ["projection_lag", "amount_sign", "rate_limit"]
    assert plan.declaration().splitlines()[0].startswith("- read-your-writes is relaxed")


def _refusals() -> list[tuple[str, Any, str]]:
    def fault(i: int, **changes: Any) -> Any:
        return lambda p: p["faults"][i].update(changes)

    def mode(i: int, **changes: Any) -> Any:
        return lambda p: p["faults"][i]["fault"].update(changes)

    return [
        ("schema", lambda p: p.update(schema_version="sharpebench.fault-plan.v2"), "schema_version"),
        ("unknown top field", lambda p: p.update(note="x"), "unknown field `note`"),
        ("unknown fault field", fault(0, weight=1), "unknown field `weight`"),
        ("unknown mode field", mode(0, jitter=1), "unknown field `jitter`"),
        ("unknown mode", mode(0, mode="drop_rows"), "Invalid value 'drop_rows'"),
        ("seed negative", lambda p: p.update(seed=-1), "seed"),
        ("seed too big", lambda p: p.update(seed=2**64), "seed"),
        ("seed a string", lambda p: p.update(seed="7"), "Expected `int`"),
        ("no faults", lambda p: p.update(faults=[], declared_relaxations=[]), "1 to 64 faults"),
        ("too many faults", lambda p: p.update(faults=[
            {"id": f"f{i}", "cohort_ppm": 1, "fault": {"mode": "rate_limit",
                                                      "max_rejected_presentations": 1}}
            for i in range(65)], declared_relaxations=["submission_acceptance"]),
         "1 to 64 faults"),
        ("empty id", fault(0, id=""), "fault id ''"),
        ("id too long", fault(0, id="a" * 65), "1 to 64 characters"),
        ("id with capitals", fault(0, id="Lag"), "[a-z0-9_-]"),
        ("group with a space", fault(1, group="the book"), "fault group 'the book'"),
        ("ids twice", fault(1, id="lag"), "used twice"),
        ("ppm zero", fault(0, cohort_ppm=0), "cohort_ppm must be 1 to 1000000"),
        ("ppm over a million", fault(0, cohort_ppm=1_000_001), "cohort_ppm must be"),
        ("a group over a million", fault(2, cohort_ppm=600_001), "sum to 1000001"),
        ("parameter zero", mode(0, max_lag_steps=0), "max_lag_steps must be 1 to 64"),
        ("parameter 65", mode(2, max_rejected_presentations=65), "must be 1 to 64"),
        ("declared, unused", lambda p: p["declared_relaxations"].append("complete_results"),
         "declared but used by no fault: complete_results"),
        ("used, undeclared", lambda p: p["declared_relaxations"].remove("read_your_writes"),
         "used but not declared: read_your_writes"),
        ("unknown relaxation", lambda p: p["declared_relaxations"].append("eventual"),
         "Invalid enum value 'eventual'"),
        ("never armable", lambda p: (p["faults"].append(
            {"id": "page", "cohort_ppm": 1, "fault": {"mode": "limit_before_sort",
                                                     "page_size": 10}}),
            p["declared_relaxations"].append("complete_results")),
         "cannot be armed"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "says"), [r[1:] for r in _refusals()], ids=[r[0] for r in _refusals()]
)
def test_every_rule_refuses_the_plan_saying_which(change: Any, says: str) -> None:
    with pytest.raises(FaultPlanError) as refused:
        parse_plan(_bytes(_with(change)))
    assert says in str(refused.value)


def test_malformed_input_is_refused_before_it_is_parsed() -> None:
    for raw, says in (
        (b"{", "not JSON"),
        (b"[]", "Expected `object`"),
        (b" " * (64 * 1024) + _bytes(PLAN), "larger than 65536 bytes"),
    ):
        with pytest.raises(FaultPlanError, match=says):
            parse_plan(raw)
    assert parse_plan(_bytes(PLAN) + b" " * (64 * 1024 - len(_bytes(PLAN))))  # exactly 64 KiB


def test_files_that_are_not_plans_are_refused_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(FaultPlanError, match="no such fault plan file"):
        faultplan.load_plan(tmp_path / "absent.json")
    with pytest.raises(FaultPlanError, match="a folder"):
        faultplan.load_plan(tmp_path)


def test_the_digest_ignores_formatting_and_follows_the_faults_order() -> None:
    plan = parse_plan(_bytes(PLAN))
    spaced = parse_plan(json.dumps(PLAN, indent=4, sort_keys=True).encode())
    assert spaced.sha256 == plan.sha256
    # the digest is taken over the record's compact JSON, fields in their order
    record = json.dumps(plan.record(), separators=(",", ":"))
    assert record.startswith('{"schema_version":"sharpebench.fault-plan.v1","seed":7,')
    assert '{"id":"flip","group":"book","cohort_ppm":400000,"fault":{"mode":"amount_sign"' in record
    import hashlib

    assert plan.sha256 == hashlib.sha256(record.encode()).hexdigest()
    reordered = parse_plan(_bytes(_with(lambda p: p["faults"].reverse())))
    assert reordered.sha256 != plan.sha256
    assert parse_plan(_bytes(_with(lambda p: p.update(seed=8)))).sha256 != plan.sha256


def test_the_draws_reproduce_sharpebenchs_pinned_values() -> None:
    digest, seed, cell = "ab" * 32, 7, (3, 33, 11)
    group = faultplan.draw_u64("group", "book", digest, seed, cell)
    independent = faultplan.draw_u64("independent", "book", digest, seed, cell)
    assert faultplan.scaled(group, faultplan.PPM) == 972610
    assert faultplan.scaled(independent, faultplan.PPM) == 158468


def test_a_group_assigns_at_most_one_fault_per_cell_and_in_proportion() -> None:
    plan = parse_plan(_bytes(PLAN))
    counts = {"flip": 0, "limit": 0, "both": 0}
    for seed in range(2000):
        ids = [f.id for f in faultplan.cohort(plan, (738000, 738030, seed))]
        assert "lag" in ids  # a million ppm: every cell
        book = [i for i in ids if i != "lag"]
        assert len(book) <= 1
        for i in book:
            counts[i] += 1
    # 40% and 60% of the cells, within sampling error, and never both
    assert 700 <= counts["flip"] <= 900 and 1100 <= counts["limit"] <= 1300
    assert counts["flip"] + counts["limit"] == 2000


def test_the_draws_are_pure_and_the_parameters_within_their_bounds() -> None:
    plan = parse_plan(_bytes(PLAN))
    for fault in plan.faults:
        for seed in range(200):
            cell = (738000, 738010, seed)
            at, amount = faultplan.arming(plan, fault, 7, cell)
            assert (at, amount) == faultplan.arming(plan, fault, 7, cell)
            assert 0 <= at < 7 and 1 <= amount <= fault.bound


def test_the_cell_coordinates_are_its_windows_days_and_its_place_in_the_grid() -> None:
    sessions = ["2023-03-01", "2023-03-02", "2023-03-03"]
    start, end, seed = faultplan.cell_coordinates("redacted", "pit", sessions)
    assert (start, end) == (738580, 738583)
    assert seed == 1 * 3 + 2
