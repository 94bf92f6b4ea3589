"""A deterministic synthetic release: same arguments, same bytes.

The mix imitates EDGAR: Form 4 dominates, 8-Ks and prospectus supplements follow,
annual reports bunch in February and March; most filings land on EDGAR business
days, a few on weekends and federal holidays; exactly the given fraction of rows carry
an acceptance stamp (none in a month the seed's release leaves unstamped), spread over the pre-open, exactly 09:30:00, the session, the late afternoon
and after 17:30 (which moves a filing to the next business day's date, except for
Forms 3, 4, 5 and 144, which keep their date until 22:00).
"""

from __future__ import annotations

import os
import random
from datetime import date, datetime, time, timedelta
from itertools import accumulate
from typing import Any
from zoneinfo import ZoneInfo

from pandas.tseries.holiday import USFederalHolidayCalendar

from harness.progress import OnProgress
from harness.release.keys import SCHEME, row_key, synthetic_secret
from harness.release.store import write_release

NEW_YORK = ZoneInfo("America/New_York")
SEED_ROWS = 287_929
SEED_STAMPED = 3_124
DEFAULT_ACCEPTANCE_FRACTION = SEED_STAMPED / SEED_ROWS
# The seed's release carries no acceptance stamp in November 2022 (so a window there has
# identical pit and dump cells by construction); a synthetic release stamps none either.
UNSTAMPED_MONTHS = frozenset({(2022, 11)})

FORM_WEIGHTS = {
    "4": 36.0,
    "8-K": 9.0,
    "424B2": 11.0,
    "SC 13G/A": 5.0,
    "SC 13G": 2.5,
    "D": 4.5,
    "10-Q": 3.5,
    "6-K": 3.5,
    "3": 2.5,
    "144": 3.0,
    "13F-HR": 2.0,
    "10-K": 2.0,
    "DEF 14A": 1.5,
    "497K": 3.0,
    "FWP": 4.0,
    "S-1": 0.4,
    "S-8": 0.8,
    "8-K/A": 0.8,
    "SC 13D": 0.6,
    "10-K/A": 0.3,
    "N-PORT-P": 3.0,
}
LATE_SAME_DAY_FORMS = frozenset({"3", "4", "5", "144"})
_STEMS = [
    "Apex",
    "Birch",
    "Cobalt",
    "Delta",
    "Ember",
    "Falcon",
    "Granite",
    "Harbor",
    "Iris",
    "Juniper",
    "Keystone",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orchid",
    "Pioneer",
    "Quarry",
    "Redwood",
    "Summit",
    "Tidal",
    "Umber",
    "Vertex",
    "Willow",
    "Xenon",
    "Yarrow",
    "Zephyr",
    "Atlas",
    "Beacon",
    "Cedar",
    "Dune",
    "Echo",
    "Fjord",
    "Glacier",
    "Horizon",
    "Ivory",
    "Jasper",
    "Kestrel",
    "Lotus",
    "Mesa",
    "Nova",
]
_KINDS = [
    "Therapeutics",
    "Holdings",
    "Energy",
    "Bancorp",
    "Financial",
    "Technologies",
    "Industries",
    "Realty",
    "Pharmaceuticals",
    "Systems",
    "Brands",
    "Capital",
    "Logistics",
    "Semiconductor",
    "Foods",
    "Minerals",
    "Networks",
    "Insurance",
    "Biosciences",
]
_SUFFIXES = ("Inc.", "Corp.", "Co.", "Ltd.", "plc", "LLC", "Group, Inc.", "N.V.")
_FILING_AGENTS = (1193125, 1104659, 1213900, 950170, 1628280, 1558370)


def _issuers(rng: random.Random, count: int) -> list[dict[str, Any]]:
    issuers: list[dict[str, Any]] = []
    names: set[str] = set()
    tickers: set[str] = set()
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    while len(issuers) < count:
        if rng.random() < 0.04:
            year = rng.choice((2019, 2020, 2021, 2022))
            name = f"{rng.choice(_STEMS)} Auto Receivables Trust {year}-{rng.choice('ABCD')}"
        else:
            name = f"{rng.choice(_STEMS)} {rng.choice(_KINDS)} {rng.choice(_SUFFIXES)}"
        if name in names:
            name = f"{name.rsplit(' ', 1)[0]} {len(issuers)} {name.rsplit(' ', 1)[1]}"
            if name in names:
                continue
        ticker = None
        if "Trust" not in name and rng.random() < 0.62:
            while ticker is None or ticker in tickers:
                ticker = "".join(rng.choice(letters) for _ in range(rng.choice((2, 3, 3, 4, 4))))
            tickers.add(ticker)
        names.add(name)
        cik = rng.randrange(1_000_000, 1_990_000)
        issuers.append(
            {"name": name, "ticker": ticker, "cik": cik, "weight": rng.paretovariate(1.3)}
        )
    return issuers


def _business_days(start: date, end: date) -> tuple[list[date], list[date]]:
    """EDGAR business days (weekdays that are not federal holidays) and the rest."""
    holidays = {
        d.date()
        for d in USFederalHolidayCalendar().holidays(
            start - timedelta(days=7), end + timedelta(days=14)
        )
    }
    open_days: list[date] = []
    closed_days: list[date] = []
    day = start
    while day <= end:
        (closed_days if day.weekday() >= 5 or day in holidays else open_days).append(day)
        day += timedelta(days=1)
    return open_days, closed_days


def _next_business_day(day: date, open_set: set[date]) -> date:
    day += timedelta(days=1)
    while day not in open_set:
        day += timedelta(days=1)
    return day


def _acceptance_time(rng: random.Random) -> time:
    roll = rng.random()
    if roll < 0.15:  # pre-open
        secs = rng.randrange(6 * 3600, 9 * 3600 + 30 * 60)
    elif roll < 0.18:  # exactly at the opening auction
        return time(9, 30, 0)
    elif roll < 0.63:  # during the session
        secs = rng.randrange(9 * 3600 + 30 * 60 + 1, 16 * 3600)
    elif roll < 0.83:  # after the close, before EDGAR's 17:30 cut-off
        secs = rng.randrange(16 * 3600, 17 * 3600 + 30 * 60 + 1)
    else:  # after 17:30
        secs = rng.randrange(17 * 3600 + 30 * 60 + 1, 22 * 3600)
    return time(secs // 3600, secs // 60 % 60, secs % 60)


def synth_rows(
    *, start: date, end: date, seed: int, rows: int, acceptance_fraction: float
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    issuers = _issuers(rng, max(40, rows // 40))
    return _draw_rows(
        rng,
        issuers,
        start=start,
        end=end,
        secret=synthetic_secret(seed),
        rows=rows,
        acceptance_fraction=acceptance_fraction,
        sequence={},
    )


def _draw_rows(
    rng: random.Random,
    issuers: list[dict[str, Any]],
    *,
    start: date,
    end: date,
    secret: bytes,
    rows: int,
    acceptance_fraction: float,
    sequence: dict[tuple[int, int], int],
) -> list[dict[str, Any]]:
    """``rows`` filings of ``issuers`` dated ``start..end``; ``sequence`` holds the last
    accession sequence number used per (filer agent, two-digit year), and is advanced."""
    open_days, closed_days = _business_days(start, end)
    if not open_days:
        raise ValueError(f"no EDGAR business day between {start} and {end}")
    open_set = set(open_days) | {
        d for d in _business_days(end + timedelta(days=1), end + timedelta(days=14))[0]
    }
    # Cumulative weights once: choices() would otherwise re-sum them on every draw.
    issuer_cum = list(accumulate(i["weight"] for i in issuers))
    forms = list(FORM_WEIGHTS)
    form_cum = list(accumulate(FORM_WEIGHTS.values()))
    annual_cum = list(accumulate(4.0 if d.month in (2, 3) else 1.0 for d in open_days))
    # First what each row is and on which day it would be filed; then which rows carry
    # a stamp: exactly round(fraction x rows) of them, none in a month the seed's
    # release leaves unstamped; then the stamps, and the days late ones move to.
    drafts = []
    for _ in range(rows):
        form = rng.choices(forms, cum_weights=form_cum)[0]
        issuer = rng.choices(issuers, cum_weights=issuer_cum)[0]
        if closed_days and rng.random() < 0.002:
            drafts.append((form, issuer, rng.choice(closed_days), True))  # weekend or holiday
        elif form in ("10-K", "10-K/A"):
            drafts.append((form, issuer, rng.choices(open_days, cum_weights=annual_cum)[0], False))
        else:
            drafts.append((form, issuer, rng.choice(open_days), False))
    eligible = [
        n
        for n, draft in enumerate(drafts)
        if (draft[2].year, draft[2].month) not in UNSTAMPED_MONTHS
    ]
    wanted = min(len(eligible), round(acceptance_fraction * rows))
    stamped = set(rng.sample(eligible, wanted))
    out = []
    for n, (form, issuer, base, closed) in enumerate(drafts):
        filed, accepted = base, None
        if n in stamped and closed:  # the same closed day, before the 17:30 cut-off
            secs = rng.randrange(6 * 3600, 17 * 3600 + 30 * 60)
            accepted = datetime.combine(
                base, time(secs // 3600, secs // 60 % 60, secs % 60), NEW_YORK
            )
        elif n in stamped:
            accepted = datetime.combine(base, _acceptance_time(rng), NEW_YORK)
            if accepted.time() > time(17, 30) and form not in LATE_SAME_DAY_FORMS:
                filed = _next_business_day(base, open_set)
                if filed > end:  # the next business day is past the window: stamp it earlier
                    filed, accepted = base, datetime.combine(base, time(17, 29, 59), NEW_YORK)
        agent = issuer["cik"] if rng.random() < 0.55 else rng.choice(_FILING_AGENTS)
        yy = filed.year % 100
        sequence[(agent, yy)] = sequence.get((agent, yy), 0) + 1
        accession = f"{agent:010d}-{yy:02d}-{sequence[(agent, yy)]:06d}"
        cik = f"{issuer['cik']:010d}"
        out.append(
            {
                "row_key": row_key(secret, accession),
                "accession": accession,
                "form": form,
                "cik": cik,
                "issuer": issuer["name"],
                "ticker": issuer["ticker"],
                "title": f"{form} - {issuer['name']} ({cik}) (Filer) {filed.isoformat()}",
                "partition_date": filed.isoformat(),
                "published_at": filed.isoformat(),
                "acceptance_at": accepted.isoformat() if accepted else None,
                "filename": f"edgar/data/{issuer['cik']}/{accession}.txt",
            }
        )
    return out


def synth_release(
    out: str | os.PathLike[str],
    *,
    start: date,
    end: date,
    seed: int,
    rows: int = SEED_ROWS,
    acceptance_fraction: float = DEFAULT_ACCEPTANCE_FRACTION,
    name: str | None = None,
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    """Write a synthetic release; return its manifest. ``on_progress`` hears (0, 0) while
    the rows are drawn, then (rows written, rows)."""
    if rows < 1:
        raise ValueError("--rows must be at least 1")
    if not 0.0 <= acceptance_fraction <= 1.0:
        raise ValueError("--acceptance-fraction must lie in [0, 1]")
    if start > end:
        raise ValueError(f"start {start} is after end {end}")
    if on_progress is not None:
        on_progress(0, 0)
    data = synth_rows(
        start=start, end=end, seed=seed, rows=rows, acceptance_fraction=acceptance_fraction
    )
    label = name or f"synthetic-{start:%Y%m%d}-{end:%Y%m%d}-s{seed}"
    return write_release(
        out,
        row_key_secret=synthetic_secret(seed),
        name=label,
        rows=data,
        window=(start.isoformat(), end.isoformat()),
        provenance=(
            "SYNTHETIC: generated by pit-harness release synth; issuers, tickers, filings and "
            "acceptance stamps are invented and describe no real company or event"
        ),
        source={
            "kind": "synthetic",
            "seed": seed,
            "row_keys": SCHEME.replace("the builder's", "derived from the seed"),
            "rows": rows,
            "acceptance_fraction": round(acceptance_fraction, 9),
        },
        on_progress=on_progress,
    )
