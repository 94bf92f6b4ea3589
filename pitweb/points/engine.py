"""What the engine is handed from the stored rows: a set's points as it parses them, and
how many paid calls a job will make. The services and the work read these; a page never
does (the points hold their hidden sections)."""

from __future__ import annotations

import math
from pathlib import Path

from harness.points.live import LivePoint, question_points
from harness.points.markdown import Point as EnginePoint
from harness.points.markdown import parse_point
from pitweb.points.models import Point, PointSet, PointsJob


def engine_points(point_set: PointSet) -> list[EnginePoint]:
    """The set's points as the engine parses them, from the stored files; a live-shadow
    cohort's, until its last point is resolved, as their Questions alone (no file exists
    yet: what an answer is made from and bound by)."""
    rows = list(point_set.points.order_by("position"))
    if point_set.live and any(p.resolved_at is None for p in rows):
        return question_points(live_points(point_set, only=rows))
    return [parse_point(p.text, Path(p.suite or ".") / f"{p.point_id}.md") for p in rows]


def live_points(point_set: PointSet, only: list[Point] | None = None) -> list[LivePoint]:
    """A live-shadow cohort's points as the engine plans them (``only``: these rows)."""
    rows = only if only is not None else list(point_set.points.order_by("position"))
    return [
        LivePoint(id=p.point_id, question=p.question, as_of=p.as_of, resolves_on=p.resolves_on,
                  resolution=p.rule)
        for p in rows
        if p.as_of is not None and p.resolves_on is not None
    ]  # fmt: skip


def estimated_calls(job: PointsJob) -> int:
    """About how many paid calls the job makes (its progress bar's end)."""
    points = job.point_set.points.count()
    if job.kind == PointsJob.Kind.ANSWER:
        return points * job.samples
    answers = len((job.answer_set.body if job.answer_set else {}).get("answers") or [])
    answered = min(points, answers)
    return 4 * answered + answers + job.stability_k * math.ceil(answered / max(job.stride, 1))
