"""Query, form and path parameters every app reads the same way: ids (``parse_id``,
``IdField``), a page number, a query through its serializer (``validated``), whose first
refused field is a ``SubmissionError`` named for it, and the digests and run keys a path
names (``parse_digest``, ``parse_run_key``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection
from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from pitweb.core.errors import SubmissionError, validation_message

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer

# -- query and form parameters -------------------------------------------------------
# One parser for every id a query or a form gives (``submission``, ``page``): ASCII
# digits only (``str.isdigit`` and ``int`` also take "²" or "٣"), a bounded length (so
# ``int`` never sees thousands of digits) and within the id column's range. Each query
# has its serializer; what fails it is a 400: the JSON envelope under /api/, the site's
# 400 page elsewhere.
DIGITS = re.compile(r"[0-9]+")


def id_max() -> int:
    """The largest value the database's id column holds."""
    # every table's id is the project's DEFAULT_AUTO_FIELD (settings)
    field = settings.DEFAULT_AUTO_FIELD.rpartition(".")[2]
    low_high = connection.ops.integer_field_range(field)
    return int(low_high[1] if low_high[1] is not None else 2**63 - 1)


def id_or_none(value: str) -> int | None:
    """The id a path segment gives, or None where it is none (answered as not found)."""
    try:
        return parse_id(value)
    except ValueError:
        return None


def parse_id(value: object) -> int | None:
    """The id ``value`` gives (a query's or a form's text, or a JSON number), None when
    it is absent or empty; a ValueError saying the rule otherwise."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):  # a JSON number
        value = str(value)
    top = id_max()
    if (
        isinstance(value, str)
        and len(value) <= len(str(top))
        and DIGITS.fullmatch(value)
        and int(value) <= top
    ):
        return int(value)
    raise ValueError(f"must be a whole number written with the digits 0-9, at most {top}")


@extend_schema_field(OpenApiTypes.INT)
class IdField(serializers.Field):  # type: ignore[type-arg]
    """An id in a query or a form, read by ``parse_id``; a parameter given twice is
    refused (which copy counts is never left to the parser)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, allow_null=True, **kwargs)

    def get_value(self, dictionary: Any) -> Any:
        name = str(self.field_name)
        if isinstance(dictionary, QueryDict) and len(dictionary.getlist(name)) > 1:
            return dictionary.getlist(name)
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> int | None:
        if isinstance(data, list):
            raise serializers.ValidationError(f"given {len(data)} times; give it once")
        try:
            return parse_id(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: Any) -> Any:
        return value


class PageQuery(Serializer):
    page = IdField()


def validated(query: type[Serializer], params: Any) -> dict[str, Any]:
    """``params`` (a query string or a form) through its serializer; the first field it
    refuses is a SubmissionError named for that field (``invalid_submission``)."""
    given = query(data=params)
    if not given.is_valid():
        name, problems = next(iter(given.errors.items()))
        raise SubmissionError(f"invalid_{name}", f"{name}: {validation_message(problems)}")
    return dict(given.validated_data)


# -- digests in paths ------------------------------------------------------------------
# A release, a price file or a run is named in a URL by a sha256 digest, written the way
# the site shows it (``sha256:<hex>``) or bare (``<hex>``): both name the same thing. The
# prefix is exactly ``sha256:`` (another algorithm's name, or ``SHA256:``, names nothing);
# hex digits are read whatever their case. Anything else (too short, a path, NUL) is
# refused before any query, with the rule in the message.
HEX = re.compile(r"[0-9a-fA-F]+")
DIGEST_RULE = "a sha256 digest is 64 hex digits, written bare or after sha256:"
RUN_KEY_RULE = (
    "a run is named by its body hash (64 hex digits, bare or after sha256:), a prefix of "
    "it of 12 or more digits, or its run id (16 hex digits)"
)


def _hex_after_prefix(value: str, shortest: int) -> str | None:
    given = value.removeprefix("sha256:")
    if shortest <= len(given) <= 64 and HEX.fullmatch(given):
        return given.lower()
    return None


def parse_digest(value: str) -> str:
    """The digest a path segment names, as stored (``sha256:`` and 64 lowercase hex
    digits); a ValueError saying the rule otherwise."""
    found = _hex_after_prefix(value, 64)
    if found is None:
        raise ValueError(DIGEST_RULE)
    return f"sha256:{found}"


def digest_or_none(value: str) -> str | None:
    """``parse_digest``'s answer, or None where the segment is no digest."""
    try:
        return parse_digest(value)
    except ValueError:
        return None


def parse_run_key(value: str) -> str | None:
    """The lowercase hex a run key names (a whole body hash, a prefix of 12 or more
    digits, or a run id), without ``sha256:``; None where it is none."""
    return _hex_after_prefix(value, 12)
