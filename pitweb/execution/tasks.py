"""Thin tasks: take an id, run the work (``pitweb.jobs.tasks.run_job``). Imports go one
way: tasks -> work -> services; services send these tasks by name, never importing them."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from pitweb.execution import work
from pitweb.jobs.tasks import run_job


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PITWEB_EXECUTION_CELL_SOFT_LIMIT,
    time_limit=settings.PITWEB_EXECUTION_CELL_HARD_LIMIT,
)
def execution_cell_task(cell_id: int) -> str:
    return run_job(
        execution_cell_task,
        cell_id,
        lambda worker: work.execute_cell(cell_id=cell_id, worker=worker),
    )


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PITWEB_EXECUTION_CELL_SOFT_LIMIT,
    time_limit=settings.PITWEB_EXECUTION_CELL_HARD_LIMIT,
)
def execution_assembly_task(job_id: int) -> str:
    return run_job(
        execution_assembly_task,
        job_id,
        lambda worker: work.assemble_job(job_id=job_id, worker=worker),
    )
