"""Progress on long work: a bar on a terminal, nothing at all when the output is piped
(what the README shows stays byte for byte), nothing that reaches a run's artifacts; and a
file named on `verify`'s command line that is not there is a usage error, not a mismatch."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.outcomes import EXIT_USAGE
from harness.points import Point, load_points
from harness.points.run import answer_points, judge_answer_set
from harness.progress import terminal_bar
from harness.receipt.rederive import rederive
from harness.rundata.config import RunConfig
from harness.runs.runner import run
from tests.harness.points.test_points_gates import judge
from tests.support.chat_server import Chat
from tests.support.data import shared_path
from tests.support.points import answerer, knows

PIT_HARNESS = str(Path(sys.executable).parent / "pit-harness")


@pytest.fixture()
def folder(session: Path) -> Path:
    return session


def in_terminal(args: list[str], cwd: Path, **env: str) -> str:
    """What a terminal shows while ``args`` runs with stdout and stderr on one (a pty)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm", **env},
    )  # fmt: skip
    os.close(follower)
    shown = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            pytest.fail("the command went silent on its terminal for two minutes")
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other side closed: the command has ended
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(timeout=60) == 0, shown.decode(errors="replace")
    os.close(leader)
    return shown.decode(errors="replace")


RUN = ["run", "--config", "run.json", "--trajectory", "t.jsonl", "--receipt", "r.json"]


def test_a_run_on_a_terminal_shows_its_sessions_walked(folder: Path) -> None:
    shown = in_terminal([PIT_HARNESS, *RUN], folder)
    assert "run: sessions walked" in shown
    assert "valid=True" in shown  # the summary follows the bar, as piped


def test_the_bar_is_off_when_asked_even_on_a_terminal(folder: Path) -> None:
    shown = in_terminal([PIT_HARNESS, *RUN], folder, PIT_PROGRESS="0")
    assert "sessions walked" not in shown and "valid=True" in shown


def test_a_piped_run_prints_no_bar_and_nothing_on_stderr(folder: Path) -> None:
    piped = subprocess.run(
        [PIT_HARNESS, *RUN], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""
    assert "sessions walked" not in piped.stdout and "\x1b" not in piped.stdout
    assert piped.stdout.startswith("run ")


def test_a_bar_is_never_drawn_into_captured_output() -> None:
    with terminal_bar("anything") as progress:
        assert progress is None


def test_progress_counts_every_session_and_changes_nothing_the_run_writes(
    folder: Path,
) -> None:
    seen: list[tuple[int, int]] = []

    def config(name: str) -> RunConfig:
        return RunConfig(
            bundle_path=str(folder / "release"), forms=("8-K",), start="2023-03-01",
            end="2023-03-10", trajectory_path=str(folder / name / "t.jsonl"),
            receipt_path=str(folder / name / "r.json"),
        )  # fmt: skip

    quiet = run("stub", config("a"))
    told = run("stub", config("b"), progress=lambda d, t: seen.append((d, t)))
    assert quiet.receipt["body_sha256"] == told.receipt["body_sha256"]
    sessions = len(told.body["sessions"])
    cells = len(told.body["cells"])
    assert seen[-1] == (cells * sessions, cells * sessions)
    assert [d for d, _ in seen] == list(range(1, cells * sessions + 1))


def test_rederiving_tells_each_step_and_each_cell(folder: Path) -> None:
    assert main([*RUN[:1], "--config", str(folder / "run.json"),
                 "--trajectory", str(folder / "t.jsonl"),
                 "--receipt", str(folder / "r.json")]) == 0  # fmt: skip
    seen: list[tuple[int, int]] = []
    result = rederive(
        folder / "r.json",
        trajectory=folder / "t.jsonl",
        release=folder / "release",
        progress=lambda d, t: seen.append((d, t)),
    )
    assert result.ok
    assert seen == [(n, 12) for n in range(1, 13)]  # trajectory, claims, release, 9 cells


def test_judging_tells_every_call_and_ends_at_its_total(server: tuple[Chat, str]) -> None:
    state, url = server
    points: list[Point] = load_points(shared_path("data", "pitfall", "points"))[:4]
    state.agent = knows(points, lambda i, n: True)
    answered: list[tuple[int, int]] = []
    answers = answer_points(
        answerer(url), points, workers=2, progress=lambda d, t: answered.append((d, t))
    )
    assert sorted(answered)[-1] == (4, 4)
    state.judge_mode = "good"
    judged: list[tuple[int, int]] = []
    judge_answer_set(
        judge(url), answers, points, stability_k=2, stride=1, workers=2,
        progress=lambda d, t: judged.append((d, t)),
    )  # fmt: skip
    done, total = max(judged)
    assert done == total == len(judged)
    assert total > 2 * len(points) + len(points)  # the stability sample joined the total


@pytest.mark.parametrize("missing", ["receipt", "--trajectory", "--bundle", "--prices"])
def test_verify_with_a_missing_input_is_a_usage_error(
    missing: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*RUN[:1], "--config", str(folder / "run.json"),
                 "--trajectory", str(folder / "t.jsonl"),
                 "--receipt", str(folder / "r.json")]) == 0  # fmt: skip
    capsys.readouterr()
    given = {
        "receipt": str(folder / "r.json"),
        "--trajectory": str(folder / "t.jsonl"),
        "--bundle": str(folder / "release"),
        "--prices": str(folder / "prices.csv"),
    }
    (folder / "prices.csv").write_text("date,symbol,open,close\n")
    given[missing] = str(folder / "not-there")
    args = ["verify", given.pop("receipt")]
    for option, path in given.items():
        args += [option, path]
    assert main(args) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == ""  # nothing checked, nothing said to have matched or not
    assert f"{missing} {folder / 'not-there'}: no such" in err
