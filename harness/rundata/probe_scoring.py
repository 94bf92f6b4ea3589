"""The mask probe's scoring: a positive control on the shifted arm, its answers scored.

The agent is asked (by ``harness.runs.probe``) the real date and issuer of rows it was
actually served there (items by a fixed stride, not a sample). ``date_recovered`` needs a
full date, found as people write them (``find_dates``: ISO with or without padding,
compact, numeric day-month either way round, month names and abbreviations, ordinals,
two-digit years), and the item records which rendering matched; a bare year is recorded apart as weaker
evidence. The verdict turns on dates only, because dates are what the shifted
arm masks: it still shows the issuer, so issuer recovery is reported per item but
cannot by itself break the mask.

What it misses: a model that recovers the period and keeps it to itself passes.
``mask_holds`` says the answer text carried nothing.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

_SUFFIXES = {
    "inc",
    "corp",
    "co",
    "ltd",
    "plc",
    "llc",
    "nv",
    "group",
    "the",
    "company",
    "corporation",
}
_WORD = re.compile(r"[a-z0-9]+")


_MONTHS = {
    name: n
    for n, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month>(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?)"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4}|'\d{2})"  # after a month name, '23 but not 23 ("March 1, 23 filings")
_EDGE_L, _EDGE_R = r"(?<![\w])", r"(?![\w])"
# An ISO date may run into its time: 2023-03-01T09:30.
_ISO = (
    r"(?P<year>\d{4})(?P<sep>[-/.])(?P<month>\d{1,2})(?P=sep)(?P<day>\d{1,2})(?:(?![\w])|(?=T\d))"
)
# (form, pattern); numeric day-month forms are read both ways (see _readings)
_FORMS: list[tuple[str, re.Pattern[str]]] = [
    ("year_month_day", re.compile(_EDGE_L + _ISO)),
    ("compact", re.compile(r"(?<!\d)(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})(?!\d)")),
    (
        "numeric",
        re.compile(
            _EDGE_L
            + r"(?P<a>\d{1,2})(?P<sep>[-/.])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})"
            + _EDGE_R
        ),
    ),
    (
        "month_day_year",
        re.compile(
            _EDGE_L + _MONTH + r"\s+(?:the\s+)?" + _DAY + r",?\s+(?:of\s+)?" + _YEAR + _EDGE_R,
            re.I,
        ),
    ),
    (
        "day_month_year",
        re.compile(
            _EDGE_L
            + r"(?:the\s+)?"
            + _DAY
            + r"(?:\s+of\s+|\s+)"
            + _MONTH
            + r",?\s+"
            + _YEAR
            + _EDGE_R,
            re.I,
        ),
    ),
    (
        "day_month_year",
        re.compile(_EDGE_L + _DAY + r"-" + _MONTH + r"-(?P<year>\d{4}|\d{2})" + _EDGE_R, re.I),
    ),
    (
        "year_month_day",
        re.compile(_EDGE_L + r"(?P<year>\d{4})[-\s]" + _MONTH + r"[-\s]" + _DAY + _EDGE_R, re.I),
    ),
]


def _year(text: str) -> list[int]:
    text = text.lstrip("'")
    if len(text) == 4:
        return [int(text)]
    return [2000 + int(text), 1900 + int(text)]  # a two-digit year, in either century


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _readings(form: str, found: re.Match[str]) -> list[tuple[str, date]]:
    """The dates a match can mean, each with the rendering that names it."""
    parts = found.groupdict()
    years = _year(parts["year"])
    short_year = "_two_digit_year" if len(parts["year"].lstrip("'")) == 2 else ""
    if form == "numeric":
        a, b, sep = int(parts["a"]), int(parts["b"]), parts["sep"]
        orders = [("month_first", a, b), ("day_first", b, a)]
        return [
            (f"numeric_{order}{short_year} ({sep})", d)
            for order, month, day in orders
            for y in years
            if (d := _day(y, month, day)) is not None
        ]
    month = parts["month"]
    if month.isdigit():
        number = int(month)
        if form == "compact":
            rendering = "compact"
        elif parts["sep"] == "-":
            padded = len(month) == 2 and len(parts["day"]) == 2
            rendering = "iso" if padded else "iso_unpadded"
        else:
            rendering = f"year_month_day ({parts['sep']})"
    else:
        number = _MONTHS[month.rstrip(".").lower()]
        spelled = month.rstrip(".")
        name = (
            "name" if len(spelled) > 4 or spelled.lower() in ("may", "june", "july") else "abbrev"
        )
        ordinal = "_ordinal" if re.search(r"\d(?:st|nd|rd|th)", found.group(0), re.I) else ""
        rendering = f"{form}_{name}{ordinal}{short_year}"
    return [(rendering, d) for y in years if (d := _day(y, number, int(parts["day"]))) is not None]


def date_spans(text: str) -> list[tuple[int, int, str, str, date]]:
    """What :func:`find_dates` finds, in the same order, each with where it is in
    ``text``: (start, end, the text, the rendering, the date)."""
    found = []
    for form, pattern in _FORMS:
        for match in pattern.finditer(text):
            for rendering, day in _readings(form, match):
                found.append((match.start(), match.end(), match.group(0), rendering, day))
    return found


def find_dates(text: str) -> list[tuple[str, str, date]]:
    """Every full date (day, month and year) written in ``text``, as (the text, the
    rendering, the date). Numeric day-month forms such as ``3/1/23`` give both readings
    and two-digit years both centuries; relative phrases ("yesterday") and dates without
    a year are not dates here, since they would resolve against the day of reading."""
    return [(written, rendering, day) for _, _, written, rendering, day in date_spans(text)]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def name_words(issuer: str) -> list[str]:
    """The words that name an issuer, as the matcher compares them: lower case, letters
    and digits, without the legal suffixes (``Inc``, ``Corp``, ``The`` ...)."""
    return [w for w in _words(issuer) if w not in _SUFFIXES]


def _word_spans(text: str) -> list[tuple[str, int, int]]:
    """``_words(text)`` with each word's place in ``text`` itself. A few characters grow
    when lowered (U+0130 is two), so a text that is not ASCII is lowered one character at
    a time; only Final_Sigma lowers by context, and it never gives a letter a-z, so the
    words are those ``_words`` reads."""
    if text.isascii():
        return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text.lower())]
    lowered: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        low = char.lower()
        lowered.append(low)
        origin.extend([i] * len(low))
    flat = "".join(lowered)
    return [(m.group(0), origin[m.start()], origin[m.end() - 1] + 1) for m in _WORD.finditer(flat)]


def issuer_span(answer: str, issuer: str | None, ticker: str | None) -> tuple[str, int, int] | None:
    """Whether ``answer`` names the issuer, and where: (``"name"`` or ``"ticker"``, start,
    end) of the first naming, or None. The name counts when its words (``name_words``)
    follow one another in the answer's words; a ticker of two or more characters as a
    whole token (case as written); a one-letter ticker only after ``$``, ``(`` or
    ``ticker``."""
    if issuer:
        core = name_words(issuer)
        if core:
            spans = _word_spans(answer)
            size = len(core)
            for at in range(len(spans) - size + 1):
                if all(spans[at + k][0] == word for k, word in enumerate(core)):
                    return "name", spans[at][1], spans[at + size - 1][2]
    if ticker and len(ticker) >= 2:
        found = re.search(rf"(?<![A-Za-z0-9]){re.escape(ticker)}(?![A-Za-z0-9])", answer)
        if found:
            return "ticker", found.start(), found.end()
    if ticker and len(ticker) == 1:
        found = re.search(rf"(\$|\(|ticker:?\s*){re.escape(ticker)}\b", answer)
        if found:
            return "ticker", found.start(), found.end()
    return None


def _issuer_named(answer: str, issuer: str | None, ticker: str | None) -> str | None:
    found = issuer_span(answer, issuer, ticker)
    return None if found is None else found[0]


def answer_key(main_row: dict[str, Any]) -> dict[str, Any]:
    days = {main_row["partition_date"]}
    if main_row.get("acceptance_at"):
        days.add(datetime.fromisoformat(main_row["acceptance_at"]).date().isoformat())
    return {
        "dates": sorted(days),
        "issuer": main_row.get("issuer"),
        "ticker": main_row.get("ticker"),
    }


def score_answer(answer: str, key: dict[str, Any]) -> dict[str, Any]:
    days = {date.fromisoformat(text) for text in key["dates"]}
    hits = [(text, rendering) for text, rendering, day in find_dates(answer) if day in days]
    matched = sorted({text for text, _ in hits})
    years = {str(day.year) for day in days}
    year_only = not matched and any(re.search(rf"(?<!\d){y}(?!\d)", answer) for y in years)
    how = _issuer_named(answer, key.get("issuer"), key.get("ticker"))
    return {
        "date_recovered": bool(matched),
        "matched": matched,
        "renderings": sorted({rendering for _, rendering in hits}),
        "year_recovered": year_only,
        "issuer_recovered": how is not None,
        "issuer_matched_by": how,
    }


MAX_ANSWER = 2000  # characters of an answer kept, and scored: what is scored is what is stored


def verdict(items: list[dict[str, Any]]) -> str:
    """Over the items the agent answered: an item where the agent failed says nothing
    about the mask, so it is left out; with none left the probe is inconclusive."""
    answered = [i for i in items if not i.get("agent_error")]
    if not items:
        return "no_items"
    if not answered:
        return "inconclusive"
    return "mask_leaks" if any(i["score"]["date_recovered"] for i in answered) else "mask_holds"
