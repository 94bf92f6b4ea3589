"""The public board, stored, so that a page is a bounded, indexed read however many runs
there are and however often they change.

A worker computes each public board a visitor has asked for (``refresh_all``, sent
when the board changes and by the sweep) and keeps it: its ranked rows, their sort keys,
family-wise intervals and rank ranges as ``BoardEntry`` rows, the runs apart as lists of
submissions. A computation is in proportion to the change: it reads again only the runs
the changes since its version concern (``BoardChange``, logged by ``board_changed``),
with their families; their rank ranges are counted against the board's base and their
intervals go into its delta (``ranks``), so no other row is rewritten. A board is
computed whole when it never was, when a change concerned every run or the delta grew
past its bound. One computation of a board runs at a time (a claim on its row); visitors
are meanwhile served the last complete one. A visitor computes a board only when none
exists yet, or when it has stayed older than the board for
``PITWEB_BOARD_STALE_SECONDS`` (no worker took it).

A page is read from it by ``stored_pages``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Min, Q
from django.utils import timezone

from harness.receipt.attempts import family_interval
from harness.receipt.rescore import Tails, rank_bounds
from pitweb.board import cache as boardcache
from pitweb.board import ranks as boardranks
from pitweb.board.filters import board_key, normalised, pinned
from pitweb.board.models import BoardChange, BoardEntry, StoredBoard
from pitweb.board.query import APART_LIMIT, apart, board_runs, ranked_runs
from pitweb.board.stamp import board_computed, board_version
from pitweb.pricing.models import PlatformScore
from pitweb.runs.models import Benchmark, Run

log = logging.getLogger(__name__)

# a computation older than this is taken over (its worker died)
CLAIM_SECONDS = 600
BATCH = 2000
UPDATE_BATCH = 20_000
# more runs changed than this since the last computation: the board is computed whole
WHOLE_AT = 5000


# -- computing -----------------------------------------------------------------------


def stored_board(filters: dict[str, Any]) -> StoredBoard:
    """The stored board for ``filters`` (created, never computed, the first time)."""
    key = board_key(filters)
    # the rank base (1.6 MB at 100,000 rows) is read by a computation only
    found = StoredBoard.objects.defer("rank_base").filter(key=key).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return StoredBoard.objects.create(key=key, filters=normalised(filters))
    except IntegrityError:  # created meanwhile by another request
        return StoredBoard.objects.get(key=key)


def _claim(board: StoredBoard) -> bool:
    now = timezone.now()
    free = Q(building_since=None) | Q(building_since__lt=now - timedelta(seconds=CLAIM_SECONDS))
    return StoredBoard.objects.filter(free, pk=board.pk).update(building_since=now) == 1


@dataclass(frozen=True)
class Computed:
    """What one computation did: rows ranked, and entries created, rewritten, deleted;
    intervals drawn afresh from their tails (the rest were kept); runs read again."""

    ranked: int
    new: int
    changed: int
    gone: int
    drawn: int
    # runs read again (None: the board was computed whole)
    read: int | None = None


def refresh(board: StoredBoard) -> Computed | None:
    """Compute ``board`` again if it is older than the board and nobody is computing it
    now; what the computation did, or None when this call did not compute it."""
    version = board_version()
    if board.built_version >= version or not _claim(board):
        return None
    try:
        board.refresh_from_db()  # computed meanwhile by the claim before this one?
        if board.built_version >= version:
            return None
        done = _compute(board, version)
    finally:
        StoredBoard.objects.filter(pk=board.pk).update(building_since=None)
    board.refresh_from_db()
    return done


def refresh_all() -> int:
    """Every stored board brought up to date (the whole public board, whose facets say
    what the boards hold, and each benchmark's, created if need be: the home page reads
    their best rows), each again while the board changed during its computation. How
    many computations ran."""
    stored_board({})
    for key in Benchmark.objects.values_list("key", flat=True):
        stored_board(pinned(key, {}))
    computed = 0
    for pk in StoredBoard.objects.order_by("pk").values_list("pk", flat=True):
        for _ in range(3):  # changes during a computation: once more, then the next call
            board = StoredBoard.objects.get(pk=pk)
            if refresh(board) is None:
                break
            computed += 1
    # the changes every stored board has been computed past are read by none again
    oldest = StoredBoard.objects.filter(built_version__gte=0).aggregate(v=Min("built_version"))
    if oldest["v"] is not None:
        BoardChange.objects.filter(version__lte=oldest["v"]).delete()
    return computed


def _ranked(filters: dict[str, Any], among: Collection[int] | None = None) -> list[Ranked]:
    """(run, code, score, return, attempts) of each ranked run, of only ``among`` if
    given (whole families: the ranking keeps a family's best)."""
    runs = board_runs(AnonymousUser(), **filters)
    if among is not None:
        runs = runs.filter(pk__in=among)
    found = ranked_runs(runs).values_list(
        "pk", "run_id", "platform_id", "platform__shifted_pit", "family__attempts"
    )
    # ranked runs all have a score and a return (the ranking filter asks for them)
    return [(pk, code, score, cast(float, ret), n or 1) for pk, code, score, ret, n in found]


def _intervals(
    wanted: dict[int, list[int]], attempts: dict[int, int]
) -> dict[int, tuple[float, float]]:
    """Each run's family-wise interval, its tails read in batches: ``wanted`` maps a
    score to the runs ranked on it."""
    drawn: dict[int, tuple[float, float]] = {}
    scores = list(wanted)
    for at in range(0, len(scores), BATCH):
        tails = PlatformScore.objects.filter(pk__in=scores[at : at + BATCH]).values_list(
            "pk", "shifted_pit_tails"
        )
        for score, data in tails:
            parsed = Tails.from_json(cast(dict[str, Any], data))
            for pk in wanted[score]:
                drawn[pk] = family_interval(parsed, attempts[pk])
    return drawn


# A ranked row as stored: ``BoardEntry``'s columns but its board and run, in this order
# (plain tuples: a computation holds 100,000 of them twice)
FIELDS = (
    "neg_return", "run_code", "score", "attempts",
    "interval_low", "interval_high", "rank_low", "rank_high",
)  # fmt: skip
Row = tuple[float, str, int, int, float, float, int, int]
# an entry as read: (run, entry id, *FIELDS)
Held = tuple[Any, ...]
# a ranked run as read: (run, run id, score, return, attempts)
Ranked = tuple[int, str, int, float, int]


def _changes(board: StoredBoard, version: int) -> set[int] | None:
    """The runs whose rows may have moved since ``board`` was computed, their families
    included; None when it must be computed whole (never computed, its ranking rule
    changed, a change concerned every run, or so many runs that one pass is cheaper)."""
    if board.built_version < 0 or board.min_trades != settings.PITWEB_MIN_RANKED_TRADES:
        return None
    concerned = BoardChange.objects.filter(
        version__gt=board.built_version, version__lte=version
    ).values_list("run_pk", flat=True)
    runs: set[int] = set()
    for pk in concerned.distinct():
        if pk is None:
            return None
        runs.add(pk)
    if len(runs) > WHOLE_AT:
        return None
    families = Run.objects.filter(pk__in=runs, family__isnull=False).values("family_id")
    kin = Run.objects.filter(family_id__in=families).values_list("pk", flat=True)
    runs.update(kin)
    return runs if len(runs) <= WHOLE_AT else None


def _compute(board: StoredBoard, version: int) -> Computed:
    """Compute ``board`` at ``version``: only the runs changed since it was last
    computed (``_changes``), or whole."""
    filters = normalised(board.filters)
    concerned = _changes(board, version)
    if concerned is not None and board.rank_base is not None:
        done = _compute_changed(board, version, filters, concerned, bytes(board.rank_base))
        if done is not None:
            return done
    return _compute_whole(board, version, filters)


def _drawn(ranked: list[Ranked], kept: dict[int, Held]) -> dict[int, tuple[float, float]]:
    """The intervals to draw again: a run new to the board, or whose score, attempts or
    return changed."""
    attempts = {pk: n for pk, _, _, _, n in ranked}
    wanted: dict[int, list[int]] = {}
    for pk, _, score, ret, n in ranked:
        old = kept.get(pk)
        if old is None or (old[4], old[5], old[2]) != (score, n, -ret):
            wanted.setdefault(score, []).append(pk)
    return _intervals(wanted, attempts)


def _compute_whole(board: StoredBoard, version: int, filters: dict[str, Any]) -> Computed:
    """Every ranked run read, every rank range counted against every interval (a new
    base, the delta empty); still only the rows that moved are written."""
    entries = BoardEntry.objects.filter(board=board).values_list("run_id", "pk", *FIELDS)
    kept: dict[int, Held] = {held[0]: held for held in entries}
    ranked = _ranked(filters)
    drawn = _drawn(ranked, kept)
    lows: list[float] = []
    highs: list[float] = []
    for pk, *_ in ranked:
        low, high = drawn[pk] if pk in drawn else (kept[pk][6], kept[pk][7])
        lows.append(low)
        highs.append(high)
    best, worst = rank_bounds(lows, highs)
    rows: dict[int, Row] = {
        pk: (-ret, code, score, n, low, high, b, w)
        for (pk, code, score, ret, n), low, high, b, w in zip(
            ranked, lows, highs, best, worst, strict=True
        )
    }
    new, changed, gone = _write(
        board, kept, rows, version,
        Stored(
            ranked_total=len(rows),
            runs_total=_runs_total(filters),
            apart=_apart_sections(board, filters, None),
            facets=_facets(board, filters, None, len(rows)),
            rank_delta=[],
            rank_base=boardranks.base_bytes(lows, highs),
        ),
    )  # fmt: skip
    return Computed(len(rows), new, changed, gone, len(drawn))


def _compute_changed(
    board: StoredBoard, version: int, filters: dict[str, Any], concerned: set[int], base: bytes
) -> Computed | None:
    """Only the runs ``concerned`` read and written: their ranges counted against the
    board's base, their old and new intervals into its delta. None when the delta would
    grow past ``boardranks.DELTA_MAX`` (then the board is computed whole)."""
    entries = BoardEntry.objects.filter(board=board, run_id__in=concerned).values_list(
        "run_id", "pk", *FIELDS
    )
    kept: dict[int, Held] = {held[0]: held for held in entries}
    ranked = _ranked(filters, concerned)
    drawn = _drawn(ranked, kept)
    added: list[boardranks.Interval] = []
    removed: list[boardranks.Interval] = []
    intervals: list[boardranks.Interval] = []
    for pk, *_ in ranked:
        old = kept.get(pk)
        # a run new to the board, or whose interval's sources changed, was drawn again
        interval = drawn[pk] if pk in drawn else (kept[pk][6], kept[pk][7])
        intervals.append(interval)
        if old is None or (old[6], old[7]) != interval:
            added.append(interval)
            if old is not None:
                removed.append((old[6], old[7]))
    fresh = {pk for pk, *_ in ranked}
    removed += [(old[6], old[7]) for run, old in kept.items() if run not in fresh]
    delta = boardranks.merged(board.rank_delta, added, removed)
    if len(delta) > boardranks.DELTA_MAX:
        return None
    best, worst = boardranks.against_base(
        base, [i[0] for i in intervals], [i[1] for i in intervals]
    )
    rows: dict[int, Row] = {
        pk: (-ret, code, score, n, low, high, b, w)
        for (pk, code, score, ret, n), (low, high), b, w in zip(
            ranked, intervals, best, worst, strict=True
        )
    }
    total = board.ranked_total + len(fresh - kept.keys()) - len(kept.keys() - fresh)
    new, changed, gone = _write(
        board, kept, rows, version,
        Stored(
            ranked_total=total,
            runs_total=_runs_total(filters),
            apart=_apart_sections(board, filters, concerned),
            facets=_facets(board, filters, concerned, total),
            rank_delta=delta,
        ),
    )  # fmt: skip
    return Computed(total, new, changed, gone, len(drawn), len(concerned))


def _runs_total(filters: dict[str, Any]) -> int:
    """Every public run the board holds, ranked or apart (one indexed count)."""
    return board_runs(AnonymousUser(), **filters).count()


def _apart_sections(
    board: StoredBoard, filters: dict[str, Any], concerned: set[int] | None
) -> dict[str, list[int]]:
    """The runs apart, section by section, newest first (``APART_LIMIT`` each): read
    whole, or only the runs concerned placed again (a section that was full and lost a
    run is read whole: the next one in line is not held)."""
    runs = board_runs(AnonymousUser(), **filters)
    sections = apart(runs)
    limit = APART_LIMIT
    if concerned is None:
        return {
            name: list(qs.values_list("pk", flat=True)[:limit]) for name, qs in sections.items()
        }
    held: dict[str, list[int]] = board.apart
    now = {
        name: set(qs.filter(pk__in=concerned).values_list("pk", flat=True))
        for name, qs in sections.items()
    }
    kept = {name: [pk for pk in held.get(name, []) if pk not in concerned] for name in sections}
    whole = {
        name
        for name in sections
        if len(held.get(name, [])) >= limit and not set(held[name]) & concerned <= now[name]
    }
    listed = [pk for name in sections if name not in whole for pk in (*kept[name], *now[name])]
    newest = dict(Run.objects.filter(pk__in=listed).values_list("pk", "submitted_at"))
    out: dict[str, list[int]] = {}
    for name, qs in sections.items():
        if name in whole:
            out[name] = list(qs.values_list("pk", flat=True)[:limit])
            continue
        members = [*kept[name], *now[name]]
        members.sort(key=lambda pk: (newest[pk], pk), reverse=True)
        out[name] = members[:limit]
    return out


def _facets(
    board: StoredBoard, filters: dict[str, Any], concerned: set[int] | None, ranked: int
) -> dict[str, Any] | None:
    """The whole board's facets (other boards keep none): read whole, or the runs
    concerned added, unless one of them left public view (another run may still hold
    its values). A run's visibility is fixed at upload, so a private run concerned (one
    being verified, say) never was in the facets and needs no scan."""
    if filters != normalised({}):
        return None
    if concerned is None or board.facets is None:
        return boardcache.public_facets(ranked=ranked)
    left = Run.objects.filter(pk__in=concerned, visibility="public").filter(
        Q(hidden=True) | ~Q(withdrawn_at=None)
    )
    if left.exists():
        return boardcache.public_facets(ranked=ranked)
    return boardcache.public_facets(among=concerned, held=board.facets, ranked=ranked)


@dataclass(frozen=True)
class Stored:
    """A computation's board-wide results, written with its entries."""

    ranked_total: int
    runs_total: int
    apart: dict[str, list[int]]
    facets: dict[str, Any] | None
    rank_delta: boardranks.Delta
    rank_base: bytes | None = None  # None: the base stands


def _write(
    board: StoredBoard,
    kept: dict[int, Held],
    rows: dict[int, Row],
    version: int,
    stored: Stored,
) -> tuple[int, int, int]:
    """Only what moved: of the entries ``kept`` (read), those gone deleted, new ones
    created, changed ones updated; the board's own results and version in the same
    transaction."""
    gone = [run for run in kept if run not in rows]
    fresh = [
        BoardEntry(board=board, run_id=run, **dict(zip(FIELDS, row, strict=True)))
        for run, row in rows.items()
        if run not in kept
    ]
    changed = [
        (kept[run][1], row) for run, row in rows.items() if run in kept and kept[run][2:] != row
    ]
    with transaction.atomic():
        for at in range(0, len(gone), BATCH):
            BoardEntry.objects.filter(board=board, run_id__in=gone[at : at + BATCH]).delete()
        BoardEntry.objects.bulk_create(fresh, batch_size=BATCH)
        _update(changed)
        results = vars(stored).copy()
        if stored.rank_base is None:  # the base stands: keep the one stored
            del results["rank_base"]
        StoredBoard.objects.filter(pk=board.pk).update(
            built_version=version, built_at=timezone.now(),
            min_trades=settings.PITWEB_MIN_RANKED_TRADES, **results,
        )  # fmt: skip
        board_computed()
    log.info(
        "board %s computed at version %s: %d ranked, %d new, %d changed, %d gone",
        board.key[:12], version, stored.ranked_total, len(fresh), len(changed), len(gone),
    )  # fmt: skip
    return len(fresh), len(changed), len(gone)


def _update(changed: list[tuple[int, Row]]) -> None:
    """Rewrite the ``changed`` entries (id, new row): on Postgres one statement per batch
    joined to the new values (a new run moves the rank range of most rows by one: tens of
    thousands of rows at 100,000 runs); elsewhere (the SQLite demo) through the ORM."""
    if connection.vendor != "postgresql":
        entries = [BoardEntry(pk=pk, **dict(zip(FIELDS, row, strict=True))) for pk, row in changed]
        BoardEntry.objects.bulk_update(entries, FIELDS, batch_size=500)
        return
    types = {f: BoardEntry._meta.get_field(f).db_type(connection) for f in FIELDS}
    columns = ", ".join(f"unnest(%s::{types[f]}[]) AS {f}" for f in FIELDS)
    assigned = ", ".join(f"{f} = v.{f}" for f in FIELDS)
    sql = (
        f"UPDATE {BoardEntry._meta.db_table} AS e SET {assigned} "
        f"FROM (SELECT unnest(%s::bigint[]) AS id, {columns}) AS v WHERE e.id = v.id"
    )
    with connection.cursor() as cursor:
        for at in range(0, len(changed), UPDATE_BATCH):
            batch = changed[at : at + UPDATE_BATCH]
            columns_of = [[row[i] for _, row in batch] for i in range(len(FIELDS))]
            cursor.execute(sql, [[pk for pk, _ in batch], *columns_of])


def ranges(board: StoredBoard, entries: list[BoardEntry]) -> list[tuple[int, int]]:
    """The rank ranges of ``entries`` now: their own, counted against the board's base,
    with its delta added (``ranks``)."""
    return boardranks.adjusted(
        board.rank_delta,
        [(e.rank_low, e.rank_high, e.interval_low, e.interval_high) for e in entries],
    )
