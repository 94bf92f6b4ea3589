"""The published JSON Schemas of what the harness writes.

``receipt-body.schema.json``: the body of a receipt, generated from the types in
``harness.receipt.model`` by :func:`generate` (``python -m harness.receipt.schemas`` writes
it again; a test holds the file and the types together). The site validates uploads
against this same file. ``receipt-body.header.json`` holds what no type says: the
schema's draft, ``$id``, title and description.

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
from pathlib import Path
from typing import Any, get_args

import jsonschema
import msgspec

from harness.receipt import model
from harness.vocabulary import Arm, Clock

SCHEMA_FILE = "receipt-body.schema.json"
HEADER_FILE = "receipt-body.header.json"  # $schema, $id, title, description: what no type says
# msgspec lists a Literal's words sorted; the schema keeps the order they are declared in.
_WORD_ORDER = [
    get_args(words)
    for words in (
        Arm,
        Clock,
        model.CellStatus,
        model.ProbeStatus,
        model.Verdict,
        model.AgentProcess,
        model.CutoffCheck,
    )
]


def generate() -> dict[str, Any]:
    """The receipt body's JSON Schema (draft 2020-12), from the types: every reference
    written in place, ``T | None`` as a type list, a one-word enum as a const."""
    raw = msgspec.json.schema(model.ReceiptBody)
    definitions = raw["$defs"]
    body = _tidy(definitions["ReceiptBody"], definitions)
    body.pop("description", None)
    header = resources.files(__package__).joinpath(HEADER_FILE).read_text("utf-8")
    return {**json.loads(header), **body}


def schema_text() -> str:
    return json.dumps(generate(), indent=2, ensure_ascii=False) + "\n"


def _tidy(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_tidy(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _tidy(definitions[node["$ref"].rsplit("/", 1)[1]], definitions)
    out = {key: _tidy(value, definitions) for key, value in node.items() if key != "title"}
    if "description" in out:
        out["description"] = " ".join(out["description"].split())
    if out.get("additionalProperties") == {}:
        del out["additionalProperties"]
    if "enum" in out:
        words = out["enum"]
        out["enum"] = next((list(w) for w in _WORD_ORDER if sorted(w) == sorted(words)), words)
        if len(words) == 1:
            out["const"] = out.pop("enum")[0]
    # ``T | None`` of a plain T as a type list; an object or null stays an anyOf, a
    # leaf of the schema that a verifier takes (and a forgery changes) whole
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (other,) = [o for o in options if o != {"type": "null"}]
        if other.get("type") not in (None, "object"):
            del out["anyOf"]
            out = {**out, **other, "type": [other["type"], "null"]}
    return out


def write_schema(folder: str | Path | None = None) -> Path:
    """Write the generated schema into the package (or ``folder``); its path."""
    target = Path(folder or Path(__file__).parent) / SCHEMA_FILE
    target.write_text(schema_text(), encoding="utf-8")
    return target


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
    text = resources.files(__package__).joinpath(SCHEMA_FILE).read_text("utf-8")
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
