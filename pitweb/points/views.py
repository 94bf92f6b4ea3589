"""The points pages: point sets, a set's judged sets with their distribution and radar,
one judged set's verdicts; staff's upload and reveal. Every table has CSV and JSON."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pandas as pd
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from harness.points.live import LivePoint, answers_close, market_day
from harness.points.metrics import CLASSES
from harness.points.pitfall_records import PitfallArtifactError
from pitweb import charts
from pitweb.accounts.access import staff_required
from pitweb.core.errors import SubmissionError, bad_request_page
from pitweb.core.inputs import read_json
from pitweb.core.params import digest_or_none, parse_id
from pitweb.core.tables import table_response
from pitweb.points import board, selectors, services
from pitweb.points.engine import live_points
from pitweb.points.models import (
    AnswerSet,
    ModelEndpoint,
    PitfallArtifact,
    PointSet,
    PointSetState,
    PointsJob,
)
from pitweb.points.render import markdown_html

SET_COLUMNS = (
    "name", "title", "kind", "state", "points", "reveal_on", "commitment", "question_digest",
    "suite_sha256", "salt", "ranked",
)  # fmt: skip
# a set whose judge failed its controls has every figure empty, the rule it broke in
# figures_withheld_because, and its controls' figures beside it
JUDGED_COLUMNS = (
    "judged_set", "model", "answers", "timing", "judge", "judge_pinned", "judge_is_demo", "origin", "status", "pass",
    "fail", "harness_error", "accuracy", "accuracy_low", "accuracy_high",
    "accuracy_if_errors_fail", "accuracy_if_errors_pass", "pass_at_k", *CLASSES,
    "figures_withheld_because", *selectors.CONTROLS, "tokens", "tool_calls", "cost_usd",
    "ranked", "rank", "not_ranked_because",
)  # fmt: skip
SUITE_COLUMNS = (
    "judged_set", "label", "suite", "judged", "pass", "harness_error", "accuracy",
    "accuracy_low", "accuracy_high",
)  # fmt: skip
QUESTION_COLUMNS = ("point_id", "suite", "question", "question_sha256")
REVEALED_COLUMNS = (
    *QUESTION_COLUMNS, "ground_truth", "provenance", "point_sha256", "ground_truth_sha256",
)  # fmt: skip
VERDICT_COLUMNS = (
    "point_id", "suite", "sample", "class", "outcome", "decisive_reason", "answer",
    "judge_model", "judge_model_returned", "judged_at",
)  # fmt: skip


def _figure(figure: Any) -> Any:
    return json.loads(figure.to_json())


def _format(request: HttpRequest) -> str:
    fmt = request.GET.get("format", "")
    if fmt not in ("", "csv", "json"):
        raise SubmissionError("invalid_input", "format must be csv or json")
    return fmt


def _point_set(name: str) -> PointSet:
    found = selectors.point_set_named(name)
    if found is None:
        raise Http404("no such point set")
    return found


def point_sets_page(request: HttpRequest) -> HttpResponse:
    try:
        fmt = _format(request)
    except SubmissionError as exc:
        return bad_request_page(request, exc.message)
    rows = selectors.point_set_rows(selectors.point_sets())
    if fmt:
        response = table_response(fmt, "point_sets", SET_COLUMNS, rows)
        assert response is not None
        return response
    return render(request, "points/sets.html", {"rows": rows})


def point_set_page(request: HttpRequest, name: str) -> HttpResponse:
    point_set = _point_set(name)
    try:
        fmt = _format(request)
    except SubmissionError as exc:
        return bad_request_page(request, exc.message)
    judged = selectors.judged_sets(point_set)
    rows = selectors.with_ranks(selectors.judged_rows(judged))
    suites = selectors.suite_rows(judged)
    table = request.GET.get("table", "judged")
    if fmt:
        response = {
            "judged": lambda: table_response(fmt, "judged_sets", JUDGED_COLUMNS, rows),
            "suites": lambda: table_response(fmt, "suites", SUITE_COLUMNS, suites),
            "questions": lambda: table_response(
                fmt,
                "points",
                REVEALED_COLUMNS if point_set.discloses_hidden else QUESTION_COLUMNS,
                selectors.question_rows(point_set),
            ),
        }.get(table, lambda: None)()
        if response is None:
            raise Http404("no such table")
        return response
    figures: dict[str, Any] = {}
    drawn = selectors.shown(judged)
    shares = charts.class_shares(
        [selectors.class_share_row(j) for j in drawn], [selectors.judged_label(j) for j in drawn]
    )
    if shares is not None:
        figures["distribution"] = _figure(shares)
        frame = selectors.class_frame(judged)
        if frame.loc[frame["count"] > 0, "label"].nunique() >= 2:  # an overlay, or nothing
            figures["radar"] = _figure(charts.class_radar(frame))
    suite_figure = charts.suite_accuracy(pd.DataFrame(suites)) if suites else None
    if suite_figure is not None:
        figures["suites"] = _figure(suite_figure)
    today = market_day(timezone.now())
    points = [
        {
            "point_id": p.point_id,
            "suite": p.suite,
            "question": markdown_html(p.question),
            "hidden": {
                "ground_truth": markdown_html(p.ground_truth),
                "provenance": markdown_html(p.provenance),
            }
            if point_set.discloses_hidden
            else None,
            "live": _live_row(request, point_set, p, today) if point_set.live else None,
        }
        for p in selectors.public_points(point_set)
    ]
    return render(
        request,
        "points/set.html",
        {
            "point_set": point_set,
            "rows": rows,
            "suites": suites,
            "figures": figures,
            "points": points,
            "classes": CLASSES,
            "jobs": point_set.jobs.select_related("endpoint", "answer_set").defer(
                "answer_set__body"
            )[:20],
            "answer_sets": point_set.answer_sets.defer("body"),
            "received": selectors.received_before_reveal(point_set),
            "answers_close": answers_close(live_points(point_set))
            if point_set.live and point_set.state == PointSetState.SEALED
            else None,
            "endpoints": ModelEndpoint.objects.all() if request.user.is_staff else [],
            "may_reveal": request.user.is_staff
            and not point_set.live
            and point_set.state == PointSetState.SEALED
            and point_set.reveal_on is not None
            and dt.date.today() >= point_set.reveal_on,
        },
    )


BOARD_COLUMNS = (
    "rank", "family", "model", "effort", "harness", "tools", "point_sets", "unscored",
    "unscored_because", "attempts", "pass", "fail", "judged", "harness_error", "accuracy", "accuracy_low",
    "accuracy_high", *CLASSES, "tokens", "tool_calls",
)  # fmt: skip
APART_COLUMNS = (
    "family", "model", "point_set", "answer_set", "timing", "judged_set", "judged",
    "accuracy", "because",
)  # fmt: skip


def board_label(row: dict[str, Any]) -> str:
    effort = f" ({row['effort']})" if row["effort"] else ""
    return f"{row['model']}{effort} · {row['family']}"


def points_board_page(request: HttpRequest) -> HttpResponse:
    """Formal cohorts ranked (answers committed before their labels were public, judged
    by the pinned judge); every other result listed apart, never ranked with them."""
    try:
        fmt = _format(request)
    except SubmissionError as exc:
        return bad_request_page(request, exc.message)
    found = board.points_board_view()
    if fmt:
        table = request.GET.get("table", "board")
        response = {
            "board": lambda: table_response(fmt, "points_board", BOARD_COLUMNS, found["rows"]),
            "apart": lambda: table_response(fmt, "points_apart", APART_COLUMNS, found["apart"]),
        }.get(table, lambda: None)()
        if response is None:
            raise Http404("no such table")
        return response
    labels = [board_label(r) for r in found["rows"]]
    figures: dict[str, Any] = {}
    drawn_shares = charts.class_shares(found["rows"], labels)
    if drawn_shares is not None:
        figures["shares"] = _figure(drawn_shares)
    drawn = [(r, label) for r, label in zip(found["rows"], labels, strict=True) if r["judged"]]
    if len(drawn) >= 2:  # a radar reads only as an overlay of several models
        frame = pd.DataFrame(
            [
                {"label": label, "class": c, "count": r[c], "share": r[c] / r["judged"]}
                for r, label in drawn
                for c in CLASSES
            ]
        )
        figures["radar"] = _figure(charts.class_radar(frame))
    return render(
        request,
        "points/board.html",
        {**found, "figures": figures, "classes": CLASSES, "error_classes": CLASSES[1:]},
    )


def pitfall_page(request: HttpRequest) -> HttpResponse:
    """PITFALL's own cohorts (sealed suites, live-shadow seals and resolutions), as its
    tools wrote them: every artifact verified again by the engine on each view, and what
    they show suite by suite. Staff upload more here (POST)."""
    if request.method == "POST":
        if not request.user.is_staff:
            return render(request, "403.html", status=403)
        try:
            files = request.FILES.getlist("artifacts")
            if not files:
                raise SubmissionError("invalid_input", "send the artifacts as files 'artifacts'")
            stored = services.pitfall_artifacts_import(
                user=_user(request), uploads=[(f.name or "artifact.json", f) for f in files]
            )
        except SubmissionError as exc:
            return _refused(request, exc)
        messages.success(request, f"{len(stored)} new artifact(s) verified and stored.")
        return redirect(reverse("pitfall-cohorts"))
    try:
        suites, held = selectors.pitfall_suites()
    except PitfallArtifactError as exc:
        return render(
            request, "400.html", {"message": f"Stored artifacts do not hold: {exc}"}, status=500
        )
    return render(
        request,
        "points/pitfall.html",
        {"suites": suites, "held": held, "artifacts": PitfallArtifact.objects.all()},
    )


def pitfall_artifact_json(request: HttpRequest, artifact: str) -> HttpResponse:
    """One stored PITFALL artifact by its digest (bare or after ``sha256:``), byte for byte
    as uploaded."""
    digest = digest_or_none(artifact)
    found = (
        PitfallArtifact.objects.filter(digest=digest.removeprefix("sha256:")).first()
        if digest
        else None
    )
    if found is None:
        raise Http404("no such artifact")
    return HttpResponse(found.raw.encode("utf-8"), content_type="application/json")


def questions_json(request: HttpRequest, name: str) -> JsonResponse:
    """The set's Questions as ``pit-harness points answer --questions`` reads them (a
    ``pit_sealed_questions`` document): what anyone may answer a sealed set from."""
    point_set = _point_set(name)
    return JsonResponse(selectors.questions_document(point_set))


def _live_row(request: HttpRequest, point_set: PointSet, p: Any, today: dt.date) -> dict[str, Any]:
    """A live-shadow point's dates and state, and whether staff may resolve it now."""
    return {
        "as_of": p.as_of,
        "resolves_on": p.resolves_on,
        "rule": markdown_html(p.rule),
        "resolved_at": p.resolved_at,
        "may_resolve": request.user.is_staff and p.resolved_at is None and today > p.resolves_on,
    }


def judged_set_page(request: HttpRequest, name: str, judged_id: str) -> HttpResponse:
    point_set = _point_set(name)
    try:
        fmt = _format(request)
        try:
            pk = parse_id(judged_id)
        except ValueError as exc:
            raise SubmissionError("invalid_input", f"judged set id {exc}") from None
        if pk is None:
            raise SubmissionError("invalid_input", "a judged set id is required")
        wanted_class = request.GET.get("class", "")
        if wanted_class and wanted_class not in (*CLASSES, "harness_error"):
            raise SubmissionError("invalid_input", "class must be one of the six or harness_error")
    except SubmissionError as exc:
        return bad_request_page(request, exc.message)
    judged = selectors.judged_set_of(point_set, pk)
    if judged is None:
        raise Http404("no such judged set")
    suite = request.GET.get("suite", "")
    rows = selectors.verdict_rows(
        judged, selectors.verdicts(judged, judged_class=wanted_class, suite=suite)
    )
    if fmt:
        response = table_response(fmt, "verdicts", VERDICT_COLUMNS, rows)
        assert response is not None
        return response
    return render(
        request,
        "points/judged.html",
        {
            "point_set": point_set,
            "judged": judged,
            "summary": selectors.judged_rows([judged])[0],
            "stability": selectors.stability(judged),
            "rows": rows,
            "classes": CLASSES,
            "wanted_class": wanted_class,
            "suite": suite,
            "suites": sorted(set(point_set.points.values_list("suite", flat=True))),
        },
    )


@staff_required
def point_set_upload_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "points/upload.html", {"states": PointSetState.values})
    try:
        archive = request.FILES.get("archive")
        if archive is None:
            raise SubmissionError("invalid_input", "send the point set as the file 'archive'")
        name = request.POST.get("name", "")
        reveal = request.POST.get("reveal_on", "")
        try:
            reveal_on = dt.date.fromisoformat(reveal) if reveal else None
        except ValueError:
            raise SubmissionError(
                "invalid_input", "reveal_on must be a date (YYYY-MM-DD)"
            ) from None
        point_set = services.point_set_upload(
            user=_user(request),
            name=name,
            title=request.POST.get("title", "")[:200],
            archive=archive,
            state=request.POST.get("state", ""),
            reveal_on=reveal_on,
            source=request.POST.get("source", "")[:2000],
        )
    except SubmissionError as exc:
        return _refused(request, exc)
    return redirect(reverse("point-set", args=[point_set.name]))


LIVE_PLAN_BYTES = 1_000_000
LIVE_PLAN_POINTS = 500
LIVE_POINT_KEYS = {"id", "question", "as_of", "resolves_on", "resolution"}


def _live_plan(upload: Any) -> list[LivePoint]:
    """A live-shadow cohort's plan as staff upload it, read strictly: every point the five
    fields, dates as dates; the engine's rules follow in the service."""
    if upload is None:
        raise SubmissionError("invalid_input", "send the plan as the JSON file 'plan'")
    data = upload.read(LIVE_PLAN_BYTES + 1)
    if len(data) > LIVE_PLAN_BYTES:
        raise SubmissionError("too_large", f"the plan is larger than {LIVE_PLAN_BYTES} bytes", 413)
    body = read_json(data, "plan")
    raw = body.get("points") if isinstance(body, dict) else None
    if not isinstance(raw, list) or not 1 <= len(raw) <= LIVE_PLAN_POINTS:
        raise SubmissionError(
            "invalid_live_cohort", f"the plan holds 'points': a list of 1 to {LIVE_PLAN_POINTS}"
        )
    points = []
    for n, item in enumerate(raw, start=1):
        if not isinstance(item, dict) or set(item) != LIVE_POINT_KEYS:
            raise SubmissionError(
                "invalid_live_cohort", f"point {n}: exactly {', '.join(sorted(LIVE_POINT_KEYS))}"
            )
        if not all(isinstance(item[k], str) for k in LIVE_POINT_KEYS):
            raise SubmissionError("invalid_live_cohort", f"point {n}: every field is text")
        try:
            as_of, resolves_on = (dt.date.fromisoformat(item[k]) for k in ("as_of", "resolves_on"))
        except ValueError:
            raise SubmissionError(
                "invalid_live_cohort", f"point {n}: as_of and resolves_on are YYYY-MM-DD"
            ) from None
        points.append(LivePoint(id=item["id"], question=item["question"], as_of=as_of,
                                resolves_on=resolves_on, resolution=item["resolution"]))  # fmt: skip
    return points


@staff_required
@require_POST
def live_cohort_create_page(request: HttpRequest) -> HttpResponse:
    try:
        cohort = services.live_cohort_create(
            user=_user(request),
            name=request.POST.get("name", ""),
            title=request.POST.get("title", "")[:200],
            points=_live_plan(request.FILES.get("plan")),
            source=request.POST.get("source", "")[:2000],
        )
    except SubmissionError as exc:
        return _refused(request, exc)
    messages.success(
        request,
        f"Cohort {cohort.name} sealed: log entry {cohort.seal_entry.seq if cohort.seal_entry else '?'}.",
    )
    return redirect(reverse("point-set", args=[cohort.name]))


@staff_required
@require_POST
def live_point_resolve_page(request: HttpRequest, name: str) -> HttpResponse:
    """Staff: a live-shadow point's outcome entered after its resolution date."""
    cohort = _point_set(name)
    try:
        point = cohort.points.filter(point_id=request.POST.get("point_id", "")[:200]).first()
        if point is None:
            raise SubmissionError("invalid_input", "point_id: one of this cohort's points")
        jobs = services.live_point_resolve(
            user=_user(request),
            point=point,
            ground_truth=request.POST.get("ground_truth", "")[:20000],
            provenance=request.POST.get("provenance", "")[:20000],
        )
    except SubmissionError as exc:
        return _refused(request, exc)
    cohort.refresh_from_db()
    finalized = (
        f" Every point is resolved: the cohort is finalized, {len(jobs)} answer set(s) sent "
        "to the judge."
        if cohort.state == PointSetState.REVEALED
        else ""
    )
    messages.success(request, f"Point {point.point_id} resolved.{finalized}")
    return redirect(reverse("point-set", args=[cohort.name]) + f"#point-{point.point_id}")


@staff_required
@require_POST
def point_set_reveal_page(request: HttpRequest, name: str) -> HttpResponse:
    point_set = _point_set(name)
    try:
        jobs = services.point_set_reveal(point_set=point_set, user=_user(request))
    except SubmissionError as exc:
        return _refused(request, exc)
    waiting = (
        point_set.answer_sets.filter(timing=AnswerSet.Timing.BEFORE_REVEAL, judged__isnull=True)
        .exclude(jobs__kind=PointsJob.Kind.JUDGE)
        .count()
    )
    judged = f" {len(jobs)} answer set(s) made while it was sealed sent to the judge." + (
        f" {waiting} wait for a judge: register the site's judge, then ask for their judgment."
        if waiting
        else ""
    )
    messages.success(
        request, f"Point set {point_set.name} revealed; its salt is published.{judged}"
    )
    return redirect(reverse("point-set", args=[point_set.name]))


def _refused(request: HttpRequest, exc: SubmissionError) -> HttpResponse:
    """A refused staff form: the 400 page (or the refusal's own status) saying why."""
    return render(
        request, "400.html", {"message": f"Refused: {exc.message}."}, status=exc.http_status
    )


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


@staff_required
@require_POST
def points_job_page(request: HttpRequest, name: str) -> HttpResponse:
    """Staff: have the workers answer the set with a model, or judge an answer set."""
    point_set = _point_set(name)
    try:
        endpoint = ModelEndpoint.objects.filter(name=request.POST.get("endpoint", "")).first()
        if endpoint is None:
            raise SubmissionError("invalid_input", "endpoint: a registered model's name")
        kind = request.POST.get("kind", "")
        if kind == PointsJob.Kind.ANSWER:
            job = services.answer_job_request(
                user=_user(request), point_set=point_set, endpoint=endpoint
            )
        elif kind == PointsJob.Kind.JUDGE:
            try:
                pk = parse_id(request.POST.get("answer_set", ""))
            except ValueError as exc:
                raise SubmissionError("invalid_input", f"answer_set {exc}") from None
            answer_set = (
                AnswerSet.objects.filter(pk=pk, point_set=point_set).first()
                if pk is not None
                else None
            )
            if answer_set is None:
                raise SubmissionError("invalid_input", "answer_set: one of this set's")
            job = services.judge_job_request(
                user=_user(request), answer_set=answer_set, endpoint=endpoint
            )
        else:
            raise SubmissionError("invalid_input", "kind must be answer or judge")
    except SubmissionError as exc:
        return _refused(request, exc)
    messages.success(request, f"{job.kind} job {job.pk} queued.")
    return redirect(reverse("point-set", args=[point_set.name]) + "#jobs")


def points_job_json(request: HttpRequest, job_id: str) -> JsonResponse:
    """Polled by the set page and by `pit-harness submit answers`: a job's state and progress
    (no hidden section in it), and where its judged set is read once there is one."""
    try:
        pk = parse_id(job_id)
    except ValueError:
        pk = None
    job = (
        PointsJob.objects.select_related("point_set").filter(pk=pk).first()
        if pk is not None
        else None
    )
    if job is None:
        raise Http404("no such job")
    progress = selectors.job_progress(job)
    if not (job.point_set.discloses_hidden or request.user.is_staff):
        progress["message"] = None  # a judge's failure may quote a sealed Ground Truth
    where = [job.point_set.name, job.judged_set_id]
    judged = job.judged_set_id is not None
    progress["judged_set_url"] = reverse("api-judged-set", args=where) if judged else None
    progress["judged_set_page"] = reverse("judged-set", args=where) if judged else None
    return JsonResponse(progress)


@staff_required
def models_page(request: HttpRequest) -> HttpResponse:
    """Staff: the models the workers may call, and a form to register one (or change it)."""
    if request.method == "POST":
        form = request.POST
        try:
            services.model_register(
                user=_user(request),
                name=form.get("name", ""),
                base_url=form.get("base_url", ""),
                model=form.get("model", ""),
                effort=form.get("effort", ""),
                api_key_env=form.get("api_key_env", ""),
                concurrency=_whole(form.get("concurrency", "4"), "concurrency"),
                rate_per_minute=_whole(form.get("rate_per_minute", "0"), "rate_per_minute"),
                timeout_seconds=_whole(form.get("timeout_seconds", "600"), "timeout_seconds"),
            )
        except SubmissionError as exc:
            return _refused(request, exc)
        messages.success(request, f"Model {form.get('name')} registered.")
        return redirect(reverse("points-models"))
    return render(request, "points/models.html", {"endpoints": ModelEndpoint.objects.all()})


def _whole(value: str, what: str) -> int:
    try:
        number = parse_id(value)
    except ValueError as exc:
        raise SubmissionError("invalid_input", f"{what} {exc}") from None
    if number is None:
        raise SubmissionError("invalid_input", f"{what} is required")
    return number
