"""Canonical JSON: the byte form every hash in the harness is taken over.

Keys are sorted at every level, separators are compact, floats are fixed at six
decimals (so 0.1 + 0.2 and 0.3 hash alike), -0.0 becomes 0.0, and NaN or an
infinity is refused: a receipt that cannot say what a number is must not be emitted.
"""

from __future__ import annotations

import hashlib
import json
import math
from json.encoder import encode_basestring as _string  # C-accelerated, keeps UTF-8
from typing import Any


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, infinity, an unknown type)."""


def _encode(value: Any, out: list[str]) -> None:
    # One pass that checks and writes: exact type tests first (the common case),
    # subclasses (bool is an int) after.
    kind = type(value)
    if kind is str:
        out.append(_string(value))
    elif kind is dict:
        _encode_object(value, out)
    elif kind is list or kind is tuple:
        _encode_array(value, out)
    elif value is None or value is True or value is False:
        out.append(_CONSTANTS[value])
    elif kind is int:
        out.append(str(value))
    elif kind is float:
        out.append(_number(value))
    elif isinstance(value, (str, int, float, dict, list, tuple)):
        _encode(_plain(value), out)
    else:
        raise CanonicalError(f"{kind.__name__} has no canonical JSON form")


_CONSTANTS = {None: "null", True: "true", False: "false"}


def _encode_object(value: dict[Any, Any], out: list[str]) -> None:
    # Keys are sorted by their Python string order, which is the order of their code points.
    out.append("{")
    first = True
    for key in sorted(value):
        if type(key) is not str:
            raise CanonicalError(f"key {key!r} is not a string")
        if not first:
            out.append(",")
        first = False
        out.append(_string(key))
        out.append(":")
        _encode(value[key], out)
    out.append("}")


def _encode_array(value: list[Any] | tuple[Any, ...], out: list[str]) -> None:
    out.append("[")
    for i, item in enumerate(value):
        if i:
            out.append(",")
        _encode(item, out)
    out.append("]")


def _number(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        raise CanonicalError(f"{value!r} has no canonical JSON form")
    text = f"{value:.6f}"
    return "0.000000" if text == "-0.000000" else text


def _plain(value: Any) -> Any:
    """A subclass of a JSON type (an IntEnum, a str subclass) as its base value."""
    for base in (bool, str, int, float):
        if isinstance(value, base):
            return base(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return value


def dumps(value: Any) -> str:
    """Return the canonical JSON text of ``value``."""
    out: list[str] = []
    try:
        _encode(value, out)
    except CanonicalError as exc:  # the slow walk, only to say where
        raise CanonicalError(f"{_where(value, '$')}: {exc}") from None
    return "".join(out)


def _where(value: Any, path: str) -> str:
    """The path of the first value that has no canonical form."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return path
            found = _where(item, f"{path}.{key}")
            if found:
                return found
        return ""
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _where(item, f"{path}[{i}]")
            if found:
                return found
        return ""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return path
    if value is None or isinstance(value, (str, int, float)):
        return ""
    return path


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
