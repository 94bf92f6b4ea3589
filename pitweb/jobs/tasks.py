"""The jobs app's task (the sweep) and the body every job task runs.

A job task is a few lines: its Celery options and one call of :func:`run_job` with the
work it does. The work claims its job, calls the harness or a service and records the
outcome (``machine``); ``run_job`` runs it as this worker, sweeps the folders dead
workers left on this machine around it, and sends the task again when the work asks
for a retry. Imports go one way: an app's tasks import this module and their work;
this module imports no app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from celery import shared_task

from pitweb.jobs import sweeps
from pitweb.jobs.machine import Outcome, worker_name
from pitweb.jobs.workers import sweep_dead_folders  # importing it connects the heartbeats


class JobTask(Protocol):
    def apply_async(self, args: tuple[int], countdown: int) -> Any: ...


def run_job(task: JobTask, job_id: int, work: Callable[[str], Outcome]) -> str:
    """Do ``work`` (given this worker's name) for job ``job_id`` of ``task``; send the
    task again after the wait the outcome names, if it names one. The job's state is
    returned."""
    sweep_dead_folders()
    try:
        outcome = work(worker_name())
    finally:
        sweep_dead_folders()
    if outcome.retry_in is not None:
        task.apply_async((job_id,), countdown=outcome.retry_in)
    return outcome.state


@shared_task
def sweep_stale_jobs() -> dict[str, object]:
    """Every kind of job whose worker stopped heart-beating is handed on, each app's by
    the share it registered (``sweeps``), and the job folders dead workers left on the
    machine that runs the sweep go."""
    sweep_dead_folders()
    return sweeps.sweep_all()
