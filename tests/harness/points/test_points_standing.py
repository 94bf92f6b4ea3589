"""The points board: only formal results ranked, a family's first answer set on a set
counts and nothing later replaces it, informal results listed apart with their reason."""

from __future__ import annotations

from typing import Any

import pytest

from harness.points.metrics import CLASSES, summary, wilson
from harness.points.standing import Result, configuration_key, points_board


def _summary(passed: int, failed: int, errors: int = 0) -> dict[str, Any]:
    classes = ["completely_correct"] * passed + ["numeric_factual_error"] * failed
    return summary([*classes, *[None] * errors])


def result(
    n: int,
    *,
    family: str = "ada",
    model: str = "m-1",
    point_set: str = "cohort-1",
    before_reveal: bool = True,
    scored: tuple[int, int] | None = (6, 4),
    rankable: bool = True,
    effort: str | None = "low",
) -> Result:
    return Result(
        answer_set=str(n),
        family=family,
        experiment={"agent": {"model": model, "effort": effort},
                    "harness": {"name": "pit-harness points answer"}, "tools": []},
        point_set=point_set,
        committed=f"2026-12-{n:02d}",
        before_reveal=before_reveal,
        summary=None if scored is None else _summary(*scored),
        rankable=rankable and scored is not None,
        why_not_rankable="" if rankable else "the demo judge: a string rule, not a model",
        judged_set=f"j{n}",
        usage={"tokens": {"input": 100, "output": 10}, "tool_calls": 2},
    )  # fmt: skip


def test_a_later_better_attempt_never_replaces_the_first() -> None:
    board = points_board(
        [result(2, scored=(10, 0)), result(1, scored=(3, 7)), result(3, scored=(10, 0))]
    )
    [row] = board.rows
    assert row.answer_sets == ["1"] and (row.passed, row.failed) == (3, 7)
    assert row.attempts == 2
    assert [a.result.answer_set for a in board.apart] == ["2", "3"]
    assert all("later attempt" in a.because for a in board.apart)


def test_only_formal_results_are_ranked_and_the_rest_say_why() -> None:
    board = points_board(
        [
            result(1, family="ada"),
            result(2, family="bob", before_reveal=False, scored=(10, 0)),  # after the reveal
            result(3, family="cy", rankable=False, scored=(10, 0)),  # the demo judge
            result(4, family="dee", scored=None),  # not judged yet
        ]
    )
    assert [r.family for r in board.rows if r.rank] == ["ada"]
    reasons = {a.result.family: a.because for a in board.apart}
    assert "labels were public" in reasons["bob"]
    assert "demo judge" in reasons["cy"] and "not judged yet" in reasons["dee"]
    # a first answer set without a usable judgment holds its place: its family's row is
    # there, unscored, and not ranked on nothing
    unscored = {r.family: r for r in board.rows}
    assert unscored["dee"].unscored == ["4"] and unscored["dee"].rank is None
    assert unscored["dee"].judged == 0 and unscored["dee"].accuracy is None


def test_a_first_attempt_unscored_is_not_replaced_by_a_scored_later_one() -> None:
    board = points_board([result(1, scored=None), result(2, scored=(10, 0))])
    [row] = board.rows
    assert row.unscored == ["1"] and row.judged == 0 and row.attempts == 1


def test_rows_pool_a_configuration_over_sets_and_rank_by_interval() -> None:
    board = points_board(
        [
            result(1, family="ada", point_set="cohort-1", scored=(9, 1)),
            result(2, family="ada", point_set="cohort-2", scored=(8, 2)),
            result(3, family="bob", point_set="cohort-1", scored=(2, 8)),
            result(4, family="cy", point_set="cohort-1", scored=(5, 5), model="m-2"),
        ]
    )
    by_family = {r.family: r for r in board.rows}
    ada = by_family["ada"]
    assert ada.point_sets == ["cohort-1", "cohort-2"] and (ada.passed, ada.judged) == (17, 20)
    assert ada.interval == pytest.approx(wilson(17, 20))
    assert ada.tokens == {"input": 200, "output": 20} and ada.tool_calls == 4
    assert ada.class_counts["numeric_factual_error"] == 3
    shares = ada.class_intervals()
    assert shares["completely_correct"] == pytest.approx((17 / 20, *wilson(17, 20)))
    assert set(shares) == set(CLASSES)
    assert [r.family for r in board.rows] == ["ada", "cy", "bob"]  # by the interval's low end
    assert (ada.rank, by_family["bob"].rank) == ("1-2", "2-3")  # overlaps: ranges


def test_one_family_two_configurations_each_its_own_row_where_each_came_first() -> None:
    low, high = result(1, effort="low"), result(2, effort="high", point_set="cohort-2")
    board = points_board([low, high])
    assert len(board.rows) == 2
    assert configuration_key(low.experiment) != configuration_key(high.experiment)
    # the same family and model on the same set: the second configuration is an attempt
    board = points_board([low, result(3, effort="high")])
    assert len(board.rows) == 1 and board.rows[0].attempts == 1
