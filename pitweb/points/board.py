"""The points board's reads: every answer set the site holds as the engine's
``harness.points.standing.Result`` (its newest judgment beside it), and the board the
engine makes of them, as rows a page, an export and the API show alike.

Answer sets on a set still sealed are not on the board: nothing of theirs is judged
before the reveal, and the board counts them only as waiting."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform

from harness.points.metrics import CLASSES
from harness.points.standing import Board, Result, Row, points_board
from pitweb.points.models import AnswerSet, JudgedSet, PointSetState
from pitweb.points.selectors import class_intervals, not_ranked_because

SITE_WORKERS = "the site's workers"
IMPORTED = "imported from PITFALL"
TIMING_WORDS = {
    AnswerSet.Timing.BEFORE_REVEAL: "before reveal",
    AnswerSet.Timing.AFTER_REVEAL: "after reveal",
    AnswerSet.Timing.OPEN: "public set",
}


def _answer_sets() -> QuerySet[AnswerSet]:
    return (
        AnswerSet.objects.exclude(point_set__state=PointSetState.SEALED)
        .select_related("point_set", "submitter")
        .defer("body")
        .annotate(
            experiment=KeyTransform("experiment", "body"),
            usage=KeyTransform("summary", "body"),
        )
        .order_by("created_at", "pk")
    )


def _newest_judgments(answer_sets: list[AnswerSet]) -> dict[int, JudgedSet]:
    """Each answer set's newest judged set: the site's own where it has one (another
    judge's imported verdicts are shown, never what scores a result)."""
    newest: dict[int, JudgedSet] = {}
    found = (
        JudgedSet.objects.filter(answer_set__in=answer_sets)
        .select_related("answer_set", "answer_set__point_set")
        .defer("body", "changes", "answer_set__body")
        .order_by("created_at", "pk")
    )
    for judged in found:
        held = newest.get(judged.answer_set_id)
        if (
            held is None
            or held.origin != JudgedSet.Origin.SITE
            or (judged.origin == JudgedSet.Origin.SITE)
        ):
            newest[judged.answer_set_id] = judged
    return newest


def family_of(answer_set: AnswerSet) -> str:
    if answer_set.origin == AnswerSet.Origin.ANSWERED:
        return SITE_WORKERS
    if answer_set.origin == AnswerSet.Origin.IMPORTED:
        return IMPORTED
    return answer_set.submitter.username if answer_set.submitter else "a deleted account"


def results() -> tuple[list[Result], dict[str, AnswerSet]]:
    """Every answer set on a public or revealed set as a result, and the answer sets by
    the id each result names."""
    answer_sets = list(_answer_sets())
    judgments = _newest_judgments(answer_sets)
    found = []
    for a in answer_sets:
        judged = judgments.get(a.pk)
        found.append(
            Result(
                answer_set=str(a.pk),
                family=family_of(a),
                experiment=a.experiment or {},  # type: ignore[attr-defined]
                point_set=a.point_set.name,
                committed=f"{a.created_at.isoformat()}#{a.pk:012d}",
                before_reveal=a.timing == AnswerSet.Timing.BEFORE_REVEAL,
                summary=None if judged is None else judged.summary,
                rankable=judged is not None and judged.rankable,
                why_not_rankable="not judged yet"
                if judged is None
                else ("" if judged.rankable else not_ranked_because(judged)),
                judged_set="" if judged is None else str(judged.pk),
                usage=a.usage or {},  # type: ignore[attr-defined]
            )
        )
    return found, {str(a.pk): a for a in answer_sets}


def waiting() -> int:
    """Answer sets received for sets still sealed: judged at their reveal."""
    return AnswerSet.objects.filter(point_set__state=PointSetState.SEALED).count()


def _interval(row: Row) -> tuple[float | None, float | None]:
    found = row.interval
    return (found[0], found[1]) if found else (None, None)


def board_rows(board: Board) -> list[dict[str, Any]]:
    """One row per ranked configuration of a family, as the page and exports show it."""
    rows = []
    for r in board.rows:
        low, high = _interval(r)
        config = r.configuration
        rows.append(
            {
                "rank": r.rank,
                "family": r.family,
                "model": config["model"],
                "effort": config["effort"],
                "harness": config["harness"],
                "tools": ", ".join(str(t) for t in config["tools"]) or "none",
                "point_sets": len(r.point_sets),
                "point_set_names": r.point_sets,
                "judged_sets": [int(j) for j in r.judged_sets],
                "unscored": len(r.unscored),
                "unscored_because": "; ".join(dict.fromkeys(r.unscored_because)),
                "attempts": r.attempts,
                "pass": r.passed,
                "fail": r.failed,
                "judged": r.judged,
                "harness_error": r.harness_error,
                "accuracy": r.accuracy,
                "accuracy_low": low,
                "accuracy_high": high,
                **{c: r.class_counts.get(c, 0) for c in CLASSES},
                "class_intervals": class_intervals(r.class_counts),
                "tokens": r.tokens,
                "tool_calls": r.tool_calls,
            }
        )
    return rows


def apart_rows(board: Board, answer_sets: dict[str, AnswerSet]) -> list[dict[str, Any]]:
    """The results listed apart: never ranked with the formal ones, each saying why."""
    rows = []
    for item in board.apart:
        result = item.result
        answer_set = answer_sets[result.answer_set]
        summary = result.summary or {}
        judged = summary.get("judged") or (summary.get("pass", 0) or 0) + (
            summary.get("fail", 0) or 0
        )
        rows.append(
            {
                "family": result.family,
                "model": result.model,
                "point_set": result.point_set,
                "answer_set": answer_set.pk,
                "timing": answer_set.timing,
                "timing_words": TIMING_WORDS[AnswerSet.Timing(answer_set.timing)],
                "judged_set": int(result.judged_set) if result.judged_set else None,
                "accuracy": summary.get("accuracy") if result.summary else None,
                "judged": judged if result.summary else None,
                "because": item.because,
            }
        )
    return rows


def points_board_view() -> dict[str, Any]:
    """What the board page, its exports and the API show."""
    found, answer_sets = results()
    board = points_board(found)
    return {
        "rows": board_rows(board),
        "apart": apart_rows(board, answer_sets),
        "waiting": waiting(),
    }
