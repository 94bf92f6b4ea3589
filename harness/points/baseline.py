"""Reading PITFALL's judged-point artifact (``pitfall_point_baseline``, schema 1).

An artifact is imported only if it is what it says: its shape is the current format (the
older run formats share ``schema_version: 1`` and are told apart by shape, then refused
saying what they are), every result's point, question and ground-truth hashes match the
point files held here, its suite digest matches, every completed result carries one of
the six classes and a decisive reason, and its summary's class counts are what its
results give. Failed results carry no verdict: they are harness errors, outside every
denominator.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.points.markdown import Point, suite_sha256
from harness.points.metrics import CLASSES, summary

ARTIFACT_TYPE = "pitfall_point_baseline"


class ArtifactError(ValueError):
    """The artifact is not a complete, untampered current-format judged point set."""


@dataclass
class Imported:
    agent: dict[str, Any]
    judge: dict[str, Any]
    status: str
    started_at: str
    classes: dict[str, str | None] = field(default_factory=dict)  # point id -> class

    def summary(self) -> dict[str, Any]:
        return summary(list(self.classes.values()))


def _legacy(data: dict[str, Any]) -> str | None:
    """What an older PITFALL run file is, told by its shape, or None."""
    results = data.get("results")
    first = results[0] if isinstance(results, list) and results else {}
    keyed = next(
        (k for k in ("case_id", "scenario_id") if isinstance(first, dict) and k in first), None
    )
    if "artifact_type" in data:
        return None
    if isinstance(data.get("summary"), list) or "matrix" in data or keyed:
        kind = {
            "case_id": "a structured smoke run (results keyed by case_id)",
            "scenario_id": "a walk-forward run (results keyed by scenario_id)",
        }.get(keyed or "", "an older PITFALL run file")
        return (
            f"{kind}, with a scoring matrix and a summary per model: PITFALL's older format, "
            "scored by its own contract, not a judged point set"
        )
    return None


def read_artifact(path: str | os.PathLike[str]) -> dict[str, Any]:
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ArtifactError(f"{file}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{file}: not complete JSON (truncated?): {exc}") from None
    if not isinstance(data, dict):
        raise ArtifactError(f"{file}: not a PITFALL artifact (a JSON object is expected)")
    legacy = _legacy(data)
    if legacy:
        raise ArtifactError(f"{file}: {legacy}")
    if data.get("artifact_type") != ARTIFACT_TYPE or data.get("schema_version") != 1:
        raise ArtifactError(
            f"{file}: artifact_type {data.get('artifact_type')!r}, schema_version "
            f"{data.get('schema_version')!r}: only {ARTIFACT_TYPE!r} schema 1 is read"
        )
    return data


def _check_result(where: str, result: Any, by_id: dict[str, Point]) -> str | None:
    if not isinstance(result, dict) or not isinstance(result.get("point_id"), str):
        raise ArtifactError(f"{where}: a result without a point_id")
    point = by_id.get(result["point_id"])
    if point is None:
        raise ArtifactError(f"{where}: point {result['point_id']!r} is not among the points here")
    for key, value in (
        ("point_sha256", point.point_sha256),
        ("question_sha256", point.question_sha256),
        ("ground_truth_sha256", point.ground_truth_sha256),
    ):
        if result.get(key) != value:
            raise ArtifactError(
                f"{where}: point {point.id}: {key} differs from the point file's ({value})"
            )
    if result.get("status") != "completed":
        return None  # no verdict: a harness error, never the agent's result
    evaluation = result.get("evaluation")
    if not isinstance(evaluation, dict) or evaluation.get("class") not in CLASSES:
        raise ArtifactError(f"{where}: point {point.id}: a completed result without a class")
    if not str(evaluation.get("decisive_reason") or "").strip():
        raise ArtifactError(f"{where}: point {point.id}: a verdict without its decisive reason")
    return str(evaluation["class"])


def import_baseline(path: str | os.PathLike[str], points: list[Point]) -> Imported:
    """The artifact's verdicts, once it holds together with the point files."""
    return checked(str(path), read_artifact(path), points)


def checked(where: str, data: dict[str, Any], points: list[Point]) -> Imported:
    """The verdicts of an artifact read from ``where``, once it holds together with the
    point files."""
    results = data.get("results")
    if not isinstance(results, list):
        raise ArtifactError(f"{where}: results is not a list")
    if data.get("point_suite_sha256") != suite_sha256(points):
        raise ArtifactError(
            f"{where}: point_suite_sha256 differs from the points here ({suite_sha256(points)})"
        )
    by_id = {p.id: p for p in points}
    imported = Imported(
        agent=dict(data.get("agent") or {}),
        judge=dict(data.get("judge") or {}),
        status=str(data.get("status")),
        started_at=str(data.get("started_at")),
    )
    for result in results:
        verdict = _check_result(where, result, by_id)
        if result["point_id"] in imported.classes:
            raise ArtifactError(f"{where}: point {result['point_id']} appears twice")
        imported.classes[result["point_id"]] = verdict
    if len(imported.classes) != data.get("point_count"):
        raise ArtifactError(f"{where}: point_count is not the number of results")
    missing = sorted(set(by_id) - set(imported.classes))
    if missing:  # its suite digest is this whole suite's, so every point has a result
        raise ArtifactError(
            f"{where}: no result for {len(missing)} point(s) of its suite, e.g. {missing[0]}"
        )
    stated_summary = data.get("summary") or {}
    completed = sum(1 for r in results if r.get("status") == "completed")
    if (stated_summary.get("completed"), stated_summary.get("failed")) != (
        completed,
        len(results) - completed,
    ):
        raise ArtifactError(f"{where}: summary completed/failed differ from the results")
    stated = (data.get("summary") or {}).get("class_counts")
    counted = Counter(c for c in imported.classes.values() if c)
    if stated != {c: counted.get(c, 0) for c in CLASSES}:
        raise ArtifactError(f"{where}: summary class_counts differ from the results' classes")
    return imported


TOKEN_KEYS = {
    "input_tokens": "input",
    "cached_input_tokens": "cached_input",
    "cache_write_input_tokens": "cache_write_input",
    "output_tokens": "output",
    "reasoning_output_tokens": "reasoning_output",
}


def _answer_record(result: dict[str, Any]) -> dict[str, Any]:
    found = result.get("agent")
    call: dict[str, Any] = found if isinstance(found, dict) else {}
    answer = result.get("answer", call.get("message"))
    found = call.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    given = isinstance(answer, str) and result.get("status") in ("completed", "failed_judge")
    return {
        "point_id": result["point_id"],
        "sample": 0,
        "status": "completed" if given else "harness_error",
        "text": answer if given else "",
        "finish_reason": None,
        "model_returned": None,  # the artifact does not record it
        "attempts": 1,
        "latency_seconds": call.get("latency_seconds"),
        "answered_at": None,  # the artifact records the run's start, not each answer's
        "tokens": {TOKEN_KEYS[k]: v for k, v in usage.items() if k in TOKEN_KEYS},
        "cost": {"usd": None, "source": "not_reported"},
        "tool_counts": dict(call.get("tool_counts") or {}),
        "error": "" if given else str(result.get("error") or result.get("status")),
    }


def answers_from_baseline(path: str | os.PathLike[str], points: list[Point]) -> dict[str, Any]:
    """PITFALL's answers, once its artifact imports (hashes, digest, counts), as one of
    our answer sets, ready to be judged again under our controls. Its verdicts are not
    carried over: ours come from our judge, with controls and both model ids."""
    from harness.points.artifacts import answer_set

    data = read_artifact(path)
    checked(str(path), data, points)  # refuses anything that does not hold together
    harness = dict(data.get("harness") or {})
    agent = dict(data.get("agent") or {})
    experiment = {
        "agent": {"model": agent.get("model"), "effort": agent.get("reasoning_effort")},
        "harness": harness,
        "instructions": "PITFALL's agent prompt (not held in its artifact)",
        "tools": ["web_search (native to its harness)", "shell (read-only sandbox)"],
        "evidence_snapshot": "the live web at answer time (not frozen)",
        "imported_from": {
            "artifact_type": ARTIFACT_TYPE,
            "started_at": data.get("started_at"),
            "judge": data.get("judge"),
        },
    }
    capabilities = {
        "ground_truth_visible_to_agent": harness.get("ground_truth_visible_to_agent", "unknown"),
        "provenance_visible_to_agent": "unknown",  # its artifact does not say
        "tools_offered": "web_search,shell(read-only)",
        "training_cutoff_checked": False,
        "evidence_frozen": False,
    }
    records = [_answer_record(r) for r in data["results"]]
    return answer_set(points, records, experiment, capabilities)
