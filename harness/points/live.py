"""Live-shadow points: Questions whose Ground Truth does not exist yet.

A live-shadow point is written as of a date (its **as-of** date: the Question may use only
what was knowable then) and resolves on a later one (its **resolution** date: the day its
outcome exists). A cohort of them is sealed before any as-of date has passed, answered
before the earliest one passes, and resolved point by point once each resolution date has
passed; it is **finalized** only when every member is resolved, and only then judged. Every
date rule is read in the market's timezone (New York): a day has not passed there until it
has passed on the exchange.

The cohort's **plan** is public from the start: each point's id, the hash of its Question,
its dates and the rule it resolves by (its Provenance: where the outcome will be read). Its
commitment is the sha256 of the plan's canonical JSON (``harness.canonical``), so anyone
holding the plan checks that nothing in it moved after the seal. Nothing is hidden at the
seal because nothing hidden exists yet: the Ground Truth is written at resolution, into a
point file of PITFALL's template, which the engine then parses as any other.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from harness import canonical
from harness.points.markdown import ID, Point, PointError, parse_point
from harness.points.questions import question_only_points

MARKET = ZoneInfo("America/New_York")


class LiveError(ValueError):
    """A live-shadow point or cohort that breaks a rule, naming it."""


@dataclass(frozen=True)
class LivePoint:
    id: str
    question: str
    as_of: date
    resolves_on: date
    resolution: str  # how the outcome will be read (its Provenance, public from the seal)

    @property
    def question_sha256(self) -> str:
        return hashlib.sha256(self.question.encode("utf-8")).hexdigest()

    def checked(self) -> LivePoint:
        """The point, once its fields hold, its Question as the engine will read it from
        the file it resolves into (which must parse)."""
        if not ID.fullmatch(self.id):
            raise LiveError(f"point {self.id!r}: an id is lowercase kebab-case")
        if not self.question.strip() or not self.resolution.strip():
            raise LiveError(f"point {self.id}: a Question and a resolution rule are required")
        if self.resolves_on < self.as_of:
            raise LiveError(
                f"point {self.id}: resolves on {self.resolves_on}, before its as-of date "
                f"{self.as_of}"
            )
        try:
            parsed = parse_point(
                point_file(self, "to be resolved", self.resolution), Path(f"{self.id}.md")
            )
        except PointError as exc:
            raise LiveError(f"point {self.id}: not a point file once resolved: {exc}") from None
        return dataclasses.replace(self, question=parsed.question)


def market_day(moment: datetime) -> date:
    """The market's date at ``moment`` (an aware time)."""
    if moment.tzinfo is None:
        raise LiveError("a moment without a timezone names no market day")
    return moment.astimezone(MARKET).date()


def plan(points: Sequence[LivePoint]) -> list[dict[str, str]]:
    """The cohort's public plan, sorted by id."""
    return [
        {
            "id": p.id,
            "question_sha256": p.question_sha256,
            "as_of": p.as_of.isoformat(),
            "resolves_on": p.resolves_on.isoformat(),
            "resolution_sha256": hashlib.sha256(p.resolution.encode("utf-8")).hexdigest(),
        }
        for p in sorted(points, key=lambda p: p.id)
    ]


def plan_commitment(points: Sequence[LivePoint]) -> str:
    """``sha256:`` and the hex of the plan's canonical JSON."""
    return canonical.digest(plan(points))


def question_points(points: Sequence[LivePoint]) -> list[Point]:
    """The points as the engine holds a sealed set's Questions (every hidden part empty,
    ``harness.points.questions``): what answers are made from and bound by."""
    return question_only_points((p.id, p.question) for p in points)


def check_sealable(points: Sequence[LivePoint], today: date) -> None:
    """A cohort is sealed before any of its as-of dates has passed (market time)."""
    if not points:
        raise LiveError("a cohort holds at least one point")
    ids = [p.id for p in points]
    if len(set(ids)) != len(ids):
        raise LiveError("a point id repeats")
    for p in points:
        if p.checked() != p:
            raise LiveError(f"point {p.id}: its Question is not as the engine reads it")
        if p.as_of < today:
            raise LiveError(
                f"point {p.id}: its as-of date {p.as_of} has passed (today is {today} in "
                "New York): a live-shadow point is sealed before it is answerable"
            )


def answers_close(points: Sequence[LivePoint]) -> date:
    """The last day answers are taken: the earliest as-of date (answers cover every point)."""
    return min(p.as_of for p in points)


def check_answerable(points: Sequence[LivePoint], today: date) -> None:
    close = answers_close(points)
    if today > close:
        raise LiveError(
            f"answers closed after {close} (New York), the cohort's earliest as-of date: "
            "an answer given later could use what happened since"
        )


def check_resolvable(point: LivePoint, today: date) -> None:
    if today <= point.resolves_on:
        raise LiveError(
            f"point {point.id} resolves on {point.resolves_on}: its outcome is entered after "
            f"that date has passed in New York (today is {today})"
        )


def point_file(point: LivePoint, ground_truth: str, provenance: str) -> str:
    """The point as a PITFALL point file, its Ground Truth as resolved; its Provenance the
    rule it was sealed with, then where the outcome was read."""
    if not ground_truth.strip() or not provenance.strip():
        raise LiveError(f"point {point.id}: a resolution needs its Ground Truth and Provenance")
    provenance = f"{point.resolution.strip()}\n\n{provenance.strip()}"
    return (
        f"# {point.id}\n\n## Question\n\n{point.question.strip()}\n\n## Ground Truth\n\n"
        f"<details>\n<summary>Hidden during evaluation</summary>\n\n{ground_truth.strip()}\n\n"
        f"</details>\n\n## Provenance\n\n<details>\n<summary>Expand for audit</summary>\n\n"
        f"{provenance.strip()}\n\n</details>\n"
    )


def resolved(point: LivePoint, ground_truth: str, provenance: str) -> Point:
    """The point resolved: its file parsed by the engine, its Question unchanged."""
    try:
        parsed = parse_point(point_file(point, ground_truth, provenance), Path(f"{point.id}.md"))
    except PointError as exc:
        raise LiveError(f"point {point.id}: the resolved file does not parse: {exc}") from None
    if parsed.question_sha256 != point.question_sha256:
        raise LiveError(f"point {point.id}: its Question changed at resolution")
    return parsed
