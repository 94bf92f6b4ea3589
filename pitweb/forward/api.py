"""The forward track's API: the public commitments and the log (anyone), an owner's
commitment of a registered agent and a withdrawal (a token, or a signed-in session).
Every error is ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle
from rest_framework.views import APIView

from harness.vocabulary import ARMS, CLOCKS
from pitweb.execution.selectors import visible_agents
from pitweb.forward import enums, selectors, services
from pitweb.forward.models import Commitment, LogEntry
from pitweb.releases.models import Release

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer


class HeadOut(Serializer):
    seq = serializers.IntegerField(help_text="the last entry's number (0: the empty log)")
    digest = serializers.CharField(allow_null=True, help_text="the last entry's digest")


class ForwardRunOut(Serializer):
    kind = serializers.ChoiceField(choices=enums.RUN_KIND)
    release = serializers.CharField()
    start = serializers.DateField()
    end = serializers.DateField()
    sessions = serializers.IntegerField()
    status = serializers.ChoiceField(choices=enums.RUN_STATUS)


class CommitmentOut(Serializer):
    seq = serializers.IntegerField(help_text="its entry's number in the log")
    entry_digest = serializers.CharField()
    agent = serializers.CharField()
    agent_digest = serializers.CharField(help_text="the package's content digest committed")
    submitter = serializers.CharField()
    release = serializers.CharField(help_text="the release line it enters, by name")
    release_digest = serializers.CharField(help_text="the version current when it committed")
    forms = serializers.ListField(child=serializers.CharField())
    hold_sessions = serializers.IntegerField()
    clocks = serializers.ListField(child=serializers.CharField())
    arms = serializers.ListField(child=serializers.CharField())
    model_version = serializers.CharField(help_text="empty: not declared")
    training_cutoff = serializers.CharField(help_text="empty: not declared")
    committed_at = serializers.DateTimeField(help_text="the site's stamp")
    state = serializers.ChoiceField(choices=enums.COMMITMENT_STATE)
    withdrawn_by_entry = serializers.IntegerField(allow_null=True)
    forward_runs = ForwardRunOut(many=True)


class CommitmentIn(Serializer):
    agent = serializers.SlugField(max_length=100, help_text="your registered agent, by name")
    release = serializers.CharField(max_length=71, help_text="the release's content digest")
    forms = serializers.ListField(child=serializers.CharField(max_length=32), max_length=64)
    hold_sessions = serializers.IntegerField(min_value=1, max_value=services.HOLD_MAX)
    clocks = serializers.ListField(child=serializers.ChoiceField(choices=list(CLOCKS)),
                                   max_length=len(CLOCKS))  # fmt: skip
    arms = serializers.ListField(child=serializers.ChoiceField(choices=list(ARMS)),
                                 max_length=len(ARMS))  # fmt: skip
    model_version = serializers.CharField(max_length=500, required=False, default="",
                                          allow_blank=True)  # fmt: skip
    training_cutoff = serializers.CharField(max_length=10, required=False, default="",
                                            allow_blank=True, help_text="YYYY-MM-DD")  # fmt: skip


class CommitmentWithdrawIn(Serializer):
    reason = serializers.CharField(max_length=500, help_text="published in the log")


class EntryOut(Serializer):
    seq = serializers.IntegerField()
    digest = serializers.CharField()
    prev = serializers.CharField(help_text="empty: the first entry")
    kind = serializers.ChoiceField(choices=enums.ENTRY_KIND)
    stamped_at = serializers.DateTimeField()
    body = serializers.JSONField(help_text="the entry as hashed (canonical JSON's keys)")


class LogOut(Serializer):
    log = serializers.CharField(help_text="the format: pitweb-commitments/1")
    entries = serializers.ListField(child=serializers.JSONField())
    head = HeadOut()


def _out(commitment: Commitment) -> dict[str, Any]:
    found = selectors.commitment_by_seq(commitment.entry.seq)
    assert found is not None
    return cast(
        dict[str, Any], CommitmentOut(selectors.commitment_rows([found.commitment])[0]).data
    )


class CommitmentsApi(APIView):
    def get_permissions(self) -> list[Any]:
        return [permissions.IsAuthenticated()] if self.request.method == "POST" else []

    def get_throttles(self) -> list[BaseThrottle]:
        return super().get_throttles() if self.request.method == "POST" else []

    throttle_scope = "uploads"
    throttle_classes = [ScopedRateThrottle]

    @extend_schema(
        operation_id="commitments_list",
        responses=CommitmentOut(many=True),
        summary="Every commitment, live and withdrawn, newest first (at most 500)",
    )
    def get(self, request: Request) -> Response:
        rows = selectors.commitment_rows(selectors.public_commitments())
        return Response(CommitmentOut(rows, many=True).data)

    @extend_schema(
        request=CommitmentIn,
        responses={201: CommitmentOut},
        summary="Owner: commit a registered agent package to the forward track (an HTTP "
        "agent is refused with http_not_committable); stamped with the site's time",
    )
    def post(self, request: Request) -> Response:
        given = CommitmentIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        # an agent the requester may not see answers as a missing one (staff see every
        # agent, and are refused by the service: only the owner commits)
        agent = visible_agents(request.user).filter(name=data["agent"]).first()
        if agent is None:
            raise NotFound("no such agent")
        release = Release.objects.filter(content_digest=data["release"]).first()
        if release is None:
            raise NotFound("no such release")
        commitment = services.commitment_create(
            by=cast(User, request.user), agent=agent, release=release, forms=data["forms"],
            hold_sessions=data["hold_sessions"], clocks=data["clocks"], arms=data["arms"],
            model_version=data["model_version"], training_cutoff=data["training_cutoff"],
        )  # fmt: skip
        return Response(_out(commitment), status=status.HTTP_201_CREATED)


class WithdrawApi(APIView):
    permission_classes = [permissions.IsAuthenticated]
    throttle_scope = "uploads"
    throttle_classes = [ScopedRateThrottle]

    @extend_schema(
        request=CommitmentWithdrawIn,
        responses={201: EntryOut},
        summary="Owner or staff: withdraw a commitment (a withdraw entry is appended; the "
        "commitment stays in the log)",
    )
    def post(self, request: Request, seq: str) -> Response:
        given = CommitmentWithdrawIn(data=request.data)
        given.is_valid(raise_exception=True)
        found = selectors.commitment_by_seq(seq)
        if found is None:
            raise NotFound("no such commitment")
        row: LogEntry = services.commitment_withdraw(
            by=cast(User, request.user), commitment=found.commitment,
            reason=given.validated_data["reason"],
        )  # fmt: skip
        return Response(EntryOut(row).data, status=status.HTTP_201_CREATED)


class LogApi(APIView):
    @extend_schema(
        responses=LogOut,
        summary="The commitment log: every entry as hashed, and its head (what "
        "pit-harness commitments verify reads; also at /forward/log.json)",
    )
    def get(self, request: Request) -> Response:
        return Response(selectors.log_document())
