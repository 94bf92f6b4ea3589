"""Which benchmarks a board query reaches: one (its board ranks), or several (their runs
are listed grouped by benchmark, ranked across none). A benchmark is (release, forms,
window, hold, clocks); the filters release, form, start and end choose benchmarks,
since each fixes them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.urls import reverse

from pitweb.board.query import board_runs
from pitweb.runs.models import Benchmark

# a query spanning more benchmarks lists the newest windows' only (and says how many)
GROUPS_MAX = 50
RANK_FIELDS = ("rank", "rank_low", "rank_high", "position", "ranked_interval", "ranked_confidence")


def benchmark_by_key(key: str | None) -> Benchmark | None:
    return None if not key else Benchmark.objects.filter(key=key).first()


def benchmarks_matching(user: User | AnonymousUser, filters: dict[str, Any]) -> list[Benchmark]:
    """The benchmarks holding a run ``user`` may see on a board drawn with ``filters``
    (release, form, start, end, isolated, cutoff), newest window first."""
    runs = board_runs(
        user, filters.get("release"), filters.get("form"), filters.get("start"),
        filters.get("end"), bool(filters.get("isolated")), cutoff=filters.get("cutoff"),
    )  # fmt: skip
    return list(Benchmark.objects.filter(pk__in=runs.values("benchmark_id")))


def board_scope(user: User | AnonymousUser, filters: dict[str, Any]) -> Benchmark | list[Benchmark]:
    """The one benchmark a query ranks in (named by ``benchmark``, or the only one its
    other filters match), else the benchmarks it spans (none for an unknown key)."""
    if filters.get("benchmark"):
        found = benchmark_by_key(filters["benchmark"])
        return found if found is not None else []
    matching = benchmarks_matching(user, filters)
    return matching[0] if len(matching) == 1 else matching


def benchmark_out(benchmark: Benchmark) -> dict[str, Any]:
    """A benchmark as the board's answers name it."""
    return {
        "key": benchmark.key,
        "name": benchmark.name,
        "page": reverse("benchmark", args=[benchmark.key]),
        "release_digest": benchmark.release_digest,
        "forms": benchmark.forms,
        "window": f"{benchmark.window_start}..{benchmark.window_end}",
        "hold_sessions": benchmark.hold_sessions,
        "clocks": benchmark.clocks,
    }


def unranked(row: dict[str, Any]) -> dict[str, Any]:
    """A row of a query spanning benchmarks: its rank fields null (no rank across
    benchmarks)."""
    return row | dict.fromkeys(RANK_FIELDS)
