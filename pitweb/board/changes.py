"""The one way another app tells the board that what it shows changed: ``board_changed``.

It imports no other app of the site (only the board's own version tables, the job
machine's foundations and Django): the apps that change runs call it, the board never
calls them, and the refresh it asks for is sent by task name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from celery import current_app
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Now

from pitweb.board.models import BoardChange, BoardVersion
from pitweb.board.stamp import forget_stamp

# one refresh waiting in the queue is enough: the worker reads the newest version
REFRESH_SENT = "board-refresh-sent"
REFRESH_TASK = "pitweb.board.tasks.refresh_boards_task"


def board_changed(*, runs: Iterable[int] | None = None, taken_off: bool = False) -> None:
    """Say the board changed (call inside the transaction that changed a run): cached
    pages are stale, and once it commits a worker computes the stored boards again.
    ``runs``: the runs whose rows may have moved (the worker reads only those again,
    with their families); None: any run may have (every board computed whole); empty:
    nothing a board sorts on. ``taken_off``: a run left public view (hidden, withdrawn),
    so no page rendered before may be served again, not even while the next one is
    rendered."""
    bumped: dict[str, Any] = {"version": F("version") + 1, "changed_at": Now()}
    if taken_off:
        bumped["epoch"] = F("epoch") + 1
    # one transaction: a computation that reads this version reads its changes too (the
    # row lock taken by the update orders versions as their transactions commit)
    forget_stamp()  # this process's next request reads it (and again once committed)
    with transaction.atomic():
        if not BoardVersion.objects.filter(pk=1).update(**bumped):
            BoardVersion.objects.get_or_create(pk=1)
            BoardVersion.objects.filter(pk=1).update(**bumped)
        version = BoardVersion.objects.values_list("version", flat=True).get(pk=1)
        concerned: Iterable[int | None] = [None] if runs is None else sorted(set(runs))
        BoardChange.objects.bulk_create(
            [BoardChange(version=version, run_pk=pk) for pk in concerned]
        )
    transaction.on_commit(forget_stamp, robust=True)
    transaction.on_commit(_send_refresh, robust=True)


def _send_refresh() -> None:
    # by name: the task is the board's (``pitweb.board.tasks``, registered by its app)
    if cache.add(REFRESH_SENT, 1, timeout=60):
        current_app.tasks[REFRESH_TASK].delay()
