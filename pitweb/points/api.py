"""The points API: a submitter uploads an answer set for a point set (token)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import only_fields
from pitweb.points import services
from pitweb.points.models import PointSet


class AnswerSetOut(serializers.Serializer):  # type: ignore[type-arg]
    answer_set = serializers.IntegerField(source="pk")
    point_set = serializers.CharField(source="point_set.name")
    model = serializers.CharField()
    origin = serializers.CharField()
    sha256 = serializers.CharField()
    answers = serializers.SerializerMethodField()
    judge_jobs = serializers.SerializerMethodField()

    def get_answers(self, obj: Any) -> int:
        return len(obj.body.get("answers") or [])

    def get_judge_jobs(self, obj: Any) -> list[int]:
        return list(obj.jobs.filter(kind="judge").values_list("pk", flat=True))


class AnswerSetsApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_scope = "uploads"
    throttle_classes = [ScopedRateThrottle]
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Upload an answer set (pit_answer_set) for a public or revealed point set",
        request={
            "multipart/form-data": inline_serializer(
                "AnswerSetUpload", {"answers": serializers.FileField()}
            )
        },
        responses={201: AnswerSetOut, 200: AnswerSetOut},
    )
    def post(self, request: Request, name: str) -> Response:
        point_set = PointSet.objects.filter(name=name).first()
        if point_set is None:
            raise Http404("no such point set")
        only_fields(request, files=("answers",))
        if "answers" not in request.FILES:
            raise SubmissionError("missing_file", "multipart field answers required")
        answer_set, created = services.answer_set_upload(
            user=cast(User, request.user), point_set=point_set, upload=request.FILES["answers"]
        )
        return Response(
            AnswerSetOut(answer_set).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
