"""``pit-harness clocks-report`` writes a trajectory and a receipt: never over a run's own
without being told to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main


def _config(tmp_path: Path, release: Path) -> Path:
    path = tmp_path / "run.json"
    path.write_text(
        json.dumps(
            {
                "bundle_path": str(release),
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-03",
                "agent_process": "in_process",
                "trajectory_path": "out/trajectory.jsonl",
                "receipt_path": "out/receipt.json",
            }
        )
    )
    return path


def test_clocks_report_refuses_to_overwrite_a_runs_receipt_and_changes_nothing(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, march_release)
    assert main(["run", "--config", str(config)]) == 0
    receipt, trajectory = tmp_path / "out" / "receipt.json", tmp_path / "out" / "trajectory.jsonl"
    before = receipt.read_bytes(), trajectory.read_bytes()
    capsys.readouterr()
    assert main(["clocks-report", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "already exist: clocks-report would overwrite them" in err
    assert str(receipt) in err and "--force" in err
    assert (receipt.read_bytes(), trajectory.read_bytes()) == before


def test_clocks_report_writes_files_of_its_own_beside_the_run(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, march_release)
    assert main(["run", "--config", str(config)]) == 0
    before = (tmp_path / "out" / "receipt.json").read_bytes()
    own = tmp_path / "clocks"
    argv = ["clocks-report", "--config", str(config)]
    paths = ["--trajectory", str(own / "trajectory.jsonl"), "--receipt", str(own / "receipt.json")]
    assert main(argv + paths) == 0
    assert "clocks-report " in capsys.readouterr().out
    assert (tmp_path / "out" / "receipt.json").read_bytes() == before
    body = json.loads((own / "receipt.json").read_text())["body"]
    assert body["config"]["arms"] == ["main"]
    # asked again for the same files: refused, until --force
    assert main(argv + paths) == 2
    assert main([*argv, *paths, "--force"]) == 0


def test_clocks_report_with_force_replaces_the_runs_files(
    march_release: Path, tmp_path: Path
) -> None:
    config = _config(tmp_path, march_release)
    assert main(["run", "--config", str(config)]) == 0
    assert main(["clocks-report", "--config", str(config), "--force"]) == 0
    body = json.loads((tmp_path / "out" / "receipt.json").read_text())["body"]
    assert body["config"]["arms"] == ["main"]  # the report's, not the run's three
