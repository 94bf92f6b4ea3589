"""Canonical JSON: the byte form every hash in the harness is taken over.

Keys are sorted at every level, separators are compact, floats are fixed at six
decimals (so 0.1 + 0.2 and 0.3 hash alike), -0.0 becomes 0.0, and NaN or an
infinity is refused: a receipt that cannot say what a number is must not be emitted.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, infinity, an unknown type)."""


def _fix(value: Any, path: str) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise CanonicalError(f"{path or '$'}: {value!r} has no canonical JSON form")
        # Decimal keeps the six fixed places through json without re-rounding.
        fixed = Decimal(f"{value:.6f}")
        return fixed if fixed != 0 else Decimal("0.000000")
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalError(f"{path or '$'}: key {key!r} is not a string")
            out[key] = _fix(item, f"{path}.{key}")
        return out
    if isinstance(value, (list, tuple)):
        return [_fix(item, f"{path}[{i}]") for i, item in enumerate(value)]
    raise CanonicalError(f"{path or '$'}: {type(value).__name__} has no canonical JSON form")


def _encode(value: Any) -> str:
    # json cannot emit Decimal natively; floats are pre-rendered as Decimal, so a
    # small recursive writer keeps the six places exactly as formatted.
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dict):
        items = sorted(value.items())
        body = ",".join(json.dumps(k, ensure_ascii=False) + ":" + _encode(v) for k, v in items)
        return "{" + body + "}"
    if isinstance(value, list):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def dumps(value: Any) -> str:
    """Return the canonical JSON text of ``value``."""
    return _encode(_fix(value, ""))


def dumps_bytes(value: Any) -> bytes:
    return dumps(value).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """``sha256:<hex>`` over the canonical JSON of ``value``."""
    return "sha256:" + sha256_hex(dumps_bytes(value))


def line(value: Any) -> str:
    """One trajectory or release line: sorted keys, compact, no NaN.

    Faster than :func:`dumps` because floats keep Python's shortest repr (which is
    deterministic); used for high-volume lines that carry no scored float.
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
