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


def runnable_blocks(text: str) -> list[tuple[str, str | None]]:
    """(code, expected output or None) for each fenced block marked runnable."""
    blocks: list[tuple[str, str | None]] = []
    lines = text.splitlines()
    marker = None
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith("<!-- runnable"):
            marker = "code"
        elif line.startswith("<!-- output"):
            marker = "output"
        elif line.startswith("```") and marker:
            end = lines.index("```", n + 1)
            body = "\n".join(lines[n + 1 : end]) + "\n"
            if marker == "code":
                blocks.append((body, None))
            else:
                blocks[-1] = (blocks[-1][0], body)
            marker, n = None, end
        n += 1
    return blocks


def _pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in expected.split("...")) + r"\Z")


def test_the_readme_marks_its_walk_through_runnable() -> None:
    blocks = runnable_blocks(README.read_text())
    assert blocks and all(output for _, output in blocks)
    assert any("pit-harness run" in code for code, _ in blocks)


def test_the_readme_walk_through_prints_what_the_readme_says(tmp_path: Path) -> None:
    require_sandbox()  # the printed capability line is the sandboxed one
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    for code, expected in runnable_blocks(README.read_text()):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        actual = done.stdout.splitlines()
        at = 0
        for line in (expected or "").splitlines():
            if line.strip() == "...":
                continue  # lines left out
            pattern = _pattern(line)
            while at < len(actual) and not pattern.match(actual[at]):
                at += 1
            assert at < len(actual), f"the README shows {line!r}; the commands printed:\n" + (
                done.stdout
            )
            at += 1
