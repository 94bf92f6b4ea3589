"""The submitters' and staff API of runs (the board's is ``pitweb.board.api``, the
reference prices' ``pitweb.pricing.api``). Views validate input, call one service, and
return plain data; every error has the shape ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from django.contrib.auth.models import AnonymousUser, User
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    inline_serializer,
)
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import only_fields
from pitweb.core.params import IdField, Serializer, validated
from pitweb.runs import enums, presentation, selectors, services
from pitweb.runs.models import Run, VerificationJob
from pitweb.runs.uploads import FORMS


class RunQuery(Serializer):
    """What a run's pages, tables, downloads, API and staff form read besides the key."""

    submission = IdField()


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
    kind = serializers.ChoiceField(choices=enums.JOB_KIND)
    state = serializers.ChoiceField(choices=enums.RUN_STATE)
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
    status = serializers.ChoiceField(choices=enums.RUN_STATE)
    verification_level = serializers.ChoiceField(choices=enums.VERIFICATION_LEVEL)
    mask_verdict = serializers.ChoiceField(choices=enums.MASK_VERDICT)
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
    visibility = serializers.ChoiceField(choices=enums.VISIBILITY)
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
        return presentation.level_words(run)

    def get_platform(self, run: Run) -> dict[str, Any] | None:
        """Platform figures (reference prices) and their price version; null for a run
        whose numbers are not proven."""
        return presentation.platform_numbers(run) if run.proven else None

    def get_page(self, run: Run) -> str:
        return reverse("run", args=[run.body_sha256.removeprefix("sha256:")]) + (
            f"?submission={run.pk}"
        )


class RunDetailOut(RunOut):
    receipt_body = serializers.JSONField(source="body")
    jobs = serializers.SerializerMethodField()
    certificate = serializers.SerializerMethodField()

    def get_certificate(self, run: Run) -> str | None:
        """Where the site's signed verdict over the run is (an in-toto Statement in a DSSE
        envelope; ``pit-harness certificate verify``): only for a public run whose numbers
        were proved, null otherwise."""
        public = run.visibility == "public" and not run.hidden and run.withdrawn_at is None
        if not (public and run.proven):
            return None
        sha = run.body_sha256.removeprefix("sha256:")
        return reverse("run-certificate", args=[sha]) + f"?submission={run.pk}"

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


# the name the points' API imports it by


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
        only_fields(request, files=UPLOAD_FIELDS)
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
