"""Every Eval Ever's aggregate record: the vendored schema (0.3.0), the parts every record
of ours shares, and the one way a record leaves the harness: validated, then written.

A record is refused (``InterchangeError``, naming the first field at fault) unless it
validates against the vendored schema and every number in it is finite: JSON has no NaN,
and a schema's ``number`` lets Python's through. Nothing is written before both hold.

What a field cannot say honestly is not guessed: who ran the evaluation and how they stand
to the model's developer are what the exporter says (``Source``), ``unknown`` and
``other`` when they say nothing, and the record says which were stated; a model's id is
the model as its run or set declared it, never resolved against a registry.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jsonschema

SCHEMA_FILE = "every-eval-ever.eval.schema.json"
SCHEMA_VERSION = "0.3.0"
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
UNKNOWN_ORGANIZATION = "unknown"

Relationship = Literal["first_party", "third_party", "collaborative", "other"]


class InterchangeError(ValueError):
    """A result that cannot be exported: not verified, not a result, or a record that
    does not validate against the schema it claims."""


@cache
def schema() -> dict[str, Any]:
    """The vendored aggregate schema."""
    text = resources.files("harness.interchange.schemas").joinpath(SCHEMA_FILE).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(schema())


def _non_finite(value: Any, path: str = "$") -> str | None:
    """The path of the first NaN or infinity in ``value``, if there is one."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, dict):
        return next((p for k, v in value.items() if (p := _non_finite(v, f"{path}.{k}"))), None)
    if isinstance(value, list):
        return next((p for n, v in enumerate(value) if (p := _non_finite(v, f"{path}[{n}]"))), None)
    return None


def problems(record: Any) -> list[str]:
    """Every way ``record`` fails the vendored schema (each with the path at fault), and
    a number that is not finite; empty when it is a valid record."""
    found = [
        f"{'$' + ''.join(f'[{p!r}]' for p in error.absolute_path)}: {error.message}"
        for error in sorted(_validator().iter_errors(record), key=lambda e: list(e.path))
    ]
    where = _non_finite(record)
    if where is not None:
        found.append(f"{where}: not a finite number (JSON has no NaN or infinity)")
    if isinstance(record, dict) and record.get("schema_version") != SCHEMA_VERSION:
        found.append(f"$['schema_version']: not {SCHEMA_VERSION}, the schema vendored here")
    return found


def validated(record: dict[str, Any]) -> dict[str, Any]:
    """``record``, once it validates; InterchangeError naming the first problem (and how
    many there are) otherwise."""
    found = problems(record)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise InterchangeError(
            f"the record does not validate against Every Eval Ever {SCHEMA_VERSION}: "
            f"{found[0]}{more}"
        )
    return record


def write_record(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Validate ``record``, then write it (UTF-8, keys sorted, one trailing newline)."""
    text = json.dumps(validated(record), indent=2, sort_keys=True, ensure_ascii=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Source:
    """Who is exporting the result, as they state it (nothing here is inferred)."""

    organization: str | None = None
    relationship: Relationship | None = None

    def metadata(self, details: dict[str, str]) -> dict[str, Any]:
        """``source_metadata`` for a record made from a run or a set we hold whole:
        ``evaluation_run`` (the per-item outputs are held, not only aggregates)."""
        return {
            "source_name": "pit-harness",
            "source_type": "evaluation_run",
            "source_organization_name": self.organization or UNKNOWN_ORGANIZATION,
            "evaluator_relationship": self.relationship or "other",
            "additional_details": {
                **details,
                "source_organization_stated": str(self.organization is not None).lower(),
                "evaluator_relationship_stated": str(self.relationship is not None).lower(),
            },
        }


def model_info(declared: str | None, details: dict[str, str]) -> dict[str, Any]:
    """``model_info`` for a model as declared (``None`` or empty: not declared, said so)."""
    name = declared or "undeclared"
    return {
        "name": name,
        "id": name,
        "additional_details": {
            "deployment_type": "unknown",
            "model_availability": "unknown",
            "id_source": "as declared; not resolved against any model registry"
            if declared
            else "no model was declared",
            **details,
        },
    }


def epoch_seconds(moment: datetime) -> str:
    """``retrieved_timestamp``: when the record was made, in Unix seconds as text."""
    if moment.tzinfo is None:
        raise ValueError("a record's time must be timezone-aware")
    return str(int(moment.timestamp()))


def text_details(values: dict[str, Any]) -> dict[str, str]:
    """``additional_details`` (strings only): text kept, None left out, the rest as JSON."""
    return {
        key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        for key, value in values.items()
        if value is not None
    }


def continuous(
    *,
    metric_id: str,
    name: str,
    kind: str,
    unit: str,
    description: str,
    lower_is_better: bool,
    bounds: tuple[float | str, float | str],
    parameters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A continuous metric's ``metric_config`` (``bounds``: numbers, or "-Infinity" /
    "Infinity" for an open end)."""
    config: dict[str, Any] = {
        "evaluation_description": description,
        "metric_id": metric_id,
        "metric_name": name,
        "metric_kind": kind,
        "metric_unit": unit,
        "lower_is_better": lower_is_better,
        "score_type": "continuous",
        "min_score": bounds[0],
        "max_score": bounds[1],
    }
    if parameters:
        config["metric_parameters"] = parameters
    return config
