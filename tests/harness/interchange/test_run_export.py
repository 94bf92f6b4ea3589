"""A real run exported as an Every Eval Ever record: only once it verifies, every figure
the receipt's, the record valid against the vendored schema; a forged or unverifiable
run is refused and nothing is written."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, canonical, run
from harness.agents.baselines import earliest_five
from harness.cli import main
from harness.interchange.every_eval_ever import InterchangeError, Source, problems
from harness.interchange.run_record import VERDICTS, run_record, verified_body
from harness.receipt.build import receipt_text

WHEN = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def priced_run(
    tmp_path_factory: pytest.TempPathFactory, march_release: Path, march_prices: Path
) -> Path:
    """A priced run of a baseline over eight sessions of March 2023, its model declared."""
    out = tmp_path_factory.mktemp("run")
    config = RunConfig(
        bundle_path=str(march_release), forms=("8-K",), start="2023-03-01", end="2023-03-10",
        agent_process="in_process", model_version="example-model-2026-01",
        prices={"path": str(march_prices), "source": "SYNTHETIC test prices",  # type: ignore[arg-type]
                "pulled_at": "generated"},
        trajectory_path=str(out / "trajectory.jsonl"), receipt_path=str(out / "receipt.json"),
    )  # fmt: skip
    run(earliest_five, config)
    return out


def _body(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "receipt.json").read_text(encoding="utf-8"))["body"]  # type: ignore[no-any-return]


def _verified(folder: Path, release: Path, prices: Path | None) -> dict[str, Any]:
    return verified_body(
        folder / "receipt.json",
        trajectory=folder / "trajectory.jsonl",
        bundle=release,
        prices=prices,
    )


def test_a_verified_run_exports_every_figure_of_its_receipt(
    priced_run: Path, march_release: Path, march_prices: Path
) -> None:
    body = _verified(priced_run, march_release, march_prices)
    record = run_record(body, source=Source("Example Lab", "third_party"), retrieved_at=WHEN)
    assert problems(record) == []
    assert record["model_info"]["id"] == "example-model-2026-01"
    assert record["eval_library"] == {
        "name": "pit-harness",
        "version": body["harness"]["version"],
        "additional_details": {"exported_by": f"pit-harness {body['harness']['version']}"},
    }
    details = record["source_metadata"]["additional_details"]
    assert details["run_id"] == body["run_id"]
    assert details["trajectory_sha256"] == body["binding"]["trajectory_sha256"]
    assert details["verification"].startswith("hashes_verified")
    results = {r["evaluation_result_id"]: r for r in record["evaluation_results"]}
    for cell in body["cells"]:
        name = f"pit.cell.{cell['arm']}.{cell['clock']}"
        assert cell["total_return"] is not None
        assert results[f"{name}.total_return"]["score_details"]["score"] == cell["total_return"]
        assert results[f"{name}.trades"]["score_details"]["score"] == cell["trades"]
        reachable = results[f"{name}.total_return"]["score_details"]["details"]["reachable"]
        assert reachable == ("true" if cell["clock"] != "leaky" else "false")
    for clock, delta in body["contamination"].items():
        for control in ("shifted", "redacted"):
            result = results[f"pit.contamination.{clock}.main_minus_{control}"]
            assert result["score_details"]["score"] == delta[f"main_minus_{control}"]
    verdict = results["pit.mask_probe.verdict"]
    assert VERDICTS[verdict["score_details"]["score"]] == body["probe"]["verdict"]
    assert all(
        r["source_data"]["additional_details"]["content_digest"]
        == body["binding"]["bundle_content_digest"]
        for r in record["evaluation_results"]
    )


def test_a_priced_run_is_not_exported_without_its_price_file(
    priced_run: Path, march_release: Path
) -> None:
    with pytest.raises(InterchangeError, match=r"cell_scores skipped.*price file"):
        _verified(priced_run, march_release, None)


def _forged(priced_run: Path, tmp_path: Path) -> Path:
    """The run's receipt with one cell's return raised and its body hash recomputed: the
    hashes hold, the score does not."""
    folder = tmp_path / "forged"
    folder.mkdir()
    (folder / "trajectory.jsonl").write_bytes((priced_run / "trajectory.jsonl").read_bytes())
    body = _body(priced_run)
    body["cells"][4]["total_return"] = 0.5
    data = json.loads((priced_run / "receipt.json").read_text(encoding="utf-8"))
    text = receipt_text(body, data["emitted_at"])
    assert canonical.digest(body) in text  # resealed: body_sha256 matches the forged body
    (folder / "receipt.json").write_text(text, encoding="utf-8")
    return folder


def test_a_forged_receipt_whose_hashes_hold_is_refused(
    priced_run: Path, march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    forged = _forged(priced_run, tmp_path)
    with pytest.raises(InterchangeError, match=r"not verified: cell redacted/dump total_return"):
        _verified(forged, march_release, march_prices)


def test_a_receipt_edited_without_resealing_is_refused(
    priced_run: Path, march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "edited"
    folder.mkdir()
    (folder / "trajectory.jsonl").write_bytes((priced_run / "trajectory.jsonl").read_bytes())
    text = (priced_run / "receipt.json").read_text(encoding="utf-8")
    (folder / "receipt.json").write_text(
        text.replace('"example-model-2026-01"', '"another-model"'), encoding="utf-8"
    )
    with pytest.raises(InterchangeError, match=r"not verified: .*body hashes to"):
        _verified(folder, march_release, march_prices)


def test_a_run_with_another_trajectory_is_refused(
    priced_run: Path, march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "swapped"
    folder.mkdir()
    (folder / "receipt.json").write_bytes((priced_run / "receipt.json").read_bytes())
    lines = (priced_run / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "trajectory.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(InterchangeError, match=r"not verified: trajectory\.jsonl: hashes to"):
        _verified(folder, march_release, march_prices)


def _export(folder: Path, release: Path, prices: Path, out: Path, *extra: str) -> int:
    return main([
        "export-eee", str(folder / "receipt.json"), "--trajectory",
        str(folder / "trajectory.jsonl"), "--bundle", str(release), "--prices", str(prices),
        "--out", str(out), *extra,
    ])  # fmt: skip


def test_the_command_writes_a_valid_record_and_refuses_a_forgery(
    priced_run: Path,
    march_release: Path,
    march_prices: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "record.json"
    assert _export(priced_run, march_release, march_prices, out, "--organization", "Lab") == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert problems(record) == []
    assert record["source_metadata"]["source_organization_name"] == "Lab"
    assert "validated" in capsys.readouterr().out
    refused = tmp_path / "refused.json"
    forged = _forged(priced_run, tmp_path)
    assert _export(forged, march_release, march_prices, refused) == 1
    assert capsys.readouterr().out.startswith("NOT exported: not verified")
    assert not refused.exists()
