"""``release synth`` and ``release build`` draw a bar on a terminal, and print exactly the
same bytes as ever when their output is not one (piped, captured, or shown in the README)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "edgar"
BAR = "\u2501".encode()  # the bar's glyph
DEADLINE = 300.0


def _synth(folder: Path) -> list[str]:
    return [
        "release",
        "synth",
        "--out",
        str(folder / "release"),
        "--start",
        "2023-03-01",
        "--end",
        "2023-03-31",
        "--seed",
        "3",
        "--rows",
        "3000",
    ]


def _build(folder: Path) -> list[str]:
    return [
        "release",
        "build",
        "--edgar-index",
        str(FIXTURES / "master.idx"),
        "--acceptance",
        str(FIXTURES / "headers.txt"),
        "--name",
        "edgar-fixture",
        "--out",
        str(folder / "release"),
        "--row-key-secret",
        str(folder / "secret"),
    ]


def _env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PIT_PROGRESS"}
    env.update(TERM="xterm-256color", COLUMNS="120", PYTHONPATH=str(REPO), **more)
    return env


def _drain(fd: int, process: subprocess.Popen[bytes]) -> bytes:
    """Everything written to a pty's other side until the process ends and closes it."""
    out = b""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other side is closed: the process is gone
            break
        if not chunk:
            break
        out += chunk
    process.wait(timeout=DEADLINE)
    return out


def _on_a_terminal(argv: list[str], **env: str) -> tuple[int, bytes]:
    """Run the command with stdout and stderr on one pseudo-terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=_env(**env),
        cwd=REPO,
    )
    os.close(follower)
    try:
        screen = _drain(leader, process)
    finally:
        os.close(leader)
    return process.returncode, screen


def _stdout_piped(argv: list[str]) -> tuple[int, bytes, bytes]:
    """Run the command with stdout on a pipe and stderr on a terminal: only stdout stops
    the bar."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=_env(),
        cwd=REPO,
    )
    os.close(follower)
    try:
        out, _ = process.communicate(timeout=DEADLINE)
        terminal = _drain(leader, process)
    finally:
        os.close(leader)
    return process.returncode, out, terminal


def _expected(folder: Path, last: str) -> bytes:
    manifest = json.loads((folder / "release" / "manifest.json").read_text())
    counts = manifest["row_counts"]
    return (
        f"release {manifest['name']}  rows {counts['total']}  "
        f"acceptance_stamped {counts['acceptance_stamped']}\n"
        f"content_digest {manifest['content_digest']}\n{last}\n"
    ).encode()


@pytest.mark.parametrize("command", ["synth", "build"])
def test_a_bar_is_drawn_on_a_terminal(tmp_path: Path, command: str) -> None:
    argv = _synth(tmp_path) if command == "synth" else _build(tmp_path)
    code, screen = _on_a_terminal(argv)
    assert code == 0, screen[-2000:]
    assert f"release {command}".encode() in screen and BAR in screen
    rows = json.loads((tmp_path / "release" / "manifest.json").read_text())["row_counts"]
    assert f"{rows['total']}/{rows['total']}".encode() in screen  # the bar reached its end
    # and what the command prints comes after it, the bar erased
    assert screen.rindex(BAR) < screen.index(b"content_digest")


@pytest.mark.parametrize("command", ["synth", "build"])
def test_output_that_is_not_a_terminal_gets_the_same_bytes_and_no_bar(
    tmp_path: Path, command: str
) -> None:
    argv = _synth(tmp_path) if command == "synth" else _build(tmp_path)
    code, out, terminal = _stdout_piped(argv)
    assert code == 0, terminal[-2000:]
    last = (
        f"written to {tmp_path / 'release'}"
        if command == "synth"
        else f"row keys: keyed with the secret in {tmp_path / 'secret'} (new, mode 0600); "
        "keep it to rebuild the same bytes, never publish it"
    )
    assert out == _expected(tmp_path, last)
    assert terminal == b""  # nothing drawn on stderr either, though it is a terminal


def test_pit_progress_0_turns_the_bar_off_on_a_terminal(tmp_path: Path) -> None:
    code, screen = _on_a_terminal(_synth(tmp_path), PIT_PROGRESS="0")
    assert code == 0, screen[-2000:]
    assert BAR not in screen
    expected = _expected(tmp_path, f"written to {tmp_path / 'release'}")
    assert screen.replace(b"\r\n", b"\n") == expected  # a terminal writes \r\n for \n
