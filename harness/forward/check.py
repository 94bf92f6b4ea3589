"""Whether a run is what its forward binding says: the committed agent, run on filings
that did not exist when it was committed (``forward``), or on filings that all did
(``backtest``, the other half of decay).

When a filing came to exist is read from the release's main arm, never from the run:

- a row with ``acceptance_at`` was accepted at that instant;
- a row with only a date (``published_at``) is taken as the whole of that day in
  America/New_York, and judged strictly: it is after the commitment only when its day is
  after the commitment's New York date, and at or before it only when its day is before.
  An evening filing can carry the next day's date (EDGAR's 17:30 cut-off), so a date is
  never read as a time of day.

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
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

import msgspec

from harness.market.calendar import sessions_for
from harness.release.bundle import Bundle
from harness.vocabulary import ARMS

NEW_YORK = ZoneInfo("America/New_York")

AGENT_DIGEST_DIFFERS = "agent_digest_differs"
ACCEPTED_BEFORE_COMMITMENT = "accepted_before_commitment"
ACCEPTED_AFTER_COMMITMENT = "accepted_after_commitment"
WINDOW_OPENS_BEFORE_COMMITMENT = "window_opens_before_commitment"
NOT_A_BINDING = "not_a_binding"

# a long list of offending rows says no more than its first few and its count
MAX_ROWS_NAMED = 20

Status = Literal["forward", "not_forward", "backtest", "not_backtest", "not_bound"]


class ForwardStatus(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a run's forward binding comes to: ``forward`` (a forward run that holds),
    ``not_forward`` (a forward binding that does not: the run may still be a sound run,
    even a backtest, but it is not forward), ``backtest`` / ``not_backtest`` likewise for
    a backtest binding, ``not_bound`` (an ordinary run). ``problems``: why not, each
    starting with its code (``agent_digest_differs: ...``)."""

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


def accepted_after(row: dict[str, Any], moment: datetime) -> bool:
    """Whether the row was accepted strictly after ``moment`` (a date alone: its New York
    day is after ``moment``'s)."""
    instant, day = accepted(row)
    if instant is not None:
        return instant > moment
    return day > moment.astimezone(NEW_YORK).date()


def accepted_by(row: dict[str, Any], moment: datetime) -> bool:
    """Whether the row was accepted at or before ``moment`` (a date alone: its New York
    day is before ``moment``'s)."""
    instant, day = accepted(row)
    if instant is not None:
        return instant <= moment
    return day < moment.astimezone(NEW_YORK).date()


def accepted_text(row: dict[str, Any]) -> str:
    instant, day = accepted(row)
    if instant is not None:
        return f"accepted {instant.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
    return f"dated {day.isoformat()} (no acceptance time: the whole New York day)"


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


def forward_status(
    body: dict[str, Any],
    bundle: Bundle | str | os.PathLike[str],
    trajectory: Events,
) -> ForwardStatus:
    """The verdict the site shows beside a verified run (:func:`forward_problems`)."""
    forward = _binding(body)
    if forward is None:
        return ForwardStatus(status="not_bound", problems=[])
    problems = forward_problems(body, bundle, trajectory)
    if forward.get("kind") == "backtest":
        return ForwardStatus(status="not_backtest" if problems else "backtest", problems=problems)
    return ForwardStatus(status="not_forward" if problems else "forward", problems=problems)


def verdict_line(body: dict[str, Any], status: ForwardStatus) -> str:
    """The line ``pit-harness verify`` prints for a bound run."""
    forward = _binding(body) or {}
    label = "backtest" if forward.get("kind") == "backtest" else "forward"
    if status.status in ("forward", "backtest"):
        return f"{label} ok  committed {forward.get('stamped_at')} entry {forward.get('entry')}"
    return f"{label} no  " + "; ".join(status.problems)
