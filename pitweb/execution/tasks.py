"""Thin tasks: take an id, call the work, requeue if it asks for a retry."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from pitweb.execution import work
from pitweb.jobs.machine import worker_name
from pitweb.jobs.workers import sweep_dead_folders  # importing it connects the heartbeats


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PITWEB_EXECUTION_CELL_SOFT_LIMIT,
    time_limit=settings.PITWEB_EXECUTION_CELL_HARD_LIMIT,
)
def execution_cell_task(cell_id: int) -> str:
    sweep_dead_folders()
    outcome = work.execute_cell(cell_id=cell_id, worker=worker_name())
    if outcome.retry_in is not None:
        execution_cell_task.apply_async((cell_id,), countdown=outcome.retry_in)
    return outcome.state


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PITWEB_EXECUTION_CELL_SOFT_LIMIT,
    time_limit=settings.PITWEB_EXECUTION_CELL_HARD_LIMIT,
)
def execution_assembly_task(job_id: int) -> str:
    sweep_dead_folders()
    outcome = work.assemble_job(job_id=job_id, worker=worker_name())
    if outcome.retry_in is not None:
        execution_assembly_task.apply_async((job_id,), countdown=outcome.retry_in)
    return outcome.state
