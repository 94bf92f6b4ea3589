"""A sealed set's Questions, as its site publishes them before the reveal.

A sealed point set shows its Questions and nothing else about its points: no Ground Truth,
no Provenance, no hash over whole files (``harness.points.seal``). Whoever answers it before
the reveal answers these Questions, so the answer set binds them and nothing more: each
answer carries its Question's hash and an empty ``point_sha256``, and the set's
``point_suite_sha256`` is the Questions' digest (``sha256:`` and hex, where a whole-file
suite digest is bare hex). Once the files are revealed, :func:`harness.points.verify.
verify_answers` checks such a set against them by those Questions: the answer was made
from the Question alone, which is all any answerer is ever shown.

The document (``pit_sealed_questions``)::

    {"artifact_type": "pit_sealed_questions", "schema_version": 1,
     "point_set": name, "reveal_on": "YYYY-MM-DD",
     "commitment": "sha256:...", "question_digest": "sha256:...",
     "points": [{"id", "question", "question_sha256"}, ...]}   sorted by id

:func:`load_questions` reads it back into points that hold only their Questions (every
hidden part empty), checking each Question against its hash and all of them against the
digest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.points.markdown import Point, PointError, sha256_text
from harness.points.seal import question_digest

QUESTIONS = "pit_sealed_questions"
QUESTIONS_VERSION = 1
DOCUMENT_KEYS = frozenset(
    {"artifact_type", "schema_version", "point_set", "reveal_on", "commitment",
     "question_digest", "points"}
)  # fmt: skip
POINT_KEYS = frozenset({"id", "question", "question_sha256"})


def question_only(point: Point) -> bool:
    """Whether ``point`` holds its Question alone (read from a questions document): no
    point file is empty, so an empty text can only mean the file was never seen."""
    return point.text == ""


def question_only_points(pairs: Iterable[tuple[str, str]]) -> list[Point]:
    """Points holding only their Question (every hidden part empty), from ``(id,
    Question)`` pairs, sorted by id: what a sealed set's answers are made from."""
    return [
        Point(id=i, path=Path(f"{i}.md"), text="", question=q, ground_truth="", provenance="")
        for i, q in sorted(pairs)
    ]


def questions_document(
    *, point_set: str, reveal_on: str, commitment: str, points: Sequence[Point]
) -> dict[str, Any]:
    """The document a sealed set publishes: its Questions, and what binds them."""
    return {
        "artifact_type": QUESTIONS,
        "schema_version": QUESTIONS_VERSION,
        "point_set": point_set,
        "reveal_on": reveal_on,
        "commitment": commitment,
        "question_digest": question_digest(points),
        "points": [
            {"id": p.id, "question": p.question, "question_sha256": p.question_sha256}
            for p in sorted(points, key=lambda p: p.id)
        ],
    }


def questions_points(document: Any, where: str = "the questions") -> list[Point]:
    """The points of a questions document, each holding only its Question; a
    :class:`PointError` naming the rule when the document does not hold."""
    if not isinstance(document, dict) or document.get("artifact_type") != QUESTIONS:
        raise PointError(f"{where}: not a {QUESTIONS} document")
    if set(document) != DOCUMENT_KEYS:
        raise PointError(f"{where}: its keys are not {', '.join(sorted(DOCUMENT_KEYS))}")
    if document["schema_version"] != QUESTIONS_VERSION:
        raise PointError(f"{where}: schema_version {document['schema_version']!r} is not 1")
    raw = document["points"]
    if not isinstance(raw, list) or not raw:
        raise PointError(f"{where}: no points")
    for item in raw:
        if not isinstance(item, dict) or set(item) != POINT_KEYS:
            raise PointError(f"{where}: a point is not {{id, question, question_sha256}}")
        if not all(isinstance(item[k], str) and item[k] for k in POINT_KEYS):
            raise PointError(f"{where}: a point's id, question and hash are non-empty text")
        if sha256_text(item["question"]) != item["question_sha256"]:
            raise PointError(f"{where}: point {item['id']}'s Question differs from its hash")
    ids = [item["id"] for item in raw]
    if ids != sorted(set(ids)):
        raise PointError(f"{where}: point ids repeat or are not sorted")
    points = question_only_points((item["id"], item["question"]) for item in raw)
    if question_digest(points) != document["question_digest"]:
        raise PointError(f"{where}: the Questions do not give its question_digest")
    return points


def load_questions(path: str | os.PathLike[str]) -> list[Point]:
    """A questions document read from a file (see :func:`questions_points`)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise PointError(f"{path}: not a readable JSON document ({exc})") from None
    return questions_points(document, str(path))
