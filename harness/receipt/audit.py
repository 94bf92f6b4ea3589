"""The reasoning audit: every free text an agent wrote on the control arms, scanned for
the real values those arms hide from it.

A control arm hides one thing: ``shifted`` the real dates (every date ten years on),
``redacted`` the issuer. An agent that writes, on one of them, the real date or the
issuer of a row it was served has carried the real world in with it, whatever it then
picked. The audit reads a run's trajectory and the release it ran on and, cell by
control cell, collects the rows the cell was served (its tool calls' rows, the row a
probe question showed, the keys its picks and orders named), joins each to its main-arm
row through the release's order, and scans the cell's free texts with the probe's own
readers (``harness.rundata.probe_scoring``): on ``shifted`` for a served row's real
dates (its partition date and the days of its ``published_at`` and ``acceptance_at``,
however ``find_dates`` reads a full date; a bare year is no finding), on ``redacted``
for its issuer's name or ticker (``issuer_span``). The shifted arm shows the issuer and
the redacted arm the real dates, so naming those there is no finding. The mask probe's
answers are a cell of their own, ``shifted/probe``.

A finding (a hit) is one real value named in one text, however often the text repeats
it; each cell keeps its first excerpts (``EXCERPTS_PER_CELL``) and counts every hit. The
artifact is plain data with a canonical form (``harness.canonical``), so the same
trajectory and release give the same bytes and the same ``audit_digest`` on any machine.

What it cannot see: a text that recovers the period and keeps it to itself, a date or
name paraphrased ("early March", "the chip maker"), what the trajectory does not keep
(sharpebench's order rationales), model requests (they echo what the arm showed) and
response bodies kept as base64 (counted as ``unscanned_responses``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from harness import canonical
from harness.release.bundle import Bundle
from harness.rundata.probe_scoring import answer_key, date_spans, issuer_span, name_words
from harness.vocabulary import ARMS, CLOCKS

AUDIT_VERSION = 1
CONTROL_ARMS = ("redacted", "shifted")
PROBE_CLOCK = "probe"  # the mask probe's cell, on the shifted arm (as its faults are written)
EXCERPTS_PER_CELL = 50
EXCERPT_CHARS = 160
SEARCH_ARG = "query"  # pit_search's argument: the one tool argument an agent writes freely

SCANNED = (
    "on the redacted and shifted arms (and the shifted arm's mask probe), every decision "
    "text, probe answer, pit_search query and model response text the recording proxy kept, "
    "for the real dates (shifted: a full date, never a bare year) and the issuer names or "
    "tickers (redacted) of the rows each cell was served or named"
)
NOT_SCANNED = (
    "the main arm, issuer names on shifted and dates on redacted (those arms show them), "
    "model requests, base64 response bodies, order rationales and sharpebench observations "
    "(the trajectory does not keep them), and anything paraphrased or kept unwritten"
)
SCOPE = f"Scanned: {SCANNED}; not scanned: {NOT_SCANNED}."

# Keys of a model's JSON answer that carry no text the model wrote (ids, names of
# models, roles, reasons it stopped), and logprobs, which repeat the text token by token.
_RESPONSE_METADATA = frozenset(
    {
        "id",
        "object",
        "model",
        "created",
        "system_fingerprint",
        "role",
        "finish_reason",
        "stop_reason",
        "type",
        "index",
        "service_tier",
        "logprobs",
        "usage",
    }
)
_TICKER_RUN = re.compile(r"[A-Za-z0-9]+")


class AuditError(ValueError):
    """The audit cannot be made: the release given is not the one the run used, or does
    not hold the rows it served."""


class TrajectoryFormatError(AuditError):
    """The file is not a pit-harness trajectory."""


# -- reading the trajectory ------------------------------------------------------------


class _Row(msgspec.Struct):
    row_key: str


class _Answer(msgspec.Struct):
    rows: list[_Row] | None = None
    row: _Row | None = None


class _ToolCall(msgspec.Struct):
    """A ``tool_call`` event, typed: its cell, its arguments and its served rows' keys
    (every other field of a row is skipped unbuilt)."""

    event: Literal["tool_call"]
    seq: int
    arm: str
    clock: str
    args: Any = None
    result: _Answer = msgspec.field(default_factory=_Answer)


_TOOL_CALL = msgspec.json.Decoder(_ToolCall)


@dataclass
class _Event:
    """One trajectory event, as much of it as the audit reads."""

    kind: str
    seq: int | None
    arm: Any
    clock: Any
    served: list[str] = field(default_factory=list)  # keys a tool served, a probe showed
    named: list[str] = field(default_factory=list)  # keys its picks and orders named
    texts: list[tuple[str, str]] = field(default_factory=list)  # (source, text) it wrote
    unscanned: int = 0  # model responses kept as base64


def _event(number: int, line: bytes) -> _Event:
    # most lines are tool calls carrying many rows: typed, their rows never built
    if line.startswith(b'{"args":'):
        try:
            call = _TOOL_CALL.decode(line)
        except msgspec.DecodeError:
            pass  # read whole below, and refused there if it is no event
        else:
            answer = call.result
            rows = answer.rows or ([answer.row] if answer.row is not None else [])
            return _Event(
                "tool_call",
                call.seq,
                call.arm,
                call.clock,
                served=[r.row_key for r in rows],
                texts=_search_texts(call.args),
            )
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise TrajectoryFormatError(f"line {number} is not JSON ({exc})") from None
    if not isinstance(value, dict) or not isinstance(value.get("event"), str):
        raise TrajectoryFormatError(f"line {number} is not an event object")
    return _from_dict(number, value)


def _from_dict(number: int, value: dict[str, Any]) -> _Event:
    kind = value["event"]
    seq = value.get("seq")
    seq = seq if type(seq) is int else None
    event = _Event(kind, seq, value.get("arm"), value.get("clock"))
    if kind == "tool_call":
        result = value.get("result")
        if not isinstance(result, dict):
            raise TrajectoryFormatError(f"line {number}: a tool call without a result object")
        rows = result.get("rows") or ([result["row"]] if result.get("row") is not None else [])
        if not isinstance(rows, list) or not all(
            isinstance(r, dict) and isinstance(r.get("row_key"), str) for r in rows
        ):
            raise TrajectoryFormatError(f"line {number}: a tool call served a row without a key")
        event.served = [r["row_key"] for r in rows]
        event.texts = _search_texts(value.get("args"))
    elif kind in ("decision", "presentation_refused"):  # a refused decision is one too
        event.texts = _strings([("decision", value.get("text"))])
        event.named = [k for k in value.get("picks") or [] if isinstance(k, str)]
        for order in value.get("orders") or []:
            if isinstance(order, dict):
                if isinstance(order.get("symbol"), str):
                    event.named.append(order["symbol"])
                event.texts += _strings([("rationale", order.get("rationale"))])
    elif kind == "probe_item":
        if isinstance(value.get("row_key"), str):
            event.served = [value["row_key"]]
        event.texts = _strings([("probe_answer", value.get("answer"))])
    elif kind == "model_exchange":
        text = _response_text(value.get("response_body"))
        if text is None:
            body = value.get("response_body")
            event.unscanned = int(isinstance(body, dict) and "base64" in body)
        else:
            event.texts = _strings([("model_response", text)])
    return event


def _strings(pairs: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    return [(source, text) for source, text in pairs if isinstance(text, str) and text]


def _search_texts(args: Any) -> list[tuple[str, str]]:
    if not isinstance(args, dict):
        return []
    return _strings([("search_query", args.get(SEARCH_ARG))])


def _response_text(body: Any) -> str | None:
    """The text a model wrote in a recorded response: a JSON answer's strings (its
    metadata left out), a stream's data chunks joined as the client joins them, or the
    body as it is. None for a body kept as base64 (or none at all)."""
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        return None
    text: str = body["text"]
    parsed = _json_or_none(text)
    if parsed is not None:
        return "\n".join(_leaves(parsed))
    if not re.search(r"(?m)^data:", text):
        return text
    pieces = []
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            continue
        chunk = _json_or_none(payload)
        # a stream's deltas are pieces of one text: joined with nothing between them
        pieces.append(payload if chunk is None else "".join(_leaves(chunk)))
    return "".join(pieces)


def _json_or_none(text: str) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict | list) else None


def _leaves(value: Any, depth: int = 0) -> list[str]:
    if depth > 64:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [
            leaf
            for key, item in value.items()
            if key not in _RESPONSE_METADATA
            for leaf in _leaves(item, depth + 1)
        ]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item, depth + 1)]
    return []


_PROBE_EVENTS = frozenset({"probe_item", "tool_call", "model_exchange", "agent_error"})


class _Cells:
    """Which cell an event belongs to: the cell whose ``cell_start`` it follows, until
    that cell's ``cell_end``; after a shifted cell ends and before the next begins, the
    mask probe's (its questions and answers, tool calls, model exchanges and fault)."""

    def __init__(self) -> None:
        self._open: tuple[str, str] | None = None
        self._after: Any = None  # the arm of the cell that ended last

    def of(self, event: _Event) -> tuple[str, str] | None:
        if event.kind == "cell_start":
            self._open = (str(event.arm), str(event.clock))
            return self._open
        if event.kind == "cell_end":
            cell, self._open, self._after = self._open, None, event.arm
            return cell
        if self._open is not None:
            return self._open
        if self._after == "shifted" and event.kind in _PROBE_EVENTS:
            return ("shifted", PROBE_CLOCK)
        return None


class _Pass:
    """One read of a trajectory: every event after ``run_start`` with its control cell
    (None: the main arm's, or no cell's); ``sha256`` is the file's once it is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sha256: str | None = None

    def __iter__(self) -> Iterator[tuple[_Event, tuple[str, str] | None]]:
        hasher = hashlib.sha256()
        cells = _Cells()
        with open(self.path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                hasher.update(line)
                if number == 1:
                    continue
                event = _event(number, line)
                cell = cells.of(event)
                yield event, (cell if cell is not None and cell[0] in CONTROL_ARMS else None)
        self.sha256 = "sha256:" + hasher.hexdigest()


def run_start(trajectory: str | os.PathLike[str]) -> dict[str, Any]:
    """The trajectory's first event (``run_start``: the run's id, config and release)."""
    path = Path(trajectory)
    try:
        with open(path, "rb") as handle:
            line = handle.readline()
    except FileNotFoundError:
        raise AuditError(f"{path.name}: no such file") from None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict) or value.get("event") != "run_start":
        raise TrajectoryFormatError(
            f"{path.name}: not a pit-harness trajectory (its first line is no run_start event)"
        )
    return value


def run_bundle(release: str | os.PathLike[str], trajectory: str | os.PathLike[str]) -> Bundle:
    """The release narrowed to the run's forms and window, as the run loaded it."""
    config = run_start(trajectory).get("config")
    if not isinstance(config, dict):
        raise TrajectoryFormatError("the trajectory's run_start has no config")
    return Bundle.load(
        release, forms=config.get("forms") or None, start=config.get("start"), end=config.get("end")
    )


# -- what each control cell hides ------------------------------------------------------


@dataclass
class _Cell:
    arm: str
    clock: str
    served: dict[str, None] = field(default_factory=dict)  # the arm's keys, first seen first
    named: dict[str, None] = field(default_factory=dict)
    texts: int = 0
    date_hits: int = 0
    issuer_hits: int = 0
    unscanned: int = 0
    excerpts: list[dict[str, Any]] = field(default_factory=list)
    rows: int = 0  # distinct rows the texts were checked against
    dates: dict[date, str] = field(default_factory=dict)  # a real day -> the first row's key
    issuers: _Issuers | None = None


class _Issuers:
    """The issuers of a cell's rows, found in a text without trying every one: a name is
    tried only where the text has all its words, a ticker only where the text has its
    first run of letters and digits (a one-letter ticker, or one that starts otherwise,
    wherever it occurs); ``issuer_span`` decides."""

    def __init__(self) -> None:
        self.known: dict[tuple[str | None, str | None], str] = {}  # -> the first row's key
        self._order: list[tuple[str | None, str | None]] = []
        self._words: list[frozenset[str]] = []
        self._by_word: dict[str, list[int]] = {}
        self._by_run: dict[str, list[int]] = {}
        self._anywhere: list[int] = []

    def add(self, issuer: str | None, ticker: str | None, row_key: str) -> None:
        identity = (issuer or None, ticker or None)
        if identity == (None, None) or identity in self.known:
            return
        self.known[identity] = row_key
        n = len(self._order)
        self._order.append(identity)
        words = name_words(issuer) if issuer else []
        self._words.append(frozenset(words))
        if words:
            self._by_word.setdefault(words[0], []).append(n)
        if ticker:
            run = _TICKER_RUN.match(ticker)
            if len(ticker) == 1 or run is None:
                self._anywhere.append(n)
            else:
                self._by_run.setdefault(run.group(0), []).append(n)

    def named_in(self, text: str) -> Iterator[tuple[tuple[str | None, str | None], str, int, int]]:
        """(identity, how, start, end) of every issuer the text names, in the order
        they were first served."""
        words = set(name_words(text))
        candidates = {n for w in words for n in self._by_word.get(w, ()) if self._words[n] <= words}
        candidates.update(
            n for r in set(_TICKER_RUN.findall(text)) for n in self._by_run.get(r, ())
        )
        candidates.update(n for n in self._anywhere if (self._order[n][1] or "") in text)
        for n in sorted(candidates):
            issuer, ticker = self._order[n]
            found = issuer_span(text, issuer, ticker)
            if found is not None:
                yield self._order[n], *found


def _real_days(main_row: dict[str, Any]) -> list[date]:
    """The days a main-arm row's real dates fall on: the probe's answer key (partition
    date, acceptance day) and the day it was published."""
    days = {date.fromisoformat(d) for d in answer_key(main_row)["dates"]}
    published = main_row.get("published_at")
    if isinstance(published, str) and published:
        days.add(datetime.fromisoformat(published).date())
    return sorted(days)


def _hidden_values(cells: list[_Cell], bundle: Bundle) -> None:
    """Each cell's rows joined to the main arm by the release's order, and what its arm
    hides of them: the real days on shifted, the issuers on redacted. Only the served
    rows are parsed; the lines read are dropped afterwards (keys are kept), as the runner
    drops an arm's, so a whole release's audit holds no arm's lines for long."""
    main_texts = bundle.texts("main")
    parsed: dict[int, dict[str, Any]] = {}
    for arm in sorted({c.arm for c in cells}):
        position = {key: i for i, key in enumerate(bundle.row_keys(arm))}
        bundle.release_rows(arm)
        for cell in (c for c in cells if c.arm == arm):
            for key in cell.served:
                if key not in position:
                    raise AuditError(
                        f"row {key} served on the {arm} arm is not in release {bundle.name} "
                        f"({bundle.start}..{bundle.end}): not the release or window the run used"
                    )
            keys = [
                *cell.served,
                *(k for k in cell.named if k in position and k not in cell.served),
            ]
            cell.rows = len(keys)
            if arm == "redacted":
                cell.issuers = _Issuers()
            for key in keys:
                at = position[key]
                if at not in parsed:
                    parsed[at] = json.loads(main_texts[at])
                main = parsed[at]
                if cell.issuers is not None:
                    cell.issuers.add(main.get("issuer"), main.get("ticker"), key)
                else:
                    for day in _real_days(main):
                        cell.dates.setdefault(day, key)
    bundle.release_rows("main")


# -- the scan ---------------------------------------------------------------------------


def _excerpt(text: str, start: int, end: int) -> str:
    end = min(end, start + EXCERPT_CHARS)
    side = max(0, (EXCERPT_CHARS - (end - start)) // 2)
    return text[max(0, start - side) : end + side]


def _scan(cell: _Cell, seq: int | None, source: str, text: str) -> None:
    found: list[tuple[int, int, str, str, str, str]] = []  # start, end, kind, how, truth, key
    if cell.issuers is not None:
        for identity, how, start, end in cell.issuers.named_in(text):
            truth = identity[0] if how == "name" else identity[1]
            found.append((start, end, "issuer", how, str(truth), cell.issuers.known[identity]))
    else:
        for start, end, _, rendering, day in sorted(date_spans(text), key=lambda s: (s[0], -s[1])):
            if day in cell.dates:
                found.append((start, end, "date", rendering, day.isoformat(), cell.dates[day]))
    seen: set[tuple[str, str]] = set()
    for start, end, kind, how, truth, key in sorted(found, key=lambda f: (f[0], -f[1])):
        if (kind, truth) in seen:  # one real value named in one text is one finding
            continue
        seen.add((kind, truth))
        if kind == "date":
            cell.date_hits += 1
        else:
            cell.issuer_hits += 1
        if len(cell.excerpts) < EXCERPTS_PER_CELL:
            cell.excerpts.append(
                {
                    "seq": seq,
                    "source": source,
                    "kind": kind,
                    "how": how,
                    "matched": text[start:end][:EXCERPT_CHARS],
                    "truth": truth,
                    "row_key": key,
                    "excerpt": _excerpt(text, start, end),
                }
            )


def reasoning_audit(trajectory: Path, bundle: Bundle) -> dict[str, Any]:
    """The audit of one run (see the module's docstring) as plain data: its trajectory
    read twice, a line at a time (the rows each control cell was served, then its
    texts), against the release the run used (``run_bundle`` loads it as the run did).
    Raises ``TrajectoryFormatError`` for a file that is no trajectory and ``AuditError``
    for a release that is not the run's."""
    path = Path(trajectory)
    start = run_start(path)
    ran_on = start.get("bundle")
    stated = ran_on.get("content_digest") if isinstance(ran_on, dict) else None
    if stated != bundle.content_digest:
        raise AuditError(
            f"the trajectory was run on release {stated}, the release given is "
            f"{bundle.content_digest}"
        )
    cells: dict[tuple[str, str], _Cell] = {}
    served = _Pass(path)
    for event, where in served:
        if where is not None:
            cell = cells.get(where)
            if cell is None:
                cell = cells[where] = _Cell(*where)
            cell.served.update(dict.fromkeys(event.served))
            cell.named.update(dict.fromkeys(event.named))
    ordered = sorted(cells.values(), key=lambda c: _cell_order(c.arm, c.clock))
    _hidden_values(ordered, bundle)
    scanned = _Pass(path)
    for event, where in scanned:
        if where is not None:
            cell = cells[where]
            cell.unscanned += event.unscanned
            for source, text in event.texts:
                cell.texts += 1
                _scan(cell, event.seq, source, text)
    if served.sha256 is None or scanned.sha256 != served.sha256:
        raise AuditError(f"{path.name} changed while it was read")
    return _artifact(start, served.sha256, bundle, ordered)


_ARM_RANK: dict[str, int] = {arm: n for n, arm in enumerate(ARMS)}
_CLOCK_RANK: dict[str, int] = {clock: n for n, clock in enumerate((*CLOCKS, PROBE_CLOCK))}


def _cell_order(arm: str, clock: str) -> tuple[int, int, str]:
    return (_ARM_RANK.get(arm, len(_ARM_RANK)), _CLOCK_RANK.get(clock, len(_CLOCK_RANK)), clock)


def _artifact(
    start: dict[str, Any], trajectory_sha: str, bundle: Bundle, cells: list[_Cell]
) -> dict[str, Any]:
    rows = [
        {
            "arm": c.arm,
            "clock": c.clock,
            "hides": "issuer" if c.arm == "redacted" else "dates",
            "texts": c.texts,
            "rows_served": c.rows,
            "date_hits": c.date_hits,
            "issuer_hits": c.issuer_hits,
            "unscanned_responses": c.unscanned,
            "excerpts": c.excerpts,
        }
        for c in cells
    ]
    run_id = start.get("run_id")
    return {
        "audit_version": AUDIT_VERSION,
        "run_id": run_id if isinstance(run_id, str) else None,
        "trajectory_sha256": trajectory_sha,
        "bundle_content_digest": bundle.content_digest,
        "scope": SCOPE,
        "not_scanned": f"Not scanned: {NOT_SCANNED}.",
        "limits": {"excerpts_per_cell": EXCERPTS_PER_CELL, "excerpt_chars": EXCERPT_CHARS},
        "cells": rows,
        "totals": {
            "texts": sum(c.texts for c in cells),
            "date_hits": sum(c.date_hits for c in cells),
            "issuer_hits": sum(c.issuer_hits for c in cells),
            "cells_with_hits": sum(1 for c in cells if c.date_hits or c.issuer_hits),
            "unscanned_responses": sum(c.unscanned for c in cells),
        },
    }


def audit_bytes(artifact: dict[str, Any]) -> bytes:
    """The artifact's canonical bytes: what is written, stored and hashed."""
    return canonical.dumps_bytes(artifact)


def audit_digest(artifact: dict[str, Any]) -> str:
    """``sha256:<hex>`` over the artifact's canonical bytes (the sha256 of its file)."""
    return canonical.digest(artifact)
