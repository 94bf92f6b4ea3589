"""Thin tasks: take an id, run the scoring (``pitweb.jobs.tasks.run_job``). Imports go
one way: tasks -> scoring -> services; services send this task by name, never importing
it."""

from __future__ import annotations

from celery import shared_task

from pitweb.jobs.tasks import run_job
from pitweb.pricing import scoring


@shared_task(acks_late=True, reject_on_worker_lost=True)
def rescore_run_task(score_id: int) -> str:
    return run_job(
        rescore_run_task,
        score_id,
        lambda worker: scoring.score_run(score_id=score_id, worker=worker),
    )
