"""Whether a run is what its forward binding says: the committed agent, run on filings
that did not exist when it was committed (``forward``), or on filings that all did
(``backtest``, the other half of decay).

When a filing came to exist is read from the release's main arm, never from the run:

- a row with ``acceptance_at`` was accepted at that instant;
- a row with only a date (``published_at``) could have been accepted at any time EDGAR
  gives that date: from 17:30 New York on the business day before it (a filing sent after
  EDGAR's 17:30 cut-off carries the next business day's date, so a Monday's filing may
  have been sent on Friday evening or over the weekend) until 22:00 on the day itself
  (Forms 3, 4, 5 and 144 keep the day's date until then). It is after the commitment only
  when the earliest of those is, and at or before it only when the latest is. The business
  day before is taken as the latest NYSE session that is no US federal holiday: where
  EDGAR is open and the exchange is not (Good Friday) the window only grows, which errs
  on the strict side.

A forward run holds when (a) its agent's package digest (the config's ``agent_digest``,
which an external agent's run records) is the committed one, (b) every row it traded, in
any cell of any arm (a control arm's keys joined to the main arm's through the release's
order, as scoring joins them), was accepted strictly after the commitment's stamp, and
(c) its window's first session opens after that stamp. A backtest holds when (a) holds
and every row of its window, traded or not, was accepted at or before the stamp.

These checks read a run whose hashes already hold (``pit-harness verify`` runs them
after its own): they say what a sound run is, not whether the run is sound.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

import msgspec

from harness.forward.log import Entry, entry_digest
from harness.market.calendar import sessions_for
from harness.release.bundle import Bundle
from harness.vocabulary import ARMS

NEW_YORK = ZoneInfo("America/New_York")
# EDGAR dates a filing sent after 17:30 New York with the next business day; Forms 3, 4, 5
# and 144 keep the day's date until 22:00
EVENING_CUTOFF = time(17, 30)
LATEST_SAME_DAY = time(22, 0)

AGENT_DIGEST_DIFFERS = "agent_digest_differs"
ACCEPTED_BEFORE_COMMITMENT = "accepted_before_commitment"
ACCEPTED_AFTER_COMMITMENT = "accepted_after_commitment"
WINDOW_OPENS_BEFORE_COMMITMENT = "window_opens_before_commitment"
NOT_A_BINDING = "not_a_binding"
NOT_IN_THE_LOG = "not_in_the_log"

# a long list of offending rows says no more than its first few and its count
MAX_ROWS_NAMED = 20

Status = Literal["forward", "not_forward", "backtest", "not_backtest", "not_bound", "unresolved"]


class ForwardStatus(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a run's forward binding comes to: ``forward`` (a forward run that holds),
    ``not_forward`` (a forward binding that does not: the run may still be a sound run,
    even a backtest, but it is not forward), ``backtest`` / ``not_backtest`` likewise for
    a backtest binding, ``not_bound`` (an ordinary run), ``unresolved`` (nothing in the
    run contradicts its binding, but the binding was not checked against the commitment
    log, so no commitment is shown to exist). ``problems``: why not, each starting with its
    code (``agent_digest_differs: ...``)."""

    status: Status
    problems: list[str]


# -- when a row came to exist --------------------------------------------------------------


def commitment_instant(stamped_at: str) -> datetime:
    """A log stamp (``YYYY-MM-DDTHH:MM:SSZ``) as an aware UTC instant."""
    if not isinstance(stamped_at, str) or not stamped_at.endswith("Z"):
        raise ValueError(f"stamped_at {stamped_at!r}: not YYYY-MM-DDTHH:MM:SSZ")
    return datetime.fromisoformat(stamped_at[:-1] + "+00:00")


def accepted(row: dict[str, Any]) -> tuple[datetime | None, date]:
    """(the instant EDGAR accepted the row, if it says and says with an offset; the day it
    is dated otherwise: ``published_at``'s date)."""
    stamp = row.get("acceptance_at")
    if stamp:
        moment = datetime.fromisoformat(stamp)
        if moment.tzinfo is not None and moment.utcoffset() is not None:
            return moment, date.fromisoformat(str(row["published_at"])[:10])
    return None, date.fromisoformat(str(row["published_at"])[:10])


@lru_cache(maxsize=64)
def _federal_holidays(year: int) -> frozenset[date]:
    from pandas.tseries.holiday import USFederalHolidayCalendar  # heavy: paid once

    found = USFederalHolidayCalendar().holidays(f"{year - 1}-12-01", f"{year + 1}-01-31")
    return frozenset(stamp.date() for stamp in found)


def business_day_before(day: date) -> date:
    """The latest NYSE session before ``day`` that is no US federal holiday (EDGAR's
    business day before it, erring early where the two calendars differ)."""
    table = sessions_for(day - timedelta(days=14), day)
    index = table.index_on_or_after(day) - 1
    while index >= 0 and table.sessions[index] in _federal_holidays(table.sessions[index].year):
        index -= 1
    if index < 0:
        raise LookupError(f"no business day in the two weeks before {day}")
    return table.sessions[index]


def possible_acceptance(row: dict[str, Any]) -> tuple[datetime, datetime]:
    """The earliest and latest instant the row can have been accepted: its acceptance
    time where it states one; for a date alone, 17:30 New York on the business day before
    it through 22:00 New York on the day itself."""
    instant, day = accepted(row)
    if instant is not None:
        return instant, instant
    before = business_day_before(day)
    return (
        datetime.combine(before, EVENING_CUTOFF, NEW_YORK),
        datetime.combine(day, LATEST_SAME_DAY, NEW_YORK),
    )


def accepted_after(row: dict[str, Any], moment: datetime) -> bool:
    """Whether the row was accepted strictly after ``moment`` (a date alone: even at the
    earliest time EDGAR gives that date)."""
    return possible_acceptance(row)[0] > moment


def accepted_by(row: dict[str, Any], moment: datetime) -> bool:
    """Whether the row was accepted at or before ``moment`` (a date alone: even at the
    latest time EDGAR gives that date)."""
    return possible_acceptance(row)[1] <= moment


def accepted_text(row: dict[str, Any]) -> str:
    instant, day = accepted(row)
    if instant is not None:
        return f"accepted {instant.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
    earliest, latest = possible_acceptance(row)
    return (
        f"dated {day.isoformat()} (no acceptance time: between "
        f"{earliest.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ} and "
        f"{latest.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ})"
    )


# -- what a run traded ---------------------------------------------------------------------


Events = str | os.PathLike[str] | Iterable[Any]


def _events(trajectory: Events) -> Iterator[Any]:
    """The run's events: from a trajectory file, from events already parsed, or from the
    cell records a run is assembled from (``harness.runs.records.CellRecord``: each
    holds its cell's events as canonical lines)."""
    if isinstance(trajectory, str | os.PathLike):
        with open(Path(trajectory), "rb") as handle:
            for line in handle:
                # tool calls, most of a trajectory, carry no picks: skipped unparsed
                if not line.startswith(b'{"args":'):
                    yield json.loads(line)
        return
    for item in trajectory:
        lines = getattr(item, "events", None)
        if isinstance(lines, str):
            yield from (json.loads(line) for line in lines.splitlines() if line.strip())
        else:
            yield item


def traded_rows(bundle: Bundle, trajectory: Events) -> dict[str, list[str]]:
    """Every row the run traded, as the main arm's key -> the cells (``arm/clock``) it was
    traded in: each decision's accepted picks (every one becomes a trade), a control arm's
    keys joined to the main arm's through the release's order. A key no arm of the
    release holds is kept as it is (it matches no row, and is named as such)."""
    joins: dict[str, dict[str, str]] = {}
    traded: dict[str, list[str]] = {}
    for event in _events(trajectory):
        if not isinstance(event, dict) or event.get("event") != "decision":
            continue
        arm, clock = str(event.get("arm")), str(event.get("clock"))
        if arm != "main" and arm not in joins and arm in ARMS:
            joins[arm] = bundle.to_main(arm)
        for key in event.get("picks") or []:
            main_key = joins[arm].get(key, key) if arm in joins else key
            cells = traded.setdefault(str(main_key), [])
            if f"{arm}/{clock}" not in cells:
                cells.append(f"{arm}/{clock}")
    return traded


# -- the checks ----------------------------------------------------------------------------


def _binding(body: dict[str, Any]) -> dict[str, Any] | None:
    config = body.get("config")
    forward = config.get("forward") if isinstance(config, dict) else None
    return forward if isinstance(forward, dict) else None


def _window_bundle(bundle: Bundle | str | os.PathLike[str], config: dict[str, Any]) -> Bundle:
    if isinstance(bundle, Bundle):
        return bundle
    return Bundle.load(
        bundle, forms=config.get("forms") or None, start=config.get("start"), end=config.get("end")
    )


def _in_window(row: dict[str, Any], config: dict[str, Any]) -> bool:
    forms = config.get("forms") or []
    day = str(row.get("partition_date"))
    return (not forms or row.get("form") in forms) and (
        str(config.get("start")) <= day <= str(config.get("end"))
    )


def _named(problems: list[str], code: str, offending: list[str]) -> None:
    for line in offending[:MAX_ROWS_NAMED]:
        problems.append(f"{code}: {line}")
    if len(offending) > MAX_ROWS_NAMED:
        problems.append(f"{code}: and {len(offending) - MAX_ROWS_NAMED} more row(s)")


def forward_problems(
    body: dict[str, Any],
    bundle: Bundle | str | os.PathLike[str],
    trajectory: Events,
) -> list[str]:
    """Why the run is not what its forward binding says (an empty list: it is). ``body``
    is the receipt's body; ``bundle`` the release (a folder, or a Bundle: the whole
    release or the run's window); ``trajectory`` a file, its events, or the run's cell records. A body with no binding has no problems."""
    forward = _binding(body)
    if forward is None:
        return []
    config: dict[str, Any] = body["config"]
    try:
        moment = commitment_instant(forward["stamped_at"])
        kind, committed = forward["kind"], forward["agent_digest"]
        if kind not in ("forward", "backtest"):
            raise ValueError(f"kind {kind!r}")
    except (KeyError, TypeError, ValueError) as exc:
        return [f"{NOT_A_BINDING}: config.forward is not a binding ({exc})"]
    problems: list[str] = []
    ran = config.get("agent_digest")
    if ran != committed:
        what = ran if ran else "none (not a committed package: a Python agent)"
        problems.append(
            f"{AGENT_DIGEST_DIFFERS}: the run's agent is {what}, the commitment's is {committed}"
        )
    loaded = _window_bundle(bundle, config)
    main = {r["row_key"]: r for r in loaded.rows("main")}
    traded = traded_rows(loaded, trajectory)
    unknown = [f"row {k}: in no arm of the release" for k in sorted(traded) if k not in main]
    if kind == "forward":
        early = [
            f"row {k} ({', '.join(traded[k])}) {accepted_text(main[k])}"
            for k in sorted(traded)
            if k in main and not accepted_after(main[k], moment)
        ]
        _named(problems, ACCEPTED_BEFORE_COMMITMENT, unknown + early)
        problems += _window_opens_after(body, config, moment)
    else:
        late = [
            f"row {key} {accepted_text(row)}"
            for key, row in sorted(main.items())
            if _in_window(row, config) and not accepted_by(row, moment)
        ]
        _named(problems, ACCEPTED_AFTER_COMMITMENT, unknown + late)
    return problems


def _window_opens_after(
    body: dict[str, Any], config: dict[str, Any], moment: datetime
) -> list[str]:
    """(c): the window's first session opens after the commitment's stamp."""
    sessions = body.get("sessions") or []
    first_text = sessions[0] if sessions else config.get("start")
    first = date.fromisoformat(str(first_text))
    table = sessions_for(min(first, moment.date()), max(first, moment.date()))
    if not table.is_session(first):
        return [
            f"{WINDOW_OPENS_BEFORE_COMMITMENT}: the window's first session {first} is no NYSE session"
        ]
    bell = table.open_at(table.index_on_or_after(first))
    if bell > moment:
        return []
    return [
        f"{WINDOW_OPENS_BEFORE_COMMITMENT}: the window's first session {first} opens at "
        f"{bell:%Y-%m-%dT%H:%M:%SZ}, not after the commitment's stamp {forward_stamp(moment)}"
    ]


def forward_stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def binding_problems(body: dict[str, Any], entries: Sequence[Entry]) -> list[str]:
    """Why the binding is not a commitment of the log (``entries``, a chain already
    verified): the entry it names must be a commit entry with that digest, stamp and agent
    digest, the log's head it names must be in the log at or after it, no withdrawal of it
    may come at or before that head, and the run must enter the benchmark committed
    (forms, hold, clocks, arms)."""
    forward = _binding(body) or {}
    config: dict[str, Any] = body.get("config") or {}
    seq = forward.get("seq")
    if not isinstance(seq, int) or not 1 <= seq <= len(entries):
        return [f"{NOT_IN_THE_LOG}: the log has no entry {seq!r}"]
    entry = entries[seq - 1]
    if entry_digest(entry) != forward.get("entry") or entry.commit is None:
        return [f"{NOT_IN_THE_LOG}: entry {seq} is not the commitment {forward.get('entry')}"]
    problems = []
    if entry.stamped_at != forward.get("stamped_at"):
        problems.append(
            f"{NOT_IN_THE_LOG}: entry {seq} is stamped {entry.stamped_at}, the binding says "
            f"{forward.get('stamped_at')}"
        )
    if entry.commit.agent.digest != forward.get("agent_digest"):
        problems.append(
            f"{NOT_IN_THE_LOG}: entry {seq} commits {entry.commit.agent.digest}, the binding "
            f"names {forward.get('agent_digest')}"
        )
    head = forward.get("log_head") or {}
    head_seq = head.get("seq")
    if (
        not isinstance(head_seq, int)
        or not seq <= head_seq <= len(entries)
        or entry_digest(entries[head_seq - 1]) != head.get("digest")
    ):
        problems.append(f"{NOT_IN_THE_LOG}: the log holds no head {head_seq}:{head.get('digest')}")
        head_seq = len(entries)
    withdrawn = [
        e.seq for e in entries[:head_seq] if e.withdraw is not None and e.withdraw.withdraws == seq
    ]
    if withdrawn:
        problems.append(f"withdrawn: entry {withdrawn[0]} withdrew commitment {seq}")
    bench = entry.commit.benchmark
    committed = {
        "forms": sorted(bench.forms), "hold_sessions": bench.hold_sessions,
        "clocks": list(bench.clocks), "arms": list(bench.arms),
    }  # fmt: skip
    ran = {
        "forms": sorted(config.get("forms") or []), "hold_sessions": config.get("hold_sessions"),
        "clocks": list(config.get("clocks") or []), "arms": list(config.get("arms") or []),
    }  # fmt: skip
    for key, value in committed.items():
        if ran[key] != value:
            problems.append(
                f"benchmark_differs: the run's {key} {ran[key]}, the commitment's {value}"
            )
    return problems


def forward_status(
    body: dict[str, Any],
    bundle: Bundle | str | os.PathLike[str],
    trajectory: Events,
    log: Sequence[Entry] | None = None,
) -> ForwardStatus:
    """The verdict the site shows beside a verified run (:func:`forward_problems`, and
    :func:`binding_problems` against ``log``, the commitment log's verified entries).
    Without a log a run whose own evidence holds is ``unresolved``, never forward."""
    forward = _binding(body)
    if forward is None:
        return ForwardStatus(status="not_bound", problems=[])
    problems = forward_problems(body, bundle, trajectory)
    if log is not None and not any(p.startswith(NOT_A_BINDING) for p in problems):
        problems += binding_problems(body, log)
    if not problems and log is None:
        return ForwardStatus(status="unresolved", problems=[])
    if forward.get("kind") == "backtest":
        return ForwardStatus(status="not_backtest" if problems else "backtest", problems=problems)
    return ForwardStatus(status="not_forward" if problems else "forward", problems=problems)


def verdict_line(body: dict[str, Any], status: ForwardStatus) -> str:
    """The line ``pit-harness verify`` prints for a bound run."""
    forward = _binding(body) or {}
    label = "backtest" if forward.get("kind") == "backtest" else "forward"
    if status.status == "unresolved":
        return (
            f"{label} UNRESOLVED  the run holds as far as its release and trajectory show, but "
            f"commitment {forward.get('seq')} was not looked up: pass --log "
            "commitments-log.json (the site's /forward/log.json) to check it"
        )
    if status.status in ("forward", "backtest"):
        return f"{label} ok  committed {forward.get('stamped_at')} entry {forward.get('entry')}"
    return f"{label} no  " + "; ".join(status.problems)
