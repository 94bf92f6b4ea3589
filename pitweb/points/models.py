"""Point sets, their points, answer sets and judged sets with their verdicts.

A point set's hidden sections (Ground Truth, Provenance) are stored here and leave only
through ``PointSet.discloses_hidden``: while a set is sealed nothing about them, not even a
per-point hash, reaches a page, an export or an error. What a sealed set shows of them is
its one salted commitment (``harness.points.seal``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from harness.points.artifacts import typed
from harness.points.demo import DEMO_MODEL
from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL
from harness.points.model import AnswerSet as AnswerSetRecord
from harness.points.model import JudgedSet as JudgedSetRecord
from pitweb.jobs.models import ClaimableJob


class PointSetState(models.TextChoices):
    # development data (PITFALL's own 174 points): listed, never ranked
    PUBLIC = "public"
    # pre-registered: Questions shown, the hidden sections committed to, not shown
    SEALED = "sealed"
    # the reveal published the salt and the hidden sections: ranked
    REVEALED = "revealed"


class PointSet(models.Model):
    """One point set, identified by its suite digest (``harness.points.markdown``); a
    live-shadow cohort's is its plan's commitment until every member is resolved."""

    class Kind(models.TextChoices):
        FIXED = "fixed"  # point files whose Ground Truth exists when the set is made
        # live-shadow points (harness.points.live): resolved after their outcome exists
        LIVE_SHADOW = "live_shadow"

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FIXED)
    title = models.CharField(max_length=200, blank=True)
    suite_sha256 = models.CharField(max_length=64, unique=True)
    question_digest = models.CharField(max_length=71)
    state = models.CharField(max_length=16, choices=PointSetState.choices)
    reveal_on = models.DateField(null=True, blank=True)
    # secret until the reveal; the commitment binds it (sha256(salt || hidden sections))
    salt = models.CharField(max_length=64, blank=True)
    commitment = models.CharField(max_length=71, blank=True)
    source = models.TextField(blank=True)  # where the files came from, in staff's words
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)
    revealed_at = models.DateTimeField(null=True, blank=True)
    # a live-shadow cohort's seal: its entry of the commitment log
    seal_entry = models.OneToOneField(
        "forward.LogEntry", null=True, blank=True, on_delete=models.PROTECT,
        related_name="sealed_point_set",
    )  # fmt: skip

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"point set {self.name}"

    @property
    def live(self) -> bool:
        return self.kind == self.Kind.LIVE_SHADOW

    @property
    def discloses_hidden(self) -> bool:
        """Whether anyone may see the hidden sections (and hashes over them)."""
        return self.state != PointSetState.SEALED

    @property
    def rankable(self) -> bool:
        """Only a revealed set ranks: a public one is development data, and a sealed one
        has no Ground Truth anyone can check yet."""
        return self.state == PointSetState.REVEALED

    @property
    def state_words(self) -> str:
        when = self.reveal_on.isoformat() if self.reveal_on else "a date staff set"
        words = LIVE_STATE_WORDS if self.live else STATE_WORDS
        return words[PointSetState(self.state)].format(when=when)


# a set's state as its page says it (``{when}``: a sealed set's reveal date)
STATE_WORDS = {
    PointSetState.PUBLIC: "development data: public from the start, listed and never ranked",
    PointSetState.SEALED: "sealed until {when}: its Questions are shown, its Ground Truth and "
    "Provenance are committed to and hidden",
    PointSetState.REVEALED: "revealed: its salt and hidden sections are published, and its "
    "judged sets are ranked where their judge is the pinned one and its controls held",
}


# a live-shadow cohort's state as its page says it (``{when}``: its last resolution date)
LIVE_STATE_WORDS = {
    **STATE_WORDS,
    PointSetState.SEALED: "sealed: its Questions and plan are shown; its points resolve as "
    "their outcomes come to exist, the last on {when}",
    PointSetState.REVEALED: "finalized: every point is resolved, and its judged sets are "
    "ranked where their judge is the pinned one and its controls held",
}


class Point(models.Model):
    point_set = models.ForeignKey(PointSet, on_delete=models.CASCADE, related_name="points")
    # text columns: the engine bounds neither an id nor a folder name
    point_id = models.TextField()
    suite = models.TextField(blank=True)  # its folder within the set
    position = models.PositiveIntegerField()  # in path order, as the engine loads them
    question = models.TextField()
    question_sha256 = models.CharField(max_length=64)
    # hidden while the set is sealed
    text = models.TextField()
    ground_truth = models.TextField()
    provenance = models.TextField()
    point_sha256 = models.CharField(max_length=64)
    ground_truth_sha256 = models.CharField(max_length=64)
    # a live-shadow point's dates and resolution (empty text until it is resolved)
    as_of = models.DateField(null=True, blank=True)
    resolves_on = models.DateField(null=True, blank=True)
    rule = models.TextField(blank=True)  # how its outcome is read: public from the seal
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip

    class Meta:
        ordering = ["point_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["point_set", "point_id"], name="one_point_per_id")
        ]

    def __str__(self) -> str:
        return self.point_id


class AnswerSet(models.Model):
    """An answer set (the engine's ``pit_answer_set``) over one point set."""

    class Origin(models.TextChoices):
        IMPORTED = "imported"  # from a PITFALL judged artifact
        UPLOADED = "uploaded"
        ANSWERED = "answered"  # answered by the site's workers

    class Timing(models.TextChoices):
        # received while its set was sealed: committed before the labels were public (an
        # upload's receipt is an entry of the commitment log), so its judgment is formal
        BEFORE_REVEAL = "before_reveal"
        # received once the labels were public: judged as any other, never ranked with
        # the formal results
        AFTER_REVEAL = "after_reveal"
        # a public set's: development data, with no labels to commit before
        OPEN = "open"

    point_set = models.ForeignKey(PointSet, on_delete=models.CASCADE, related_name="answer_sets")
    sha256 = models.CharField(max_length=71)
    model = models.TextField()  # the answering model, as the set names it
    origin = models.CharField(max_length=16, choices=Origin.choices)
    body = models.JSONField()
    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)
    timing = models.CharField(max_length=16, choices=Timing.choices, default=Timing.OPEN)
    # an upload received while sealed: its entry of the commitment log (digest, site's time)
    log_entry = models.OneToOneField(
        "forward.LogEntry", null=True, blank=True, on_delete=models.PROTECT,
        related_name="answer_set",
    )  # fmt: skip

    class Meta:
        ordering = ["point_set", "model", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["point_set", "sha256"], name="one_answer_set_per_body")
        ]

    def __str__(self) -> str:
        return f"answers of {self.model}"

    @property
    def awaits_reveal(self) -> bool:
        """Received while its set is still sealed: stored, acknowledged, not judged."""
        return self.origin == self.Origin.UPLOADED and self.point_set.state == PointSetState.SEALED

    @property
    def record(self) -> AnswerSetRecord:
        """The stored body as the engine's answer set (every field typed)."""
        return typed(self.body, AnswerSetRecord)


class JudgedSet(models.Model):
    """The verdicts of one judge over one answer set. A re-judgment is a new judged set
    linked to the earlier one (``previous``), with what changed per point."""

    class Origin(models.TextChoices):
        # the verdicts of the artifact's own judge, checked against its raw replies
        IMPORTED = "imported"
        SITE = "site"  # the site's judge, with its controls and gates

    class Status(models.TextChoices):
        USABLE = "usable"
        JUDGE_UNRELIABLE = "judge_unreliable"
        IMPORTED = "imported"  # another judge's verdicts: shown, never ranked

    answer_set = models.ForeignKey(AnswerSet, on_delete=models.CASCADE, related_name="judged")
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rejudged"
    )
    origin = models.CharField(max_length=16, choices=Origin.choices)
    status = models.CharField(max_length=32, choices=Status.choices)
    judge_model = models.TextField()
    judge_effort = models.TextField(blank=True)
    judge_pinned = models.BooleanField(default=False)
    not_rankable_because = models.TextField(blank=True)
    broken_rules = models.JSONField(default=list)  # the gates a judge_unreliable set missed
    summary = models.JSONField(default=dict)  # harness.points.metrics.summary
    changes = models.JSONField(default=list)  # per point, what changed since ``previous``
    body = models.JSONField(null=True, blank=True)  # the engine's judged set, when ours
    judged_at = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"judged set {self.pk} of {self.answer_set}"

    @property
    def record(self) -> JudgedSetRecord | None:
        """The stored body as the engine's judged set (None for another judge's imported
        verdicts: the site holds no judged set of theirs)."""
        return typed(self.body, JudgedSetRecord) if self.body else None

    @property
    def rankable(self) -> bool:
        return (
            self.status == self.Status.USABLE
            and self.judge_pinned
            and self.answer_set.point_set.rankable
        )

    @property
    def formal(self) -> bool:
        """A ranked judgment of answers committed before their labels were public: the
        only kind the points board ranks (seed 003's pre-registered cohorts)."""
        return self.rankable and self.answer_set.timing == AnswerSet.Timing.BEFORE_REVEAL


class Verdict(models.Model):
    judged_set = models.ForeignKey(JudgedSet, on_delete=models.CASCADE, related_name="verdicts")
    point = models.ForeignKey(Point, on_delete=models.CASCADE, related_name="verdicts")
    sample = models.PositiveIntegerField(default=0)
    judged_class = models.CharField(max_length=32, blank=True)  # blank: a harness error
    outcome = models.CharField(max_length=16)  # PASS, FAIL or HARNESS_ERROR
    decisive_reason = models.TextField(blank=True)
    answer = models.TextField(blank=True)
    judge_model = models.TextField(blank=True)  # the model configured for the judge
    judge_model_returned = models.TextField(blank=True)  # the model its provider said it ran
    # when the judge gave this verdict (ISO 8601); for PITFALL's verdicts, which record no
    # time of their own, the time their artifact's run started
    judged_at = models.TextField(blank=True)

    class Meta:
        ordering = ["judged_set", "point__position", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["judged_set", "point", "sample"], name="one_verdict_per_answer"
            )
        ]


class PitfallArtifact(models.Model):
    """One of PITFALL's sealed-suite or live-shadow artifacts (``harness.points.
    pitfall_suite``), kept as the bytes uploaded: each verified on its own by the engine,
    and all of them together, before any is stored. Its digest is its commitment's
    payload digest (a label's: the sha256 of the label itself)."""

    digest = models.CharField(max_length=64, unique=True)
    artifact_type = models.CharField(max_length=64)
    name = models.TextField()  # the file's name as uploaded
    raw = models.TextField()  # the file's text, exactly
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    imported_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["imported_at", "pk"]

    def __str__(self) -> str:
        return f"{self.artifact_type} {self.digest[:12]}"


class ModelEndpoint(models.Model):
    """A model staff register for the workers to call: an OpenAI-compatible endpoint, the
    model id sent to it, and how hard the workers may push it. The API key is never
    stored: ``api_key_env`` names the variable that holds it on the workers (a loopback
    endpoint needs none)."""

    name = models.SlugField(max_length=100, unique=True)
    base_url = models.TextField()
    model = models.TextField()
    effort = models.TextField(blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    concurrency = models.PositiveSmallIntegerField(default=4)
    rate_per_minute = models.PositiveIntegerField(default=0)  # 0: no limit
    timeout_seconds = models.PositiveIntegerField(default=600)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    @property
    def is_demo(self) -> bool:
        return self.model == DEMO_MODEL

    @property
    def is_pinned_judge(self) -> bool:
        return self.model == DEFAULT_MODEL and self.effort == DEFAULT_EFFORT


class PointsJob(ClaimableJob):
    """Answer a point set with a model, or judge an answer set: a job on the claimable-job
    machine. queued -> running -> done | control_failed | harness_error."""

    class Kind(models.TextChoices):
        ANSWER = "answer"
        JUDGE = "judge"

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        # the judge did not call a point's own Ground Truth completely_correct: the point
        # or the judge is broken, and nothing was judged (seed 004's preflight)
        CONTROL_FAILED = "control_failed"
        HARNESS_ERROR = "harness_error"  # ours, after every attempt: never the model's

    QUEUED = State.QUEUED
    RUNNING = State.RUNNING
    GAVE_UP = State.HARNESS_ERROR
    FINAL = frozenset({State.DONE, State.CONTROL_FAILED, State.HARNESS_ERROR})
    LEGAL_MOVES = {
        State.QUEUED: frozenset({State.RUNNING}),
        State.RUNNING: frozenset({State.QUEUED, *FINAL}),
    }

    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    point_set = models.ForeignKey(PointSet, on_delete=models.CASCADE, related_name="jobs")
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="jobs")
    # judge: the answers judged; answer: the answers made
    answer_set = models.ForeignKey(
        AnswerSet, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    judged_set = models.ForeignKey(
        JudgedSet, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    samples = models.PositiveSmallIntegerField(default=1)
    stability_k = models.PositiveSmallIntegerField(default=3)
    stride = models.PositiveSmallIntegerField(default=10)
    total_calls = models.PositiveIntegerField(default=0)
    done_calls = models.PositiveIntegerField(default=0)  # paid calls journalled so far
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk}"


class JournalLine(models.Model):
    """One line of a points job's journal (``harness.points.journal``): the header first,
    then one per paid call, each written in its own transaction as the call finishes. Kept
    in the database, so a worker on any machine resumes the job where another stopped;
    removed when the job's output is stored."""

    job = models.ForeignKey(PointsJob, on_delete=models.CASCADE, related_name="journal")
    line = models.TextField()  # canonical JSON, ASCII, ending in a newline

    class Meta:
        ordering = ["job", "id"]
