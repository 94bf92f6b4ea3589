"""Thin tasks: take an id, call the work, requeue if it asks for a retry."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from pitweb.jobs.machine import worker_name
from pitweb.jobs.workers import sweep_dead_folders  # importing it connects the heartbeats
from pitweb.points import work


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PITWEB_POINTS_JOB_SOFT_LIMIT,
    time_limit=settings.PITWEB_POINTS_JOB_HARD_LIMIT,
)
def points_job_task(job_id: int) -> str:
    sweep_dead_folders()
    outcome = work.run_points_job(job_id=job_id, worker=worker_name())
    if outcome.retry_in is not None:
        points_job_task.apply_async((job_id,), countdown=outcome.retry_in)
    return outcome.state
