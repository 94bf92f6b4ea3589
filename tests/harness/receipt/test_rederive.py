"""Re-deriving a run's scores from its artifacts."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

from harness import RunConfig, canonical, load_prices, run
from harness.agents import stub
from harness.receipt.build import receipt_text
from harness.receipt.rederive import rederive


def priced_run(release: Path, prices_csv: Path, out: Path) -> Path:
    run(
        stub(),
        RunConfig(
            bundle_path=str(release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-10",
            prices={"path": str(prices_csv), "source": "SYNTHETIC", "pulled_at": "x"},  # type: ignore[arg-type]
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
        ),
    )
    return out


def test_an_honest_run_rederives_cell_by_cell(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    out = priced_run(march_release, march_prices, tmp_path)
    prices = load_prices(march_prices, source="SYNTHETIC", pulled_at="x")
    result = rederive(
        out / "receipt.json",
        trajectory=out / "trajectory.jsonl",
        release=march_release,
        prices=prices,
    )
    assert result.ok, [c for c in result.checks if c.status != "ok"]
    names = [c.name for c in result.checks]
    assert "cell main/pit total_return" in names and "cell shifted/dump trades_sha256" in names
    assert all(c.status == "ok" for c in result.checks)


def test_without_the_price_file_scores_are_skipped_not_passed(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    out = priced_run(march_release, march_prices, tmp_path)
    result = rederive(
        out / "receipt.json", trajectory=out / "trajectory.jsonl", release=march_release
    )
    skipped = [c for c in result.checks if c.status == "skipped"]
    assert [c.name for c in skipped] == ["cell_scores"]
    assert any(c.name.endswith(" trades") and c.status == "ok" for c in result.checks)


def test_a_rehashed_receipt_with_an_inflated_score_is_caught(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    out = priced_run(march_release, march_prices, tmp_path)
    receipt = json.loads((out / "receipt.json").read_text())
    body = receipt["body"]
    cell = next(c for c in body["cells"] if (c["arm"], c["clock"]) == ("main", "pit"))
    cell["total_return"] = cell["total_return"] + 0.05
    (out / "receipt.json").write_text(
        receipt_text(body, receipt["emitted_at"])
    )  # a consistent forgery
    prices = load_prices(march_prices, source="SYNTHETIC", pulled_at="x")
    result = rederive(
        out / "receipt.json",
        trajectory=out / "trajectory.jsonl",
        release=march_release,
        prices=prices,
    )
    assert not result.ok
    assert (
        result.first_mismatch is not None
        and result.first_mismatch.name == "cell main/pit total_return"
    )
    # both figures as a reader compares them, never a float's seventeen digits
    stated = cell["total_return"]
    assert result.first_mismatch.detail.endswith(
        f"the receipt says {stated:+.4%} ({canonical.dumps(stated)})"
    )
    assert re.fullmatch(
        r"re-derived [-+]\d+\.\d{4}% \(-?\d+\.\d{6}\), .*", result.first_mismatch.detail
    )


def test_a_tampered_trajectory_stops_before_scores(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    out = priced_run(march_release, march_prices, tmp_path)
    path = out / "trajectory.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"picks":["r-', b'"picks":["r-', 1)[:-2] + b"\n\n")
    result = rederive(out / "receipt.json", trajectory=path, release=march_release)
    assert result.first_mismatch is not None and result.first_mismatch.name == "trajectory_sha256"
    assert not any(c.name.startswith("cell") for c in result.checks)


def _forge(out: Path, change: Any) -> None:
    receipt = json.loads((out / "receipt.json").read_text())
    change(receipt["body"])
    (out / "receipt.json").write_text(receipt_text(receipt["body"], receipt["emitted_at"]))


def _first_mismatch(out: Path, release: Path, prices_csv: Path | None) -> str | None:
    prices = load_prices(prices_csv, source="SYNTHETIC", pulled_at="x") if prices_csv else None
    result = rederive(
        out / "receipt.json", trajectory=out / "trajectory.jsonl", release=release, prices=prices
    )
    return result.first_mismatch.name if result.first_mismatch else None


def test_forged_contamination_probe_and_config_are_caught(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    cases = {
        "contamination pit main_minus_shifted": lambda b: b["contamination"]["pit"].update(
            main_minus_shifted=0.25
        ),
        "probe verdict": lambda b: b["probe"].update(verdict="mask_leaks"),
        "probe item 3": lambda b: b["probe"]["items"][3]["score"].update(date_recovered=True),
        "body_sha256": lambda b: b["config"].update(model_version="gpt-99"),  # config unbound
        "cells": lambda b: b["cells"].pop(),
    }
    for name, change in cases.items():
        out = priced_run(march_release, march_prices, tmp_path / name.replace(" ", "_"))
        _forge(out, change)
        assert _first_mismatch(out, march_release, march_prices) == name


def test_a_receipt_claiming_valid_over_recorded_egress_is_caught(
    march_release: Path, tmp_path: Path
) -> None:
    import socket

    from harness.agents.adapters.plain import from_callable

    def reaching(prompt: str, tools: Any) -> list[str]:
        with contextlib.suppress(OSError):
            socket.getaddrinfo("example.com", 443)
        return []

    run(
        from_callable(reaching),
        RunConfig(
            bundle_path=str(march_release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-03",
            trajectory_path=str(tmp_path / "trajectory.jsonl"),
            receipt_path=str(tmp_path / "receipt.json"),
        ),
    )
    assert _first_mismatch(tmp_path, march_release, None) is None  # honest: invalid, and says so

    def launder(body: dict[str, Any]) -> None:
        body["valid"] = True
        body["invalidated_by"] = []

    _forge(tmp_path, launder)
    assert _first_mismatch(tmp_path, march_release, None) == "valid"


def _in_process_run(release: Path, out: Path) -> Path:
    def picky(prompt: str, tools: Any) -> list[str]:
        rows = tools.pit_list(limit=2)["rows"]
        return [r["row_key"] for r in rows] + ["not-a-row-key"]  # one rejected per session

    from harness.agents.adapters.plain import from_callable

    run(
        from_callable(picky),
        RunConfig(
            bundle_path=str(release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-03",
            agent_process="in_process",
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
        ),
    )
    return out


def test_claims_beyond_the_scores_are_re_derived_too(march_release: Path, tmp_path: Path) -> None:
    """Each forged and re-hashed, every other hash holding: an in-process run claimed as
    isolated, a rejected pick hidden, the window's sessions changed."""
    out = _in_process_run(march_release, tmp_path)
    assert _first_mismatch(out, march_release, None) is None
    body = json.loads((out / "receipt.json").read_text())["body"]
    assert all(c["rejected_picks"] > 0 for c in body["cells"])

    def isolated(body: dict[str, Any]) -> None:
        body["capabilities"]["agent_process"] = "isolated"

    def no_rejections(body: dict[str, Any]) -> None:
        body["cells"][4]["rejected_picks"] = 0

    def shorter_window(body: dict[str, Any]) -> None:
        body["sessions"] = body["sessions"][1:]

    cell = f"cell {body['cells'][4]['arm']}/{body['cells'][4]['clock']} rejected_picks"
    for change, named in (
        (isolated, "capabilities agent_process"),
        (no_rejections, cell),
        (shorter_window, "sessions"),
    ):
        _forge(out, change)
        assert _first_mismatch(out, march_release, None) == named
        (out / "receipt.json").unlink()
        _in_process_run(march_release, out)
