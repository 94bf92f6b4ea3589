"""``pit-harness gate``: its exit codes, its lines and its JSON, over real runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness import canonical
from harness.agents import stub
from harness.agents.baselines import date_reader
from harness.cli import main
from harness.outcomes import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, EXIT_VOID
from harness.receipt.build import receipt_text
from tests.support.gated import gated_run, remembering


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, march_release: Path, march_news_prices: Path
) -> dict[str, Path]:
    """Receipts by name, each with its trajectory beside it."""
    out = tmp_path_factory.mktemp("gate")
    return {
        "stub": gated_run(out / "stub", march_release, march_news_prices, stub()),
        "leaks": gated_run(out / "leaks", march_release, march_news_prices, date_reader),
        "cheat": gated_run(
            out / "cheat",
            march_release,
            march_news_prices,
            remembering(march_release, march_news_prices),
        ),
        "short": gated_run(
            out / "short", march_release, march_news_prices, stub(), end="2023-03-09"
        ),
    }


def gate(*args: str | Path) -> int:
    return main(["gate", *map(str, args)])


def test_a_baseline_against_itself_exits_0(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = gate(
        runs["stub"],
        "--baseline",
        runs["stub"],
        "--require-mask-holds",
        "--max-contamination",
        "0.02",
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == EXIT_OK
    assert all(line.startswith("PASS  ") for line in lines[:-1])
    assert lines[-1] == f"gate PASSED: {len(lines) - 1} rules hold"


def test_a_leaking_run_exits_1_naming_the_mask(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = gate(runs["leaks"], "--baseline", runs["stub"], "--require-mask-holds")
    lines = capsys.readouterr().out.splitlines()
    assert code == EXIT_MISMATCH
    assert [line.split()[1] for line in lines if line.startswith("FAIL")] == ["mask"]
    assert lines[-1].startswith("gate FAILED: mask (1 of ")


def test_runs_that_are_not_comparable_exit_with_the_void_code(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = gate(runs["short"], "--baseline", runs["stub"], "--require-mask-holds")
    lines = capsys.readouterr().out.splitlines()
    assert code == EXIT_VOID == 5
    assert (
        lines[0].startswith("VOID  comparable  ")
        and "window: run 2023-03-01..2023-03-09" in lines[0]
    )
    assert len(lines) == 2 and lines[-1].startswith("gate VOID")


def test_json_is_one_canonical_object_and_nothing_else(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = gate(runs["leaks"], "--baseline", runs["stub"], "--max-contamination", "0.02", "--json")
    out = capsys.readouterr().out
    document = json.loads(out)
    assert code == EXIT_MISMATCH
    assert out == canonical.dumps(document) + "\n"
    assert set(document) == {"passed", "void", "rules"}
    assert document["passed"] is False and document["void"] is False
    assert [r["name"] for r in document["rules"] if not r["ok"]] == ["mask"]
    pit = next(r for r in document["rules"] if r["subject"] == "pit main_minus_shifted")
    assert pit["limit"] == 0.02 and pit["interval"] is None


def test_void_json_says_void(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert gate(runs["short"], "--baseline", runs["stub"], "--json") == EXIT_VOID
    document = json.loads(capsys.readouterr().out)
    assert document["void"] is True and [r["name"] for r in document["rules"]] == ["comparable"]


def test_with_the_runs_files_each_delta_has_its_interval(
    runs: dict[str, Path],
    march_release: Path,
    march_news_prices: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cheat = runs["cheat"]
    code = gate(
        cheat, "--baseline", runs["stub"], "--max-contamination", "0.001",
        "--trajectory", cheat.parent / "trajectory.jsonl", "--bundle", march_release,
        "--prices", march_news_prices, "--max-audit-hits", "1000", "--json",
    )  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert code == EXIT_MISMATCH
    pit = next(r for r in document["rules"] if r["subject"] == "pit main_minus_shifted")
    assert pit["ok"] is False and len(pit["interval"]) == 2
    low, high = pit["interval"]
    assert low <= pit["value"] <= high and "95% [" in pit["message"]
    assert any(r["name"] == "reasoning_audit" for r in document["rules"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nowhere.json", "--baseline", "{stub}"], "receipt nowhere.json: no such file"),
        (["{stub}", "--baseline", "nowhere.json"], "--baseline nowhere.json: no such file"),
        (["{stub}", "--baseline", "{stub}", "--trajectory", "{trajectory}"], "go together"),
        (["{stub}", "--baseline", "{stub}", "--prices", "{prices}"], "needs the run's"),
    ],
)
def test_usage_errors_exit_2(
    runs: dict[str, Path],
    march_news_prices: Path,
    args: list[str],
    said: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    named = {
        "stub": runs["stub"],
        "trajectory": runs["stub"].parent / "trajectory.jsonl",
        "prices": march_news_prices,
    }
    assert gate(*[a.format(**named) for a in args]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert said in captured.err and captured.out == ""


def test_a_file_that_is_not_a_receipt_exits_2(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.json").write_text('{"body": {}}\n')
    assert gate(runs["stub"], "--baseline", tmp_path / "notes.json") == EXIT_USAGE
    assert "a receipt holds exactly body, body_sha256 and emitted_at" in capsys.readouterr().err


def _forged(receipt: Path, out: Path, *, rehash: bool) -> Path:
    """The leaking run's receipt claiming its mask held: its hash left as it was, or the
    body hashed again (a consistent forgery only the trajectory can catch)."""
    data = json.loads(receipt.read_text())
    data["body"]["probe"]["verdict"] = "mask_holds"
    out.mkdir()
    shutil.copy(receipt.parent / "trajectory.jsonl", out / "trajectory.jsonl")
    if rehash:
        (out / "receipt.json").write_text(receipt_text(data["body"], data["emitted_at"]))
    else:
        (out / "receipt.json").write_text(canonical.dumps(data) + "\n")
    return out / "receipt.json"


def test_a_receipt_whose_body_hash_breaks_is_refused(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = _forged(runs["leaks"], tmp_path / "forged", rehash=False)
    assert gate(forged, "--baseline", runs["stub"], "--require-mask-holds") == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == "" and "receipt refused: receipt.json: body hashes to" in captured.err
    # a broken baseline is refused alike
    assert gate(runs["stub"], "--baseline", forged) == EXIT_USAGE
    assert "--baseline refused: " in capsys.readouterr().err


def test_a_rehashed_forgery_passes_alone_and_is_refused_with_its_files(
    runs: dict[str, Path],
    march_release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    forged = _forged(runs["leaks"], tmp_path / "forged", rehash=True)
    # the body alone cannot tell: the gate judges what the receipt says
    assert gate(forged, "--baseline", runs["stub"], "--require-mask-holds") == EXIT_OK
    capsys.readouterr()
    code = gate(
        forged, "--baseline", runs["stub"], "--require-mask-holds",
        "--trajectory", forged.parent / "trajectory.jsonl", "--bundle", march_release,
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == EXIT_USAGE and captured.out == ""
    assert "do not re-derive: probe verdict" in captured.err


def test_another_runs_trajectory_is_refused(
    runs: dict[str, Path], march_release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = gate(
        runs["stub"], "--baseline", runs["stub"],
        "--trajectory", runs["leaks"].parent / "trajectory.jsonl", "--bundle", march_release,
    )  # fmt: skip
    assert code == EXIT_USAGE
    assert "not the ones its receipt binds: trajectory.jsonl: hashes to" in capsys.readouterr().err


def test_a_price_file_the_receipt_does_not_bind_is_refused(
    runs: dict[str, Path],
    march_release: Path,
    march_prices: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = gate(
        runs["stub"], "--baseline", runs["stub"],
        "--trajectory", runs["stub"].parent / "trajectory.jsonl", "--bundle", march_release,
        "--prices", march_prices,
    )  # fmt: skip
    assert code == EXIT_USAGE
    assert "the receipt binds sha256:" in capsys.readouterr().err


def test_help_says_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for said in (
        "0 every rule holds",
        "1 a rule failed",
        "2 a usage or input error",
        "3 a harness problem",
        "5 the comparison is void",
        "(4 is `run`'s",
    ):
        assert said in text
