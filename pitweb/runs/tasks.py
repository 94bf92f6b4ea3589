"""Thin tasks: take an id, call one service, requeue if it asks for a retry. Around each
job, the folders that dead workers left on this machine are swept."""

from __future__ import annotations

from celery import shared_task

from pitweb.runs import services, verification
from pitweb.runs.workers import sweep_dead_folders  # importing it connects the heartbeats


@shared_task(acks_late=True, reject_on_worker_lost=True)
def verify_run_task(job_id: int) -> str:
    sweep_dead_folders()
    try:
        outcome = verification.verify_job(job_id=job_id, worker=services.worker_name())
    finally:
        sweep_dead_folders()
    if outcome.retry_in is not None:
        verify_run_task.apply_async((job_id,), countdown=outcome.retry_in)
    return outcome.state


@shared_task(acks_late=True, reject_on_worker_lost=True)
def rescore_run_task(score_id: int) -> str:
    sweep_dead_folders()
    try:
        outcome = verification.score_run(score_id=score_id, worker=services.worker_name())
    finally:
        sweep_dead_folders()
    if outcome.retry_in is not None:
        rescore_run_task.apply_async((score_id,), countdown=outcome.retry_in)
    return outcome.state


@shared_task
def sweep_stale_jobs() -> list[int]:
    from pitweb.runs.platform import platform_requeue_stale

    sweep_dead_folders()  # on the machine that runs the sweep
    platform_requeue_stale()
    return services.verification_requeue_stale()
