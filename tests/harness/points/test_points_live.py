"""Live-shadow points: sealed before their as-of date, answered before it passes, resolved
after their resolution date, every date read on the exchange's clock."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

import pytest

from harness.points.live import (
    LiveError,
    LivePoint,
    answers_close,
    check_answerable,
    check_resolvable,
    check_sealable,
    market_day,
    plan,
    plan_commitment,
    question_points,
    resolved,
)
from harness.points.seal import question_digest

POINT = LivePoint(
    id="spx-up-march",
    question="As of 2024-03-01, will the index close higher on 2024-03-28 than on 2024-03-01?",
    as_of=date(2024, 3, 1),
    resolves_on=date(2024, 3, 28),
    resolution="The index's official closes on both dates, from the exchange.",
)


def test_the_market_day_is_new_york_s() -> None:
    # 02:00 UTC on the 2nd is still the 1st on the exchange
    assert market_day(datetime(2024, 3, 2, 2, 0, tzinfo=UTC)) == date(2024, 3, 1)
    assert market_day(datetime(2024, 3, 2, 6, 0, tzinfo=UTC)) == date(2024, 3, 2)
    with pytest.raises(LiveError):
        market_day(datetime(2024, 3, 2, 6, 0))


def test_a_cohort_is_sealed_only_before_its_as_of_dates_pass() -> None:
    check_sealable([POINT], date(2024, 3, 1))  # on the as-of date itself: not yet passed
    with pytest.raises(LiveError, match="has passed"):
        check_sealable([POINT], date(2024, 3, 2))
    with pytest.raises(LiveError, match="before its as-of"):
        check_sealable([dataclasses.replace(POINT, resolves_on=date(2024, 2, 1))], date(2024, 1, 1))
    with pytest.raises(LiveError, match="repeats"):
        check_sealable([POINT, POINT], date(2024, 1, 1))
    with pytest.raises(LiveError, match="kebab-case"):
        check_sealable([dataclasses.replace(POINT, id="Not An Id")], date(2024, 1, 1))
    with pytest.raises(LiveError):
        check_sealable([dataclasses.replace(POINT, question="{{question}}")], date(2024, 1, 1))


def test_answers_close_after_the_earliest_as_of_date() -> None:
    later = dataclasses.replace(POINT, id="later", as_of=date(2024, 3, 8))
    assert answers_close([later, POINT]) == date(2024, 3, 1)
    check_answerable([later, POINT], date(2024, 3, 1))
    with pytest.raises(LiveError, match="answers closed after 2024-03-01"):
        check_answerable([later, POINT], date(2024, 3, 2))


def test_a_point_resolves_after_its_date_into_a_file_the_engine_reads() -> None:
    with pytest.raises(LiveError, match="after that date has passed"):
        check_resolvable(POINT, date(2024, 3, 28))
    check_resolvable(POINT, date(2024, 3, 29))
    point = resolved(POINT, "Yes: 5,254.35 on 2024-03-28 against 5,137.08.", "Exchange closes.")
    assert point.question == POINT.question and point.question_sha256 == POINT.question_sha256
    assert point.ground_truth.startswith("Yes") and POINT.resolution in point.provenance
    # the Questions it was answered by still bind it once resolved
    assert question_digest([point]) == question_digest(question_points([POINT]))
    with pytest.raises(LiveError, match="needs its Ground Truth"):
        resolved(POINT, "  ", "Exchange closes.")


def test_the_plan_binds_every_date_and_rule() -> None:
    committed = plan_commitment([POINT])
    assert plan([POINT])[0]["as_of"] == "2024-03-01"
    for change in (
        {"as_of": date(2024, 2, 29)},
        {"resolves_on": date(2024, 3, 29)},
        {"resolution": "Any source."},
        {"question": POINT.question + " "},
    ):
        assert plan_commitment([dataclasses.replace(POINT, **change)]) != committed
