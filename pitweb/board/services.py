"""Snapshots: a board published as it stands, to be cited. Staff publish one with a
reason (audited); the weekly schedule publishes the whole board without one."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from harness import canonical
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
from pitweb.forward.selectors import log_head

SCHEDULED_REASON = "the weekly snapshot of each benchmark's board"


def snapshot_publish(
    *, filters: dict[str, Any], reason: str, staff: User | None = None
) -> Snapshot:
    """Freeze the public board drawn with ``filters`` (every row of every section, as a
    visitor sees them) as canonical JSON with its digest (``harness.snapshot``: over the
    digest of each row). ``staff`` None: the schedule."""
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
        }
        content = canonical.line(body)  # every float as the board had it (shortest repr)
        # over each row's digest, not the row: a row taken out later (its run withdrawn
        # or hidden) keeps its digest in the snapshot, which still verifies
        digest = snapshot_digest(body)
        snapshot = Snapshot.objects.create(
            content=content,
            content_digest=digest,
            filters_key=key,
            taken_at=taken,
            board_version=version,
            published_by=staff,
            reason=reason,
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
