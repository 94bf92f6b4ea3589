"""Our own judged-point artifacts, hash-bound like a run's receipt.

An **answer set** records the experiment (the agent's model and effort, the harness, the
instructions, the tools, the evidence snapshot) and, per point, the answer with its
latency, tokens, cost and tool counts, bound to the point's hashes. A **judged set**
binds one answer set by its digest and records, per answer, the verdict (class, decisive
reason, the judge's configured and returned model, effort, time, raw reply, outcome),
the controls and the summary; one judge per set. Each file is a canonical JSON body,
its ``body_sha256`` and the time it was written (outside the hash); ``read_artifact``
refuses a body that does not hash to its digest.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import canonical
from harness.points.judge import Verdict
from harness.points.markdown import Point, suite_sha256
from harness.points.metrics import summary

ANSWER_SET = "pit_answer_set"
JUDGED_SET = "pit_judged_set"


class PointsArtifactError(ValueError):
    """Not a complete, untampered answer or judged set."""


def capability_line(fields: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


def answer_set(
    points: list[Point], answers: dict[str, dict[str, Any]], experiment: dict[str, Any]
) -> dict[str, Any]:
    """The body of an answer set: ``answers[point_id]`` holds ``text`` and, as measured,
    ``latency_seconds``, ``tokens``, ``cost`` and ``tool_counts``."""
    unknown = sorted(set(answers) - {p.id for p in points})
    if unknown:
        raise PointsArtifactError(f"answers for points not in the set: {', '.join(unknown)}")
    capabilities = {
        "ground_truth_visible_to_agent": False,
        "provenance_visible_to_agent": False,
    }
    return {
        "artifact_type": ANSWER_SET,
        "schema_version": 1,
        "experiment": experiment,
        "point_suite_sha256": suite_sha256(points),
        "answers": [
            {
                "point_id": p.id,
                "point_sha256": p.point_sha256,
                "question_sha256": p.question_sha256,
                "text": answers[p.id]["text"],
                "latency_seconds": answers[p.id].get("latency_seconds"),
                "tokens": answers[p.id].get("tokens", {}),
                "cost": answers[p.id].get("cost"),
                "tool_counts": answers[p.id].get("tool_counts", {}),
            }
            for p in points
            if p.id in answers
        ],
        "capabilities": capabilities,
        "capability_line": capability_line(capabilities),
    }


def judged_set(
    answers_sha256: str,
    verdicts: dict[str, Verdict],
    controls: dict[str, Any],
) -> dict[str, Any]:
    """The body of a judged set over one answer set; refused if its verdicts come from
    more than one judge (model and effort)."""
    judges = {(v.model_configured, v.effort) for v in verdicts.values()}
    if len(judges) > 1:
        raise PointsArtifactError(
            f"one judge per judged set; these verdicts come from {sorted(judges)}"
        )
    model, effort = next(iter(judges)) if judges else ("", "")
    capabilities = {
        "provenance_sent_to_judge": False,
        "judge_pinned": True,
        "harness_errors_scored": False,
    }
    return {
        "artifact_type": JUDGED_SET,
        "schema_version": 1,
        "answer_set_sha256": answers_sha256,
        "judge": {"model": model, "effort": effort},
        "controls": controls,
        "verdicts": [{"point_id": k, **verdicts[k].to_json()} for k in sorted(verdicts)],
        "summary": summary([verdicts[k].judged_class for k in sorted(verdicts)]),
        "capabilities": capabilities,
        "capability_line": capability_line(capabilities),
    }


def write_artifact(path: str | os.PathLike[str], body: dict[str, Any]) -> str:
    """Write ``{"body", "body_sha256", "written_at"}``; return the body's digest."""
    text = canonical.dumps(body)
    sha = "sha256:" + canonical.sha256_hex(text.encode())
    written = datetime.now(UTC).isoformat()
    Path(path).write_text(
        '{"body":' + text + ',"body_sha256":' + json.dumps(sha)
        + ',"written_at":' + json.dumps(written) + "}\n",
        encoding="utf-8",
    )  # fmt: skip
    return sha


def read_artifact(path: str | os.PathLike[str], kind: str) -> dict[str, Any]:
    """The body of an answer or judged set, once it is whole and hashes to its digest."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PointsArtifactError(f"{where}: not complete JSON (truncated?): {exc}") from None
    if not isinstance(data, dict) or set(data) != {"body", "body_sha256", "written_at"}:
        raise PointsArtifactError(
            f"{where}: an artifact holds exactly body, body_sha256, written_at"
        )
    body = data["body"]
    if not isinstance(body, dict) or body.get("artifact_type") != kind:
        raise PointsArtifactError(f"{where}: not a {kind}")
    sha = "sha256:" + canonical.sha256_hex(canonical.dumps_bytes(body))
    if sha != data["body_sha256"]:
        raise PointsArtifactError(f"{where}: the body hashes to {sha}, not {data['body_sha256']}")
    return body
