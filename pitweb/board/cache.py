"""Which board queries are cached, and how: only those a visitor could reach by
following the board's own links. A query whose every value names what the public board
holds (a release, form and window of a public run, a page that exists) is cached under
its parsed, normalised values; any other query (an unknown value, a page past the end,
parameters the board does not read) is answered without touching the cache, so random
query strings cannot fill it. The facets are those the worker stored with the whole
board. A cached answer is keyed by the board's stamp (``stamp.board_stamp``), rendered
by one request at a time (``served``) and read back in one cache read (``cached``), or
none: under its key an answer never changes, so each process keeps its own copy too
(``pitweb.cache.near``), until the deadline the shared entry has."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Collection
from typing import Any, NamedTuple, TypeVar, cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache

from pitweb.board.filters import board_key
from pitweb.board.models import StoredBoard
from pitweb.board.query import PER_PAGE
from pitweb.board.stamp import Stamp
from pitweb.cache import near
from pitweb.runs.selectors import visible_runs

TIMEOUT = 300
# a render that takes longer than this (or whose process died) no longer holds the key
RENDER_LOCK_SECONDS = 10
T = TypeVar("T")


def public_facets(
    among: Collection[int] | None = None,
    held: dict[str, Any] | None = None,
    ranked: int | None = None,
) -> dict[str, Any]:
    """What the public board holds: every release (name and digest), form, window start
    and end of a public run, and how many pages its runs fill (computed by the worker
    with the whole board, ``store``). ``among`` and ``held``: the values of only
    these runs added to the facets held (a run that left public view needs the whole
    scan, since another run may still hold its values). ``ranked``: the whole board's
    ranked rows, which bound the pages of every board (else the public runs, counted)."""
    public = visible_runs(AnonymousUser())
    read = public if among is None else public.filter(pk__in=among)
    runs = read.values_list(
        "release__name",
        "release_digest",
        "forms",
        "window_start",
        "window_end",
        "benchmark__key",
    ).distinct()  # the database reduces them: a few rows however many runs
    names = ("benchmark", "release", "form", "start", "end")
    found = {name: set((held or {}).get(name, ())) for name in names}
    for name, digest, joined, start, end, benchmark in runs.order_by():
        found["benchmark"].add(benchmark or "")
        found["release"].update(v for v in (name, digest) if v)
        found["form"].update(f for f in (joined or "").split(",") if f)
        found["start"].add(start.isoformat() if start else "")
        found["end"].add(end.isoformat() if end else "")
    return {
        **{name: sorted(found[name]) for name in names},
        "pages": max(1, math.ceil((public.count() if ranked is None else ranked) / PER_PAGE)),
    }


def _facets(stamp: Stamp) -> dict[str, Any]:
    """The facets as the whole stored board was last computed with them (read from its
    row, no scan of the runs), or computed here while there is none; once per stamp."""
    key = f"board-facets:{stamp.version}.{stamp.computed}"
    found = cache.get(key)
    if found is None:
        stored = (
            StoredBoard.objects.filter(key=board_key({}), built_version__gte=0)
            .values_list("facets", flat=True)
            .first()
        )
        found = {
            name: set(values) if isinstance(values, list) else values
            for name, values in (stored or public_facets()).items()
        }
        cache.set(key, found, timeout=TIMEOUT)
    return cast(dict[str, Any], found)


class Key(NamedTuple):
    """A board query's cache entry at a stamp, and the entry of the last answer rendered
    for the same query in the same epoch."""

    exact: str
    last: str


def key(
    kind: str,
    stamp: Stamp,
    filters: dict[str, Any],
    page: int = 1,
    every: bool = False,
    rows: int | None = None,
) -> Key | None:
    """The cache keys of a public board query (``filters`` as parsed: benchmark, release,
    form, start, end, isolated, cutoff) at ``stamp`` (``stamp.board_stamp``), or None when the query is
    not one the board links to. ``rows``: its pages' rows, when fewer than the API's."""
    facets = _facets(stamp)
    for name in ("benchmark", "release", "form", "start", "end"):
        value = filters.get(name)
        if value is not None and value not in facets.get(name, ()):
            return None
    if not 1 <= page <= facets["pages"] * -(-PER_PAGE // (rows or PER_PAGE)):
        return None
    return _key(kind, stamp, filters, page, every)


def cached(
    kind: str, stamp: Stamp, filters: dict[str, Any], page: int = 1, every: bool = False
) -> Any | None:
    """The answer stored for a board query at ``stamp``, or None: this process's copy,
    else one cache read; no facets read. Only a query ``key`` accepts is ever stored
    (``served``), so any other query misses here and is then judged by ``key``."""
    return _read(_key(kind, stamp, filters, page, every).exact)


def _read(exact: str) -> Any | None:
    found = near.get(exact)
    if found is None:
        stored = cache.get(exact)  # (deadline, answer); anything else is not ours to serve
        if _deadline(stored) > time.time():
            found = stored[1]
            near.put(exact, found, until=stored[0])
    return found


def _deadline(stored: Any) -> float:
    """The deadline of a cached answer, or 0 for what is not one (an entry an earlier
    release of the site left: the answer alone)."""
    if isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], float):
        return stored[0]
    return 0.0


def _key(kind: str, stamp: Stamp, filters: dict[str, Any], page: int, every: bool) -> Key:
    values = [filters.get(n) or "" for n in ("benchmark", "release", "form", "start", "end")]
    values += [bool(filters.get("isolated")), page, every]
    # only when set: every other query keeps the key it always had
    values += [filters["cutoff"]] if filters.get("cutoff") else []
    # unambiguous and short whatever a release's name holds
    digest = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:32]
    return Key(
        f"{kind}:{stamp.version}.{stamp.computed}:{digest}",
        f"{kind}:last-at.{stamp.epoch}:{digest}",
    )


def served(found: Key | None, render: Callable[[], tuple[T, bool]]) -> T:
    """The answer cached under ``found``, or rendered (``render`` gives the answer and
    whether its board is current). A query is rendered at most once per
    ``PITWEB_BOARD_RENDER_MS``: within that time of its last render (in the same epoch)
    the last answer is served, however often the board changed meanwhile (a board that
    changes several times a second would otherwise be rendered as often). One request
    renders a key at a time: the others are meanwhile served the last answer, or render it
    themselves when there is none (never one from before a run left public view, once
    the request's stamp has seen it go: ``stamp.board_stamp``). An answer from a board
    being computed again is kept only for the seconds a worker is given
    (PITWEB_BOARD_STALE_SECONDS), after which a visitor may compute it."""
    if found is None:
        return render()[0]
    cached = _read(found.exact)
    if cached is not None:
        return cast(T, cached)
    last = cache.get(found.last)  # (rendered at, answer)
    if last is not None and time.time() - last[0] < settings.PITWEB_BOARD_RENDER_MS / 1000:
        return cast(T, last[1])
    lock = f"{found.exact}:rendering"
    mine = cache.add(lock, 1, timeout=RENDER_LOCK_SECONDS)
    if not mine and last is not None:
        return cast(T, last[1])
    try:
        value, current = render()
        timeout = TIMEOUT if current else settings.PITWEB_BOARD_STALE_SECONDS
        if timeout:
            until = time.time() + timeout
            cache.set(found.exact, (until, value), timeout=timeout)
            near.put(found.exact, value, until=until)
        cache.set(found.last, (time.time(), value), timeout=TIMEOUT)
    finally:
        if mine:
            cache.delete(lock)
    return value
