"""The forward board: every committed agent ranked on what it made after it committed.

Reads only. A benchmark of the forward track is a release line with the forms, hold and
clocks a commitment entered (a ranking compares like with like). Every figure is the
engine's (``harness.forward.standing``) over stored rows: each forward run's and
backtest's trades, kept beside their platform figures, priced with the line's reference
prices, and only once those prices reach the end of the run's hold (a figure over the
trades priced so far would be a different, luckier number). A forward window counts only
once the engine settled it forward (verified, executed by the site, every traded row
accepted after the commitment, the committed package); a backtest only once settled as
one. The board is computed again whenever any of those rows changes (its cache key is a
digest of them) and is small: one row per commitment.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Prefetch

from harness.forward.check import NEW_YORK
from harness.forward.standing import (
    Entrant,
    Placing,
    Standing,
    Window,
    forward_board,
    forward_curve,
    pooled,
    standing,
    trades_of,
)
from harness.receipt.rescore import Figure
from pitweb.forward.models import Commitment, ForwardRun
from pitweb.forward.selectors import shown_clock

CACHE_SECONDS = 600


@dataclass(frozen=True)
class BenchmarkOf:
    """A forward benchmark: a release line with the forms, hold and clocks entered."""

    line: str
    forms: tuple[str, ...]
    hold: int
    clocks: tuple[str, ...]

    @property
    def key(self) -> str:
        text = json.dumps([self.line, self.forms, self.hold, self.clocks])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        return (
            f"{self.line} · {', '.join(self.forms)} · hold {self.hold} · {', '.join(self.clocks)}"
        )

    @classmethod
    def of(cls, commitment: Commitment) -> BenchmarkOf:
        return cls(
            commitment.release_name,
            tuple(sorted(commitment.forms)),
            int(commitment.hold_sessions),
            tuple(sorted(commitment.clocks)),
        )


def _commitments() -> list[Commitment]:
    runs = ForwardRun.objects.select_related(
        "release", "run", "run__platform", "run__platform__prices"
    )
    return list(
        Commitment.objects.select_related("entry", "withdrawal", "agent", "owner", "release")
        .prefetch_related(
            Prefetch(
                "runs", queryset=runs.order_by("release__window_end", "pk"), to_attr="forward_runs"
            )
        )
        .order_by("entry__seq")
    )


def _counted(row: ForwardRun, wanted: str) -> bool:
    """A settled run of ``wanted`` status whose figures are priced through its hold."""
    score = row.run.platform if row.run is not None else None
    return (
        row.status == wanted
        and score is not None
        and score.state == "scored"
        and score.trades is not None
        and score.prices.last_day is not None
        and score.prices.last_day >= row.priced_through
    )


def _cell(
    figures: dict[str, Any] | None, clock: str, key: str
) -> tuple[float | None, list[float] | None]:
    deltas = ((figures or {}).get("contamination") or {}).get(clock) or {}
    bounds = ((figures or {}).get("contamination_interval_95") or {}).get(clock) or {}
    return deltas.get(key), bounds.get(key)


def _figure(figure: Figure | None) -> dict[str, Any] | None:
    if figure is None or figure.total_return is None:
        return None
    return {"value": figure.total_return, "interval": [figure.low, figure.high],
            "trades": figure.trades, "priced": figure.priced, "sessions": figure.sessions}  # fmt: skip


def _cutoff_words(cutoff: str, backtest_start: date | None) -> tuple[str, str]:
    """Whether the declared training cutoff precedes the backtest window: (code, words)."""
    if not cutoff:
        return "not_declared", "no cutoff declared"
    if backtest_start is None:
        return "no_backtest", f"cutoff {cutoff}; no backtest yet"
    if date.fromisoformat(cutoff) < backtest_start:
        return "yes", f"yes: cutoff {cutoff}, before the backtest"
    return "no", f"no: cutoff {cutoff}, the backtest lies inside the training data"


def _entry(commitment: Commitment, clock: str) -> tuple[Standing, dict[str, Any]] | None:
    """A commitment's standing and the facts beside it; None before a forward window of
    it is settled and priced."""
    rows: list[ForwardRun] = list(getattr(commitment, "forward_runs", []))
    forwards = [r for r in rows if r.kind == ForwardRun.Kind.FORWARD and _counted(r, "forward")]
    if not forwards:
        return None
    windows = []
    for row in forwards:
        assert row.run is not None and row.run.platform is not None
        windows.append(
            Window(row.end.isoformat(), trades_of(row.run.platform.trades, "main", clock) or [])
        )
    newest = forwards[-1]
    backtests = {
        r.release_id: r
        for r in rows
        if r.kind == ForwardRun.Kind.BACKTEST and _counted(r, "backtest")
    }
    behind = backtests.get(newest.release_id)  # as many sessions as the newest forward window
    behind_trades = None
    behind_figures = None
    if behind is not None and behind.run is not None and behind.run.platform is not None:
        behind_trades = trades_of(behind.run.platform.trades, "main", clock)
        behind_figures = behind.run.platform.figures
    found = standing(windows, behind_trades)
    delta, delta_interval = _cell(behind_figures, clock, "main_minus_shifted")
    committed_on = commitment.committed_at.astimezone(NEW_YORK).date()
    code, words = _cutoff_words(commitment.training_cutoff, behind.start if behind else None)
    facts = {
        "seq": commitment.entry.seq,
        "agent": commitment.agent.name,
        "agent_digest": commitment.agent_digest,
        "submitter": commitment.owner.username,
        "committed_at": commitment.committed_at.isoformat(),
        "state": "live" if commitment.withdrawal_id is None else "withdrawn",
        "model_version": commitment.model_version,
        "training_cutoff": commitment.training_cutoff,
        "clock": clock,
        "forward_sessions": newest.sessions,
        "forward_from": newest.start.isoformat(),
        "forward_to": newest.end.isoformat(),
        "forward_versions": len(forwards),
        "backtest_from": None if behind is None else behind.start.isoformat(),
        "backtest_to": None if behind is None else behind.end.isoformat(),
        "backtest_sessions": None if behind is None else behind.sessions,
        "backtest_delta_shifted": delta,
        "backtest_delta_shifted_interval": delta_interval,
        "cutoff_precedes_backtest": code,
        "cutoff_words": words,
        "run_shas": [r.run.body_sha256.removeprefix("sha256:") for r in forwards if r.run],
        "curve": forward_curve(pooled(windows), committed_on),
    }
    return found, facts


def _row(placing: Placing, facts: dict[str, Any], rank: int | None) -> dict[str, Any]:
    s = placing.best.standing
    forward = _figure(s.forward)
    return {
        **{k: v for k, v in facts.items() if k != "curve"},
        "position": rank,
        "rank_low": None if placing.rank is None else placing.rank[0],
        "rank_high": None if placing.rank is None else placing.rank[1],
        "ranked": placing.ranked,
        "needs_trades": placing.needs,
        "commitments": placing.commitments,
        "ranked_confidence": placing.confidence,
        "forward_return": None if forward is None else forward["value"],
        "forward_interval_95": None if forward is None else forward["interval"],
        "forward_interval_family_wise": None
        if placing.interval is None
        else list(placing.interval),
        "forward_trades": s.forward.trades,
        "forward_priced_trades": s.forward.priced,
        "backtest_return": None if s.backtest is None else s.backtest.total_return,
        "backtest_interval_95": None
        if s.backtest is None or s.backtest.low is None
        else [s.backtest.low, s.backtest.high],
        "backtest_priced_trades": None if s.backtest is None else s.backtest.priced,
        "decay": s.decay,
        "decay_interval_95": None if s.decay_interval is None else list(s.decay_interval),
    }


def _fingerprint() -> str:
    """What the board is computed from, as a digest: it changes with every commitment,
    withdrawal, settled run, new score or price version."""
    parts = list(
        ForwardRun.objects.order_by("pk").values_list(
            "pk",
            "status",
            "run__platform_id",
            "run__platform__state",
            "run__platform__prices__last_day",
        )
    )
    # every commitment counts as an attempt of its family, with runs or without
    commitments = list(Commitment.objects.order_by("pk").values_list("pk", "withdrawal_id"))
    text = json.dumps([parts, commitments, settings.PITWEB_MIN_RANKED_TRADES], default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Board:
    benchmark: BenchmarkOf
    rows: list[dict[str, Any]]  # ranked families first, then those listed unranked
    curves: dict[str, list[dict[str, Any]]]  # "agent (#seq)": its forward curve
    waiting: list[dict[str, Any]]  # commitments with no settled, priced forward window yet
    synthetic: bool  # the line's release is synthesised (labelled SYNTHETIC on every page)
    prices: list[str]  # the reference prices' sources its figures were priced with


def _compute() -> list[Board]:
    groups: dict[BenchmarkOf, list[Commitment]] = {}
    for commitment in _commitments():
        groups.setdefault(BenchmarkOf.of(commitment), []).append(commitment)
    boards = []
    for bench, commitments in sorted(groups.items(), key=lambda kv: kv[0].name):
        clock = shown_clock(bench.clocks)
        entrants, facts, waiting = [], {}, []
        for commitment in commitments:
            found = None if clock is None else _entry(commitment, clock)
            family = (commitment.owner.username, commitment.agent.name)
            if found is None:
                # not on the board yet, still an attempt of its family
                entrants.append(Entrant(family, commitment.entry.seq, _empty()))
                waiting.append({"seq": commitment.entry.seq, "agent": commitment.agent.name,
                                "submitter": commitment.owner.username,
                                "state": "live" if commitment.withdrawal_id is None else "withdrawn"})  # fmt: skip
                continue
            entrants.append(Entrant(family, commitment.entry.seq, found[0]))
            facts[commitment.entry.seq] = found[1]
        placed = [
            p for p in forward_board(entrants, min_trades=settings.PITWEB_MIN_RANKED_TRADES)
            if p.best.seq in facts
        ]  # fmt: skip
        rows = []
        for number, placing in enumerate(placed, start=1):
            rows.append(_row(placing, facts[placing.best.seq], number if placing.ranked else None))
        curves = {
            f"{f['agent']} (#{seq})": f["curve"] for seq, f in sorted(facts.items()) if f["curve"]
        }
        synthetic = any(
            (c.release.manifest.get("source") or {}).get("kind") == "synthetic" for c in commitments
        )
        sources = sorted(
            {
                r.run.platform.prices.source
                for c in commitments
                for r in getattr(c, "forward_runs", [])
                if r.run is not None and r.run.platform is not None
            }
        )
        boards.append(Board(bench, rows, curves, waiting, synthetic, sources))
    return boards


def _empty() -> Standing:
    return Standing(Figure(None, None, None, 0, 0, 0), None, None, None, None)


def forward_boards() -> list[Board]:
    """Every forward benchmark's board, computed from the stored rows (cached by a digest
    of them)."""
    key = "forward-boards:" + _fingerprint()
    found = cache.get(key)
    if found is None:
        found = _compute()
        cache.set(key, found, CACHE_SECONDS)
    return list(found)


def board_of(key: str | None, boards: Iterable[Board]) -> Board | None:
    listed = list(boards)
    if key is None:
        return listed[0] if len(listed) == 1 else None
    return next((b for b in listed if b.benchmark.key == key), None)
