"""The published JSON Schemas of what the harness writes.

``receipt-body.schema.json``: the body of a receipt, every key ``build_body`` can write
(a test holds the two together). The site validates uploads against this same file.

``receipt-body.fields.json``: every leaf of that schema, either re-derived (from the
trajectory, the release, the bound config and the price file, by ``harness.receipt.rederive``,
which ``pit-harness verify`` and the site both call) or a declaration the harness writes
and cannot check after the run, with how or why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

import jsonschema


@cache
def receipt_body_fields() -> dict[str, dict[str, str]]:
    """``{"rederived": {path: how}, "declared": {path: why}}`` over the schema's leaves."""
    text = resources.files(__package__).joinpath("receipt-body.fields.json").read_text("utf-8")
    fields: dict[str, Any] = json.loads(text)
    return {"rederived": fields["rederived"], "declared": fields["declared"]}


def leaf_paths(node: dict[str, Any], path: str = "") -> list[str]:
    """Every leaf of a schema as a path: ``.a.b`` for properties, ``[]`` for array items,
    ``.*`` for the values of an open object; a node with none of these is a leaf."""
    branches: list[tuple[str, Any]] = [
        (f"{path}.{key}", value) for key, value in (node.get("properties") or {}).items()
    ]
    if isinstance(node.get("additionalProperties"), dict):
        branches.append((f"{path}.*", node["additionalProperties"]))
    if isinstance(node.get("items"), dict):
        branches.append((f"{path}[]", node["items"]))
    if not branches:
        return [path]
    return [leaf for sub, child in branches for leaf in leaf_paths(child, sub)]


@cache
def receipt_body_schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("receipt-body.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    """A schema pattern as JSON Schema means it (ECMA-262, no multiline flag): a final
    ``$`` matches only at the very end of the string. Python's ``$`` also matches before
    a trailing newline, which would let ``"abc\\n"`` through ``^[a-z]+$``."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "string"):
        return
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = _ecma_pattern(pattern)
    if not compiled.search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def receipt_body_validator() -> Any:
    """A draft 2020-12 validator of receipt bodies, with formats checked and patterns
    matched over the whole string."""
    strict = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft202012Validator, {"pattern": _pattern}
    )
    return strict(
        receipt_body_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
