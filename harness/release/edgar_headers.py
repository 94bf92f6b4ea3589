"""When EDGAR accepted each filing: ``ACCEPTANCE-DATETIME`` from filing headers, or
``acceptanceDateTime`` from the SEC's submissions JSON.

Headers come as the ``<accession>.hdr.sgml`` file of a filing's folder, as the start of
its full submission (``<accession>.txt``: the header, then its documents, whose text is
skipped), or several of either concatenated. Their stamp is New York wall-clock time, so
it is stored with the UTC offset that applied on that day.

The submissions JSON (``data.sec.gov/submissions/CIK##########.json``, or one of its
``-submissions-NNN.json`` pages) writes every stamp with a ``Z``, but for some filers the
digits are New York time and for others UTC, and nothing in the string says which. EDGAR
accepts filings from 06:00 to 22:00 New York time, so a stamp that one reading puts
outside 05:00-23:00 (an hour of margin either way) while the other does not shows the
file's convention; the file's stamps are read by it when its telling stamps agree, and
the file is refused when none tells or they disagree. A header never has this doubt.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, time
from pathlib import Path
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

from harness.release.edgar_index import decode, read_bytes, split_lines
from harness.release.store import ReleaseError

NEW_YORK = ZoneInfo("America/New_York")
UTC = ZoneInfo("UTC")
PathArg = str | os.PathLike[str]

_ACCESSION = re.compile(r"[0-9]{10}-[0-9]{2}-[0-9]{6}")
_STAMP = re.compile(r"[0-9]{14}")
_HDR_BLOCK = re.compile(r"\s*</?(?:SEC-DOCUMENT|SEC-HEADER|IMS-HEADER|SUBMISSION)>", re.I)
_DOCUMENT = re.compile(r"\s*<DOCUMENT>", re.I)
_DOCUMENT_END = re.compile(r"\s*</DOCUMENT>", re.I)
_HDR_ACCESSION = re.compile(r"\s*(?:ACCESSION NUMBER:|<ACCESSION-NUMBER>)(.*)$", re.I)
_HDR_ACCEPTANCE = re.compile(r"\s*<ACCEPTANCE-DATETIME>(.*)$", re.I)
_JSON_STAMP = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.[0-9]+)?Z")
# EDGAR's hours are 06:00-22:00 New York time; a reading outside these is impossible
_EARLIEST, _LATEST = time(5, 0), time(23, 0)


@dataclass(frozen=True)
class Stamp:
    """An acceptance time (ISO 8601, New York offset) and where it was read."""

    at: str
    where: str


def _fail(where: str, message: str) -> NoReturn:
    raise ReleaseError(f"{where}: {message}")


def _add(found: dict[str, Stamp], accession: str, stamp: Stamp) -> None:
    before = found.get(accession)
    if before is not None and before.at != stamp.at:
        _fail(
            stamp.where,
            f"accession {accession} was already stamped {before.at} ({before.where}), "
            f"now {stamp.at}",
        )
    found.setdefault(accession, stamp)


def _header_field(where: str, line: str) -> tuple[str, str] | None:
    """("accession", number) or ("acceptance", ISO stamp) from one header line."""
    if m := _HDR_ACCESSION.match(line):
        value = m[1].strip()
        if not _ACCESSION.fullmatch(value):
            _fail(where, f"accession number {value!r} is not ##########-YY-######")
        return "accession", value
    if m := _HDR_ACCEPTANCE.match(line):
        value = m[1].strip()
        try:
            if not _STAMP.fullmatch(value):
                raise ValueError
            moment = datetime.strptime(value, "%Y%m%d%H%M%S").replace(tzinfo=NEW_YORK)
        except ValueError:
            _fail(where, f"ACCEPTANCE-DATETIME {value!r} is not YYYYMMDDHHMMSS")
        return "acceptance", moment.isoformat()
    return None


def _headers(path: Path, lines: list[bytes], found: dict[str, Stamp]) -> dict[str, Any]:
    block: dict[str, tuple[str, str]] = {}
    counts = {"headers": 0, "stamps": 0}

    def close() -> None:
        if "accession" in block:
            counts["headers"] += 1
            if "acceptance" in block:
                stamp, where = block["acceptance"]
                _add(found, block["accession"][0], Stamp(stamp, where))
                counts["stamps"] += 1
        block.clear()

    in_document = False
    for number, raw in enumerate(lines, 1):
        line = decode(raw)
        if in_document:  # a document's own text: nothing in it is the header's
            in_document = not _DOCUMENT_END.match(line)
            continue
        if _DOCUMENT.match(line):
            close()
            in_document = True
            continue
        if _HDR_BLOCK.match(line):
            close()
            continue
        where = f"{path}, line {number}"
        field = _header_field(where, line)
        if field is not None:
            if field[0] in block:  # headers simply concatenated, without block tags
                close()
            block[field[0]] = (field[1], where)
    close()
    if not lines:
        _fail(f"{path}, line 1", "the file is empty")
    if not counts["headers"]:
        text = b"\n".join(lines[:50]).decode("latin-1")
        hint = (
            "an EDGAR index file: it goes to --edgar-index"
            if "Company Name" in text or "CIK|" in text
            else "--acceptance takes filing headers (.hdr.sgml), full submissions (.txt) and "
            "the SEC's submissions JSON"
        )
        _fail(
            f"{path}, line {len(lines)}",
            f"end of file without a filing header (no ACCESSION NUMBER line); {hint}",
        )
    return {"kind": "filing-headers", **counts}


def _columns(path: Path, body: Any) -> tuple[str, dict[str, Any]]:
    """Where the filings' columns are in a submissions JSON, and the columns."""
    if isinstance(body, dict) and isinstance(body.get("filings"), dict):
        recent = body["filings"].get("recent")
        if isinstance(recent, dict):
            return "filings.recent.", recent
    if isinstance(body, dict) and "accessionNumber" in body:
        return "", body
    if isinstance(body, dict) and isinstance(body.get("directory"), dict):
        _fail(
            str(path),
            "a filing folder's index.json lists its files, not when EDGAR accepted the "
            "filing: give its <accession>.hdr.sgml or the filer's submissions JSON",
        )
    _fail(str(path), "JSON, but not the SEC's submissions JSON (no filings.recent columns)")


def _submissions(path: Path, data: bytes, found: dict[str, Stamp]) -> dict[str, Any]:
    try:
        body = json.loads(decode(data))
    except ValueError as exc:
        _fail(str(path), f"not valid JSON ({exc})")
    prefix, columns = _columns(path, body)
    accessions, stamps = columns.get("accessionNumber"), columns.get("acceptanceDateTime")
    if not isinstance(accessions, list) or not isinstance(stamps, list):
        _fail(str(path), f"{prefix}accessionNumber and {prefix}acceptanceDateTime must be lists")
    if len(accessions) != len(stamps):
        _fail(
            str(path),
            f"{len(accessions)} {prefix}accessionNumber but {len(stamps)} acceptanceDateTime",
        )
    walls: list[tuple[str, datetime, str]] = []
    for n, (accession, stamp) in enumerate(zip(accessions, stamps, strict=True)):
        where = f"{path}, {prefix}acceptanceDateTime[{n}]"
        if not isinstance(accession, str) or not _ACCESSION.fullmatch(accession):
            _fail(where, f"accessionNumber {accession!r} is not ##########-YY-######")
        if stamp in ("", None):
            continue
        m = _JSON_STAMP.fullmatch(stamp) if isinstance(stamp, str) else None
        if m is None:
            _fail(where, f"{stamp!r} is not YYYY-MM-DDTHH:MM:SS.sssZ")
        walls.append((accession, datetime.fromisoformat(m[1]), where))
    read_as = _convention(path, walls)
    for accession, wall, where in walls:
        moment = wall.replace(tzinfo=read_as).astimezone(NEW_YORK)
        _add(found, accession, Stamp(moment.isoformat(), where))
    return {"kind": "submissions-json", "read_as": str(read_as), "stamps": len(walls)}


def _possible(moment: datetime) -> bool:
    return _EARLIEST <= moment.astimezone(NEW_YORK).time() < _LATEST


def _convention(path: Path, walls: list[tuple[str, datetime, str]]) -> ZoneInfo:
    """New York or UTC: what the file's telling stamps show (see the module)."""
    tells: dict[str, list[str]] = {"America/New_York": [], "UTC": []}
    for accession, wall, _ in walls:
        as_new_york = _possible(wall.replace(tzinfo=NEW_YORK))
        as_utc = _possible(wall.replace(tzinfo=UTC))
        if as_new_york != as_utc:
            tells["America/New_York" if as_new_york else "UTC"].append(accession)
    new_york, universal = tells["America/New_York"], tells["UTC"]
    if new_york and universal:
        _fail(
            str(path),
            f"acceptanceDateTime is New York time for {new_york[0]} and UTC for "
            f"{universal[0]} (both written with a Z), so no reading of the rest is safe: "
            "give the filings' headers instead",
        )
    if not new_york and not universal:
        _fail(
            str(path),
            f"none of its {len(walls)} acceptanceDateTime values shows whether it is New York "
            "time or UTC (the SEC writes both with a Z; only a filing accepted before about "
            "09:00 or after about 19:00 New York time tells): give the filings' headers instead",
        )
    return NEW_YORK if new_york else UTC


def read_acceptance(path: PathArg, found: dict[str, Stamp]) -> dict[str, Any]:
    """Add each accession -> acceptance time of one file to ``found`` (refusing a second,
    different time for an accession); return what the manifest records of the file."""
    file = Path(path)
    digest, data = read_bytes(file)
    if data.lstrip()[:1] == b"{":
        meta = _submissions(file, data, found)
    else:
        meta = _headers(file, split_lines(data), found)
    return {"name": file.name, "sha256": digest, **meta}
