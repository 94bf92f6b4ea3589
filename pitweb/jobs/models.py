"""The abstract claimable job: what every worker job shares, and its legal moves as data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from django.db import models


class ClaimableJob(models.Model):
    """A unit of work a worker claims, heart-beats while it works, and finishes.

    A subclass declares its ``state`` field (``TextChoices``) and says which of its states
    plays each part: ``QUEUED`` (waiting for a worker), ``RUNNING`` (claimed),
    ``GAVE_UP`` (a final state that is ours, never the subject's: the sweep's last word),
    ``FINAL`` (the states a finished job ends in), and ``LEGAL_MOVES``, every move the
    machine may make. A kind may let a final state be queued again (a clean slate for new
    evidence); the running state's only way out is to a final state or back to queued."""

    QUEUED: ClassVar[str]
    RUNNING: ClassVar[str]
    GAVE_UP: ClassVar[str]
    FINAL: ClassVar[frozenset[str]]
    LEGAL_MOVES: ClassVar[Mapping[str, frozenset[str]]]

    state = models.CharField(max_length=16)
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @classmethod
    def may_move(cls, source: str, target: str) -> bool:
        return target in cls.LEGAL_MOVES.get(source, frozenset())

    @property
    def is_final(self) -> bool:
        return self.state in self.FINAL


class WorkerBeat(models.Model):
    """A worker process's heartbeat, written while it is idle too, so the status page
    tells a live worker from a dead one."""

    name = models.CharField(max_length=200, unique=True)
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField()
    stopped_at = models.DateTimeField(null=True, blank=True)
    # whether this worker's machine lets the harness isolate an agent (bubblewrap and
    # user namespaces), probed when it starts, and why not
    isolation = models.BooleanField(default=False)
    isolation_unavailable = models.CharField(max_length=500, blank=True)

    class Meta:
        # the table it has had since worker beats lived in the runs app: no data moves
        db_table = "runs_workerbeat"
        ordering = ["name"]
