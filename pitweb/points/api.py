"""The points API: point sets and their judged sets read by anyone, exactly as their
pages show them (the pages' selectors build both, so a sealed set's hidden sections
never leave here either), and a submitter's answer set uploaded (token). Every closed
set of values is a named enum (``pitweb.points.enums``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import User
from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import permissions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from harness.points.metrics import CLASSES
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import only_fields
from pitweb.core.params import parse_id
from pitweb.points import board, enums, selectors, services
from pitweb.points.models import PointSet

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer


def _renamed(fields: dict[str, Any], **names: str) -> dict[str, Any]:
    """A serializer's fields with some renamed in place: the pages' names that a class
    attribute cannot take (``class``, ``pass``) or must not (``fail``, a method)."""
    return {names.get(k, k): f for k, f in fields.items()}


def _point_set(name: str) -> PointSet:
    found = selectors.point_set_named(name)
    if found is None:
        raise Http404("no such point set")
    return found


# -- reads -------------------------------------------------------------------------------


class PointSetOut(Serializer):
    """A row of the point sets page: what its state lets anyone see (``None`` where a
    sealed set keeps it: its suite digest and salt)."""

    name = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=enums.POINT_SET_KIND)
    state = serializers.ChoiceField(choices=enums.POINT_SET_STATE)
    points = serializers.IntegerField()
    reveal_on = serializers.DateField(allow_null=True)
    commitment = serializers.CharField(allow_null=True, help_text="a sealed set's commitment")
    question_digest = serializers.CharField()
    suite_sha256 = serializers.CharField(allow_null=True, help_text="null while sealed")
    salt = serializers.CharField(allow_null=True, help_text="published by the reveal")
    ranked = serializers.BooleanField(help_text="only a revealed set's judged sets rank")


class PointOut(Serializer):
    """A point: its Question always; its hidden sections and the hashes over them only
    once its set discloses them (null while the set is sealed)."""

    point_id = serializers.CharField()
    suite = serializers.CharField()
    question = serializers.CharField(help_text="Markdown")
    question_sha256 = serializers.CharField()
    ground_truth = serializers.CharField(allow_null=True, default=None)
    provenance = serializers.CharField(allow_null=True, default=None)
    point_sha256 = serializers.CharField(allow_null=True, default=None)
    ground_truth_sha256 = serializers.CharField(allow_null=True, default=None)


class ClassCountOut(Serializer):
    judged_class = serializers.ChoiceField(choices=enums.JUDGED_CLASS)
    count = serializers.IntegerField()

    def get_fields(self) -> dict[str, Any]:
        return _renamed(super().get_fields(), judged_class="class")


class JudgedRowOut(Serializer):
    """A judged set as its point set's page tables it. A set whose judge failed its
    controls has every figure null and its broken rule in ``figures_withheld_because``."""

    judged_set = serializers.IntegerField()
    model = serializers.CharField(help_text="the answering model")
    answers = serializers.ChoiceField(choices=enums.ANSWER_ORIGIN)  # where they came from
    timing = serializers.ChoiceField(choices=enums.ANSWER_TIMING)  # beside the labels' reveal
    judge = serializers.CharField(help_text="model/effort")
    judge_pinned = serializers.BooleanField()
    judge_is_demo = serializers.BooleanField()
    origin = serializers.ChoiceField(choices=enums.JUDGED_ORIGIN)
    status = serializers.ChoiceField(choices=enums.RELIABILITY)  # the judge's reliability
    figures_withheld_because = serializers.CharField(
        help_text="empty, or the rule the judge broke (no figure is then shown)"
    )
    passed = serializers.IntegerField(allow_null=True)
    failed = serializers.IntegerField(allow_null=True)
    harness_error = serializers.IntegerField(allow_null=True, help_text="outside every denominator")
    accuracy = serializers.FloatField(allow_null=True, help_text="PASS / (PASS + FAIL)")
    accuracy_low = serializers.FloatField(allow_null=True, help_text="Wilson 95% interval")
    accuracy_high = serializers.FloatField(allow_null=True, help_text="Wilson 95% interval")
    accuracy_if_errors_fail = serializers.FloatField(allow_null=True)
    accuracy_if_errors_pass = serializers.FloatField(allow_null=True)
    pass_at_k = serializers.DictField(
        child=serializers.FloatField(allow_null=True), allow_null=True
    )
    distribution = serializers.SerializerMethodField()
    control_points = serializers.IntegerField(allow_null=True)
    positive_controls_held = serializers.IntegerField(allow_null=True)
    negative_controls_failed = serializers.IntegerField(allow_null=True)
    flip_rate = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    tokens = serializers.DictField(
        child=serializers.IntegerField(), help_text="the answers' tokens by kind, as reported"
    )
    tool_calls = serializers.IntegerField(
        allow_null=True, help_text="tool calls (web searches among them) the answers made"
    )
    cost_usd = serializers.FloatField(allow_null=True, help_text="null: not every cost known")
    ranked = serializers.BooleanField()
    rank = serializers.CharField(allow_null=True, help_text="a range where intervals overlap")
    not_ranked_because = serializers.CharField()

    def get_fields(self) -> dict[str, Any]:
        return _renamed(super().get_fields(), passed="pass", failed="fail")

    @extend_schema_field(ClassCountOut(many=True, allow_null=True))
    def get_distribution(self, row: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The error-class distribution: null where the figures are withheld."""
        if row["figures_withheld_because"]:
            return None
        return [{"class": c, "count": row[c]} for c in CLASSES]


class RulesOut(Serializer):
    negative_control_failure_share_max = serializers.FloatField()
    flip_rate_max = serializers.FloatField()
    fleiss_kappa_min = serializers.FloatField()


class ReliabilityOut(Serializer):
    """The judge's controls and stability, as the judged set recorded them."""

    status = serializers.ChoiceField(choices=enums.RELIABILITY)
    broken = serializers.ListField(child=serializers.CharField(), help_text="each rule it broke")
    rules = RulesOut()
    figures = serializers.DictField()
    flip_rate = serializers.FloatField(allow_null=True)
    raw_agreement = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    items = serializers.IntegerField()
    repeats = serializers.IntegerField()
    negative_flagged = serializers.ListField(child=serializers.CharField())


class VerdictOut(Serializer):
    """A verdict as the judged set's page shows it: its answer and decisive reason null
    while the point set is sealed (a reason may quote the Ground Truth)."""

    point_id = serializers.CharField()
    suite = serializers.CharField()
    sample = serializers.IntegerField()
    judged_class = serializers.ChoiceField(
        choices=enums.JUDGED_CLASS, allow_null=True, help_text="null for a harness error"
    )
    outcome = serializers.ChoiceField(choices=enums.OUTCOME)
    decisive_reason = serializers.CharField(allow_null=True)
    answer = serializers.CharField(allow_null=True)
    judge_model = serializers.CharField(allow_null=True)
    judge_model_returned = serializers.CharField(allow_null=True)
    judged_at = serializers.CharField(allow_null=True)

    def get_fields(self) -> dict[str, Any]:
        return _renamed(super().get_fields(), judged_class="class")


class PointSetDetailOut(PointSetOut):
    state_words = serializers.CharField(help_text="the state as the page says it")
    points_list = PointOut(many=True)
    judged_sets = JudgedRowOut(many=True)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        fields["point_count"] = fields.pop("points")
        fields["point_count"].source = "points"
        fields["points"] = fields.pop("points_list")
        fields["points"].source = "points_list"
        return fields


class JudgedSetOut(JudgedRowOut):
    point_set = serializers.CharField()
    judge_model = serializers.CharField()
    judge_effort = serializers.CharField()
    judged_at = serializers.CharField(help_text="ISO 8601, or empty")
    previous = serializers.IntegerField(allow_null=True, help_text="the judged set re-judged")
    reliability = ReliabilityOut(allow_null=True, help_text="null for imported verdicts")
    verdicts = VerdictOut(many=True)


class PointSetsApi(APIView):
    @extend_schema(
        responses=PointSetOut(many=True), summary="The point sets, as their page lists them"
    )
    def get(self, request: Request) -> Response:
        rows = selectors.point_set_rows(selectors.point_sets())
        return Response(PointSetOut(rows, many=True).data)


class PointSetApi(APIView):
    @extend_schema(
        responses=PointSetDetailOut,
        summary="One point set: its points' public parts (the hidden sections only once "
        "revealed) and its judged sets",
    )
    def get(self, request: Request, name: str) -> Response:
        point_set = _point_set(name)
        [row] = selectors.point_set_rows(selectors.point_sets().filter(pk=point_set.pk))
        row |= {
            "state_words": point_set.state_words,
            "points_list": selectors.question_rows(point_set),
            "judged_sets": selectors.with_ranks(
                selectors.judged_rows(selectors.judged_sets(point_set))
            ),
        }
        return Response(PointSetDetailOut(row).data)


class JudgedSetApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "class",
                str,
                enum=[*CLASSES, "harness_error"],
                description="only the verdicts of this class (harness_error: no verdict)",
            ),
            OpenApiParameter("suite", str, description="only the verdicts of this suite"),
        ],
        responses=JudgedSetOut,
        summary="One judged set: its judge, reliability, accuracy, error-class "
        "distribution and verdicts",
    )
    def get(self, request: Request, name: str, judged_id: str) -> Response:
        point_set = _point_set(name)
        try:
            pk = parse_id(judged_id)
        except ValueError as exc:
            raise SubmissionError("invalid_input", f"judged set id {exc}") from None
        wanted_class = request.query_params.get("class", "")
        if wanted_class and wanted_class not in (*CLASSES, "harness_error"):
            raise SubmissionError("invalid_input", "class must be one of the six or harness_error")
        judged = selectors.judged_set_of(point_set, pk) if pk is not None else None
        if judged is None:
            raise Http404("no such judged set")
        # the row as the set's page tables it (its rank among the set's judged sets)
        rows = selectors.with_ranks(selectors.judged_rows(selectors.judged_sets(point_set)))
        row = next(r for r in rows if r["judged_set"] == judged.pk)
        row |= {
            "point_set": point_set.name,
            "judge_model": judged.judge_model,
            "judge_effort": judged.judge_effort,
            "judged_at": judged.judged_at,
            "previous": judged.previous_id,
            "reliability": selectors.stability(judged),
            "verdicts": selectors.verdict_rows(
                judged,
                selectors.verdicts(
                    judged, judged_class=wanted_class, suite=request.query_params.get("suite", "")
                ),
            ),
        }
        return Response(JudgedSetOut(row).data)


class PointsClassShareOut(Serializer):
    share = serializers.FloatField()
    low = serializers.FloatField(help_text="Wilson 95% interval")
    high = serializers.FloatField(help_text="Wilson 95% interval")


class PointsBoardRowOut(Serializer):
    """A formal row: one configuration of one family (who committed the answers, and
    the model), its first answer set on each set pooled; ranked by its interval."""

    rank = serializers.CharField(allow_null=True, help_text="a range where intervals overlap")
    family = serializers.CharField(help_text="who committed the answers")
    model = serializers.CharField()
    effort = serializers.CharField(allow_null=True)
    harness = serializers.CharField(allow_null=True)
    tools = serializers.CharField()
    point_sets = serializers.IntegerField(help_text="sets its first answer sets answered")
    point_set_names = serializers.ListField(child=serializers.CharField())
    judged_sets = serializers.ListField(child=serializers.IntegerField())
    unscored = serializers.IntegerField(help_text="first answer sets with no usable judgment")
    unscored_because = serializers.CharField(help_text="why they are unscored (empty: none)")
    attempts = serializers.IntegerField(help_text="later answer sets: counted, never ranked")
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    judged = serializers.IntegerField()
    harness_error = serializers.IntegerField(help_text="outside every denominator")
    accuracy = serializers.FloatField(allow_null=True)
    accuracy_low = serializers.FloatField(allow_null=True)
    accuracy_high = serializers.FloatField(allow_null=True)
    class_intervals = serializers.DictField(child=PointsClassShareOut(allow_null=True))
    tokens = serializers.DictField(child=serializers.IntegerField())
    tool_calls = serializers.IntegerField()

    def get_fields(self) -> dict[str, Any]:
        return _renamed(super().get_fields(), passed="pass", failed="fail")


class PointsApartRowOut(Serializer):
    family = serializers.CharField()
    model = serializers.CharField()
    point_set = serializers.CharField()
    answer_set = serializers.IntegerField()
    timing = serializers.ChoiceField(choices=enums.ANSWER_TIMING)
    judged_set = serializers.IntegerField(allow_null=True)
    judged = serializers.IntegerField(allow_null=True)
    accuracy = serializers.FloatField(allow_null=True)
    because = serializers.CharField(help_text="why it is not ranked with the formal rows")


class PointsBoardOut(Serializer):
    rows = PointsBoardRowOut(many=True)
    apart = PointsApartRowOut(many=True)
    waiting = serializers.IntegerField(help_text="answer sets of sets still sealed")


class PointsBoardApi(APIView):
    @extend_schema(
        responses=PointsBoardOut,
        summary="The points board: formal cohorts ranked, every other result listed apart",
    )
    def get(self, request: Request) -> Response:
        found = board.points_board_view()
        rows = [r | {"passed": r["pass"], "failed": r["fail"]} for r in found["rows"]]
        return Response(PointsBoardOut({**found, "rows": rows}).data)


# -- the upload ----------------------------------------------------------------------------


class LogEntryRefOut(Serializer):
    seq = serializers.IntegerField()
    digest = serializers.CharField()
    stamped_at = serializers.CharField(help_text="the site's time, as the entry states it")


class AnswerSetOut(Serializer):
    """An answer set as stored. One received for a sealed set says only that it was
    received (``received``) and where the log acknowledges it (``log_entry``): no judge
    job, no verdict, nothing that differs with what the answers say."""

    answer_set = serializers.IntegerField(source="pk")
    point_set = serializers.CharField(source="point_set.name")
    model = serializers.CharField()
    origin = serializers.ChoiceField(choices=enums.ANSWER_ORIGIN)
    sha256 = serializers.CharField()
    timing = serializers.ChoiceField(choices=enums.ANSWER_TIMING)
    received = serializers.SerializerMethodField(
        help_text="while the set is sealed: 'received, sealed until <date>'; else empty"
    )
    log_entry = serializers.SerializerMethodField(
        help_text="the commitment log's entry acknowledging answers received while sealed"
    )
    answers = serializers.SerializerMethodField()
    judge_jobs = serializers.SerializerMethodField(help_text="newest first")
    judge_job_urls = serializers.SerializerMethodField(
        help_text="where each judge job's state is polled (newest first): its state, and "
        "once judged, its judged set's API URL and page"
    )
    page = serializers.SerializerMethodField(help_text="the point set's page")

    def get_received(self, obj: Any) -> str:
        return f"received, sealed until {obj.point_set.reveal_on}" if obj.awaits_reveal else ""

    @extend_schema_field(LogEntryRefOut(allow_null=True))
    def get_log_entry(self, obj: Any) -> dict[str, Any] | None:
        entry = obj.log_entry
        if entry is None:
            return None
        return {"seq": entry.seq, "digest": entry.digest, "stamped_at": entry.body["stamped_at"]}

    def get_answers(self, obj: Any) -> int:
        return len(obj.body.get("answers") or [])

    def get_judge_jobs(self, obj: Any) -> list[int]:
        return list(obj.jobs.filter(kind="judge").values_list("pk", flat=True))

    def get_judge_job_urls(self, obj: Any) -> list[str]:
        return [reverse("points-job-json", args=[pk]) for pk in self.get_judge_jobs(obj)]

    def get_page(self, obj: Any) -> str:
        return reverse("point-set", args=[obj.point_set.name])


class AnswerSetsApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_scope = "uploads"
    throttle_classes = [ScopedRateThrottle]
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Upload an answer set (pit_answer_set): a public or revealed set's is "
        "judged at once; a sealed set's (made from its questions.json, every point) is "
        "logged and judged at the reveal",
        request={
            "multipart/form-data": inline_serializer(
                "AnswerSetUpload", {"answers": serializers.FileField()}
            )
        },
        responses={201: AnswerSetOut, 200: AnswerSetOut},
    )
    def post(self, request: Request, name: str) -> Response:
        point_set = _point_set(name)
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
