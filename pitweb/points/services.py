"""Writes for point sets: intake of an archive, the reveal, and PITFALL's import.

Every check runs before anything is stored; a refused archive or artifact leaves no row.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness import canonical
from harness.points.baseline import answers_from_baseline, import_baseline
from harness.points.markdown import Point as EnginePoint
from harness.points.markdown import PointError, load_points, suite_sha256
from harness.points.metrics import outcome
from harness.points.seal import commitment, new_salt, question_digest
from pitweb.artifacts import job_file, job_folder
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.points.archives import ArchiveError, Limits, unpack
from pitweb.points.models import AnswerSet, JudgedSet, Point, PointSet, PointSetState, Verdict

CHUNK = 1024 * 1024
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
RESERVED_NAMES = {"upload"}  # a page of its own under /points/


def _spooled(upload: IO[bytes], limit: int) -> Path:
    handle = job_file("spool", "points", delete=False)
    size = 0
    try:
        while chunk := upload.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise SubmissionError("too_large", f"the archive is larger than {limit} bytes", 413)
            handle.write(chunk)
    except BaseException:
        handle.close()
        Path(handle.name).unlink(missing_ok=True)
        raise
    handle.close()
    return Path(handle.name)


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
    spooled = _spooled(archive, settings.PITWEB_MAX_POINTSET_BYTES)
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
        )
        for point_id, judged_class in classes.items()
    )
