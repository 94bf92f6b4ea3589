"""The README's and docs/'s fenced blocks as a reader meets them: found by their markers,
run in a shell with ``pit-harness`` on PATH, their output matched line by line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]


class Block(NamedTuple):
    language: str
    code: str
    expected: str | None


def runnable(text: str, marker_prefix: str = "<!-- runnable:") -> list[Block]:
    """Each fenced block marked with ``marker_prefix``: its fence's language, its code,
    and the output block after it, if any."""
    blocks: list[Block] = []
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
                blocks.append(Block(line[3:].strip(), body, None))
            elif marker == "output":
                blocks[-1] = blocks[-1]._replace(expected=body)
            collected = marker == "code"
            marker, n = None, end
        n += 1
    return blocks


def runnable_blocks(
    text: str, marker_prefix: str = "<!-- runnable:"
) -> list[tuple[str, str | None]]:
    """(code, expected output or None) for each fenced block marked ``marker_prefix``."""
    return [(b.code, b.expected) for b in runnable(text, marker_prefix)]


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


def run_block(
    code: str, cwd: Path, drop: tuple[str, ...] = (), language: str = "sh", **env: str
) -> subprocess.CompletedProcess[str]:
    """A block run as a reader would: bash, strict, with ``pit-harness`` and this Python on
    PATH (a ``python`` block: this Python); ``drop`` names variables the reader's shell
    would not have."""
    bin_dir = str(Path(sys.executable).parent)
    path = bin_dir + os.pathsep + os.environ.get("PATH", "")
    base = {k: v for k, v in os.environ.items() if k not in drop}
    argv = (
        [sys.executable, "-c", code]
        if language == "python"
        else ["bash", "-euo", "pipefail", "-c", code]
    )
    return subprocess.run(
        argv,
        cwd=cwd,
        env={**base, "PATH": path, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def doc_name(doc: Path) -> str:
    return doc.relative_to(REPO).as_posix()
