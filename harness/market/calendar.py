"""NYSE sessions, from exchange_calendars' XNYS calendar.

Only two facts of the calendar matter to a run: which dates are sessions, and the
instant each session's opening auction starts (09:30 America/New_York, in UTC, DST
resolved by the calendar). Both are kept as sorted arrays so that "the first session
whose open is strictly after t" is one bisect.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import lru_cache

from harness.market.clocks import first_knowing_bell

CALENDAR = "XNYS"


@dataclass(frozen=True)
class SessionTable:
    """Sessions of one span, with their opening instants as POSIX seconds (UTC)."""

    sessions: tuple[date, ...]
    opens: tuple[float, ...]
    closes: tuple[float, ...]

    def first_open_after(self, instant: float) -> int:
        """Index of the first session whose open is strictly after ``instant``: the
        first bell at which what became knowable then is knowable (the clocks' rule).

        Strictly: a filing accepted at exactly 09:30:00 missed that morning's auction.
        """
        index = first_knowing_bell(self.opens, instant)
        if index >= len(self.sessions):
            raise LookupError(
                f"no {CALENDAR} session after {datetime.fromtimestamp(instant, UTC):%Y-%m-%d} "
                "in the loaded calendar span"
            )
        return index

    def index_on_or_after(self, day: date) -> int:
        return bisect_left(self.sessions, day)

    def is_session(self, day: date) -> bool:
        i = bisect_left(self.sessions, day)
        return i < len(self.sessions) and self.sessions[i] == day

    def open_at(self, index: int) -> datetime:
        return datetime.fromtimestamp(self.opens[index], UTC)

    def window(self, start: date, end: date) -> range:
        """Indexes of the sessions a run walks: every session in ``start..end`` and the
        first one after ``end``, so a filing made on the last day can still be entered
        under every clock."""
        lo = bisect_left(self.sessions, start)
        hi = bisect_right(self.sessions, end)
        if hi >= len(self.sessions):
            raise LookupError(f"the loaded calendar ends before the session after {end}")
        return range(lo, hi + 1)


@lru_cache(maxsize=8)
def _table(first_year: int, last_year: int) -> SessionTable:
    import exchange_calendars as xcals  # heavy import, paid once per process

    cal = xcals.get_calendar(CALENDAR, start=f"{first_year}-01-01", end=f"{last_year}-12-31")
    schedule = cal.schedule
    sessions = tuple(ts.date() for ts in schedule.index)
    # int64 nanoseconds since the epoch, UTC: exact, and vectorised.
    opens = tuple(float(ns) / 1e9 for ns in schedule["open"].astype("int64").tolist())
    closes = tuple(float(ns) / 1e9 for ns in schedule["close"].astype("int64").tolist())
    return SessionTable(sessions, opens, closes)


def sessions_for(start: date, end: date) -> SessionTable:
    """A session table covering ``start..end`` with room either side (a year)."""
    return _table(start.year - 1, end.year + 1)
