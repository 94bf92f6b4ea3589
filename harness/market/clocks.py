"""The three clocks: when a row becomes knowable, and which auction a trade enters.

- ``leaky``: the partition date at 00:00:00Z; enters the opening auction of the
  filing's own index day. Unreachable: nobody held the row at that instant.
- ``dump``: ``published_at`` at 23:59:59Z (the nightly index); enters the next
  session's open.
- ``pit``: ``acceptance_at`` where the row carries one, else ``published_at`` as in
  ``dump`` (the fallback is counted); enters the same session's open when accepted
  before it, else the next.

All three reduce to one rule (the receipt's P3 rule): a row is knowable at a bell when
the instant its clock gives is strictly before that bell, so it enters at the first
session whose opening bell is strictly after that instant. ``knowable`` is the rule;
``knowable_count`` and ``first_knowing_bell`` are the same rule over sorted instants and
sorted bells, for the callers that bisect instead of testing each row.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import UTC, date, datetime, time
from functools import lru_cache
from typing import Any

from harness.vocabulary import CLOCKS

REACHABLE = {"leaky": False, "dump": True, "pit": True}


@lru_cache(maxsize=8192)
def _day_at(day: str, at: time) -> float:
    # cached: a window has a few hundred distinct dates and many rows on each
    return datetime.combine(date.fromisoformat(day), at, UTC).timestamp()


_MIDNIGHT = time(0, 0, 0)
_DUMP = time(23, 59, 59)


def known_at(row: dict[str, Any], clock: str) -> tuple[float, str]:
    """(instant as POSIX seconds, the field it came from) for ``row`` under ``clock``."""
    if clock == "leaky":
        return _day_at(row["partition_date"], _MIDNIGHT), "partition_date"
    if clock == "dump":
        return _day_at(row["published_at"][:10], _DUMP), "published_at"
    if clock == "pit":
        stamp = row.get("acceptance_at")
        if stamp:
            moment = datetime.fromisoformat(stamp)
            if moment.tzinfo is None:
                raise ValueError(f"row {row['row_key']}: acceptance_at {stamp!r} has no UTC offset")
            return moment.timestamp(), "acceptance_at"
        return _day_at(row["published_at"][:10], _DUMP), "published_at"
    raise ValueError(f"unknown clock {clock!r} (clocks: {', '.join(CLOCKS)})")


def knowable(instant: float, bell: float) -> bool:
    """Whether what became knowable at ``instant`` is knowable at ``bell``: strictly
    before it (a filing accepted at exactly 09:30:00 missed that morning's auction)."""
    return instant < bell


def knowable_at(row: dict[str, Any], clock: str, bell: float) -> bool:
    """Whether ``row`` is knowable at ``bell`` under ``clock``."""
    return knowable(known_at(row, clock)[0], bell)


def knowable_count(instants: Sequence[float], bell: float) -> int:
    """How many of ``instants`` (sorted) are knowable at ``bell``: they are a prefix."""
    return bisect_left(instants, bell)


def first_knowing_bell(bells: Sequence[float], instant: float) -> int:
    """Index of the first of ``bells`` (sorted) at which ``instant`` is knowable
    (``len(bells)`` when none is)."""
    return bisect_right(bells, instant)


@lru_cache(maxsize=65536)
def iso_utc(instant: float) -> str:
    return datetime.fromtimestamp(instant, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def acceptance_instant(row: dict[str, Any]) -> float | None:
    """When EDGAR accepted the filing (POSIX seconds), where the row says."""
    stamp = row.get("acceptance_at")
    return datetime.fromisoformat(stamp).timestamp() if stamp else None


def knowable_before_acceptance(rows: list[dict[str, Any]], clock: str) -> int:
    """Rows this clock makes knowable before EDGAR accepted them (leaky: most stamped
    rows; dump: late Forms 3, 4, 5 and 144, dated the day before their acceptance in UTC;
    pit: none by construction)."""
    count = 0
    for row in rows:
        accepted = acceptance_instant(row)
        if accepted is not None and knowable_at(row, clock, accepted):
            count += 1
    return count
