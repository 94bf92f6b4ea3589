"""Thin tasks of the forward track: take an id, call the scheduler or the check.

Both are idempotent (a unique constraint, a conditional update), so a task that runs
twice, or beside the periodic sweep, changes nothing the first did not."""

from __future__ import annotations

from celery import shared_task

from pitweb.forward import checks, schedule
from pitweb.releases.models import Release


@shared_task(acks_late=True, reject_on_worker_lost=True)
def forward_schedule_task(release_id: int) -> int:
    """A release version was registered: queue its forward runs and backtests."""
    release = Release.objects.filter(pk=release_id).first()
    return 0 if release is None else len(schedule.forward_queue(release=release))


@shared_task(acks_late=True, reject_on_worker_lost=True)
def forward_check_task(forward_run_id: int) -> str:
    return checks.forward_check(forward_run_id=forward_run_id)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def forward_sweep() -> int:
    """The periodic pass: every line's newest version scheduled, every ended job settled
    (what a lost signal or a broker outage left undone)."""
    queued = sum(len(schedule.forward_queue(release=r)) for r in schedule.newest_versions())
    for pk in checks.unsettled():
        checks.forward_check(forward_run_id=pk)
    return queued
