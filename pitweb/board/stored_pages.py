"""The public board read from its stored copy (``store``): a page's entries by key
(``?after=`` / ``?before=`` a row's cursor, or ``?page=``) and its rows from their runs
as they are now; a run hidden or withdrawn since the computation is left out at once,
never shown for a moment longer."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet
from django.utils import timezone

from harness.receipt.attempts import sidak_confidence
from harness.receipt.rescore import RankRange
from pitweb.board.keys import Cursor, pages_around
from pitweb.board.models import BoardEntry, StoredBoard
from pitweb.board.query import PER_PAGE, board_runs
from pitweb.board.rows import apart_row, leaderboard_row
from pitweb.board.stamp import board_changed_at, board_read, board_version
from pitweb.board.store import ranges, refresh, stored_board
from pitweb.runs.models import Run

ORDER = ("neg_return", "run_code", "run_id")


def _usable(board: StoredBoard, version: int) -> StoredBoard:
    """The board to serve at ``version``: computed here if there is none yet, or if it
    stayed older than the runs for longer than a worker would take; otherwise the last
    complete one."""
    if board.built_version >= version:
        return board
    grace = timedelta(seconds=settings.PITWEB_BOARD_STALE_SECONDS)
    if board.built_version < 0 or board_changed_at() <= timezone.now() - grace:
        refresh(board)
    return board


def _page_entries(
    board: StoredBoard, page: int, per_page: int, after: str | None, before: str | None
) -> tuple[list[BoardEntry], int]:
    """The entries of one page, in order, and the position of the first (1-based)."""
    entries: QuerySet[BoardEntry] = BoardEntry.objects.filter(board=board)
    if after is not None:
        cursor = Cursor.parse(after)
        found = list(entries.filter(cursor.after()).order_by(*ORDER)[:per_page])
    elif before is not None:
        cursor = Cursor.parse(before)
        found = list(entries.filter(cursor.before()).order_by(*(f"-{k}" for k in ORDER))[:per_page])
        found.reverse()
    else:
        pages = max(1, -(-board.ranked_total // per_page))
        offset = (min(max(1, page), pages) - 1) * per_page
        return list(entries.order_by(*ORDER)[offset : offset + per_page]), offset + 1
    if not found:
        return [], board.ranked_total + 1
    first = found[0]
    ahead = Cursor(first.neg_return, first.run_code, first.run_id).before()
    return found, entries.filter(ahead).count() + 1


def _rows(pks: list[int]) -> dict[int, Run]:
    """The runs of ``pks`` the public may see now (one query)."""
    runs = board_runs(AnonymousUser(), None, None, None, None)
    return {r.pk: r for r in runs.filter(pk__in=pks)}


def stored_leaderboard(
    filters: dict[str, Any],
    *,
    page: int = 1,
    per_page: int = PER_PAGE,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, Any] | None:
    """The public board from its stored copy, in the shape of ``selectors.leaderboard``;
    None while its first computation is under way elsewhere (nothing to serve yet)."""
    version = board_version()
    board = _usable(stored_board(filters), version)
    if board.built_version < 0:
        return None
    # the board's row (its totals, apart lists and rank delta), its entries and their
    # runs, read together: a computation written meanwhile is seen whole or not at all
    with board_read():
        board = StoredBoard.objects.defer("rank_base").get(pk=board.pk)
        return _stored_page(board, version, page, per_page, after, before)


def _stored_page(
    board: StoredBoard,
    version: int,
    page: int,
    per_page: int,
    after: str | None,
    before: str | None,
) -> dict[str, Any]:
    entries, first = _page_entries(board, page, per_page, after, before)
    apart_pks = [pk for pks in board.apart.values() for pk in pks]
    runs = _rows([e.run_id for e in entries] + apart_pks)
    shown = [e for e in entries if e.run_id in runs]
    rows = []
    for n, (entry, (low, high)) in enumerate(zip(shown, ranges(board, shown), strict=True)):
        row = leaderboard_row(runs[entry.run_id])
        row.update(
            rank=RankRange(low, high).label, rank_low=low, rank_high=high,
            position=first + n, ranked_interval=[entry.interval_low, entry.interval_high],
            ranked_confidence=sidak_confidence(entry.attempts),
        )  # fmt: skip
        rows.append(row)
    return {
        "ranked": rows,
        **{
            name: [apart_row(name, runs[pk]) for pk in pks if pk in runs]
            for name, pks in board.apart.items()
        },
        "pagination": pages_around(
            [Cursor(e.neg_return, e.run_code, e.run_id) for e in shown],
            first,
            board.ranked_total,
            per_page,
        ),
        "min_ranked_trades": settings.PITWEB_MIN_RANKED_TRADES,
        "computed_at": board.built_at.isoformat() if board.built_at else None,
        # False: the runs changed since, and this board is being computed again
        "current": board.built_version >= version,
    }
