"""The commitment log, the commitments it holds, and the runs made for them.

The log is the public record (``harness.forward.log``): :class:`LogEntry` keeps each entry's
canonical body exactly as it was hashed, and is never edited or deleted. :class:`Commitment`
is the site's working view of a commit entry (which registered agent, which release line,
whether a later entry withdrew it); everything it says is also in the log.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.releases.models import Release
from pitweb.runs.models import Run


class LogEntryEdited(Exception):
    """An entry of the log is never changed or removed: append a new one."""


class LogEntry(models.Model):
    class Kind(models.TextChoices):
        COMMIT = "commit"
        WITHDRAW = "withdraw"
        ANSWERS = "answers"  # an answer set received for a sealed point set
        SEAL = "seal"  # a live-shadow cohort sealed

    seq = models.PositiveIntegerField(unique=True)
    digest = models.CharField(max_length=71, unique=True)
    prev = models.CharField(max_length=71, blank=True)  # empty: the first entry
    kind = models.CharField(max_length=16, choices=Kind.choices)
    stamped_at = models.DateTimeField()
    body = models.JSONField()  # the entry as hashed (harness.forward.log.plain)

    class Meta:
        ordering = ["seq"]
        verbose_name_plural = "log entries"

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise LogEntryEdited(f"log entry {self.seq} is written; append a new entry instead")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise LogEntryEdited(f"log entry {self.seq} cannot be removed; withdraw it instead")


class Commitment(models.Model):
    """A registered agent committed to a release line's benchmark at the site's time."""

    entry = models.OneToOneField(LogEntry, on_delete=models.PROTECT, related_name="commitment")
    agent = models.ForeignKey(RegisteredAgent, on_delete=models.PROTECT, related_name="commitments")
    agent_digest = models.CharField(max_length=71)  # the package's digest when committed
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="commitments"
    )
    # the release line it enters (by name) and the version current when it committed
    release_name = models.TextField()
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="commitments")
    forms = models.JSONField()
    hold_sessions = models.PositiveSmallIntegerField()
    clocks = models.JSONField()
    arms = models.JSONField()
    model_version = models.CharField(max_length=500, blank=True)
    training_cutoff = models.CharField(max_length=10, blank=True)
    committed_at = models.DateTimeField()  # the entry's stamp
    withdrawal = models.OneToOneField(
        LogEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="withdrawn"
    )

    class Meta:
        ordering = ["-committed_at", "-id"]

    def __str__(self) -> str:
        return f"{self.agent.name} committed #{self.entry.seq}"

    @property
    def live(self) -> bool:
        return self.withdrawal_id is None


class ForwardRun(models.Model):
    """An execution queued for a commitment on one release version: a forward run (the
    sessions after the commitment) or its backtest (as many sessions just before it).
    ``status`` says what the run proved about the claim, never what it scored."""

    class Kind(models.TextChoices):
        FORWARD = "forward"
        BACKTEST = "backtest"

    class Status(models.TextChoices):
        QUEUED = "queued"  # its execution is queued or running
        FORWARD = "forward"  # executed, verified, and every traded row after the commitment
        BACKTEST = "backtest"  # the backtest, executed and verified
        NOT_FORWARD = "not_forward"  # executed, but the forward check failed (problems say why)
        NOT_BACKTEST = "not_backtest"  # executed, but a row was accepted after the commitment
        FAILED = "failed"  # the execution did not produce a verified run (the harness's side)

    commitment = models.ForeignKey(Commitment, on_delete=models.PROTECT, related_name="runs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="forward_runs")
    start = models.DateField()
    end = models.DateField()
    sessions = models.PositiveIntegerField()
    # the last session its hold needs a price for (harness.forward.windows.priced_through):
    # its figures are shown once the reference prices reach it, "awaiting prices" until then
    priced_through = models.DateField()
    job = models.OneToOneField(ExecutionJob, on_delete=models.PROTECT, related_name="forward_run")
    run = models.OneToOneField(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="forward_run"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    problems = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["commitment", "kind", "release"], name="one_run_per_version_and_kind"
            )
        ]
