"""The only code that moves a job. Every function takes the concrete job model, so one
machine serves every kind of job.

Concurrency: every move is one conditional ``UPDATE ... WHERE id = %s AND state = %s``
(plus the worker that holds it, where that matters). Two workers racing for a claim, or a
worker finishing while the sweep requeues its job, both issue the update; the database
applies them one after the other and the second matches no row, so it reports ``False``
and changes nothing. No row lock is held while a job works.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Min, Q
from django.utils import timezone

from pitweb.jobs.models import ClaimableJob

log = logging.getLogger(__name__)

# Our own failures (an exception in our code, a worker that died) are tried this many
# times, then the job ends in its kind's GAVE_UP state.
MAX_ATTEMPTS = 3

Job = TypeVar("Job", bound=ClaimableJob)
# Called inside the move's transaction once the move has happened: (job id, new state).
Then = Callable[[int, str], None]


def worker_name() -> str:
    """This worker process, as the jobs it holds name it."""
    return f"{socket.gethostname()}:{os.getpid()}"


class IllegalMove(ValueError):
    """A move the job's kind does not allow."""


def transition(
    model: type[Job],
    *,
    pk: int,
    source: str,
    target: str,
    only: Q | None = None,
    then: Then | None = None,
    **fields: Any,
) -> bool:
    """Move job ``pk`` from ``source`` to ``target`` if it is still in ``source`` (and
    matches ``only``), writing ``fields`` with it; ``then`` runs in the same transaction
    when the move happened. An illegal move raises :class:`IllegalMove` and writes
    nothing; a move whose source no longer holds returns ``False``."""
    if not model.may_move(source, target):
        raise IllegalMove(f"a {model._meta.verbose_name} never moves {source} -> {target}")
    with transaction.atomic():
        rows = model._default_manager.filter(pk=pk, state=source)
        if only is not None:
            rows = rows.filter(only)
        moved = rows.update(state=target, **fields) == 1
        if moved and then is not None:
            then(pk, target)
    return moved


def claim(model: type[Job], *, pk: int, worker: str, then: Then | None = None) -> bool:
    """queued -> running, for exactly one worker; counts an attempt."""
    now = timezone.now()
    return transition(
        model,
        pk=pk,
        source=model.QUEUED,
        target=model.RUNNING,
        then=then,
        worker=worker,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
    )


def heartbeat(model: type[ClaimableJob], *, pk: int, worker: str) -> bool:
    """Mark a running job alive, if ``worker`` still holds it."""
    alive = model._default_manager.filter(pk=pk, state=model.RUNNING, worker=worker)
    return alive.update(heartbeat_at=timezone.now()) == 1


def finish(
    model: type[Job],
    *,
    pk: int,
    worker: str,
    state: str,
    then: Then | None = None,
    **fields: Any,
) -> bool:
    """running -> a final state, only by the worker that holds the job."""
    if state not in model.FINAL:
        raise IllegalMove(f"{state} is not a final state of a {model._meta.verbose_name}")
    return transition(
        model,
        pk=pk,
        source=model.RUNNING,
        target=state,
        only=Q(worker=worker),
        then=then,
        finished_at=timezone.now(),
        **fields,
    )


def release(
    model: type[Job], *, pk: int, worker: str, message: str, then: Then | None = None
) -> bool:
    """running -> queued: our own failure, to be tried again (by any worker)."""
    return transition(
        model,
        pk=pk,
        source=model.RUNNING,
        target=model.QUEUED,
        only=Q(worker=worker),
        then=then,
        worker="",
        message=message,
    )


def give_up_or_release(
    model: type[Job], *, pk: int, worker: str, message: str, then: Then | None = None
) -> int | None:
    """Our own failure: back to queued while attempts remain (the seconds to wait before
    trying again are returned), else the kind's GAVE_UP state (``None``)."""
    message = message[:2000]
    attempts = model._default_manager.filter(pk=pk).values_list("attempts", flat=True).first()
    if (attempts or 0) < MAX_ATTEMPTS and release(
        model, pk=pk, worker=worker, message=message, then=then
    ):
        return int(2 ** (attempts or 0))
    finish(model, pk=pk, worker=worker, state=model.GAVE_UP, then=then, message=message)
    return None


@dataclass(frozen=True)
class Outcome:
    """What a task's work came to: the job's state, and when to try again if it was our
    own failure and attempts remain."""

    state: str
    retry_in: int | None = None  # seconds


def retry_outcome(model: type[ClaimableJob], retry_in: int | None) -> Outcome:
    """What our own failure came to, given what ``give_up_or_release`` answered:
    ``retrying`` in ``retry_in`` seconds while attempts remain, else the kind's GAVE_UP."""
    return Outcome("retrying" if retry_in is not None else model.GAVE_UP, retry_in)


@dataclass
class Sweep:
    requeued: list[int] = field(default_factory=list)  # running, silent: queued again
    gave_up: list[int] = field(default_factory=list)  # silent on every attempt: final
    waiting: list[int] = field(default_factory=list)  # queued long ago: message lost?

    @property
    def to_dispatch(self) -> list[int]:
        """Every job a task should be sent for, each once."""
        return list(dict.fromkeys([*self.requeued, *self.waiting]))


def stale_cutoff(older_than: timedelta | None = None) -> datetime:
    return timezone.now() - (older_than or timedelta(seconds=settings.PITWEB_STALE_AFTER_SECONDS))


def sweep_stale(
    model: type[Job], *, older_than: timedelta | None = None, then: Then | None = None
) -> Sweep:
    """Running jobs whose worker stopped heart-beating go back to queued; a job that has
    used its attempts (it keeps killing workers) ends in GAVE_UP. Queued jobs older than
    the limit are listed too: their task message may have been lost. The move re-checks
    the silence, so a worker that beats between the read and the move keeps its job."""
    cutoff = stale_cutoff(older_than)
    silent = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True)
    found = Sweep()
    stale = model._default_manager.filter(silent, state=model.RUNNING)
    for pk, attempts in stale.values_list("pk", "attempts"):
        if attempts >= MAX_ATTEMPTS:
            if transition(
                model, pk=pk, source=model.RUNNING, target=model.GAVE_UP, only=silent, then=then,
                finished_at=timezone.now(),
                message=f"gave up: its worker stopped heart-beating on each of {attempts} attempts",
            ):  # fmt: skip
                found.gave_up.append(pk)
        elif transition(
            model, pk=pk, source=model.RUNNING, target=model.QUEUED, only=silent, then=then,
            worker="", message="requeued: its worker stopped heart-beating",
        ):  # fmt: skip
            found.requeued.append(pk)
    waiting = model._default_manager.filter(state=model.QUEUED, created_at__lt=cutoff)
    found.waiting = list(waiting.values_list("pk", flat=True))
    return found


class Heartbeat:
    """Marks a job alive while the worker works on it; a killed worker stops beating and
    the sweep hands its job to another. ``also`` is written with each beat (a job's
    progress, say). The beats use their own connection, closed when the job ends."""

    def __init__(
        self,
        model: type[ClaimableJob],
        pk: int,
        worker: str,
        also: Callable[[], None] | None = None,
    ) -> None:
        self._stop = threading.Event()
        self._also = also
        self._thread = threading.Thread(
            target=self._beat, args=(model, pk, worker), daemon=True, name=f"beat-{pk}"
        )

    def _beat(self, model: type[ClaimableJob], pk: int, worker: str) -> None:
        try:
            while not self._stop.wait(settings.PITWEB_HEARTBEAT_SECONDS):
                try:
                    heartbeat(model, pk=pk, worker=worker)
                    if self._also is not None:
                        self._also()
                except Exception:  # a database hiccup must not end the beats for good
                    log.warning("heartbeat of job %s not written", pk, exc_info=True)
        finally:
            connection.close()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def queue_summary(model: type[ClaimableJob]) -> dict[str, Any]:
    """What the status page says of a kind's queue: how many wait, since when, and how
    many are being worked on (two queries)."""
    waiting = model._default_manager.filter(state=model.QUEUED).aggregate(
        depth=Count("id"), oldest=Min("created_at")
    )
    running = model._default_manager.filter(state=model.RUNNING).count()
    return {"depth": waiting["depth"], "oldest": waiting["oldest"], "running": running}
