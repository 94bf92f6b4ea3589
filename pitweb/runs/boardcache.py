"""Which board queries are cached: only those a visitor could reach by following the
board's own links. A query whose every value names what the public board holds (a
release, form and window of a public run, a page that exists) is cached under its
parsed, normalised values; any other query (an unknown value, a page past the end,
parameters the board does not read) is answered without touching the cache, so random
query strings cannot fill it. The facets are computed once per board version."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache

TIMEOUT = 300


def _facets(version: int) -> dict[str, Any]:
    from pitweb.runs.selectors import PER_PAGE, visible_runs

    key = f"board-facets:{version}"
    found = cache.get(key)
    if found is None:
        public = visible_runs(AnonymousUser())
        runs = public.values_list(
            "release__name", "release_digest", "forms", "window_start", "window_end"
        ).distinct()  # the database reduces them: a few rows however many runs
        releases: set[str] = set()
        forms: set[str] = set()
        starts: set[str] = set()
        ends: set[str] = set()
        count = public.count()
        for name, digest, joined, start, end in runs.order_by():
            releases.update(v for v in (name, digest) if v)
            forms.update(f for f in (joined or "").split(",") if f)
            starts.add(start.isoformat() if start else "")
            ends.add(end.isoformat() if end else "")
        found = {
            "release": releases, "form": forms, "start": starts, "end": ends,
            "pages": max(1, math.ceil(count / PER_PAGE)),
        }  # fmt: skip
        cache.set(key, found, timeout=TIMEOUT)
    return found  # type: ignore[no-any-return]


def key(
    kind: str,
    stamp: tuple[int, int],
    filters: dict[str, Any],
    page: int = 1,
    every: bool = False,
) -> str | None:
    """The cache key of a public board query (``filters`` as parsed: release, form, start,
    end, isolated) at ``stamp`` (``board.board_stamp``), or None when the query is not one
    the board links to."""
    version, computed = stamp
    facets = _facets(version)
    for name in ("release", "form", "start", "end"):
        value = filters.get(name)
        if value is not None and value not in facets[name]:
            return None
    if not 1 <= page <= facets["pages"]:
        return None
    values = [filters.get(n) or "" for n in ("release", "form", "start", "end")]
    values += [bool(filters.get("isolated")), page, every]
    # unambiguous and short whatever a release's name holds
    digest = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:32]
    return f"{kind}:{version}.{computed}:{digest}"


def get(found: str | None) -> Any:
    return None if found is None else cache.get(found)


def put(found: str | None, value: Any) -> None:
    if found is not None:
        cache.set(found, value, timeout=TIMEOUT)
