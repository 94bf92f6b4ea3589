"""The README's and docs/'s blocks, run as written: their printed figures are what the
commands print; and every block no test runs is listed here with why.

A block is run when the line before it is a marker (``<!-- runnable...``) whose kind a
test below (or tests/pitweb/test_readme_site.py) runs; an ``<!-- output`` marker after it
holds what it must print (``...`` stands for what is left out). A marker of a kind no
test runs fails, and so does a block that is neither marked nor listed in ``NOT_RUN``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from tests.conftest import require_sandbox

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]

# every kind of runnable block, and the test that runs it
KINDS = {
    "<!-- runnable:": "test_the_walk_throughs_print_what_they_say (here)",
    "<!-- runnable-points:": "test_the_points_walk_through_runs_on_the_demo_model (here)",
    "<!-- runnable-site:": "tests/pitweb/test_readme_site.py",
    "<!-- runnable-staff:": "tests/pitweb/test_readme_site.py",
}

# Every fenced block that no test runs: (file, the start of its first line), and why.
NOT_RUN = {
    ("README.md", "make demo    # set up"): "the two commands themselves: CI runs `make test`; "
    "`make demo` serves until stopped (its seeding is tested by test_demo_seed)",
    ("README.md", "export DJANGO_DEBUG=true"): "runs a part of the test suite, which the suite "
    "cannot run inside itself; test_debug_is_off_unless_asked_for_so_a_missing_key_refuses_to_"
    "start holds the refusal it avoids",
    ("docs/architecture.md", " submitter's machine"): "a diagram, not a command",
    ("docs/sandbox.md", '{"bundle_path": "release"'): "a sample run config, shown for its keys "
    "(it needs a model provider and its key); test_model_egress runs such configs against a "
    "loopback endpoint",
    ("docs/sandbox.md", '"capabilities": {'): "an excerpt of a receipt, not a command",
    ("docs/points.md", "pit-harness points validate"): "a list of the verbs; tests/harness/"
    "test_points.py runs validate, list, render and show on the real points, and the README's "
    "walk-through runs validate, answer, judge and verify",
    ("docs/site.md", "cp .env.example .env"): "needs a Docker engine; test_deploy checks the "
    "compose file, the proxy configuration and the image's runtime instead",
}


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


def _name(doc: Path) -> str:
    return doc.relative_to(REPO).as_posix()


def test_every_block_is_run_or_says_why_not() -> None:
    listed = set()
    for doc in DOCS:
        for before, first in fenced_blocks(doc.read_text()):
            if before.startswith("<!-- output"):
                continue
            if before.startswith("<!-- runnable"):
                assert before.startswith(tuple(KINDS)), (
                    f"{_name(doc)}: a block marked {before[:30]!r}, a kind no test runs"
                )
                continue
            keys = [k for k in NOT_RUN if k[0] == _name(doc) and first.startswith(k[1])]
            assert keys, (
                f"{_name(doc)}: block {first!r} is neither marked runnable nor listed in NOT_RUN"
            )
            listed.update(keys)
    assert listed == set(NOT_RUN), (
        f"NOT_RUN lists blocks that are not there: {set(NOT_RUN) - listed}"
    )


def test_every_kind_of_runnable_block_is_there() -> None:
    text = "\n".join(doc.read_text() for doc in DOCS)
    for kind in KINDS:
        assert runnable(text, kind), f"no block is marked {kind!r}; {KINDS[kind]} runs none"
    assert any("pit-harness run" in b.code for b in runnable(README.read_text()))
    assert all(b.expected for b in runnable(text))


def test_the_walk_throughs_print_what_they_say(tmp_path: Path) -> None:
    """Each page's blocks, in order, in an empty folder of the page's own."""
    require_sandbox()  # the printed capability line is the sandboxed one
    for doc in DOCS:
        folder = tmp_path / doc.stem
        folder.mkdir()
        for block in runnable(doc.read_text()):
            done = run_block(block.code, folder, language=block.language)
            assert done.returncode == 0, f"{_name(doc)}:\n{block.code}\n{done.stderr[-3000:]}"
            missing = matches_in_order(done.stdout, block.expected or "")
            assert missing is None, (
                f"{_name(doc)} shows {missing!r}; the commands printed:\n{done.stdout}"
            )


def test_the_points_walk_through_runs_on_the_demo_model(tmp_path: Path) -> None:
    """No key, no network: the demo model the block starts, and the points it ships."""
    shutil.copytree(REPO / "examples" / "points", tmp_path / "examples" / "points")
    [block] = [b for doc in DOCS for b in runnable(doc.read_text(), "<!-- runnable-points:")]
    done = run_block(block.code, tmp_path, drop=("OPENAI_API_KEY",))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    missing = matches_in_order(done.stdout, block.expected or "")
    assert missing is None, f"the README shows {missing!r}; the commands printed:\n{done.stdout}"
