"""The four window tools, bound to one session's opening bell.

The fixture window is the week of 2023-03-06 (before the 2023-03-12 DST switch, so
the NYSE opening auction at 09:30 America/New_York is 14:30Z). The session under
test is Wednesday 2023-03-08; the previous session is Tuesday 2023-03-07.

Rows (pit clock, known_at in UTC):

    A  8-K   published 2023-03-06, no stamp   -> 2023-03-06T23:59:59Z  old (fallback)
    B  4     accepted 2023-03-07 08:00 EST    -> 2023-03-07T13:00:00Z  old
    C  8-K   accepted 2023-03-07 16:05 EST    -> 2023-03-07T21:05:00Z  new
    D  10-K  published 2023-03-07, no stamp   -> 2023-03-07T23:59:59Z  new (fallback)
    E  8-K   accepted 2023-03-08 07:15 EST    -> 2023-03-08T12:15:00Z  new
    F  8-K   accepted 2023-03-08 09:30 EST    -> exactly the bell: not knowable
    G  8-K   accepted 2023-03-08 11:00 EST    -> after the bell
    H  10-Q  accepted 2023-03-09 06:45 EST    -> a day later
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.market.calendar import sessions_for
from harness.market.clocks import known_at as clock_known_at
from harness.release.arms import redacted_row, shifted_row
from harness.release.store import ROW_FIELDS
from harness.tools.toolbox import ClockIndex, Toolbox

NEW_YORK = ZoneInfo("America/New_York")
TABLE = sessions_for(date(2023, 3, 1), date(2023, 3, 10))
SESSION = date(2023, 3, 8)
PREVIOUS = date(2023, 3, 7)

Call = tuple[str, dict[str, Any], dict[str, Any]]


def key(n: int) -> str:
    return f"r-{n:016x}"


def make_row(
    n: int,
    *,
    form: str,
    issuer: str,
    ticker: str | None,
    day: str,
    accepted: str | None = None,
) -> dict[str, Any]:
    cik = f"{1_100_000 + n:010d}"
    accession = f"{cik}-{day[2:4]}-{n:06d}"
    row = {
        "row_key": key(n),
        "accession": accession,
        "form": form,
        "cik": cik,
        "issuer": issuer,
        "ticker": ticker,
        "title": f"{form} - {issuer} ({cik}) (Filer) {day}",
        "partition_date": day,
        "published_at": day,
        "acceptance_at": accepted,
        "filename": f"edgar/data/{int(cik)}/{accession}.txt",
    }
    assert set(row) == set(ROW_FIELDS)
    return row


A, B, C, D, E, F, G, H = (key(n) for n in range(1, 9))
ALL_KEYS = [A, B, C, D, E, F, G, H]
KNOWABLE = [A, B, C, D, E]  # in known_at order
NEW = [C, D, E]


def base_rows() -> list[dict[str, Any]]:
    return [
        make_row(1, form="8-K", issuer="Birch Energy Corp.", ticker="BRCH", day="2023-03-06"),
        make_row(
            2,
            form="4",
            issuer="Cobalt Systems Inc.",
            ticker="CBLT",
            day="2023-03-07",
            accepted="2023-03-07T08:00:00-05:00",
        ),
        make_row(
            3,
            form="8-K",
            issuer="Apex Therapeutics Inc.",
            ticker="APXT",
            day="2023-03-07",
            accepted="2023-03-07T16:05:00-05:00",
        ),
        make_row(4, form="10-K", issuer="Delta Realty Co.", ticker=None, day="2023-03-07"),
        make_row(
            5,
            form="8-K",
            issuer="Ember Foods plc",
            ticker="EMBR",
            day="2023-03-08",
            accepted="2023-03-08T07:15:00-05:00",
        ),
        make_row(
            6,
            form="8-K",
            issuer="Falcon Minerals Ltd.",
            ticker="FALC",
            day="2023-03-08",
            accepted="2023-03-08T09:30:00-05:00",
        ),
        make_row(
            7,
            form="8-K",
            issuer="Apex Holdings Corp.",
            ticker="APXH",
            day="2023-03-08",
            accepted="2023-03-08T11:00:00-05:00",
        ),
        make_row(
            8,
            form="10-Q",
            issuer="Harbor Networks Group, Inc.",
            ticker="HRBN",
            day="2023-03-09",
            accepted="2023-03-09T06:45:00-05:00",
        ),
    ]


def session_index(day: date) -> int:
    s = TABLE.index_on_or_after(day)
    assert TABLE.sessions[s] == day
    return s


def bell_of(day: date) -> float:
    return TABLE.opens[session_index(day)]


def make_toolbox(
    rows: list[dict[str, Any]],
    *,
    arm: str = "main",
    clock: str = "pit",
    day: date = SESSION,
    index_rows: list[dict[str, Any]] | None = None,
    index: ClockIndex | None = None,
    first_session: bool = False,
) -> tuple[Toolbox, list[Call]]:
    calls: list[Call] = []
    if index is None:
        index = ClockIndex.build(index_rows if index_rows is not None else rows, clock)
    s = session_index(day)

    def record(tool: str, args: dict[str, Any], result: dict[str, Any], *_extra: Any) -> None:
        calls.append((tool, args, result))

    tools = Toolbox(
        arm=arm,
        index=index,
        rows=rows,
        positions={r["row_key"]: i for i, r in enumerate(rows)},
        bell=TABLE.opens[s],
        previous_bell=None if first_session else TABLE.opens[s - 1],
        session_date=day.isoformat(),
        record=record,
    )
    return tools, calls


def arm_rows(arm: str) -> list[dict[str, Any]]:
    rows = base_rows()
    if arm == "shifted":
        return [shifted_row(r) for r in rows]
    if arm == "redacted":
        return [redacted_row(r) for r in rows]
    return rows


def all_four(tools: Toolbox) -> list[dict[str, Any]]:
    return [
        tools.pit_list(since="window_start"),
        tools.pit_search("8-K"),
        tools.pit_read(C),
        tools.pit_coverage(),
    ]


def keys_of(result: dict[str, Any]) -> list[str]:
    return [r["row_key"] for r in result["rows"]]


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def plus_ten_years(moment: datetime) -> datetime:
    return moment.replace(year=moment.year + 10)


# -- the calendar facts the fixture relies on ----------------------------------


def test_fixture_bells_are_the_new_york_opening_auction() -> None:
    for day in (PREVIOUS, SESSION):
        expected = datetime(day.year, day.month, day.day, 9, 30, tzinfo=NEW_YORK)
        assert bell_of(day) == expected.timestamp()
    assert session_index(SESSION) - session_index(PREVIOUS) == 1


# -- the envelope ----------------------------------------------------------------


@pytest.mark.parametrize("arm", ["main", "redacted"])
def test_envelope_on_real_arms_carries_the_real_session_and_bell(arm: str) -> None:
    tools, _ = make_toolbox(arm_rows(arm), arm=arm, index_rows=base_rows())
    for tool, result in zip(
        ("pit_list", "pit_search", "pit_read", "pit_coverage"), all_four(tools), strict=True
    ):
        assert result["tool"] == tool
        assert result["arm"] == arm
        assert result["clock"] == "pit"
        assert result["session_date"] == "2023-03-08"
        assert result["known_at"] == "2023-03-08T14:30:00Z"


def test_envelope_on_shifted_arm_is_ten_years_forward() -> None:
    tools, _ = make_toolbox(arm_rows("shifted"), arm="shifted", index_rows=base_rows())
    real_bell = datetime(2023, 3, 8, 14, 30, tzinfo=UTC)
    for tool, result in zip(
        ("pit_list", "pit_search", "pit_read", "pit_coverage"), all_four(tools), strict=True
    ):
        assert result["tool"] == tool
        assert result["arm"] == "shifted"
        assert result["clock"] == "pit"
        assert result["session_date"] == "2033-03-08"
        assert parse(result["known_at"]) == plus_ten_years(real_bell)
        assert "2023" not in json.dumps(result)


def test_row_known_at_on_main_is_the_real_instant() -> None:
    tools, _ = make_toolbox(base_rows())
    rows = tools.pit_list(since="window_start")["rows"]
    assert {r["row_key"]: r["known_at"] for r in rows} == {
        A: "2023-03-06T23:59:59Z",
        B: "2023-03-07T13:00:00Z",
        C: "2023-03-07T21:05:00Z",
        D: "2023-03-07T23:59:59Z",
        E: "2023-03-08T12:15:00Z",
    }


def test_row_known_at_on_shifted_arm_is_ten_years_forward() -> None:
    main, _ = make_toolbox(base_rows())
    shifted, _ = make_toolbox(arm_rows("shifted"), arm="shifted", index_rows=base_rows())
    real = {r["row_key"]: r for r in main.pit_list(since="window_start")["rows"]}
    shown = shifted.pit_list(since="window_start")["rows"]
    assert [r["row_key"] for r in shown] == KNOWABLE
    for row in shown:
        assert parse(row["known_at"]) == plus_ten_years(parse(real[row["row_key"]]["known_at"]))
    read = shifted.pit_read(C)["row"]
    assert parse(read["known_at"]) == datetime(2033, 3, 7, 21, 5, tzinfo=UTC)


# -- pit_read ----------------------------------------------------------------------


def test_pit_read_of_a_row_not_yet_knowable_returns_only_the_key() -> None:
    rows = base_rows()
    tools, _ = make_toolbox(rows)
    result = tools.pit_read(H)
    assert result == {
        "tool": "pit_read",
        "arm": "main",
        "clock": "pit",
        "session_date": "2023-03-08",
        "known_at": "2023-03-08T14:30:00Z",
        "status": "not_yet_knowable",
        "row_key": H,
    }
    text = json.dumps(result)
    hidden = rows[ALL_KEYS.index(H)]
    for field in ROW_FIELDS:
        value = hidden[field]
        if field != "row_key" and value:
            assert value not in text, field
    assert "2023-03-09" not in text
    assert "Harbor" not in text


def test_pit_read_of_a_key_outside_the_window() -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_read(key(999))
    assert result["status"] == "not_in_window"
    assert result["row_key"] == key(999)
    assert "row" not in result


def test_pit_read_of_a_knowable_row_returns_it() -> None:
    rows = base_rows()
    tools, _ = make_toolbox(rows)
    result = tools.pit_read(C)
    assert result["status"] == "ok"
    expected = dict(rows[2])
    expected["known_at"] = "2023-03-07T21:05:00Z"
    expected["known_at_source"] = "acceptance_at"
    assert result["row"] == expected


def test_knowability_is_strict_at_the_bell() -> None:
    bell = datetime.fromtimestamp(bell_of(SESSION), UTC)
    rows = [
        make_row(
            1,
            form="8-K",
            issuer="At Bell Inc.",
            ticker=None,
            day="2023-03-08",
            accepted=bell.isoformat(),
        ),
        make_row(
            2,
            form="8-K",
            issuer="Early Inc.",
            ticker=None,
            day="2023-03-08",
            accepted=(bell - timedelta(seconds=1)).isoformat(),
        ),
    ]
    tools, _ = make_toolbox(rows)
    assert tools.pit_read(key(1))["status"] == "not_yet_knowable"
    assert tools.pit_read(key(2))["status"] == "ok"
    assert not tools.is_knowable(key(1))
    assert tools.is_knowable(key(2))


def test_control_arm_uses_the_main_arm_clock() -> None:
    main, _ = make_toolbox(base_rows())
    shifted_rows = arm_rows("shifted")
    shifted, _ = make_toolbox(shifted_rows, arm="shifted", index_rows=base_rows())
    on_main = {k for k in ALL_KEYS if main.pit_read(k)["status"] == "ok"}
    on_shifted = {k for k in ALL_KEYS if shifted.pit_read(k)["status"] == "ok"}
    assert on_main == set(KNOWABLE)
    assert on_shifted == on_main
    assert keys_of(shifted.pit_list(since="window_start")) == KNOWABLE
    # the shifted arm's own clock would make nothing knowable at the real bell
    own, _ = make_toolbox(shifted_rows, arm="shifted")
    assert not any(own.is_knowable(k) for k in ALL_KEYS)


# -- pit_list ------------------------------------------------------------------------


def test_pit_list_default_lists_only_rows_new_since_the_previous_bell() -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_list()
    assert keys_of(result) == NEW
    assert result["total"] == 3
    assert result["truncated"] is False


def test_pit_list_window_start_lists_every_knowable_row() -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_list(since="window_start")
    assert keys_of(result) == KNOWABLE
    assert result["total"] == 5
    assert result["truncated"] is False


def test_pit_list_first_session_lists_everything_knowable() -> None:
    tools, _ = make_toolbox(base_rows(), first_session=True)
    assert keys_of(tools.pit_list()) == KNOWABLE


@pytest.mark.parametrize(
    ("limit", "offset", "expected", "truncated"),
    [
        (2, 0, [A, B], True),
        (2, 1, [B, C], True),
        (2, 3, [D, E], False),
        (10, 4, [E], False),
        (None, 2, [C, D, E], False),
        (0, 0, [], True),
        (3, 9, [], False),
    ],
)
def test_pit_list_limit_and_offset(
    limit: int | None, offset: int, expected: list[str], truncated: bool
) -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_list(limit=limit, offset=offset, since="window_start")
    assert keys_of(result) == expected
    assert result["total"] == 5
    assert result["truncated"] is truncated


@pytest.mark.parametrize(
    ("since", "expected"), [("window_start", [A, C, E]), ("previous_session", [C, E])]
)
def test_pit_list_form_filter(since: str, expected: list[str]) -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_list(since=since, form="8-K")
    assert keys_of(result) == expected
    assert result["total"] == len(expected)
    assert all(r["form"] == "8-K" for r in result["rows"])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"limit": -1},
        {"limit": "5"},
        {"limit": True},
        {"limit": 2.5},
        {"offset": -1},
        {"offset": None},
        {"offset": "1"},
        {"offset": False},
        {"since": "yesterday"},
        {"since": None},
    ],
)
def test_pit_list_bad_arguments_return_a_recorded_error(kwargs: dict[str, Any]) -> None:
    tools, calls = make_toolbox(base_rows())
    result = tools.pit_list(**kwargs)
    assert isinstance(result["error"], str) and result["error"]
    assert "rows" not in result
    assert result["tool"] == "pit_list"
    assert result["session_date"] == "2023-03-08"
    assert len(calls) == 1
    tool, args, recorded = calls[0]
    assert tool == "pit_list"
    assert recorded is result
    for name, value in kwargs.items():
        assert args[name] is value


# -- pit_search ----------------------------------------------------------------------


@pytest.mark.parametrize("query", ["apex", "APEX", "aPeX therapeutics", "apxt"])
def test_pit_search_is_case_insensitive(query: str) -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_search(query)
    assert keys_of(result) == [C]
    assert result["total"] == 1


def test_pit_search_only_sees_knowable_rows() -> None:
    # G ("Apex Holdings") matches too, but only once its 11:00 acceptance has passed
    today, _ = make_toolbox(base_rows())
    tomorrow, _ = make_toolbox(base_rows(), day=date(2023, 3, 9))
    assert keys_of(today.pit_search("apex")) == [C]
    assert today.pit_search("apex")["total"] == 1
    assert keys_of(tomorrow.pit_search("apex")) == [C, G]
    assert today.pit_search("harbor")["total"] == 0


def test_pit_search_respects_limit() -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_search("8-k", limit=2)
    assert keys_of(result) == [A, C]
    assert result["total"] == 3
    assert result["truncated"] is True


# -- pit_coverage ----------------------------------------------------------------------


def test_pit_coverage_counts_knowable_rows_by_form_and_fallbacks() -> None:
    tools, _ = make_toolbox(base_rows())
    result = tools.pit_coverage()
    assert result["knowable_rows"] == 5
    assert result["new_since_previous_session"] == 3
    assert result["by_form"] == {"10-K": 1, "4": 1, "8-K": 3}
    assert result["acceptance_stamped"] == 3  # B, C, E
    assert result["known_at_fallbacks"] == 2  # A, D fell back to published_at


def test_pit_coverage_counts_no_fallbacks_off_the_pit_clock() -> None:
    # dump clock: every row published by 2023-03-07 (A, B, C, D) is knowable
    tools, _ = make_toolbox(base_rows(), clock="dump")
    result = tools.pit_coverage()
    assert result["clock"] == "dump"
    assert result["knowable_rows"] == 4
    assert result["by_form"] == {"10-K": 1, "4": 1, "8-K": 2}
    assert result["known_at_fallbacks"] == 0


# -- the record callback -------------------------------------------------------------


def test_every_call_is_recorded_with_its_args_and_whole_result() -> None:
    tools, calls = make_toolbox(base_rows())
    returned = [
        tools.pit_list(limit=2, form="8-K"),
        tools.pit_search("apex", limit=5),
        tools.pit_read(H),
        tools.pit_coverage(),
    ]
    assert [(tool, args) for tool, args, _ in calls] == [
        ("pit_list", {"limit": 2, "offset": 0, "since": "previous_session", "form": "8-K"}),
        ("pit_search", {"query": "apex", "limit": 5, "form": None}),
        ("pit_read", {"row_key": H}),
        ("pit_coverage", {}),
    ]
    for (_, _, recorded), result in zip(calls, returned, strict=True):
        assert recorded is result
    snapshot = json.loads(json.dumps([c[2] for c in calls]))
    assert snapshot == returned


# -- copies ----------------------------------------------------------------------------


def test_mutating_a_returned_row_does_not_change_the_next_answer() -> None:
    rows = base_rows()
    tools, _ = make_toolbox(rows)
    first = tools.pit_read(C)["row"]
    original = dict(first)
    first["title"] = "tampered"
    first["issuer"] = None
    first["known_at"] = "1999-01-01T00:00:00Z"
    listed = tools.pit_list()["rows"]
    listed[0]["form"] = "XX"
    assert tools.pit_read(C)["row"] == original
    assert tools.pit_list()["rows"][0]["form"] == "8-K"
    assert rows[2]["title"] == "8-K - Apex Therapeutics Inc. (0001100003) (Filer) 2023-03-07"


# -- cost does not grow with the release -----------------------------------------------


class CountingList(list[dict[str, Any]]):
    """A row list that counts how often a row is fetched (a scan counts every row)."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.reads += len(self)
        return super().__iter__()


class CountingTuple(tuple[float, ...]):
    """Known-at instants that count how often one is read (a scan counts them all)."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[float]:
        self.reads += len(self)
        return super().__iter__()


def sized_release(size: int) -> tuple[list[dict[str, Any]], list[str]]:
    """``size`` rows; all but 5 were knowable well before the previous bell, 5 were
    accepted between the previous bell and this one."""
    rows = []
    for n in range(size - 5):
        day = date(2023, 1, 2) + timedelta(days=n % 50)
        rows.append(
            make_row(100 + n, form="4", issuer="Bulk Corp.", ticker=None, day=day.isoformat())
        )
    fresh = []
    for n in range(5):
        rows.append(
            make_row(
                10 + n,
                form="8-K",
                issuer="Fresh Inc.",
                ticker=None,
                day="2023-03-07",
                accepted=f"2023-03-07T17:0{n}:00-05:00",
            )
        )
        fresh.append(key(10 + n))
    return rows, fresh


def reads_for(size: int, call: str) -> tuple[int, dict[str, Any], list[str]]:
    rows, fresh = sized_release(size)
    index = ClockIndex.build(rows, "pit")
    counted = CountingList(rows)
    tools, _ = make_toolbox(counted, index=index)
    counted.reads = 0
    result = tools.pit_list() if call == "pit_list" else tools.pit_read(fresh[2])
    return counted.reads, result, fresh


def test_pit_list_cost_does_not_grow_with_release_size() -> None:
    small_reads, small, fresh = reads_for(100, "pit_list")
    large_reads, large, _ = reads_for(10_000, "pit_list")
    assert keys_of(small) == keys_of(large) == fresh
    assert large["total"] == 5
    assert small_reads == large_reads == 5


def test_pit_read_cost_does_not_grow_with_release_size() -> None:
    small_reads, small, fresh = reads_for(100, "pit_read")
    large_reads, large, _ = reads_for(10_000, "pit_read")
    assert small["status"] == large["status"] == "ok"
    assert small["row"]["row_key"] == large["row"]["row_key"] == fresh[2]
    assert small_reads == large_reads == 1


def test_toolbox_finds_the_knowable_prefix_by_bisection() -> None:
    rows, fresh = sized_release(10_000)
    index = ClockIndex.build(rows, "pit")
    counted = CountingTuple(index.known)
    tools, _ = make_toolbox(rows, index=dataclasses.replace(index, known=counted))
    assert keys_of(tools.pit_list()) == fresh
    assert tools.pit_read(fresh[0])["status"] == "ok"
    # two bisections (this bell and the previous one), nothing more
    assert counted.reads <= 2 * len(rows).bit_length()


BASE = int(datetime(2023, 3, 1, tzinfo=UTC).timestamp())


def stamped_rows(offsets: list[int]) -> list[dict[str, Any]]:
    return [
        make_row(
            n,
            form="8-K",
            issuer="X Inc.",
            ticker=None,
            day="2023-03-01",
            accepted=datetime.fromtimestamp(BASE + s, UTC).isoformat(),
        )
        for n, s in enumerate(offsets)
    ]


@settings(max_examples=200, deadline=None, database=None)
@given(
    offsets=st.lists(st.integers(0, 400), max_size=120),
    bell=st.integers(-2, 402),
)
def test_knowable_equals_a_linear_count(offsets: list[int], bell: int) -> None:
    rows = stamped_rows(offsets)
    index = ClockIndex.build(rows, "pit")
    instant = float(BASE + bell)
    linear = sum(1 for row in rows if clock_known_at(row, "pit")[0] < instant)
    assert linear == sum(1 for s in offsets if s < bell)
    assert index.knowable(instant) == linear


@settings(max_examples=100, deadline=None, database=None)
@given(
    offsets=st.lists(st.integers(0, 10_000), min_size=1, max_size=2_000),
    bell=st.integers(-1, 10_001),
)
def test_knowable_is_a_bisection(offsets: list[int], bell: int) -> None:
    index = ClockIndex.build(stamped_rows(offsets), "pit")
    counted = CountingTuple(index.known)
    probe = dataclasses.replace(index, known=counted)
    assert probe.knowable(float(BASE + bell)) == sum(1 for s in offsets if s < bell)
    assert counted.reads <= len(offsets).bit_length()
