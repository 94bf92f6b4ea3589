"""Submitted runs and everything that happens to them. Every state change is a row:
a job is never overwritten by the next one, it is linked to it."""

from functools import cached_property

from django.conf import settings
from django.db import models

from harness.receipt.model import ReceiptBody, body_from_dict
from pitweb.jobs.models import ClaimableJob
from pitweb.releases.models import Release


class VerificationLevel(models.TextChoices):
    SELF_REPORTED = "self_reported", "self-reported"
    HASHES_VERIFIED = "hashes_verified", "hashes verified"
    REEXECUTED = "reexecuted", "re-executed"


# The levels at which a run's numbers were proved (re-derived, or the agent re-run); a
# run at any other level shows no number from its body anywhere on the board.
PROVEN_LEVELS = (VerificationLevel.HASHES_VERIFIED, VerificationLevel.REEXECUTED)


class Visibility(models.TextChoices):
    PUBLIC = "public"
    PRIVATE = "private"


class JobState(models.TextChoices):
    RECEIVED = "received"
    VERIFYING = "verifying"
    VERIFIED = "verified"
    MISMATCH = "mismatch"
    HARNESS_ERROR = "harness_error"
    UNKNOWN_RELEASE = "unknown_release"


class Family(models.Model):
    """An agent's family on one board: (submitter, agent name) over one release and
    window. ``attempts`` counts every upload of it that intake stored, whatever became
    of it: incremented in the transaction that stores the run, never decremented (a
    withdrawn, hidden, failed or deleted run stays counted)."""

    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="families"
    )
    agent = models.CharField(max_length=200)
    release_digest = models.CharField(max_length=71)
    window_start = models.DateField()
    window_end = models.DateField()
    attempts = models.PositiveIntegerField(default=0)
    first_at = models.DateTimeField(auto_now_add=True)
    last_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submitter", "agent", "release_digest", "window_start", "window_end"],
                name="one_family_per_board",
            )
        ]

    def __str__(self) -> str:
        return f"family {self.agent} by {self.submitter_id}"


class Run(models.Model):
    run_id = models.CharField(max_length=16, db_index=True)
    # a submission is (submitter, body): identical bodies from two submitters are two
    # submissions, each with its own visibility and verification
    body_sha256 = models.CharField(max_length=71, db_index=True)
    body = models.JSONField()
    config = models.JSONField(null=True, blank=True)
    release_digest = models.CharField(max_length=71, db_index=True)
    release = models.ForeignKey(
        Release, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="runs"
    )
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, default=Visibility.PUBLIC
    )
    hidden = models.BooleanField(default=False)
    hidden_reason = models.TextField(blank=True)
    flag = models.CharField(max_length=200, blank=True)
    # the check the last conclusive verification failed, by name (never the stated value)
    failed_check = models.CharField(max_length=200, blank=True)
    is_baseline = models.BooleanField(default=False)
    verification_level = models.CharField(
        max_length=16, choices=VerificationLevel.choices, default=VerificationLevel.SELF_REPORTED
    )
    # the latest verification job's state, mirrored on every move of the job
    status = models.CharField(max_length=16, choices=JobState.choices, default=JobState.RECEIVED)
    valid = models.BooleanField()
    protocol_complete = models.BooleanField()
    model_version = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=200)
    # the release's forms the run read, comma-joined: as many as the release has
    forms = models.TextField()
    window_start = models.DateField()
    window_end = models.DateField()
    # Read off the receipt body at submission (recomputable from it): self-reported.
    pit_main_return = models.FloatField(null=True, blank=True)
    mask_verdict = models.CharField(max_length=16, default="not_run")
    # cells the run could not complete, with why ("main/pit agent_error"); empty if none
    error_cells = models.CharField(max_length=500, blank=True)
    # what the submitter's harness declares: the agent ran isolated with its network and
    # filesystem confined (the site cannot check it for an upload; a re-execution can)
    agent_isolated = models.BooleanField(default=False)
    # the site executed it (pitweb.execution): its capabilities were measured by our own
    # worker, not declared by a submitter's harness
    executed = models.BooleanField(default=False)
    # the platform score for the release's current reference-price version (null: the
    # release has no reference prices yet, or the run's numbers are not proven)
    platform = models.ForeignKey(
        "pricing.PlatformScore", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    summary = models.JSONField(default=dict)  # pitweb.runs.summary.body_summary(body)
    trajectory_sha256 = models.CharField(max_length=71)
    trajectory_name = models.CharField(max_length=200)
    receipt_name = models.CharField(max_length=200)
    prices_name = models.CharField(max_length=200, blank=True)
    # the family this upload is an attempt of (null only for rows written around intake)
    family = models.ForeignKey(
        Family, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    # withdrawn by its submitter: off every board and public page, still counted
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-submitted_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["submitter", "body_sha256"], name="one_submission_per_submitter_and_body"
            )
        ]
        indexes = [
            models.Index(
                fields=["visibility", "hidden", "valid", "status", "-submitted_at"],
                name="run_board_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id}"

    @cached_property
    def receipt(self) -> ReceiptBody:
        """The receipt body as its types, decoded once (every stored body decoded at
        intake, so this never fails for a stored run)."""
        return body_from_dict(self.body)

    @property
    def proven(self) -> bool:
        """Whether the system proved the run's numbers; only then is one shown."""
        return self.verification_level in PROVEN_LEVELS

    @property
    def withheld_reason(self) -> str:
        """Why the run's numbers are not shown, in words that never repeat a stated value."""
        if self.status == JobState.MISMATCH:
            return f"failed verification: {self.failed_check or 'a check'} differs"
        return "pending verification: no numbers until the system has re-derived them"


class VerificationJob(ClaimableJob):
    """A verification of a run: re-derive it from its stored artifacts. A job on the
    claimable-job machine; a new verification is a new job linked to the last one."""

    class Kind(models.TextChoices):
        VERIFY = "verify"
        REVERIFY = "reverify"

    QUEUED = JobState.RECEIVED
    RUNNING = JobState.VERIFYING
    GAVE_UP = JobState.HARNESS_ERROR
    FINAL = frozenset(
        {JobState.VERIFIED, JobState.MISMATCH, JobState.HARNESS_ERROR, JobState.UNKNOWN_RELEASE}
    )
    LEGAL_MOVES = {
        JobState.RECEIVED: frozenset({JobState.VERIFYING}),
        # back to received: our failure, to be tried again (or the sweep)
        JobState.VERIFYING: frozenset({JobState.RECEIVED, *FINAL}),
    }

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="jobs")
    previous = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="next"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.RECEIVED)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reason = models.TextField(blank=True)
    checks = models.JSONField(default=list)
    mismatch_check = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]


FINAL_STATES = VerificationJob.FINAL


class BoardVersion(models.Model):
    """One row, bumped by every service that changes what a board shows; cached
    boards are keyed by it, so a change is visible on the next request."""

    version = models.BigIntegerField(default=0)
    changed_at = models.DateTimeField(null=True, blank=True)
    # computations of stored boards finished (boardstore): a cached page is keyed by both
    computed = models.BigIntegerField(default=0)
    # runs taken off public view (hidden, withdrawn): no page from before is served again
    epoch = models.BigIntegerField(default=0)


class BoardChange(models.Model):
    """What one change of the board (one board version) concerned: a run whose row may
    have moved, its family's included (a computation of a stored board reads only those
    runs again), or everything (``run_pk`` null: new reference prices, say). A version
    with no row changed nothing a board sorts on. Kept until every stored board has been
    computed past it."""

    version = models.BigIntegerField(db_index=True)
    run_pk = models.BigIntegerField(null=True, blank=True)  # null: every run

    def __str__(self) -> str:
        return f"board change {self.version}: {self.run_pk or 'every run'}"


class SnapshotEdited(Exception):
    """A published snapshot is never changed: publish a new one instead."""


class Snapshot(models.Model):
    """A board as it stood, frozen: its filters, every row of every section as the public
    saw them, in canonical JSON (``content``), and the sha256 of those bytes. Never
    edited; what happened since to the runs it holds is read from their own history."""

    content = models.TextField()  # harness.canonical.line of the board, served as is
    content_digest = models.CharField(max_length=71, unique=True)
    # the filters, canonical JSON too: the board's "cite this board" finds the newest
    filters_key = models.CharField(max_length=600, db_index=True)
    taken_at = models.DateTimeField()
    board_version = models.BigIntegerField()
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )  # null: the weekly schedule
    reason = models.TextField()

    class Meta:
        ordering = ["-taken_at", "-id"]

    def __str__(self) -> str:
        return f"snapshot {self.pk} ({self.content_digest[:19]})"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise SnapshotEdited(f"snapshot {self.pk} is published; publish a new one instead")
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class StoredBoard(models.Model):
    """One public board (its filters), computed by a worker and kept, so that a page is
    an indexed read: its ranked rows are ``BoardEntry`` rows, in ranking order by key; the
    runs apart are listed by submission, each section as the board shows it. A stored
    board is as of ``built_version`` (the board version it was computed at); while a newer
    one is computed, visitors are served this one."""

    key = models.CharField(max_length=64, unique=True)  # boardstore.board_key(filters)
    filters = models.JSONField()
    built_version = models.BigIntegerField(default=-1)  # -1: never computed
    built_at = models.DateTimeField(null=True, blank=True)
    # the ranking rule it was computed with (PITWEB_MIN_RANKED_TRADES): another computes
    # it whole again
    min_trades = models.PositiveIntegerField(null=True, blank=True)
    # the one computation under way (a claim; a stale one is taken over)
    building_since = models.DateTimeField(null=True, blank=True)
    # when a visitor last asked for it (written at most once a minute): the worker keeps
    # the boards visitors read up to date, others wait for their next visitor
    requested_at = models.DateTimeField(null=True, blank=True)
    ranked_total = models.PositiveIntegerField(default=0)
    # what its entries' rank ranges are counted against (boardranks): the intervals at
    # its last whole computation, and those added and taken away since
    rank_base = models.BinaryField(null=True, blank=True)
    rank_delta = models.JSONField(default=list)
    apart = models.JSONField(default=dict)  # section -> [submission ids], newest first
    # the whole board's only: what the public board holds (boardcache.public_facets)
    facets = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"stored board {self.key[:12]} (version {self.built_version})"


class BoardEntry(models.Model):
    """A ranked row of a stored board: what the board sorts on, and the family-wise
    interval and rank range it was ranked with. The row's other columns are read from
    its run when a page is drawn."""

    board = models.ForeignKey(StoredBoard, on_delete=models.CASCADE, related_name="entries")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    # the ranking order, every key ascending: -(platform shifted pit return), run id, pk
    neg_return = models.FloatField()
    run_code = models.CharField(max_length=16)
    # what the interval was drawn from: recomputed only when one of these changes
    score = models.BigIntegerField()  # the PlatformScore's id
    attempts = models.PositiveIntegerField()
    interval_low = models.FloatField()
    interval_high = models.FloatField()
    # counted against the board's rank base; a page adds the board's rank delta
    rank_low = models.PositiveIntegerField()
    rank_high = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["board", "run"], name="one_entry_per_board_and_run")
        ]
        indexes = [
            models.Index(
                fields=["board", "neg_return", "run_code", "run"], name="board_entry_order_idx"
            )
        ]
