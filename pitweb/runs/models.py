"""Submitted runs and everything that happens to them. Every state change is a row:
a job is never overwritten by the next one, it is linked to it."""

from functools import cached_property

from django.conf import settings
from django.db import models
from django.utils import timezone

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


class CutoffRelation(models.TextChoices):
    """Where a run's window lies against the training cutoff its config declares: the
    receipt's P2 check (``harness.receipt.build.training_cutoff_part``), or nothing
    declared."""

    NOT_DECLARED = "", "not declared"
    POST_CUTOFF = "post_cutoff", "post-cutoff"  # window_starts_after_cutoff
    CROSSING = "crossing", "crossing"  # window_crosses_cutoff
    PRE_CUTOFF = "pre_cutoff", "pre-cutoff"  # window_ends_before_cutoff


# the receipt's P2 check, as the relation the site stores
CUTOFF_CHECKS = {
    "window_starts_after_cutoff": CutoffRelation.POST_CUTOFF,
    "window_crosses_cutoff": CutoffRelation.CROSSING,
    "window_ends_before_cutoff": CutoffRelation.PRE_CUTOFF,
}


class Benchmark(models.Model):
    """What runs must share to be ranked against each other: (release, forms, window,
    hold, clocks) (``harness.rundata.benchmark``). A ranking exists only inside one; a
    row is created by the intake of its first run and never changed."""

    key = models.CharField(max_length=32, unique=True)  # Benchmark.key
    name = models.TextField()  # Benchmark.name (its forms are the receipt's: no bound)
    release_digest = models.CharField(max_length=71, db_index=True)
    forms = models.TextField()  # sorted, comma-joined
    window_start = models.DateField()
    window_end = models.DateField()
    hold_sessions = models.PositiveIntegerField()
    clocks = models.TextField()  # in the harness's order, comma-joined
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-window_end", "window_start", "key"]

    def __str__(self) -> str:
        return f"benchmark {self.name}"


class Family(models.Model):
    """An agent's family on one benchmark: (submitter, agent name) over one benchmark
    (release, forms, window, hold, clocks). ``attempts`` counts every upload of it that intake stored, whatever became
    of it: incremented in the transaction that stores the run, never decremented (a
    withdrawn, hidden, failed or deleted run stays counted)."""

    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="families"
    )
    agent = models.CharField(max_length=200)
    release_digest = models.CharField(max_length=71)
    window_start = models.DateField()
    window_end = models.DateField()
    # null only for families written before benchmarks were
    benchmark = models.ForeignKey(
        Benchmark, null=True, blank=True, on_delete=models.PROTECT, related_name="families"
    )
    attempts = models.PositiveIntegerField(default=0)
    first_at = models.DateTimeField(auto_now_add=True)
    last_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submitter", "agent", "benchmark"], name="one_family_per_benchmark"
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
    # the agent's package digest, for an agent in another process (empty for a Python
    # agent): what a commitment on the forward track names
    agent_digest = models.CharField(max_length=71, blank=True, db_index=True)
    # the training cutoff the config declares (empty: a gap), and where the window lies
    # against it (the receipt's P2 check)
    training_cutoff = models.CharField(max_length=10, blank=True)
    cutoff_relation = models.CharField(
        max_length=11, choices=CutoffRelation.choices, blank=True, default=""
    )
    # the release's forms the run read, comma-joined: as many as the release has
    forms = models.TextField()
    window_start = models.DateField()
    window_end = models.DateField()
    # the benchmark it is ranked in (set at intake; null only for a row written around it)
    benchmark = models.ForeignKey(
        Benchmark, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
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
    # it is a forward run the engine settled as forward: the site's execution of a
    # committed package after its commitment (``pitweb.forward.services.forward_tested_mark``)
    forward_tested = models.BooleanField(default=False)
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


class ReasoningAudit(models.Model):
    """The reasoning audit of a run (``harness.receipt.audit``): what its agent wrote on
    the control arms, scanned for the real dates and issuers they hide, re-derived by the
    worker from the stored trajectory and release when it verified the run. The artifact
    itself (with its excerpts) is stored by its digest; the row keeps its counts. Each
    verification that verifies the run replaces it, one that refutes the run removes it,
    so a row is always of the run's latest conclusive verification."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="reasoning_audit")
    audit_version = models.PositiveIntegerField()
    digest = models.CharField(max_length=71)  # audit_digest: sha256 of the canonical artifact
    artifact_sha256 = models.CharField(max_length=71)  # the stored file's, read back
    artifact_name = models.CharField(max_length=200)
    texts = models.PositiveIntegerField()
    date_hits = models.PositiveIntegerField()
    issuer_hits = models.PositiveIntegerField()
    # per control cell: arm, clock, what it hides, texts, rows, hits (no excerpts)
    cells = models.JSONField(default=list)
    not_scanned = models.TextField()  # the artifact's own sentence
    created_at = models.DateTimeField(default=timezone.now)  # when it was (re-)derived

    def __str__(self) -> str:
        return f"reasoning audit of run {self.run_id}"


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
