"""A board's filters and page, read from a query (or a form): one public reader that the
board's pages, its API and the snapshot form share; and the filters normalised, as a
stored board and a snapshot are keyed by them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import date
from typing import Any, NamedTuple

from django.contrib.auth.models import AnonymousUser, User

from harness import canonical
from harness.rundata.benchmark import is_key
from pitweb.board.keys import Cursor
from pitweb.core.errors import SubmissionError
from pitweb.core.params import PageQuery, validated
from pitweb.runs.models import CutoffRelation

FILTERS = ("benchmark", "release", "form", "start", "end")
# a board query's parameters: an old board address (``/?release=...``) carries them
BOARD_PARAMS = (
    "benchmark",
    "release",
    "form",
    "start",
    "end",
    "isolated",
    "cutoff",
    "page",
    "after",
    "before",
)
# the filters that choose benchmarks (a benchmark fixes each of them)
CHOOSERS = ("release", "form", "start", "end")
# ?cutoff=: the runs whose window lies wholly after their model's declared training
# cutoff (a holdout for that model), by the receipt's P2 check
CUTOFFS = {"post": CutoffRelation.POST_CUTOFF}


class BoardQuery(NamedTuple):
    """What a board request asks for: its filters, its page, and its cursors (after,
    before) when it pages by key."""

    filters: dict[str, Any]
    page: int
    cursors: tuple[str | None, str | None]


def board_query(params: Mapping[str, Any], user: User | AnonymousUser) -> BoardQuery:
    """The board query of a request's parameters (``SubmissionError`` if bad)."""
    return BoardQuery(board_filters(params, user), page_number(params), cursors(params))


def board_filters(params: Mapping[str, Any], user: User | AnonymousUser) -> dict[str, Any]:
    """The filters ``params`` (a query or a form) give, with who asks (``user``)."""
    return {
        "user": user,
        "benchmark": benchmark(params.get("benchmark")),
        "release": params.get("release") or None,
        "form": params.get("form") or None,
        "start": day(params.get("start")),
        "end": day(params.get("end")),
        "isolated": params.get("isolated") in ("1", "true", "on"),
        "cutoff": cutoff(params.get("cutoff")),
    }


def cutoff(value: str | None) -> str | None:
    """``?cutoff=post`` as given (``SubmissionError`` for any other value)."""
    if not value:
        return None
    if value not in CUTOFFS:
        raise SubmissionError(
            "invalid_cutoff",
            f"cutoff: {' or '.join(map(repr, CUTOFFS))} (runs whose window lies after their "
            f"model's declared training cutoff), not {value[:80]!r}",
        )
    return value


def benchmark(value: str | None) -> str | None:
    """A benchmark key as given (``SubmissionError`` if it is not written as one)."""
    if not value:
        return None
    if not is_key(value):
        raise SubmissionError(
            "invalid_benchmark", f"{value[:80]!r} is not a benchmark key (32 hex digits)"
        )
    return value


def pinned(key: str, filters: dict[str, Any]) -> dict[str, Any]:
    """The filters of one benchmark's board: the benchmark, ``isolated`` and ``cutoff``
    if given (the others are fixed by the benchmark), and who asks if given."""
    found: dict[str, Any] = {name: None for name in FILTERS} | {"benchmark": key}
    found["isolated"] = bool(filters.get("isolated"))
    found |= {"cutoff": filters["cutoff"]} if filters.get("cutoff") else {}
    return found | ({"user": filters["user"]} if "user" in filters else {})


def day(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise SubmissionError("invalid_date", f"{value!r} is not a date (YYYY-MM-DD)") from None


def page_number(params: Mapping[str, Any]) -> int:
    return max(1, validated(PageQuery, params).get("page") or 1)


def cursors(params: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """``after`` or ``before`` (a row's cursor, checked), not both."""
    after, before = (params.get(name) or None for name in ("after", "before"))
    if after and before:
        raise SubmissionError("invalid_cursor", "give after or before, not both")
    for text in (after, before):
        if text is not None:
            Cursor.parse(text)
    return after, before


def every_row(params: Mapping[str, Any]) -> bool:
    """``?all=1``: every run, no pages."""
    return params.get("all") in ("1", "true")


def normalised(filters: dict[str, Any]) -> dict[str, Any]:
    """The filters a board is drawn with: benchmark, release, form, start and end (or
    None) and isolated; and cutoff only when it is set, so that every board key and
    snapshot drawn without it reads as it always has."""
    found: dict[str, Any] = {name: filters.get(name) or None for name in FILTERS}
    found["isolated"] = bool(filters.get("isolated"))
    found |= {"cutoff": filters["cutoff"]} if filters.get("cutoff") else {}
    return found


def board_key(filters: dict[str, Any]) -> str:
    """A stored board's key."""
    text = json.dumps(normalised(filters), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def filters_key(filters: dict[str, Any]) -> str:
    """The filters a snapshot was drawn with, normalised, as canonical JSON."""
    return canonical.dumps(normalised(filters))
