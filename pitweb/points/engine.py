"""What the engine is handed from the stored rows: a set's points as it parses them, and
how many paid calls a job will make. The services and the work read these; a page never
does (the points hold their hidden sections)."""

from __future__ import annotations

import math
from pathlib import Path

from harness.points.markdown import Point as EnginePoint
from harness.points.markdown import parse_point
from pitweb.points.models import PointSet, PointsJob


def engine_points(point_set: PointSet) -> list[EnginePoint]:
    """The set's points as the engine parses them, from the stored files."""
    return [
        parse_point(p.text, Path(p.suite or ".") / f"{p.point_id}.md")
        for p in point_set.points.order_by("position")
    ]


def estimated_calls(job: PointsJob) -> int:
    """About how many paid calls the job makes (its progress bar's end)."""
    points = job.point_set.points.count()
    if job.kind == PointsJob.Kind.ANSWER:
        return points * job.samples
    answers = len((job.answer_set.body if job.answer_set else {}).get("answers") or [])
    answered = min(points, answers)
    return 4 * answered + answers + job.stability_k * math.ceil(answered / max(job.stride, 1))
