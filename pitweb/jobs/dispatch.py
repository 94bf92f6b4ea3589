"""Sending a job's task once the transaction that queued the job commits.

The job's row is the truth, the task message only a wake-up call: a job whose message
could not be sent (the broker down, a network fault) stays queued, and the sweep
(``machine.sweep_stale`` lists queued jobs older than its limit) sends it again. So a
broker fault never fails the request that queued the job: its data is committed, and
the client is told so.

A service names its task (``"pitweb.runs.tasks.verify_run_task"``) rather than
importing it: tasks call services, services never import tasks, so the imports run one
way (tasks -> work -> services -> this module) and no circle closes through a task.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError

log = logging.getLogger(__name__)


class Task(Protocol):
    name: str

    def delay(self, *args: Any) -> Any: ...


def task_named(name: str) -> Task:
    """The registered task ``name``. A process that has not imported it yet (the web
    process, before its first send) has Celery import every app's ``tasks`` module, as a
    worker does when it starts; an unknown name raises ``celery.exceptions.NotRegistered``."""
    if name not in current_app.tasks:
        current_app.autodiscover_tasks(force=True)
    task: Task = current_app.tasks[name]
    return task


def send_on_commit(task: str | Task, job_id: int) -> None:
    """Send ``task`` (its name, or the task) for job ``job_id`` once the current
    transaction commits (at once outside one). The callback is a named function:
    Django's robust ``on_commit`` names a failing callback by its ``__qualname__``, which
    a ``functools.partial`` lacks, and the failure to name it would skip the
    transaction's other callbacks and fail the request after its data was committed."""
    name = task if isinstance(task, str) else task.name

    def send_job() -> None:
        try:
            (task_named(task) if isinstance(task, str) else task).delay(job_id)
        except OperationalError:
            # Celery wraps every failure to reach the broker (after its own retries) in
            # kombu's OperationalError; the job stays queued for the sweep
            log.warning(
                "job %s: %s not sent (broker unreachable); it stays queued for the sweep",
                job_id,
                name,
                exc_info=True,
            )

    send_job.__qualname__ = f"send_on_commit.<{name}>"
    transaction.on_commit(send_job, robust=True)
