"""``pit-harness submit`` run as a submitter runs it: the installed command in a process of
its own, with a home folder of the test's (so no token file of the machine's is read),
its token only where the command looks for one, and its output on pipes or terminals."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

COMMAND = str(Path(sys.executable).parent / "pit-harness")
# variables of the machine's shell that would change what the command does
DROPPED = ("PITWEB_TOKEN", "PITWEB_URL", "XDG_CONFIG_HOME", "PIT_PROGRESS")


class Done(NamedTuple):
    code: int
    out: str
    err: str


def environment(home: Path, **env: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in DROPPED}
    return {**base, "HOME": str(home), **env}


def submit(*args: str, home: Path, timeout: float = 300.0, **env: str) -> Done:
    """The command with its output on pipes (as a script or CI sees it)."""
    done = subprocess.run(
        [COMMAND, "submit", *args],
        env=environment(home, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def submit_on_terminal(
    *args: str, home: Path, stdout_terminal: bool, timeout: float = 300.0, **env: str
) -> tuple[int, bytes, bytes]:
    """The command with its stderr on a terminal (a pseudo-terminal), and its stdout on
    that terminal too or on a pipe: (exit code, stdout's bytes, the terminal's bytes)."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [COMMAND, "submit", *args],
            env=environment(home, TERM="xterm-256color", COLUMNS="100", **env),
            stdout=terminal if stdout_terminal else subprocess.PIPE,
            stderr=terminal,
        )
        os.close(terminal)
        shown = _drain(controller)  # until the command closes the terminal (it exits)
        out = process.stdout.read() if process.stdout is not None else b""
        code = process.wait(timeout=timeout)
    finally:
        os.close(controller)
    return code, out, shown


def _drain(controller: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def token_in_file(home: Path, token: str, mode: int = 0o600) -> Path:
    """The token where the command reads it when PITWEB_TOKEN is unset."""
    path = home / ".config" / "pitweb" / "token"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(token + "\n")
    path.chmod(mode)
    return path
