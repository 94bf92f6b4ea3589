"""Point files: parsed and validated as PITFALL's own validator does, with one
difference on purpose: a ``## `` line inside a fenced code block is content, not a
section heading.

The rules (see the reference notes on PITFALL's ``point.py``): line 1 is ``# <id>``, the
id is lowercase kebab-case and equals the file's stem; no ``{{placeholder}}`` anywhere;
the H2 sections are exactly Question, Ground Truth, Provenance, in that order; the
Question is not empty; Ground Truth and Provenance are each a ``<details>`` block with a
one-line ``<summary>`` and a non-empty body. Content is otherwise free (tables, links,
``###``, nested ``<details>``, any script).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
PLACEHOLDER = re.compile(r"\{\{[^{}]*\}\}")
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
FENCE = re.compile(r"^(```|~~~)")


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


def _headings(lines: list[str]) -> list[tuple[int, str]]:
    """(line index, title) of every H2 outside fenced code blocks."""
    found, fenced = [], False
    for n, line in enumerate(lines):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced and line.startswith("## ") and line[3:].strip():
            found.append((n, line[3:].strip()))
    return found


def _details_body(where: str, section: str, text: str) -> str:
    lines = text.split("\n")
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
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or not lines[0].startswith("# "):
        raise PointError(f"{where}: line 1 must be '# <id>'")
    point_id = lines[0][2:].strip()
    if not ID.fullmatch(point_id):
        raise PointError(
            f"{where}: id {point_id!r} must be lowercase kebab-case ([a-z0-9]+(-[a-z0-9]+)*)"
        )
    if path.stem != point_id:
        raise PointError(f"{where}: the file name must be the id ({point_id}.md)")
    placeholder = PLACEHOLDER.search(text)
    if placeholder:
        raise PointError(f"{where}: unresolved template placeholder {placeholder.group(0)}")
    headings = _headings(lines)
    if tuple(title for _, title in headings) != SECTIONS:
        found = ", ".join(title for _, title in headings) or "none"
        raise PointError(
            f"{where}: H2 sections must be exactly Question, Ground Truth, Provenance in "
            f"that order (found: {found})"
        )
    bounds = [n for n, _ in headings] + [len(lines)]
    bodies = ["\n".join(lines[bounds[i] + 1 : bounds[i + 1]]).strip() for i in range(3)]
    if not bodies[0]:
        raise PointError(f"{where}: the Question is empty")
    return Point(
        id=point_id,
        path=path,
        text=text,
        question=bodies[0],
        ground_truth=_details_body(where, "Ground Truth", bodies[1]),
        provenance=_details_body(where, "Provenance", bodies[2]),
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
    titles = tuple(t for _, t in _headings(text.replace("\r\n", "\n").split("\n")))
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
