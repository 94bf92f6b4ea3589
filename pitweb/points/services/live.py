"""Writes for live-shadow cohorts (``harness.points.live``): staff seal a cohort before any
of its as-of dates, and resolve each point after its resolution date; the cohort is
finalized (revealed) when its last member is resolved, and every answer set received while
it was sealed goes to the site's judge then. Every date rule is the engine's, read in the
market's timezone; every check runs before anything is stored.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness.forward.log import Seal
from harness.points.live import (
    LiveError,
    LivePoint,
    check_resolvable,
    check_sealable,
    market_day,
    plan_commitment,
    question_points,
    resolved,
)
from harness.points.markdown import suite_sha256
from harness.points.seal import question_digest
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.forward.models import LogEntry
from pitweb.forward.services import points_logged
from pitweb.points.engine import engine_points, live_points
from pitweb.points.models import ModelEndpoint, Point, PointSet, PointSetState, PointsJob
from pitweb.points.services.answers import sealed_answers_judge
from pitweb.points.services.point_sets import NAME, RESERVED_NAMES


def _now(at: datetime | None) -> datetime:
    now = timezone.now()
    if at is not None and at > now:
        raise SubmissionError("stamp_in_future", f"a stated time ({at}) may not be ahead of now")
    return now if at is None else at


def live_cohort_create(
    *,
    user: User,
    name: str,
    title: str,
    points: list[LivePoint],
    source: str = "",
    at: datetime | None = None,
) -> PointSet:
    """A live-shadow cohort sealed: its plan committed to by an entry of the commitment
    log, before any of its as-of dates has passed (market time). ``at``: a stated time,
    for the demo's management commands only."""
    if not NAME.fullmatch(name) or len(name) > 100 or name in RESERVED_NAMES:
        raise SubmissionError("invalid_input", "name: lowercase words joined by '-'")
    if PointSet.objects.filter(name=name).exists():
        raise SubmissionError("name_taken", f"a point set is already named {name!r}", 409)
    moment = _now(at)
    try:
        checked = [p.checked() for p in points]
        check_sealable(checked, market_day(moment))
    except LiveError as exc:
        raise SubmissionError("invalid_live_cohort", str(exc)) from None
    plan = plan_commitment(checked)
    if PointSet.objects.filter(suite_sha256=plan.removeprefix("sha256:")).exists():
        raise SubmissionError("duplicate_point_set", "this plan is already a cohort", 409)
    questions = question_digest(question_points(checked))
    seal = Seal(
        point_set=name, plan=plan, question_digest=questions, points=len(checked),
        first_as_of=min(p.as_of for p in checked).isoformat(),
        last_resolves_on=max(p.resolves_on for p in checked).isoformat(),
        submitter=user.username,
    )  # fmt: skip

    def store(entry: LogEntry) -> PointSet:
        cohort = PointSet.objects.create(
            name=name, title=title, kind=PointSet.Kind.LIVE_SHADOW,
            suite_sha256=plan.removeprefix("sha256:"), question_digest=questions,
            state=PointSetState.SEALED, reveal_on=max(p.resolves_on for p in checked),
            commitment=plan, source=source, created_by=user, created_at=moment,
            seal_entry=entry,
        )  # fmt: skip
        Point.objects.bulk_create(
            Point(
                point_set=cohort,
                point_id=p.id,
                position=n,
                question=p.question,
                question_sha256=p.question_sha256,
                text="",
                ground_truth="",
                provenance="",
                point_sha256="",
                ground_truth_sha256="",
                rule=p.resolution,
                as_of=p.as_of,
                resolves_on=p.resolves_on,
            )
            for n, p in enumerate(sorted(checked, key=lambda p: p.id))
        )
        audit_record(
            actor=user, action="live_cohort_sealed", public=True,
            reason=f"live-shadow cohort {name} ({len(checked)} points, plan {plan}, "
            f"log entry {entry.seq})",
        )  # fmt: skip
        return cohort

    return points_logged(store, seal=seal, at=at)


def live_point_resolve(
    *,
    user: User,
    point: Point,
    ground_truth: str,
    provenance: str,
    at: datetime | None = None,
    judge: ModelEndpoint | None = None,
) -> list[PointsJob]:
    """Staff enter a live-shadow point's outcome after its resolution date (market time):
    its file written and parsed by the engine, its Question unchanged. The last member
    resolved finalizes the cohort: revealed, its suite digest now over the resolved
    files, and every answer set received while sealed sent to the judge (the jobs
    returned; none before the last). ``at``: a stated time, for the demo's management
    commands only; ``judge``: the site's judge unless given."""
    moment = _now(at)
    with transaction.atomic():
        locked = Point.objects.select_for_update().select_related("point_set").get(pk=point.pk)
        cohort = locked.point_set
        if not cohort.live:
            raise SubmissionError("not_live", f"point set {cohort.name} is not live-shadow", 409)
        if locked.resolved_at is not None:
            raise SubmissionError("already_resolved", f"point {locked.point_id} is resolved", 409)
        [plan] = live_points(cohort, only=[locked])
        try:
            check_resolvable(plan, market_day(moment))
            parsed = resolved(plan, ground_truth, provenance)
        except LiveError as exc:
            raise SubmissionError("invalid_resolution", str(exc)) from None
        locked.text, locked.ground_truth = parsed.text, parsed.ground_truth
        locked.provenance = parsed.provenance
        locked.point_sha256 = parsed.point_sha256
        locked.ground_truth_sha256 = parsed.ground_truth_sha256
        locked.resolved_at, locked.resolved_by = moment, user
        locked.save()
        audit_record(
            actor=user, action="live_point_resolved", public=True,
            reason=f"point {locked.point_id} of cohort {cohort.name} resolved",
        )  # fmt: skip
        if cohort.points.filter(resolved_at__isnull=True).exists():
            return []
        return _finalized(cohort, user, moment, judge)


def _finalized(
    cohort: PointSet, user: User, moment: datetime, judge: ModelEndpoint | None
) -> list[PointsJob]:
    """Every member resolved: the cohort revealed, its answers sent to the judge."""
    cohort = PointSet.objects.select_for_update().get(pk=cohort.pk)
    cohort.suite_sha256 = suite_sha256(engine_points(cohort))
    cohort.state = PointSetState.REVEALED
    cohort.revealed_at = moment
    cohort.save(update_fields=["suite_sha256", "state", "revealed_at"])
    audit_record(
        actor=user, action="live_cohort_finalized", public=True,
        reason=f"live-shadow cohort {cohort.name}: every member resolved",
    )  # fmt: skip
    return sealed_answers_judge(point_set=cohort, user=user, judge=judge)
