"""The submitters' and staff API. Views validate input, call one service, and
return plain data; every error has the shape ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from harness import snapshot as snapshots
from pitweb.core.errors import SubmissionError, validation_message
from pitweb.releases.models import Release
from pitweb.runs import boardcache, selectors, services
from pitweb.runs.board import board_stamp
from pitweb.runs.boardkeys import Cursor
from pitweb.runs.models import Run, Snapshot, VerificationJob
from pitweb.runs.tables import csv_safe
from pitweb.runs.uploads import FORMS

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer

# -- query and form parameters -------------------------------------------------------
# One parser for every id a query or a form gives (``submission``, ``page``): ASCII
# digits only (``str.isdigit`` and ``int`` also take "²" or "٣"), a bounded length (so
# ``int`` never sees thousands of digits) and within the id column's range. Each query
# has its serializer; what fails it is a 400: the JSON envelope under /api/, the site's
# 400 page elsewhere.
DIGITS = re.compile(r"[0-9]+")


def id_max() -> int:
    """The largest value the database's id column holds."""
    low_high = connection.ops.integer_field_range(Run._meta.pk.get_internal_type())
    return int(low_high[1] if low_high[1] is not None else 2**63 - 1)


def id_or_none(value: str) -> int | None:
    """The id a path segment gives, or None where it is none (answered as not found)."""
    try:
        return parse_id(value)
    except ValueError:
        return None


def parse_id(value: object) -> int | None:
    """The id ``value`` gives (a query's or a form's text, or a JSON number), None when
    it is absent or empty; a ValueError saying the rule otherwise."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):  # a JSON number
        value = str(value)
    top = id_max()
    if (
        isinstance(value, str)
        and len(value) <= len(str(top))
        and DIGITS.fullmatch(value)
        and int(value) <= top
    ):
        return int(value)
    raise ValueError(f"must be a whole number written with the digits 0-9, at most {top}")


@extend_schema_field(OpenApiTypes.INT)
class IdField(serializers.Field):  # type: ignore[type-arg]
    """An id in a query or a form, read by ``parse_id``; a parameter given twice is
    refused (which copy counts is never left to the parser)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, allow_null=True, **kwargs)

    def get_value(self, dictionary: Any) -> Any:
        name = str(self.field_name)
        if isinstance(dictionary, QueryDict) and len(dictionary.getlist(name)) > 1:
            return dictionary.getlist(name)
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> int | None:
        if isinstance(data, list):
            raise serializers.ValidationError(f"given {len(data)} times; give it once")
        try:
            return parse_id(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: Any) -> Any:
        return value


class RunQuery(Serializer):
    """What a run's pages, tables, downloads, API and staff form read besides the key."""

    submission = IdField()


class PageQuery(Serializer):
    page = IdField()


def validated(query: type[Serializer], params: Any) -> dict[str, Any]:
    """``params`` (a query string or a form) through its serializer; the first field it
    refuses is a SubmissionError named for that field (``invalid_submission``)."""
    given = query(data=params)
    if not given.is_valid():
        name, problems = next(iter(given.errors.items()))
        raise SubmissionError(f"invalid_{name}", f"{name}: {validation_message(problems)}")
    return dict(given.validated_data)


def submission_wanted(params: Any) -> int | None:
    """The ``submission`` a run URL's query or a staff form asks for, if any."""
    return validated(RunQuery, params).get("submission")


def requester(context: Mapping[str, Any]) -> Any:
    """Who a serializer answers (anonymous when no request was given)."""
    request = context.get("request")
    return request.user if request is not None else AnonymousUser()


REFUTED_DETAIL = "differs from what the system re-derived (the stated value is on the run's page)"


class JobOut(Serializer):
    id = serializers.IntegerField(source="pk")
    run_id = serializers.CharField(source="run.run_id")
    kind = serializers.CharField()
    state = serializers.CharField()
    reason = serializers.CharField()
    attempts = serializers.IntegerField()
    worker = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    mismatch_check = serializers.CharField()
    message = serializers.CharField()
    checks = serializers.SerializerMethodField()
    previous = serializers.IntegerField(source="previous_id", allow_null=True)
    url = serializers.SerializerMethodField()

    def get_url(self, job: VerificationJob) -> str:
        return reverse("api-job", args=[job.pk])

    def get_checks(self, job: VerificationJob) -> list[dict[str, str]]:
        """Each check by name and status; a failed check's detail (which quotes the
        stated value) is shown only on the run's page, in its refuted-claim box."""
        return [
            {
                **check,
                "detail": REFUTED_DETAIL
                if check.get("status") == "mismatch"
                else check.get("detail", ""),
            }
            for check in job.checks
        ]


class RunOut(Serializer):
    run_id = serializers.CharField()
    submission = serializers.IntegerField(source="pk")
    body_sha256 = serializers.CharField()
    status = serializers.CharField()
    verification_level = serializers.CharField()
    valid = serializers.BooleanField()
    protocol_complete = serializers.BooleanField()
    agent = serializers.CharField()
    model_version = serializers.CharField()
    release = serializers.CharField(source="release_digest")
    forms = serializers.CharField()
    window_start = serializers.DateField()
    window_end = serializers.DateField()
    pit_main_return = serializers.SerializerMethodField()
    numbers = serializers.SerializerMethodField()
    verification_level_words = serializers.SerializerMethodField()
    platform = serializers.SerializerMethodField()
    visibility = serializers.CharField()
    hidden = serializers.BooleanField()
    flag = serializers.CharField()
    submitted_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()

    def get_url(self, run: Run) -> str:
        sha = run.body_sha256.removeprefix("sha256:")
        return reverse("api-run", args=[sha]) + f"?submission={run.pk}"

    def get_pit_main_return(self, run: Run) -> float | None:
        """Only for a run whose numbers were proved; null otherwise (see ``numbers``)."""
        return run.pit_main_return if run.proven else None

    def get_numbers(self, run: Run) -> str:
        """``proven``, or why the numbers are withheld (never the stated value)."""
        return "proven" if run.proven else run.withheld_reason

    def get_verification_level_words(self, run: Run) -> str:
        return selectors.level_words(run)

    def get_platform(self, run: Run) -> dict[str, Any] | None:
        """Platform figures (reference prices) and their price version; null for a run
        whose numbers are not proven."""
        return selectors.platform_numbers(run) if run.proven else None

    def get_page(self, run: Run) -> str:
        return reverse("run", args=[run.body_sha256.removeprefix("sha256:")]) + (
            f"?submission={run.pk}"
        )


class RunDetailOut(RunOut):
    receipt_body = serializers.JSONField(source="body")
    jobs = serializers.SerializerMethodField()

    def get_jobs(self, run: Run) -> list[dict[str, Any]]:
        jobs = selectors.run_jobs(run, user=requester(self.context))
        return JobOut(jobs, many=True).data  # type: ignore[return-value]


def _visible_run(request: Request, sha_hex: str) -> Run:
    wanted = submission_wanted(request.query_params)
    runs = selectors.visible_runs(request.user).select_related("platform", "platform__prices")
    found, candidates = selectors.pick(runs, sha_hex, wanted)
    if found is None and candidates:
        raise SubmissionError(
            "ambiguous",
            f"{sha_hex} names {len(candidates)} runs you can see; ask for one by its body "
            "hash (and ?submission=): "
            + ", ".join(f"{r.body_sha256}?submission={r.pk}" for r in candidates[:20]),
            409,
        )
    if found is None:
        raise NotFound("no such run")
    return found


UPLOAD_FIELDS = FORMS["api-runs"].files  # one list: the upload handler refuses at the header


def _only_fields(request: Request, *, files: tuple[str, ...], data: tuple[str, ...] = ()) -> None:
    """Refuse a multipart field the endpoint does not take, and any field sent twice:
    which of two copies counts is never left to the parser."""
    if not isinstance(request.data, QueryDict):  # no body at all: nothing was parsed
        raise SubmissionError(
            "form_required",
            f"this endpoint takes a multipart/form-data body with {', '.join((*files, *data))}; "
            "the request had none",
        )
    unknown = sorted({*request.FILES.keys(), *request.data.keys()} - {*files, *data})
    if unknown:
        raise SubmissionError(
            "unknown_field",
            f"unknown multipart field(s): {', '.join(unknown)[:200]}; "
            f"this endpoint takes {', '.join((*files, *data))}",
        )
    counts = {name: len(request.FILES.getlist(name)) for name in files}
    for name in (*files, *data):  # plain values (a file field sent as text counts too)
        values = request.data.getlist(name)
        counts[name] = counts.get(name, 0) + sum(1 for v in values if isinstance(v, str))
    twice = sorted(name for name, n in counts.items() if n > 1)
    if twice:
        raise SubmissionError(
            "duplicate_field", f"field(s) sent more than once: {', '.join(twice)}"
        )


class RunsApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_scope = "uploads"

    def get_throttles(self) -> list[Any]:
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    def get_permissions(self) -> list[Any]:
        if self.request.method == "POST":
            return [permissions.IsAuthenticated()]
        return [permissions.AllowAny()]

    @extend_schema(responses=RunOut(many=True), summary="Runs you may see (public, and your own)")
    def get(self, request: Request) -> Response:
        runs = selectors.visible_runs(request.user).select_related("platform", "platform__prices")[
            :500
        ]
        return Response(RunOut(runs, many=True).data)

    @extend_schema(
        summary="Submit a run: receipt + trajectory (+ config, + prices)",
        request={
            "multipart/form-data": inline_serializer(
                "RunUpload",
                {
                    "receipt": serializers.FileField(),
                    "trajectory": serializers.FileField(),
                    "config": serializers.FileField(required=False),
                    "prices": serializers.FileField(required=False),
                },
            )
        },
        responses={201: RunDetailOut, 200: RunDetailOut},
    )
    def post(self, request: Request) -> Response:
        _only_fields(request, files=UPLOAD_FIELDS)
        missing = [name for name in ("receipt", "trajectory") if name not in request.FILES]
        if missing:
            raise SubmissionError(
                "missing_file", f"multipart field(s) {', '.join(missing)} required"
            )
        submission = services.run_submit(
            user=cast(User, request.user),  # IsAuthenticated
            receipt=request.FILES["receipt"],
            trajectory=request.FILES["trajectory"],
            config=request.FILES.get("config"),
            prices=request.FILES.get("prices"),
        )
        data = RunDetailOut(submission.run, context={"request": request}).data
        return Response(
            data, status=status.HTTP_201_CREATED if submission.created else status.HTTP_200_OK
        )


class RunApi(APIView):
    @extend_schema(
        responses=RunDetailOut,
        summary="One run, with its receipt body and verification history",
        parameters=[
            OpenApiParameter(
                "submission", int, description="which submission of the body (digits 0-9)"
            )
        ],
    )
    def get(self, request: Request, sha: str) -> Response:
        run = _visible_run(request, sha)
        return Response(RunDetailOut(run, context={"request": request}).data)


class JobApi(APIView):
    @extend_schema(responses=JobOut, summary="One verification job")
    def get(self, request: Request, job_id: int) -> Response:
        job = selectors.visible_job(request.user, job_id)
        if job is None:
            raise NotFound("no such job")
        return Response(JobOut(job).data)


class ReasonIn(Serializer):
    reason = serializers.CharField(max_length=2000)


class ReverifyIn(ReasonIn):
    submission = IdField()


class ReverifyApi(APIView):
    permission_classes = [permissions.IsAdminUser]
    throttle_scope = "staff_actions"
    throttle_classes = [ScopedRateThrottle]

    @extend_schema(
        request=ReverifyIn,
        responses={202: JobOut},
        summary="Staff: verify a run again (with a reason)",
    )
    def post(self, request: Request, sha: str) -> Response:
        given = ReverifyIn(data=request.data)
        given.is_valid(raise_exception=True)
        run = selectors.submission(Run.objects.all(), sha, given.validated_data.get("submission"))
        if run is None:
            raise NotFound("no such run")
        job = services.run_reverify(
            run=run, staff=cast(User, request.user), reason=given.validated_data["reason"]
        )
        return Response(JobOut(job).data, status=status.HTTP_202_ACCEPTED)


class WithdrawIn(ReasonIn):
    submission = IdField()


class WithdrawApi(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=WithdrawIn,
        responses={200: RunOut},
        summary="Withdraw your own run (with a reason): off every board and public page, "
        "for good; it stays counted as an attempt of its family",
    )
    def post(self, request: Request, sha: str) -> Response:
        given = WithdrawIn(data=request.data)
        given.is_valid(raise_exception=True)
        owner = cast(User, request.user)
        run = selectors.submission(
            Run.objects.filter(submitter=owner), sha, given.validated_data.get("submission")
        )
        if run is None:  # another's run answers like one that does not exist
            raise NotFound("no such run")
        run = services.run_withdraw(run=run, owner=owner, reason=given.validated_data["reason"])
        return Response(RunOut(run, context={"request": request}).data)


class SnapshotIn(Serializer):
    reason = serializers.CharField(max_length=2000)
    release = serializers.CharField(required=False, allow_blank=True, max_length=300)
    form = serializers.CharField(required=False, allow_blank=True, max_length=50)
    start = serializers.DateField(required=False, allow_null=True)
    end = serializers.DateField(required=False, allow_null=True)
    isolated = serializers.BooleanField(required=False, default=False)


class SnapshotOut(Serializer):
    snapshot = serializers.IntegerField()
    content_digest = serializers.CharField()
    taken_at = serializers.DateTimeField()
    filters = serializers.JSONField()
    reason = serializers.CharField()
    page = serializers.URLField()
    json = serializers.URLField(
        help_text="the snapshot as JSON: `pit-harness snapshot verify` recomputes its content "
        "digest from it, a row removed after the snapshot (its run withdrawn or hidden) "
        "counting by the row digest it carries"
    )


class SnapshotDetailOut(SnapshotOut):
    since = serializers.JSONField(help_text="what has happened since to its runs")
    content = serializers.JSONField(help_text="the frozen board, decoded")


def _snapshot_out(request: Request, snapshot: Any, *, content: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "snapshot": snapshot.pk,
        "content_digest": snapshot.content_digest,
        "taken_at": snapshot.taken_at.isoformat(),
        "filters": json.loads(snapshot.filters_key),
        "reason": snapshot.reason,
        "page": request.build_absolute_uri(reverse("snapshot", args=[snapshot.pk])),
        "json": request.build_absolute_uri(reverse("snapshot", args=[snapshot.pk]))
        + "?format=json",
    }
    if content:
        board = selectors.snapshot_board(snapshot)
        out["since"] = [
            {**e, "at": e["at"].isoformat()}
            for e in selectors.snapshot_since(snapshot, board["board"])
        ]
        out["content"] = board
    return out


class SnapshotsApi(APIView):
    def get_permissions(self) -> list[Any]:
        return [permissions.IsAdminUser()] if self.request.method == "POST" else []

    @extend_schema(
        operation_id="snapshots_list",
        responses=SnapshotOut(many=True),
        summary="Published board snapshots, newest first (at most 200)",
    )
    def get(self, request: Request) -> Response:
        found = Snapshot.objects.defer("content")[:200]
        return Response([_snapshot_out(request, s, content=False) for s in found])

    @extend_schema(
        request=SnapshotIn,
        responses={201: SnapshotOut},
        summary="Staff: publish a snapshot of the public board drawn with these filters "
        "(with a reason); it never changes afterwards",
    )
    def post(self, request: Request) -> Response:
        given = SnapshotIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        filters = {k: data.get(k) or None for k in ("release", "form")}
        filters |= {k: data[k].isoformat() if data.get(k) else None for k in ("start", "end")}
        filters["isolated"] = data.get("isolated", False)
        snapshot = services.snapshot_publish(
            filters=filters, reason=data["reason"], staff=cast(User, request.user)
        )
        return Response(
            _snapshot_out(request, snapshot, content=False), status=status.HTTP_201_CREATED
        )


class SnapshotApi(APIView):
    @extend_schema(
        responses=SnapshotDetailOut,
        summary="One snapshot: its frozen board (content; its digest is over the bytes at "
        "the json address), and what has happened since to the runs it holds",
    )
    def get(self, request: Request, snapshot_id: str) -> Response:
        snapshot = selectors.snapshot_by_id(id_or_none(snapshot_id))
        if snapshot is None:
            raise NotFound("no such snapshot")
        return Response(_snapshot_out(request, snapshot, content=True))


class FamilyApi(APIView):
    @extend_schema(
        summary="A family's attempts (one submitter's uploads of one agent on one release "
        "and window): how many were counted, the ones you may see, and the best's "
        "family-wise (Šidák) interval",
        responses=inline_serializer(
            "Family",
            {
                "family": serializers.IntegerField(),
                "submitter": serializers.CharField(),
                "agent": serializers.CharField(),
                "release_digest": serializers.CharField(),
                "window": serializers.CharField(),
                "attempts": serializers.IntegerField(),
                "attempts_shown": serializers.IntegerField(),
                "confidence": serializers.FloatField(),
                "best": serializers.JSONField(allow_null=True),
                "runs": serializers.JSONField(),
            },
        ),
    )
    def get(self, request: Request, family_id: str) -> Response:
        found = selectors.family_attempts(request.user, id_or_none(family_id))
        if found is None:
            raise NotFound("no such family")
        return Response(found)


LEADERBOARD_COLUMNS = [
    "rank",
    "rank_low",
    "rank_high",
    "run_id",
    "release",
    "forms",
    "window",
    "agent",
    "model_version",
    "baseline",
    # uploads of the run's family (submitter, agent) on this release and window; a
    # ranked row is the family's best, ranked on ranked_interval at ranked_confidence
    "attempts",
    "ranked_interval_low",
    "ranked_interval_high",
    "ranked_confidence",
    # platform figures: re-derived from the trajectory, priced with the release's
    # reference prices (fractions: 0.01 = 1%)
    "platform_status",
    "platform_shifted_pit",
    "platform_shifted_pit_low",
    "platform_shifted_pit_high",
    "platform_shifted_pit_priced",
    "platform_main_pit",
    "platform_main_pit_low",
    "platform_main_pit_high",
    "platform_delta_shifted_pit",
    "platform_delta_redacted_pit",
    "prices_version",
    "prices_source",
    "prices_pulled_at",
    "prices_sha256",
    "prices_basis",
    # the receipt's own figures, checked, priced with the submitter's prices
    "self_reported_main_leaky",
    "self_reported_main_dump",
    "self_reported_main_pit",
    "self_reported_delta_shifted_leaky",
    "self_reported_delta_shifted_dump",
    "self_reported_delta_shifted_pit",
    "self_reported_delta_redacted_leaky",
    "self_reported_delta_redacted_dump",
    "self_reported_delta_redacted_pit",
    "mask_verdict",
    "probe_recovered",
    "error_cells",
    "why_apart",
    "verification",
    "verification_level",
    "verification_level_words",
    "isolation",
    "could_read_future_data",
    "valid",
    "protocol_complete",
    "protocol_gaps",
    "flag",
    "numbers",
    "withheld_because",
    "failed_check",
    "body_sha256",
    "submitted_at",
]


def leaderboard_csv(board: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=["section", *LEADERBOARD_COLUMNS], extrasaction="ignore"
    )
    writer.writeheader()
    for section in selectors.SECTIONS:
        for row in board[section]:
            low, high = row.get("ranked_interval") or (None, None)
            flat = {"section": section, **row, "ranked_interval_low": low}
            flat["ranked_interval_high"] = high
            writer.writerow({k: csv_safe(v) for k, v in flat.items()})
    return buffer.getvalue()


SNAPSHOT_COLUMNS = ["section", "removed_after_snapshot", "row_digest", *LEADERBOARD_COLUMNS]


def snapshot_csv(board: dict[str, Any]) -> str:
    """A snapshot's rows as CSV, each with its row digest (``harness.snapshot``); a row
    removed after the snapshot has its section and row digest only."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SNAPSHOT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for section in selectors.SECTIONS:
        for row in board.get(section, []):
            if snapshots.is_removed(row):
                writer.writerow({"section": section, **row})
                continue
            low, high = row.get("ranked_interval") or (None, None)
            flat = {"section": section, **row, "ranked_interval_low": low}
            flat |= {"ranked_interval_high": high, "removed_after_snapshot": False}
            flat["row_digest"] = snapshots.row_digest(row)
            writer.writerow({k: csv_safe(v) for k, v in flat.items()})
    return buffer.getvalue()


class LeaderboardApi(APIView):
    @extend_schema(
        summary="The leaderboard: a page of ranked runs (?page=N; by key, ?after= pagination.next or ?before= pagination.previous; or ?all=1 for every run), ranked on the platform pit-clock return of the shifted arm, one row per family (a submitter's agent on one release and window: its best, with attempts, the uploads counted, and ranked_interval, the same bootstrap at the family-wise level ranked_confidence = 0.95^(1/attempts)) and a rank range from those intervals; apart, each with why_apart: unranked runs (no platform figure yet, or too few priced trades), runs whose mask leaks (control void), runs with failed cells, runs that failed verification (the failed check, no numbers), runs pending verification (no numbers) and invalid runs. ?isolated=1 keeps runs whose agent ran isolated (declared) or was re-executed.",
        parameters=[
            OpenApiParameter("release", str, description="release name or content digest"),
            OpenApiParameter("form", str),
            OpenApiParameter("start", str, description="window start, YYYY-MM-DD"),
            OpenApiParameter("end", str, description="window end, YYYY-MM-DD"),
            OpenApiParameter("isolated", bool, description="isolated or re-executed runs only"),
            OpenApiParameter("page", int),
            OpenApiParameter(
                "after",
                str,
                description="the ranked rows after this cursor (pagination.next of a page)",
            ),
            OpenApiParameter(
                "before",
                str,
                description="the ranked rows before this cursor (pagination.previous)",
            ),
            OpenApiParameter("all", bool, description="every run, no pages"),
        ],
        responses=inline_serializer(
            "Leaderboard",
            {name: serializers.JSONField() for name in selectors.SECTIONS},
        ),
    )
    def get(self, request: Request) -> HttpResponse:
        if request.user.is_authenticated:
            return Response(_board(request))
        # the public board, rendered once per board version and query the board links to
        # (boardcache): any change a service makes bumps the version, so nobody is served
        # a stale board, and a query that parses the same is the same entry
        every = request.GET.get("all") in ("1", "true")
        key = None  # a page asked for by cursor is read from the stored board each time
        if every or not any(_cursors(request)):
            stamp, filters = board_stamp(), _filters(request)
            page = 1 if every else _page_number(request)
            hit = boardcache.cached("board-api", stamp, filters, page, every=every)
            if hit is not None:
                return HttpResponse(hit, content_type="application/json")
            key = boardcache.key("board-api", stamp, filters, page, every=every)

        def draw() -> tuple[bytes, bool]:
            board = _board(request)
            return JSONRenderer().render(board), board.get("current", True)

        body = boardcache.served(key, draw)
        return HttpResponse(body, content_type="application/json")


def _filters(request: Any) -> dict[str, Any]:
    params = request.GET
    return {
        "user": request.user,
        "release": params.get("release") or None,
        "form": params.get("form") or None,
        "start": _day(params.get("start")),
        "end": _day(params.get("end")),
        "isolated": params.get("isolated") in ("1", "true", "on"),
    }


def _day(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise SubmissionError("invalid_date", f"{value!r} is not a date (YYYY-MM-DD)") from None


def _page_number(request: Any) -> int:
    return max(1, validated(PageQuery, request.GET).get("page") or 1)


def _cursors(request: Any) -> tuple[str | None, str | None]:
    """``after`` or ``before`` (a row's cursor, checked), not both."""
    after, before = (request.GET.get(name) or None for name in ("after", "before"))
    if after and before:
        raise SubmissionError("invalid_cursor", "give after or before, not both")
    for text in (after, before):
        if text is not None:
            Cursor.parse(text)
    return after, before


def _board(request: Any) -> dict[str, Any]:
    if request.GET.get("all") in ("1", "true"):
        return selectors.leaderboard_export(**_filters(request))
    after, before = _cursors(request)
    return selectors.leaderboard(
        **_filters(request), page=_page_number(request), after=after, before=before
    )


class LeaderboardCsvApi(APIView):
    """The same board as CSV (token authentication applies, as for JSON)."""

    @extend_schema(summary="The leaderboard as CSV", responses={(200, "text/csv"): str})
    def get(self, request: Request) -> HttpResponse:
        body = leaderboard_csv(selectors.leaderboard_export(**_filters(request)))
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="leaderboard.csv"'
        return response


class ReferencePricesOut(Serializer):
    release = serializers.CharField(source="release.content_digest")
    version = serializers.IntegerField()
    source = serializers.CharField()  # type: ignore[assignment]
    pulled_at = serializers.CharField()
    file_sha256 = serializers.CharField()
    basis = serializers.CharField()
    symbols = serializers.IntegerField()
    bars = serializers.IntegerField()
    reason = serializers.CharField()
    registered_at = serializers.DateTimeField()


class ReferencePricesIn(Serializer):
    prices = serializers.FileField()
    source = serializers.CharField(max_length=500)  # type: ignore[assignment]
    pulled_at = serializers.CharField(max_length=100, required=False, allow_blank=True)
    reason = serializers.CharField(max_length=2000)


class ReferencePricesApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_scope = "staff_actions"

    def get_throttles(self) -> list[Any]:
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    def get_permissions(self) -> list[Any]:
        if self.request.method == "POST":
            return [permissions.IsAdminUser()]
        return [permissions.AllowAny()]

    @extend_schema(
        responses=ReferencePricesOut(many=True),
        summary="A release's reference-price versions, newest first",
    )
    def get(self, request: Request, digest: str) -> Response:
        release = get_object_or_404(Release, content_digest=f"sha256:{digest}")
        versions = release.reference_prices.select_related("release").order_by("-version")
        return Response(ReferencePricesOut(versions, many=True).data)

    @extend_schema(
        request={"multipart/form-data": ReferencePricesIn},
        responses={201: ReferencePricesOut, 200: ReferencePricesOut},
        summary="Staff: register a price file as the release's next reference version "
        "(never edited) and re-score every proven run of the release",
    )
    def post(self, request: Request, digest: str) -> Response:
        from pitweb.pricing.services import reference_prices_register

        release = get_object_or_404(Release, content_digest=f"sha256:{digest}")
        form = FORMS["api-reference-prices"]
        _only_fields(request, files=form.files, data=form.data)
        given = ReferencePricesIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        local, _, _ = services.spool(data["prices"], settings.PITWEB_MAX_TRAJECTORY_BYTES, "prices")
        try:
            reference, created = reference_prices_register(
                release=release,
                path=local,
                source=data["source"],
                pulled_at=data.get("pulled_at", ""),
                staff=cast(User, request.user),  # IsAdminUser
                reason=data["reason"],
            )
        finally:
            local.unlink(missing_ok=True)
        return Response(
            ReferencePricesOut(reference).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
