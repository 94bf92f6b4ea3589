"""Thin tasks: take an id, run the work (``pitweb.jobs.tasks.run_job``)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from pitweb.jobs.tasks import run_job
from pitweb.points import work


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PITWEB_POINTS_JOB_SOFT_LIMIT,
    time_limit=settings.PITWEB_POINTS_JOB_HARD_LIMIT,
)
def points_job_task(job_id: int) -> str:
    return run_job(
        points_job_task, job_id, lambda worker: work.run_points_job(job_id=job_id, worker=worker)
    )
