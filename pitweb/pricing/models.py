from django.db import models

from pitweb.jobs.models import ClaimableJob
from pitweb.releases.models import ReferencePrices


class PlatformScore(ClaimableJob):
    """A run's platform figures with one reference-price version: its trades re-derived
    from the trajectory by ``harness.receipt.rescore.rescore`` and priced with the release's
    reference prices. One row per (run, version); a new version is a new row. A job on
    the claimable-job machine: pending -> scoring -> scored | refused | harness_error."""

    class State(models.TextChoices):
        PENDING = "pending"
        SCORING = "scoring"
        SCORED = "scored"
        REFUSED = "refused"  # the artifacts did not hold together: no figure
        HARNESS_ERROR = "harness_error"  # our failure: no figure, never the run's result

    QUEUED = State.PENDING
    RUNNING = State.SCORING
    GAVE_UP = State.HARNESS_ERROR
    FINAL = frozenset({State.SCORED, State.REFUSED, State.HARNESS_ERROR})
    LEGAL_MOVES = {
        State.PENDING: frozenset({State.SCORING}),
        State.SCORING: frozenset({State.PENDING, *FINAL}),
        # the run was proven again (a re-verification passed): a clean slate
        State.REFUSED: frozenset({State.PENDING}),
        State.HARNESS_ERROR: frozenset({State.PENDING}),
    }

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="platform_scores")
    prices = models.ForeignKey(ReferencePrices, on_delete=models.PROTECT, related_name="scores")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    figures = models.JSONField(null=True, blank=True)  # Rescore.to_json()
    # read off ``figures`` (recomputable from it): what the board ranks and shows
    shifted_pit = models.FloatField(null=True, blank=True)
    shifted_pit_low = models.FloatField(null=True, blank=True)
    shifted_pit_high = models.FloatField(null=True, blank=True)
    shifted_pit_priced = models.PositiveIntegerField(null=True, blank=True)
    # the ranked cell's bootstrap tails (harness.receipt.attempts.ranked_tails): its
    # family-wise interval for any number of attempts is a lookup in them
    shifted_pit_tails = models.JSONField(null=True, blank=True)
    # each cell's trades (harness.forward.standing.trades_json), kept only for a run of the
    # forward track: the forward board joins them across versions and bootstraps them
    trades = models.JSONField(null=True, blank=True)
    # the ranked cell net of the site's stated cost level (``figures["costs"]``) and
    # measured against the prices version's market index (null: it has none)
    cost_bps = models.FloatField(null=True, blank=True)  # the stated level it was priced at
    shifted_pit_after_costs = models.FloatField(null=True, blank=True)
    shifted_pit_excess = models.FloatField(null=True, blank=True)
    shifted_pit_beta = models.FloatField(null=True, blank=True)
    main_pit = models.FloatField(null=True, blank=True)
    main_pit_low = models.FloatField(null=True, blank=True)
    main_pit_high = models.FloatField(null=True, blank=True)
    delta_shifted_pit = models.FloatField(null=True, blank=True)
    delta_redacted_pit = models.FloatField(null=True, blank=True)
    # each delta's 95% interval (paired block bootstrap): main minus shifted's is what
    # the memory verdict reads (harness.receipt.memory)
    delta_shifted_pit_low = models.FloatField(null=True, blank=True)
    delta_shifted_pit_high = models.FloatField(null=True, blank=True)
    delta_redacted_pit_low = models.FloatField(null=True, blank=True)
    delta_redacted_pit_high = models.FloatField(null=True, blank=True)

    class Meta:
        # the table it has had since platform scores lived in the runs app: no data moves
        db_table = "runs_platformscore"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "prices"], name="one_score_per_version")
        ]
        indexes = [
            models.Index(
                models.F("shifted_pit").desc(),
                name="platform_ranked_idx",
                condition=models.Q(state="scored", shifted_pit__isnull=False),
            )
        ]


class RateCardEdited(Exception):
    """A registered rate card is never changed: register a new version instead."""


class RateCard(models.Model):
    """What model tokens cost (``pit-harness.rate-card.v1``: nanodollars per token, per
    model and kind), registered by staff: every run's measured model usage is priced with
    the newest version. Versioned, never edited."""

    version = models.PositiveIntegerField(unique=True)
    content = models.TextField()  # the card's file, as registered (at most 64 KiB)
    sha256 = models.CharField(max_length=71, unique=True)
    source = models.CharField(max_length=2000, blank=True, default="")
    as_of = models.CharField(max_length=10, blank=True, default="")
    models_priced = models.PositiveIntegerField()
    registered_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField()
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]

    def __str__(self) -> str:
        return f"rate card v{self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise RateCardEdited(
                f"rate card v{self.version} is registered; register a new version instead"
            )
        super().save(*args, **kwargs)  # type: ignore[arg-type]
