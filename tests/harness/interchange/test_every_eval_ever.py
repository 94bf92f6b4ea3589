"""The vendored Every Eval Ever schema is the one its source note names, and a record is
written only when it validates against it."""

from __future__ import annotations

import copy
import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness.interchange.every_eval_ever import (
    SCHEMA_FILE,
    SCHEMA_VERSION,
    InterchangeError,
    Source,
    epoch_seconds,
    model_info,
    problems,
    schema,
    write_record,
)

SCHEMAS = Path(__file__).resolve().parents[3] / "harness" / "interchange" / "schemas"


def _record() -> dict[str, Any]:
    """The smallest record of ours: one continuous result."""
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": "pit-harness/m/0123456789abcdef",
        "retrieved_timestamp": epoch_seconds(datetime(2026, 1, 2, tzinfo=UTC)),
        "source_metadata": Source().metadata({}),
        "eval_library": {"name": "pit-harness", "version": "0.1.0"},
        "model_info": model_info("m", {}),
        "evaluation_results": [
            {
                "evaluation_name": "pit.cell.main.pit",
                "source_data": {"dataset_name": "r", "source_type": "other"},
                "metric_config": {
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": -1.0,
                    "max_score": "Infinity",
                },
                "score_details": {"score": 0.25},
            }
        ],
    }


def test_the_vendored_schema_is_the_one_its_source_note_names() -> None:
    note = (SCHEMAS / "every-eval-ever.SOURCE.md").read_text(encoding="utf-8")
    stated = re.search(r"file sha256 \| `([0-9a-f]{64})`", note)
    assert stated is not None
    assert hashlib.sha256((SCHEMAS / SCHEMA_FILE).read_bytes()).hexdigest() == stated[1]
    assert schema()["version"] == SCHEMA_VERSION == "0.3.0"
    assert schema()["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert "MIT License" in (SCHEMAS / "every-eval-ever.LICENSE").read_text(encoding="utf-8")


def test_a_valid_record_is_written(tmp_path: Path) -> None:
    assert problems(_record()) == []
    write_record(tmp_path / "r.json", _record())
    assert (tmp_path / "r.json").read_text(encoding="utf-8").endswith("}\n")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: r.update(extra="x"), "Additional properties"),
        (lambda r: r["source_metadata"].update(evaluator_relationship="self"), "is not one of"),
        (lambda r: r["model_info"]["additional_details"].pop("deployment_type"), "required"),
        (lambda r: r["evaluation_results"][0]["metric_config"].pop("max_score"), "max_score"),
        (lambda r: r["evaluation_results"][0]["score_details"].update(score="1"), "not of type"),
        (
            lambda r: r["evaluation_results"][0]["score_details"].update(score=float("nan")),
            "finite",
        ),
        (lambda r: r["source_metadata"]["additional_details"].update(n=3), "not of type 'string'"),
        (lambda r: r.update(schema_version="0.2.2"), "not 0.3.0"),
    ],
)
def test_a_record_that_does_not_validate_is_refused_and_nothing_is_written(
    tmp_path: Path, change: Any, why: str
) -> None:
    record = copy.deepcopy(_record())
    change(record)
    with pytest.raises(InterchangeError, match=why):
        write_record(tmp_path / "r.json", record)
    assert not (tmp_path / "r.json").exists()


def test_a_source_that_says_nothing_is_recorded_as_unstated() -> None:
    unstated = Source().metadata({})
    assert unstated["source_organization_name"] == "unknown"
    assert unstated["additional_details"]["source_organization_stated"] == "false"
    stated = Source("Example Lab", "third_party").metadata({})
    assert stated["evaluator_relationship"] == "third_party"
    assert stated["additional_details"]["evaluator_relationship_stated"] == "true"


def test_a_model_that_was_not_declared_is_named_so() -> None:
    assert model_info(None, {})["id"] == "undeclared"
    assert model_info("", {})["additional_details"]["id_source"] == "no model was declared"
