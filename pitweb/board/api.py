"""The board's API: the leaderboard (JSON and CSV), a family's attempts, and the
published snapshots. Every error has the shape ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import User
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pitweb.board import cache as boardcache
from pitweb.board import selectors, snapshots
from pitweb.board.exports import leaderboard_csv
from pitweb.board.families import family_attempts
from pitweb.board.filters import board_filters, cursors, every_row, page_number
from pitweb.board.models import Snapshot
from pitweb.board.query import SECTIONS
from pitweb.board.services import snapshot_publish
from pitweb.board.stamp import board_stamp
from pitweb.core.params import id_or_none
from pitweb.runs import enums as run_enums

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer


class SnapshotIn(Serializer):
    reason = serializers.CharField(max_length=2000)
    benchmark = serializers.RegexField(
        r"^[0-9a-f]{32}$", required=False, allow_blank=True,
        help_text="the benchmark's key: a snapshot is of one benchmark (filters that "
        "match several are refused)",
    )  # fmt: skip
    release = serializers.CharField(required=False, allow_blank=True, max_length=300)
    form = serializers.CharField(required=False, allow_blank=True, max_length=50)
    start = serializers.DateField(required=False, allow_null=True)
    end = serializers.DateField(required=False, allow_null=True)
    isolated = serializers.BooleanField(required=False, default=False)
    cutoff = serializers.ChoiceField(
        choices=[("post", "post-cutoff runs only")], required=False, allow_blank=True,
        help_text="post: only runs whose window lies wholly after their model's declared "
        "training cutoff",
    )  # fmt: skip


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
    previous_snapshot = serializers.CharField(
        allow_null=True,
        help_text="the content digest of the snapshot of the same board before this one, "
        "named in its content (so its digest covers it): null for the board's first, and "
        "for a snapshot published before snapshots were chained (signature_url null)",
    )
    signature_url = serializers.URLField(
        allow_null=True,
        help_text="the snapshot signed by the site (a DSSE envelope over its digest beside "
        "the snapshot): `pit-harness snapshot verify s1.json s2.json ... --keys "
        "pitweb-keys.json` checks a chain of them, oldest first, against the site's keys "
        "(/.well-known/pitweb-keys.json); null for a snapshot published before snapshots "
        "were signed",
    )


class BoardRowOut(Serializer):
    """A board row's closed sets, as enums (a row holds more: the CSV's columns)."""

    verification = serializers.ChoiceField(choices=run_enums.RUN_STATE)
    verification_level = serializers.ChoiceField(choices=run_enums.VERIFICATION_LEVEL)
    mask_verdict = serializers.ChoiceField(choices=run_enums.MASK_VERDICT)
    # present with scored platform figures; memory_words says it with the figures it read
    memory_verdict = serializers.ChoiceField(choices=run_enums.MEMORY_VERDICT, required=False)
    # where the window lies against the declared training cutoff (null: none declared)
    cutoff_relation = serializers.ChoiceField(choices=run_enums.CUTOFF_RELATION, allow_null=True)
    forward_tested = serializers.BooleanField(
        help_text="the site executed the run with an agent package (the same digest) that "
        "was committed on the public log and then passed a forward run"
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
        "previous_snapshot": snapshot.previous_digest,
        "signature_url": request.build_absolute_uri(reverse("snapshot-signed", args=[snapshot.pk]))
        if snapshot.signature
        else None,
    }
    if content:
        board = snapshots.snapshot_board(snapshot)
        out["since"] = [
            {**e, "at": e["at"].isoformat()}
            for e in snapshots.snapshot_since(snapshot, board["board"])
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
        summary="Staff: publish a snapshot of one benchmark's public board (named by "
        "benchmark, or the only one the other filters match; filters that match several "
        "are refused with spans_benchmarks), with a reason; it never changes afterwards",
    )
    def post(self, request: Request) -> Response:
        given = SnapshotIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        filters = {k: data.get(k) or None for k in ("benchmark", "release", "form")}
        filters |= {k: data[k].isoformat() if data.get(k) else None for k in ("start", "end")}
        filters["isolated"] = data.get("isolated", False)
        filters["cutoff"] = data.get("cutoff") or None
        snapshot = snapshot_publish(
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
        snapshot = snapshots.snapshot_by_id(id_or_none(snapshot_id))
        if snapshot is None:
            raise NotFound("no such snapshot")
        return Response(_snapshot_out(request, snapshot, content=True))


class FamilyApi(APIView):
    @extend_schema(
        summary="A family's attempts (one submitter's uploads of one agent on one "
        "benchmark: release, forms, window, hold and clocks): how many were counted, the ones you may see, and the best's "
        "family-wise (Šidák) interval",
        responses=inline_serializer(
            "Family",
            {
                "family": serializers.IntegerField(),
                "submitter": serializers.CharField(),
                "agent": serializers.CharField(),
                "release_digest": serializers.CharField(),
                "window": serializers.CharField(),
                "benchmark": serializers.JSONField(allow_null=True),
                "attempts": serializers.IntegerField(),
                "attempts_shown": serializers.IntegerField(),
                "forward_tested": serializers.BooleanField(
                    help_text="one of its runs you may see is forward-tested"
                ),
                "confidence": serializers.FloatField(),
                "best": serializers.JSONField(allow_null=True),
                "runs": serializers.JSONField(),
            },
        ),
    )
    def get(self, request: Request, family_id: str) -> Response:
        found = family_attempts(request.user, id_or_none(family_id))
        if found is None:
            raise NotFound("no such family")
        return Response(found)


class LeaderboardApi(APIView):
    @extend_schema(
        summary="The leaderboard of one benchmark (release, forms, window, hold, clocks: a ranking exists only inside one), named by ?benchmark=<key> or the only one the other filters match. A query whose filters match several benchmarks ranks nothing: grouped is true, benchmarks lists them, and each one's rows follow one another with every rank field (rank, rank_low, rank_high, position, ranked_interval, ranked_confidence) null. Every row names its benchmark (benchmark, benchmark_name). One benchmark's answer: a page of ranked runs (?page=N; by key, ?after= pagination.next or ?before= pagination.previous; or ?all=1 for every run), ranked on the platform pit-clock return of the shifted arm, one row per family (a submitter's agent on one release and window: its best, with attempts, the uploads counted, and ranked_interval, the same bootstrap at the family-wise level ranked_confidence = 0.95^(1/attempts)) and a rank range from those intervals; apart, each with why_apart: unranked runs (no platform figure yet, or too few priced trades), runs whose mask leaks (control void), runs with failed cells, runs that failed verification (the failed check, no numbers), runs pending verification (no numbers) and invalid runs. ?isolated=1 keeps runs whose agent ran isolated (declared) or was re-executed. ?cutoff=post keeps runs whose window lies wholly after their model's declared training cutoff (cutoff_relation post_cutoff: a holdout for that model); any other value is refused with a 400 (invalid_cutoff).",
        parameters=[
            OpenApiParameter(
                "benchmark", str, description="a benchmark's key (32 hex digits): its board"
            ),
            OpenApiParameter("release", str, description="release name or content digest"),
            OpenApiParameter("form", str),
            OpenApiParameter("start", str, description="window start, YYYY-MM-DD"),
            OpenApiParameter("end", str, description="window end, YYYY-MM-DD"),
            OpenApiParameter("isolated", bool, description="isolated or re-executed runs only"),
            OpenApiParameter(
                "cutoff",
                str,
                enum=["post"],
                description="post: only runs whose window lies wholly after their model's "
                "declared training cutoff (a holdout for that model); another value is a 400",
            ),
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
            {
                **{name: BoardRowOut(many=True) for name in SECTIONS},
                "grouped": serializers.BooleanField(
                    help_text="true: the filters match several benchmarks, nothing is ranked"
                ),
                "benchmark": serializers.JSONField(
                    allow_null=True, help_text="the one benchmark ranked (null when grouped)"
                ),
                "benchmarks": serializers.JSONField(
                    required=False, help_text="when grouped: the benchmarks, in row order"
                ),
            },
        ),
    )
    def get(self, request: Request) -> HttpResponse:
        if request.user.is_authenticated:
            return Response(_board(request))
        # the public board, rendered once per board version and query the board links to
        # (``cache``): any change a service makes bumps the version, so nobody is served
        # a stale board, and a query that parses the same is the same entry
        params = request.GET
        every = every_row(params)
        key = None  # a page asked for by cursor is read from the stored board each time
        if every or not any(cursors(params)):
            stamp, filters = board_stamp(), board_filters(params, request.user)
            page = 1 if every else page_number(params)
            hit = boardcache.cached("board-api", stamp, filters, page, every=every)
            if hit is not None:
                return HttpResponse(hit, content_type="application/json")
            key = boardcache.key("board-api", stamp, filters, page, every=every)

        def draw() -> tuple[bytes, bool]:
            board = _board(request)
            return JSONRenderer().render(board), board.get("current", True)

        body = boardcache.served(key, draw)
        return HttpResponse(body, content_type="application/json")


def _board(request: Request) -> dict[str, Any]:
    params = request.GET
    if every_row(params):
        return selectors.leaderboard_export(**board_filters(params, request.user))
    after, before = cursors(params)
    return selectors.leaderboard(
        **board_filters(params, request.user),
        page=page_number(params),
        after=after,
        before=before,
    )


class LeaderboardCsvApi(APIView):
    """The same board as CSV (token authentication applies, as for JSON)."""

    @extend_schema(
        summary="The leaderboard as CSV: one benchmark's, ranked (?benchmark=<key>), or, "
        "for filters that match several, their rows grouped with empty rank columns; "
        "every row names its benchmark",
        responses={(200, "text/csv"): str},
    )
    def get(self, request: Request) -> HttpResponse:
        filters = board_filters(request.GET, request.user)
        body = leaderboard_csv(selectors.leaderboard_export(**filters))
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="leaderboard.csv"'
        return response
