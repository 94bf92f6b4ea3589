"""Snapshots: a board published as it stands, to be cited. Staff publish one with a
reason (audited); the weekly schedule publishes the whole board without one."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.utils import timezone

from harness import canonical
from harness.attest.snapshots import PREVIOUS, snapshot_statement
from harness.snapshot import SNAPSHOT_VERSION, snapshot_digest
from pitweb.board.benchmarks import benchmarks_matching, board_scope
from pitweb.board.changes import board_changed
from pitweb.board.filters import normalised, pinned
from pitweb.board.models import Snapshot
from pitweb.board.query import SECTIONS
from pitweb.board.selectors import leaderboard_export
from pitweb.board.stamp import board_read, board_version
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import require_reason
from pitweb.core.signing import now_stamp, signing_key, site_sign
from pitweb.forward.selectors import log_head

SCHEDULED_REASON = "the weekly snapshot of each benchmark's board"


# a publication that lost a race to another of the same board publishes again after it;
# this many losses in a row is not a race but a fault
PUBLISH_ATTEMPTS = 5


def snapshot_publish(
    *, filters: dict[str, Any], reason: str, staff: User | None = None
) -> Snapshot:
    """Freeze the public board drawn with ``filters`` (every row of every section, as a
    visitor sees them) as canonical JSON with its digest (``harness.snapshot``: over the
    digest of each row), naming the board's snapshot before it and signed by the site
    (``harness.attest.snapshots``). ``staff`` None: the schedule."""
    reason = require_reason(reason) if staff is not None else reason
    scope = board_scope(AnonymousUser(), normalised(filters))
    if isinstance(scope, list):
        raise SubmissionError(
            "spans_benchmarks",
            f"a snapshot is of one benchmark, and these filters match {len(scope)}: "
            "publish it from one benchmark's board"
            if scope
            else "a snapshot is of one benchmark, and no public run's benchmark matches "
            "these filters",
        )
    normalised_filters = normalised(pinned(scope.key, filters))
    key = canonical.dumps(normalised_filters)
    if len(key) > Snapshot._meta.get_field("filters_key").max_length:  # type: ignore[operator]
        raise SubmissionError("filters_too_long", "the board's filters are too long to cite")
    # the key a first signature makes on first use exists before the board is taken, so
    # the snapshot's time is never before the key's start
    signing_key()
    attempt = 0
    while True:
        attempt += 1
        previous = _chain_tip(key)
        try:
            return _publish(normalised_filters, key, previous, reason=reason, staff=staff)
        except IntegrityError:
            # another publication of this board named ``previous`` first (the constraint
            # snapshot_one_successor, or snapshot_one_first_per_board): publish again
            # after it, the board taken again, so times rise along the chain
            if attempt == PUBLISH_ATTEMPTS or _chain_tip(key) == previous:
                raise


def _chain_tip(key: str) -> str | None:
    """The digest of the newest snapshot of the board keyed ``key``, the one a new
    snapshot follows (None: it has none). Read before the board is taken: a snapshot
    that follows it is taken after it was published."""
    return (
        Snapshot.objects.filter(filters_key=key)
        .order_by("-id")
        .values_list("content_digest", flat=True)
        .first()
    )


def _publish(
    normalised_filters: dict[str, Any],
    key: str,
    previous: str | None,
    *,
    reason: str,
    staff: User | None,
) -> Snapshot:
    shown = {k: v for k, v in normalised_filters.items() if k != "isolated" or v}
    # the board and its version read together (outside the writes: a REPEATABLE READ
    # transaction that wrote the board's version row could fail on a concurrent change)
    with board_read():
        version = board_version()
        taken = timezone.now()
        found = leaderboard_export(user=AnonymousUser(), **shown)
        board = {name: found[name] for name in SECTIONS}
    with transaction.atomic():
        body = {
            "snapshot_version": SNAPSHOT_VERSION,
            "taken_at": taken.isoformat(),
            "board_version": version,
            "filters": normalised_filters,
            "board": board,
            # the commitment log's head as the snapshot is taken: in its digest, so a
            # reader holding the snapshot holds a head the log must keep (no version bump:
            # a key the verifier hashes like any other, and older snapshots, without it,
            # verify as they did)
            "commitment_log_head": log_head(),
            # the board's snapshot before this one, in the digest too: a chain of them is
            # checked offline link by link (pit-harness snapshot verify)
            PREVIOUS: previous,
        }
        content = canonical.line(body)  # every float as the board had it (shortest repr)
        # over each row's digest, not the row: a row taken out later (its run withdrawn
        # or hidden) keeps its digest in the snapshot, which still verifies
        digest = snapshot_digest(body)
        envelope = site_sign(snapshot_statement(body, now_stamp(taken)))
        snapshot = Snapshot.objects.create(
            content=content,
            content_digest=digest,
            filters_key=key,
            taken_at=taken,
            board_version=version,
            published_by=staff,
            reason=reason,
            previous_digest=previous,
            signature=canonical.dumps(envelope),
        )
        if staff is not None:
            audit_record(
                actor=staff, action="snapshot", reason=f"{reason} (snapshot {snapshot.pk})",
                public=True,
            )  # fmt: skip
        board_changed(runs=())  # the board's "cite this board" now names it
    return snapshot


def snapshot_publish_each(*, reason: str, staff: User | None = None) -> list[Snapshot]:
    """A snapshot of each benchmark's public board (a snapshot is of one benchmark),
    newest window first."""
    return [
        snapshot_publish(filters=pinned(found.key, {}), reason=reason, staff=staff)
        for found in benchmarks_matching(AnonymousUser(), {})
    ]


def snapshot_scheduled() -> list[Snapshot]:
    """The schedule's snapshots: each benchmark's public board."""
    return snapshot_publish_each(reason=SCHEDULED_REASON)
