"""The board's tasks: the stored boards computed again (on the ``board`` queue, see
settings), and the weekly snapshot. Thin: each calls one function of the board."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

from pitweb.board import services, store
from pitweb.board.changes import REFRESH_SENT


@shared_task
def publish_weekly_snapshot() -> list[int]:
    """The schedule's snapshot of each benchmark's public board (settings: the beat
    schedule)."""
    return [snapshot.pk for snapshot in services.snapshot_scheduled()]


@shared_task
def refresh_boards_task() -> int:
    """The stored boards computed again where the board changed (store); sent once a
    change commits (``changes.board_changed``), and by the sweep for a change whose
    message was lost."""
    cache.delete(REFRESH_SENT)  # a change from now on sends another
    return store.refresh_all()
