"""Writes for point sets: a staff upload of an archive of point files, and the reveal of a
sealed set. Every check runs before anything is stored; a refused archive leaves no row.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness.points.markdown import Point as EnginePoint
from harness.points.markdown import PointError, load_points, suite_sha256
from harness.points.seal import commitment, new_salt, question_digest
from pitweb.artifacts import job_folder, spool
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.points.archives import ArchiveError, Limits, unpack
from pitweb.points.models import Point, PointSet, PointSetState

NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
RESERVED_NAMES = {
    "upload",
    "models",
    "board",
    "jobs",
    "live",
    "pitfall",
}  # a page of its own under /points/


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


def point_set_create(
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
            return point_set_create(
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


def point_set_unseal(*, point_set: PointSet, user: User, today: dt.date | None = None) -> None:
    """Publish a sealed set's salt and hidden sections, on or after its reveal date (the
    reveal itself, with the judgment of what was answered while sealed, is
    ``answers.point_set_reveal``)."""
    today = today or timezone.localdate()
    with transaction.atomic():
        locked = PointSet.objects.select_for_update().get(pk=point_set.pk)
        if locked.state != PointSetState.SEALED:
            raise SubmissionError("not_sealed", f"point set {locked.name} is {locked.state}", 409)
        if locked.live:
            raise SubmissionError(
                "live_cohort",
                f"{locked.name} is a live-shadow cohort: it is finalized when its last point "
                "is resolved, not revealed by hand",
                409,
            )
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
