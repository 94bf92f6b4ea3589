"""A release from EDGAR's own ``master.idx`` index files, with acceptance stamps from headers.

Index rows carry the filing date only. The acceptance time, when the user has it, comes
from filing headers (``<ACCEPTANCE-DATETIME>``, New York wall-clock time), so it is stored
with the UTC offset that applied on that day rather than trusted as naive or UTC.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

from harness.release.keys import SCHEME, row_key
from harness.release.store import ReleaseError, write_release

NEW_YORK = ZoneInfo("America/New_York")
PathArg = str | os.PathLike[str]

# Quarterly full-index files say "Filename", daily-index files say "File Name".
_COLUMNS = ("cik", "companyname", "formtype", "datefiled", "filename")
_COLUMN_LINE = "CIK|Company Name|Form Type|Date Filed|Filename"
_CIK = re.compile(r"[0-9]{1,10}")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{8}")
_ACCESSION = re.compile(r"[0-9]{10}-[0-9]{2}-[0-9]{6}")
_FILE_ACCESSION = re.compile(r"(?<![0-9])([0-9]{10}-[0-9]{2}-[0-9]{6})(?![0-9])")
_PATH_CIK = re.compile(r"edgar/data/([0-9]{1,10})/")
_STAMP = re.compile(r"[0-9]{14}")
_HDR_BLOCK = re.compile(r"\s*</?(?:SEC-DOCUMENT|SEC-HEADER|IMS-HEADER|SUBMISSION)>", re.I)
_HDR_ACCESSION = re.compile(r"\s*(?:ACCESSION NUMBER:|<ACCESSION-NUMBER>)(.*)$", re.I)
_HDR_ACCEPTANCE = re.compile(r"\s*<ACCEPTANCE-DATETIME>(.*)$", re.I)


def _fail(path: PathArg, line: int, message: str) -> NoReturn:
    raise ReleaseError(f"{os.fspath(path)}, line {line}: {message}")


def _load(path: Path) -> tuple[str, list[str]]:
    """The sha256 of the file as supplied, and its lines (gunzipped, decoded)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read ({exc.strerror})") from None
    data = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ReleaseError(f"{path}: not a readable gzip file ({exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    # Not splitlines(): latin-1 bytes such as 0x85 and 0x1c are line breaks to it.
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if lines and not lines[-1]:
        lines.pop()
    return hashlib.sha256(raw).hexdigest(), lines


def _day(text: str) -> str | None:
    if not _DAY.fullmatch(text):
        return None
    digits = text.replace("-", "")
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:])).isoformat()
    except ValueError:
        return None


def _listing(path: Path, number: int, cells: list[str]) -> dict[str, Any]:
    if len(cells) != 5:
        _fail(path, number, f"expected 5 '|'-separated fields ({_COLUMN_LINE}), found {len(cells)}")
    cik, company, form, filed, filename = (c.strip() for c in cells)
    if not _CIK.fullmatch(cik):
        _fail(path, number, f"CIK {cik!r} is not 1 to 10 digits")
    if not form:
        _fail(path, number, "empty Form Type")
    day = _day(filed)
    if day is None:
        _fail(path, number, f"Date Filed {filed!r} is not a date (YYYY-MM-DD or YYYYMMDD)")
    acc = _FILE_ACCESSION.search(filename)
    if acc is None:
        _fail(path, number, f"Filename {filename!r} has no accession number")
    in_path = _PATH_CIK.search(filename)
    return {
        "cik": f"{int(cik):010d}",
        "issuer": company,
        "form": form,
        "date_filed": day,
        "filename": filename,
        "accession": acc[1],
        "path_cik": f"{int(in_path[1]):010d}" if in_path else None,
        "line": number,
    }


def _parse_index(path: Path) -> tuple[str, list[dict[str, Any]]]:
    digest, lines = _load(path)
    listings: list[dict[str, Any]] = []
    started = False
    for number, line in enumerate(lines, 1):
        cells = line.split("|")
        if not started:
            if tuple(c.strip().lower().replace(" ", "") for c in cells) == _COLUMNS:
                started = True
            elif len(cells) == 5 and _CIK.fullmatch(cells[0].strip()):
                _fail(path, number, f"a filing row before the column line {_COLUMN_LINE!r}")
            continue
        stripped = line.strip()
        if not stripped or set(stripped) == {"-"}:
            continue
        listings.append(_listing(path, number, cells))
    if not started:
        _fail(path, len(lines), f"end of file without the column line {_COLUMN_LINE!r}")
    return digest, listings


def parse_master_index(path: PathArg) -> list[dict[str, Any]]:
    """Every listing of a full-index or daily-index ``master`` file, in file order.

    Keys: cik (10 digits), issuer, form, date_filed (ISO), filename, accession,
    path_cik (the CIK in ``edgar/data/<cik>/``, 10 digits, or None) and line.
    """
    return _parse_index(Path(path))[1]


def _scan_acceptance(path: Path, found: dict[str, str]) -> str:
    """Add each header's accession -> acceptance to ``found``; return the file's sha256."""
    digest, lines = _load(path)
    block: dict[str, tuple[str, int]] = {}

    def close() -> None:
        if "accession" in block and "acceptance" in block:
            acc = block["accession"][0]
            stamp, line = block["acceptance"]
            if found.get(acc, stamp) != stamp:
                _fail(path, line, f"accession {acc} was already stamped {found[acc]}, now {stamp}")
            found[acc] = stamp
        block.clear()

    for number, line in enumerate(lines, 1):
        if _HDR_BLOCK.match(line):
            close()
            continue
        field = _header_field(path, number, line)
        if field is not None:
            if field[0] in block:  # headers simply concatenated, without block tags
                close()
            block[field[0]] = (field[1], number)
    close()
    return digest


def _header_field(path: Path, number: int, line: str) -> tuple[str, str] | None:
    """("accession", number) or ("acceptance", ISO stamp) from one header line."""
    if m := _HDR_ACCESSION.match(line):
        value = m[1].strip()
        if not _ACCESSION.fullmatch(value):
            _fail(path, number, f"accession number {value!r} is not ##########-YY-######")
        return "accession", value
    if m := _HDR_ACCEPTANCE.match(line):
        value = m[1].strip()
        try:
            if not _STAMP.fullmatch(value):
                raise ValueError
            moment = datetime.strptime(value, "%Y%m%d%H%M%S").replace(tzinfo=NEW_YORK)
        except ValueError:
            _fail(path, number, f"ACCEPTANCE-DATETIME {value!r} is not YYYYMMDDHHMMSS")
        return "acceptance", moment.isoformat()
    return None


def parse_acceptance(path: PathArg) -> dict[str, str]:
    """Accession -> acceptance time (ISO, New York offset) from the headers in one file."""
    found: dict[str, str] = {}
    _scan_acceptance(Path(path), found)
    return found


def _ticker(cik: str, tickers: Mapping[str, str] | None) -> str | None:
    if not tickers:
        return None
    value = (tickers.get(cik) or tickers.get(str(int(cik))) or "").strip()
    return value or None


def _rank(item: dict[str, Any], tickers: Mapping[str, str] | None) -> tuple[bool, bool]:
    return item["cik"] == item["path_cik"], _ticker(item["cik"], tickers) is not None


def build_release(
    out: PathArg,
    *,
    index_files: Sequence[PathArg],
    acceptance_files: Sequence[PathArg] = (),
    name: str,
    row_key_secret: bytes,
    tickers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Write a release with one row per accession found in ``index_files``; return its manifest.

    EDGAR lists a filing once per filer role (issuer and reporting owner of a Form 4,
    subject and filer of an SC 13G), and each listing's path names its own CIK. The row
    kept prefers a listing whose CIK is the one in its path, then one with a known ticker
    (the listed company rather than the insider), then the first seen. Row keys are
    keyed with ``row_key_secret`` (see ``harness.release.keys``).
    """
    if not index_files:
        raise ReleaseError("no index files given")
    chosen: dict[str, dict[str, Any]] = {}
    folded = 0
    index_meta = []
    for path in map(Path, index_files):
        digest, listings = _parse_index(path)
        index_meta.append({"name": path.name, "sha256": digest})
        for item in listings:
            kept = chosen.get(item["accession"])
            if kept is not None:
                folded += 1
                if _rank(item, tickers) <= _rank(kept, tickers):
                    continue
            chosen[item["accession"]] = item
    if not chosen:
        raise ReleaseError(f"no filing rows in {', '.join(m['name'] for m in index_meta)}")

    stamps: dict[str, str] = {}
    acceptance_meta = []
    for path in map(Path, acceptance_files):
        acceptance_meta.append({"name": path.name, "sha256": _scan_acceptance(path, stamps)})
    unmatched = sum(1 for acc in stamps if acc not in chosen)

    rows = []
    for acc, item in chosen.items():
        cik, form, issuer = item["cik"], item["form"], item["issuer"]
        rows.append(
            {
                "row_key": row_key(row_key_secret, acc),
                "accession": acc,
                "form": form,
                "cik": cik,
                "issuer": issuer,
                "ticker": _ticker(cik, tickers),
                "title": f"{form} - {issuer} ({cik}) (Filer)",
                "partition_date": item["date_filed"],
                "published_at": item["date_filed"],
                "acceptance_at": stamps.get(acc),
                "filename": item["filename"],
            }
        )
    days = [r["partition_date"] for r in rows]
    stamped = sum(1 for r in rows if r["acceptance_at"])
    return write_release(
        out,
        row_key_secret=row_key_secret,
        name=name,
        rows=rows,
        window=(min(days), max(days)),
        provenance=(
            f"Rows come from {len(index_meta)} EDGAR index file(s) supplied by the user, one row "
            "per accession; titles are mechanical '<form> - <company> (<CIK>) (Filer)' "
            f"concatenations and carry no filing text; {stamped} of {len(rows)} rows carry "
            "acceptance stamps taken from user-supplied filing headers"
        ),
        source={
            "kind": "edgar-index",
            "row_keys": SCHEME,
            "index_files": index_meta,
            "acceptance_files": acceptance_meta,
            "folded_duplicate_listings": folded,
            "unmatched_acceptance": unmatched,
        },
    )
