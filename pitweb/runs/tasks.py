"""Thin tasks: take an id, call the verification work (``pitweb.jobs.tasks.run_job``).

Imports go one way: tasks import the verification work; services send the verification
task by name (``enqueue_verification``), never importing it. The stale-job sweep is
``pitweb.jobs.tasks.sweep_stale_jobs``; runs registers its share in ``RunsConfig.ready``;
the board's tasks are in ``pitweb.board.tasks``."""

from __future__ import annotations

from celery import shared_task

from pitweb.jobs.tasks import run_job
from pitweb.runs import verification


@shared_task(acks_late=True, reject_on_worker_lost=True)
def verify_run_task(job_id: int) -> str:
    return run_job(
        verify_run_task,
        job_id,
        lambda worker: verification.verify_job(job_id=job_id, worker=worker),
    )
