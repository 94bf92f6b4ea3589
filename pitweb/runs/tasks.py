"""Thin tasks: take an id, call one service or the work (``pitweb.jobs.tasks.run_job``).

Imports go one way: tasks import services and the verification work; services send the
verification task by name (``enqueue_verification``), never importing it. The stale-job
sweep is ``pitweb.jobs.tasks.sweep_stale_jobs``; runs registers its share in
``RunsConfig.ready``."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

from pitweb.jobs.tasks import run_job
from pitweb.runs import boardstore, services, verification
from pitweb.runs.board import REFRESH_SENT


@shared_task(acks_late=True, reject_on_worker_lost=True)
def verify_run_task(job_id: int) -> str:
    return run_job(
        verify_run_task,
        job_id,
        lambda worker: verification.verify_job(job_id=job_id, worker=worker),
    )


@shared_task
def publish_weekly_snapshot() -> int:
    """The schedule's snapshot of the whole public board (settings: the beat schedule)."""
    return services.snapshot_scheduled().pk


@shared_task
def refresh_boards_task() -> int:
    """The stored boards computed again where the board changed (boardstore); sent once
    a change commits, and by the sweep for a change whose message was lost."""
    cache.delete(REFRESH_SENT)  # a change from now on sends another
    return boardstore.refresh_all()
