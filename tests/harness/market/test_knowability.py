"""One rule says when a row is knowable: strictly before the bell (the receipt's P3 rule).

The toolbox counts a knowable prefix by bisection, the calendar finds the first bell a
row makes by bisection, the export counts what each session newly makes knowable, and
rederive tests every pick row by row. These properties hold all of them to the one
rule, over rows of every clock and bells anywhere (at a row's instant exactly too).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.market.calendar import SessionTable
from harness.market.clocks import first_knowing_bell, knowable, knowable_at, known_at
from harness.receipt.rederive import Rederivation, _check_knowability
from harness.tools.toolbox import ClockIndex, Toolbox, knowable_test
from harness.vocabulary import CLOCKS

START = datetime(2023, 3, 1, tzinfo=UTC)
SPAN = 10 * 86400  # ten days of seconds


# EDGAR's Eastern time in winter and in summer, and UTC: the instant is what counts
OFFSETS = (UTC, timezone(timedelta(hours=-5)), timezone(timedelta(hours=-4)))


@st.composite
def rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for n in range(draw(st.integers(0, 30))):
        day = (START + timedelta(days=draw(st.integers(0, 9)))).date().isoformat()
        accepted = draw(st.none() | st.integers(0, SPAN))
        zone = draw(st.sampled_from(OFFSETS))
        out.append(
            {
                "row_key": f"r-{n:016x}",
                "form": "8-K",
                "partition_date": day,
                "published_at": day,
                "acceptance_at": None
                if accepted is None
                else (START + timedelta(seconds=accepted)).astimezone(zone).isoformat(),
            }
        )
    return out


def _bells(draw: st.DrawFn, known: list[float]) -> list[float]:
    """Increasing bells: some anywhere in the span, some exactly at a row's instant."""
    anywhere = draw(st.lists(st.integers(-86400, SPAN + 2 * 86400), max_size=8))
    exact = draw(st.lists(st.sampled_from(known), max_size=4)) if known else []
    return sorted({START.timestamp() + s for s in anywhere} | set(exact))


@settings(max_examples=150, deadline=None, database=None)
@given(data=st.data(), window=rows(), clock=st.sampled_from(CLOCKS))
def test_every_form_of_the_rule_agrees_with_known_at_strictly_before_the_bell(
    data: st.DataObject, window: list[dict[str, Any]], clock: str
) -> None:
    known = [known_at(row, clock)[0] for row in window]
    bells = _bells(data.draw, known)
    index = ClockIndex.build(window, clock)
    positions = {row["row_key"]: i for i, row in enumerate(window)}
    for bell in bells:
        rule = [instant < bell for instant in known]  # P3, as the receipt words it
        assert [knowable(instant, bell) for instant in known] == rule
        assert [knowable_at(row, clock, bell) for row in window] == rule
        # the toolbox: the knowable prefix, and its per-row test
        assert index.knowable(bell) == sum(rule)
        test = knowable_test(index, positions, bell)
        assert [test(row["row_key"]) for row in window] == rule
        tools = Toolbox(
            arm="main",
            index=index,
            rows=window,
            positions=positions,
            bell=bell,
            previous_bell=None,
            session_date="2023-03-08",
            record=lambda *_: None,
        )
        assert [tools.is_knowable(row["row_key"]) for row in window] == rule
        assert [tools.pit_read(row["row_key"])["status"] == "ok" for row in window] == rule
    # the calendar and the export: the first bell at which each row is knowable
    for instant in known:
        first = first_knowing_bell(bells, instant)
        assert all(not knowable(instant, b) for b in bells[:first])
        assert all(knowable(instant, b) for b in bells[first:])
        if first < len(bells):
            table = _table(bells)
            assert table.first_open_after(instant) == first


def _table(bells: list[float]) -> SessionTable:
    days = tuple(date(2000, 1, 1) + timedelta(days=n) for n in range(len(bells)))
    return SessionTable(days, tuple(bells), tuple(b + 23400 for b in bells))


@settings(max_examples=200, deadline=None, database=None)
@given(data=st.data(), window=rows(), clock=st.sampled_from(CLOCKS))
def test_rederive_refuses_a_pick_exactly_when_the_rule_says_it_was_not_knowable(
    data: st.DataObject, window: list[dict[str, Any]], clock: str
) -> None:
    if not window:
        return
    known = [known_at(row, clock)[0] for row in window]
    bells = _bells(data.draw, known)
    if not bells:
        return
    table = _table(bells)
    index_of = {d.isoformat(): i for i, d in enumerate(table.sessions)}
    n = data.draw(st.integers(0, len(bells) - 1))
    picked = data.draw(st.sampled_from(window))
    result = Rederivation()
    _check_knowability(
        result,
        {("main", clock): [(table.sessions[n].isoformat(), [picked["row_key"]])]},
        {row["row_key"]: row for row in window},
        table,
        index_of,
    )
    assert result.ok is (known_at(picked, clock)[0] < bells[n])
