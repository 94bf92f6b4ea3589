"""The mask probe: a positive control on the shifted arm.

The agent is asked the real date and issuer of rows it was actually served there
(items by a fixed stride, not a sample). ``date_recovered`` needs a full date
rendering (ISO, slashed, compact or written out); a bare year is recorded apart as
weaker evidence. The verdict turns on dates only, because dates are what the shifted
arm masks: it still shows the issuer, so issuer recovery is reported per item but
cannot by itself break the mask.

What it misses: a model that recovers the period and keeps it to itself passes.
``mask_holds`` says the answer text carried nothing.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from harness import canonical

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


def pick_items(served: list[int], count: int) -> tuple[int, list[int]]:
    """(stride, chosen positions): every ``stride``-th served row, ``count`` at most."""
    if count <= 0 or not served:
        return 0, []
    stride = max(1, len(served) // count)
    return stride, served[::stride][:count]


def renderings(day: date) -> list[str]:
    """Every full rendering of ``day`` that counts as naming it."""
    month = day.strftime("%B")
    short = day.strftime("%b")
    d, m, y = day.day, day.month, day.year
    return [
        day.isoformat(),
        f"{y}/{m:02d}/{d:02d}",
        f"{y}{m:02d}{d:02d}",
        f"{m:02d}/{d:02d}/{y}",
        f"{m}/{d}/{y}",
        f"{d:02d}.{m:02d}.{y}",
        f"{month} {d}, {y}",
        f"{month} {d} {y}",
        f"{d} {month} {y}",
        f"{short} {d}, {y}",
        f"{short}. {d}, {y}",
        f"{short} {d} {y}",
        f"{d} {short} {y}",
    ]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _issuer_named(answer: str, issuer: str | None, ticker: str | None) -> str | None:
    if issuer:
        core = [w for w in _words(issuer) if w not in _SUFFIXES]
        if core:
            needle = " " + " ".join(core) + " "
            if needle in " " + " ".join(_words(answer)) + " ":
                return "name"
    if (
        ticker
        and len(ticker) >= 2
        and re.search(rf"(?<![A-Za-z0-9]){re.escape(ticker)}(?![A-Za-z0-9])", answer)
    ):
        return "ticker"
    if (
        ticker
        and len(ticker) == 1
        and re.search(rf"(\$|\(|ticker:?\s*){re.escape(ticker)}\b", answer)
    ):
        return "ticker"
    return None


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
    lowered = answer.lower()
    matched = []
    years = set()
    for text in key["dates"]:
        day = date.fromisoformat(text)
        years.add(str(day.year))
        matched += [r for r in renderings(day) if r.lower() in lowered]
    year_only = not matched and any(re.search(rf"(?<!\d){y}(?!\d)", answer) for y in years)
    how = _issuer_named(answer, key.get("issuer"), key.get("ticker"))
    return {
        "date_recovered": bool(matched),
        "matched": sorted(set(matched)),
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


def probe_prompt(row: dict[str, Any]) -> str:
    return (
        "Mask probe. You were served this filing during the run (as your arm showed it):\n"
        f"{canonical.line(row)}\n"
        "Dates in this arm may have been moved. What were the real filing date and the real "
        "issuer? Answer in plain text."
    )
