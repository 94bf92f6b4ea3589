"""Workers heart-beat from the moment they are ready until they stop, job or no job, and
clear what dead workers left on this machine when they start."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery.signals import worker_process_init, worker_ready, worker_shutdown
from django.conf import settings
from django.db import DatabaseError, close_old_connections
from django.utils import timezone

from harness.isolation.sandbox.outside import availability
from pitweb.artifacts import scratch_sweep
from pitweb.jobs.machine import worker_name
from pitweb.jobs.models import WorkerBeat

log = logging.getLogger(__name__)
_stop = threading.Event()


def beat(name: str) -> None:
    """Record that ``name`` is alive now."""
    now = timezone.now()
    updated = WorkerBeat.objects.filter(name=name).update(last_seen=now, stopped_at=None)
    if not updated:
        WorkerBeat.objects.update_or_create(
            name=name, defaults={"started_at": now, "last_seen": now, "stopped_at": None}
        )


def _loop(name: str) -> None:
    while True:
        try:
            beat(name)
        except Exception:  # a database hiccup must not stop the beats for good
            log.warning("heartbeat of %s not written", name, exc_info=True)
        finally:
            close_old_connections()
        if _stop.wait(settings.PITWEB_HEARTBEAT_SECONDS):
            return


def sweep_dead_folders() -> None:
    """Remove the job folders that dead processes left on this machine (a live one's
    stay: ``pitweb.artifacts`` says why)."""
    try:
        scratch_sweep()
    except OSError:  # an unreadable folder must not keep a worker from working
        log.warning("job folders of dead workers not swept", exc_info=True)


@worker_process_init.connect
def _process_started(sender: Any = None, **kwargs: Any) -> None:
    """A pool process starting: a new worker, or the one that replaces a killed one."""
    sweep_dead_folders()


@worker_ready.connect
def _start(sender: Any = None, **kwargs: Any) -> None:
    sweep_dead_folders()

    name = worker_name()
    isolated, why = availability()
    try:
        WorkerBeat.objects.update_or_create(
            name=name,
            defaults={
                "started_at": timezone.now(),
                "last_seen": timezone.now(),
                "stopped_at": None,
                "isolation": isolated,
                "isolation_unavailable": "" if isolated else why[:500],
            },
        )
    except DatabaseError:
        log.warning("worker %s: heartbeat table not reachable (migrated?)", name, exc_info=True)
    _stop.clear()
    threading.Thread(target=_loop, args=(name,), daemon=True, name="pitweb-heartbeat").start()


@worker_shutdown.connect
def _stopped(sender: Any = None, **kwargs: Any) -> None:
    _stop.set()
    try:
        WorkerBeat.objects.filter(name=worker_name()).update(stopped_at=timezone.now())
    except DatabaseError:
        log.warning("worker stop not recorded", exc_info=True)
