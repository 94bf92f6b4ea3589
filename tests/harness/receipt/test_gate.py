"""The gate: a run's receipt judged against a baseline's, over real runs of a small
synthetic release (in the harness's process, priced with a market that moves on news)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness.agents import stub
from harness.agents.baselines import date_reader
from harness.market.prices import load_prices
from harness.receipt.build import ReceiptError
from harness.receipt.gate import GateResult, gate
from harness.receipt.model import Probe, ReceiptBody
from harness.receipt.rescore import rescore
from harness.receipt.verify import sound_body
from tests.support.data import build_release
from tests.support.gated import SOURCE, gated_run, remembering


@pytest.fixture(scope="module")
def receipts(
    tmp_path_factory: pytest.TempPathFactory, march_release: Path, march_news_prices: Path
) -> dict[str, Path]:
    """Each run's receipt by name: the stub (the baseline), a mask-leaking agent, the
    memory cheat, the stub with its model declared (no protocol gap), the stub unpriced."""
    made = {}
    for name, agent, prices, extra in (
        ("stub", stub(), march_news_prices, {}),
        ("leaks", date_reader, march_news_prices, {}),
        ("cheat", remembering(march_release, march_news_prices), march_news_prices, {}),
        (
            "declared",
            stub(),
            march_news_prices,
            {"model_version": "stub-1", "training_cutoff": "2021-09-30"},
        ),
        ("unpriced", stub(), None, {}),
        ("short", stub(), march_news_prices, {"end": "2023-03-09"}),
    ):
        made[name] = gated_run(tmp_path_factory.mktemp(name), march_release, prices, agent, **extra)
    return made


def body(receipts: dict[str, Path], name: str) -> ReceiptBody:
    return sound_body(receipts[name])


def failed(result: GateResult) -> list[str]:
    return [r.name for r in result.failed]


def test_a_baseline_against_itself_passes_every_rule(receipts: dict[str, Path]) -> None:
    stub_body = body(receipts, "stub")
    result = gate(
        stub_body,
        stub_body,
        max_contamination=0.0,
        require_mask_holds=True,
        max_return_drop=0.0,
        audit={"totals": {"texts": 3, "date_hits": 0, "issuer_hits": 0, "cells_with_hits": 0}},
    )
    assert result.passed and not result.void, [r.message for r in result.failed]
    names = [r.name for r in result.rules]
    assert names[:2] == ["comparable", "valid"]
    assert {"contamination", "mask", "protocol_gaps", "return_drop", "reasoning_audit"} <= set(
        names
    )
    # every clock and control arm is judged, and says its delta and that it has no interval
    contamination = [r for r in result.rules if r.name == "contamination"]
    assert [r.subject for r in contamination] == [
        f"{c} main_minus_{a}" for c in ("leaky", "dump", "pit") for a in ("shifted", "redacted")
    ]
    assert all("no interval" in r.message and r.interval is None for r in contamination)


def test_a_mask_leaking_run_fails_naming_the_mask(receipts: dict[str, Path]) -> None:
    leaks, baseline = body(receipts, "leaks"), body(receipts, "stub")
    assert leaks.probe.verdict == "mask_leaks" and baseline.probe.verdict == "mask_holds"
    required = gate(leaks, baseline, require_mask_holds=True, max_contamination=0.02)
    assert failed(required) == ["mask"]
    [mask] = required.failed
    assert "mask_leaks" in mask.message and "10 of 10" in mask.message
    # without --require-mask-holds, a mask that held and leaks now is a regression
    assert failed(gate(leaks, baseline)) == ["mask"]


def test_a_leaking_baseline_is_no_regression_unless_the_mask_is_required(
    receipts: dict[str, Path],
) -> None:
    leaks = body(receipts, "leaks")
    assert gate(leaks, leaks).passed
    assert failed(gate(leaks, leaks, require_mask_holds=True)) == ["mask"]


def test_a_probe_that_did_not_run_fails_a_required_mask(receipts: dict[str, Path]) -> None:
    stub_body = body(receipts, "stub")
    silent = msgspec.structs.replace(
        stub_body, probe=Probe(arm="shifted", status="not_run", items=[])
    )
    result = gate(silent, stub_body, require_mask_holds=True)
    assert failed(result) == ["mask"]
    assert "did not run (status not_run)" in result.failed[0].message


def test_a_gap_the_baseline_closed_fails_protocol_gaps(receipts: dict[str, Path]) -> None:
    run_body, baseline = body(receipts, "stub"), body(receipts, "declared")
    assert baseline.protocol_gaps == [] and run_body.protocol_gaps
    result = gate(run_body, baseline)
    assert failed(result) == ["protocol_gaps"]
    [gaps] = result.failed
    assert gaps.items == ["P1_model_version", "P2_training_cutoffs"]
    assert "P1_model_version" in gaps.message
    # the other way round a gap is closed, which is no failure
    assert gate(baseline, run_body).passed


def test_another_release_makes_the_comparison_void(
    receipts: dict[str, Path], tmp_path: Path, march_news_prices: Path
) -> None:
    other = build_release(tmp_path / "other", end=date(2023, 3, 31), seed=12, rows=12_000)
    theirs = sound_body(gated_run(tmp_path / "run", other, march_news_prices, stub()))
    result = gate(theirs, body(receipts, "stub"), require_mask_holds=True, max_contamination=0.02)
    assert result.void and not result.passed
    [rule] = result.rules  # nothing else is judged
    assert rule.name == "comparable" and not rule.ok
    assert rule.items[0].startswith("release: run sha256:")
    assert theirs.binding.bundle_content_digest in rule.message


def test_another_window_makes_the_comparison_void(receipts: dict[str, Path]) -> None:
    result = gate(body(receipts, "short"), body(receipts, "stub"))
    assert result.void
    assert result.rules[0].items == [
        "window: run 2023-03-01..2023-03-09, baseline 2023-03-01..2023-03-10"
    ]


def test_prices_count_for_comparison_only_when_returns_are_compared(
    receipts: dict[str, Path],
) -> None:
    unpriced, priced = body(receipts, "unpriced"), body(receipts, "stub")
    assert not gate(unpriced, priced).void
    void = gate(unpriced, priced, max_return_drop=0.01)
    assert void.void and void.rules[0].items[0].startswith("prices: run none, baseline sha256:")


def test_an_unpriced_delta_is_said_and_not_judged(receipts: dict[str, Path]) -> None:
    unpriced = body(receipts, "unpriced")
    result = gate(unpriced, unpriced, max_contamination=0.0)
    assert result.passed
    contamination = [r for r in result.rules if r.name == "contamination"]
    assert contamination and all(
        r.value is None and "no priced trade" in r.message for r in contamination
    )


def test_contamination_above_its_limit_fails_saying_the_delta(
    receipts: dict[str, Path], march_release: Path, march_news_prices: Path
) -> None:
    cheat, baseline = body(receipts, "cheat"), body(receipts, "stub")
    delta = cheat.contamination["pit"].main_minus_shifted
    assert delta is not None and delta > 0.005
    result = gate(cheat, baseline, max_contamination=delta / 2)
    assert "contamination" in failed(result)
    pit = next(r for r in result.failed if r.subject == "pit main_minus_shifted")
    assert f"{delta * 100:+.2f} pp" in pit.message and "above the limit" in pit.message
    assert "no interval" in pit.message and pit.value == delta
    assert gate(cheat, baseline, max_contamination=delta * 2).passed

    # with the run's trades re-derived and priced, the interval is said
    figures = rescore(
        receipts["cheat"],
        trajectory=receipts["cheat"].parent / "trajectory.jsonl",
        release=march_release,
        prices=load_prices(march_news_prices, source=SOURCE, pulled_at="generated"),
    )
    intervals = figures.delta_intervals()
    low, high = intervals["pit"]["main_minus_shifted"] or [0.0, 0.0]
    with_interval = gate(cheat, baseline, max_contamination=delta / 2, intervals=intervals)
    pit = next(r for r in with_interval.failed if r.subject == "pit main_minus_shifted")
    assert pit.interval == [low, high]
    assert f"(95% [{low * 100:+.2f}, {high * 100:+.2f}] pp): above the limit" in pit.message
    assert "reaches" not in pit.message  # the interval lies wholly above the limit
    # a limit inside the interval: the delta fails, and the message says chance reaches it
    across = gate(cheat, baseline, max_contamination=(low + delta) / 2, intervals=intervals)
    pit = next(r for r in across.failed if r.subject == "pit main_minus_shifted")
    assert pit.message.endswith("; its interval reaches below it")


def test_a_return_drop_beyond_its_tolerance_fails(receipts: dict[str, Path]) -> None:
    cheat, stub_body = body(receipts, "cheat"), body(receipts, "stub")
    before = next(c.total_return for c in cheat.cells if (c.arm, c.clock) == ("main", "pit"))
    now = next(c.total_return for c in stub_body.cells if (c.arm, c.clock) == ("main", "pit"))
    assert before is not None and now is not None and before - now > 0.002
    drop = before - now
    result = gate(stub_body, cheat, max_return_drop=drop / 2)  # the cheat as the baseline
    assert "return_drop" in failed(result)
    pit = next(r for r in result.failed if r.subject == "main/pit")
    assert f"a drop of {drop * 100:.2f} pp, beyond the tolerance" in pit.message
    assert not any(
        r.name == "return_drop" for r in gate(stub_body, cheat, max_return_drop=drop * 2).failed
    )
    # a better run never fails on returns
    assert gate(cheat, stub_body, max_return_drop=0.0).passed


def test_an_invalid_baseline_fails_valid(receipts: dict[str, Path]) -> None:
    stub_body = body(receipts, "stub")
    broken = msgspec.structs.replace(
        stub_body,
        valid=False,
        invalidated_by=["network_egress: connect 192.0.2.1:80 at agent.py:3"],
    )
    result = gate(stub_body, broken)
    assert failed(result) == ["valid"]
    assert "the baseline is invalid (network_egress" in result.failed[0].message


def _audit(date_hits: int, issuer_hits: int) -> dict[str, Any]:
    """An artifact of the reasoning audit's shape (``harness.receipt.audit``), made up."""
    hits = {"date_hits": date_hits, "issuer_hits": issuer_hits}
    return {
        "totals": {"texts": 40, **hits, "cells_with_hits": 1 if date_hits + issuer_hits else 0},
        "cells": [
            {"arm": "shifted", "clock": "probe", "texts": 10, **hits, "excerpts": []},
            {"arm": "shifted", "clock": "pit", "texts": 30, "date_hits": 0, "issuer_hits": 0},
        ],
    }


def test_reasoning_audit_hits_above_the_limit_fail(receipts: dict[str, Path]) -> None:
    stub_body = body(receipts, "stub")
    result = gate(stub_body, stub_body, audit=_audit(2, 1))
    assert failed(result) == ["reasoning_audit"]
    [audit] = result.failed
    assert audit.value == 3 and audit.items == ["shifted/probe 3"]
    assert "3 hits (2 real dates, 1 real issuers) in 1 cell over 40 texts" in audit.message
    assert gate(stub_body, stub_body, audit=_audit(2, 1), max_audit_hits=3).passed
    assert gate(stub_body, stub_body, audit=_audit(0, 0)).passed


def test_a_forged_receipt_is_refused(receipts: dict[str, Path], tmp_path: Path) -> None:
    data = json.loads(receipts["leaks"].read_text())
    data["body"]["probe"]["verdict"] = "mask_holds"  # the body edited, its hash not
    forged = tmp_path / "receipt.json"
    forged.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n")
    with pytest.raises(ReceiptError, match="body hashes to"):
        sound_body(forged)


def test_the_result_is_json_with_its_rules(receipts: dict[str, Path]) -> None:
    stub_body = body(receipts, "stub")
    plain = gate(stub_body, stub_body, max_contamination=0.02).to_json()
    assert set(plain) == {"passed", "void", "rules"}
    assert set(plain["rules"][0]) == {
        "name", "ok", "message", "subject", "value", "baseline", "limit", "interval", "items",
    }  # fmt: skip
