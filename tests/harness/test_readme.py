"""The README's harness walk-through, run as written: its printed figures are what the
commands print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import require_sandbox

README = Path(__file__).resolve().parents[2] / "README.md"


def runnable_blocks(
    text: str, marker_prefix: str = "<!-- runnable:"
) -> list[tuple[str, str | None]]:
    """(code, expected output or None) for each fenced block marked runnable (the
    harness's walk-through: ``<!-- runnable:``; blocks run against a site:
    ``<!-- runnable-site:``)."""
    blocks: list[tuple[str, str | None]] = []
    lines = text.splitlines()
    marker = None
    collected = False  # the last fenced block was one of ours: an output marker is for it
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith(marker_prefix):
            marker = "code"
        elif line.startswith("<!-- output"):
            marker = "output" if collected else None
        elif line.startswith("```"):
            end = lines.index("```", n + 1)
            body = "\n".join(lines[n + 1 : end]) + "\n"
            if marker == "code":
                blocks.append((body, None))
            elif marker == "output":
                blocks[-1] = (blocks[-1][0], body)
            collected = marker == "code"
            marker, n = None, end
        n += 1
    return blocks


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(the line before the fence, the block's first line) for every fenced block."""
    lines = text.splitlines()
    blocks, n = [], 0
    while n < len(lines):
        if lines[n].startswith("```"):
            end = lines.index("```", n + 1)
            blocks.append((lines[n - 1] if n else "", lines[n + 1] if n + 1 < end else ""))
            n = end
        n += 1
    return blocks


def matches_in_order(printed: str, expected: str) -> str | None:
    """None when every expected line (``...`` inside a line matches anything, a line of
    ``...`` skips lines) matches a printed line, in order; else the first that does not."""
    actual, at = printed.splitlines(), 0
    for line in expected.splitlines():
        if line.strip() == "...":
            continue
        pattern = _pattern(line)
        while at < len(actual) and not pattern.match(actual[at]):
            at += 1
        if at == len(actual):
            return line
        at += 1
    return None


def _pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in expected.split("...")) + r"\Z")


def test_the_readme_marks_its_walk_through_runnable() -> None:
    blocks = runnable_blocks(README.read_text())
    assert blocks and all(output for _, output in blocks)
    assert any("pit-harness run" in code for code, _ in blocks)


def run_block(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A README block run as a reader would: bash, strict, with ``pit-harness`` on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    path = bin_dir + os.pathsep + os.environ.get("PATH", "")
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=cwd,
        env={**os.environ, "PATH": path, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_readme_walk_through_prints_what_the_readme_says(tmp_path: Path) -> None:
    require_sandbox()  # the printed capability line is the sandboxed one
    for code, expected in runnable_blocks(README.read_text()):
        done = run_block(code, tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        missing = matches_in_order(done.stdout, expected or "")
        assert missing is None, f"the README shows {missing!r}; the commands printed:\n" + (
            done.stdout
        )
