"""Which sessions a commitment is executed over, chosen from the release alone.

A forward window starts at the first NYSE session from which on every filing was accepted
after the commitment (``harness.forward.check``'s rule: an acceptance time where the row
has one, else its whole New York day) and whose opening bell rings after it, and runs to
the release's end. A filing accepted the evening before a later-dated session (EDGAR
dates a filing sent after 17:30 the next business day) belongs to that session's date yet
existed before a commitment stamped later that evening: it pushes the start later.

A backtest window is the same number of sessions just before: it ends at the last session
up to which every filing was accepted at or before the commitment.

Both read the whole release (every form): a window is a span of days, the same for every
form a run then narrows it to.
"""

from __future__ import annotations

import os
from datetime import date

from harness.forward.check import accepted_after, accepted_by, commitment_instant
from harness.market.calendar import sessions_for
from harness.release.bundle import Bundle


def _release(bundle: Bundle | str | os.PathLike[str]) -> Bundle:
    return bundle if isinstance(bundle, Bundle) else Bundle.load(bundle)


def forward_window(
    bundle: Bundle | str | os.PathLike[str], stamped_at: str
) -> tuple[str, str] | None:
    """(start, end) of the forward window for a commitment stamped ``stamped_at``
    (``YYYY-MM-DDTHH:MM:SSZ``): the earliest session date D such that every main-arm row
    dated D or later was accepted strictly after the stamp and D's opening bell is after
    it, through the release's end; None when the release has no such session yet."""
    release = _release(bundle)
    moment = commitment_instant(stamped_at)
    # the latest date holding a row that existed by the stamp: the window starts after it
    existed = [
        str(r["partition_date"]) for r in release.rows("main") if not accepted_after(r, moment)
    ]
    after = max(existed) if existed else None
    first, last = date.fromisoformat(release.start), date.fromisoformat(release.end)
    table = sessions_for(min(first, moment.date()), max(last, moment.date()))
    for index in range(table.index_on_or_after(first), len(table.sessions)):
        day = table.sessions[index]
        if day > last:
            return None
        if (after is None or day.isoformat() > after) and table.open_at(index) > moment:
            return day.isoformat(), release.end
    return None


def backtest_window(
    bundle: Bundle | str | os.PathLike[str], stamped_at: str, sessions: int
) -> tuple[str, str] | None:
    """(start, end) of the ``sessions`` NYSE sessions ending at the last session of the
    release up to which every main-arm row (dated on or before it) was accepted at or
    before the stamp; None when the release does not hold that many such sessions."""
    if sessions < 1:
        raise ValueError("sessions: at least 1")
    release = _release(bundle)
    moment = commitment_instant(stamped_at)
    # the earliest date holding a row that did not exist by the stamp: the window ends before
    later = [str(r["partition_date"]) for r in release.rows("main") if not accepted_by(r, moment)]
    before = min(later) if later else None
    first, last = date.fromisoformat(release.start), date.fromisoformat(release.end)
    table = sessions_for(min(first, moment.date()), max(last, moment.date()))
    lo = table.index_on_or_after(first)
    hi = table.index_on_or_after(last)
    if hi >= len(table.sessions) or table.sessions[hi] > last:
        hi -= 1  # the last session inside the release
    while hi >= lo and before is not None and table.sessions[hi].isoformat() >= before:
        hi -= 1
    start = hi - sessions + 1
    if hi < lo or start < lo:
        return None
    return table.sessions[start].isoformat(), table.sessions[hi].isoformat()


def priced_through(end: str, hold_sessions: int) -> str:
    """The last session a run over ``..end`` can need a price for: a filing of the last
    day enters at the first session after ``end`` (the runner walks it too) and is held
    ``hold_sessions`` sessions. A run is priced in full only by bars through this day."""
    last = date.fromisoformat(end)
    table = sessions_for(last, last)
    after = table.index_on_or_after(last)
    if after < len(table.sessions) and table.sessions[after] == last:
        after += 1
    exit_at = after + hold_sessions
    if exit_at >= len(table.sessions):
        raise LookupError(f"the loaded calendar ends before {hold_sessions} sessions after {end}")
    return table.sessions[exit_at].isoformat()
