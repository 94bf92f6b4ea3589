"""Thin tasks of the forward track: take an id, call the scheduler or the check.

Both are idempotent (a unique constraint, a conditional update), so a task that runs
twice, or beside the periodic sweep, changes nothing the first did not."""

from __future__ import annotations

import logging

from celery import shared_task

from pitweb.forward import checks, schedule
from pitweb.releases.models import Release

log = logging.getLogger(__name__)


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
    queued = 0
    # one line or row that fails (ours) is logged and left for the next pass; the others
    # are not held up behind it
    for release in schedule.newest_versions():
        try:
            queued += len(schedule.forward_queue(release=release))
        except Exception:
            log.exception("forward sweep: scheduling %s failed", release.content_digest)
    for pk in checks.unsettled():
        try:
            checks.forward_check(forward_run_id=pk)
        except Exception:
            log.exception("forward sweep: checking forward run %s failed", pk)
    return queued
