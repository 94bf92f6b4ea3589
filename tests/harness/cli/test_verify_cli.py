"""The command line as a newcomer uses it: synth, run, verify, export, and errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main

REPO = Path(__file__).resolve().parents[3]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_session(capsys: pytest.CaptureFixture[str], folder: Path, name: str = "a") -> str:
    code, out, err = cli(
        capsys,
        "run",
        "--config",
        str(folder / "run.json"),
        "--trajectory",
        str(folder / name / "trajectory.jsonl"),
        "--receipt",
        str(folder / name / "receipt.json"),
    )
    assert code == 0, err
    return out


def verify_args(folder: Path, name: str = "a") -> list[str]:
    return [
        "verify",
        str(folder / name / "receipt.json"),
        "--trajectory",
        str(folder / name / "trajectory.jsonl"),
        "--bundle",
        str(folder / "release"),
    ]


def test_run_prints_the_seed_shaped_summary(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_session(capsys, session).splitlines()
    assert out[0].startswith("run ") and "valid=True" in out[0] and "receipt sha256:" in out[0]
    assert out[1].startswith("trajectory sha256:") and " events " in out[1]
    cells = out[2:11]
    assert [c.split()[:2] for c in cells] == [
        [a, c] for a in ("main", "redacted", "shifted") for c in ("leaky", "dump", "pit")
    ]
    assert all("total_return      n/a" in c for c in cells)
    assert all(c.endswith("reachable=False") == (" leaky " in c) for c in cells)
    assert out[11].strip().startswith("probe shifted") and "recovered" in out[11]
    assert out[12].strip() == "protocol gaps: P1_model_version, P2_training_cutoffs"
    assert out[13].strip().startswith("capabilities: agent_process=")


def test_verify_passes_with_the_seed_four_lines_and_the_scores_re_derived(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)
    code, out, _ = cli(capsys, *verify_args(session))
    lines = out.splitlines()
    assert code == 0
    assert [line.split()[0] for line in lines] == [
        "body_sha256",
        "run_valid",
        "trajectory",
        "bundle",
        "scores",
    ]
    assert lines[4] == "scores re-derived ok"
    assert lines[0].startswith("body_sha256 ok  sha256:")
    assert lines[1] == "run_valid True  protocol_complete False"
    assert lines[2].startswith("trajectory ok  sha256:")
    assert lines[3].startswith("bundle content_digest ok  sha256:")


def test_second_run_in_another_folder_has_the_same_body_sha(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run_session(capsys, session, "a").split()[4]
    second = run_session(capsys, session, "b").split()[4]
    assert first == second and first.startswith("sha256:")
    a = json.loads((session / "a" / "receipt.json").read_text())
    b = json.loads((session / "b" / "receipt.json").read_text())
    assert a["body"] == b["body"]


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] = ord("7") if data[offset] != ord("7") else ord("8")
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_one_tampered_trajectory_byte_fails_naming_the_file(
    session: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    run_session(capsys, session)
    path = session / "a" / "trajectory.jsonl"
    size = path.stat().st_size
    flip(path, {"start": 30, "middle": size // 2, "end": size - 5}[where])
    code, out, _ = cli(capsys, *verify_args(session))
    assert code == 1
    assert "trajectory MISMATCH  trajectory.jsonl:" in out


def test_one_tampered_receipt_body_byte_fails_naming_the_receipt(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)
    path = session / "a" / "receipt.json"
    text = path.read_text()
    at = text.index('"rows_served":') + len('"rows_served":')
    flip(path, at)
    code, out, _ = cli(capsys, *verify_args(session))
    assert code == 1
    assert "body_sha256 MISMATCH  receipt.json: body hashes to" in out


def test_whitespace_added_to_the_receipt_is_caught(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)
    path = session / "a" / "receipt.json"
    path.write_text(path.read_text().replace('"valid":true', '"valid": true', 1))
    code, out, _ = cli(capsys, *verify_args(session))
    assert code == 1 and "canonical receipt layout" in out


def _reseal(path: Path, edit: Any) -> None:
    """A forger's receipt: the body edited, then hashed and laid out again, so every hash
    holds and only re-derivation can tell."""
    from harness.receipt.build import receipt_text

    data = json.loads(path.read_text())
    edit(data["body"])
    path.write_text(receipt_text(data["body"], data["emitted_at"]))


def test_a_resealed_receipt_with_one_score_edited_fails_verify_naming_the_field(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)

    def more_trades(body: dict[str, Any]) -> None:
        body["cells"][1]["trades"] += 1

    _reseal(session / "a" / "receipt.json", more_trades)
    code, out, _ = cli(capsys, *verify_args(session), "--hashes-only")
    assert code == 0 and "body_sha256 ok" in out and "scores SKIPPED" in out
    code, out, _ = cli(capsys, *verify_args(session))
    assert code == 1
    [last] = out.splitlines()[-1:]
    assert last.startswith("scores MISMATCH  ") and "main/dump" in last, last


def test_verify_without_the_trajectory_says_the_scores_were_not_re_derived(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)
    code, out, _ = cli(capsys, "verify", str(session / "a" / "receipt.json"))
    assert code == 0 and out.splitlines()[-1].startswith("scores SKIPPED  (pass --trajectory")


def test_receipt_claiming_valid_after_egress_fails(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)
    path = session / "a" / "receipt.json"
    path.write_text(path.read_text().replace('"egress_attempts":0', '"egress_attempts":1', 1))
    code, out, _ = cli(capsys, *verify_args(session))
    assert code == 1 and "body_sha256 MISMATCH" in out


def test_one_tampered_release_byte_fails_naming_the_file(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_session(capsys, session)
    flip(session / "release" / "shifted.jsonl", 1000)
    code, out, _ = cli(capsys, *verify_args(session))
    assert code == 1
    assert "bundle content_digest MISMATCH" in out and "shifted.jsonl" in out


def test_another_release_is_named_as_another_release(
    session: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    run_session(capsys, session)
    other = tmp_path_factory.mktemp("other") / "release"
    code, _, _ = cli(
        capsys,
        "release",
        "synth",
        "--out",
        str(other),
        "--start",
        "2023-03-01",
        "--end",
        "2023-03-31",
        "--seed",
        "99",
        "--rows",
        "500",
    )
    assert code == 0
    args = verify_args(session)
    args[-1] = str(other)
    code, out, _ = cli(capsys, *args)
    assert code == 1 and "another release" in out


def test_another_runs_trajectory_fails(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_session(capsys, session, "a")
    config = json.loads((session / "run.json").read_text())
    (session / "run.json").write_text(json.dumps({**config, "hold_sessions": 3}))
    run_session(capsys, session, "b")
    args = verify_args(session, "a")
    args[3] = str(session / "b" / "trajectory.jsonl")
    code, out, _ = cli(capsys, *args)
    assert code == 1 and "trajectory MISMATCH" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"bundle_path": "release", "colour": "blue"}', "unknown key(s) colour"),
        ('{"bundle_path": "release", "clocks": ["pit", "sundial"]}', "clocks:"),
        ('{"bundle_path": "release", "hold_sessions": "five"}', "hold_sessions"),
        ('{"bundle_path": "nowhere"}', "is not a folder"),
        ('{"bundle_path": "release", "forms": ["8-Q"]}', "form(s) 8-Q not in release"),
        ('{"bundle_path": "release", "start": "2023-02-30"}', "is not a date"),
        ('{"bundle_path": "release", "network_policy": "allow"}', "network_policy"),
        ('{"bundle_path": "release", "prices": {"path": "p.csv"}}', "prices.source"),
        ('{"bundle_path": "release", "agent": "no_such_module:agent"}', "no module named"),
    ],
)
def test_bad_config_is_one_clear_line_and_exit_2(
    session: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    (session / "run.json").write_text(content)
    code, _, err = cli(capsys, "run", "--config", str(session / "run.json"))
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (session / "receipt.json").exists()


def test_verify_of_a_non_receipt_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "r.json").write_bytes(b"\xff\xfe not json")
    code, _, err = cli(capsys, "verify", str(tmp_path / "r.json"))
    assert code == 2 and "not a JSON receipt" in err


def test_export_writes_samples_for_inspect_and_promptfoo(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = session / "samples.jsonl"
    code, _, err = cli(
        capsys,
        "export",
        "--bundle",
        str(session / "release"),
        "--arm",
        "shifted",
        "--clock",
        "pit",
        "--out",
        str(out),
        "--forms",
        "8-K",
        "--start",
        "2023-03-01",
        "--end",
        "2023-03-10",
    )
    assert code == 0, err
    text = out.read_text()
    samples = [json.loads(x) for x in text.splitlines()]
    assert len(samples) == 9  # eight sessions in the window and the one after it
    for sample in samples:
        assert set(sample) == {"id", "input", "target", "metadata", "vars"}
        assert isinstance(sample["input"], str) and sample["vars"]["prompt"] == sample["input"]
        assert sample["metadata"]["session_date"].startswith("2033-")
        assert "tools" not in sample
    assert "2023" not in text  # the shifted arm's samples never carry the real year


def test_synth_is_byte_identical_for_the_same_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("x", "y"):
        code, _, _ = cli(
            capsys,
            "release",
            "synth",
            "--out",
            str(tmp_path / name),
            "--start",
            "2022-11-01",
            "--end",
            "2022-12-31",
            "--seed",
            "4",
            "--rows",
            "3000",
        )
        assert code == 0
    for file in ("manifest.json", "index.json", "main.jsonl", "redacted.jsonl", "shifted.jsonl"):
        assert (tmp_path / "x" / file).read_bytes() == (tmp_path / "y" / file).read_bytes()


def test_help_lists_every_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    for command in ("release", "prices", "run", "verify", "export"):
        assert command in out


def test_harness_imports_no_django() -> None:
    code = (
        "import sys, harness, harness.cli, harness.runs.runner, harness.receipt.verify, harness.runs.export, "
        "harness.release.edgar, harness.release.synth\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework', 'celery', 'pitweb'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    # the site is named in words (a submitter's token file, ``pit-harness submit``'s help),
    # never imported
    sources = "\n".join(p.read_text() for p in (REPO / "harness").rglob("*.py"))
    imports = re.compile(r"^\s*(?:import|from)\s+(?:django|rest_framework|celery|pitweb)\b", re.M)
    assert imports.findall(sources) == []


def test_relative_paths_in_run_json_are_relative_to_the_file(
    session: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    config = json.loads((session / "run.json").read_text())
    config.update(trajectory_path="out/t.jsonl", receipt_path="out/r.json")
    (session / "run.json").write_text(json.dumps(config))
    elsewhere = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(elsewhere)
    code, _, err = cli(capsys, "run", "--config", str(session / "run.json"))
    assert code == 0, err
    assert (session / "out" / "r.json").exists() and (session / "out" / "t.jsonl").exists()
    assert not (elsewhere / "out").exists()


def test_release_build_from_edgar_index_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = Path(__file__).parents[1] / "fixtures" / "edgar"
    tickers = tmp_path / "tickers.json"
    tickers.write_text("{}")
    code, out, err = cli(
        capsys,
        "release",
        "build",
        "--edgar-index",
        str(fixtures / "master.idx"),
        "--acceptance",
        str(fixtures / "headers.txt"),
        "--tickers",
        str(tickers),
        "--name",
        "edgar-fixture",
        "--out",
        str(tmp_path / "release"),
    )
    assert code == 0, err
    assert out.startswith("release edgar-fixture  rows ")
    code, out, _ = cli(
        capsys,
        "export",
        "--bundle",
        str(tmp_path / "release"),
        "--arm",
        "main",
        "--clock",
        "pit",
        "--out",
        str(tmp_path / "s.jsonl"),
    )
    assert code == 0


def test_release_build_with_a_broken_index_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "master.idx"
    bad.write_text(
        "Description: Master Index\n\nCIK|Company Name|Form Type|Date Filed|Filename\n---\n1|A|8-K|2023-02-30|edgar/data/1/0000000001-23-000001.txt\n"
    )
    code, _, err = cli(
        capsys,
        "release",
        "build",
        "--edgar-index",
        str(bad),
        "--name",
        "x",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "line 5" in err and "Traceback" not in err
    assert not (tmp_path / "r" / "manifest.json").exists()
