"""Text a person typed or sent, checked before the site stores it."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import QueryDict
from rest_framework.request import Request

from pitweb.core.errors import SubmissionError


def readable(value: str, what: str) -> str:
    """A text field the site will store: no NUL byte (no database stores one as text)."""
    if "\x00" in (value or ""):
        raise SubmissionError("unreadable_input", f"{what} holds a NUL byte")
    return value or ""


def require_reason(reason: str) -> str:
    """A staff action's reason, which is published with it: required, trimmed."""
    reason = readable(reason, "reason").strip()
    if not reason:
        raise SubmissionError(
            "reason_required", "staff actions need a reason; it is published with the action"
        )
    return reason


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object with a key twice is refused: which copy counts is never left to a parser."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"key {twice!r} appears twice in one object")
    return value


def read_json(data: bytes, what: str) -> Any:
    """JSON a person sent, read strictly: UTF-8, no NaN or Infinity, no key twice in one
    object, no deeper than PITWEB_MAX_JSON_DEPTH; SubmissionError saying which rule."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError("not_utf8", f"{what} is not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_no_repeats)
    except RecursionError:
        raise SubmissionError(
            "too_deep", f"{what} nests deeper than {settings.PITWEB_MAX_JSON_DEPTH} levels"
        ) from None
    except ValueError as exc:
        raise SubmissionError("invalid_json", f"{what} is not valid JSON ({exc})") from None
    if _depth(value) > settings.PITWEB_MAX_JSON_DEPTH:
        raise SubmissionError(
            "too_deep", f"{what} nests deeper than {settings.PITWEB_MAX_JSON_DEPTH} levels"
        )
    return value


def only_fields(request: Request, *, files: tuple[str, ...], data: tuple[str, ...] = ()) -> None:
    """Refuse a multipart field the endpoint does not take, and any field sent twice:
    which of two copies counts is never left to the parser."""
    if not isinstance(request.data, QueryDict):  # no body at all: nothing was parsed
        raise SubmissionError(
            "form_required",
            f"this endpoint takes a multipart/form-data body with {', '.join((*files, *data))}; "
            "the request had none",
        )
    unknown = sorted({*request.FILES.keys(), *request.data.keys()} - {*files, *data})
    if unknown:
        raise SubmissionError(
            "unknown_field",
            f"unknown multipart field(s): {', '.join(unknown)[:200]}; "
            f"this endpoint takes {', '.join((*files, *data))}",
        )
    counts = {name: len(request.FILES.getlist(name)) for name in files}
    for name in (*files, *data):  # plain values (a file field sent as text counts too)
        values = request.data.getlist(name)
        counts[name] = counts.get(name, 0) + sum(1 for v in values if isinstance(v, str))
    twice = sorted(name for name, n in counts.items() if n > 1)
    if twice:
        raise SubmissionError(
            "duplicate_field", f"field(s) sent more than once: {', '.join(twice)}"
        )
