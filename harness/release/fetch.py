"""Fetch new days from EDGAR into an inbox, and grow a release from what arrived.

The inbox mirrors what the SEC serves, one file per thing fetched::

    daily-index/company.YYYYMMDD.idx      a day's index (sorted by company name)
    daily-index/company.YYYYMMDD.absent   the SEC had no index for the day (a holiday)
    headers/<accession>.hdr.sgml          a filing's header (its acceptance time)
    headers/<accession>.absent            the SEC had no header for it

What is in the inbox is never fetched again, so a fetch interrupted or run twice asks
the SEC only for what is missing. The SEC's fair-access rules (docs/release.md): a
User-Agent naming who asks, and at most 10 requests a second in total; a client that
breaks them is blocked.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from harness.release.append import append_edgar
from harness.release.bundle import Bundle
from harness.release.edgar_index import read_index
from harness.release.store import ReleaseError

INDEX_DIR = "daily-index"
HEADER_DIR = "headers"
ABSENT = ".absent"
# the largest body read (the biggest daily indexes are a few MB)
MAX_BODY = 64 * 1024 * 1024
MAX_REDIRECTS = 5


class FetchError(ReleaseError):
    """EDGAR could not be read (network, an unexpected status, a redirect off the host):
    worth trying again later, unlike a missing day."""


class RateLimiter:
    """At most ``per_second`` acquisitions in any one-second span.

    A sliding window over the last ``per_second`` stamps rather than a fixed tick, so a
    burst at the end of one second and the start of the next cannot double the rate.
    ``clock`` and ``sleep`` are injectable so a test checks the limit without waiting.
    """

    def __init__(
        self,
        per_second: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_second < 1:
            raise ValueError("at least one request a second")
        self.per_second = per_second
        self.clock, self.sleep = clock, sleep
        self.stamps: deque[float] = deque(maxlen=per_second)
        self.history: list[float] = []  # every acquisition's stamp, for the record

    def acquire(self) -> None:
        if len(self.stamps) == self.per_second:
            wait = self.stamps[0] + 1.0 - self.clock()
            if wait > 0:
                self.sleep(wait)
        now = self.clock()
        self.stamps.append(now)
        self.history.append(now)


def index_url(base_url: str, day: date) -> str:
    """Where the SEC serves ``day``'s daily index sorted by company name."""
    quarter = (day.month - 1) // 3 + 1
    return (
        f"{base_url.rstrip('/')}/Archives/edgar/daily-index/{day.year}/QTR{quarter}/"
        f"company.{day:%Y%m%d}.idx"
    )


def header_url(base_url: str, cik: str, accession: str) -> str:
    """Where the SEC serves a filing's header."""
    return (
        f"{base_url.rstrip('/')}/Archives/edgar/data/{int(cik)}/"
        f"{accession.replace('-', '')}/{accession}.hdr.sgml"
    )


def index_name(day: date) -> str:
    return f"company.{day:%Y%m%d}.idx"


class Fetcher:
    """One polite client: the User-Agent on every request, the rate limit across all of
    them, redirects followed only within the base URL's host."""

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str,
        limiter: RateLimiter,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
    ) -> None:
        if not user_agent.strip():
            raise FetchError("EDGAR asks every client to name itself: give a User-Agent")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError(f"base URL {base_url!r} is not an http(s) URL")
        self.base_url, self.host = base_url, parts.netloc
        self.limiter = limiter
        self.client = httpx.Client(
            headers={"User-Agent": user_agent},
            follow_redirects=False,
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self.client.close()

    def get(self, url: str) -> bytes | None:
        """The body at ``url``; None for a 404 (the SEC has no such file)."""
        scheme = urlsplit(url).scheme
        for _ in range(MAX_REDIRECTS + 1):
            self.limiter.acquire()
            try:
                with self.client.stream("GET", url) as response:
                    if response.is_redirect:
                        target = urljoin(url, response.headers.get("location", ""))
                        parts = urlsplit(target)
                        if parts.netloc != self.host or parts.scheme != scheme:
                            raise FetchError(
                                f"{url}: redirected to {target}, off {scheme}://{self.host}; refused"
                            )
                        url = target
                        continue
                    if response.status_code == 404:
                        return None
                    if response.status_code != 200:
                        raise FetchError(f"{url}: HTTP {response.status_code}")
                    return _bounded(url, response)
            except httpx.HTTPError as exc:
                raise FetchError(f"{url}: {exc}") from None
        raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _bounded(url: str, response: httpx.Response) -> bytes:
    """The body, read no further than MAX_BODY bytes: a daily index is a few MB, a header
    a few KB; a server that sends more is refused, never held in memory whole."""
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > MAX_BODY:
            raise FetchError(f"{url}: more than {MAX_BODY} bytes; refused")
    return bytes(body)


def _store(path: Path, data: bytes, *, index: bool = False) -> None:
    """Write whole or not at all: a half-written file would be read as fetched. An
    index is read before it is kept: a page that is not one (an error page served with
    200) would otherwise sit in the inbox as a fetched day."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    if index:
        try:
            read_index(partial)
        except ReleaseError as exc:
            partial.unlink()
            raise FetchError(f"{path.name}: what EDGAR sent is not a daily index ({exc})") from None
    os.replace(partial, path)


def fetch_days(
    base_url: str,
    *,
    user_agent: str,
    inbox: Path,
    days: Sequence[date],
    max_per_second: int = 10,
    forms: Collection[str] | None = None,
    limiter: RateLimiter | None = None,
    transport: httpx.BaseTransport | None = None,
) -> list[Path]:
    """Fetch each day's daily index, then the header of each of its filings whose form
    is in ``forms`` (every filing when None), into ``inbox``; return the index files the
    inbox holds for ``days`` (a day the SEC has no index for is recorded, not fatal).

    Raises ``FetchError`` when EDGAR cannot be read; what was stored stays stored.
    """
    inbox = Path(inbox)
    (inbox / INDEX_DIR).mkdir(parents=True, exist_ok=True)
    (inbox / HEADER_DIR).mkdir(parents=True, exist_ok=True)
    fetcher = Fetcher(
        base_url,
        user_agent=user_agent,
        limiter=limiter or RateLimiter(max_per_second),
        transport=transport,
    )
    found: list[Path] = []
    try:
        for day in sorted(set(days)):
            path = inbox / INDEX_DIR / index_name(day)
            absent = path.with_suffix(ABSENT)
            if not path.exists() and not absent.exists():
                data = fetcher.get(index_url(base_url, day))
                if data is None:
                    absent.write_text("404\n")
                    continue
                _store(path, data, index=True)
            if not path.exists():
                continue
            found.append(path)
            for listing in read_index(path).listings:
                if forms is not None and listing["form"] not in forms:
                    continue
                accession = listing["accession"]
                header = inbox / HEADER_DIR / f"{accession}.hdr.sgml"
                if header.exists() or header.with_suffix(ABSENT).exists():
                    continue
                data = fetcher.get(header_url(base_url, listing["path_cik"], accession))
                if data is None:
                    header.with_suffix(ABSENT).write_text("404\n")
                else:
                    _store(header, data)
    finally:
        fetcher.close()
    return found


def inbox_days(inbox: Path) -> dict[date, Path | None]:
    """Every day the inbox has heard of: its index file, or None when the SEC had none."""
    days: dict[date, Path | None] = {}
    for path in sorted((Path(inbox) / INDEX_DIR).glob("company.*")):
        stem, _, suffix = path.name.partition(".")[2].partition(".")
        if suffix not in ("idx", ABSENT.lstrip(".")) or not stem.isdigit():
            continue
        day = date(int(stem[:4]), int(stem[4:6]), int(stem[6:]))
        days[day] = path if suffix == "idx" else days.get(day)
    return days


def grow_from_inbox(
    parent: str | os.PathLike[str],
    inbox: Path,
    out: str | os.PathLike[str],
    *,
    row_key_secret: bytes,
    name: str | None = None,
) -> dict[str, Any] | None:
    """The version of ``parent`` adding every day the inbox holds after its window, with
    the headers the inbox holds for those days' filings; None when the inbox holds no
    new filing. The window ends on the last day heard of, a holiday included. A listing
    dated inside the parent's window (a daily index lists a few late ones) is left out
    and counted."""
    end = Bundle.load(parent).manifest["window"]["end"]
    later = {d: p for d, p in inbox_days(inbox).items() if d.isoformat() > end}
    index_files = [p for p in later.values() if p is not None]
    if not index_files:
        return None
    wanted = {item["accession"] for path in index_files for item in read_index(path).listings}
    headers = sorted(
        p for p in (Path(inbox) / HEADER_DIR).glob("*.hdr.sgml") if p.name[:-9] in wanted
    )
    return append_edgar(
        parent,
        out,
        index_files=index_files,
        acceptance_files=headers,
        row_key_secret=row_key_secret,
        name=name,
        end=max(later).isoformat(),
        leave_out_backdated=True,
    )
