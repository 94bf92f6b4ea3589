"""Derive the two control arms from a main-arm row.

``redacted`` removes issuer identity (name, CIK, ticker, the accession prefix and
the filename, which carries the CIK); ``shifted`` moves every date ten years forward,
including full dates and year digits inside free text and the two year digits of the
accession number, so the real date cannot be read back from any field. ``row_key``
is kept here; the release writer gives each arm its own (see ``harness.release.keys``),
and the join between arms is their common order.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from typing import Any

SHIFT_YEARS = 10
REDACTED = "[redacted]"

# One pass over free text: an accession number, an ISO date (with an optional time,
# which is kept) or a bare year, whichever comes first at each position.
_DATED = re.compile(
    r"(?P<acc>\b\d{10}-(?P<yy>\d{2})-\d{6}\b)"
    r"|(?P<iso>\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?!\d))"
    r"|(?P<year>(?<!\d)(?:19[5-9]\d|20\d\d)(?!\d))"
)
_ACCESSION = re.compile(r"\b(\d{10})-(\d{2})-(\d{6})\b")
_DIGIT = re.compile(r"\d")

_KEEP = frozenset({"row_key", "form", "cik"})


def shift_date(day: date, years: int = SHIFT_YEARS) -> date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February in a year that has none
        return day.replace(year=day.year + years, day=28)


def shift_iso(text: str, years: int = SHIFT_YEARS) -> str:
    """Shift an ISO date or timestamp; wall-clock time and offset (or ``Z``) are kept
    as written, so a shifted stamp reads exactly like the real one."""
    day = shift_date(date.fromisoformat(text[:10]), years)
    return day.isoformat() + text[10:]


def _shift_text(text: str, years: int) -> str:
    if not _DIGIT.search(text):
        return text

    def one(m: re.Match[str]) -> str:
        if m["acc"]:
            return m["acc"].replace(f"-{m['yy']}-", f"-{(int(m['yy']) + years) % 100:02d}-", 1)
        if m["iso"]:
            try:
                return shift_date(date(int(m["y"]), int(m["m"]), int(m["d"])), years).isoformat()
            except ValueError:  # not a date after all: leave the digits alone
                return m["iso"]
        return str(int(m["year"]) + years)

    return _DATED.sub(one, text)


def shifted_row(row: dict[str, Any], years: int = SHIFT_YEARS) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in _KEEP or not isinstance(value, str):
            out[key] = value
        elif key in ("partition_date", "published_at", "acceptance_at"):
            out[key] = shift_iso(value, years)
        else:
            out[key] = _shift_text(value, years)
    return out


@lru_cache(maxsize=65536)
def _identity_pattern(
    issuer: str | None, cik: str | None, ticker: str | None
) -> re.Pattern[str] | None:
    """One pattern for every way a row names its filer (cached: issuers repeat)."""
    parts = []
    if issuer:
        parts.append(re.escape(issuer))
    if cik:
        digits = cik.lstrip("0") or "0"
        parts.append(rf"(?<!\d)0*{re.escape(digits)}(?!\d)")
    if ticker:
        parts.append(rf"(?<![A-Za-z0-9]){re.escape(ticker)}(?![A-Za-z0-9])")
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def redacted_row(row: dict[str, Any]) -> dict[str, Any]:
    pattern = _identity_pattern(row.get("issuer"), row.get("cik"), row.get("ticker"))
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("issuer", "cik", "ticker", "filename"):
            out[key] = None
        elif key == "accession" and isinstance(value, str):
            out[key] = _ACCESSION.sub(lambda m: f"0000000000-{m[2]}-{m[3]}", value)
        elif key in ("row_key", "form") or not isinstance(value, str):
            out[key] = value
        else:
            out[key] = pattern.sub(REDACTED, value) if pattern else value
    return out


def derive(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The three arms of one main-arm row."""
    return {"main": row, "redacted": redacted_row(row), "shifted": shifted_row(row)}
