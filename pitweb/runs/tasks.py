"""Thin tasks: take an id, call one service, requeue if it asks for a retry. Around each
job, the folders that dead workers left on this machine are swept.

Tasks import services (this app's and pricing's); no service imports a task at module
level: each app sends its tasks through one function (``enqueue_verification``,
``enqueue_score``)."""

from __future__ import annotations

from celery import shared_task

from pitweb.board import store as boardstore
from pitweb.execution import services as execution
from pitweb.jobs.machine import worker_name
from pitweb.jobs.workers import sweep_dead_folders  # importing it connects the heartbeats
from pitweb.points import services as points
from pitweb.pricing import services as pricing
from pitweb.runs import services, verification


@shared_task(acks_late=True, reject_on_worker_lost=True)
def verify_run_task(job_id: int) -> str:
    sweep_dead_folders()
    try:
        outcome = verification.verify_job(job_id=job_id, worker=worker_name())
    finally:
        sweep_dead_folders()
    if outcome.retry_in is not None:
        verify_run_task.apply_async((job_id,), countdown=outcome.retry_in)
    return outcome.state


@shared_task
def sweep_stale_jobs() -> list[int]:
    """Every kind of job whose worker stopped heart-beating is handed on (see
    ``pitweb.jobs.machine.sweep_stale``), and the job folders dead workers left here go."""
    sweep_dead_folders()  # on the machine that runs the sweep
    pricing.platform_requeue_stale()
    points.points_requeue_stale()
    execution.execution_requeue_stale()
    boardstore.refresh_all()  # a board whose refresh message was lost
    return services.verification_requeue_stale()
