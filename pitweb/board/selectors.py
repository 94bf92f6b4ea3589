"""The board's reads: a page of it (from its stored copy where a visitor could reach it,
else computed), and the whole of it for export. Each row in the same read as the ranks
labelling it (``stamp.board_read``)."""

from __future__ import annotations

import bisect
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils import timezone

from harness.receipt.attempts import family_interval, sidak_confidence
from harness.receipt.rescore import RankRange, Tails, rank_ranges
from pitweb.board import cache, keys, stored_pages
from pitweb.board.benchmarks import GROUPS_MAX, benchmark_out, board_scope, unranked
from pitweb.board.filters import CHOOSERS, pinned
from pitweb.board.query import (
    APART_LIMIT,
    PAGE_ROWS,
    PER_PAGE,
    SECTIONS,
    apart,
    board_runs,
    ranked_runs,
)
from pitweb.board.rows import apart_row, leaderboard_row
from pitweb.board.stamp import board_read, board_stamp
from pitweb.runs.models import Run


class Ranks:
    """Every ranked row's family-wise interval, rank range and cursor, in ranking order
    (the whole filtered board's, not one page's)."""

    def __init__(self, ranked: QuerySet[Run]) -> None:
        found = list(
            ranked.values_list(
                "platform__shifted_pit_tails", "family__attempts", "platform__shifted_pit",
                "run_id", "pk",
            )
        )  # fmt: skip
        self.attempts = [n or 1 for _, n, *_ in found]
        # ranked runs all have tails (the ranking filter asks for them)
        self.intervals = [
            family_interval(Tails.from_json(cast(dict[str, Any], tails)), n)
            for (tails, *_), n in zip(found, self.attempts, strict=True)
        ]
        self.ranges: list[RankRange] = rank_ranges(self.intervals)
        # ranked runs all have a return (the ranking filter asks for it)
        self.keys = [keys.Cursor(-cast(float, r), code, pk) for *_, r, code, pk in found]

    def __len__(self) -> int:
        return len(self.ranges)

    def offset(self, after: str | None, before: str | None, per_page: int) -> int | None:
        """Where the page asked for by cursor starts (None: no cursor given)."""
        # the keys are in ranking order, which is their order as cursors
        if after is not None:
            return bisect.bisect_right(self.keys, keys.Cursor.parse(after))
        if before is not None:
            end = bisect.bisect_left(self.keys, keys.Cursor.parse(before))
            return max(0, end - per_page)
        return None

    def number(self, rows: list[dict[str, Any]], offset: int) -> None:
        """Label ``rows`` (the ranked rows from ``offset`` on, read in the same
        ``board_read`` as these ranks) with their ranks. A row that is not the run these
        ranks hold at its place is refused: a label is never attached to another run's
        row."""
        for n, row in enumerate(rows, start=offset):
            if n >= len(self.keys) or self.keys[n].pk != row["submission"]:
                raise RuntimeError("the board's ranks and rows were not read together")
            found, (low, high) = self.ranges[n], self.intervals[n]
            row.update(
                rank=found.label, rank_low=found.low, rank_high=found.high, position=n + 1,
                ranked_interval=[low, high],
                ranked_confidence=sidak_confidence(self.attempts[n]),
            )  # fmt: skip


def leaderboard(
    *,
    user: User | AnonymousUser,
    benchmark: str | None = None,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
    isolated: bool = False,
    cutoff: str | None = None,
    page: int = 1,
    per_page: int = PER_PAGE,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    """A page of ranked runs and, apart, each for its reason: unranked (no platform
    figure yet, or too few trades), mask leaks (control void), cells that failed, failed
    and pending verification (no numbers), invalid. Paged by number or by key (``after``
    / ``before`` a row's cursor). The public board a visitor can reach from its links is
    read from its stored copy (``stored_pages``: a fixed number of indexed queries
    however many runs); a signed-in user's, which holds their own unpublished runs, is
    computed.

    A ranking exists only inside one benchmark: a query that reaches several (its
    filters match more than one) lists each one's rows grouped, rank fields null
    (``grouped``)."""
    asked: dict[str, Any] = {"benchmark": benchmark, "release": release, "form": form}
    asked |= {"start": start}
    asked |= {"end": end, "isolated": isolated, "cutoff": cutoff}
    scope = board_scope(user, asked)
    if isinstance(scope, list):
        return _grouped(user, scope, asked, per_page, every=False)
    filters = pinned(scope.key, asked)
    found = _one_board(user, filters, page, per_page, after, before)
    return found | {"grouped": False, "benchmark": benchmark_out(scope)}


def _grouped(
    user: User | AnonymousUser,
    benchmarks: list[Any],
    asked: dict[str, Any],
    per_page: int,
    *,
    every: bool,
) -> dict[str, Any]:
    """Each benchmark's board (its first page, or every row), one after the other, with
    no rank: a ranking exists only inside one benchmark. ``asked``: the query's filters
    (isolated and cutoff hold on each board)."""
    out: dict[str, Any] = {name: [] for name in SECTIONS}
    groups = []
    current = True
    isolated, cutoff = bool(asked.get("isolated")), asked.get("cutoff")
    for found in benchmarks[:GROUPS_MAX]:
        if every:
            one = leaderboard_export(
                user=user, benchmark=found.key, isolated=isolated, cutoff=cutoff
            )
            total = len(one["ranked"])
        else:
            one = leaderboard(
                user=user, benchmark=found.key, isolated=isolated, cutoff=cutoff, per_page=per_page
            )
            total = one["pagination"]["ranked_total"]
            current = current and one["current"]
        for name in SECTIONS:
            out[name] += [unranked(row) for row in one[name]]
        groups.append(benchmark_out(found) | {"ranked_total": total})
    return out | {
        "grouped": True,
        "benchmark": None,
        "benchmarks": groups,
        "benchmarks_total": len(benchmarks),
        "pagination": None,
        "min_ranked_trades": settings.PITWEB_MIN_RANKED_TRADES,
        "computed_at": timezone.now().isoformat(),
        "current": current,
    }


def _one_board(
    user: User | AnonymousUser,
    filters: dict[str, Any],
    page: int,
    per_page: int,
    after: str | None,
    before: str | None,
) -> dict[str, Any]:
    """A page of one benchmark's board (``filters``: its key, and isolated)."""
    if (
        not user.is_authenticated
        and per_page in (PER_PAGE, PAGE_ROWS)
        and cache.key("board", board_stamp(), filters) is not None
    ):
        found = stored_pages.stored_leaderboard(
            filters, page=page, per_page=per_page, after=after, before=before
        )
        if found is not None:
            return found
    # a signed-in user's board, a query no link of the board leads to (a value no public
    # run has: an empty board), or a board whose first computation is under way elsewhere
    return _leaderboard(user, filters, page, per_page, after, before)


def _leaderboard(
    user: User | AnonymousUser,
    filters: dict[str, Any],
    page: int,
    per_page: int,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    """A page of the board computed from the runs, in one consistent read."""
    with board_read():
        runs = board_runs(user, **{k: v for k, v in filters.items() if k != "user"})
        ranked = ranked_runs(runs)
        ranks = Ranks(ranked)
        total = len(ranks)
        offset = ranks.offset(after, before, per_page)
        if offset is None:
            pages = max(1, -(-total // per_page))
            offset = (min(max(1, page), pages) - 1) * per_page
        rows = [leaderboard_row(r) for r in ranked[offset : offset + per_page]]
        ranks.number(rows, offset)
        return {
            "ranked": rows,
            **{
                name: [apart_row(name, r) for r in qs[:APART_LIMIT]]
                for name, qs in apart(runs).items()
            },
            "pagination": keys.pages_around(
                ranks.keys[offset : offset + len(rows)], offset + 1, total, per_page
            ),
            "min_ranked_trades": settings.PITWEB_MIN_RANKED_TRADES,
            "computed_at": timezone.now().isoformat(),
            "current": True,
        }


def leaderboard_export(
    *,
    user: User | AnonymousUser,
    benchmark: str | None = None,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
    isolated: bool = False,
    cutoff: str | None = None,
) -> dict[str, Any]:
    """The whole board for CSV/JSON export: every ranked run, then the rest, read
    together (``board_read``); a query reaching several benchmarks, each one's rows
    grouped, ranked across none."""
    asked: dict[str, Any] = {"benchmark": benchmark, "release": release, "form": form}
    asked |= {"start": start}
    asked |= {"end": end, "isolated": isolated, "cutoff": cutoff}
    scope = board_scope(user, asked)
    if isinstance(scope, list):
        return _grouped(user, scope, asked, PER_PAGE, every=True)
    runs = board_runs(
        user, benchmark=scope.key, isolated=isolated, cutoff=cutoff, **dict.fromkeys(CHOOSERS)
    )
    ranked_qs = ranked_runs(runs)
    with board_read():
        ranks = Ranks(ranked_qs)
        ranked = [leaderboard_row(r) for r in ranked_qs.iterator(chunk_size=2000)]
        ranks.number(ranked, 0)
        return {
            "ranked": ranked,
            **{name: [apart_row(name, r) for r in qs] for name, qs in apart(runs).items()},
            "grouped": False,
            "benchmark": benchmark_out(scope),
        }
