"""EDGAR's index files, as the SEC publishes them: ``master.idx``, ``form.idx`` and
``company.idx``, daily or quarterly, plain or gzipped.

Which kind a file is comes from the file itself, never its name: gzip by its first two
bytes, the layout by its column titles (the lines just above the dashed line).
``master`` is pipe-delimited (``CIK|Company Name|Form Type|Date Filed|File Name``);
``form`` and ``company`` are fixed-width, one sorted by form type and one by company name,
with the titles on one line (quarterly files) or wrapped onto two (daily files).

In a fixed-width file the last three fields (CIK, Date Filed, File Name) never hold a
space, so they are read from the right of each row. The two before them (a company name
and a form type, in either order) may, so they are cut at a column: where the title of
the second one starts, as long as every row agrees (a space before it, a character on
it). Recent files write the form type 17 characters wide (12 before) under titles that
did not move, so where the rows disagree with the titles the cut is the first column
after the title at which every row agrees, and a file where none does is refused rather
than cut wrongly.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from harness.release.store import ReleaseError

PathArg = str | os.PathLike[str]

MASTER_COLUMNS = "CIK|Company Name|Form Type|Date Filed|File Name"
_FIXED_COLUMNS = {
    "company": ("company", "form", "cik", "date", "file"),
    "form": ("form", "company", "cik", "date", "file"),
}
_NAMES = {
    "company": "Company Name",
    "form": "Form Type",
    "cik": "CIK",
    "date": "Date Filed",
    "file": "File Name",
}
# Quarterly files say "Filename", daily ones "File Name".
_TITLE = re.compile(r"company\s+name|form\s+type|cik|date\s+filed|file\s*name", re.I)
_DASHES = re.compile(r"-{20,}")
_DESCRIPTION = re.compile(r"\s*Description:\s*(.*)$", re.I)
_CIK = re.compile(r"[0-9]{1,10}")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{8}")
_FILENAME = re.compile(r"edgar/data/([0-9]{1,10})/([0-9]{10}-[0-9]{2}-[0-9]{6})\.txt")
_ANY_ACCESSION = re.compile(r"(?<![0-9])[0-9]{10}-[0-9]{2}-[0-9]{6}(?![0-9])")
# The last three fields of a fixed-width row, and what is left of them.
_TAIL = re.compile(r"^(?P<lead>.*?)\s+(?P<cik>\S+)\s+(?P<date>\S+)\s+(?P<file>\S+)\s*$")


@dataclass(frozen=True)
class IndexFile:
    """One index file as read: what it is, and every listing in it, in file order.

    A listing is a dict: cik (10 digits), issuer, form, date_filed (ISO), filename,
    accession, path_cik (the CIK in ``edgar/data/<cik>/``, 10 digits) and line.
    """

    name: str
    sha256: str
    kind: str  # "master", "form" or "company"
    period: str | None  # "daily" or "quarterly", from its description or its dates
    listings: list[dict[str, Any]]

    def describe(self) -> dict[str, Any]:
        """What a release's manifest records of the file."""
        return {"name": self.name, "sha256": self.sha256, "kind": self.kind, "period": self.period}


class IndexLineError(ReleaseError):
    """A line of an index file that cannot be read; ``line`` is its number."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{os.fspath(path)}, line {line}: {message}")
        self.line = line


def _fail(path: Path, line: int, message: str) -> NoReturn:
    raise IndexLineError(path, line, message)


def read_bytes(path: Path) -> tuple[str, bytes]:
    """The sha256 of the file as supplied, and its bytes (gunzipped when gzip's magic
    number starts it, whatever its name)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(raw)
        except EOFError:
            raise ReleaseError(
                f"{path}: the gzip stream ends early (a truncated download?)"
            ) from None
        except (OSError, gzip.BadGzipFile) as exc:
            raise ReleaseError(f"{path}: not a readable gzip file ({exc})") from None
    return hashlib.sha256(raw).hexdigest(), data


def split_lines(data: bytes) -> list[bytes]:
    # Not splitlines(): bytes such as 0x85 and 0x1c are line breaks to it once decoded.
    lines = [line.rstrip(b"\r") for line in data.split(b"\n")]
    if lines and not lines[-1]:
        lines.pop()
    return lines


def decode(raw: bytes) -> str:
    """UTF-8 where the bytes are UTF-8, else Latin-1 (older index files are)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _day(text: str) -> str | None:
    if not _DAY.fullmatch(text):
        return None
    digits = text.replace("-", "")
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:])).isoformat()
    except ValueError:
        return None


def _listing(
    path: Path, number: int, cik: str, company: str, form: str, filed: str, filename: str
) -> dict[str, Any]:
    if not _CIK.fullmatch(cik):
        _fail(path, number, f"CIK {cik!r} is not 1 to 10 digits")
    if not company:
        _fail(path, number, "empty Company Name")
    if not form:
        _fail(path, number, "empty Form Type")
    day = _day(filed)
    if day is None:
        _fail(path, number, f"Date Filed {filed!r} is not a date (YYYY-MM-DD or YYYYMMDD)")
    found = _FILENAME.fullmatch(filename)
    if found is None:
        what = "is not" if _ANY_ACCESSION.search(filename) else "has no accession number, nor is"
        _fail(path, number, f"File Name {filename!r} {what} edgar/data/<CIK>/<accession>.txt")
    return {
        "cik": f"{int(cik):010d}",
        "issuer": company,
        "form": form,
        "date_filed": day,
        "filename": filename,
        "accession": found[2],
        "path_cik": f"{int(found[1]):010d}",
        "line": number,
    }


@dataclass
class _Header:
    kind: str
    first_row: int  # the number of the line after the header
    cut: int = 0  # fixed width: where the second column's title starts
    description: str = ""


def _not_an_index(path: Path, lines: list[str]) -> NoReturn:
    """Say what the file seems to be instead, where it shows."""
    if not lines:
        _fail(path, 1, "the file is empty")
    for number, line in enumerate(lines[:200], 1):
        text = line.strip()
        if re.match(r"<(?:SEC-HEADER|SEC-DOCUMENT|SUBMISSION|ACCEPTANCE-DATETIME)>", text, re.I):
            _fail(path, number, "a filing header, not an index file: headers go to --acceptance")
        if text.startswith(("{", "[")) or '"acceptanceDateTime"' in text:
            _fail(
                path,
                number,
                "a JSON document, not an index file (the SEC's submissions "
                "JSON goes to --acceptance)",
            )
        if text.startswith("<"):
            _fail(
                path,
                number,
                "a web page, not an index file (the SEC answers a missing file, or a request "
                "without a User-Agent naming you, with such a page)",
            )
        if text:
            break
    _fail(
        path,
        len(lines),
        "end of file without the column line of an EDGAR index: master.idx's "
        f"{MASTER_COLUMNS!r}, or the Company Name, Form Type, CIK, Date Filed and File Name "
        "titles of form.idx or company.idx above their dashed line",
    )


def _titles(text: str) -> list[str]:
    """The column names in ``text``, in order; [] when anything else is in it."""
    if _TITLE.sub("", text).strip():
        return []
    keys = {" ".join(n.lower().split()): key for key, n in _NAMES.items()}
    keys["filename"] = "file"
    return [keys[" ".join(m[0].lower().split())] for m in _TITLE.finditer(text)]


def _fixed_header(path: Path, lines: list[str], n: int, description: str) -> _Header | None:
    """The header of a fixed-width file whose titles start on line ``n`` (0-based), or
    None when no dashed line follows them within two lines."""
    end = next(
        (k for k in range(n + 1, min(n + 4, len(lines))) if _DASHES.fullmatch(lines[k].strip())),
        None,
    )
    if end is None:
        return None
    names = _titles(" ".join(lines[n:end]))
    for kind, columns in _FIXED_COLUMNS.items():
        if tuple(names) != columns:
            continue
        starts = [m.start() for m in _TITLE.finditer(lines[n])]
        if len(starts) < 2:
            _fail(path, n + 1, f"the {_NAMES[columns[1]]} title is not on the first title line")
        return _Header(kind, end + 2, cut=starts[1], description=description)
    found = ", ".join(_NAMES[x] for x in names) if names else repr(" ".join(lines[n].split()))
    _fail(
        path,
        n + 1,
        f"columns {found} are not those of master.idx, form.idx or company.idx "
        "(Company Name and Form Type in either order, then CIK, Date Filed, File Name)",
    )


def _read_header(path: Path, lines: list[str]) -> _Header:
    description = ""
    for n, line in enumerate(lines):
        if m := _DESCRIPTION.match(line):
            description = m[1].strip()
            if "xbrl" in description.lower():
                _fail(
                    path,
                    n + 1,
                    f"an XBRL index ({description!r}) lists only the filings that carry XBRL "
                    "data: build from master.idx, form.idx or company.idx",
                )
        elif "|" in line:
            cells = [c.strip().lower().replace(" ", "") for c in line.split("|")]
            if cells == ["cik", "companyname", "formtype", "datefiled", "filename"]:
                return _Header("master", n + 2, description=description)
            if len(cells) == 5 and _CIK.fullmatch(cells[0]):
                _fail(path, n + 1, f"a filing row before the column line {MASTER_COLUMNS!r}")
        elif _FILENAME.search(line):
            _fail(path, n + 1, "a filing row before the column titles")
        elif _TITLE.match(line.strip()):
            header = _fixed_header(path, lines, n, description)
            if header is not None:
                return header
    _not_an_index(path, lines)


def _period(description: str, first_date: str | None) -> str | None:
    """Daily or quarterly: as the file describes itself, else as its dates are written
    (daily files YYYYMMDD, quarterly ones YYYY-MM-DD)."""
    words = description.lower()
    if "daily index" in words:
        return "daily"
    if "master index" in words or "full index" in words:
        return "quarterly"
    if first_date is None:
        return None
    return "daily" if first_date.isdigit() else "quarterly"


def _master_rows(path: Path, lines: list[str], header: _Header) -> list[dict[str, Any]]:
    listings = []
    for number in range(header.first_row, len(lines) + 1):
        line = lines[number - 1]
        stripped = line.strip()
        if not stripped or set(stripped) == {"-"}:
            continue
        cells = line.split("|")
        if len(cells) != 5:
            _fail(
                path,
                number,
                f"expected 5 '|'-separated fields ({MASTER_COLUMNS}), found {len(cells)}",
            )
        cik, company, form, filed, filename = (c.strip() for c in cells)
        listings.append(_listing(path, number, cik, company, form, filed, filename))
    return listings


def _agrees(lead: str, cut: int) -> bool:
    """Whether a row's second column can start at ``cut``: a space before, a character on."""
    return len(lead) > cut and lead[cut - 1] == " " and lead[cut] != " "


def _fixed_rows(path: Path, lines: list[str], header: _Header) -> list[dict[str, Any]]:
    first, second = (_NAMES[k] for k in _FIXED_COLUMNS[header.kind][:2])
    rows: list[tuple[int, str, str, str, str]] = []
    for number in range(header.first_row, len(lines) + 1):
        line = lines[number - 1]
        if not line.strip():
            continue
        m = _TAIL.match(line)
        if m is None or not m["lead"].strip():
            _fail(
                path,
                number,
                f"expected {first}, {second}, CIK, Date Filed and File Name in fixed-width "
                f"columns, found {len(line.split())} field(s)",
            )
        rows.append((number, m["lead"].rstrip(), m["cik"], m["date"], m["file"]))
    cut = header.cut
    disagrees = next((row for row in rows if not _agrees(row[1], cut)), None)
    if disagrees is not None:  # the column moved right of its title: the module says why
        shortest = min(len(row[1]) for row in rows)
        cut = next(
            (c for c in range(cut + 1, shortest) if all(_agrees(row[1], c) for row in rows)), 0
        )
        if not cut:
            _fail(
                path,
                disagrees[0],
                f"the {second} column, titled at character {header.cut + 1}, does not start "
                "there in this row, nor at any one character where it starts in every row",
            )
    listings = []
    for number, lead, cik, filed, filename in rows:
        # Latin-1 kept one character per byte for the columns; names are UTF-8 where
        # their bytes are
        cells = {first: decode(lead[:cut].strip().encode("latin-1")), second: lead[cut:].strip()}
        company, form = cells["Company Name"], cells["Form Type"]
        listings.append(_listing(path, number, cik, company, form, filed, filename))
    return listings


def read_index(path: PathArg) -> IndexFile:
    """One EDGAR index file of any of the three kinds; anything else is refused, naming
    the file and the line."""
    file = Path(path)
    digest, data = read_bytes(file)
    raw_lines = split_lines(data)
    lines = [line.decode("latin-1") for line in raw_lines]
    header = _read_header(file, lines)
    try:
        if header.kind == "master":
            listings = _master_rows(file, [decode(line) for line in raw_lines], header)
        else:
            listings = _fixed_rows(file, lines, header)
    except IndexLineError as exc:
        if exc.line == len(lines) and lines and not data.endswith(b"\n"):
            raise ReleaseError(f"{exc} (the file ends inside this line: cut short?)") from None
        raise
    first_date = None
    if listings:
        tokens = lines[listings[0]["line"] - 1].replace("|", " ").split()
        first_date = next((t for t in reversed(tokens) if _DAY.fullmatch(t)), None)
    return IndexFile(
        name=file.name,
        sha256=digest,
        kind=header.kind,
        period=_period(header.description, first_date),
        listings=listings,
    )
