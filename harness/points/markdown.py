"""Point files: parsed and validated as PITFALL's own validator does, except where
Markdown reads a line otherwise.

The rules (see the reference notes on PITFALL's ``point.py``): line 1 is ``# <id>``, the
id is lowercase kebab-case and equals the file's stem; no ``{{placeholder}}`` (braces with
at least one character between them) anywhere; the H2 sections are exactly Question,
Ground Truth, Provenance, in that order; the Question is not empty; Ground Truth and
Provenance are each a ``<details>`` block with a one-line ``<summary>`` and a non-empty
body. Content is otherwise free (tables, links, ``###``, nested ``<details>``, any script).

Headings are found as CommonMark reads them (markdown-it-py), not by PITFALL's line regex:
a ``## `` line inside a fenced code block (which an unclosed fence runs to the end of the
file) or an HTML block (``<details>`` up to its first blank line) is content; ``##`` or
``##   `` is an H2 with an empty title, and so is any other H2 Markdown sees: after a tab,
indented up to three spaces, or underlined with ``---``. H2s nested in a list or a quote
are content, as upstream. Each of the three section headings must also be written
``## <Title>`` at the start of its line, so PITFALL's validator sees the same sections.
The section text and the hidden bodies are cut exactly as PITFALL cuts them (the bodies
split with ``str.splitlines``, which also breaks at a form feed or U+2028), so every
upstream hash reproduces.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
PLACEHOLDER = re.compile(r"\{\{[^{}]+\}\}")
SECTIONS = ("Question", "Ground Truth", "Provenance")
META = "META.md"
META_FRAGMENTS = (
    "# {{id}}",
    "## Question",
    "{{question}}",
    "## Ground Truth",
    "{{ground_truth}}",
    "## Provenance",
    "{{provenance}}",
)
# a line as PITFALL's validator reads an H2 (its title is the rest, stripped)
UPSTREAM_H2 = re.compile(r"## (.+)")
# the blocks in which Markdown reads such a line as content
CONTENT_BLOCKS = {
    "fence": "a fenced code block",
    "html_block": "an HTML block",
}
COMMONMARK = MarkdownIt("commonmark")


class PointError(ValueError):
    """A point, or a points folder, that breaks a rule; the message starts with the file
    and names the rule."""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Point:
    id: str
    path: Path
    text: str  # the whole file as read with universal newlines
    question: str
    ground_truth: str
    provenance: str

    @property
    def point_sha256(self) -> str:
        return sha256_text(self.text)

    @property
    def question_sha256(self) -> str:
        return sha256_text(self.question)

    @property
    def ground_truth_sha256(self) -> str:
        return sha256_text(self.ground_truth)

    def agent_payload(self) -> str:
        """What an agent (or any public page before the reveal) may see: the Question."""
        return self.question


@dataclass(frozen=True)
class _Heading:
    line: int  # index of its first line
    end: int  # index of the line after it (an underlined heading spans two)
    title: str


def _headings(tokens: list[Token]) -> list[_Heading]:
    """Every H2 of the document itself, as CommonMark reads it."""
    found = []
    for n, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2" and not token.level and token.map:
            found.append(_Heading(token.map[0], token.map[1], tokens[n + 1].content.strip()))
    return found


def _hidden(lines: list[str], tokens: list[Token]) -> str:
    """Why a line PITFALL would take for an H2 is not one: it lies in a code or HTML
    block (a ``## Ground Truth`` right under ``</details>`` is the usual one)."""
    notes = []
    for token in tokens:
        if token.level or token.type not in CONTENT_BLOCKS or token.map is None:
            continue
        for n in range(*token.map):
            if UPSTREAM_H2.fullmatch(lines[n]):
                kind = CONTENT_BLOCKS[token.type]
                notes.append(f"; line {n + 1} {lines[n]!r} is content, inside {kind}")
    return "".join(notes)


def _sections(where: str, text: str) -> list[str]:
    """The three sections' text, cut as PITFALL cuts it: from the end of one heading's
    line to the start of the next heading, stripped."""
    lines = text.split("\n")
    tokens = COMMONMARK.parse(text)
    headings = _headings(tokens)
    titles = tuple(h.title for h in headings)
    if titles != SECTIONS:
        found = ", ".join(t or "(empty)" for t in titles) or "none"
        raise PointError(
            f"{where}: H2 sections must be exactly Question, Ground Truth, Provenance in "
            f"that order (found: {found}){_hidden(lines, tokens)}"
        )
    for h in headings:
        written = UPSTREAM_H2.fullmatch(lines[h.line])
        if not written or written.group(1).strip() != h.title:
            raise PointError(
                f"{where}: line {h.line + 1}: the {h.title} heading must be written "
                f"'## {h.title}' at the start of its line, as PITFALL reads headings "
                f"(found {lines[h.line]!r})"
            )
    bounds = [h.line for h in headings[1:]] + [len(lines)]
    return ["\n".join(lines[h.end : b]).strip() for h, b in zip(headings, bounds, strict=True)]


def _details_body(where: str, section: str, text: str) -> str:
    # PITFALL's line splitting, which also breaks at a form feed, U+2028 and the like: the
    # body, and so the Ground Truth's hash, depends on it
    lines = text.splitlines()
    rule = (
        f"{where}: {section} must be wrapped in a <details> block: <details>, a one-line "
        "<summary>...</summary>, a non-empty body, </details>"
    )
    if len(lines) < 5 or lines[0].strip() != "<details>" or lines[-1].strip() != "</details>":
        raise PointError(rule)
    summary = lines[1].strip()
    if not (summary.startswith("<summary>") and summary.endswith("</summary>")):
        raise PointError(rule)
    body = "\n".join(lines[2:-1]).strip()
    if not body:
        raise PointError(f"{where}: {section} has an empty body inside its <details> block")
    return body


def parse_point(text: str, path: Path) -> Point:
    """One point from its file text; ``PointError`` naming the file and the rule."""
    where = str(path)
    # universal newlines, as reading the file gives them: CommonMark's lines are then ours
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    first = text.splitlines()[:1]  # line 1 as PITFALL splits it
    if not first or not first[0].startswith("# "):
        raise PointError(f"{where}: line 1 must be '# <id>'")
    point_id = first[0][2:].strip()
    if not ID.fullmatch(point_id):
        raise PointError(
            f"{where}: id {point_id!r} must be lowercase kebab-case ([a-z0-9]+(-[a-z0-9]+)*)"
        )
    if path.stem != point_id:
        raise PointError(f"{where}: the file name must be the id ({point_id}.md)")
    placeholder = PLACEHOLDER.search(text)
    if placeholder:
        raise PointError(f"{where}: unresolved template placeholder {placeholder.group(0)}")
    question, ground_truth, provenance = _sections(where, text)
    if not question:
        raise PointError(f"{where}: the Question is empty")
    return Point(
        id=point_id,
        path=path,
        text=text,
        question=question,
        ground_truth=_details_body(where, "Ground Truth", ground_truth),
        provenance=_details_body(where, "Provenance", provenance),
    )


def read_point(path: str | os.PathLike[str]) -> Point:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")  # universal newlines, as the hashes need
    except UnicodeDecodeError as exc:
        raise PointError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    return parse_point(text, file)


def _check_meta(folder: Path) -> None:
    meta = folder / META
    if not meta.exists():
        raise PointError(f"{meta}: the template META.md is missing")
    text = meta.read_text(encoding="utf-8")
    missing = [f for f in META_FRAGMENTS if f not in text]
    if missing:
        raise PointError(f"{meta}: the template lacks {', '.join(missing)}")
    titles = tuple(h.title for h in _headings(COMMONMARK.parse(text)))
    if titles != SECTIONS:
        raise PointError(f"{meta}: H2 sections must be exactly Question, Ground Truth, Provenance")


def load_points(folder: str | os.PathLike[str]) -> list[Point]:
    """Every point under ``folder`` (recursively, sorted by path; ``META.md`` files are
    templates, not points). Refused: no folder, no template, no point, duplicate ids."""
    root = Path(folder)
    if not root.is_dir():
        raise PointError(f"{root}: no such points folder")
    _check_meta(root)
    points = [read_point(p) for p in sorted(root.rglob("*.md")) if p.name != META]
    if not points:
        raise PointError(f"{root}: no point files")
    seen: dict[str, list[str]] = {}
    for point in points:
        seen.setdefault(point.id, []).append(str(point.path))
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    if twice:
        listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(twice.items()))
        raise PointError(f"{root}: duplicate point ids: {listed}")
    return points


def suite_sha256(points: list[Point]) -> str:
    """The suite digest: sha256 of ``<id>:<point_sha256>`` lines sorted by id, joined with
    newlines, no trailing newline."""
    lines = sorted(f"{p.id}:{p.point_sha256}" for p in points)
    return sha256_text("\n".join(lines))
