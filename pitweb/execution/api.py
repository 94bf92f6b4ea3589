"""The execution API: registered agents (staff register; owners and staff read), an
owner's request for an execution, staff's request for a re-execution of a run, and an
execution's progress. Every error is ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from pitweb.core.errors import SubmissionError
from pitweb.core.params import IdField
from pitweb.execution import enums, selectors, services
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.releases.models import Release
from pitweb.runs import selectors as run_selectors
from pitweb.runs.models import Run

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer


class AgentOut(Serializer):
    name = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    transport = serializers.CharField()
    dialect = serializers.CharField()
    package = serializers.CharField()
    url = serializers.CharField()
    digest = serializers.CharField()
    receipt_name = serializers.CharField(source="label", help_text="how receipts name it")
    registered_at = serializers.DateTimeField()


class AgentIn(Serializer):
    name = serializers.SlugField(max_length=100)
    owner = serializers.CharField(max_length=150, help_text="the owner's username")
    package = serializers.CharField(max_length=100, required=False, default="",
                                    help_text="an installed agent package, by name")  # fmt: skip
    url = serializers.CharField(max_length=500, required=False, default="",
                                help_text="an HTTP agent's endpoint (allowed host, public address)")  # fmt: skip
    dialect = serializers.ChoiceField(choices=["pit", "sharpebench"], required=False, default="")


class CellOut(Serializer):
    cell = serializers.CharField()
    state = serializers.ChoiceField(choices=enums.CELL_STATE)
    status = serializers.ChoiceField(
        choices=enums.CELL_STATUS, allow_blank=True, help_text="empty until the cell is done"
    )
    sessions = serializers.IntegerField()
    attempts = serializers.IntegerField()
    worker = serializers.CharField()
    message = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ExecutionOut(Serializer):
    id = serializers.IntegerField(source="pk")
    kind = serializers.ChoiceField(choices=enums.EXECUTION_KIND)
    state = serializers.ChoiceField(choices=enums.EXECUTION_STATE)
    agent = serializers.CharField(source="agent.name")
    agent_digest = serializers.CharField(source="agent.digest")
    release = serializers.CharField(source="release.content_digest")
    window = serializers.SerializerMethodField()
    message = serializers.CharField()
    made_run = serializers.SerializerMethodField()
    checked_run = serializers.SerializerMethodField()
    comparison = serializers.JSONField(allow_null=True)
    cells = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_window(self, job: ExecutionJob) -> str:
        return f"{job.config.get('start')}..{job.config.get('end')}"

    def get_made_run(self, job: ExecutionJob) -> str | None:
        return job.made.body_sha256 if job.made is not None else None

    def get_checked_run(self, job: ExecutionJob) -> str | None:
        return job.checked.body_sha256 if job.checked is not None else None

    @extend_schema_field(CellOut(many=True))
    def get_cells(self, job: ExecutionJob) -> list[dict[str, Any]]:
        request = self.context.get("request")
        user = request.user if request is not None else None
        from django.contrib.auth.models import AnonymousUser

        rows = selectors.cells(job, user or AnonymousUser())
        return cast(list[dict[str, Any]], CellOut(rows, many=True).data)


class ExecuteIn(Serializer):
    release = serializers.CharField(max_length=71, help_text="the release's content digest")
    start = serializers.DateField()
    end = serializers.DateField()
    forms = serializers.ListField(child=serializers.CharField(max_length=32), required=False,
                                  max_length=64)  # fmt: skip
    probe = serializers.IntegerField(min_value=0, max_value=1000, required=False, default=10)
    model_version = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True,
        help_text="P1, declared: the model the agent calls (empty: a listed gap)",
    )  # fmt: skip
    training_cutoff = serializers.DateField(
        required=False, allow_null=True, default=None,
        help_text="P2, declared: the model's training cutoff; the run is then marked "
        "post-cutoff, crossing or pre-cutoff against its window",
    )  # fmt: skip
    fault_plan = serializers.JSONField(
        required=False, allow_null=True, default=None,
        help_text="staff only: a fault plan (sharpebench.fault-plan.v1) the agent runs "
        "under; refused (400, nothing queued) unless it declares exactly the relaxations "
        "its faults use and keeps every bound",
    )  # fmt: skip


class ReexecuteIn(Serializer):
    reason = serializers.CharField(max_length=2000)
    submission = IdField()


class AgentsApi(APIView):
    permission_classes = [permissions.IsAuthenticated]
    throttle_scope = "staff_actions"
    throttle_classes = [ScopedRateThrottle]

    @extend_schema(responses=AgentOut(many=True), summary="Registered agents you may see")
    def get(self, request: Request) -> Response:
        return Response(AgentOut(selectors.visible_agents(request.user), many=True).data)

    @extend_schema(request=AgentIn, responses={201: AgentOut},
                   summary="Staff: register an agent (an installed package or an HTTP endpoint)")  # fmt: skip
    def post(self, request: Request) -> Response:
        given = AgentIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        owner = User.objects.filter(username=data["owner"]).first()
        if owner is None:
            raise SubmissionError("unknown_user", "owner: no such user")
        agent = services.agent_register(
            by=cast(User, request.user), name=data["name"], owner=owner,
            package=data["package"], url=data["url"], dialect=data["dialect"],
        )  # fmt: skip
        return Response(AgentOut(agent).data, status=status.HTTP_201_CREATED)


class ExecuteApi(APIView):
    permission_classes = [permissions.IsAuthenticated]
    throttle_scope = "uploads"
    throttle_classes = [ScopedRateThrottle]

    @extend_schema(request=ExecuteIn, responses={202: ExecutionOut},
                   summary="Owner or staff: have the workers execute the agent on a release")  # fmt: skip
    def post(self, request: Request, name: str) -> Response:
        given = ExecuteIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        agent = selectors.visible_agents(request.user).filter(name=name).first()
        if agent is None:
            raise NotFound("no such agent")
        release = Release.objects.filter(content_digest=data["release"]).first()
        if release is None:
            raise NotFound("no such release")
        job = services.execution_request(
            by=cast(User, request.user), agent=agent, release=release, start=data["start"],
            end=data["end"], forms=data.get("forms"), probe=data["probe"],
            model_version=data["model_version"],
            training_cutoff=data["training_cutoff"].isoformat() if data["training_cutoff"] else "",
            fault_plan=data["fault_plan"],
        )  # fmt: skip
        return Response(ExecutionOut(job, context={"request": request}).data, status=202)


class ReexecuteApi(APIView):
    permission_classes = [permissions.IsAdminUser]
    throttle_scope = "staff_actions"
    throttle_classes = [ScopedRateThrottle]

    @extend_schema(request=ReexecuteIn, responses={202: ExecutionOut},
                   summary="Staff: have the workers re-execute a run's registered agent")  # fmt: skip
    def post(self, request: Request, sha: str) -> Response:
        given = ReexecuteIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        run = run_selectors.submission(Run.objects.all(), sha, data.get("submission"))
        if run is None:
            raise NotFound("no such run")
        job = services.reexecution_request(by=cast(User, request.user), run=run,
                                           reason=data["reason"])  # fmt: skip
        return Response(ExecutionOut(job, context={"request": request}).data, status=202)


class ExecutionApi(APIView):
    @extend_schema(
        responses=ExecutionOut, summary="One execution: its cells, its run, its comparison"
    )
    def get(self, request: Request, job_id: str) -> Response:
        job = selectors.visible_job(request.user, job_id)
        if job is None:
            raise NotFound("no such execution")
        return Response(ExecutionOut(job, context={"request": request}).data)


__all__ = ["AgentsApi", "ExecuteApi", "ExecutionApi", "ReexecuteApi", "RegisteredAgent"]
