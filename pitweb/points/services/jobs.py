"""Writes for the points jobs: the models the workers may call, a request to answer a
point set or judge an answer set, its dispatch, its end, and the sweep's share.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness.points.live import LiveError, check_answerable, market_day
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.jobs import machine
from pitweb.jobs.dispatch import send_on_commit
from pitweb.points.engine import estimated_calls, live_points
from pitweb.points.models import (
    AnswerSet,
    JournalLine,
    ModelEndpoint,
    PointSet,
    PointSetState,
    PointsJob,
)
from pitweb.points.services.point_sets import NAME

ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,99}")


def model_register(
    *,
    user: User | None,
    name: str,
    base_url: str,
    model: str,
    effort: str = "",
    api_key_env: str = "",
    concurrency: int = 4,
    rate_per_minute: int = 0,
    timeout_seconds: int = 600,
) -> ModelEndpoint:
    """A model the workers may call (an OpenAI-compatible endpoint); its key stays in the
    workers' environment, named by ``api_key_env``."""
    if not NAME.fullmatch(name) or len(name) > 100:
        raise SubmissionError("invalid_input", "name: lowercase words joined by '-'")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SubmissionError("invalid_input", "base_url must be an http(s) URL")
    if not model:
        raise SubmissionError("invalid_input", "model is required")
    if api_key_env and not ENV_NAME.fullmatch(api_key_env):
        raise SubmissionError("invalid_input", "api_key_env must be an environment variable name")
    if not 1 <= concurrency <= 64 or rate_per_minute < 0 or not 1 <= timeout_seconds <= 3600:
        raise SubmissionError(
            "invalid_input", "concurrency 1-64, rate_per_minute >= 0, timeout 1-3600 seconds"
        )
    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name=name,
        defaults={
            "base_url": base_url, "model": model, "effort": effort, "api_key_env": api_key_env,
            "concurrency": concurrency, "rate_per_minute": rate_per_minute,
            "timeout_seconds": timeout_seconds, "created_by": user,
        },
    )  # fmt: skip
    return endpoint


def answer_job_request(
    *, user: User | None, point_set: PointSet, endpoint: ModelEndpoint, samples: int = 1
) -> PointsJob:
    """Have the workers answer every point of ``point_set`` with ``endpoint``."""
    if not 1 <= samples <= 20:
        raise SubmissionError("invalid_input", "samples: 1 to 20 answers per point")
    if point_set.live and point_set.state == PointSetState.SEALED:
        try:
            check_answerable(live_points(point_set), market_day(timezone.now()))
        except LiveError as exc:
            raise SubmissionError("answers_closed", str(exc), 409) from None
    return _request(
        PointsJob(
            kind=PointsJob.Kind.ANSWER, point_set=point_set, endpoint=endpoint, samples=samples,
            requested_by=user, reason=f"answer {point_set.name} with {endpoint.name}",
        )
    )  # fmt: skip


def judge_job_request(
    *,
    user: User | None,
    answer_set: AnswerSet,
    endpoint: ModelEndpoint,
    stability_k: int = 3,
    stride: int = 10,
) -> PointsJob:
    """Have the workers judge ``answer_set`` with the site's judge ``endpoint``: controls
    first, then every answer, then the stability sample. Every answer set the site shows
    verdicts for is judged here, an imported or uploaded one included."""
    if not 2 <= stability_k <= 10 or not 1 <= stride <= 1000:
        raise SubmissionError("invalid_input", "stability_k 2-10, stride 1-1000")
    if answer_set.point_set.live and answer_set.point_set.state == PointSetState.SEALED:
        raise SubmissionError(
            "not_finalized",
            f"live-shadow cohort {answer_set.point_set.name} is judged when its last point "
            "is resolved: its outcomes do not all exist yet",
            409,
        )
    if answer_set.awaits_reveal:
        raise SubmissionError(
            "sealed_until_reveal",
            f"these answers were received while point set {answer_set.point_set.name} is "
            f"sealed: they are judged at its reveal ({answer_set.point_set.reveal_on}), "
            "not before",
            409,
        )
    return _request(
        PointsJob(
            kind=PointsJob.Kind.JUDGE, point_set=answer_set.point_set, endpoint=endpoint,
            answer_set=answer_set, stability_k=stability_k, stride=stride, requested_by=user,
            reason=f"judge {answer_set.model}'s answers with {endpoint.name}",
        )
    )  # fmt: skip


def _request(job: PointsJob) -> PointsJob:
    with transaction.atomic():
        job.total_calls = estimated_calls(job)
        job.save()
        audit_record(actor=job.requested_by, action=f"points_{job.kind}", reason=job.reason,
                     public=job.point_set.state != PointSetState.SEALED)  # fmt: skip
        enqueue_points_job(job.pk)
    return job


POINTS_TASK = "pitweb.points.tasks.points_job_task"


def enqueue_points_job(job_id: int) -> None:
    """Send job ``job_id`` to a worker once the transaction commits, by its task's name:
    tasks call the work and the work these services, never the reverse."""
    send_on_commit(POINTS_TASK, job_id)


def points_job_finish(*, job_id: int, worker: str, state: str, **fields: Any) -> bool:
    """The job ends; ended done or control_failed, its journal's lines go in the same
    transaction (its output is stored with it): none outlives the job, even when its worker
    dies the next moment."""
    with transaction.atomic():
        finished = machine.finish(PointsJob, pk=job_id, worker=worker, state=state, **fields)
        if finished and state in (PointsJob.State.DONE, PointsJob.State.CONTROL_FAILED):
            JournalLine.objects.filter(job_id=job_id).delete()
    return finished


def points_requeue_stale(*, older_than: dt.timedelta | None = None) -> list[int]:
    """The sweep's share: a points job whose worker stopped heart-beating goes back to
    the queue (its journal keeps the paid calls), and queued jobs whose message was lost
    are sent again."""
    swept = machine.sweep_stale(PointsJob, older_than=older_than)
    for pk in swept.to_dispatch:
        enqueue_points_job(pk)
    return swept.to_dispatch
