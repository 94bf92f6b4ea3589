"""Thin tasks: take an id, call the scoring, requeue if it asks for a retry."""

from __future__ import annotations

from celery import shared_task

from pitweb.jobs.machine import worker_name
from pitweb.jobs.workers import sweep_dead_folders
from pitweb.pricing import scoring


@shared_task(acks_late=True, reject_on_worker_lost=True)
def rescore_run_task(score_id: int) -> str:
    sweep_dead_folders()
    try:
        outcome = scoring.score_run(score_id=score_id, worker=worker_name())
    finally:
        sweep_dead_folders()
    if outcome.retry_in is not None:
        rescore_run_task.apply_async((score_id,), countdown=outcome.retry_in)
    return outcome.state
