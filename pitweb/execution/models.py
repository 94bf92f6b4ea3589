"""Registered agents, execution jobs and their cells."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from pitweb.jobs.models import ClaimableJob
from pitweb.releases.models import Release
from pitweb.runs.models import Run


class RegisteredAgent(models.Model):
    """An agent the site may execute: registered by staff, owned by a submitter (who may
    ask for its executions). Its digest is issue 23's rule (``External.digest``): an
    uploaded run whose receipt names the same digest is this agent's, and staff may have it
    re-executed."""

    class Transport(models.TextChoices):
        STDIO = "stdio"
        HTTP = "http"

    name = models.SlugField(max_length=100, unique=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="agents"
    )
    transport = models.CharField(max_length=8, choices=Transport.choices)
    dialect = models.CharField(max_length=16)
    # stdio: a package installed on the workers (settings.PITWEB_AGENT_PACKAGES), by name
    package = models.CharField(max_length=100, blank=True)
    # http: the endpoint (its host on settings.PITWEB_AGENT_HOSTS)
    url = models.CharField(max_length=500, blank=True)
    digest = models.CharField(max_length=71, db_index=True)
    label = models.CharField(max_length=200)  # how receipts name it (External.name)
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ExecutionState(models.TextChoices):
    CELLS = "cells"  # its cells are queued or running
    QUEUED = "queued"  # every cell is done: the assembly waits for a worker
    ASSEMBLING = "assembling"
    EXECUTED = "executed"  # an execution: the run is stored
    REPRODUCED = "reproduced"  # a re-execution decided as the run it checks did
    DIVERGED = "diverged"
    FAILED = "reexecution_failed"  # the harness could not run a cell again: proves nothing
    HARNESS_ERROR = "harness_error"


class ExecutionJob(ClaimableJob):
    """One execution (of a registered agent on a release and window) or re-execution (of
    an uploaded run whose agent is registered). Its claimable part is the assembly; its
    cells are jobs of their own (:class:`ExecutionCell`)."""

    class Kind(models.TextChoices):
        EXECUTE = "execute"
        REEXECUTE = "reexecute"

    QUEUED = ExecutionState.QUEUED
    RUNNING = ExecutionState.ASSEMBLING
    GAVE_UP = ExecutionState.HARNESS_ERROR
    FINAL = frozenset(
        {
            ExecutionState.EXECUTED,
            ExecutionState.REPRODUCED,
            ExecutionState.DIVERGED,
            ExecutionState.FAILED,
            ExecutionState.HARNESS_ERROR,
        }
    )
    LEGAL_MOVES = {
        # the cell that completes the set moves the job on (one conditional update); a
        # cell that could not be run ends it
        ExecutionState.CELLS: frozenset({ExecutionState.QUEUED, ExecutionState.HARNESS_ERROR}),
        ExecutionState.QUEUED: frozenset({ExecutionState.ASSEMBLING}),
        ExecutionState.ASSEMBLING: frozenset({ExecutionState.QUEUED, *FINAL}),
    }

    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(
        max_length=20, choices=ExecutionState.choices, default=ExecutionState.CELLS
    )
    agent = models.ForeignKey(RegisteredAgent, on_delete=models.PROTECT, related_name="jobs")
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="+")
    # the run config the cells and the assembly run (RunConfig fields but paths)
    config = models.JSONField()
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField(blank=True)
    # a re-execution: the run it checks; an execution: the run it made
    checked = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.CASCADE, related_name="reexecutions"
    )
    made = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="executions"
    )
    # a re-execution's comparison (harness.runs.reexecute.Reexecution.to_json)
    comparison = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def progress(self) -> str:
        """How many of its cells are done, for a page's progress column."""
        states = [cell.state for cell in self.cells.all()]
        done = sum(state == ExecutionCell.State.DONE for state in states)
        return f"{done}/{len(states)} cells done"


class ExecutionCell(ClaimableJob):
    """One cell of an execution, run by whichever worker claims it; its record
    (``harness.runs.records.CellRecord``, JSON) is what the assembly writes into the run.
    The record is an artifact in storage, named by its digest (``record_name``), so the
    assembly reads it on any machine; the row holds the digest it is checked against."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        HARNESS_ERROR = "harness_error"

    QUEUED = State.QUEUED
    RUNNING = State.RUNNING
    GAVE_UP = State.HARNESS_ERROR
    FINAL = frozenset({State.DONE, State.HARNESS_ERROR})
    LEGAL_MOVES = {
        # queued -> harness_error: its job ended before a worker took it
        State.QUEUED: frozenset({State.RUNNING, State.HARNESS_ERROR}),
        State.RUNNING: frozenset({State.QUEUED, *FINAL}),
    }

    job = models.ForeignKey(ExecutionJob, on_delete=models.CASCADE, related_name="cells")
    position = models.PositiveSmallIntegerField()  # in the runner's cell order
    arm = models.CharField(max_length=16)
    clock = models.CharField(max_length=16)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    record_sha256 = models.CharField(max_length=71, blank=True)  # "sha256:<hex>" once done
    # read off the record for the progress table: the cell's status and decisions
    status = models.CharField(max_length=16, blank=True)
    sessions = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "position"], name="one_cell_per_position")
        ]

    @property
    def label(self) -> str:
        return f"{self.arm}/{self.clock}"

    @property
    def record_name(self) -> str:
        return cell_record_name(self.record_sha256)


def cell_record_name(sha256: str) -> str:
    """Where a cell record with this digest lies in storage."""
    return f"cells/{sha256.removeprefix('sha256:')}.json"
