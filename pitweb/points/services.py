"""Writes for point sets: intake of an archive, the reveal, and PITFALL's import.

Every check runs before anything is stored; a refused archive or artifact leaves no row.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness import canonical
from harness.points.artifacts import ANSWER_SET, PointsArtifactError
from harness.points.baseline import answers_from_baseline, import_baseline
from harness.points.demo import DEMO_MODEL
from harness.points.gates import withheld_because
from harness.points.markdown import Point as EnginePoint
from harness.points.markdown import PointError, load_points, suite_sha256
from harness.points.metrics import outcome
from harness.points.seal import commitment, new_salt, question_digest
from harness.points.verify import verify_answers
from pitweb.artifacts import job_folder, spool
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import read_json
from pitweb.jobs import machine
from pitweb.jobs.dispatch import send_on_commit
from pitweb.points.archives import ArchiveError, Limits, unpack
from pitweb.points.models import (
    AnswerSet,
    JudgedSet,
    ModelEndpoint,
    Point,
    PointSet,
    PointSetState,
    PointsJob,
    Verdict,
)

NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,99}")
RESERVED_NAMES = {"upload", "models"}  # a page of its own under /points/


def _loaded(folder: Path) -> list[EnginePoint]:
    """The points of an unpacked folder, as the engine's validator reads them; the
    message names the file by its path inside the archive."""
    try:
        return load_points(folder)
    except PointError as exc:
        raise SubmissionError("invalid_points", str(exc).replace(f"{folder}/", "")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmissionError("invalid_points", f"unreadable point file ({exc})") from None


def _suite_of(point: EnginePoint, root: Path) -> str:
    return point.path.parent.relative_to(root).as_posix().removeprefix(".")


def _create(
    *,
    name: str,
    title: str,
    points: Sequence[EnginePoint],
    root: Path,
    state: str,
    reveal_on: dt.date | None,
    source: str,
    user: User | None,
) -> PointSet:
    if not NAME.fullmatch(name) or len(name) > 100 or name in RESERVED_NAMES:
        raise SubmissionError(
            "invalid_input",
            "name: lowercase letters and digits in words joined by '-', at most 100 "
            f"characters, and not {', '.join(sorted(RESERVED_NAMES))}",
        )
    suite = suite_sha256(list(points))
    if PointSet.objects.filter(suite_sha256=suite).exists():
        raise SubmissionError("duplicate_point_set", "these points are already a point set", 409)
    if PointSet.objects.filter(name=name).exists():
        raise SubmissionError("name_taken", f"a point set is already named {name!r}", 409)
    salt = new_salt() if state == PointSetState.SEALED else ""
    with transaction.atomic():
        point_set = PointSet.objects.create(
            name=name,
            title=title,
            suite_sha256=suite,
            question_digest=question_digest(points),
            state=state,
            reveal_on=reveal_on,
            salt=salt,
            commitment=commitment(salt, points) if salt else "",
            source=source,
            created_by=user,
        )
        Point.objects.bulk_create(
            Point(
                point_set=point_set,
                point_id=p.id,
                suite=_suite_of(p, root),
                position=n,
                question=p.question,
                question_sha256=p.question_sha256,
                text=p.text,
                ground_truth=p.ground_truth,
                provenance=p.provenance,
                point_sha256=p.point_sha256,
                ground_truth_sha256=p.ground_truth_sha256,
            )
            for n, p in enumerate(points)
        )
        audit_record(
            actor=user,
            action="point_set_created",
            reason=f"point set {name} ({state}, {len(points)} points)",
            public=state != PointSetState.SEALED,
        )
    return point_set


def point_set_upload(
    *,
    user: User,
    name: str,
    title: str,
    archive: IO[bytes],
    state: str,
    reveal_on: dt.date | None,
    source: str = "",
) -> PointSet:
    """Staff's point set from a zip or tarball of PITFALL Markdown files (``META.md`` at
    its root, or in its one top folder), checked whole by the engine before it is stored."""
    if state not in PointSetState.values:
        raise SubmissionError("invalid_input", f"state must be one of {', '.join(PointSetState)}")
    if state == PointSetState.SEALED and reveal_on is None:
        raise SubmissionError("invalid_input", "a sealed set needs a reveal date")
    if state == PointSetState.REVEALED:
        raise SubmissionError(
            "invalid_input", "a set is revealed by the reveal, not at upload: upload it sealed"
        )
    spooled, _, _ = spool(archive, settings.PITWEB_MAX_POINTSET_BYTES, "the archive")
    limits = Limits(settings.PITWEB_MAX_POINTSET_MEMBERS, settings.PITWEB_MAX_POINTSET_UNPACKED)
    try:
        with job_folder("points", name) as tmp:
            try:
                unpack(spooled, tmp, limits)
            except ArchiveError as exc:
                raise SubmissionError("invalid_archive", f"archive refused: {exc}") from None
            points = _loaded(tmp)
            return _create(
                name=name,
                title=title,
                points=points,
                root=tmp,
                state=state,
                reveal_on=reveal_on if state == PointSetState.SEALED else None,
                source=source,
                user=user,
            )
    finally:
        spooled.unlink(missing_ok=True)


def point_set_reveal(*, point_set: PointSet, user: User, today: dt.date | None = None) -> None:
    """Publish a sealed set's salt and hidden sections, on or after its reveal date."""
    today = today or timezone.localdate()
    with transaction.atomic():
        locked = PointSet.objects.select_for_update().get(pk=point_set.pk)
        if locked.state != PointSetState.SEALED:
            raise SubmissionError("not_sealed", f"point set {locked.name} is {locked.state}", 409)
        if locked.reveal_on is None or today < locked.reveal_on:
            raise SubmissionError(
                "too_early", f"point set {locked.name} may be revealed on {locked.reveal_on}", 409
            )
        locked.state = PointSetState.REVEALED
        locked.revealed_at = timezone.now()
        locked.save(update_fields=["state", "revealed_at"])
        audit_record(
            actor=user,
            action="point_set_revealed",
            reason=f"point set {locked.name}: salt {locked.salt}",
            public=True,
        )
    point_set.refresh_from_db()


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
        point_set = PointSet.objects.filter(suite_sha256=suite).first() or _create(
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
        answer_set = _answer_set(point_set, answers, AnswerSet.Origin.IMPORTED, user)
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


def _answer_set(
    point_set: PointSet, body: dict[str, Any], origin: str, user: User | None
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
    )


def _verdicts(
    judged: JudgedSet,
    point_set: PointSet,
    classes: dict[str, str | None],
    reasons: dict[str, str],
    answers: dict[str, Any],
) -> None:
    by_id = {p.point_id: p for p in point_set.points.all()}
    texts = {a["point_id"]: a["text"] for a in answers["answers"] if a["sample"] == 0}
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


# -- models and jobs -----------------------------------------------------------------------


def model_register(
    *,
    user: User | None,
    name: str,
    base_url: str,
    model: str,
    effort: str = "",
    api_key_env: str = "",
    concurrency: int = 4,
    rate_per_minute: int = 0,
    timeout_seconds: int = 600,
) -> ModelEndpoint:
    """A model the workers may call (an OpenAI-compatible endpoint); its key stays in the
    workers' environment, named by ``api_key_env``."""
    if not NAME.fullmatch(name) or len(name) > 100:
        raise SubmissionError("invalid_input", "name: lowercase words joined by '-'")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SubmissionError("invalid_input", "base_url must be an http(s) URL")
    if not model:
        raise SubmissionError("invalid_input", "model is required")
    if api_key_env and not ENV_NAME.fullmatch(api_key_env):
        raise SubmissionError("invalid_input", "api_key_env must be an environment variable name")
    if not 1 <= concurrency <= 64 or rate_per_minute < 0 or not 1 <= timeout_seconds <= 3600:
        raise SubmissionError(
            "invalid_input", "concurrency 1-64, rate_per_minute >= 0, timeout 1-3600 seconds"
        )
    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name=name,
        defaults={
            "base_url": base_url, "model": model, "effort": effort, "api_key_env": api_key_env,
            "concurrency": concurrency, "rate_per_minute": rate_per_minute,
            "timeout_seconds": timeout_seconds, "created_by": user,
        },
    )  # fmt: skip
    return endpoint


def answer_job_request(
    *, user: User | None, point_set: PointSet, endpoint: ModelEndpoint, samples: int = 1
) -> PointsJob:
    """Have the workers answer every point of ``point_set`` with ``endpoint``."""
    if not 1 <= samples <= 20:
        raise SubmissionError("invalid_input", "samples: 1 to 20 answers per point")
    return _request(
        PointsJob(
            kind=PointsJob.Kind.ANSWER, point_set=point_set, endpoint=endpoint, samples=samples,
            requested_by=user, reason=f"answer {point_set.name} with {endpoint.name}",
        )
    )  # fmt: skip


def judge_job_request(
    *,
    user: User | None,
    answer_set: AnswerSet,
    endpoint: ModelEndpoint,
    stability_k: int = 3,
    stride: int = 10,
) -> PointsJob:
    """Have the workers judge ``answer_set`` with the site's judge ``endpoint``: controls
    first, then every answer, then the stability sample. Every answer set the site shows
    verdicts for is judged here, an imported or uploaded one included."""
    if not 2 <= stability_k <= 10 or not 1 <= stride <= 1000:
        raise SubmissionError("invalid_input", "stability_k 2-10, stride 1-1000")
    return _request(
        PointsJob(
            kind=PointsJob.Kind.JUDGE, point_set=answer_set.point_set, endpoint=endpoint,
            answer_set=answer_set, stability_k=stability_k, stride=stride, requested_by=user,
            reason=f"judge {answer_set.model}'s answers with {endpoint.name}",
        )
    )  # fmt: skip


def _request(job: PointsJob) -> PointsJob:
    from pitweb.points.work import estimated_calls

    with transaction.atomic():
        job.total_calls = estimated_calls(job)
        job.save()
        audit_record(actor=job.requested_by, action=f"points_{job.kind}", reason=job.reason,
                     public=job.point_set.state != PointSetState.SEALED)  # fmt: skip
        enqueue_points_job(job.pk)
    return job


def enqueue_points_job(job_id: int) -> None:
    """Send job ``job_id`` to a worker once the transaction commits: the one place these
    services reach the tasks."""
    from pitweb.points.tasks import points_job_task

    send_on_commit(points_job_task, job_id)


def points_job_finish(*, job_id: int, worker: str, state: str, **fields: Any) -> bool:
    return machine.finish(PointsJob, pk=job_id, worker=worker, state=state, **fields)


def answer_job_finish(*, job_id: int, worker: str, body: dict[str, Any], paid_calls: int) -> None:
    """The answers the workers made, stored as an answer set, and the job done."""
    with transaction.atomic():
        job = PointsJob.objects.select_related("point_set").get(pk=job_id)
        answer_set = _answer_set(job.point_set, body, AnswerSet.Origin.ANSWERED, job.requested_by)
        points_job_finish(
            job_id=job_id, worker=worker, state=PointsJob.State.DONE, answer_set=answer_set,
            done_calls=paid_calls, message=f"{len(body['answers'])} answer(s): {body['status']}",
        )  # fmt: skip


def judge_job_finish(*, job_id: int, worker: str, body: dict[str, Any], paid_calls: int) -> None:
    """The site's verdicts stored as a judged set (a re-judgment linked to the set it
    follows, with what changed per answer), and the job done."""
    with transaction.atomic():
        job = PointsJob.objects.select_related("answer_set", "answer_set__point_set").get(pk=job_id)
        answer_set = job.answer_set
        assert answer_set is not None
        reliability = body["reliability"]
        previous = answer_set.judged.order_by("-created_at").first()
        judged = JudgedSet.objects.create(
            answer_set=answer_set,
            previous=previous,
            origin=JudgedSet.Origin.SITE,
            status=JudgedSet.Status.USABLE
            if reliability["status"] == "usable"
            else JudgedSet.Status.JUDGE_UNRELIABLE,
            judge_model=body["judge"]["model"],
            judge_effort=body["judge"]["effort"],
            judge_pinned=bool(body["capabilities"].get("judge_pinned")),
            not_rankable_because=_site_not_rankable(body),
            broken_rules=reliability["broken"],
            summary=body["summary"],
            body=body,
            judged_at=max((v["judged_at"] for v in body["verdicts"]), default=""),
        )
        verdicts = {(v["point_id"], v["sample"]): v for v in body["verdicts"]}
        texts = {(a["point_id"], a["sample"]): a["text"] for a in answer_set.body["answers"]}
        by_id = {p.point_id: p for p in answer_set.point_set.points.all()}
        Verdict.objects.bulk_create(
            Verdict(
                judged_set=judged, point=by_id[point_id], sample=sample,
                judged_class=v["class"] or "", outcome=v["outcome"],
                decisive_reason=v["decisive_reason"], answer=texts.get((point_id, sample), ""),
                judge_model=v["judge"]["model_configured"],
                judge_model_returned=v["judge"]["model_returned"] or "", judged_at=v["judged_at"],
            )
            for (point_id, sample), v in verdicts.items()
        )  # fmt: skip
        if previous is not None:
            judged.changes = _changes(previous, verdicts)
            judged.save(update_fields=["changes"])
        points_job_finish(
            job_id=job_id, worker=worker, state=PointsJob.State.DONE, judged_set=judged,
            done_calls=paid_calls, message=f"judged {len(verdicts)} answer(s): {reliability['status']}",
        )  # fmt: skip


def _site_not_rankable(body: dict[str, Any]) -> str:
    reliability = body["reliability"]
    because = withheld_because(reliability["status"], reliability["broken"])
    if because:
        return because
    if body["judge"]["model"] == DEMO_MODEL:
        return "the demo judge: a string rule, not a model"
    if not body["capabilities"].get("judge_pinned"):
        return "an unpinned judge: the seed pins the judge, and only its verdicts compare"
    return ""


def _changes(previous: JudgedSet, verdicts: dict[tuple[str, int], Any]) -> list[dict[str, Any]]:
    """Per answer, the class that changed since ``previous`` (harness errors as null)."""
    before = {
        (point_id, sample): judged_class or None
        for point_id, sample, judged_class in previous.verdicts.values_list(
            "point__point_id", "sample", "judged_class"
        )
    }
    changed = []
    for key in sorted(set(before) | set(verdicts)):
        now = verdicts[key]["class"] if key in verdicts else None
        was = before.get(key)
        if key not in before or key not in verdicts or was != now:
            changed.append({"point_id": key[0], "sample": key[1], "was": was, "now": now})
    return changed


def points_requeue_stale(*, older_than: dt.timedelta | None = None) -> list[int]:
    """The sweep's share: a points job whose worker stopped heart-beating goes back to
    the queue (its journal keeps the paid calls), and queued jobs whose message was lost
    are sent again."""
    swept = machine.sweep_stale(PointsJob, older_than=older_than)
    for pk in swept.to_dispatch:
        enqueue_points_job(pk)
    return swept.to_dispatch


def answer_set_upload(
    *, user: User, point_set: PointSet, upload: IO[bytes]
) -> tuple[AnswerSet, bool]:
    """A submitter's answer set (the engine's ``pit_answer_set``), checked whole against the
    set's point files by the engine before it is stored; ``(answer set, created)``.

    A sealed set takes none: an answer set binds each point's file hash, which covers the
    hidden sections, so checking one would tell its sender whether a guess of them was
    right. A sealed set is answered by the site's workers (staff register the model)."""
    if point_set.state == PointSetState.SEALED:
        raise SubmissionError(
            "sealed_point_set",
            f"point set {point_set.name} is sealed until {point_set.reveal_on}: its answers "
            "are made by the site's workers (ask staff to register your model), not uploaded",
            409,
        )
    data = upload.read(settings.PITWEB_MAX_TRAJECTORY_BYTES + 1)
    if len(data) > settings.PITWEB_MAX_TRAJECTORY_BYTES:
        raise SubmissionError(
            "too_large", f"answers is larger than {settings.PITWEB_MAX_TRAJECTORY_BYTES} bytes", 413
        )
    body = read_json(data, "answers")
    if not isinstance(body, dict) or body.get("artifact_type") != ANSWER_SET:
        raise SubmissionError("invalid_answer_set", f"answers is not a {ANSWER_SET} artifact")
    try:
        verify_answers(body, _engine_points(point_set))
    except (PointsArtifactError, KeyError, TypeError, AttributeError) as exc:
        raise SubmissionError("invalid_answer_set", f"answers refused: {_said(exc)}") from None
    sha = canonical.digest(body)
    found = AnswerSet.objects.filter(point_set=point_set, sha256=sha).first()
    if found is not None:
        return found, False
    with transaction.atomic():
        answer_set = _answer_set(point_set, body, AnswerSet.Origin.UPLOADED, user)
        judge = ModelEndpoint.objects.filter(name=settings.PITWEB_POINTS_JUDGE).first()
        if judge is not None:  # every answer set the site shows verdicts for, it judged
            judge_job_request(user=user, answer_set=answer_set, endpoint=judge)
    return answer_set, True


def _said(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"a required field is missing: {exc}"
    return str(exc)[:500]


def _engine_points(point_set: PointSet) -> list[EnginePoint]:
    from pitweb.points.work import engine_points

    return engine_points(point_set)
