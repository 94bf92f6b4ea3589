"""Our own judged-point artifacts, hash-bound like a run's receipt.

An **answer set** records the experiment (the agent's model and effort, the harness, the
instructions, the tools, the evidence snapshot) and, per point and sample, the answer
with its latency, tokens, cost and tool counts, bound to the point's hashes. A **judged
set** binds one answer set by its digest and records, per answer, the verdict (class,
decisive reason, the judge's configured and returned model, effort, time, raw reply,
outcome), the controls and what they make of the set (``reliability``: ``usable``, or
``judge_unreliable`` and never ranked), a record per point (model, date, counts, pass@k,
capabilities) and the summary; one judge per set. Each file is a canonical JSON body, its
``body_sha256`` and the time it was written (outside the hash); ``read_artifact`` refuses
a body that does not hash to its digest, and ``verify_judged`` re-derives everything a
judged set states from its verdicts, its answer set and the point files.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from harness import canonical
from harness.points.gates import assess
from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL, JudgeReply, is_pinned_model
from harness.points.markdown import Point, suite_sha256
from harness.points.metrics import (
    HARNESS_ERROR,
    PASS,
    harness_error_range,
    pass_at_k,
    summary,
)
from harness.points.model import MEASURED, AnswerSet, JudgedSet, plain
from harness.points.questions import question_only
from harness.points.seal import question_digest

ANSWER_SET = "pit_answer_set"
JUDGED_SET = "pit_judged_set"
# 2: a third negative control (an injected instruction) and the reliability gates
JUDGED_SET_VERSION = 2
ANSWER_FIELDS = MEASURED  # what each answer records of itself, as its type declares
CLOSED_BOOK = {
    "ground_truth_visible_to_agent": False,
    "provenance_visible_to_agent": False,
    "tools_offered": "none",
    "training_cutoff_checked": False,
}


Kind = TypeVar("Kind", bound=msgspec.Struct)


class PointsArtifactError(ValueError):
    """Not a complete, untampered answer or judged set, or one that does not hold
    together with its answer set and the point files."""


def capability_line(fields: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


# a TypeVar, not def typed[Kind: ...]: the harness runs on Python 3.11 too
def typed(body: dict[str, Any], kind: type[Kind]) -> Kind:  # noqa: UP047, RUF100
    """``body`` as the record its type declares (every field, no other, each of its type);
    PointsArtifactError naming the field otherwise. A writer checks what it is about to
    write, so a body and its type cannot drift apart; the record's plain form
    (``model.plain``) is the body again, byte for byte once canonical."""
    try:
        return msgspec.convert(body, kind, strict=True)
    except msgspec.ValidationError as exc:
        raise PointsArtifactError(f"{kind.__name__}: {exc}") from None


def canonical_sha256(body: dict[str, Any]) -> str:
    """The body's hash, as every artifact's: :func:`harness.canonical.digest`."""
    return canonical.digest(body)


def as_stored(value: Any) -> Any:
    """``value`` as it reads back from a canonical file (floats at six decimals)."""
    return json.loads(canonical.dumps(value))


def answer_set(
    points: list[Point],
    records: list[dict[str, Any]],
    experiment: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> AnswerSet:
    """The answer set over ``points`` (the suite it was run on). Each record
    holds ``point_id``, ``sample`` (0 when each point is answered once), ``text`` and, as
    measured, the fields of ``ANSWER_FIELDS``; ``status`` is ``completed`` or
    ``harness_error`` (no answer: nothing to judge)."""
    by_id = {p.id: p for p in points}
    unknown = sorted({r["point_id"] for r in records} - set(by_id))
    if unknown:
        raise PointsArtifactError(f"answers for points not in the set: {', '.join(unknown)}")
    keys = Counter((r["point_id"], int(r.get("sample", 0))) for r in records)
    twice = sorted(f"{k[0]}#{k[1]}" for k, n in keys.items() if n > 1)
    if twice:
        raise PointsArtifactError(f"answered twice: {', '.join(twice)}")
    answers = []
    for record in sorted(records, key=lambda r: (r["point_id"], int(r.get("sample", 0)))):
        point = by_id[record["point_id"]]
        answer = {
            "point_id": point.id,
            "sample": int(record.get("sample", 0)),
            "point_sha256": "" if question_only(point) else point.point_sha256,
            "question_sha256": point.question_sha256,
            "status": record.get("status", "completed"),
            "tokens": record.get("tokens") or {},
            "tool_counts": record.get("tool_counts") or {},
            "cost": record.get("cost") or {"usd": None, "source": "not_reported"},
        }
        for key in ANSWER_FIELDS:
            answer.setdefault(key, record.get(key))
        answer["text"] = answer["text"] or ""
        if answer["status"] != "completed" and (answer["text"] or not answer["error"]):
            raise PointsArtifactError(f"{point.id}: a harness error holds no text, and says why")
        answers.append(answer)
    samples = 1 + max((a["sample"] for a in answers), default=0)
    if {answer_key(a) for a in answers} != {(p.id, n) for p in points for n in range(samples)}:
        raise PointsArtifactError(f"every point is answered {samples} time(s), samples 0..")
    fields = dict(CLOSED_BOOK if capabilities is None else capabilities)
    failed = sum(1 for a in answers if a["status"] != "completed")
    body = {
        "artifact_type": ANSWER_SET,
        "schema_version": 1,
        "status": "incomplete" if failed else "complete",
        "experiment": experiment,
        "point_count": len(points),
        "samples_per_point": samples,
        "point_ids": sorted(p.id for p in points),
        "point_suite_sha256": suite_binding(points),
        "answers": answers,
        "summary": answer_summary(answers),
        "capabilities": fields,
        "capability_line": capability_line(fields),
    }
    return typed(body, AnswerSet)


def suite_binding(points: list[Point]) -> str:
    """What an answer set binds its points by: the suite digest over whole files, or,
    for Questions published before a reveal (``harness.points.questions``), their digest
    (every point must then hold its Question alone)."""
    alone = {question_only(p) for p in points}
    if alone == {True}:
        return question_digest(points)
    if alone == {True, False}:
        raise PointsArtifactError("some points are whole files and some Questions alone")
    return suite_sha256(points)


def answer_summary(answers: list[dict[str, Any]]) -> dict[str, Any]:
    tokens: Counter[str] = Counter()
    for answer in answers:
        tokens.update({k: v for k, v in answer["tokens"].items() if isinstance(v, int)})
    costs = [a["cost"].get("usd") for a in answers]
    return {
        "answers": len(answers),
        "completed": sum(1 for a in answers if a["status"] == "completed"),
        "harness_error": sum(1 for a in answers if a["status"] != "completed"),
        "tokens": dict(sorted(tokens.items())),
        # a total is stated only when every answer's cost is known
        "cost_usd": round(sum(costs), 6) if costs and None not in costs else None,
        "tool_calls": sum(sum(a["tool_counts"].values()) for a in answers),
    }


def answer_key(record: dict[str, Any]) -> tuple[str, int]:
    return str(record["point_id"]), int(record.get("sample", 0))


def first_answers(answers: AnswerSet) -> dict[str, str]:
    """Each point's first answer (sample 0), where it was given: what the stability
    check re-judges."""
    return {
        a.point_id: a.text for a in answers.answers if a.sample == 0 and a.status == "completed"
    }


def judge_capabilities(answers: dict[str, Any], judge: dict[str, Any]) -> dict[str, Any]:
    """The judged set's capabilities. ``judge_pinned`` holds only when the seed's judge
    was configured and every model the provider said it ran is that model (or one of its
    dated snapshots)."""
    returned = judge["models_returned"]
    pinned = (judge["model"], judge["effort"]) == (DEFAULT_MODEL, DEFAULT_EFFORT) and bool(returned)
    return {
        "ground_truth_visible_to_agent": answers["capabilities"].get(
            "ground_truth_visible_to_agent", "unknown"
        ),
        "provenance_sent_to_judge": False,
        "judge_pinned": pinned and all(is_pinned_model(m) for m in returned),
        "harness_errors_scored": False,
    }


def judged_figures(
    answers: dict[str, Any], verdicts: list[dict[str, Any]], judge: dict[str, Any], line: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The summary and the per-point records, from the verdict records alone."""
    status = {answer_key(a): a["status"] for a in answers["answers"]}
    figures: dict[str, Any] = summary([v["class"] for v in verdicts])
    agent_errors = sum(1 for v in verdicts if status[answer_key(v)] != "completed")
    figures["harness_errors"] = {
        "agent": agent_errors,
        "judge": figures["harness_error"] - agent_errors,
    }
    figures["accuracy_unit"] = "answer"
    figures["accuracy_interval_basis"] = (
        "answers, independent (one per point)"
        if answers["samples_per_point"] == 1
        else "answers, assumed independent: samples of one point are correlated, so this "
        "interval is too narrow; read pass@k"
    )
    # were every harness error, the agent's or the judge's, resolved
    resolved = harness_error_range(figures["pass"], figures["fail"], figures["harness_error"])
    figures["accuracy_range_over_harness_errors"] = list(resolved) if resolved else None
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for verdict in verdicts:
        grouped[verdict["point_id"]].append(verdict)
    agent_model = (answers["experiment"].get("agent") or {}).get("model")
    records = []
    for point_id in sorted(grouped):
        outcomes = [v["outcome"] for v in grouped[point_id]]
        scored = sum(1 for o in outcomes if o != HARNESS_ERROR)
        passed = outcomes.count(PASS)
        records.append({
            "point_id": point_id,
            "agent_model": agent_model,
            "judge_model": judge["model"],
            "date": max(v["judged_at"] for v in grouped[point_id])[:10],
            "n_answers": len(outcomes),
            "n_scored": scored,
            "n_pass": passed,
            "n_harness_error": len(outcomes) - scored,
            "passk": {str(k): pass_at_k(scored, passed, k) for k in range(1, scored + 1)},
            "capabilities": line,
        })  # fmt: skip
    most = max((len(g) for g in grouped.values()), default=0)
    figures["pass_at_k"] = {}
    for k in range(1, most + 1):
        values = [float(r["passk"][str(k)]) for r in records if str(k) in r["passk"]]
        figures["pass_at_k"][str(k)] = {
            "value": sum(values) / len(values) if values else None,
            "points": len(values),
            "points_without_k_scored_answers": len(records) - len(values),
        }
    return figures, records


def models_returned(verdicts: list[dict[str, Any]]) -> list[str]:
    return sorted({v["judge"]["model_returned"] for v in verdicts if v["judge"]["model_returned"]})


def judged_set(
    answer_set_record: AnswerSet,
    verdicts: dict[tuple[str, int], JudgeReply],
    controls: dict[str, Any],
) -> JudgedSet:
    """The judged set over one answer set: a verdict for every answer (``(point_id,
    sample)``), refused if its verdicts come from more than one judge."""
    answers = plain(answer_set_record)
    judges = {(v.model_configured, v.effort) for v in verdicts.values()}
    if len(judges) > 1:
        raise PointsArtifactError(
            f"one judge per judged set; these verdicts come from {sorted(judges)}"
        )
    wanted = {answer_key(a) for a in answers["answers"]}
    if set(verdicts) != wanted:
        raise PointsArtifactError("a judged set holds one verdict for every answer, no other")
    model, effort = next(iter(judges)) if judges else (DEFAULT_MODEL, DEFAULT_EFFORT)
    records = [
        {"point_id": k[0], "sample": k[1], **verdicts[k].to_json()} for k in sorted(verdicts)
    ]
    records = as_stored(records)
    judge = {"model": model, "effort": effort, "models_returned": models_returned(records)}
    fields = judge_capabilities(answers, judge)
    line = capability_line(fields)
    figures, per_point = judged_figures(answers, records, judge, line)
    answered = sorted({a["point_id"] for a in answers["answers"]})
    body = {
        "artifact_type": JUDGED_SET,
        "schema_version": JUDGED_SET_VERSION,
        "answer_set_sha256": canonical_sha256(answers),
        "experiment": answers["experiment"],
        "judge": judge,
        "controls": controls,
        "reliability": as_stored(assess(as_stored(controls), answered)),
        "verdicts": records,
        "points": per_point,
        "summary": figures,
        "capabilities": fields,
        "capability_line": line,
    }
    return typed(body, JudgedSet)


def write_artifact(
    path: str | os.PathLike[str], body: AnswerSet | JudgedSet | dict[str, Any]
) -> str:
    """Write ``{"body", "body_sha256", "written_at"}`` atomically (a temporary file
    renamed over the target), the body a set's plain form (or a body as given); return
    its digest."""
    text = canonical.dumps(plain(body) if isinstance(body, msgspec.Struct) else body)
    sha = "sha256:" + canonical.sha256_hex(text.encode())
    written = datetime.now(UTC).isoformat()
    target = Path(path)
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(
        '{"body":' + text + ',"body_sha256":' + json.dumps(sha)
        + ',"written_at":' + json.dumps(written) + "}\n",
        encoding="utf-8",
    )  # fmt: skip
    os.replace(temporary, target)
    return sha


def read_artifact(path: str | os.PathLike[str], kind: str | None = None) -> dict[str, Any]:
    """The body of an answer or judged set (of ``kind`` when given), once it is whole and
    hashes to its digest."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise PointsArtifactError(f"{where}: not UTF-8 text") from None
    except RecursionError:
        raise PointsArtifactError(f"{where}: nested too deeply to be an artifact") from None
    except json.JSONDecodeError as exc:
        raise PointsArtifactError(f"{where}: not complete JSON (truncated?): {exc}") from None
    if not isinstance(data, dict) or set(data) != {"body", "body_sha256", "written_at"}:
        raise PointsArtifactError(
            f"{where}: an artifact holds exactly body, body_sha256, written_at"
        )
    body = data["body"]
    kinds = (kind,) if kind else (ANSWER_SET, JUDGED_SET)
    if not isinstance(body, dict) or body.get("artifact_type") not in kinds:
        raise PointsArtifactError(f"{where}: not a {' or '.join(kinds)}")
    sha = canonical_sha256(body)
    if sha != data["body_sha256"]:
        raise PointsArtifactError(f"{where}: the body hashes to {sha}, not {data['body_sha256']}")
    return body
