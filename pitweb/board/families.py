"""A family's page: one submitter's uploads of one agent on one benchmark (release,
forms, window, hold, clocks: attempts are counted per benchmark), as the requester may see them, and its best's family-wise interval."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User

from harness.receipt.attempts import family_interval, sidak_confidence
from harness.receipt.rescore import Tails
from pitweb.board.benchmarks import benchmark_out
from pitweb.board.query import APART_LIMIT, ranked_runs
from pitweb.board.rows import leaderboard_row
from pitweb.runs.models import Family
from pitweb.runs.selectors import visible_runs


def family_attempts(user: User | AnonymousUser, family_id: int | None) -> dict[str, Any] | None:
    """A family's attempts as ``user`` may see them, each as a board row, the ranked best
    (if any) with its family-wise interval for every attempt counted; None when the
    requester may see none of its runs (a family of only hidden runs answers like one
    that does not exist). Counted attempts include what the requester cannot see."""
    if family_id is None:
        return None
    family = Family.objects.select_related("submitter", "benchmark").filter(pk=family_id).first()
    if family is None:
        return None
    runs = (
        visible_runs(user)
        .filter(family=family)
        .select_related("platform", "platform__prices", "benchmark")
        .defer("body", "config", "release__manifest", "platform__figures")
    )
    shown = list(runs.order_by("submitted_at", "pk")[:APART_LIMIT])
    if not shown:
        return None
    best = ranked_runs(runs.filter(withdrawn_at=None)).first()
    rows = [leaderboard_row(r) for r in shown]
    out: dict[str, Any] = {
        "family": family.pk,
        "submitter": family.submitter.username,
        "agent": family.agent,
        "release_digest": family.release_digest,
        "window": f"{family.window_start}..{family.window_end}",
        "benchmark": benchmark_out(family.benchmark) if family.benchmark else None,
        "attempts": family.attempts,
        "attempts_shown": runs.count(),
        # one of its runs the requester may see was executed by the site with a package
        # a forward run proved forward
        "forward_tested": runs.filter(forward_tested=True).exists(),
        "confidence": sidak_confidence(max(1, family.attempts)),
        "best": None,
        "runs": rows,
    }
    if best is not None:
        score = best.platform
        assert score is not None and score.shifted_pit_tails is not None  # ranked
        low, high = family_interval(Tails.from_json(score.shifted_pit_tails), family.attempts)
        out["best"] = {
            "run_id": best.run_id,
            "submission": best.pk,
            "body_sha256": best.body_sha256,
            "platform_shifted_pit": score.shifted_pit,
            "interval_95_alone": [score.shifted_pit_low, score.shifted_pit_high],
            "interval_family_wise": [low, high],
        }
        for row in rows:
            row["family_best"] = row["submission"] == best.pk
    return out
