"""``pit-harness commitments verify`` and ``head``, through the command's entry point: a log
listed and its head printed, a tampered log or a lost kept head exit 1 naming the entry,
an unreadable file exits 2."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.forward.log import (
    Commit,
    CommittedAgent,
    CommittedBenchmark,
    DeclaredModel,
    Entry,
    Withdraw,
    document,
    entry_digest,
    next_entry,
)
from harness.outcomes import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE


def _commit(name: str, digest: str) -> Commit:
    return Commit(
        agent=CommittedAgent(name=name, digest=digest, transport="stdio", dialect="pit", label=""),
        benchmark=CommittedBenchmark(
            release="edgar-8k",
            release_digest="sha256:" + "cd" * 32,
            forms=("8-K",),
            hold_sessions=5,
            clocks=("pit",),
            arms=("main",),
        ),
        model=DeclaredModel(),
        submitter="ada",
    )


@pytest.fixture()
def log(tmp_path: Path) -> tuple[Path, list[Entry]]:
    first = next_entry(
        None, stamped_at="2026-01-05T14:00:00Z", commit=_commit("alpha", "sha256:" + "a1" * 32)
    )
    second = next_entry(
        first, stamped_at="2026-01-06T15:30:00Z", commit=_commit("beta", "sha256:" + "b2" * 32)
    )
    third = next_entry(
        second,
        stamped_at="2026-01-07T09:00:00Z",
        withdraw=Withdraw(withdraws=1, entry=entry_digest(first), reason="", submitter="ada"),
    )
    entries = [first, second, third]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document(entries)))
    return path, entries


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["commitments", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_verify_lists_every_entry_and_the_head(
    log: tuple[Path, list[Entry]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, entries = log
    code, out, _ = cli(capsys, "verify", str(path))
    assert code == EXIT_OK
    lines = out.splitlines()
    assert lines[0].split() == [
        "1", "commit", "2026-01-05T14:00:00Z", "alpha", "sha256:a1a1a1a1a1a1", "withdrawn"
    ]  # fmt: skip
    assert lines[1].split()[-1] == "live" and "beta sha256:b2b2b2b2b2b2" in lines[1]
    assert lines[2].split()[:4] == ["3", "withdraw", "2026-01-07T09:00:00Z", "withdraws"]
    assert lines[3] == f"chain ok  head 3 {entry_digest(entries[2])}"


def test_head_prints_the_form_a_reader_keeps_and_verify_accepts_it(
    log: tuple[Path, list[Entry]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, entries = log
    code, out, _ = cli(capsys, "head", str(path))
    assert code == EXIT_OK and out.strip() == f"3:{entry_digest(entries[2])}"
    code, out, _ = cli(
        capsys,
        "verify",
        str(path),
        "--head",
        out.strip(),
        "--head",
        f"1:{entry_digest(entries[0])}",
    )
    assert code == EXIT_OK and "2 kept head(s) still in it" in out.splitlines()[-1]


def test_a_tampered_log_exits_1_naming_the_entry(
    log: tuple[Path, list[Entry]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, _ = log
    data = json.loads(path.read_text())
    data["entries"][0]["stamped_at"] = "2026-01-04T14:00:00Z"  # backdated by a day
    code, out, _ = cli(capsys, "verify", str(_write(tmp_path / "edited.json", data)))
    assert code == EXIT_MISMATCH
    assert out.startswith("chain BROKEN  entry 2: names previous digest")
    code, out, _ = cli(capsys, "head", str(tmp_path / "edited.json"))
    assert code == EXIT_MISMATCH and "entry 2" in out


def test_a_kept_head_the_log_no_longer_holds_exits_1(
    log: tuple[Path, list[Entry]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, entries = log
    kept = f"3:{entry_digest(entries[2])}"
    truncated = _write(tmp_path / "truncated.json", document(entries[:2]))
    code, out, _ = cli(capsys, "verify", str(truncated))
    assert code == EXIT_OK  # consistent alone
    code, out, _ = cli(capsys, "verify", str(truncated), "--head", kept)
    assert code == EXIT_MISMATCH and out.startswith(f"chain BROKEN  kept head {kept}")


def test_an_unreadable_log_exits_2(
    log: tuple[Path, list[Entry]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = cli(capsys, "verify", str(tmp_path / "missing.json"))
    assert code == EXIT_USAGE and "no such file" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = cli(capsys, "verify", str(bad))
    assert code == EXIT_USAGE and "not a readable JSON document" in err
    code, _, err = cli(capsys, "verify", str(log[0]), "--head", "3:sha256:abc")
    assert code == EXIT_USAGE and "--head: kept head '3:sha256:abc'" in err


def test_a_document_that_is_not_a_log_exits_1(
    log: tuple[Path, list[Entry]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, _ = log
    data = copy.deepcopy(json.loads(path.read_text()))
    data["log"] = "something-else/1"
    code, out, _ = cli(capsys, "verify", str(_write(tmp_path / "other.json", data)))
    assert code == EXIT_MISMATCH and "not a pitweb-commitments/1 document" in out


def test_the_empty_log_verifies(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "verify", str(_write(tmp_path / "empty.json", document([]))))
    assert code == EXIT_OK and out.strip() == "chain ok  head 0 (empty log)"
