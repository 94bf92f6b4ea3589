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


# -- sharpebench's own fixtures: its sample plan and the cases its tests hold ----------


def _spec(id: str, group: str | None, ppm: int, mode: str, bound: int) -> dict[str, Any]:
    parameter = faultplan.MODES[mode][0]
    fault: dict[str, Any] = {"id": id, "cohort_ppm": ppm, "fault": {"mode": mode, parameter: bound}}
    if group is not None:
        fault["group"] = group
    return fault


def _sample(seed: int = 7, **changes: Any) -> dict[str, Any]:
    """sharpebench's sample plan: a lag and a sign fault sharing the group "book", and an
    independent rate limit."""
    return {
        "schema_version": "sharpebench.fault-plan.v1",
        "seed": seed,
        "declared_relaxations": [
            "submission_acceptance", "read_your_writes", "position_sign_convention"
        ],
        "faults": [
            _spec("lag", "book", 400_000, "projection_lag", 3),
            _spec("sign", "book", 300_000, "amount_sign", 2),
            _spec("limit", None, 500_000, "rate_limit", 4),
        ],
        **changes,
    }  # fmt: skip


def test_sharpebenchs_sample_plan_digest_ignores_formatting_and_declaration_order() -> None:
    plan = parse_plan(_bytes(_sample()))
    assert parse_plan(json.dumps(_sample(), indent=2).encode()).sha256 == plan.sha256
    listed = _sample(declared_relaxations=[
        "position_sign_convention", "read_your_writes", "submission_acceptance",
        "read_your_writes",
    ])  # fmt: skip
    assert parse_plan(_bytes(listed)).sha256 == plan.sha256


def test_every_field_of_sharpebenchs_sample_plan_is_bound_into_the_digest() -> None:
    def edited(change: Any) -> str:
        plan = _sample()
        change(plan["faults"])
        return parse_plan(_bytes(plan)).sha256

    digests = [
        parse_plan(_bytes(_sample())).sha256,
        parse_plan(_bytes(_sample(seed=8))).sha256,
        edited(lambda f: f[0].update(id="lag2")),
        edited(lambda f: f[0].update(group="other")),
        edited(lambda f: f[2].update(group="solo")),
        edited(lambda f: f[0].update(cohort_ppm=400_001)),
        edited(lambda f: f[0]["fault"].update(max_lag_steps=4)),
        edited(lambda f: f[1]["fault"].update(max_span_steps=3)),
        edited(lambda f: f[2]["fault"].update(max_rejected_presentations=5)),
        edited(lambda f: f.insert(0, f.pop(1))),
    ]
    assert len(set(digests)) == len(digests)


def test_sharpebenchs_malformed_plans_are_refused() -> None:
    lag = lambda ppm, id="a": _spec(id, None, ppm, "projection_lag", 2)  # noqa: E731
    ryw = ["read_your_writes"]

    def plan(declared: list[str], faults: list[dict[str, Any]]) -> bytes:
        return _bytes({**PLAN, "seed": 1, "declared_relaxations": declared, "faults": faults})

    refused = [
        plan([], []),  # no fault, so nothing declared: the count is what is refused
        plan(ryw, [lag(0)]),
        plan(ryw, [lag(1_000_001)]),
        plan(ryw, [lag(1), lag(1)]),
        plan([], [lag(1)]),  # undeclared
        plan([*ryw, "submission_acceptance"], [lag(1)]),  # declared, used by nothing
        plan(ryw, [lag(1, id="Upper Case")]),
        plan(ryw, [_spec("a", None, 1, "projection_lag", 65)]),
        plan(
            ryw,
            [
                _spec("a", "g", 600_000, "projection_lag", 1),
                _spec("b", "g", 600_000, "projection_lag", 1),
            ],
        ),
        plan(
            ryw,
            [
                {
                    "id": "a",
                    "cohort_ppm": 1,
                    "fault": {"mode": "projection_lag", "max_lag_steps": 1, "extra": 1},
                }
            ],
        ),
        _bytes({**json.loads(plan(ryw, [lag(1)])), "schema_version": "v0"}),
    ]
    for raw in refused:
        with pytest.raises(FaultPlanError):
            parse_plan(raw)
    assert parse_plan(plan(ryw, [lag(1)]))
    with pytest.raises(FaultPlanError, match="1 to 64 faults"):
        parse_plan(refused[0])
    page = plan(["complete_results"], [_spec("page", None, 1_000_000, "limit_before_sort", 10)])
    with pytest.raises(FaultPlanError, match="row 29"):
        parse_plan(page)


def test_sharpebenchs_grid_keeps_a_group_exclusive_and_each_rate_within_its_tolerance() -> None:
    plan = parse_plan(_bytes(_sample()))
    cells = [(w * 10, w * 10 + 30, seed) for w in range(40) for seed in range(25)]
    assigned = {"lag": 0, "sign": 0, "limit": 0}
    for cell in cells:
        ids = [f.id for f in faultplan.cohort(plan, cell)]
        assert len([i for i in ids if i in ("lag", "sign")]) <= 1
        for i in ids:
            assigned[i] += 1
    for fault in plan.faults:
        observed = assigned[fault.id] / len(cells)
        assert abs(observed - fault.cohort_ppm / faultplan.PPM) < 0.06, fault.id
    # only the digest moves an assignment: another digest string assigns some cell otherwise
    other = "0" * 64
    assert any(
        faultplan.draw_u64("group", "book", plan.sha256, 7, cell)
        != faultplan.draw_u64("group", "book", other, 7, cell)
        for cell in cells
    )
