"""Writes for answer sets and judged sets: the workers' answers and verdicts, a
submitter's upload, and PITFALL's judged artifact imported. Every check runs before
anything is stored; a refused artifact leaves no row.
"""

from __future__ import annotations

import datetime as dt
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness import canonical
from harness.forward.log import Answers
from harness.points.artifacts import ANSWER_SET, PointsArtifactError, typed
from harness.points.baseline import answers_from_baseline, import_baseline
from harness.points.demo import DEMO_MODEL
from harness.points.gates import withheld_because
from harness.points.live import LiveError, check_answerable, market_day
from harness.points.markdown import load_points, suite_sha256
from harness.points.metrics import outcome
from harness.points.model import AnswerSet as AnswerSetRecord
from harness.points.model import JudgedSet as JudgedSetRecord
from harness.points.model import VerdictRecord, plain
from harness.points.verify import verify_answers
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import read_json
from pitweb.forward.models import LogEntry
from pitweb.forward.services import points_logged
from pitweb.points.engine import engine_points, live_points
from pitweb.points.models import (
    AnswerSet,
    JudgedSet,
    ModelEndpoint,
    PointSet,
    PointSetState,
    PointsJob,
    Verdict,
)
from pitweb.points.services.jobs import judge_job_request, points_job_finish
from pitweb.points.services.point_sets import point_set_create, point_set_unseal


def timing_of(point_set: PointSet) -> str:
    """When answers arrive relative to the set's labels: before the reveal, after it, or
    never hidden (a public set)."""
    return {
        PointSetState.SEALED: AnswerSet.Timing.BEFORE_REVEAL,
        PointSetState.REVEALED: AnswerSet.Timing.AFTER_REVEAL,
    }.get(PointSetState(point_set.state), AnswerSet.Timing.OPEN)


def answer_set_store(
    point_set: PointSet,
    body: dict[str, Any],
    origin: str,
    user: User | None,
    log_entry: LogEntry | None = None,
) -> AnswerSet:
    sha = canonical.digest(body)
    found = AnswerSet.objects.filter(point_set=point_set, sha256=sha).first()
    if found is not None:
        return found
    agent = (body.get("experiment") or {}).get("agent") or {}
    return AnswerSet.objects.create(
        point_set=point_set,
        sha256=sha,
        model=str(agent.get("model") or "unnamed model"),
        origin=origin,
        body=body,
        submitter=user,
        timing=timing_of(point_set),
        log_entry=log_entry,
    )


def answer_job_finish(*, job_id: int, worker: str, body: AnswerSetRecord, paid_calls: int) -> None:
    """The answers the workers made, stored as an answer set, and the job done."""
    with transaction.atomic():
        job = PointsJob.objects.select_related("point_set").get(pk=job_id)
        answer_set = answer_set_store(
            job.point_set, plain(body), AnswerSet.Origin.ANSWERED, job.requested_by
        )
        points_job_finish(
            job_id=job_id, worker=worker, state=PointsJob.State.DONE, answer_set=answer_set,
            done_calls=paid_calls, message=f"{len(body.answers)} answer(s): {body.status}",
        )  # fmt: skip


def judge_job_finish(*, job_id: int, worker: str, body: JudgedSetRecord, paid_calls: int) -> None:
    """The site's verdicts stored as a judged set (a re-judgment linked to the set it
    follows, with what changed per answer), and the job done."""
    with transaction.atomic():
        job = PointsJob.objects.select_related("answer_set", "answer_set__point_set").get(pk=job_id)
        answer_set = job.answer_set
        assert answer_set is not None
        reliability = body.reliability
        previous = answer_set.judged.order_by("-created_at").first()
        judged = JudgedSet.objects.create(
            answer_set=answer_set,
            previous=previous,
            origin=JudgedSet.Origin.SITE,
            status=JudgedSet.Status.USABLE
            if reliability.status == "usable"
            else JudgedSet.Status.JUDGE_UNRELIABLE,
            judge_model=body.judge.model,
            judge_effort=body.judge.effort,
            judge_pinned=bool(body.capabilities.get("judge_pinned")),
            not_rankable_because=_site_not_rankable(body),
            broken_rules=reliability.broken,
            summary=body.summary,
            body=plain(body),
            judged_at=max((v.judged_at for v in body.verdicts), default=""),
        )
        verdicts = {(v.point_id, v.sample): v for v in body.verdicts}
        texts = {(a.point_id, a.sample): a.text for a in answer_set.record.answers}
        by_id = {p.point_id: p for p in answer_set.point_set.points.all()}
        Verdict.objects.bulk_create(
            Verdict(
                judged_set=judged,
                point=by_id[point_id],
                sample=sample,
                judged_class=v.judged_class or "",
                outcome=v.outcome,
                decisive_reason=v.decisive_reason,
                answer=texts.get((point_id, sample), ""),
                judge_model=v.judge.model_configured,
                judge_model_returned=v.judge.model_returned or "",
                judged_at=v.judged_at,
            )
            for (point_id, sample), v in verdicts.items()
        )
        if previous is not None:
            judged.changes = _changes(previous, verdicts)
            judged.save(update_fields=["changes"])
        points_job_finish(
            job_id=job_id, worker=worker, state=PointsJob.State.DONE, judged_set=judged,
            done_calls=paid_calls, message=f"judged {len(verdicts)} answer(s): {reliability.status}",
        )  # fmt: skip


def _site_not_rankable(body: JudgedSetRecord) -> str:
    because = withheld_because(body.reliability.status, body.reliability.broken)
    if because:
        return because
    if body.judge.model == DEMO_MODEL:
        return "the demo judge: a string rule, not a model"
    if not body.capabilities.get("judge_pinned"):
        return "an unpinned judge: the seed pins the judge, and only its verdicts compare"
    return ""


def _changes(
    previous: JudgedSet, verdicts: dict[tuple[str, int], VerdictRecord]
) -> list[dict[str, Any]]:
    """Per answer, the class that changed since ``previous`` (harness errors as null)."""
    before = {
        (point_id, sample): judged_class or None
        for point_id, sample, judged_class in previous.verdicts.values_list(
            "point__point_id", "sample", "judged_class"
        )
    }
    changed = []
    for key in sorted(set(before) | set(verdicts)):
        now = verdicts[key].judged_class if key in verdicts else None
        was = before.get(key)
        if key not in before or key not in verdicts or was != now:
            changed.append({"point_id": key[0], "sample": key[1], "was": was, "now": now})
    return changed


def answer_set_upload(
    *, user: User, point_set: PointSet, upload: IO[bytes], at: datetime | None = None
) -> tuple[AnswerSet, bool]:
    """A submitter's answer set (the engine's ``pit_answer_set``), checked whole against the
    set's points by the engine before it is stored; ``(answer set, created)``.

    A public or revealed set's answers are judged at once (a revealed set's are marked
    ``after_reveal``: its labels were public). A sealed set takes answers made from its
    published Questions (``harness.points.questions``), over every point: they are checked
    for form by what is public alone (the Questions' hashes and digest; never a hash over a
    hidden section, which would tell the sender whether a guess of it was right), stored,
    and acknowledged by an entry of the commitment log (their digest, the site's time). They
    are not judged until the reveal, and the sender learns nothing but that they were
    received: the same answer whatever the answers say.

    ``at``: a stated time instead of now, for the demo's management commands only (as
    ``commitment_create``'s); no page or API passes it."""
    data = upload.read(settings.PITWEB_MAX_TRAJECTORY_BYTES + 1)
    if len(data) > settings.PITWEB_MAX_TRAJECTORY_BYTES:
        raise SubmissionError(
            "too_large", f"answers is larger than {settings.PITWEB_MAX_TRAJECTORY_BYTES} bytes", 413
        )
    body = read_json(data, "answers")
    if not isinstance(body, dict) or body.get("artifact_type") != ANSWER_SET:
        raise SubmissionError("invalid_answer_set", f"answers is not a {ANSWER_SET} artifact")
    sealed = point_set.state == PointSetState.SEALED
    if point_set.live and sealed:  # answered only until its earliest as-of date passes
        try:
            check_answerable(live_points(point_set), market_day(at or timezone.now()))
        except LiveError as exc:
            raise SubmissionError("answers_closed", str(exc), 409) from None
    points = engine_points(point_set)  # a live cohort's: its Questions alone, until resolved
    if sealed:
        _bound_by_questions(point_set, body, len(points))
    try:
        verify_answers(body, points)
        typed(body, AnswerSetRecord)  # each field of its type too: the judge job reads it so
    except (PointsArtifactError, KeyError, TypeError, AttributeError) as exc:
        raise SubmissionError("invalid_answer_set", f"answers refused: {_said(exc)}") from None
    sha = canonical.digest(body)
    found = AnswerSet.objects.filter(point_set=point_set, sha256=sha).first()
    if found is not None:
        return found, False
    if sealed:
        return _received_sealed(user, point_set, body, sha, at), True
    with transaction.atomic():
        answer_set = answer_set_store(point_set, body, AnswerSet.Origin.UPLOADED, user)
        judge = ModelEndpoint.objects.filter(name=settings.PITWEB_POINTS_JUDGE).first()
        if judge is not None:  # every answer set the site shows verdicts for, it judged
            judge_job_request(user=user, answer_set=answer_set, endpoint=judge)
    return answer_set, True


def point_set_reveal(
    *,
    point_set: PointSet,
    user: User,
    today: dt.date | None = None,
    judge: ModelEndpoint | None = None,
) -> list[PointsJob]:
    """The reveal: a sealed set's salt and hidden sections published (on or after its
    reveal date), and every answer set received while it was sealed sent to the site's
    judge, controls and gates first, in the same transaction. Returns the judge jobs;
    none when no judge is registered (``PITWEB_POINTS_JUDGE``, or ``judge``): the answers
    then wait, as the set's page says, until staff register it and ask again."""
    with transaction.atomic():
        point_set_unseal(point_set=point_set, user=user, today=today)
        return sealed_answers_judge(point_set=point_set, user=user, judge=judge)


def sealed_answers_judge(
    *, point_set: PointSet, user: User | None, judge: ModelEndpoint | None = None
) -> list[PointsJob]:
    """A judge job for each answer set made while ``point_set`` was sealed (uploaded, or
    the site's workers') that no judge has judged or is judging; nothing before the
    reveal. ``judge``: the site's judge (``PITWEB_POINTS_JUDGE``) unless given."""
    if point_set.state != PointSetState.REVEALED:
        raise SubmissionError(
            "not_revealed", f"point set {point_set.name} is {point_set.state}: its answers "
            "are judged at its reveal", 409,
        )  # fmt: skip
    judge = judge or ModelEndpoint.objects.filter(name=settings.PITWEB_POINTS_JUDGE).first()
    if judge is None:
        return []
    waiting = (
        point_set.answer_sets.filter(timing=AnswerSet.Timing.BEFORE_REVEAL, judged__isnull=True)
        .exclude(jobs__kind=PointsJob.Kind.JUDGE)
        .exclude(origin=AnswerSet.Origin.IMPORTED)
        .order_by("created_at")
    )
    return [judge_job_request(user=user, answer_set=a, endpoint=judge) for a in waiting]


def _bound_by_questions(point_set: PointSet, body: dict[str, Any], count: int) -> None:
    """A sealed set's answers bind its published Questions and answer every point: read
    off the body alone, before the engine checks it by the Questions."""
    if body.get("point_count") != count:
        raise SubmissionError(
            "incomplete_cohort",
            f"a sealed set's answers answer all {count} of its points: a formal result "
            "compares like with like",
        )
    if body.get("point_suite_sha256") != point_set.question_digest:
        raise SubmissionError(
            "not_bound_by_questions",
            f"point set {point_set.name} is sealed until {point_set.reveal_on}: it takes "
            "answers made from its published Questions (pit-harness points answer "
            f"--questions questions.json), whose point_suite_sha256 is its question digest "
            f"{point_set.question_digest}",
        )


def _received_sealed(
    user: User, point_set: PointSet, body: dict[str, Any], sha: str, at: datetime | None
) -> AnswerSet:
    assert point_set.reveal_on is not None  # a sealed set has its date (point_set_upload)
    agent = (body.get("experiment") or {}).get("agent") or {}
    entry = Answers(
        answer_set=sha,
        model=str(agent.get("model") or "unnamed model")[:500],
        point_set=point_set.name,
        point_set_commitment=point_set.commitment,
        question_digest=point_set.question_digest,
        reveal_on=point_set.reveal_on.isoformat(),
        submitter=user.username,
    )

    def store(row: LogEntry) -> AnswerSet:
        answer_set = answer_set_store(point_set, body, AnswerSet.Origin.UPLOADED, user, row)
        audit_record(
            actor=user, action="answers_received", public=True,
            reason=f"answers {sha} to sealed point set {point_set.name} (log entry {row.seq})",
        )  # fmt: skip
        return answer_set

    return points_logged(store, answers=entry, at=at)


def _said(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"a required field is missing: {exc}"
    return str(exc)[:500]


def pitfall_import(
    *, points_dir: Path, results: Path, name: str, user: User | None = None
) -> JudgedSet:
    """PITFALL's points folder (public: development data) and one of its judged artifacts,
    through the engine's importer (hashes against the files, the summary against the
    results, each verdict against its judge's raw reply). The same points again are the
    same set; the same artifact again is the same judged set."""
    points = load_points(points_dir)  # PointError: the caller says which file and rule
    imported = import_baseline(results, points)  # ArtifactError likewise
    answers = answers_from_baseline(results, points)
    suite = suite_sha256(points)
    with transaction.atomic():
        point_set = PointSet.objects.filter(suite_sha256=suite).first() or point_set_create(
            name=name,
            title="PITFALL's public points",
            points=points,
            root=Path(points_dir),
            state=PointSetState.PUBLIC,
            reveal_on=None,
            source="PITFALL (MIT): its points folder and judged artifact "
            f"{Path(results).name}, imported by the engine's importer",
            user=user,
        )
        answer_set = answer_set_store(point_set, plain(answers), AnswerSet.Origin.IMPORTED, user)
        existing = answer_set.judged.filter(origin=JudgedSet.Origin.IMPORTED).first()
        if existing is not None:
            return existing
        judged = JudgedSet.objects.create(
            answer_set=answer_set,
            origin=JudgedSet.Origin.IMPORTED,
            status=JudgedSet.Status.IMPORTED,
            judge_model=str(imported.judge.get("model")),
            judge_effort=str(imported.judge.get("reasoning_effort") or ""),
            judge_pinned=imported.judge_pinned,
            not_rankable_because=imported.not_rankable_because
            or "another judge's verdicts: the site ranks only what its own judge judged",
            summary=imported.summary(),
            judged_at=imported.started_at,
        )
        _verdicts(judged, point_set, imported.classes, imported.reasons, answers)
        site_judge = ModelEndpoint.objects.filter(name=settings.PITWEB_POINTS_JUDGE).first()
        if site_judge is not None:  # their verdicts are shown; the site judges again
            judge_job_request(user=user, answer_set=answer_set, endpoint=site_judge)
    return judged


def _verdicts(
    judged: JudgedSet,
    point_set: PointSet,
    classes: dict[str, str | None],
    reasons: dict[str, str],
    answers: AnswerSetRecord,
) -> None:
    by_id = {p.point_id: p for p in point_set.points.all()}
    texts = {a.point_id: a.text for a in answers.answers if a.sample == 0}
    Verdict.objects.bulk_create(
        Verdict(
            judged_set=judged,
            point=by_id[point_id],
            judged_class=judged_class or "",
            outcome=outcome(judged_class),
            decisive_reason=reasons.get(point_id, ""),
            answer=texts.get(point_id, ""),
            judge_model=judged.judge_model,
            judged_at=judged.judged_at,
        )
        for point_id, judged_class in classes.items()
    )
