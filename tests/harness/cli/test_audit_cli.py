"""``pit-harness audit-reasoning`` as a reader runs it on a published run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.receipt.audit import audit_digest


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def ran(session: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A stub run of the session's config: its folder (receipt and trajectory)."""
    code, _, err = cli(
        capsys,
        "run",
        "--config",
        str(session / "run.json"),
        "--trajectory",
        str(session / "out" / "trajectory.jsonl"),
        "--receipt",
        str(session / "out" / "receipt.json"),
    )
    assert code == 0, err
    return session / "out"


def audit_args(folder: Path, *more: str) -> list[str]:
    return [
        "audit-reasoning",
        "--trajectory",
        str(folder / "trajectory.jsonl"),
        "--bundle",
        str(folder.parent / "release"),
        *more,
    ]


def plant_a_real_date(trajectory: Path) -> None:
    """A real date of the release's first day written into a shifted decision's text
    (the stub was served every row of that day there)."""
    lines = trajectory.read_text().splitlines(keepends=True)
    at = next(
        n
        for n, line in enumerate(lines)
        if '"event":"decision"' in line and '"arm":"shifted"' in line
    )
    lines[at] = lines[at].replace('"text":"stub: ', '"text":"really 2023-03-01; stub: ', 1)
    trajectory.write_text("".join(lines))


def test_it_prints_each_control_cell_and_writes_the_artifact_its_digest_names(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = ran / "audit.json"
    code, out, err = cli(
        capsys, *audit_args(ran, "--receipt", str(ran / "receipt.json"), "--out", str(out_file))
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "receipt ok  the trajectory and the release are the ones it binds"
    cells = [line.split()[0] for line in lines if line.startswith("  ")]
    assert cells == [
        "redacted/leaky", "redacted/dump", "redacted/pit",
        "shifted/leaky", "shifted/dump", "shifted/pit", "shifted/probe",
    ]  # fmt: skip
    assert any(line.startswith("totals ") and "0 real dates on shifted" in line for line in lines)
    digest = next(line.split()[-1] for line in lines if line.startswith("audit digest "))
    assert digest == "sha256:" + hashlib.sha256(out_file.read_bytes()).hexdigest()
    artifact = json.loads(out_file.read_bytes())
    assert audit_digest(artifact) == digest and artifact["totals"]["date_hits"] == 0


def test_a_finding_is_reported_and_is_no_error(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_a_real_date(ran / "trajectory.jsonl")
    code, out, err = cli(capsys, *audit_args(ran, "--json"))
    assert code == 0, err
    printed = json.loads(out)
    assert printed["audit"]["totals"]["date_hits"] == 1
    assert printed["digest"] == audit_digest(printed["audit"])
    [excerpt] = [e for c in printed["audit"]["cells"] for e in c["excerpts"]]
    assert (excerpt["truth"], excerpt["source"]) == ("2023-03-01", "decision")


def test_a_tampered_trajectory_is_refused_given_the_receipt(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_a_real_date(ran / "trajectory.jsonl")
    out_file = ran / "audit.json"
    code, out, _ = cli(
        capsys, *audit_args(ran, "--receipt", str(ran / "receipt.json"), "--out", str(out_file))
    )
    assert code == 1
    assert "trajectory MISMATCH" in out and "audit REFUSED" in out
    assert not out_file.exists()


def test_what_is_not_there_or_no_trajectory_is_a_usage_error(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, *audit_args(ran.parent / "nowhere"))
    assert code == 2 and "--trajectory" in err and "no such file" in err
    code, _, err = cli(
        capsys,
        "audit-reasoning",
        "--trajectory",
        str(ran / "receipt.json"),
        "--bundle",
        str(ran.parent / "release"),
    )
    assert code == 2 and "not a pit-harness trajectory" in err


def test_the_help_names_the_command() -> None:
    text = " ".join(build_parser().format_help().split())
    assert "audit-reasoning" in text and "issuer names (redacted)" in text
