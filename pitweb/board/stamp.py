"""What a board shows is versioned: every change bumps the version (``changes``); cached
pages are keyed by the version and by how many computations of stored boards have
finished.

A server process reads that stamp from the database at most once per
``PITWEB_BOARD_STAMP_MS`` (its threads share the reading), so a cached page costs no
query at all: a change made in this process is seen by its next request, one made in
another process (a hide by staff, a worker's computation) within that interval."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from pitweb.board.models import BoardVersion


def board_computed() -> None:
    """A stored board was computed again: pages cached from the one before are stale."""
    forget_stamp()
    BoardVersion.objects.filter(pk=1).update(computed=F("computed") + 1)
    transaction.on_commit(forget_stamp, robust=True)


def board_version() -> int:
    return BoardVersion.objects.filter(pk=1).values_list("version", flat=True).first() or 0


class Stamp(NamedTuple):
    """What a cached board page is keyed by: the board version, the computations of
    stored boards finished, and the runs taken off public view (the epoch)."""

    version: int
    computed: int
    epoch: int


class _Known:
    """The stamp as this process last read it and when (one tuple, replaced whole, so
    a thread never sees one's stamp with another's time), and how often this process
    changed the board: a reading that began before such a change is never kept."""

    lock = threading.Lock()
    reading: tuple[float, Stamp] | None = None
    forgotten = 0


def board_stamp() -> Stamp:
    """The board's stamp, read from the database at most once per
    ``PITWEB_BOARD_STAMP_MS`` in this process."""
    reading = _Known.reading
    if reading is not None and (
        time.monotonic() - reading[0] < settings.PITWEB_BOARD_STAMP_MS / 1000
    ):
        return reading[1]
    began, forgotten = time.monotonic(), _Known.forgotten
    stamp = _read_stamp()
    with _Known.lock:
        if _Known.forgotten == forgotten:
            _Known.reading = (began, stamp)
    return stamp


def forget_stamp() -> None:
    """This process changed the board: its next request reads the stamp again."""
    with _Known.lock:
        _Known.reading = None
        _Known.forgotten += 1


def _read_stamp() -> Stamp:
    # one fixed statement: building the ORM's query cost as much as the read itself
    with connection.cursor() as cursor:
        cursor.execute(_STAMP_SQL)
        found = cursor.fetchone()
    return Stamp(*found) if found else Stamp(0, 0, 0)


_STAMP_SQL = f"SELECT version, computed, epoch FROM {BoardVersion._meta.db_table} WHERE id = 1"


@contextmanager
def board_read() -> Iterator[None]:
    """One consistent read of the board: every query inside sees the runs as they stood
    at its first one. A board is several queries (the ranks over the whole board, a
    page's rows, the runs apart); a run verified, ranked or hidden between two of them
    would otherwise make the rank labels and the rows two different boards (an export's
    lists of unequal length, or labels attached to the wrong rows).

    On Postgres the transaction is REPEATABLE READ (its snapshot taken at its first
    query; the default, READ COMMITTED, takes one per statement); on SQLite a
    transaction is already one snapshot. Inside a transaction begun by the caller the
    isolation is the caller's (Postgres allows it to be set only before any query), so
    a caller that reads the board more than once begins the read here."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def board_changed_at() -> datetime:
    found = BoardVersion.objects.filter(pk=1).values_list("changed_at", flat=True).first()
    return found or timezone.now()
