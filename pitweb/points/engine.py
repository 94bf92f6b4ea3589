"""What the engine is handed from the stored rows: a set's points as it parses them, and
how many paid calls a job will make. The services and the work read these; a page never
does (the points hold their hidden sections)."""

from __future__ import annotations

import math
from pathlib import Path

from harness.points.live import LivePoint
from harness.points.markdown import Point as EnginePoint
from harness.points.markdown import parse_point
from pitweb.points.models import Point, PointSet, PointsJob


def engine_points(point_set: PointSet) -> list[EnginePoint]:
    """The set's points as the engine parses them, from the stored files."""
    return [
        parse_point(p.text, Path(p.suite or ".") / f"{p.point_id}.md")
        for p in point_set.points.order_by("position")
    ]


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
