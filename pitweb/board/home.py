"""The board's part of the home page: every benchmark with its runs counted (ranked and
in all) and its best row, and the latest verified runs. A fixed number of queries
however many runs: the counts and best rows come from each benchmark's stored board
(``store``, which the worker keeps for every benchmark), and the whole is cached per
board stamp."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from pitweb.board.benchmarks import benchmark_out
from pitweb.board.filters import board_key, pinned
from pitweb.board.models import BoardEntry, StoredBoard
from pitweb.board.stamp import board_stamp
from pitweb.runs.models import PROVEN_LEVELS, Benchmark
from pitweb.runs.selectors import visible_runs

LATEST = 8
TIMEOUT = 300


def _public_runs() -> Any:
    return visible_runs(AnonymousUser()).filter(withdrawn_at=None)


def home_benchmarks() -> list[dict[str, Any]]:
    """Each benchmark whose stored board holds a public run, newest window first: its
    name and page, its runs in all and ranked, and its best row (return and the
    family-wise interval it is ranked on), as its stored board was last computed."""
    benchmarks = list(Benchmark.objects.all())
    keys = {board_key(pinned(b.key, {})): b for b in benchmarks}
    boards = {
        keys[key]: (pk, ranked, runs)
        for key, pk, ranked, runs in StoredBoard.objects.filter(
            key__in=keys, built_version__gte=0, runs_total__gt=0
        ).values_list("key", "pk", "ranked_total", "runs_total")
    }
    first = Window(RowNumber(), partition_by=[F("board_id")], order_by=["neg_return", "run_code"])
    best = {
        entry.board_id: entry
        for entry in BoardEntry.objects.filter(board_id__in=[pk for pk, *_ in boards.values()])
        .annotate(nth=first)
        .filter(nth=1)
        .select_related("run")
    }
    out = []
    for benchmark in benchmarks:
        if benchmark not in boards:  # no public run, or its board not computed yet
            continue
        board_pk, ranked, runs = boards[benchmark]
        top = best.get(board_pk)
        out.append(
            benchmark_out(benchmark) | {
                "runs": runs,
                "ranked": ranked,
                "best": None if top is None else {
                    "return": -top.neg_return,
                    "interval": [top.interval_low, top.interval_high],
                    "run_id": top.run_code,
                    "agent": top.run.agent,
                    "body_sha256": top.run.body_sha256,
                    "submission": top.run_id,
                },
            }
        )  # fmt: skip
    return out


def home_summary() -> dict[str, Any]:
    """The board's part of the home page: the benchmarks and the latest verified runs,
    cached per board stamp (a run verified or withdrawn shows on the next request)."""
    stamp = board_stamp()
    key = f"home:{stamp.version}.{stamp.computed}.{stamp.epoch}"
    found = cache.get(key)
    if found is None:
        latest = (
            _public_runs()
            .filter(verification_level__in=PROVEN_LEVELS)
            .select_related("benchmark")
            .defer("body", "config")
            .order_by("-submitted_at", "-pk")[:LATEST]
        )
        found = {
            "benchmarks": home_benchmarks(),
            "latest": [
                {
                    "run_id": r.run_id, "agent": r.agent, "body_sha256": r.body_sha256,
                    "submission": r.pk, "submitted_at": r.submitted_at,
                    "benchmark": benchmark_out(r.benchmark) if r.benchmark else None,
                    "level": r.get_verification_level_display(),
                }
                for r in latest
            ],
        }  # fmt: skip
        cache.set(key, found, timeout=TIMEOUT)
    return cast(dict[str, Any], found)
