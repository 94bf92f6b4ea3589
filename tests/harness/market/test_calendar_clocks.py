"""NYSE sessions and the three clocks, checked against New York wall time.

Every expected instant is built here from ``zoneinfo`` America/New_York (the NYSE
opens at 09:30 local, closes at 16:00, 13:00 on early-close days); the calendar
under test only says which days are sessions.
"""

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.market.calendar import SessionTable, sessions_for
from harness.market.clocks import known_at

NY = ZoneInfo("America/New_York")
OPEN = time(9, 30)


def _table() -> SessionTable:
    # lru_cached by the module under test: loaded once per process.
    return sessions_for(date(2022, 1, 1), date(2024, 12, 31))


def _local(day: date, at: time) -> datetime:
    return datetime.combine(day, at, NY)


def _utc(year: int, month: int, day: int, hour: int, minute: int = 0) -> float:
    return datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()


def _index(day: date) -> int:
    table = _table()
    assert table.is_session(day), f"{day} should be a session"
    return table.sessions.index(day)


def _row(
    *,
    partition_date: str = "2023-03-01",
    published_at: str | None = None,
    acceptance_at: str | None = None,
) -> dict[str, Any]:
    return {
        "row_key": "r-test",
        "partition_date": partition_date,
        "published_at": published_at or partition_date,
        "acceptance_at": acceptance_at,
    }


def _enters(row: dict[str, Any], clock: str) -> date:
    table = _table()
    instant, _source = known_at(row, clock)
    return table.sessions[table.first_open_after(instant)]


def _accepted(day: date, at: time) -> dict[str, Any]:
    """A row accepted at ``at`` New York time on ``day`` (offset resolved by zoneinfo)."""
    return _row(partition_date=day.isoformat(), acceptance_at=_local(day, at).isoformat())


# -- opens and closes across DST ----------------------------------------------------


@pytest.mark.parametrize(
    ("day", "utc_hour", "utc_minute"),
    [
        (date(2023, 3, 10), 14, 30),  # Friday, EST (UTC-5)
        (date(2023, 3, 13), 13, 30),  # Monday after the 2023-03-12 change, EDT (UTC-4)
        (date(2022, 11, 4), 13, 30),  # Friday, EDT
        (date(2022, 11, 7), 14, 30),  # Monday after the 2022-11-06 change, EST
    ],
)
def test_open_is_0930_new_york_on_both_sides_of_dst_change(
    day: date, utc_hour: int, utc_minute: int
) -> None:
    table = _table()
    opens = table.opens[_index(day)]
    assert opens == _local(day, OPEN).timestamp()
    assert opens == _utc(day.year, day.month, day.day, utc_hour, utc_minute)


def test_every_session_2022_to_2024_opens_at_0930_new_york() -> None:
    table = _table()
    wrong = [
        (day, table.open_at(i))
        for i, day in enumerate(table.sessions)
        if date(2022, 1, 1) <= day <= date(2024, 12, 31)
        and table.opens[i] != _local(day, OPEN).timestamp()
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("local", "expected"),
    [
        (time(8, 0, 0), date(2023, 3, 13)),
        (time(9, 29, 59), date(2023, 3, 13)),
        (time(9, 30, 0), date(2023, 3, 14)),  # exactly at the bell: missed that auction
        (time(17, 45, 0), date(2023, 3, 14)),
    ],
)
def test_pit_entry_on_first_edt_session_follows_the_0930_local_bell(
    local: time, expected: date
) -> None:
    assert _enters(_accepted(date(2023, 3, 13), local), "pit") == expected


# -- early closes ---------------------------------------------------------------------


@pytest.mark.parametrize("day", [date(2022, 11, 25), date(2023, 7, 3)])
def test_early_close_day_is_a_session_closing_at_1300_new_york(day: date) -> None:
    table = _table()
    i = _index(day)
    assert table.closes[i] == _local(day, time(13, 0)).timestamp()


def test_early_close_on_day_after_thanksgiving_is_1800_utc() -> None:
    table = _table()
    assert table.closes[_index(date(2022, 11, 25))] == _utc(2022, 11, 25, 18, 0)


@pytest.mark.parametrize("day", [date(2022, 11, 23), date(2023, 7, 5)])
def test_regular_session_next_to_early_close_closes_at_1600_new_york(day: date) -> None:
    table = _table()
    assert table.closes[_index(day)] == _local(day, time(16, 0)).timestamp()


@pytest.mark.parametrize("day", [date(2022, 11, 25), date(2023, 7, 3)])
def test_early_close_day_still_opens_at_0930_new_york(day: date) -> None:
    table = _table()
    assert table.opens[_index(day)] == _local(day, OPEN).timestamp()


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2022, 11, 25), date(2022, 11, 28)),  # Friday -> Monday
        (date(2023, 7, 3), date(2023, 7, 5)),  # Monday -> Wednesday (4 July closed)
    ],
)
def test_midday_acceptance_on_early_close_day_enters_next_session(
    day: date, expected: date
) -> None:
    assert _enters(_accepted(day, time(12, 0)), "pit") == expected


# -- holidays: NYSE versus EDGAR ------------------------------------------------------


def test_good_friday_is_not_an_nyse_session() -> None:
    assert not _table().is_session(date(2023, 4, 7))


def test_dump_row_published_before_good_friday_enters_following_monday() -> None:
    row = _row(partition_date="2023-04-06", published_at="2023-04-06")
    assert _enters(row, "dump") == date(2023, 4, 10)


@pytest.mark.parametrize(
    "day",
    [date(2022, 11, 11), date(2022, 10, 10)],  # Veterans Day, Columbus Day: EDGAR closed
)
def test_federal_holiday_with_nyse_open_is_a_session(day: date) -> None:
    assert _table().is_session(day)


def test_thanksgiving_is_not_an_nyse_session() -> None:
    assert not _table().is_session(date(2022, 11, 24))


def test_dump_row_published_day_before_veterans_day_enters_veterans_day() -> None:
    row = _row(partition_date="2022-11-10", published_at="2022-11-10")
    assert _enters(row, "dump") == date(2022, 11, 11)


# -- weekends --------------------------------------------------------------------------


def test_leaky_row_partitioned_on_saturday_enters_monday() -> None:
    assert _enters(_row(partition_date="2023-03-04"), "leaky") == date(2023, 3, 6)


def test_dump_row_published_on_friday_enters_monday() -> None:
    row = _row(partition_date="2023-03-03", published_at="2023-03-03")
    assert _enters(row, "dump") == date(2023, 3, 6)


def test_pit_acceptance_on_sunday_enters_monday() -> None:
    assert _enters(_accepted(date(2023, 3, 5), time(10, 0)), "pit") == date(2023, 3, 6)


# -- the clocks themselves ---------------------------------------------------------------


def test_leaky_known_at_is_midnight_utc_of_partition_date() -> None:
    instant, source = known_at(_row(partition_date="2023-03-13"), "leaky")
    assert (instant, source) == (_utc(2023, 3, 13, 0), "partition_date")


def test_dump_known_at_is_last_second_utc_of_publication_day() -> None:
    instant, source = known_at(_row(published_at="2023-03-13"), "dump")
    expected = datetime(2023, 3, 13, 23, 59, 59, tzinfo=UTC).timestamp()
    assert (instant, source) == (expected, "published_at")


def test_pit_known_at_is_the_acceptance_instant() -> None:
    stamp = _local(date(2023, 3, 13), time(8, 0))
    instant, source = known_at(_row(acceptance_at=stamp.isoformat()), "pit")
    assert (instant, source) == (stamp.timestamp(), "acceptance_at")
    assert instant == _utc(2023, 3, 13, 12, 0)  # 08:00 EDT


@given(
    st.sampled_from([d for d in _table().sessions if date(2022, 1, 1) <= d <= date(2024, 12, 31)])
)
def test_leaky_row_partitioned_on_a_session_enters_that_session(day: date) -> None:
    assert _enters(_row(partition_date=day.isoformat()), "leaky") == day


def test_pit_without_acceptance_falls_back_to_dump_instant() -> None:
    row = _row(partition_date="2023-03-03", published_at="2023-03-03", acceptance_at=None)
    assert known_at(row, "pit") == known_at(row, "dump")


def test_pit_fallback_reports_published_at_as_its_source() -> None:
    row = _row(published_at="2023-03-03", acceptance_at=None)
    assert known_at(row, "pit")[1] == "published_at"


def test_pit_acceptance_without_utc_offset_is_refused() -> None:
    row = _row(acceptance_at="2023-03-13T08:00:00")
    with pytest.raises(ValueError, match="no UTC offset"):
        known_at(row, "pit")


def test_unknown_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown clock"):
        known_at(_row(), "sundial")


# -- first_open_after as an invariant ------------------------------------------------------

INSTANTS = st.datetimes(
    min_value=datetime(2022, 1, 1),
    max_value=datetime(2024, 12, 31, 23, 59, 59),
    timezones=st.just(UTC),
).map(lambda moment: moment.timestamp())


@given(INSTANTS)
def test_first_open_after_is_strictly_after_and_previous_open_is_not(instant: float) -> None:
    table = _table()
    i = table.first_open_after(instant)
    assert table.opens[i] > instant
    assert table.opens[i - 1] <= instant


@given(INSTANTS)
def test_first_open_after_skips_no_session(instant: float) -> None:
    """Walking New York days forward from the instant, the first session day whose
    09:30 local bell lies strictly after it is the one returned."""
    table = _table()
    day = datetime.fromtimestamp(instant, NY).date()
    while not (table.is_session(day) and _local(day, OPEN).timestamp() > instant):
        day += timedelta(days=1)
    assert table.sessions[table.first_open_after(instant)] == day


@given(
    st.sampled_from([d for d in _table().sessions if date(2022, 1, 3) <= d <= date(2024, 12, 30)]),
    st.sampled_from([-1, 0, 1]),
)
def test_instant_at_a_bell_enters_the_next_session(day: date, seconds: int) -> None:
    table = _table()
    i = table.sessions.index(day)
    instant = _local(day, OPEN).timestamp() + seconds
    expected = day if seconds < 0 else table.sessions[i + 1]
    assert table.sessions[table.first_open_after(instant)] == expected
