"""The board's own tables: its version and changes, the stored boards and their entries,
and the published snapshots. They were the runs app's and keep its tables
(``runs_<name>``): the models moved in the migration state only, no row moved."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class BoardVersion(models.Model):
    """One row, bumped by every service that changes what a board shows; cached
    boards are keyed by it, so a change is visible on the next request."""

    version = models.BigIntegerField(default=0)
    changed_at = models.DateTimeField(null=True, blank=True)
    # computations of stored boards finished (store): a cached page is keyed by both
    computed = models.BigIntegerField(default=0)
    # runs taken off public view (hidden, withdrawn): no page from before is served again
    epoch = models.BigIntegerField(default=0)

    class Meta:
        db_table = "runs_boardversion"


class BoardChange(models.Model):
    """What one change of the board (one board version) concerned: a run whose row may
    have moved, its family's included (a computation of a stored board reads only those
    runs again), or everything (``run_pk`` null: new reference prices, say). A version
    with no row changed nothing a board sorts on. Kept until every stored board has been
    computed past it."""

    version = models.BigIntegerField(db_index=True)
    run_pk = models.BigIntegerField(null=True, blank=True)  # null: every run

    class Meta:
        db_table = "runs_boardchange"

    def __str__(self) -> str:
        return f"board change {self.version}: {self.run_pk or 'every run'}"


class SnapshotEdited(Exception):
    """A published snapshot is never changed: publish a new one instead."""


class Snapshot(models.Model):
    """A board as it stood, frozen: its filters, every row of every section as the public
    saw them, in canonical JSON (``content``), and the sha256 of those bytes. Never
    edited; what happened since to the runs it holds is read from their own history.

    The snapshots of one board (one ``filters_key``) form a chain: each names the digest
    of the one before it (``previous_digest``, also in its content, so its digest covers
    it) and is signed by the site (``signature``). The constraints make a fork
    impossible: no two snapshots of a board name the same predecessor, and a board has
    one first signed snapshot. Snapshots published before this have a blank signature
    and no predecessor, and are no link of any chain but the one a later snapshot names."""

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
    # the content digest of the board's snapshot before this one (null: the board's first,
    # or published before snapshots were chained)
    previous_digest = models.CharField(max_length=71, null=True, blank=True)
    # the DSSE envelope of the site's signed statement over the content digest, as
    # canonical JSON (harness.attest.snapshots); blank: published before signing
    signature = models.TextField(blank=True, default="")

    class Meta:
        db_table = "runs_snapshot"
        ordering = ["-taken_at", "-id"]
        constraints = [
            # two publications of one board racing cannot both follow the same snapshot
            # (the loser publishes again after the winner: services.snapshot_publish)
            models.UniqueConstraint(
                fields=["filters_key", "previous_digest"], name="snapshot_one_successor"
            ),
            # nor both be the board's first (a null is distinct from every other null)
            models.UniqueConstraint(
                fields=["filters_key"],
                condition=models.Q(previous_digest__isnull=True) & ~models.Q(signature=""),
                name="snapshot_one_first_per_board",
            ),
        ]

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

    key = models.CharField(max_length=64, unique=True)  # store.board_key(filters)
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
    # every run the board holds, ranked or apart (the home page's "ranked / in all")
    runs_total = models.PositiveIntegerField(default=0)
    # what its entries' rank ranges are counted against (ranks): the intervals at
    # its last whole computation, and those added and taken away since
    rank_base = models.BinaryField(null=True, blank=True)
    rank_delta = models.JSONField(default=list)
    apart = models.JSONField(default=dict)  # section -> [submission ids], newest first
    # the whole board's only: what the public board holds (cache.public_facets)
    facets = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "runs_storedboard"

    def __str__(self) -> str:
        return f"stored board {self.key[:12]} (version {self.built_version})"


class BoardEntry(models.Model):
    """A ranked row of a stored board: what the board sorts on, and the family-wise
    interval and rank range it was ranked with. The row's other columns are read from
    its run when a page is drawn."""

    board = models.ForeignKey(StoredBoard, on_delete=models.CASCADE, related_name="entries")
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
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
        db_table = "runs_boardentry"
        constraints = [
            models.UniqueConstraint(fields=["board", "run"], name="one_entry_per_board_and_run")
        ]
        indexes = [
            models.Index(
                fields=["board", "neg_return", "run_code", "run"], name="board_entry_order_idx"
            )
        ]
