"""Re-deriving a run's scores from its artifacts."""

from __future__ import annotations

import json
from pathlib import Path

from harness import RunConfig, load_prices, run
from harness.agents import stub
from harness.receipt import receipt_text
from harness.rederive import rederive


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


def test_a_tampered_trajectory_stops_before_scores(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    out = priced_run(march_release, march_prices, tmp_path)
    path = out / "trajectory.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"picks":["r-', b'"picks":["r-', 1)[:-2] + b"\n\n")
    result = rederive(out / "receipt.json", trajectory=path, release=march_release)
    assert result.first_mismatch is not None and result.first_mismatch.name == "trajectory_sha256"
    assert not any(c.name.startswith("cell") for c in result.checks)
