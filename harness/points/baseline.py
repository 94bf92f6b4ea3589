"""Reading PITFALL's judged-point artifact (``pitfall_point_baseline``, schema 1).

An artifact is imported only if it is what it says, and as strictly as PITFALL's own
``baseline verify`` reads it: its shape is the current format (the older run formats share
``schema_version: 1`` and are told apart by shape, then refused saying what they are), its
status is ``complete`` (a ``running`` or ``incomplete`` run is refused), it covers exactly
its suite with every point completed, every result's point, question and ground-truth
hashes match the point files held here, its suite digest matches, every verdict is the
class and decisive reason its judge's raw reply gives, the answer judged is the agent's
message, and its summary (counts, token usage, web searches) is what its results give.

A judge other than PITFALL's pinned one imports, labelled ``unpinned``: its verdicts are
shown, never ranked (``Imported.rankable``).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.points import model
from harness.points.artifacts import answer_set
from harness.points.jsonfile import MAX_BYTES, JsonFileError, read_json
from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL, JudgeOutputError, parse_verdict
from harness.points.markdown import Point, suite_sha256
from harness.points.metrics import CLASSES, summary

ARTIFACT_TYPE = "pitfall_point_baseline"
PINNED_JUDGE = {"model": DEFAULT_MODEL, "reasoning_effort": DEFAULT_EFFORT}
MAX_ARTIFACT_BYTES = MAX_BYTES  # the limits of every file read from elsewhere
STATUS_REFUSED = {
    "running": "the run was still going when the file was written",
    "incomplete": "some of its points did not complete (PITFALL's own verify refuses it too)",
}
SUMMARY_KEYS = model.keys(model.PitfallSummary)
# PITFALL's usage keys -> ours (``input_tokens`` -> ``input``), in PITFALL's order
TOKEN_KEYS = {key: key.removesuffix("_tokens") for key in model.names(model.PitfallUsage)}


class ArtifactError(ValueError):
    """The artifact is not a complete, untampered current-format judged point set."""


@dataclass
class Imported:
    agent: dict[str, Any]
    judge: dict[str, Any]
    status: str
    started_at: str
    classes: dict[str, str | None] = field(default_factory=dict)  # point id -> class
    reasons: dict[str, str] = field(default_factory=dict)  # point id -> decisive reason

    def summary(self) -> dict[str, Any]:
        return summary(list(self.classes.values()))

    @property
    def judge_pinned(self) -> bool:
        """Exactly PITFALL's pinned judge: the only one whose verdicts compare."""
        return self.judge == PINNED_JUDGE

    @property
    def judge_label(self) -> str:
        return "pinned" if self.judge_pinned else "unpinned"

    @property
    def judge_named(self) -> str:
        named = f"{self.judge.get('model')}/{self.judge.get('reasoning_effort')}"
        others = sorted(set(self.judge) - set(PINNED_JUDGE))
        return f"{named}, also {', '.join(others)}" if others else named

    @property
    def not_rankable_because(self) -> str | None:
        if self.judge_pinned:
            return None
        return (
            f"PITFALL pins its judge to {DEFAULT_MODEL}/{DEFAULT_EFFORT} and its verify "
            "refuses any other"
        )

    @property
    def rankable(self) -> bool:
        """Whether anything may rank these verdicts: never with an unpinned judge."""
        return self.not_rankable_because is None


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
        data = read_json(file)
    except JsonFileError as exc:
        raise ArtifactError(str(exc)) from None
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


def _whole(where: str, figure: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ArtifactError(f"{where}: {figure} is {value!r:.80}, not a whole number, 0 or more")
    return value


def _object(where: str, data: dict[str, Any], key: str) -> dict[str, Any]:
    found = data.get(key)
    if not isinstance(found, dict):
        raise ArtifactError(f"{where}: {key} is not an object")
    return found


def _point_of(where: str, result: Any, by_id: dict[str, Point]) -> Point:
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
    return point


def _check_result(where: str, result: Any, by_id: dict[str, Point]) -> str:
    point = _point_of(where, result, by_id)
    if result.get("status") != "completed":  # a complete run completed every point
        raise ArtifactError(
            f"{where}: point {point.id}: status {result.get('status')!r} in an artifact "
            "whose status is 'complete' (PITFALL writes that only when every point completed)"
        )
    for side in ("agent", "judge"):
        call = _object(f"{where}: point {point.id}", result, side)
        if not isinstance(call.get("usage", {}), dict):
            raise ArtifactError(f"{where}: point {point.id}: {side}.usage is not an object")
    evaluation = result.get("evaluation")
    if not isinstance(evaluation, dict) or evaluation.get("class") not in CLASSES:
        raise ArtifactError(f"{where}: point {point.id}: a completed result without a class")
    reason = evaluation.get("decisive_reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ArtifactError(f"{where}: point {point.id}: a verdict without its decisive reason")
    return str(evaluation["class"])


def _contract_text(text: str) -> str:
    """A reply's lines as PITFALL's parser splits them: on every line boundary, not only
    on a newline, so a reply is read here as it was read there."""
    return "\n".join(text.replace("\r\n", "\n").strip().splitlines())


def _check_raw(where: str, result: dict[str, Any]) -> None:
    """The verdict is what its judge's raw reply says, about the agent's own answer."""
    where = f"{where}: point {result['point_id']}"
    answer = result.get("answer")
    if not isinstance(answer, str) or answer != result["agent"].get("message"):
        raise ArtifactError(f"{where}: answer is not text equal to agent.message")
    message = result["judge"].get("message")
    if not isinstance(message, str):
        raise ArtifactError(f"{where}: judge.message (its judge's raw reply) is not text")
    try:
        judged, reason = parse_verdict(_contract_text(message))
    except JudgeOutputError as exc:
        raise ArtifactError(
            f"{where}: its judge's raw reply is outside the contract: {exc}"
        ) from None
    evaluation = result["evaluation"]
    if evaluation["class"] != judged:
        raise ArtifactError(
            f"{where}: evaluation class {evaluation['class']!r} differs from the class its "
            f"judge's raw reply gives ({judged!r})"
        )
    if _contract_text(evaluation["decisive_reason"]) != reason:
        raise ArtifactError(
            f"{where}: decisive_reason differs from the reason its judge's raw reply gives"
        )


def _check_status(where: str, data: dict[str, Any]) -> None:
    status = data.get("status")
    if status != "complete":
        why = STATUS_REFUSED.get(str(status), "not a status PITFALL writes")
        raise ArtifactError(
            f"{where}: status {status!r}: {why}; only a 'complete' artifact is imported"
        )


def _check_coverage(
    where: str, data: dict[str, Any], ids: set[str], by_id: dict[str, Point]
) -> None:
    count = data.get("point_count")
    if isinstance(count, bool) or count != len(ids):
        raise ArtifactError(f"{where}: point_count is not the number of results")
    missing = sorted(set(by_id) - ids)
    if missing:  # its suite digest is this whole suite's, so every point has a result
        raise ArtifactError(
            f"{where}: no result for {len(missing)} point(s) of its suite, e.g. {missing[0]}"
        )


def _check_usage(where: str, stated: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """Token figures summed over every result, a missing key counting 0, as PITFALL sums."""
    for side in ("agent", "judge"):
        sums = dict.fromkeys(TOKEN_KEYS, 0)
        for result in results:
            for key, value in result[side].get("usage", {}).items():
                figure = f"point {result['point_id']}: {side}.usage.{key}"
                sums[key] = sums.get(key, 0) + _whole(where, figure, value)
        figures = stated.get(f"{side}_usage")
        if not isinstance(figures, dict) or set(figures) != set(TOKEN_KEYS):
            raise ArtifactError(
                f"{where}: summary {side}_usage does not hold exactly {', '.join(TOKEN_KEYS)}"
            )
        for key in TOKEN_KEYS:
            value = _whole(where, f"summary {side}_usage.{key}", figures[key])
            if value != sums[key]:
                raise ArtifactError(
                    f"{where}: summary {side}_usage.{key} is {value}, but its results' "
                    f"{side} usage sums to {sums[key]}"
                )
    searches = sum(
        _whole(where, f"point {r['point_id']}: agent.web_search_calls",
               r["agent"].get("web_search_calls", 0))
        for r in results
    )  # fmt: skip
    value = _whole(where, "summary web_search_calls", stated.get("web_search_calls"))
    if value != searches:
        raise ArtifactError(
            f"{where}: summary web_search_calls is {value}, but its results' agent "
            f"web_search_calls sum to {searches}"
        )


def _check_summary(where: str, data: dict[str, Any], classes: list[str | None]) -> None:
    """The summary is exactly what its results give, as PITFALL's verify requires."""
    results = data["results"]
    stated = data.get("summary")
    if not isinstance(stated, dict):
        raise ArtifactError(f"{where}: summary is not an object")
    if set(stated) != SUMMARY_KEYS:
        raise ArtifactError(
            f"{where}: summary holds {', '.join(sorted(stated))}, not PITFALL's "
            f"{', '.join(sorted(SUMMARY_KEYS))}"
        )
    completed = sum(1 for r in results if r.get("status") == "completed")
    counts = (stated["completed"], stated["failed"])
    if any(isinstance(n, bool) for n in counts) or counts != (completed, len(results) - completed):
        raise ArtifactError(f"{where}: summary completed/failed differ from the results")
    stated_counts = stated["class_counts"]
    counted = Counter(c for c in classes if c)
    if stated_counts != {c: counted.get(c, 0) for c in CLASSES} or any(
        isinstance(n, bool) for n in stated_counts.values()
    ):
        raise ArtifactError(f"{where}: summary class_counts differ from the results' classes")
    _check_usage(where, stated, results)


def import_baseline(path: str | os.PathLike[str], points: list[Point]) -> Imported:
    """The artifact's verdicts, once it holds together with the point files."""
    return checked(str(path), read_artifact(path), points)


def checked(where: str, data: dict[str, Any], points: list[Point]) -> Imported:
    """The verdicts of an artifact read from ``where``, once it holds together with the
    point files, its summary and its judge's raw replies."""
    _check_status(where, data)
    results = data.get("results")
    if not isinstance(results, list):
        raise ArtifactError(f"{where}: results is not a list")
    if data.get("point_suite_sha256") != suite_sha256(points):
        raise ArtifactError(
            f"{where}: point_suite_sha256 differs from the points here ({suite_sha256(points)})"
        )
    by_id = {p.id: p for p in points}
    imported = Imported(
        agent=dict(_object(where, data, "agent")),
        judge=dict(_object(where, data, "judge")),
        status=str(data["status"]),
        started_at=str(data.get("started_at")),
    )
    for result in results:
        verdict = _check_result(where, result, by_id)
        if result["point_id"] in imported.classes:
            raise ArtifactError(f"{where}: point {result['point_id']} appears twice")
        imported.classes[result["point_id"]] = verdict
    _check_coverage(where, data, set(imported.classes), by_id)
    _check_summary(where, data, list(imported.classes.values()))
    for result in results:  # last, so a summary left alone is named as that first
        _check_raw(where, result)
        evaluation = result.get("evaluation")
        reason = evaluation.get("decisive_reason") if isinstance(evaluation, dict) else None
        imported.reasons[result["point_id"]] = reason if isinstance(reason, str) else ""
    return imported


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
        "tool_counts": dict(tools) if isinstance(tools := call.get("tool_counts"), dict) else {},
        "error": "" if given else str(result.get("error") or result.get("status")),
    }


def answers_from_baseline(path: str | os.PathLike[str], points: list[Point]) -> model.AnswerSet:
    """PITFALL's answers, once its artifact imports (every check of ``import_baseline``),
    as one of our answer sets, ready to be judged again under our controls. Its verdicts
    are not carried over: ours come from our judge, with controls and both model ids."""
    data = read_artifact(path)
    checked(str(path), data, points)  # refuses anything that does not hold together
    found = data.get("harness")
    harness = dict(found) if isinstance(found, dict) else {}
    agent = data["agent"]  # an object: checked above
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
