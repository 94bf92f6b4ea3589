"""The mask probe finds a full date however people write it, and nothing else."""

from __future__ import annotations

from datetime import date

import pytest

from harness.rundata.probe_scoring import find_dates, score_answer

KEY = {"dates": ["2023-03-01"], "issuer": "Summit Cobalt Industries Inc", "ticker": "SMCO"}

# (what the agent wrote, the rendering the item records); every one names 2023-03-01
WRITTEN = [
    ("2023-03-01", "iso"),
    ("2023-3-1", "iso_unpadded"),
    ("2023-03-01T14:30:00Z", "iso"),
    ("2023/03/01", "year_month_day (/)"),
    ("2023.03.01", "year_month_day (.)"),
    ("20230301", "compact"),
    ("03/01/2023", "numeric_month_first (/)"),
    ("3/1/2023", "numeric_month_first (/)"),
    ("01/03/2023", "numeric_day_first (/)"),
    ("1/3/2023", "numeric_day_first (/)"),
    ("3/1/23", "numeric_month_first_two_digit_year (/)"),
    ("filed on 1/3/23.", "numeric_day_first_two_digit_year (/)"),
    ("01.03.2023", "numeric_day_first (.)"),
    ("1.3.23", "numeric_day_first_two_digit_year (.)"),
    ("03-01-2023", "numeric_month_first (-)"),
    ("March 1, 2023", "month_day_year_name"),
    ("March 1 2023", "month_day_year_name"),
    ("March 01, 2023", "month_day_year_name"),
    ("MARCH 1, 2023", "month_day_year_name"),
    ("Wednesday, March 1, 2023", "month_day_year_name"),
    ("March 1st, 2023", "month_day_year_name_ordinal"),
    ("March the 1st, 2023", "month_day_year_name_ordinal"),
    ("Mar 1, 2023", "month_day_year_abbrev"),
    ("Mar. 1, 2023", "month_day_year_abbrev"),
    ("mar 1 2023", "month_day_year_abbrev"),
    ("March 1, '23", "month_day_year_name_two_digit_year"),
    ("1 March 2023", "day_month_year_name"),
    ("1st March 2023", "day_month_year_name_ordinal"),
    ("1st of March 2023", "day_month_year_name_ordinal"),
    ("the 1st of March, 2023", "day_month_year_name_ordinal"),
    ("01 Mar 2023", "day_month_year_abbrev"),
    ("1-Mar-2023", "day_month_year_abbrev"),
    ("01-Mar-23", "day_month_year_abbrev_two_digit_year"),
    ("2023 March 1", "year_month_day_name"),
    ("2023-Mar-01", "year_month_day_abbrev"),
    ("It was the 8-K of Summit Cobalt, filed 2023-03-01 before the open.", "iso"),
]

# none of these names a full date that is 2023-03-01
NOT_WRITTEN = [
    "yesterday",
    "last Wednesday, at the open",
    "March 1st",
    "1 March",
    "3/1",
    "March 2023",
    "Q1 2023",
    "On March 1, 23 filings were made",
    "stub: at 2033-03-01T14:30:00Z buying every filing made knowable since the last bell (4)",
    "2023-03-02",
    "2023-02-30",
    "accession 0000320193-23-000301",
    "202303011",
    "12023-03-01",
    "March 11, 2023",
]


@pytest.mark.parametrize(("text", "rendering"), WRITTEN)
def test_a_full_date_is_found_however_it_is_written(text: str, rendering: str) -> None:
    score = score_answer(text, KEY)
    assert score["date_recovered"] is True
    assert rendering in score["renderings"], score["renderings"]
    assert score["matched"] and all(m in text for m in score["matched"])
    assert score["year_recovered"] is False  # a full date is not a bare year


@pytest.mark.parametrize("text", NOT_WRITTEN)
def test_no_date_is_read_into_what_is_not_one(text: str) -> None:
    score = score_answer(text, KEY)
    assert score["date_recovered"] is False, score
    assert score["renderings"] == [] and score["matched"] == []


def test_a_bare_year_stays_weaker_evidence() -> None:
    assert len(WRITTEN) >= 30
    score = score_answer("Sometime in 2023, I think.", KEY)
    assert (score["date_recovered"], score["year_recovered"]) == (False, True)
    assert score_answer("Q1 2023", KEY)["year_recovered"] is True
    assert score_answer("stub: at 2033-03-01T14:30:00Z", KEY)["year_recovered"] is False


def test_both_readings_of_a_day_month_form_are_kept() -> None:
    found = {(rendering, day) for _, rendering, day in find_dates("4/3/2023")}
    assert ("numeric_month_first (/)", date(2023, 4, 3)) in found
    assert ("numeric_day_first (/)", date(2023, 3, 4)) in found
    # a reading that is no date (month 13) is dropped, the other kept
    assert {day for _, _, day in find_dates("13/3/2023")} == {date(2023, 3, 13)}


def test_an_acceptance_day_in_the_key_counts_too() -> None:
    key = {**KEY, "dates": ["2023-03-01", "2023-02-28"]}
    assert score_answer("accepted February 28th, 2023 after the close", key)["date_recovered"]


def test_the_same_answer_scores_the_same_every_time() -> None:
    text = " ".join(t for t, _ in WRITTEN)
    assert score_answer(text, KEY) == score_answer(text, KEY)
    assert score_answer(text, KEY)["matched"] == sorted(set(score_answer(text, KEY)["matched"]))
