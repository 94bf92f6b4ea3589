"""``pit-harness run --checkpoint FILE`` as an operator uses it: another invocation's file
refused with exit 1 and nothing run, bad use refused with exit 2, and a sweep killed
(SIGKILL) at ten chosen points and resumed each time to the receipt body an
uninterrupted run writes, finished cells never run again."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.runs.checkpoint import SCHEMA

REPO = Path(__file__).resolve().parents[3]
AGENT = "tests.support.marking_agent:marking"
CELLS = [f"{a}/{c}" for a in ("main", "redacted", "shifted") for c in ("leaky", "dump", "pit")]


def _config(folder: Path, release: Path, **extra: Any) -> Path:
    """Nine cells of six sessions each, the agent in the harness's process (the sandbox
    is not the point here, and each run stays under a second)."""
    path = folder / "run.json"
    path.write_text(
        json.dumps(
            {
                "bundle_path": str(release),
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-07",
                "agent_process": "in_process",
                "agent": AGENT,
                **extra,
            }
        )
    )
    return path


def _args(config: Path, out: Path, checkpoint: Path) -> list[str]:
    return [
        "run",
        "--config",
        str(config),
        "--trajectory",
        str(out / "trajectory.jsonl"),
        "--receipt",
        str(out / "receipt.json"),
        "--checkpoint",
        str(checkpoint),
    ]


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_another_invocations_checkpoint_is_refused_with_exit_1(
    march_release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file = tmp_path / "checkpoint.json"
    code, _, err = _main(capsys, *_args(_config(tmp_path, march_release), tmp_path / "a", file))
    assert code == 0, err
    assert json.loads(file.read_text())["contract"]["schema"] == SCHEMA
    kept = file.read_bytes()
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("PIT_MARKS", str(marks))
    changed = _config(tmp_path, march_release, hold_sessions=2)
    code, _, err = _main(capsys, *_args(changed, tmp_path / "b", file))
    assert code == 1
    assert "contract differs" in err and "config_sha256" in err
    assert file.read_bytes() == kept
    assert list(marks.iterdir()) == []  # the agent was never called
    assert not (tmp_path / "b").exists()


def test_a_checkpoint_that_is_no_file_is_refused_with_exit_2(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, march_release)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, why in ((tmp_path, "a folder"), (fifo, "not a regular file")):
        code, _, err = _main(capsys, *_args(config, tmp_path / "out", path))
        assert code == 2 and why in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_checkpoint_is_refused_with_exit_2(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "checkpoint.json"
    file.write_text("{}")
    file.chmod(0)
    code, _, err = _main(capsys, *_args(_config(tmp_path, march_release), tmp_path / "out", file))
    assert code == 2 and "cannot be read" in err
    assert not (tmp_path / "out").exists()


def test_a_checkpoint_the_system_will_not_read_is_refused_with_exit_2(
    march_release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the test above, where the file's mode cannot refuse (root reads anything)."""
    file = tmp_path / "checkpoint.json"
    file.write_text("{}")
    read_bytes = Path.read_bytes

    def refused(self: Path) -> bytes:
        if self == file:
            raise PermissionError(13, "Permission denied")
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", refused)
    code, _, err = _main(capsys, *_args(_config(tmp_path, march_release), tmp_path / "out", file))
    assert code == 2 and "cannot be read (Permission denied)" in err, err
    assert file.read_text() == "{}"
    assert not (tmp_path / "out").exists()


def test_run_help_says_what_a_checkpoint_keeps_and_when_it_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--checkpoint FILE" in text
    assert "1 a --checkpoint file made by another invocation" in text
    assert "FILE stays when the run completes" in text


# -- killed and resumed, in a process of its own --------------------------------------------


def _harness(args: list[str], env: dict[str, str], errors: Path) -> subprocess.Popen[bytes]:
    """``pit-harness`` in a process of its own, its stderr in ``errors``."""
    with errors.open("wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "harness.cli", *args],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "PIT_PROGRESS": "0", **env},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )


def _finish(args: list[str], env: dict[str, str], errors: Path) -> None:
    process = _harness(args, env, errors)
    assert process.wait(timeout=300) == 0, errors.read_text()


def _kill_at(marker: Path, process: subprocess.Popen[bytes], errors: Path) -> None:
    """SIGKILL once the agent says it stands at the chosen point: its marker is polled
    for, never waited for by a fixed sleep."""
    deadline = time.monotonic() + 120
    while not marker.exists():
        if process.poll() is not None:
            pytest.fail(f"the run ended before its stop: {errors.read_text()}")
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert marker.exists(), "the run never reached its stop"


def _marks(folder: Path) -> Counter[str]:
    return Counter({p.name: len(p.read_text().splitlines()) for p in folder.iterdir()})


@pytest.mark.slow  # twenty-one runs of the command line, ten of them killed
def test_a_sweep_killed_at_ten_points_resumes_to_the_uninterrupted_receipt(
    march_release: Path, tmp_path: Path
) -> None:
    config = _config(tmp_path, march_release)
    whole_marks = tmp_path / "whole-marks"
    whole_marks.mkdir()
    whole = tmp_path / "whole"
    uninterrupted = _args(config, whole, tmp_path / "unused.json")[:-2]  # no checkpoint
    _finish(uninterrupted, {"PIT_MARKS": str(whole_marks)}, tmp_path / "whole.err")
    expected = json.loads((whole / "receipt.json").read_text())
    # every (cell, session) the agent is called at: the points a kill may come
    points = sorted(name for name in _marks(whole_marks) if name.startswith("trade-"))
    assert len(points) == len(CELLS) * 6
    chosen = random.Random(20020).sample(points, 10)
    for n, point in enumerate(chosen):
        _, arm, clock, day = point.split("-", 3)
        cell = f"{arm}/{clock}"
        trial = tmp_path / f"trial{n}"
        marks, marker = trial / "marks", trial / "stopped"
        marks.mkdir(parents=True)
        file = trial / "checkpoint.json"
        args = _args(config, trial / "out", file)
        env = {"PIT_MARKS": str(marks)}
        stop = {"PIT_STOP_AT": f"{arm}/{clock}/{day}", "PIT_STOP_MARKER": str(marker)}
        killed = trial / "killed.err"
        _kill_at(marker, _harness(args, {**env, **stop}, killed), killed)
        assert not (trial / "out" / "receipt.json").exists()
        saved = json.loads(file.read_text())["saved"]  # whole after a kill: a saved state
        finished = [f"{s['record']['arm']}/{s['record']['clock']}" for s in saved]
        assert finished == CELLS[: CELLS.index(cell)], point

        _finish(args, env, trial / "resumed.err")
        receipt = json.loads((trial / "out" / "receipt.json").read_text())
        assert receipt["body_sha256"] == expected["body_sha256"], point
        assert receipt["body"] == expected["body"]
        assert (trial / "out" / "trajectory.jsonl").read_bytes() == (
            whole / "trajectory.jsonl"
        ).read_bytes()
        # finished cells ran once; the killed cell again from its first session
        again = {
            name
            for name in points
            if name.startswith(f"trade-{arm}-{clock}-") and name.split("-", 3)[3] <= day
        }
        assert _marks(marks) == Counter(
            {name: calls + (name in again) for name, calls in _marks(whole_marks).items()}
        ), point
