"""A judged point set, verified, in the one shape both exports read.

Two kinds of judged set are exported, each only after the check that proves it:

- ours (``pit_judged_set``), with its answer set: ``harness.points.verify.verify_judged``
  against the point files (every verdict parsed back from the judge's raw reply, every
  control and figure recomputed); a set whose judge's controls failed
  (``judge_unreliable``) is not a result, and is refused;
- PITFALL's (``pitfall_point_baseline``): ``harness.points.baseline``'s import checks
  against the point files (hashes, summary, each verdict against its judge's raw reply).
  It carries no controls, and a judge other than PITFALL's pinned one is never rankable:
  both are said, not hidden.

Each answer becomes a :class:`JudgedAnswer` with the point's Question (public) and never
its Ground Truth or Provenance: a sealed set's hidden sections stay hidden in every export;
the point is bound by its hashes instead.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.interchange.every_eval_ever import InterchangeError
from harness.points.artifacts import (
    ANSWER_SET,
    JUDGED_SET,
    PointsArtifactError,
    answer_key,
    canonical_sha256,
    read_artifact,
)
from harness.points.baseline import ARTIFACT_TYPE, ArtifactError, answers_from_baseline, checked
from harness.points.baseline import read_artifact as read_baseline
from harness.points.judge import DEFAULT_EFFORT, DEFAULT_MODEL, PROMPT
from harness.points.markdown import Point
from harness.points.metrics import outcome, summary
from harness.points.verify import verify_judged
from harness.version import HARNESS_VERSION

NOT_HELD = "not held in the artifact"


@dataclass(frozen=True)
class JudgedAnswer:
    """One judged answer: its point (by id and hashes), the Question, the answer, and the
    verdict (``judged_class`` None: a harness error, ``reason`` then says what failed)."""

    point_id: str
    sample: int
    question: str
    point_sha256: str
    question_sha256: str
    answer: str
    judged_class: str | None
    reason: str
    tokens: dict[str, int]

    @property
    def outcome(self) -> str:
        return outcome(self.judged_class)


@dataclass(frozen=True)
class JudgedPoints:
    """A verified judged set, as the exports read it."""

    kind: str  # pit_judged_set | pitfall_point_baseline
    sha256: str  # the set's digest: its body's (ours), its file's (PITFALL's)
    agent_model: str | None
    agent_effort: str | None
    judge_model: str
    judge_effort: str | None
    judge_prompt: str | None  # the template, where we hold it
    suite_sha256: str
    samples_per_point: int
    started_at: str  # UTC, ISO 8601
    completed_at: str
    answers: tuple[JudgedAnswer, ...]
    capability_line: str
    reliability: str  # usable, or what stands for the controls a set does not carry
    rankable: bool
    not_rankable_because: str | None
    verified_by: str
    library: tuple[str, str]  # the harness that answered, and its version ("unknown")

    def figures(self) -> dict[str, Any]:
        """Outcomes, accuracy with its 95% Wilson interval and the class counts, over the
        judged answers (harness errors outside every denominator)."""
        return summary([a.judged_class for a in self.answers])

    @property
    def point_ids(self) -> list[str]:
        return list(dict.fromkeys(a.point_id for a in self.answers))


def _utc(stamp: str) -> str:
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        raise InterchangeError(f"a time without its zone: {stamp!r}")
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _ours(path: Path, answers_path: Path, points: list[Point]) -> JudgedPoints:
    judged = read_artifact(path, JUDGED_SET)
    answers = read_artifact(answers_path, ANSWER_SET)
    verify_judged(judged, answers, points)
    reliability = judged["reliability"]
    if reliability["status"] != "usable":
        broken = "; ".join(reliability["broken"]) or reliability["status"]
        raise InterchangeError(f"not a result: the judge is unreliable ({broken})")
    by_id = {p.id: p for p in points}
    given = {answer_key(a): a for a in answers["answers"]}
    rows = []
    for verdict in judged["verdicts"]:
        answer = given[answer_key(verdict)]
        rows.append(
            JudgedAnswer(
                point_id=verdict["point_id"],
                sample=verdict["sample"],
                question=by_id[verdict["point_id"]].question,
                point_sha256=by_id[verdict["point_id"]].point_sha256,
                question_sha256=answer["question_sha256"],
                answer=answer["text"],
                judged_class=verdict["class"],
                reason=verdict["decisive_reason"] if verdict["class"] else verdict["error"],
                tokens=dict(answer["tokens"]),
            )
        )
    times = sorted(_utc(v["judged_at"]) for v in judged["verdicts"])
    agent = judged["experiment"].get("agent") or {}
    ran = judged["experiment"].get("harness") or {}
    pinned = judged["capabilities"].get("judge_pinned") is True
    return JudgedPoints(
        kind=JUDGED_SET,
        sha256=canonical_sha256(judged),
        agent_model=agent.get("model"),
        agent_effort=agent.get("effort"),
        judge_model=judged["judge"]["model"],
        judge_effort=judged["judge"]["effort"],
        judge_prompt=PROMPT,
        suite_sha256=answers["point_suite_sha256"],
        samples_per_point=answers["samples_per_point"],
        started_at=times[0],
        completed_at=times[-1],
        answers=tuple(rows),
        capability_line=judged["capability_line"],
        reliability="usable: every positive control held, the negative controls and the "
        "judge's stability within the set's rules",
        rankable=pinned,
        not_rankable_because=None
        if pinned
        else f"the judge ({judged['judge']['model']}/{judged['judge']['effort']}, returned "
        f"{', '.join(judged['judge']['models_returned']) or 'none'}) is not the seed's pinned "
        f"judge ({DEFAULT_MODEL}/{DEFAULT_EFFORT}): these figures do not compare with a pinned "
        "judge's and are not for ranking",
        verified_by=f"pit-harness {HARNESS_VERSION} points verify: every verdict parsed back "
        "from the judge's raw reply, every control and figure recomputed against the point "
        "files; the raw replies are the word of whoever ran the judge",
        library=(str(ran.get("name") or "pit-harness"), str(ran.get("version") or "unknown")),
    )


def _pitfall(path: Path, points: list[Point]) -> JudgedPoints:
    try:
        data = read_baseline(path)
        imported = checked(str(path), data, points)
    except ArtifactError as exc:
        raise InterchangeError(f"not verified: {exc}") from None
    by_id = {p.id: p for p in points}
    found = data.get("harness")
    ran: dict[str, Any] = found if isinstance(found, dict) else {}
    rows = []
    for result in data["results"]:
        point = by_id[result["point_id"]]
        usage = result["agent"].get("usage") or {}
        rows.append(
            JudgedAnswer(
                point_id=point.id,
                sample=0,
                question=point.question,
                point_sha256=point.point_sha256,
                question_sha256=point.question_sha256,
                answer=result["answer"],
                judged_class=imported.classes[point.id],
                reason=imported.reasons[point.id],
                tokens={k: v for k, v in usage.items() if isinstance(v, int)},
            )
        )
    return JudgedPoints(
        kind=ARTIFACT_TYPE,
        sha256="sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(),
        agent_model=imported.agent.get("model"),
        agent_effort=imported.agent.get("reasoning_effort"),
        judge_model=str(imported.judge.get("model")),
        judge_effort=imported.judge.get("reasoning_effort"),
        judge_prompt=None,
        suite_sha256=str(data["point_suite_sha256"]),
        samples_per_point=1,
        started_at=_utc(imported.started_at),
        completed_at=_utc(str(data.get("updated_at") or imported.started_at)),
        answers=tuple(sorted(rows, key=lambda r: r.point_id)),
        capability_line=answers_from_baseline(path, points).capability_line,
        reliability="not measured: PITFALL's artifact carries no judge controls",
        rankable=imported.rankable,
        not_rankable_because=imported.not_rankable_because,
        verified_by=f"pit-harness {HARNESS_VERSION} points import: the point, question and "
        "ground-truth hashes against the point files, the summary against the results, each "
        "verdict against its judge's raw reply",
        library=(str(ran.get("name") or "unknown"), str(ran.get("version") or "unknown")),
    )


def verified_judged(
    path: str | os.PathLike[str],
    points: list[Point],
    *,
    answers: str | os.PathLike[str] | None = None,
) -> JudgedPoints:
    """The judged set at ``path`` (ours, with its answer set ``answers``; or PITFALL's),
    once it verifies against ``points``; InterchangeError saying why not otherwise."""
    file = Path(path)
    try:
        kind = read_baseline(file).get("artifact_type")
    except ArtifactError:
        kind = None
    if kind == ARTIFACT_TYPE:
        return _pitfall(file, points)
    if answers is None:
        raise InterchangeError("a judged set is verified with its answer set: pass --answers")
    try:
        return _ours(file, Path(answers), points)
    except PointsArtifactError as exc:
        raise InterchangeError(f"not verified: {exc}") from None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError) as exc:
        if isinstance(exc, InterchangeError):
            raise
        raise InterchangeError(
            f"not verified: {file}: malformed ({type(exc).__name__}: {exc})"
        ) from None
